"""Figures of "Depth, direction and scale": the wiring of stacked and bidirectional
layers, the trap's training curves, the tagger's accuracy by letter, the scoreboard by
seed and the scale study.

Both use the book's style and its colours per architecture
(:data:`chapter_code.core.plotting.COLORS`).

Pages: "Depth, direction and scale".
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from chapter_code.core.plotting import COLORS, use_book_style


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


def plot_training_curves(
    curves: Mapping[str, tuple[Sequence[tuple[int, float]], str, str]], ylabel: str
) -> Figure:
    """Training loss against step, one line per ``label: ((step, loss) pairs, colour,
    marker)``.
    """
    if not curves:
        raise ValueError("curves must hold at least one training curve")
    use_book_style()
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    for label, (history, color, marker) in curves.items():
        steps, losses = zip(*history, strict=True)
        ax.plot(steps, losses, color=color, marker=marker, label=label)
    ax.set_yscale("log")
    ax.set_xlabel("training step")
    ax.set_ylabel(ylabel)
    ax.legend(loc="center right")
    fig.tight_layout()
    return fig


def _cell(ax: Axes, x: float, y: float, text: str, color: str) -> None:
    ax.add_patch(
        FancyBboxPatch(
            (x - 0.32, y - 0.26),
            0.64,
            0.52,
            boxstyle="round,pad=0.03",
            facecolor=color,
            edgecolor="black",
            linewidth=1.0,
            alpha=0.85,
        )
    )
    ax.text(x, y, text, ha="center", va="center")


def _wire(
    ax: Axes, start: tuple[float, float], end: tuple[float, float], **kwargs: object
) -> None:
    ax.add_patch(
        FancyArrowPatch(
            start, end, arrowstyle="-|>", mutation_scale=11, linewidth=1.1, **kwargs
        )
    )


def draw_stacked_and_bidirectional(steps: int = 3) -> Figure:
    """Left: a two-layer stack unrolled over ``steps`` steps. Right: one bidirectional
    layer over the same steps.

    In the stack, layer 2 reads layer 1's hidden state at the same step; in the
    bidirectional layer the backward row passes its state from right to left
    and the two rows' states are joined, ``[h_fwd ; h_bwd]``, at every step.
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or not 2 <= steps <= 5:
        raise ValueError(f"steps must be an int in [2, 5]; got {steps!r}")
    use_book_style()
    fig, (left, right) = plt.subplots(1, 2, figsize=(6.8, 3.6))
    lower, upper, backward = COLORS["lstm"], COLORS["other"], COLORS["rnn"]
    for t in range(1, steps + 1):
        # the stack: input, layer 1, layer 2, output, from the bottom up
        left.text(t, -0.15, f"$x_{t}$", ha="center", va="top")
        _wire(left, (t, -0.1), (t, 0.74))
        _cell(left, t, 1.0, "$\\ell = 1$", lower)
        _wire(left, (t, 1.26), (t, 1.94))
        _cell(left, t, 2.2, "$\\ell = 2$", upper)
        _wire(left, (t, 2.46), (t, 3.0))
        left.text(t, 3.05, f"$h^{{(2)}}_{t}$", ha="center", va="bottom")
        # the bidirectional layer: forward row below, backward row above; both read x_t,
        # both reach the output
        right.text(t, -0.15, f"$x_{t}$", ha="center", va="top")
        _wire(right, (t, -0.1), (t, 0.74))
        _cell(right, t, 1.0, "$\\rightarrow$", lower)
        _cell(right, t, 2.2, "$\\leftarrow$", backward)
        _wire(
            right,
            (t - 0.08, -0.1),
            (t - 0.32, 2.1),
            connectionstyle="arc3,rad=-0.25",
            color="0.35",
        )
        _wire(
            right,
            (t + 0.32, 1.1),
            (t + 0.1, 3.0),
            connectionstyle="arc3,rad=0.3",
            color="0.35",
        )
        _wire(right, (t, 2.46), (t, 3.0))
        right.text(
            t,
            3.05,
            f"$[\\overrightarrow{{h}}_{t} ; \\overleftarrow{{h}}_{t}]$",
            ha="center",
            va="bottom",
        )
        if t > 1:
            for y in (1.0, 2.2):
                # each layer's state passes to its next step
                _wire(left, (t - 0.68, y), (t - 0.32, y))
            _wire(right, (t - 0.68, 1.0), (t - 0.32, 1.0))  # forward: left to right
            _wire(right, (t - 0.32, 2.2), (t - 0.68, 2.2))  # backward: right to left
    left.set_title("two stacked layers")
    right.set_title("one bidirectional layer")
    for ax in (left, right):
        ax.set_xlim(0.4, steps + 0.6)
        ax.set_ylim(-0.6, 3.6)
        ax.axis("off")
    fig.tight_layout()
    return fig
