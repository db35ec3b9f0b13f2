"""Tests for chapter_code.lm.figures: labelled axes, one line per model, zeros left out
of log plots.

Tests for chapter_code.lm.figures that read back every series, colour, style, label,
scale and legend of the language-model chapter's plots.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from chapter_code.lm.figures import plot_gradient_reach, plot_training_curves  # noqa: E402


def test_training_curves_draw_each_model_and_its_held_out_line() -> None:
    fig = plot_training_curves(
        {"LSTM": ([(1, 4.0), (2, 3.0)], "#0072B2")}, held_out={"LSTM": 3.2}
    )
    ax = fig.axes[0]
    assert ax.get_xlabel() == "training step"
    assert "nats" in ax.get_ylabel()
    assert len(ax.lines) == 2
    assert list(ax.lines[1].get_ydata()) == [3.2, 3.2]
    plt.close(fig)
    with pytest.raises(ValueError, match="at least one"):
        plot_training_curves({})


def test_gradient_reach_is_on_a_log_axis_without_the_zeros() -> None:
    fig = plot_gradient_reach(
        {
            "RNN": ([1.0, 0.1, 0.0, 0.0], "#E69F00"),
            "LSTM": ([1.0, 0.5, 0.3, 0.2], "#0072B2"),
        }
    )
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    assert "distance" in ax.get_xlabel()
    assert list(ax.lines[0].get_xdata()) == [0, 1]
    assert len(ax.lines[1].get_xdata()) == 4
    plt.close(fig)


def test_loss_by_position_uses_a_log_position_axis_and_the_streaming_line() -> None:
    from chapter_code.lm.figures import plot_loss_by_position

    fig = plot_loss_by_position([3.0, 2.0, 1.5, 1.4], "#0072B2", streaming=1.3)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    assert list(ax.lines[0].get_xdata()) == [1, 2, 3, 4]
    assert list(ax.lines[1].get_ydata()) == [1.3, 1.3]
    plt.close(fig)


matplotlib.use("Agg")

from chapter_code.lm.figures import plot_loss_by_position  # noqa: E402
from tests.figure_facts import line_facts  # noqa: E402


def _tight(ax) -> bool:
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


def _legend(ax) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_training_curves_every_line_and_label() -> None:
    # colours outside the style's cycle, so a line that forgot its colour would show
    curves = {
        "RNN": ([(10, 3.0), (20, 2.5)], "#123456"),
        "LSTM": ([(10, 2.9), (20, 2.0)], "#654321"),
    }
    fig = plot_training_curves(curves, held_out={"LSTM": 2.2, "GRU": 9.0})
    (ax,) = fig.axes
    lines = line_facts(ax)
    assert [(ln["x"], ln["y"], ln["color"], ln["ls"]) for ln in lines] == [
        ([10.0, 20.0], [3.0, 2.5], "#123456", "-"),
        ([10.0, 20.0], [2.9, 2.0], "#654321", "-"),
        ([0.0, 1.0], [2.2, 2.2], "#654321", ":"),
    ]
    assert _legend(ax) == [
        "RNN, training windows",
        "LSTM, training windows",
        "LSTM, held-out text",
    ]
    assert (ax.get_xlabel(), ax.get_ylabel()) == (
        "training step",
        "loss (nats per character)",
    )
    assert tuple(fig.get_size_inches()) == pytest.approx((6.4, 3.6))
    assert _tight(ax)
    plt.close(fig)
    fig = plot_training_curves({"RNN": ([(1, 3.0)], "#E69F00")})
    assert len(fig.axes[0].get_lines()) == 1
    plt.close(fig)


def test_gradient_reach_every_line_and_label() -> None:
    fig = plot_gradient_reach(
        {"RNN": ([1.0, 0.0, 0.1], "#E69F00"), "GRU": ([0.5, 0.25], "#009E73")}
    )
    (ax,) = fig.axes
    lines = line_facts(ax)
    assert [(ln["x"], ln["y"], ln["color"], ln["label"]) for ln in lines] == [
        ([0.0, 2.0], [1.0, 0.1], "#E69F00", "RNN"),
        ([0.0, 1.0], [0.5, 0.25], "#009E73", "GRU"),
    ]
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
        ([3.0, 2.0, 1.5], "#0072B2", "-"),
        ([1.3, 1.3], "#0072B2", ":"),
    ]
    assert lines[0]["x"] == [1.0, 2.0, 3.0]
    assert _legend(ax) == [
        "fixed windows, by position",
        "state carried (streaming), mean",
    ]
    assert ax.xaxis.get_transform().base == 2
    assert (
        ax.get_xlabel() == "position in the window (characters read from a fresh state)"
    )
    assert ax.get_ylabel() == "loss (nats per character)"
    assert tuple(fig.get_size_inches()) == pytest.approx((6.4, 3.6))
    assert _tight(ax)
    plt.close(fig)
    fig = plot_loss_by_position([3.0], "#0072B2")
    assert len(fig.axes[0].get_lines()) == 1
    plt.close(fig)
    with pytest.raises(ValueError, match="^losses must hold at least one position$"):
        plot_loss_by_position([], "#0072B2")


def test_seed_scores_draw_one_marker_per_seed_and_protocol_with_the_references() -> (
    None
):
    from chapter_code.lm.figures import plot_seed_scores

    scores = {
        "RNN": {"fixed": [1.66, 1.65], "carried": [1.64, 1.63]},
        "LSTM": {"fixed": [1.55], "carried": [1.52]},
    }
    fig = plot_seed_scores(
        scores,
        {"RNN": "#E69F00", "LSTM": "#0072B2"},
        reduced={"RNN": 1.8},
        baseline=("best n-gram", 1.7),
    )
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["RNN", "LSTM"]
    assert list(ax.lines[0].get_ydata()) == [1.66, 1.65]
    assert ax.lines[0].get_marker() == "o"
    assert ax.lines[1].get_marker() == "^"
    assert list(ax.lines[2].get_ydata()) == [1.8, 1.8]  # the reduced RNN
    assert list(ax.lines[-1].get_ydata()) == [1.7, 1.7]  # the baseline
    assert "nats" in ax.get_ylabel()
    plt.close(fig)
    with pytest.raises(ValueError, match="at least one model"):
        plot_seed_scores({}, {})


def test_window_sweep_uses_a_log_window_axis_and_the_streaming_line() -> None:
    from chapter_code.lm.figures import plot_window_sweep

    fig = plot_window_sweep([16, 32, 64], [1.9, 1.8, 1.75], "#0072B2", streaming=1.7)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    assert list(ax.lines[0].get_xdata()) == [16, 32, 64]
    assert list(ax.lines[1].get_ydata()) == [1.7, 1.7]
    plt.close(fig)
    with pytest.raises(ValueError, match="one length"):
        plot_window_sweep([16], [1.0, 2.0], "#0072B2")


def test_seed_scores_every_marker_line_label_and_place() -> None:
    from chapter_code.lm.figures import plot_seed_scores

    scores = {
        "RNN": {"fixed": [1.66, 1.65], "carried": [1.64, 1.63]},
        "LSTM": {"fixed": [1.55], "carried": []},
        "GRU": {"fixed": [1.5, 1.49, 1.48], "carried": [1.47]},
    }
    colors = {"RNN": "#123456", "LSTM": "#654321", "GRU": "#ABCDEF"}
    fig = plot_seed_scores(
        scores, colors, reduced={"LSTM": 1.8}, baseline=("best n-gram", 1.7)
    )
    (ax,) = fig.axes
    lines = line_facts(ax)
    # two protocols 0.18 apart around each column; the reduced bar 0.35 each side of it
    assert [
        (ln["x"], ln["y"], ln["color"], ln["ls"], ln["label"]) for ln in lines[:-1]
    ] == [
        ([-0.09, -0.09], [1.66, 1.65], "#123456", "None", "RNN, fixed"),
        ([0.09, 0.09], [1.64, 1.63], "#123456", "None", "RNN, carried"),
        ([0.91], [1.55], "#654321", "None", "LSTM, fixed"),
        (
            [],
            [],
            "#654321",
            "None",
            "_child3",
        ),  # an empty protocol draws nothing and gets no legend entry
        ([0.65, 1.35], [1.8, 1.8], "#654321", ":", "LSTM, reduced size"),
        ([1.91, 1.91, 1.91], [1.5, 1.49, 1.48], "#ABCDEF", "None", "GRU, fixed"),
        ([2.09], [1.47], "#ABCDEF", "None", "GRU, carried"),
    ]
    markers = [line.get_marker() for line in ax.get_lines()]
    assert markers[:4] == ["o", "^", "o", "^"]
    assert markers[5:7] == ["o", "^"]
    baseline = lines[-1]
    assert (baseline["y"], baseline["color"], baseline["ls"], baseline["label"]) == (
        [1.7, 1.7],
        "#999999",
        "--",
        "best n-gram",
    )
    assert [t.get_text() for t in ax.get_xticklabels()] == ["RNN", "LSTM", "GRU"]
    assert list(ax.get_xticks()) == [0, 1, 2]
    assert ax.get_xlim() == pytest.approx((-0.6, 2.6))
    assert ax.get_ylabel() == "test loss (nats per character)"
    legend = ax.get_legend()
    assert _legend(ax) == [
        "RNN, fixed",
        "RNN, carried",
        "LSTM, fixed",
        "LSTM, reduced size",
        "GRU, fixed",
        "GRU, carried",
        "best n-gram",
    ]
    assert legend._ncols == 2
    assert legend._loc == 9  # upper center, below the axes
    assert tuple(legend.get_bbox_to_anchor()._bbox.bounds[:2]) == pytest.approx(
        (0.5, -0.12)
    )
    assert legend.borderaxespad == 0.0
    assert tuple(fig.get_size_inches()) == pytest.approx((6.4, 4.8))
    assert _tight(ax)
    plt.close(fig)
    # a third protocol takes squares; without `reduced` or `baseline` nothing else is
    # drawn
    fig = plot_seed_scores(
        {"RNN": {"a": [1.0], "b": [1.1], "c": [1.2]}}, {"RNN": "#123456"}
    )
    (ax,) = fig.axes
    assert [line.get_marker() for line in ax.get_lines()] == ["o", "^", "s"]
    assert [list(line.get_xdata()) for line in ax.get_lines()] == [
        [-0.18],
        [0.0],
        [0.18],
    ]
    plt.close(fig)
    with pytest.raises(
        ValueError,
        match="^scores must hold at least one model with at least one protocol$",
    ):
        plot_seed_scores({"RNN": {}}, {"RNN": "#123456"})


def test_window_sweep_every_line_label_and_the_base_two_axis() -> None:
    from chapter_code.lm.figures import plot_window_sweep

    fig = plot_window_sweep([16, 32, 64], [1.9, 1.8, 1.75], "#123456", streaming=1.7)
    (ax,) = fig.axes
    lines = line_facts(ax)
    assert [(ln["x"], ln["y"], ln["color"], ln["ls"], ln["label"]) for ln in lines] == [
        ([16.0, 32.0, 64.0], [1.9, 1.8, 1.75], "#123456", "-", "fixed windows"),
        ([0.0, 1.0], [1.7, 1.7], "#123456", ":", "state carried (streaming)"),
    ]
    assert ax.get_lines()[0].get_marker() == "o"
    assert ax.xaxis.get_transform().base == 2
    assert list(ax.get_xticks()) == [16, 32, 64]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["16", "32", "64"]
    assert ax.get_xlabel() == "window length (characters, state reset at each window)"
    assert ax.get_ylabel() == "test loss (nats per character)"
    assert _legend(ax) == ["fixed windows", "state carried (streaming)"]
    assert tuple(fig.get_size_inches()) == pytest.approx((6.4, 3.6))
    assert _tight(ax)
    plt.close(fig)
    fig = plot_window_sweep([8], [2.0], "#123456")
    assert len(fig.axes[0].get_lines()) == 1
    plt.close(fig)
    with pytest.raises(
        ValueError,
        match="^windows and losses must be non-empty and of one length; got 0 and 0$",
    ):
        plot_window_sweep([], [], "#123456")
