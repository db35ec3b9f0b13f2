"""The figures of "Gated memory: LSTM and GRU": cell diagrams and the plots of the
chapter's measurements.

Kept apart from the code they draw (:mod:`chapter_code.gated.gates`,
:mod:`chapter_code.gated.memory_task`), so that a change to a figure never changes
the key of a memoized training or the code hash of an experiment record.

Pages: "Gated memory: LSTM and GRU".
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure

from chapter_code.core.plotting import COLORS, use_book_style
from chapter_code.gated.gates import GATE_ORDER, keep_dial


def plot_output_gate_demo(
    gates: torch.Tensor, cells: torch.Tensor, hiddens: torch.Tensor
) -> Figure:
    """Cell state and hidden state per step while the output gate is moved (from
    :func:`output_gate_demo`).
    """
    use_book_style()
    steps = torch.arange(1, len(gates) + 1)
    fig, ax = plt.subplots(figsize=(6.2, 3.8), layout="constrained")
    ax.step(
        steps,
        cells,
        where="mid",
        color=COLORS["lstm"],
        lw=2.2,
        label="cell state $c_t$",
    )
    ax.step(
        steps,
        hiddens,
        where="mid",
        color=COLORS["other"],
        lw=2.2,
        ls="--",
        label="hidden state $h_t$",
    )
    ax.step(
        steps,
        gates,
        where="mid",
        color=COLORS["bound"],
        lw=1.2,
        ls=":",
        label="output gate $o_t$",
    )
    ax.set_xlabel("step $t$")
    ax.set_ylabel("value")
    ax.set_ylim(-0.05, 1.1)
    ax.set_xticks([1, *range(5, len(gates) + 1, 5)])
    # Above the axes: inside, any corner of this plot holds a line.
    fig.legend(loc="outside upper center", ncol=3, handlelength=1.8, columnspacing=1.0)
    return fig


def plot_forget_power(biases: list[float], powers: torch.Tensor) -> Figure:
    """``sigmoid(b)**k`` against k on a log axis, one line per bias (from
    :func:`forget_power`).
    """
    use_book_style()
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    steps = torch.arange(1, powers.shape[1] + 1)
    shades = plt.get_cmap("Blues")(torch.linspace(0.35, 1.0, len(biases)).tolist())
    for b, row, shade in zip(biases, powers, shades, strict=True):
        ax.semilogy(
            steps,
            row,
            color=shade,
            lw=2,
            label=f"$b_f = {b:+g}$, $f = {torch.sigmoid(torch.tensor(b)):.3f}$",
        )
    ax.set_xlabel("steps $k$ along the direct path")
    ax.set_ylabel("surviving factor $f^k$")
    ax.legend(loc="lower left")
    fig.tight_layout()
    return fig


def plot_grad_vs_lag(
    lags: list[int], curves: dict[str, tuple[list[float], str]]
) -> Figure:
    """Gradient norm at the first input against lag, log scale; ``curves`` maps label ->
    (norms, colour).
    """
    use_book_style()
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    for label, (norms, color) in curves.items():
        ax.semilogy(lags, norms, "o-", ms=4, color=color, label=label)
    ax.set_xlabel("lag $T$ between the last output and the first input (steps)")
    ax.set_ylabel(r"$\|\partial\, \mathrm{output}_T / \partial x_1\|$")
    ax.legend()
    fig.tight_layout()
    return fig


def plot_keep_dial(
    h_prev: float, candidate: float, marked: float, n: int = 101
) -> Figure:
    """The parts of :func:`keep_dial` against the keep value ``u`` in [0, 1], with ``u =
    marked`` labelled.
    """
    if n < 2:
        raise ValueError(f"n must be >= 2; got {n}")
    use_book_style()
    keeps = [k / (n - 1) for k in range(n)]
    parts = [keep_dial(h_prev, candidate, k) for k in keeps]
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    ax.plot(
        keeps,
        [p[0] for p in parts],
        "--",
        color=COLORS["gru"],
        lw=1.5,
        label=r"kept, $u\,h_{t-1}$",
    )
    ax.plot(
        keeps,
        [p[1] for p in parts],
        ":",
        color=COLORS["rnn"],
        lw=2,
        label=r"written, $(1-u)\,\tilde h_t$",
    )
    ax.plot(
        keeps,
        [p[2] for p in parts],
        "-",
        color=COLORS["lstm"],
        lw=2.5,
        label=r"new state $h_t$",
    )
    kept, written, new = keep_dial(h_prev, candidate, marked)
    ax.plot([marked], [new], "o", color=COLORS["lstm"], ms=7)
    ax.annotate(
        f"$u = {marked:g}$: {kept:.2f} + {written:.2f} = {new:.2f}",
        (marked, new),
        xytext=(10, -22),
        textcoords="offset points",
    )
    ax.axhline(h_prev, color=COLORS["bound"], lw=0.8, ls="-.")
    ax.axhline(candidate, color=COLORS["bound"], lw=0.8, ls="-.")
    ax.set_xlabel(r"keep value $u_t$ of the update gate")
    ax.set_ylabel("value in one unit")
    ax.set_xlim(0, 1)
    ax.legend(loc="upper left")
    fig.tight_layout()
    return fig


def _box(
    ax: plt.Axes,
    x: float,
    y: float,
    text: str,
    color: str,
    w: float = 0.9,
    h: float = 0.6,
) -> None:
    """A labelled layer box centred at (x, y)."""
    from matplotlib.patches import FancyBboxPatch

    # a light tint, so black text on it reads at full contrast
    ax.add_patch(
        FancyBboxPatch(
            (x - w / 2, y - h / 2),
            w,
            h,
            boxstyle="round,pad=0.05",
            fc=color,
            ec=color,
            lw=2,
            alpha=0.3,
        )
    )
    ax.text(x, y, text, ha="center", va="center", fontsize=12.5, color="black")


def _op(ax: plt.Axes, x: float, y: float, text: str) -> None:
    """A pointwise operation (a circle with its symbol) centred at (x, y)."""
    from matplotlib.patches import Circle

    wide = "tanh" in text
    ax.add_patch(
        Circle((x, y), 0.45 if wide else 0.3, fc="white", ec="black", lw=1, zorder=3)
    )
    ax.text(x, y, text, ha="center", va="center", fontsize=12.5, zorder=4)


def _arrow(
    ax: plt.Axes, start: tuple[float, float], end: tuple[float, float], **style: object
) -> None:
    ax.annotate(
        "",
        xy=end,
        xytext=start,
        arrowprops={"arrowstyle": "->", "lw": 1.2, "color": "black", **style},
    )


def draw_cell_diagram(cell: str) -> Figure:
    """A schematic of one step of an LSTM (``cell='lstm'``) or GRU (``cell='gru'``)
    cell.

    Boxes are the learned layers (sigmoid gates and the tanh candidate), circles
    the pointwise operations; the top line carries the state that the gates
    keep or overwrite: the cell state $c$ for the LSTM, $h$ itself for the GRU.
    """
    if cell not in GATE_ORDER:
        raise ValueError(f"cell must be one of {sorted(GATE_ORDER)}; got {cell!r}")
    use_book_style()
    # the book's figure width, its type at the style's sizes (the phone test reads it)
    fig, ax = plt.subplots(figsize=(6.4, 3.1))
    gate_color, cand_color = (
        COLORS["lstm"] if cell == "lstm" else COLORS["gru"],
        COLORS["rnn"],
    )
    # the input bus: [x_t, h_{t-1}]
    ax.plot([0.4, 9.6], [1.0, 1.0], color="black", lw=1)
    ax.text(0.3, 1.0, "$h_{t-1}$", ha="right", va="center", fontsize=12.5)
    ax.text(5.0, 0.2, "$x_t$", ha="center", va="center", fontsize=12.5)
    _arrow(ax, (5.0, 0.4), (5.0, 0.95))
    if cell == "lstm":
        ax.plot([0.4, 9.6], [4.0, 4.0], color="black", lw=2)  # the cell-state line
        ax.text(0.3, 4.0, "$c_{t-1}$", ha="right", va="center", fontsize=12.5)
        ax.text(9.7, 4.0, "$c_t$", ha="left", va="center", fontsize=12.5)
        blocks = [
            (2.0, r"$f_t$: $\sigma$", gate_color),
            (3.6, r"$i_t$: $\sigma$", gate_color),
            (5.2, r"$g_t$: $\tanh$", cand_color),
            (7.0, r"$o_t$: $\sigma$", gate_color),
        ]
        for x, label, color in blocks:
            _arrow(ax, (x, 1.0), (x, 1.7))
            _box(ax, x, 2.0, label, color, w=1.38)
        _op(ax, 2.0, 4.0, r"$\times$")
        _arrow(ax, (2.0, 2.3), (2.0, 3.75))
        _op(ax, 4.4, 3.2, r"$\times$")
        _arrow(ax, (3.6, 2.3), (4.2, 3.05))
        _arrow(ax, (5.2, 2.3), (4.6, 3.05))
        _op(ax, 4.4, 4.0, "+")
        _arrow(ax, (4.4, 3.45), (4.4, 3.75))
        _op(ax, 8.2, 3.2, r"$\tanh$")
        _arrow(ax, (8.2, 4.0), (8.2, 3.45))
        _op(ax, 8.2, 2.0, r"$\times$")
        _arrow(ax, (8.2, 2.95), (8.2, 2.25))
        _arrow(ax, (7.6, 2.0), (7.95, 2.0))
        _arrow(ax, (8.45, 2.0), (9.6, 2.0))
        ax.text(9.7, 2.0, "$h_t$", ha="left", va="center", fontsize=12.5)
        ax.set_title("One LSTM step", fontsize=13)
    else:
        ax.plot([0.4, 9.6], [4.0, 4.0], color="black", lw=2)  # the state line
        ax.text(0.3, 4.0, "$h_{t-1}$", ha="right", va="center", fontsize=12.5)
        ax.text(9.7, 4.0, "$h_t$", ha="left", va="center", fontsize=12.5)
        for x, label, color in [
            (2.0, r"$u_t$: $\sigma$", gate_color),
            (3.7, r"$r_t$: $\sigma$", gate_color),
            (6.6, r"$\tilde h_t$: $\tanh$", cand_color),
        ]:
            _box(ax, x, 2.0, label, color, w=1.3)
            _arrow(ax, (x, 1.0), (x, 1.7))
        # reset applied to the old state the candidate reads
        _op(ax, 5.2, 2.0, r"$\times$")
        _arrow(ax, (4.35, 2.0), (4.95, 2.0))
        _arrow(ax, (5.2, 4.0), (5.2, 2.25))
        _arrow(ax, (5.45, 2.0), (5.95, 2.0))
        _op(ax, 2.0, 4.0, r"$\times$")
        _arrow(ax, (2.0, 2.3), (2.0, 3.75))
        ax.text(2.15, 3.0, "$u_t$", fontsize=12.5)
        _op(ax, 7.8, 3.2, r"$\times$")
        _arrow(ax, (6.6, 2.3), (7.6, 3.05))
        _arrow(ax, (2.5, 2.3), (7.55, 3.2), ls="--")
        ax.text(3.3, 2.9, "$1 - u_t$", fontsize=12.5)
        _op(ax, 7.8, 4.0, "+")
        _arrow(ax, (7.8, 3.45), (7.8, 3.75))
        ax.set_title("One GRU step", fontsize=13)
    ax.set_xlim(-0.6, 10.4)
    ax.set_ylim(0, 4.6)
    ax.set_aspect("equal")  # circles stay round
    ax.set_axis_off()
    fig.tight_layout()
    return fig


def plot_forget_traces(traces: dict[str, tuple[list[float], str]]) -> Figure:
    """Mean forget gate per step for each trained LSTM; ``traces`` maps label -> (means,
    colour).
    """
    use_book_style()
    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    for label, (means, color) in traces.items():
        ax.plot(range(1, len(means) + 1), means, color=color, lw=2, label=label)
    ax.axhline(0.5, ls=":", color=COLORS["bound"], label=r"$\sigma(0) = 1/2$")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("step $t$ of the probe sequence")
    ax.set_ylabel("mean forget gate $f_t$")
    ax.legend(loc="lower right")
    fig.tight_layout()
    return fig
