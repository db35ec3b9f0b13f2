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
