"""The diagram of "Recurrence": one cell whose state feeds back into itself, and the
same cell unrolled.

Drawn at build time in the book's style (:mod:`chapter_code.core.plotting`).

Pages: "Recurrence" draws :func:`draw_loop_and_unrolled`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from chapter_code.core.plotting import COLORS, use_book_style


def _box(
    ax: Axes,
    x: float,
    y: float,
    text: str,
    color: str,
    width: float = 0.9,
    height: float = 0.6,
) -> None:
    patch = FancyBboxPatch(
        (x - width / 2, y - height / 2),
        width,
        height,
        boxstyle="round,pad=0.04",
        facecolor=color,
        edgecolor="black",
        linewidth=1.0,
        alpha=0.9,
    )
    ax.add_patch(patch)
    ax.text(x, y, text, ha="center", va="center", fontsize=14)


def _arrow(
    ax: Axes, start: tuple[float, float], end: tuple[float, float], **kwargs: object
) -> None:
    ax.add_patch(
        FancyArrowPatch(
            start, end, arrowstyle="-|>", mutation_scale=12, linewidth=1.2, **kwargs
        )
    )


def draw_loop_and_unrolled(steps: int = 4) -> Figure:
    """Left: one cell whose state feeds back into itself. Right: the same cell copied
    ``steps`` times.
    """
    if not isinstance(steps, int) or not 2 <= steps <= 8:
        raise ValueError(f"steps must be an int in [2, 8]; got {steps!r}")
    use_book_style()
    fig, (left, right) = plt.subplots(
        1, 2, figsize=(7.6, 2.9), gridspec_kw={"width_ratios": [1.0, steps + 0.6]}
    )
    cell = COLORS["rnn"]
    # The loop: one cell, input below, state above, and an arc back into the cell.
    _box(left, 0.5, 1.0, "$f$", cell)
    _arrow(left, (0.5, 0.0), (0.5, 0.68))
    _arrow(left, (0.5, 1.32), (0.5, 2.0))
    left.text(0.5, -0.2, "$x_t$", ha="center", va="top")
    left.text(0.5, 2.1, "$h_t$", ha="center", va="bottom")
    _arrow(left, (0.97, 1.1), (0.97, 0.9), connectionstyle="arc3,rad=-2.6")
    left.text(1.45, 1.0, "$h_{t-1}$", ha="left", va="center")
    left.set_xlim(-0.3, 1.9)
    left.set_title("the loop")
    # The unrolled chain: the same cell at every step, state passed left to right.
    half = 0.3  # half the width of a cell box on the chain
    for t in range(1, steps + 1):
        _box(right, t, 1.0, "$f$", cell, width=2 * half)
        _arrow(right, (t, 0.0), (t, 0.68))
        _arrow(right, (t, 1.32), (t, 2.0))
        right.text(t, -0.2, f"$x_{t}$", ha="center", va="top")
        right.text(t, 2.1, f"$h_{t}$", ha="center", va="bottom")
        # state from the previous step
        _arrow(right, (t - 1 + half, 1.0), (t - half, 1.0))
    right.text(half - 0.05, 1.0, "$h_0$", ha="right", va="center")
    right.text(steps + 0.45, 1.0, "...", ha="left", va="center")
    right.set_xlim(-0.1, steps + 0.9)
    right.set_title("unrolled: one shared $f$ at every step")
    for ax in (left, right):
        ax.set_ylim(-0.6, 2.5)
        ax.set_aspect("equal")
        ax.axis("off")
    fig.tight_layout()
    return fig
