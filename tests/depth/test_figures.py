"""Tests for chapter_code.depth.figures: what each figure plots, read back from its
artists."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_hex

from chapter_code.depth.figures import (
    draw_stacked_and_bidirectional,
    plot_scale,
    plot_scoreboard,
    plot_tag_accuracy,
    plot_training_curves,
)


def _dots(ax):
    return [
        line
        for line in ax.lines
        if line.get_linestyle() == "None" and line.get_marker() == "o"
    ]


def test_tag_accuracy_lines_ticks_and_labels() -> None:
    fig = plot_tag_accuracy(
        {
            "causal": ({1: 0.6, 2: 0.8, 3: 0.9}, "#0072B2", "o"),
            "both ways": ({1: 0.95, 2: 0.97, 3: 0.99}, "#D55E00", "s"),
        },
        "3+",
    )
    ax = fig.axes[0]
    lines = {line.get_label(): line for line in ax.lines}
    assert list(lines["causal"].get_xdata()) == [1, 2, 3]
    assert list(lines["causal"].get_ydata()) == [0.6, 0.8, 0.9]
    assert list(lines["both ways"].get_ydata()) == [0.95, 0.97, 0.99]
    assert to_hex(lines["both ways"].get_color()) == "#d55e00"
    assert lines["both ways"].get_marker() == "s"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "3+"]
    assert ax.get_ylim() == (0.5, 1.02)
    assert ax.get_xlabel() == "letter's position in its word (1 = first letter)"
    assert ax.get_ylabel() == "tag accuracy"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "causal",
        "both ways",
    ]
    assert tuple(fig.get_size_inches()) == (6.4, 3.4)
    plt.close(fig)
    with pytest.raises(ValueError, match="curves"):
        plot_tag_accuracy({}, "6+")


def test_scoreboard_rows_means_and_seeds() -> None:
    fig = plot_scoreboard(
        {"GRU": [7.5, 7.6, 7.7], "RNN": [8.0]},
        {"GRU": "#009E73", "RNN": "#000000"},
        "perplexity",
    )
    ax = fig.axes[0]
    dots = _dots(ax)
    assert [list(d.get_xdata()) for d in dots] == [[7.5, 7.6, 7.7], [8.0]]
    assert [list(d.get_ydata()) for d in dots] == [[0, 0, 0], [1]]
    assert to_hex(dots[0].get_color()) == "#009e73"
    bars = ax.containers
    assert len(bars) == 2
    mean_line = bars[0].lines[0]
    assert list(mean_line.get_xdata()) == pytest.approx([7.6])
    # the horizontal error bar: mean -/+ one standard deviation
    segments = bars[0].lines[2][0].get_segments()
    assert segments[0][:, 0] == pytest.approx([7.5, 7.7])
    # one seed: no spread
    assert bars[1].lines[2][0].get_segments()[0][:, 0] == pytest.approx([8.0, 8.0])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["GRU", "RNN"]
    assert ax.yaxis_inverted()
    assert ax.get_xlabel() == "perplexity"
    assert tuple(fig.get_size_inches()) == pytest.approx((6.4, 0.5 * 2 + 1.2))
    plt.close(fig)
    with pytest.raises(ValueError, match="values"):
        plot_scoreboard({}, {}, "x")


def test_scale_seeds_means_and_axes() -> None:
    fig = plot_scale(
        {"small": (1000, [3.0, 3.2, 3.1]), "large": (4000, [2.0])}, "#0072B2"
    )
    ax = fig.axes[0]
    dots = _dots(ax)
    assert [list(d.get_xdata()) for d in dots] == [[1000] * 3, [4000]]
    assert [list(d.get_ydata()) for d in dots] == [[3.0, 3.2, 3.1], [2.0]]
    assert to_hex(dots[0].get_color()) == "#0072b2"
    bars = ax.containers
    assert list(bars[0].lines[0].get_ydata()) == pytest.approx([3.1])
    assert bars[0].lines[2][0].get_segments()[0][:, 1] == pytest.approx([3.0, 3.2])
    assert bars[1].lines[2][0].get_segments()[0][:, 1] == pytest.approx([2.0, 2.0])
    assert to_hex(bars[0].lines[0].get_color()) == "#000000"
    notes = {t.get_text(): t.xy for t in ax.texts}
    assert notes["small"] == pytest.approx((1000, 3.1))
    assert notes["large"] == pytest.approx((4000, 2.0))
    assert ax.get_xscale() == "log"
    assert ax.get_xlabel() == "parameters"
    assert ax.get_ylabel() == "test perplexity (words)"
    assert tuple(fig.get_size_inches()) == (6.4, 3.6)
    plt.close(fig)


def test_marks_are_styled_as_drawn_on_the_page() -> None:
    board = plot_scoreboard({"GRU": [7.5, 7.7]}, {"GRU": "#009E73"}, "perplexity")
    ax = board.axes[0]
    dot = _dots(ax)[0]
    assert (dot.get_alpha(), dot.get_markersize()) == (0.7, 5)
    bar = ax.containers[0]
    assert (bar.lines[0].get_marker(), bar.lines[0].get_markersize()) == ("|", 14)
    assert to_hex(bar.lines[0].get_color()) == "#009e73"
    assert bar.lines[1][0].get_markersize() == 2 * 4  # caps of half-width capsize 4
    assert bar.lines[2][0].get_segments()[0][:, 0] == pytest.approx(
        [7.6 - 0.1414, 7.6 + 0.1414], abs=1e-3
    )  # two seeds
    plt.close(board)
    scale = plot_scale({"small": (1000, [3.0, 3.2])}, "#0072B2")
    ax = scale.axes[0]
    dot = _dots(ax)[0]
    assert (dot.get_alpha(), dot.get_markersize()) == (0.6, 5)
    bar = ax.containers[0]
    assert (bar.lines[0].get_marker(), bar.lines[0].get_markersize()) == ("_", 16)
    assert bar.lines[1][0].get_markersize() == 2 * 5
    assert bar.lines[2][0].get_segments()[0][:, 1] == pytest.approx(
        [3.1 - 0.1414, 3.1 + 0.1414], abs=1e-3
    )
    note = ax.texts[0]
    assert note.anncoords == "offset points"
    assert tuple(note.xyann) == (10, 0)
    assert note.get_va() == "center"
    plt.close(scale)
    tags = plot_tag_accuracy({"causal": ({1: 0.6, 2: 0.8}, "#0072B2", "o")}, "2+")
    assert tags.axes[0].get_legend()._loc == 4  # lower right
    plt.close(tags)


def test_training_curves_lines_log_axis_and_labels() -> None:
    fig = plot_training_curves(
        {
            "causal": ([(50, 2.5), (100, 2.1)], "#E69F00", "o"),
            "bidirectional": ([(50, 1.0), (100, 0.2)], "#0072B2", "s"),
        },
        "training loss",
    )
    ax = fig.axes[0]
    lines = {line.get_label(): line for line in ax.lines}
    assert list(lines["causal"].get_xdata()) == [50, 100]
    assert list(lines["bidirectional"].get_ydata()) == [1.0, 0.2]
    assert to_hex(lines["bidirectional"].get_color()) == "#0072b2"
    assert ax.get_yscale() == "log"
    assert ax.get_xlabel() == "training step"
    assert ax.get_ylabel() == "training loss"
    plt.close(fig)
    with pytest.raises(ValueError, match="curves"):
        plot_training_curves({}, "loss")


def test_wiring_diagram_draws_one_box_per_layer_and_step() -> None:
    fig = draw_stacked_and_bidirectional(steps=3)
    left, right = fig.axes
    assert left.get_title() == "two stacked layers"
    assert right.get_title() == "one bidirectional layer"
    for ax in (left, right):
        boxes = [p for p in ax.patches if type(p).__name__ == "FancyBboxPatch"]
        assert len(boxes) == 2 * 3
    texts = [t.get_text() for t in right.texts]
    assert "$\\leftarrow$" in texts
    assert sum(t.startswith("$[") for t in texts) == 3
    plt.close(fig)
    with pytest.raises(ValueError, match="steps"):
        draw_stacked_and_bidirectional(steps=1)
