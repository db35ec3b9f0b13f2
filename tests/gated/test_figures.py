"""Tests for chapter_code.gated.figures: each plot draws the numbers it is given,
labelled as the page says.

Tests for chapter_code.gated.figures that read back every series, style, label, limit
and legend of the chapter's plots (the first tests checked the data of some series).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import pytest  # noqa: E402
import torch  # noqa: E402

from chapter_code.gated.figures import (  # noqa: E402
    plot_forget_power,
    plot_forget_traces,
    plot_grad_vs_lag,
    plot_output_gate_demo,
)
from chapter_code.gated.gates import forget_power  # noqa: E402


def test_output_gate_demo_draws_the_three_series_against_steps_from_one() -> None:
    gates, cells, hiddens = (
        torch.tensor([1.0, 0.0, 1.0]),
        torch.tensor([0.5, 0.5, 0.7]),
        torch.tensor([0.4, 0, 0.6]),
    )
    fig = plot_output_gate_demo(gates, cells, hiddens)
    lines = {line.get_label(): line for line in fig.axes[0].get_lines()}
    assert set(lines) == {"cell state $c_t$", "hidden state $h_t$", "output gate $o_t$"}
    assert list(lines["cell state $c_t$"].get_xdata()) == [1, 2, 3]
    assert list(lines["hidden state $h_t$"].get_ydata()) == pytest.approx(
        [0.4, 0.0, 0.6]
    )
    assert list(lines["output gate $o_t$"].get_ydata()) == [1.0, 0.0, 1.0]


def test_forget_power_plots_f_to_the_k_with_the_gate_value_in_the_legend() -> None:
    powers = forget_power([0.0, 1.0], 5)
    fig = plot_forget_power([0.0, 1.0], powers)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    first, second = ax.get_lines()
    assert list(first.get_ydata()) == pytest.approx([0.5**k for k in range(1, 6)])
    assert second.get_label() == "$b_f = +1$, $f = 0.731$"
    f = float(torch.sigmoid(torch.tensor(1.0)))
    assert list(second.get_ydata()) == pytest.approx([f**k for k in range(1, 6)])


def test_grad_vs_lag_draws_each_curve_on_a_log_axis() -> None:
    fig = plot_grad_vs_lag(
        [1, 10, 80],
        {"RNN": ([1.0, 1e-3, 1e-12], "#E69F00"), "LSTM": ([1.0, 0.5, 0.1], "#0072B2")},
    )
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    rnn, lstm = ax.get_lines()
    assert (rnn.get_label(), list(rnn.get_ydata())) == ("RNN", [1.0, 1e-3, 1e-12])
    assert list(lstm.get_xdata()) == [1, 10, 80]
    assert lstm.get_color() == "#0072B2"


def test_forget_traces_draw_each_model_and_the_one_half_line() -> None:
    fig = plot_forget_traces(
        {"forget bias +1": ([0.8, 0.9], "#0072B2"), "default": ([0.5, 0.55], "#56B4E9")}
    )
    lines = fig.axes[0].get_lines()
    assert [line.get_label() for line in lines] == [
        "forget bias +1",
        "default",
        r"$\sigma(0) = 1/2$",
    ]
    assert list(lines[0].get_xdata()) == [1, 2]
    assert list(lines[1].get_ydata()) == [0.5, 0.55]
    assert list(lines[2].get_ydata()) == [0.5, 0.5]


matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from chapter_code.core.plotting import COLORS  # noqa: E402
from chapter_code.gated.figures import (  # noqa: E402
    plot_keep_dial,
)
from tests.figure_facts import legend_facts, line_facts  # noqa: E402


def _tight(ax: matplotlib.axes.Axes) -> bool:
    """tight_layout ran: the axes no longer sit in the style's default subplot box."""
    rc = plt.rcParams
    left, bottom = rc["figure.subplot.left"], rc["figure.subplot.bottom"]
    default = (
        left,
        bottom,
        rc["figure.subplot.right"] - left,
        rc["figure.subplot.top"] - bottom,
    )
    return (
        max(abs(a - b) for a, b in zip(ax.get_position().bounds, default, strict=True))
        > 0.01
    )


