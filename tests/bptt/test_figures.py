"""Tests for chapter_code.bptt.figures: each figure's data, styles, labels and axes,
read back from the artists (the pages are the only callers)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest
from matplotlib.ticker import NullLocator

from chapter_code.bptt.figures import plot_lag_curves, plot_one_unit
from chapter_code.bptt.gradients import one_unit_gradient
from chapter_code.core.plotting import COLORS
from tests.figure_facts import line_facts


def test_plot_lag_curves_draws_each_curve_with_its_style() -> None:
    lags = [1, 2, 4]
    curves = {
        "rnn": ([1.0, 0.1, 0.01], "#E69F00"),
        "bound": ([2.0, 0.2, 0.02], COLORS["bound"]),
    }
    fig = plot_lag_curves(lags, curves, "gradient norm")
    (ax,) = fig.axes
    lines = line_facts(ax)
    assert [ln["x"] for ln in lines] == [[1.0, 2.0, 4.0]] * 2
    assert [ln["y"] for ln in lines] == [[1.0, 0.1, 0.01], [2.0, 0.2, 0.02]]
    assert [ln["label"] for ln in lines] == ["rnn", "bound"]
    assert [ln["color"] for ln in lines] == ["#E69F00", COLORS["bound"]]
    assert [ln["ls"] for ln in lines] == ["-", "--"]
    assert [line.get_marker() for line in ax.get_lines()] == ["o", "None"]
    assert {line.get_markersize() for line in ax.get_lines()} == {4}
    assert ax.get_yscale() == "log"
    assert ax.get_ylabel() == "gradient norm"
    assert (
        ax.get_xlabel() == "lag $T$ (steps between the last output and the first input)"
    )
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["rnn", "bound"]
    assert tuple(fig.get_size_inches()) == pytest.approx((6.4, 3.3))
    plt.close(fig)
    fig = plot_lag_curves(lags, curves, "g", xlabel="steps")
    assert fig.axes[0].get_xlabel() == "steps"
    plt.close(fig)


def test_plot_one_unit_draws_measured_bands_and_one_bound_per_weight() -> None:
    traces = [
        one_unit_gradient(0.9, 0.0, 10),
        one_unit_gradient(-0.9, 0.5, 10),
        one_unit_gradient(1.5, 0.2, 10),
    ]
    colors = ["#000000", "#111111", "#222222"]
    fig = plot_one_unit(traces, colors)
    (ax,) = fig.axes
    lines = ax.get_lines()
    measured, bounds, key = lines[:3], lines[3:5], lines[5]
    for line, trace, color in zip(measured, traces, colors, strict=True):
        assert list(line.get_xdata()) == list(range(11))
        assert list(line.get_ydata()) == trace.products
        assert line.get_color() == color
        assert (line.get_linestyle(), line.get_linewidth(), line.get_alpha()) == (
            "-",
            4.5,
            0.45,
        )
        assert line.get_solid_capstyle() == "butt"
        assert line.get_label() == f"measured, $w$ = {trace.w:g}, $x$ = {trace.x:g}"
    # |w| = 0.9 appears twice (w = 0.9 and w = -0.9): one bound, in its first trace's
    # colour.
    assert [b.get_color() for b in bounds] == ["#000000", "#222222"]
    assert [list(b.get_ydata()) for b in bounds] == [traces[0].bounds, traces[2].bounds]
    assert [list(b.get_xdata()) for b in bounds] == [list(range(11))] * 2
    assert {(b.get_linestyle(), b.get_linewidth()) for b in bounds} == {("--", 1.4)}
    assert (key.get_label(), key.get_linestyle(), key.get_linewidth()) == (
        "bound $|w|^{T-s}$ (dashed)",
        "--",
        1.4,
    )
    assert key.get_color() == COLORS["bound"]
    assert len(key.get_xdata()) == 0
    notes = [
        (
            t.get_text(),
            t.xy,
            t.get_color(),
            t.get_ha(),
            t.get_va(),
            t.xyann,
            t.get_annotation_clip(),
        )
        for t in ax.texts
    ]
    assert notes == [
        (
            "$|w|$ = 0.9",
            (10, traces[0].bounds[-1]),
            "#000000",
            "left",
            "center",
            (5, 0),
            False,
        ),
        (
            "$|w|$ = 1.5",
            (10, traces[2].bounds[-1]),
            "#222222",
            "left",
            "center",
            (5, 0),
            False,
        ),
    ]
    assert all(t.anncoords == "offset points" for t in ax.texts)
    values = [v for t in traces for v in (*t.products, *t.bounds) if v > 0]
    assert ax.get_ylim() == pytest.approx((min(values) / 30, max(values) * 30))
    assert list(ax.get_yticks()) == [1.0]
    assert isinstance(ax.yaxis.get_minor_locator(), NullLocator)
    assert ax.get_yscale() == "log"
    assert ax.get_xlabel() == "distance $T - s$ (steps back)"
    assert ax.get_ylabel() == r"$|\partial h_T / \partial h_s|$"
    (legend,) = fig.legends
    assert (legend._loc, legend._outside_loc, legend._ncols) == (8, "lower", 2)
    assert (legend.handlelength, legend.columnspacing) == (2.2, 1.2)
    assert [t.get_text() for t in legend.get_texts()] == [
        ln.get_label() for ln in measured
    ] + [key.get_label()]
    assert tuple(fig.get_size_inches()) == pytest.approx((6.2, 4.8))
    assert type(fig.get_layout_engine()).__name__ == "ConstrainedLayoutEngine"
    plt.close(fig)


def test_plot_one_unit_ticks_every_twenty_decades_inside_the_range() -> None:
    traces = [one_unit_gradient(0.1, 0.0, 40)]  # bounds fall to 1e-40
    fig = plot_one_unit(traces, ["#000000"])
    ticks = list(fig.axes[0].get_yticks())
    assert ticks == [1e-40, 1e-20, 1.0]
    plt.close(fig)


def test_plot_one_unit_needs_one_colour_per_trace() -> None:
    with pytest.raises(
        ValueError, match=r"^need one colour per trace; got 1 traces and 2 colours$"
    ):
        plot_one_unit([one_unit_gradient(0.9, 0.0, 3)], ["#000000", "#111111"])


def test_plot_one_unit_leaves_zeros_out_of_the_axis_range() -> None:
    # w = 0: products and bounds hit 0
    traces = [one_unit_gradient(0.0, 0.5, 3), one_unit_gradient(0.5, 0.0, 3)]
    fig = plot_one_unit(traces, ["#000000", "#111111"])
    positive = [v for t in traces for v in (*t.products, *t.bounds) if v > 0]
    assert fig.axes[0].get_ylim() == pytest.approx(
        (min(positive) / 30, max(positive) * 30)
    )
    plt.close(fig)
