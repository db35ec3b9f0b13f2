"""Tests for chapter_code.gate_figures: each plot draws the numbers it is given, labelled as the page says."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import pytest  # noqa: E402
import torch  # noqa: E402

from chapter_code.gate_figures import (  # noqa: E402
    plot_forget_power,
    plot_forget_traces,
    plot_grad_vs_lag,
    plot_output_gate_demo,
)
from chapter_code.gates import forget_power  # noqa: E402


def test_output_gate_demo_draws_the_three_series_against_steps_from_one() -> None:
    gates, cells, hiddens = torch.tensor([1.0, 0.0, 1.0]), torch.tensor([0.5, 0.5, 0.7]), torch.tensor([0.4, 0, 0.6])
    fig = plot_output_gate_demo(gates, cells, hiddens)
    lines = {line.get_label(): line for line in fig.axes[0].get_lines()}
    assert set(lines) == {"cell state $c_t$", "hidden state $h_t$", "output gate $o_t$"}
    assert list(lines["cell state $c_t$"].get_xdata()) == [1, 2, 3]
    assert list(lines["hidden state $h_t$"].get_ydata()) == pytest.approx([0.4, 0.0, 0.6])
    assert list(lines["output gate $o_t$"].get_ydata()) == [1.0, 0.0, 1.0]


def test_forget_power_plots_f_to_the_k_with_the_gate_value_in_the_legend() -> None:
    powers = forget_power([0.0, 1.0], 5)
    fig = plot_forget_power([0.0, 1.0], powers)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    first, second = ax.get_lines()
    assert list(first.get_ydata()) == pytest.approx([0.5 ** k for k in range(1, 6)])
    assert second.get_label() == "$b_f = +1$, $f = 0.731$"
    f = float(torch.sigmoid(torch.tensor(1.0)))
    assert list(second.get_ydata()) == pytest.approx([f**k for k in range(1, 6)])


def test_grad_vs_lag_draws_each_curve_on_a_log_axis() -> None:
    fig = plot_grad_vs_lag([1, 10, 80], {"RNN": ([1.0, 1e-3, 1e-12], "#E69F00"), "LSTM": ([1.0, 0.5, 0.1], "#0072B2")})
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    rnn, lstm = ax.get_lines()
    assert (rnn.get_label(), list(rnn.get_ydata())) == ("RNN", [1.0, 1e-3, 1e-12])
    assert list(lstm.get_xdata()) == [1, 10, 80]
    assert lstm.get_color() == "#0072B2"


def test_forget_traces_draw_each_model_and_the_one_half_line() -> None:
    fig = plot_forget_traces({"forget bias +1": ([0.8, 0.9], "#0072B2"), "default": ([0.5, 0.55], "#56B4E9")})
    lines = fig.axes[0].get_lines()
    assert [line.get_label() for line in lines] == ["forget bias +1", "default", r"$\sigma(0) = 1/2$"]
    assert list(lines[0].get_xdata()) == [1, 2]
    assert list(lines[1].get_ydata()) == [0.5, 0.55]
    assert list(lines[2].get_ydata()) == [0.5, 0.5]