def test_output_gate_demo_styles_axes_and_legend() -> None:
    n = 12
    gates, cells, hiddens = torch.rand(n), torch.rand(n), torch.rand(n)
    fig = plot_output_gate_demo(gates, cells, hiddens)
    (ax,) = fig.axes
    lines = line_facts(ax)
    assert [ln["y"] for ln in lines] == [
        cells.tolist(),
        hiddens.tolist(),
        gates.tolist(),
    ]
    assert all(ln["x"] == list(map(float, range(1, n + 1))) for ln in lines)
    assert [(ln["color"], ln["lw"], ln["ls"]) for ln in lines] == [
        (COLORS["lstm"], 2.2, "-"),
        (COLORS["other"], 2.2, "--"),
        (COLORS["bound"], 1.2, ":"),
    ]
    assert {line.get_drawstyle() for line in ax.get_lines()} == {"steps-mid"}
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("step $t$", "value")
    assert ax.get_ylim() == pytest.approx((-0.05, 1.1))
    assert list(ax.get_xticks()) == [1, 5, 10]
    assert legend_facts(fig) == {
        "labels": ["cell state $c_t$", "hidden state $h_t$", "output gate $o_t$"],
        "ncols": 3,
        "handlelength": 1.8,
        "loc": 9,
        "outside": "upper",
    }
    assert fig.legends[0].columnspacing == 1.0
    assert tuple(fig.get_size_inches()) == pytest.approx((6.2, 3.8))
    assert type(fig.get_layout_engine()).__name__ == "ConstrainedLayoutEngine"
    plt.close(fig)


def test_forget_power_shades_labels_and_axes() -> None:
    powers = torch.tensor(
        [[0.5, 0.25, 0.125], [0.7, 0.49, 0.343], [0.9, 0.81, 0.729]],
        dtype=torch.float64,
    )
    fig = plot_forget_power([-1.0, 0.0, 2.0], powers)
    (ax,) = fig.axes
    lines = ax.get_lines()
    shades = plt.get_cmap("Blues")([0.35, 0.675, 1.0])
    for line, shade, row in zip(lines, shades, powers, strict=True):
        assert tuple(line.get_color()) == pytest.approx(tuple(shade))
        assert line.get_linewidth() == 2
        assert list(line.get_xdata()) == [1, 2, 3]
        assert list(line.get_ydata()) == row.tolist()
    assert [line.get_label() for line in lines] == [
        "$b_f = -1$, $f = 0.269$",
        "$b_f = +0$, $f = 0.500$",
        "$b_f = +2$, $f = 0.881$",
    ]
    assert ax.get_xlabel() == "steps $k$ along the direct path"
    assert ax.get_ylabel() == "surviving factor $f^k$"
    assert ax.get_legend()._loc == 3  # lower left
    assert tuple(fig.get_size_inches()) == pytest.approx((6.4, 3.4))
    assert _tight(ax)
    plt.close(fig)


def test_grad_vs_lag_styles_labels_and_legend() -> None:
    fig = plot_grad_vs_lag(
        [1, 10], {"RNN": ([1.0, 1e-3], "#E69F00"), "GRU": ([1.0, 0.5], "#009E73")}
    )
    (ax,) = fig.axes
    assert [(ln["label"], ln["color"], ln["ls"]) for ln in line_facts(ax)] == [
        ("RNN", "#E69F00", "-"),
        ("GRU", "#009E73", "-"),
    ]
    assert {(line.get_marker(), line.get_markersize()) for line in ax.get_lines()} == {
        ("o", 4)
    }
    assert (
        ax.get_xlabel() == "lag $T$ between the last output and the first input (steps)"
    )
    assert ax.get_ylabel() == r"$\|\partial\, \mathrm{output}_T / \partial x_1\|$"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["RNN", "GRU"]
    assert tuple(fig.get_size_inches()) == pytest.approx((6.4, 3.4))
    assert _tight(ax)
    plt.close(fig)


