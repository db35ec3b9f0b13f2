"""Figures of the language-model chapter: training curves and a trained model's gradient
reach.

Both use the book's style and its colours per architecture
(:data:`chapter_code.core.plotting.COLORS`).

Pages: "Recurrent language models".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from chapter_code.core.plotting import use_book_style


def plot_training_curves(
    curves: Mapping[str, tuple[Sequence[tuple[int, float]], str]],
    held_out: Mapping[str, float] | None = None,
) -> Figure:
    """Training loss (nats per character) against step, one line per ``label: (history,
    colour)``.

    ``held_out`` optionally draws each model's held-out loss as a dotted line.
    """
    if not curves:
        raise ValueError("curves must hold at least one model")
    use_book_style()
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for label, (history, color) in curves.items():
        steps, losses = zip(*history, strict=True)
        ax.plot(steps, losses, color=color, label=f"{label}, training windows")
        if held_out and label in held_out:
            ax.axhline(
                held_out[label],
                color=color,
                linestyle=":",
                label=f"{label}, held-out text",
            )
    ax.set_xlabel("training step")
    ax.set_ylabel("loss (nats per character)")
    ax.legend()
    fig.tight_layout()
    return fig


def plot_gradient_reach(reach: Mapping[str, tuple[Sequence[float], str]]) -> Figure:
    """Gradient norm at the input ``d`` characters back against ``d``, on a log axis;
    exact zeros are not drawn.
    """
    if not reach:
        raise ValueError("reach must hold at least one model")
    use_book_style()
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for label, (norms, color) in reach.items():
        points = [(d, g) for d, g in enumerate(norms) if g > 0]
        ax.plot(
            [d for d, _ in points], [g for _, g in points], color=color, label=label
        )
    ax.set_yscale("log")
    ax.set_xlabel("distance back from the scored character (characters)")
    ax.set_ylabel("gradient norm at that input")
    ax.legend()
    fig.tight_layout()
    return fig


def plot_loss_by_position(
    losses: Sequence[float], color: str, streaming: float | None = None
) -> Figure:
    """Mean loss at each position of a fresh-state window; ``streaming`` draws the
    carried-state loss as a line.
    """
    if len(losses) == 0:
        raise ValueError("losses must hold at least one position")
    use_book_style()
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    ax.plot(
        range(1, len(losses) + 1),
        losses,
        color=color,
        label="fixed windows, by position",
    )
    if streaming is not None:
        ax.axhline(
            streaming,
            color=color,
            linestyle=":",
            label="state carried (streaming), mean",
        )
    ax.set_xscale("log", base=2)
    ax.set_xlabel("position in the window (characters read from a fresh state)")
    ax.set_ylabel("loss (nats per character)")
    ax.legend()
    fig.tight_layout()
    return fig
