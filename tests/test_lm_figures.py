"""Tests for chapter_code.lm_figures: labelled axes, one line per model, zeros left out of log plots."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from chapter_code.lm_figures import plot_gradient_reach, plot_training_curves  # noqa: E402


def test_training_curves_draw_each_model_and_its_held_out_line() -> None:
    fig = plot_training_curves({"LSTM": ([(1, 4.0), (2, 3.0)], "#0072B2")}, held_out={"LSTM": 3.2})
    ax = fig.axes[0]
    assert ax.get_xlabel() == "training step"
    assert "nats" in ax.get_ylabel()
    assert len(ax.lines) == 2
    assert list(ax.lines[1].get_ydata()) == [3.2, 3.2]
    plt.close(fig)
    with pytest.raises(ValueError, match="at least one"):
        plot_training_curves({})


def test_gradient_reach_is_on_a_log_axis_without_the_zeros() -> None:
    fig = plot_gradient_reach({"RNN": ([1.0, 0.1, 0.0, 0.0], "#E69F00"), "LSTM": ([1.0, 0.5, 0.3, 0.2], "#0072B2")})
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    assert "distance" in ax.get_xlabel()
    assert list(ax.lines[0].get_xdata()) == [0, 1]
    assert len(ax.lines[1].get_xdata()) == 4
    plt.close(fig)


def test_loss_by_position_uses_a_log_position_axis_and_the_streaming_line() -> None:
    from chapter_code.lm_figures import plot_loss_by_position

    fig = plot_loss_by_position([3.0, 2.0, 1.5, 1.4], "#0072B2", streaming=1.3)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    assert list(ax.lines[0].get_xdata()) == [1, 2, 3, 4]
    assert list(ax.lines[1].get_ydata()) == [1.3, 1.3]
    plt.close(fig)
