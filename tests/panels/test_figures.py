"""The panels' static figures (chapter_code.panels.figures) against reviewed snapshots,
and how they are written.

A static figure is what the PDF prints and what a reader without JavaScript
sees in place of a panel, so its specification is what it draws: every text,
bar, marker and line with its place and style, read back from the artists.
The snapshots in tests/golden/panel_figure_<name>.json record the figures as
reviewed; after changing one on purpose, look at it, then rewrite them with
``BOOK_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_panel_figures.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from PIL import Image

from chapter_code.core.plotting import SMALLEST_TEXT_KEY, figure_png
from chapter_code.panels.data import PANELS
from chapter_code.panels.figures import static_figure, write_static_figure
from chapter_code.sampling.panels import sampling_parts

GOLDEN = Path(__file__).parents[1] / "golden"


def _num(v: Any) -> Any:
    """Plain lists and floats rounded to 6 decimals, so a stored snapshot compares
    exactly."""
    if isinstance(v, (np.ndarray, np.generic)):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        return [_num(x) for x in v]
    if isinstance(v, float):
        return round(v, 6)
    return v


def chart_facts(fig: Figure) -> dict[str, Any]:
    """What a chart draws: per axes its titles, labels, limits, ticks, texts, bars,
    markers, lines and legend."""
    out: dict[str, Any] = {
        "size": _num(list(fig.get_size_inches())),
        "axes": [],
        "legends": [[t.get_text() for t in lg.get_texts()] for lg in fig.legends],
    }
    for ax in fig.axes:
        legend = ax.get_legend()
        out["axes"].append(
            {
                "title": ax.get_title(),
                "title_size": _num(ax.title.get_fontsize()),
                "xlabel": ax.get_xlabel(),
                "ylabel": ax.get_ylabel(),
                "axis_on": ax.axison,
                "xlim": _num(ax.get_xlim()),
                "ylim": _num(ax.get_ylim()),
                "xticks": [
                    _num(list(ax.get_xticks())),
                    [t.get_text() for t in ax.get_xticklabels()],
                ],
                "texts": [
                    {
                        "text": t.get_text(),
                        "pos": _num(t.get_position()),
                        "size": _num(t.get_fontsize()),
                        "color": to_hex(t.get_color()),
                        "weight": t.get_fontweight(),
                        "ha": t.get_ha(),
                    }
                    for t in ax.texts
                ],
                "patches": [
                    {
                        "xywh": _num(
                            [p.get_x(), p.get_y(), p.get_width(), p.get_height()]
                        ),
                        "fill": p.get_fill(),
                        "fc": to_hex(p.get_facecolor(), keep_alpha=True),
                        "ec": to_hex(p.get_edgecolor(), keep_alpha=True),
                        "lw": _num(p.get_linewidth()),
                        "ls": str(p.get_linestyle()),
                    }
                    for p in ax.patches
                    if hasattr(p, "get_width")
                ],
                "collections": [
                    {
                        "offsets": _num(c.get_offsets()),
                        "sizes": _num(c.get_sizes()),
                        "fc": [to_hex(x, keep_alpha=True) for x in c.get_facecolors()],
                        "ec": [to_hex(x, keep_alpha=True) for x in c.get_edgecolors()],
                        "lw": _num(c.get_linewidths()),
                        "z": _num(c.get_zorder()),
                    }
                    for c in ax.collections
                ],
                "lines": [
                    {
                        "x": _num(ln.get_xdata()),
                        "y": _num(ln.get_ydata()),
                        "color": to_hex(ln.get_color()),
                        "lw": _num(ln.get_linewidth()),
                        "ls": ln.get_linestyle(),
                        "marker": str(ln.get_marker()),
                    }
                    for ln in ax.get_lines()
                ],
                "legend": [t.get_text() for t in legend.get_texts()]
                if legend
                else None,
                "position": [round(v, 2) for v in ax.get_position().bounds],
            }
        )
    return json.loads(json.dumps(out))


@pytest.mark.parametrize("name", list(PANELS))
def test_static_figure_matches_its_reviewed_snapshot(name: str) -> None:
    fig = static_figure(name)
    try:
        facts = chart_facts(fig)
    finally:
        plt.close(fig)
    path = GOLDEN / f"panel_figure_{name}.json"
    if os.environ.get("BOOK_UPDATE_GOLDEN") == "1":
        path.write_text(json.dumps(facts, ensure_ascii=False, indent=1) + "\n")
    stored = json.loads(path.read_text())
    assert facts["size"] == stored["size"]
    assert facts["legends"] == stored["legends"]
    assert len(facts["axes"]) == len(stored["axes"])
    for i, (ours, theirs) in enumerate(zip(facts["axes"], stored["axes"], strict=True)):
        for key in theirs:
            assert ours[key] == theirs[key], f"{name}: axes {i}: {key} differs"


def test_sampling_figure_draws_the_panel_numbers() -> None:
    fig = static_figure("sampling-explorer")
    try:
        for row, tau in enumerate([0.5, 1.0, 2.0]):
            parts = sampling_parts(tau, 2, 0.9)
            for col, key in enumerate(["temperature", "topK", "nucleus"]):
                ax = fig.axes[3 * row + col]
                filled = [p.get_height() for p in ax.patches if p.get_fill()]
                assert filled == pytest.approx(parts[key]), (tau, key)
    finally:
        plt.close(fig)


def test_truncation_figure_labels_each_state_in_its_circle_and_above_it() -> None:
    fig = static_figure("truncation-lanes")
    try:
        ax = fig.axes[0]
        circles = ax.collections  # one per state: two lanes of six
        labels = [t for t in ax.texts if t.get_text().startswith("$h_")]
        assert len(labels) == len(circles) == 12
        for label, circle in zip(labels, circles, strict=True):
            assert tuple(label.get_position()) == tuple(circle.get_offsets()[0])
            assert (label.get_ha(), label.get_va()) == ("center", "center")
            assert label.get_zorder() > circle.get_zorder()
    finally:
        plt.close(fig)


def test_lstm_gates_legend_is_one_row_above_the_plot_inside_the_figure() -> None:
    """Not in the snapshot (which reads texts, not where they are drawn): the five
    entries share one row, above the plot rather than over its bars, and within the
    figure's width, and the constrained layout leaves no empty margin at the right."""
    fig = static_figure("lstm-gates")
    try:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        (legend,) = fig.legends
        box = legend.get_window_extent(renderer)
        plot = fig.axes[0].get_window_extent(renderer)
        rows = {round(t.get_window_extent(renderer).y0) for t in legend.get_texts()}
        assert len(legend.get_texts()) == 5
        assert len(rows) == 1
        assert box.y0 >= plot.y1
        assert box.x0 >= 0
        assert box.x1 <= fig.bbox.x1
        assert plot.x1 >= 0.95 * fig.bbox.x1
    finally:
        plt.close(fig)


