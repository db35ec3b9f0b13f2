"""Figures of "Depth, direction and scale": the tagger's accuracy by letter, the
scoreboard by seed.

Both use the book's style and its colours per architecture
(:data:`chapter_code.core.plotting.COLORS`).

Pages: "Depth, direction and scale".
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from chapter_code.core.plotting import use_book_style


def plot_tag_accuracy(
    curves: Mapping[str, tuple[Mapping[int, float], str, str]], last_label: str
) -> Figure:
    """Accuracy against a letter's index in its word, one line per ``label: (accuracy by
    index, colour, marker)``.

    The last index gathers every later letter; ``last_label`` is its tick label (e.g.
    ``"6+"``).
    """
    if not curves:
        raise ValueError("curves must hold at least one tagger")
    use_book_style()
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    for label, (accuracy, color, marker) in curves.items():
        index = sorted(accuracy)
        ax.plot(
            index, [accuracy[i] for i in index], color=color, marker=marker, label=label
        )
    index = sorted(next(iter(curves.values()))[0])
    ax.set_xticks(index, [str(i) for i in index[:-1]] + [last_label])
    ax.set_ylim(0.5, 1.02)
    ax.set_xlabel("letter's position in its word (1 = first letter)")
    ax.set_ylabel("tag accuracy")
    ax.legend(loc="lower right")
    fig.tight_layout()
    return fig


def plot_scoreboard(
    values: Mapping[str, Sequence[float]], colors: Mapping[str, str], xlabel: str
) -> Figure:
    """One row per contender: each seed's value as a dot, the mean as a bar with one
    standard deviation.
    """
    if not values:
        raise ValueError("values must hold at least one contender")
    use_book_style()
    labels = list(values)
    fig, ax = plt.subplots(figsize=(6.4, 0.5 * len(labels) + 1.2))
    for row, label in enumerate(labels):
        seeds = list(values[label])
        mean = statistics.fmean(seeds)
        spread = statistics.stdev(seeds) if len(seeds) > 1 else 0.0
        ax.errorbar(
            [mean],
            [row],
            xerr=[spread],
            fmt="|",
            markersize=14,
            color=colors[label],
            capsize=4,
        )
        ax.plot(
            seeds, [row] * len(seeds), "o", color=colors[label], alpha=0.7, markersize=5
        )
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    fig.tight_layout()
    return fig


def plot_scale(sizes: Mapping[str, tuple[int, Sequence[float]]], color: str) -> Figure:
    """Test perplexity against parameters (log axis): each seed a dot, the mean with one
    standard deviation.

    ``sizes`` maps a size's label to (parameters, one value per seed).
    """
    if not sizes:
        raise ValueError("sizes must hold at least one model size")
    use_book_style()
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for label, (params, values) in sizes.items():
        mean = statistics.fmean(values)
        spread = statistics.stdev(values) if len(values) > 1 else 0.0
        ax.plot(
            [params] * len(values), values, "o", color=color, alpha=0.6, markersize=5
        )
        ax.errorbar(
            [params],
            [mean],
            yerr=[spread],
            fmt="_",
            markersize=16,
            color="black",
            capsize=5,
        )
        ax.annotate(
            label,
            (params, mean),
            textcoords="offset points",
            xytext=(10, 0),
            va="center",
        )
    ax.set_xscale("log")
    ax.set_xlabel("parameters")
    ax.set_ylabel("test perplexity (words)")
    fig.tight_layout()
    return fig
