"""Tests for chapter_code.core.proportions: the Wilson interval and the solve-rate
summary.

Tests for chapter_code.core.proportions that pin values: the Wilson interval against the
published formula and reference values, boundaries of the arguments, the solve-rate
threshold, and every artist of the solve-rate figure.
"""

from __future__ import annotations

import math

import matplotlib
import pytest

from chapter_code.core.proportions import solve_rate, wilson_interval


def test_wilson_interval_contains_the_rate_and_stays_in_the_unit_interval() -> None:
    low, high = wilson_interval(3, 8)
    assert low < 3 / 8 < high
    assert wilson_interval(0, 16)[0] == 0.0
    assert wilson_interval(16, 16)[1] == 1.0
    # none of 16 solved still allows a rate above 10 %
    assert wilson_interval(0, 16)[1] > 0.1
    width = {
        n: wilson_interval(n // 2, n)[1] - wilson_interval(n // 2, n)[0]
        for n in (16, 64)
    }
    assert width[16] > width[64]  # more runs, narrower interval
    with pytest.raises(ValueError, match="solved must be an int in"):
        wilson_interval(9, 8)
    with pytest.raises(ValueError, match="runs must be an int >= 1"):
        wilson_interval(0, 0)


def test_solve_rate_counts_runs_solved_at_the_end_and_their_epochs() -> None:
    runs = [
        {"final_accuracy": 1.0, "solved_epoch": 12},
        {"final_accuracy": 0.25, "solved_epoch": None},
        {"final_accuracy": 0.95, "solved_epoch": 7},
        {"final_accuracy": 0.5, "solved_epoch": 30},
    ]
    summary = solve_rate(runs, 0.9)
    # the last run crossed the line once but ended below it
    assert summary["solved"] == 2
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
    from chapter_code.core.proportions import plot_solve_rates

    runs = [
        {"final_accuracy": a, "solved_epoch": 5 if a >= 0.9 else None}
        for a in (1.0, 0.2, 0.95, 0.3)
    ]
    summaries = {"LSTM": solve_rate(runs, 0.9), "RNN": solve_rate(runs[1:2], 0.9)}
    fig = plot_solve_rates(summaries, {"LSTM": "#0072B2", "RNN": "#E69F00"})
    ax = fig.axes[0]
    bar, dot = ax.lines[0], ax.lines[1]
    assert list(bar.get_xdata()) == [
        summaries["LSTM"]["low"],
        summaries["LSTM"]["high"],
    ]
    assert list(dot.get_xdata()) == [0.5]
    assert list(dot.get_ydata()) == [1]  # the first contender is drawn at the top
    assert [t.get_text() for t in ax.texts] == ["2 of 4", "0 of 1"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["RNN", "LSTM"]


matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from chapter_code.core.proportions import plot_solve_rates  # noqa: E402
from tests.figure_facts import line_facts  # noqa: E402


def _wilson(k: int, n: int, z: float) -> tuple[float, float]:
    """Wilson (1927), as written in Brown, Cai and DasGupta (2001), eq. (4)."""
    p = k / n
    centre = (k + z**2 / 2) / (n + z**2)
    half = z * math.sqrt(n) / (n + z**2) * math.sqrt(p * (1 - p) + z**2 / (4 * n))
    return max(0.0, centre - half), min(1.0, centre + half)


@pytest.mark.parametrize(
    ("k", "n"), [(0, 1), (1, 1), (3, 8), (8, 16), (15, 16), (40, 64)]
)
@pytest.mark.parametrize("z", [1.0, 1.96, 2.576])
def test_wilson_interval_is_the_published_formula(k: int, n: int, z: float) -> None:
    assert wilson_interval(k, n, z) == pytest.approx(_wilson(k, n, z), abs=1e-12)


def test_wilson_interval_reference_values() -> None:
    # 95 % interval for 8 of 16 and for 0 of 16, to 4 places.
    assert wilson_interval(8, 16) == pytest.approx((0.2800, 0.7200), abs=5e-5)
    assert wilson_interval(0, 16) == pytest.approx((0.0, 0.1936), abs=5e-5)
    low, high = wilson_interval(16, 16)
    assert high == 1.0
    assert low == pytest.approx(0.8064, abs=5e-5)


@pytest.mark.parametrize(
    ("solved", "runs", "message"),
    [
        (0, 0, r"^runs must be an int >= 1; got 0$"),
        (1, 2.0, r"^runs must be an int >= 1; got 2.0$"),
        (-1, 4, r"^solved must be an int in \[0, runs=4\]; got -1$"),
        (5, 4, r"^solved must be an int in \[0, runs=4\]; got 5$"),
        (1.0, 4, r"^solved must be an int in \[0, runs=4\]; got 1.0$"),
    ],
)
def test_wilson_interval_rejects_bad_counts(
    solved: object, runs: object, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        wilson_interval(solved, runs)  # type: ignore[arg-type]


def test_wilson_interval_accepts_the_edges() -> None:
    assert wilson_interval(0, 1)[0] == 0.0
    assert wilson_interval(1, 1)[1] == 1.0


def test_solve_rate_threshold_is_inclusive_and_one_is_allowed() -> None:
    runs = [
        {"final_accuracy": 0.9, "solved_epoch": 4},
        {"final_accuracy": 0.8999, "solved_epoch": None},
        {"final_accuracy": 1.0, "solved_epoch": 2},
    ]
    summary = solve_rate(runs, 0.9)
    low, high = wilson_interval(2, 3)
    assert summary == {
        "runs": 3,
        "solved": 2,
        "rate": 2 / 3,
        "low": low,
        "high": high,
        "solved_epochs": [2, 4],
    }
    assert solve_rate(runs, 1.0)["solved"] == 1
    with pytest.raises(ValueError, match=r"^solved_at must be in \(0, 1\]; got 1.5$"):
        solve_rate(runs, 1.5)
    with pytest.raises(ValueError, match=r"^metrics must hold at least one run$"):
        solve_rate([], 0.5)


def test_plot_solve_rates_draws_every_row() -> None:
    summaries = {
        "A": {"runs": 16, "solved": 8, "rate": 0.5, "low": 0.28, "high": 0.72},
        "B": {"runs": 16, "solved": 0, "rate": 0.0, "low": 0.0, "high": 0.19},
        "C": {"runs": 4, "solved": 4, "rate": 1.0, "low": 0.51, "high": 1.0},
    }
    colors = {"A": "#0072B2", "B": "#E69F00", "C": "#009E73"}
    fig = plot_solve_rates(summaries, colors)
    (ax,) = fig.axes
    lines = line_facts(ax)
    raw = ax.get_lines()
    for row, label in enumerate("ABC"):
        bar, dot = lines[2 * row], lines[2 * row + 1]
        y = 2 - row
        s = summaries[label]
        assert (bar["x"], bar["y"], bar["color"], bar["lw"]) == (
            [s["low"], s["high"]],
            [y, y],
            colors[label],
            4.0,
        )
        assert raw[2 * row].get_alpha() == 0.45
        assert raw[2 * row].get_solid_capstyle() == "butt"
        assert (dot["x"], dot["y"], dot["color"]) == ([s["rate"]], [y], colors[label])
        assert (raw[2 * row + 1].get_marker(), raw[2 * row + 1].get_markersize()) == (
            "o",
            8,
        )
        assert raw[2 * row + 1].get_linestyle() == "None"
    notes = ax.texts
    assert [t.get_text() for t in notes] == ["8 of 16", "0 of 16", "4 of 4"]
    assert [t.xy for t in notes] == [(1.02, 2), (1.02, 1), (1.02, 0)]
    assert {t.get_va() for t in notes} == {"center"}
    assert {t.xycoords for t in notes} == {("axes fraction", "data")}
    assert list(ax.get_yticks()) == [0, 1, 2]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["C", "B", "A"]
    assert ax.get_xlim() == pytest.approx((-0.03, 1.03))
    assert ax.get_ylim() == pytest.approx((-0.6, 2.6))
    assert ax.get_xlabel() == "share of seeds solved (bar: 95% interval)"
    fig.canvas.draw()  # grid lines take their visibility from the ticks when drawn
    assert not any(line.get_visible() for line in ax.yaxis.get_gridlines())
    # the style's x grid stays
    assert all(line.get_visible() for line in ax.xaxis.get_gridlines())
    assert tuple(fig.get_size_inches()) == pytest.approx((4.2, 0.5 * 3 + 1.1))
    plt.close(fig)
