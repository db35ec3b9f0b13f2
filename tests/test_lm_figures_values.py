"""Tests for chapter_code.lm_figures that read back every series, colour, style, label, scale
and legend of the language-model chapter's plots."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from figure_facts import line_facts  # noqa: E402

from chapter_code.lm_figures import plot_gradient_reach, plot_loss_by_position, plot_training_curves  # noqa: E402


def _tight(ax) -> bool:
    """tight_layout ran: the axes no longer sit in the style's default subplot box."""
    rc = plt.rcParams
    left, bottom = rc["figure.subplot.left"], rc["figure.subplot.bottom"]
    default = (left, bottom, rc["figure.subplot.right"] - left, rc["figure.subplot.top"] - bottom)
    return max(abs(a - b) for a, b in zip(ax.get_position().bounds, default, strict=True)) > 0.01


def _legend(ax) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_training_curves_every_line_and_label() -> None:
    # colours outside the style's cycle, so a line that forgot its colour would show
    curves = {"RNN": ([(10, 3.0), (20, 2.5)], "#123456"), "LSTM": ([(10, 2.9), (20, 2.0)], "#654321")}
    fig = plot_training_curves(curves, held_out={"LSTM": 2.2, "GRU": 9.0})
    (ax,) = fig.axes
    lines = line_facts(ax)
    assert [(ln["x"], ln["y"], ln["color"], ln["ls"]) for ln in lines] == [
        ([10.0, 20.0], [3.0, 2.5], "#123456", "-"),
        ([10.0, 20.0], [2.9, 2.0], "#654321", "-"),
        ([0.0, 1.0], [2.2, 2.2], "#654321", ":"),
    ]
    assert _legend(ax) == ["RNN, training windows", "LSTM, training windows", "LSTM, held-out text"]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("training step", "loss (nats per character)")
    assert tuple(fig.get_size_inches()) == pytest.approx((6.4, 3.6))
    assert _tight(ax)
    plt.close(fig)
    fig = plot_training_curves({"RNN": ([(1, 3.0)], "#E69F00")})
    assert len(fig.axes[0].get_lines()) == 1
    plt.close(fig)


def test_gradient_reach_every_line_and_label() -> None:
    fig = plot_gradient_reach({"RNN": ([1.0, 0.0, 0.1], "#E69F00"), "GRU": ([0.5, 0.25], "#009E73")})
    (ax,) = fig.axes
    lines = line_facts(ax)
    assert [(ln["x"], ln["y"], ln["color"], ln["label"]) for ln in lines] == [
        ([0.0, 2.0], [1.0, 0.1], "#E69F00", "RNN"), ([0.0, 1.0], [0.5, 0.25], "#009E73", "GRU")]
    assert _legend(ax) == ["RNN", "GRU"]
    assert ax.get_xlabel() == "distance back from the scored character (characters)"
    assert ax.get_ylabel() == "gradient norm at that input"
    assert tuple(fig.get_size_inches()) == pytest.approx((6.4, 3.6))
    assert _tight(ax)
    plt.close(fig)
    with pytest.raises(ValueError, match="^reach must hold at least one model$"):
        plot_gradient_reach({})


def test_loss_by_position_every_line_label_and_the_base_two_axis() -> None:
    fig = plot_loss_by_position([3.0, 2.0, 1.5], "#0072B2", streaming=1.3)
    (ax,) = fig.axes
    lines = line_facts(ax)
    assert [(ln["y"], ln["color"], ln["ls"]) for ln in lines] == [
        ([3.0, 2.0, 1.5], "#0072B2", "-"), ([1.3, 1.3], "#0072B2", ":")]
    assert lines[0]["x"] == [1.0, 2.0, 3.0]
    assert _legend(ax) == ["fixed windows, by position", "state carried (streaming), mean"]
    assert ax.xaxis.get_transform().base == 2
    assert ax.get_xlabel() == "position in the window (characters read from a fresh state)"
    assert ax.get_ylabel() == "loss (nats per character)"
    assert tuple(fig.get_size_inches()) == pytest.approx((6.4, 3.6))
    assert _tight(ax)
    plt.close(fig)
    fig = plot_loss_by_position([3.0], "#0072B2")
    assert len(fig.axes[0].get_lines()) == 1
    plt.close(fig)
    with pytest.raises(ValueError, match="^losses must hold at least one position$"):
        plot_loss_by_position([], "#0072B2")