def test_write_static_figure_makes_its_folder_and_leaves_no_temporary_file(
    tmp_path: Path,
) -> None:
    target = tmp_path / "deeper" / "still" / "keep-dial.png"
    # other tests in this worker may have left figures open
    open_before = plt.get_fignums()
    assert write_static_figure("keep-dial", target) == target
    assert plt.get_fignums() == open_before  # the figure is closed after writing
    fig = static_figure("keep-dial")
    try:
        expected, _ = figure_png(fig)
    finally:
        plt.close(fig)
    # the book's PNG, with its smallest-text record
    assert target.read_bytes() == expected
    with Image.open(target) as image:
        assert image.format == "PNG"
        assert float(image.text[SMALLEST_TEXT_KEY]) > 0
    assert sorted(p.name for p in target.parent.iterdir()) == ["keep-dial.png"]


@pytest.mark.parametrize("name", sorted(PANELS))
def test_no_two_texts_of_a_static_figure_overlap(name: str) -> None:
    """The rule the build applies to every figure a chapter draws
    (bookbuild.lint.figure_layout), here for the panels' static figures, which the
    book-panel directive draws and checks the same way."""
    from bookbuild.lint.figure_layout import overlapping_texts

    fig = static_figure(name)
    try:
        assert overlapping_texts(fig) == []
    finally:
        plt.close(fig)


def test_write_static_figure_closes_its_own_figure_when_another_is_current(
    tmp_path: Path,
) -> None:
    drawn, other = [], plt.figure()

    def draw_another(fig) -> None:  # type: ignore[no-untyped-def]
        drawn.append(fig)
        plt.figure(other.number)  # a check that makes another figure current

    try:
        write_static_figure("keep-dial", tmp_path / "keep-dial.png", check=draw_another)
        assert not plt.fignum_exists(drawn[0].number)
        assert plt.fignum_exists(other.number)
    finally:
        plt.close(other)


def test_a_write_after_an_interrupted_one_leaves_no_temporary_file(
    tmp_path: Path,
) -> None:
    target = tmp_path / "keep-dial.png"
    target.with_suffix(".tmp").write_bytes(b"half a PNG")  # left by a write cut short
    write_static_figure("keep-dial", target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep-dial.png"]


def test_a_failing_check_leaves_no_file(tmp_path: Path) -> None:
    target = tmp_path / "keep-dial.png"
    seen = []

    def refuse(fig) -> None:  # type: ignore[no-untyped-def]
        seen.append(len(fig.axes))
        raise RuntimeError("texts overlap")

    with pytest.raises(RuntimeError, match="texts overlap"):
        write_static_figure("keep-dial", target, check=refuse)
    assert seen == [1]  # the one axes of the dial, drawn before the check
    assert not tmp_path.exists() or list(tmp_path.iterdir()) == []
