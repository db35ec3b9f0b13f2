"""What a figure shows, read back from its artists, for tests of the plot functions.

Not a test module: the test files import it (pytest puts tests/ on sys.path).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import to_hex
from matplotlib.figure import Figure


def line_facts(ax: Axes) -> list[dict[str, Any]]:
    """Every line of ``ax``: label, colour, width, style and data."""
    return [
        {
            "label": line.get_label(),
            "color": to_hex(line.get_color()).upper(),
            "lw": line.get_linewidth(),
            "ls": line.get_linestyle(),
            "x": np.asarray(line.get_xdata(), dtype=float).tolist(),
            "y": np.asarray(line.get_ydata(), dtype=float).tolist(),
        }
        for line in ax.get_lines()
    ]


def legend_facts(fig: Figure) -> dict[str, Any]:
    """The figure-level legend: its labels, columns and handle length."""
    (legend,) = fig.legends
    return {
        "labels": [t.get_text() for t in legend.get_texts()],
        "ncols": legend._ncols,
        "handlelength": legend.handlelength,
        "loc": legend._loc,  # matplotlib's code: 9 is "upper center"
        "outside": getattr(legend, "_outside_loc", None),
    }


def _num(v: Any) -> Any:
    """Round floats (and nested lists of them) so a stored snapshot compares exactly."""
    if isinstance(v, (list, tuple, np.ndarray)):
        return [_num(x) for x in v]
    if isinstance(v, (float, np.floating)):
        return round(float(v), 6)
    if isinstance(v, (np.integer,)):
        return int(v)
    return v


def _style(obj: Any) -> Any:
    """A patch's box, arrow or connection style as its class name and parameters."""
    if obj is None:
        return None
    params = {
        k: _num(v)
        for k, v in sorted(vars(obj).items())
        if isinstance(v, (int, float, str, bool))
    }
    return [type(obj).__name__, params]


def diagram_facts(fig: Figure) -> dict[str, Any]:
    """Everything a schematic draws: per axes its texts, patches, lines and annotations
    with their geometry and styles, its limits, title and aspect; and the figure size.
    For comparing a diagram (drawn from literal coordinates) with a snapshot reviewed
    once by eye."""
    from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch
    from matplotlib.text import Annotation

    out: dict[str, Any] = {"size": _num(list(fig.get_size_inches())), "axes": []}
    for ax in fig.axes:
        texts, notes = [], []
        for t in ax.texts:
            base = {
                "text": t.get_text(),
                "ha": t.get_ha(),
                "va": t.get_va(),
                "size": _num(t.get_fontsize()),
                "color": to_hex(t.get_color()),
                "zorder": _num(t.get_zorder()),
            }
            if isinstance(t, Annotation):
                props = {k: _num(v) for k, v in sorted((t.arrowprops or {}).items())}
                notes.append(
                    base
                    | {"xy": _num(t.xy), "xytext": _num(t.xyann), "arrowprops": props}
                )
            else:
                texts.append(base | {"pos": _num(t.get_position())})
        patches = []
        for p in ax.patches:
            d: dict[str, Any] = {
                "kind": type(p).__name__,
                "fc": to_hex(p.get_facecolor(), keep_alpha=True),
                "ec": to_hex(p.get_edgecolor(), keep_alpha=True),
                "lw": _num(p.get_linewidth()),
                "alpha": _num(p.get_alpha()),
                "zorder": _num(p.get_zorder()),
            }
            if isinstance(p, FancyBboxPatch):
                d |= {
                    "xywh": _num([p.get_x(), p.get_y(), p.get_width(), p.get_height()]),
                    "box": _style(p.get_boxstyle()),
                }
            elif isinstance(p, Circle):
                d |= {"center": _num(p.center), "radius": _num(p.radius)}
            elif isinstance(p, FancyArrowPatch):
                d |= {
                    "ends": _num(p._posA_posB),
                    "arrow": _style(p.get_arrowstyle()),
                    "scale": _num(p.get_mutation_scale()),
                    "conn": _style(p.get_connectionstyle()),
                }
            patches.append(d)
        lines = [
            {
                "x": _num(ln.get_xdata()),
                "y": _num(ln.get_ydata()),
                "color": to_hex(ln.get_color()),
                "lw": _num(ln.get_linewidth()),
                "ls": ln.get_linestyle(),
            }
            for ln in ax.get_lines()
        ]
        out["axes"].append(
            {
                "title": ax.get_title(),
                "title_size": _num(ax.title.get_fontsize()),
                "xlim": _num(ax.get_xlim()),
                "ylim": _num(ax.get_ylim()),
                "aspect": _num(ax.get_aspect()),
                "axis_on": ax.axison,
                "texts": texts,
                "annotations": notes,
                "patches": patches,
                "lines": lines,
                # where the layout put the axes (2 decimals: enough to see tight_layout,
                # not font rounding)
                "position": [round(v, 2) for v in ax.get_position().bounds],
            }
        )
    return out
