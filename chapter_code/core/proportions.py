"""Proportions measured over a few runs, with honest confidence intervals.

How often does a contender solve the memory test? Over 16 seeds, 8 solved
runs is a rate of one half give or take a lot; :func:`wilson_interval` says
how much, and :func:`solve_rate` summarises one contender's runs (the metrics
of its records in the memory-robustness sweep).

Pages: "Gated memory: LSTM and GRU" (the robustness of the memory test;
:func:`plot_solve_rates`). The interval is Wilson's (1927), recommended over the normal
approximation by Brown, Cai and DasGupta (2001).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from chapter_code.core.arguments import positive_ints
from chapter_code.core.plotting import use_book_style


def wilson_interval(solved: int, runs: int, z: float = 1.96) -> tuple[float, float]:
    r"""Wilson score interval for a solve rate ``solved / runs`` (95 % for ``z =
    1.96``).

    With :math:`\hat p = k/n`, the interval is
    :math:`\frac{\hat p + z^2/2n \pm z\sqrt{\hat p(1-\hat p)/n + z^2/4n^2}}{1 + z^2/n}`;
    unlike :math:`\hat p \pm z\sqrt{\hat p(1-\hat p)/n}` it stays inside [0, 1] and is
    not empty when every run, or none, solved the task.
    """
    positive_ints(runs=runs)
    if not isinstance(solved, int) or not 0 <= solved <= runs:
        raise ValueError(f"solved must be an int in [0, runs={runs}]; got {solved!r}")
    p = solved / runs
    centre = (p + z * z / (2 * runs)) / (1 + z * z / runs)
    half = (
        z
        * math.sqrt(p * (1 - p) / runs + z * z / (4 * runs * runs))
        / (1 + z * z / runs)
    )
    return max(0.0, centre - half), min(1.0, centre + half)


def solve_rate(metrics: Sequence[dict[str, Any]], solved_at: float) -> dict[str, Any]:
    """Solve rate of one contender's runs (the ``metrics`` of its records), with its
    Wilson interval.

    A run is solved when its test accuracy after the last epoch
    (``final_accuracy``, the number the sources report) reaches ``solved_at``.
    ``solved_epochs`` lists, for the solved runs, the epoch at which their test
    accuracy first reached the line (``solved_epoch``), in increasing order.
    """
    if len(metrics) == 0:
        raise ValueError("metrics must hold at least one run")
    if not 0 < solved_at <= 1:
        raise ValueError(f"solved_at must be in (0, 1]; got {solved_at!r}")
    solved = [m for m in metrics if m["final_accuracy"] >= solved_at]
    epochs = sorted(m["solved_epoch"] for m in solved)
    low, high = wilson_interval(len(solved), len(metrics))
    return {
        "runs": len(metrics),
        "solved": len(solved),
        "rate": len(solved) / len(metrics),
        "low": low,
        "high": high,
        "solved_epochs": epochs,
    }


def plot_solve_rates(
    summaries: dict[str, dict[str, Any]], colors: dict[str, str]
) -> Figure:
    """One row per contender: its solve rate (dot) and 95 % Wilson interval (bar), from
    :func:`solve_rate`.
    """
    use_book_style()
    labels = list(summaries)
    # narrow: legible on a phone
    fig, ax = plt.subplots(figsize=(4.2, 0.5 * len(labels) + 1.1))
    for row, label in enumerate(labels):
        s = summaries[label]
        y = len(labels) - 1 - row  # first contender at the top
        ax.plot(
            [s["low"], s["high"]],
            [y, y],
            color=colors[label],
            linewidth=4,
            alpha=0.45,
            solid_capstyle="butt",
        )
        ax.plot([s["rate"]], [y], "o", color=colors[label], markersize=8)
        ax.annotate(
            f"{s['solved']} of {s['runs']}",
            (1.02, y),
            xycoords=("axes fraction", "data"),
            va="center",
        )
    ax.set_yticks(range(len(labels)), labels[::-1])
    ax.set_xlim(-0.03, 1.03)  # dots at 0 and 1 drawn whole
    ax.set_ylim(-0.6, len(labels) - 0.4)
    ax.set_xlabel("share of seeds solved (bar: 95% interval)")
    ax.grid(axis="y", visible=False)
    return fig
