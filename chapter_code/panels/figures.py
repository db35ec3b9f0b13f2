"""Static figures of the interactive panels: what the PDF prints and a reader without
JavaScript sees.

Each figure draws the same computation as its panel, from the same data
(:mod:`chapter_code.panels.data`): the one-unit RNN's three cases, the two
truncation lanes at their last beat, the LSTM gates' beats side by side, the
forget-gate power at the beats' biases, the keep dial's parts against u, and
the sampling explorer's three rules at the beats' temperatures.

Pages: "Gradients through time", "Gated memory: LSTM and GRU" and "Generating text",
through the ``book-panel`` directive of :mod:`bookbuild.site.panels`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from chapter_code.bptt.figures import plot_one_unit
from chapter_code.bptt.gradients import one_unit_gradient
from chapter_code.core.plotting import COLORS, figure_png, use_book_style
from chapter_code.gated.figures import plot_forget_power, plot_keep_dial
from chapter_code.gated.gates import forget_power
from chapter_code.panels.data import (
    DIAL_BEATS,
    DIAL_CANDIDATE,
    DIAL_OLD,
    FORGET_BEATS,
    FORGET_STEPS,
    ONE_UNIT_CASES,
    ONE_UNIT_STEPS,
    PANELS,
    SAMPLING_BEATS,
    TRUNC_CUT,
    TRUNC_MARKED,
    TRUNC_STEPS,
    crossing,
    lstm_gate_states,
)
from chapter_code.sampling.explorer import (
    EXPLORER_LOGITS,
    EXPLORER_TOKENS,
    explorer_data,
)

GRADIENT = "#882255"  # wine: the gradient, as in the panel


def truncation_figure() -> Figure:
    """Two lanes: where the marked input's value reaches (shaded), where the last loss's
    gradient reaches (ringed).
    """
    use_book_style()
    n, cut, marked = TRUNC_STEPS, TRUNC_CUT, TRUNC_MARKED
    lanes = crossing(n, cut, marked, loss_at=n)
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    for row, (lane, name) in enumerate(
        [("carry", "carried, detached"), ("reset", "reset to zero")]
    ):
        y = 1 - row
        ax.text(0.4, y + 0.3, name, fontsize=11, fontweight="bold")
        for t in range(1, n + 1):
            shaded = t in lanes[lane]["value"]
            ringed = t in lanes[lane]["gradient"]
            ax.scatter(
                [t],
                [y],
                s=520,
                c=COLORS["other"] if shaded else "white",
                edgecolors=GRADIENT if ringed else "#595959",
                linewidths=3 if ringed else 1.2,
                zorder=3,
            )
            ax.text(t, y, f"$h_{t}$", ha="center", va="center", fontsize=10, zorder=4)
        crosses = max(lanes[lane]["value"]) > cut
        ax.text(
            cut + 0.55,
            y - 0.3,
            f"value {'crosses' if crosses else 'stops'}; gradient stops",
            fontsize=10,
        )
    ax.axvline(cut + 0.5, color="black", ls="--", lw=1)
    ax.text(marked, -0.55, f"$x_{marked}$ changed", ha="center", fontsize=10)
    ax.text(n, -0.55, f"loss at step {n}", ha="center", fontsize=10, color=GRADIENT)
    ax.set_xlim(0.3, n + 0.7)
    ax.set_ylim(-0.75, 1.5)
    ax.axis("off")
    fig.tight_layout()
    return fig


def lstm_gates_figure() -> Figure:
    """Per step: the three gate openings (bars) and the cell and hidden values they
    produce (lines).
    """
    use_book_style()
    states = lstm_gate_states()
    steps = range(1, len(states) + 1)
    fig, ax = plt.subplots(figsize=(6.4, 3.8), layout="constrained")
    width = 0.22
    for j, (gate, shade) in enumerate(
        [("f", "#9ecae1"), ("i", "#4292c6"), ("o", "#08306b")]
    ):
        ax.bar(
            [t + (j - 1) * width for t in steps],
            [s[gate] for s in states],
            width,
            color=shade,
            label=f"gate ${gate}_t$",
        )
    ax.plot(
        steps,
        [s["c"] for s in states],
        "o-",
        color=COLORS["rnn"],
        lw=2,
        label="cell $c_t$",
    )
    ax.plot(
        steps,
        [s["h"] for s in states],
        "s--",
        color=COLORS["gru"],
        lw=2,
        label="hidden $h_t$",
    )
    ax.axhline(0, color="#595959", lw=0.8)
    ax.set_xticks(list(steps))
    ax.set_xlabel("step (beat of the panel)")
    ax.set_ylabel("value")
    fig.legend(loc="outside upper center", ncol=5, handlelength=1.5, columnspacing=0.8)
    return fig


def sampling_figure() -> Figure:
    """The panel's last three beats side by side: rows are temperatures, columns
    softmax, top-k and the nucleus.

    Hollow bars: softmax(z / tau) before the cut; filled bars: the renormalised
    distribution that is sampled.
    """
    use_book_style()
    temperatures = sorted({t for t, _, _ in SAMPLING_BEATS[-3:]})
    (k,), (p,) = (
        {s[1] for s in SAMPLING_BEATS[-3:]},
        {s[2] for s in SAMPLING_BEATS[-3:]},
    )
    data = explorer_data(
        EXPLORER_LOGITS, EXPLORER_TOKENS, temperatures=temperatures, ks=[k], ps=[p]
    )
    slots = range(len(EXPLORER_TOKENS))
    fig, axes = plt.subplots(
        len(temperatures), 3, figsize=(6.4, 5.6), sharex=True, sharey=True
    )
    for row, tau in enumerate(temperatures):
        before = data["temperature"][row]
        columns = [
            ("softmax(z / $\\tau$)", before),
            (f"top-k, k = {k}", data["top_k"][row][0]),
            (f"nucleus, p = {p:g}", data["nucleus"][row][0]),
        ]
        for col, (title, dist) in enumerate(columns):
            ax = axes[row][col]
            if col:
                ax.bar(
                    slots,
                    before,
                    0.8,
                    fill=False,
                    edgecolor="#595959",
                    linestyle="--",
                    linewidth=0.8,
                )
            ax.bar(slots, dist, 0.55, color=COLORS["lstm"])
            kept = sum(q > 0 for q in dist)
            ax.set_title(
                f"{title}: {kept} kept" if col else f"$\\tau$ = {tau:g}: {title}",
                fontsize=10,
            )
            ax.set_ylim(0, 1)
        axes[row][0].set_ylabel("probability")
    for ax in axes[-1]:
        ax.set_xticks(list(slots), list(EXPLORER_TOKENS))
        ax.set_xlabel("token")
    fig.tight_layout()
    return fig


def static_figure(name: str) -> Figure:
    """The static figure of panel ``name``."""
    if name not in PANELS:
        raise ValueError(f"name must be one of {sorted(PANELS)}; got {name!r}")
    if name == "one-unit":
        traces = [one_unit_gradient(w, x, ONE_UNIT_STEPS) for w, x in ONE_UNIT_CASES]
        return plot_one_unit(traces, [COLORS["lstm"], COLORS["rnn"], COLORS["gru"]])
    if name == "truncation-lanes":
        return truncation_figure()
    if name == "lstm-gates":
        return lstm_gates_figure()
    if name == "forget-power":
        return plot_forget_power(FORGET_BEATS, forget_power(FORGET_BEATS, FORGET_STEPS))
    if name == "sampling-explorer":
        return sampling_figure()
    return plot_keep_dial(DIAL_OLD, DIAL_CANDIDATE, DIAL_BEATS[-1])


def write_static_figure(
    name: str, path: Path, check: Callable[[Figure], None] | None = None
) -> Path:
    """Draw panel ``name``'s static figure and write it as the book's PNG (see
    :func:`figure_png`) to ``path``; ``check``, if given, sees the drawn figure first
    (the build's layout check raises there, and nothing is written).
    """
    fig = static_figure(name)
    try:
        if check is not None:
            check(fig)
        data, _ = figure_png(fig)
    finally:
        plt.close(fig)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
    return path
