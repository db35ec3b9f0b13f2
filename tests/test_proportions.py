"""Tests for chapter_code.proportions: the Wilson interval and the solve-rate summary."""

from __future__ import annotations

import pytest

from chapter_code.proportions import solve_rate, wilson_interval


def test_wilson_interval_contains_the_rate_and_stays_in_the_unit_interval() -> None:
    low, high = wilson_interval(3, 8)
    assert low < 3 / 8 < high
    assert wilson_interval(0, 16)[0] == 0.0
    assert wilson_interval(16, 16)[1] == 1.0
    assert wilson_interval(0, 16)[1] > 0.1  # none of 16 solved still allows a rate above 10 %
    width = {n: wilson_interval(n // 2, n)[1] - wilson_interval(n // 2, n)[0] for n in (16, 64)}
    assert width[16] > width[64]  # more runs, narrower interval
    with pytest.raises(ValueError, match="solved must be an int in"):
        wilson_interval(9, 8)
    with pytest.raises(ValueError, match="runs must be an int >= 1"):
        wilson_interval(0, 0)


def test_solve_rate_counts_runs_solved_at_the_end_and_their_epochs() -> None:
    runs = [{"final_accuracy": 1.0, "solved_epoch": 12}, {"final_accuracy": 0.25, "solved_epoch": None},
            {"final_accuracy": 0.95, "solved_epoch": 7}, {"final_accuracy": 0.5, "solved_epoch": 30}]
    summary = solve_rate(runs, 0.9)
    assert summary["solved"] == 2  # the last run crossed the line once but ended below it
    assert summary["rate"] == 0.5
    assert summary["solved_epochs"] == [7, 12]
    assert summary["low"] < 0.5 < summary["high"]
    with pytest.raises(ValueError, match="solved_at must be in"):
        solve_rate(runs, 0.0)
    with pytest.raises(ValueError, match="at least one run"):
        solve_rate([], 0.9)


def test_plot_shows_each_rate_inside_its_interval_and_the_counts() -> None:
    import matplotlib

    matplotlib.use("Agg")
    from chapter_code.proportions import plot_solve_rates

    runs = [{"final_accuracy": a, "solved_epoch": 5 if a >= 0.9 else None} for a in (1.0, 0.2, 0.95, 0.3)]
    summaries = {"LSTM": solve_rate(runs, 0.9), "RNN": solve_rate(runs[1:2], 0.9)}
    fig = plot_solve_rates(summaries, {"LSTM": "#0072B2", "RNN": "#E69F00"})
    ax = fig.axes[0]
    bar, dot = ax.lines[0], ax.lines[1]
    assert list(bar.get_xdata()) == [summaries["LSTM"]["low"], summaries["LSTM"]["high"]]
    assert list(dot.get_xdata()) == [0.5]
    assert list(dot.get_ydata()) == [1]  # the first contender is drawn at the top
    assert [t.get_text() for t in ax.texts] == ["2 of 4", "0 of 1"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["RNN", "LSTM"]
