"""Figures of the language-model chapter: training curves, seed scores, window sweeps
and gradient reach.

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


def plot_seed_scores(
    scores: Mapping[str, Mapping[str, Sequence[float]]],
    colors: Mapping[str, str],
    reduced: Mapping[str, float] | None = None,
    baseline: tuple[str, float] | None = None,
) -> Figure:
    """Test loss of every seed, one column per model, one marker per protocol.

    ``scores[model][protocol]`` lists the per-seed losses (the first protocol
    drawn as circles, the second as triangles); ``reduced[model]`` draws a
    model's reduced-size score as a short dotted bar over its column, and
    ``baseline`` a labelled dashed line across the plot.
    """
    if not scores or any(not protocols for protocols in scores.values()):
        raise ValueError(
            "scores must hold at least one model with at least one protocol"
        )
    use_book_style()
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    markers = ("o", "^", "s")
    protocols = list(next(iter(scores.values())))
    for col, (model, by_protocol) in enumerate(scores.items()):
        for k, protocol in enumerate(by_protocol):
            values = list(by_protocol[protocol])
            x = [col + (k - (len(by_protocol) - 1) / 2) * 0.18] * len(values)
            ax.plot(
                x,
                values,
                linestyle="none",
                marker=markers[protocols.index(protocol) % len(markers)],
                color=colors[model],
                label=f"{model}, {protocol}" if values else None,
            )
        if reduced and model in reduced:
            ax.plot(
                [col - 0.35, col + 0.35],
                [reduced[model]] * 2,
                color=colors[model],
                linestyle=":",
                label=f"{model}, reduced size",
            )
    if baseline is not None:
        ax.axhline(baseline[1], color="#999999", linestyle="--", label=baseline[0])
    ax.set_xticks(range(len(scores)), list(scores))
    ax.set_xlim(-0.6, len(scores) - 0.4)
    ax.set_ylabel("test loss (nats per character)")
    # below the axes, clear of the data and inside the figure's width
    ax.legend(
        loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, borderaxespad=0.0
    )
    fig.tight_layout()
    return fig


def plot_window_sweep(
    windows: Sequence[int],
    losses: Sequence[float],
    color: str,
    streaming: float | None = None,
) -> Figure:
    """Held-out loss against the length of the fresh-state windows (log axis);
    ``streaming`` as a dotted line.
    """
    if len(windows) == 0 or len(windows) != len(losses):
        raise ValueError(
            "windows and losses must be non-empty and of one length; got "
            f"{len(windows)} and {len(losses)}"
        )
    use_book_style()
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    ax.plot(list(windows), list(losses), color=color, marker="o", label="fixed windows")
    if streaming is not None:
        ax.axhline(
            streaming, color=color, linestyle=":", label="state carried (streaming)"
        )
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(windows), [str(w) for w in windows])
    ax.set_xlabel("window length (characters, state reset at each window)")
    ax.set_ylabel("test loss (nats per character)")
    ax.legend()
    fig.tight_layout()
    return fig