def test_keep_dial_plot_draws_the_three_parts_the_marked_point_and_both_ends() -> None:
    fig = plot_keep_dial(0.8, 0.3, 0.5, n=3)
    (ax,) = fig.axes
    kept, written, new, dot, top, bottom = line_facts(ax)
    assert kept["x"] == written["x"] == new["x"] == [0.0, 0.5, 1.0]
    assert kept["y"] == pytest.approx([0.0, 0.4, 0.8])
    assert written["y"] == pytest.approx([0.3, 0.15, 0.0])
    assert new["y"] == pytest.approx([0.3, 0.55, 0.8])
    assert [(ln["ls"], ln["color"], ln["lw"]) for ln in (kept, written, new)] == [
        ("--", COLORS["gru"], 1.5),
        (":", COLORS["rnn"], 2.0),
        ("-", COLORS["lstm"], 2.5),
    ]
    assert [ln["label"] for ln in (kept, written, new)] == [
        r"kept, $u\,h_{t-1}$",
        r"written, $(1-u)\,\tilde h_t$",
        r"new state $h_t$",
    ]
    assert (dot["x"], dot["y"], dot["color"]) == (
        [0.5],
        pytest.approx([0.55]),
        COLORS["lstm"],
    )
    marker_line = ax.get_lines()[3]
    assert (marker_line.get_marker(), marker_line.get_markersize()) == ("o", 7)
    assert [(ln["y"], ln["color"], ln["lw"], ln["ls"]) for ln in (top, bottom)] == [
        ([0.8, 0.8], COLORS["bound"], 0.8, "-."),
        ([0.3, 0.3], COLORS["bound"], 0.8, "-."),
    ]
    (note,) = ax.texts
    assert note.get_text() == "$u = 0.5$: 0.40 + 0.15 = 0.55"
    assert note.xy == pytest.approx((0.5, 0.55))
    assert (note.xyann, note.anncoords) == ((10, -22), "offset points")
    assert ax.get_xlabel() == r"keep value $u_t$ of the update gate"
    assert ax.get_ylabel() == "value in one unit"
    assert ax.get_xlim() == (0.0, 1.0)
    assert ax.get_legend()._loc == 2  # upper left
    assert tuple(fig.get_size_inches()) == pytest.approx((6.4, 3.4))
    assert _tight(ax)
    plt.close(fig)
    fig = plot_keep_dial(0.8, 0.3, 0.25)
    assert len(fig.axes[0].get_lines()[0].get_xdata()) == 101
    plt.close(fig)
    fig = plot_keep_dial(0.8, 0.3, 0.25, n=2)
    assert list(fig.axes[0].get_lines()[0].get_xdata()) == [0.0, 1.0]
    plt.close(fig)
    with pytest.raises(ValueError, match=r"^n must be >= 2; got 1$"):
        plot_keep_dial(0.8, 0.3, 0.5, n=1)


def test_forget_traces_styles_limits_and_legend() -> None:
    fig = plot_forget_traces({"a": ([0.8, 0.9, 0.95], "#0072B2")})
    (ax,) = fig.axes
    trace, half = line_facts(ax)
    assert (trace["x"], trace["color"], trace["lw"]) == (
        [1.0, 2.0, 3.0],
        "#0072B2",
        2.0,
    )
    assert (half["ls"], half["color"], half["label"]) == (
        ":",
        COLORS["bound"],
        r"$\sigma(0) = 1/2$",
    )
    assert ax.get_ylim() == pytest.approx((0.0, 1.02))
    assert ax.get_xlabel() == "step $t$ of the probe sequence"
    assert ax.get_ylabel() == "mean forget gate $f_t$"
    assert ax.get_legend()._loc == 4  # lower right
    assert tuple(fig.get_size_inches()) == pytest.approx((6.4, 3.2))
    assert _tight(ax)
    plt.close(fig)
