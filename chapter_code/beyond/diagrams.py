"""The sketch of the doubling scan: which positions combine in which round.

Drawn at build time in the book's style (:mod:`chapter_code.core.plotting`).
:func:`scan_spans` is the bookkeeping the sketch draws: after the round with
offset d, position t holds the composition of steps max(1, t - 2d + 1) .. t,
the invariant of :func:`chapter_code.beyond.linear_scan.scan_linear`.

Pages: "Beyond the single carried state" draws :func:`draw_doubling_scan`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch

from chapter_code.core.arguments import positive_ints
from chapter_code.core.plotting import COLORS, use_book_style


def scan_spans(length: int) -> list[list[tuple[int, int]]]:
    """Per row (the inputs, then each round), the steps (first, last) each position
    1..length holds, 1-based.
    """
    positive_ints(length=length)
    rows = [[(t, t) for t in range(1, length + 1)]]
    offset = 1
    while offset < length:
        prev = rows[-1]
        rows.append(
            [
                prev[t - 1] if t <= offset else (prev[t - 1 - offset][0], t)
                for t in range(1, length + 1)
            ]
        )
        offset *= 2
    return rows


def draw_doubling_scan(length: int = 8) -> Figure:
    """Positions 1..length left to right, rounds top to bottom; an arrow for every
    combine of a round.
    """
    if isinstance(length, bool) or not isinstance(length, int) or not 2 <= length <= 16:
        raise ValueError(f"length must be an int in [2, 16]; got {length!r}")
    use_book_style()
    rows = scan_spans(length)
    fig, ax = plt.subplots(figsize=(1.0 + 0.75 * length, 1.2 + 1.1 * (len(rows) - 1)))
    for r, spans in enumerate(rows):
        y = -r
        for t, (first, last) in enumerate(spans, start=1):
            full = first == 1
            ax.text(
                t,
                y,
                f"{first}:{last}" if first != last else f"{t}",
                ha="center",
                va="center",
                fontsize=12.5,
                bbox={
                    "boxstyle": "round,pad=0.3",
                    "facecolor": COLORS["linear"] if full else "white",
                    "edgecolor": "black",
                    "alpha": 0.35 if full else 1.0,
                },
            )
        if r == 0:
            continue
        offset = 2 ** (r - 1)
        for t in range(1, length + 1):
            # combine: the pair ending at t - offset, then the one ending at t
            if t > offset:
                ax.add_patch(
                    FancyArrowPatch(
                        (t - offset, y + 0.78),
                        (t, y + 0.25),
                        arrowstyle="-|>",
                        mutation_scale=9,
                        linewidth=1.0,
                        color=COLORS["lstm"],
                    )
                )
            ax.add_patch(
                FancyArrowPatch(
                    (t, y + 0.78),
                    (t, y + 0.25),
                    arrowstyle="-",
                    linewidth=0.8,
                    color=COLORS["bound"],
                )
            )
        ax.text(
            0.2,
            y + 0.5,
            f"round {r}\noffset {offset}",
            ha="right",
            va="center",
            fontsize=12.5,
        )
    ax.text(0.2, 0, "steps", ha="right", va="center", fontsize=12.5)
    ax.set_xlim(-1.2, length + 0.6)
    ax.set_ylim(-len(rows) + 0.5, 0.5)
    ax.axis("off")
    return fig
