"""The figures of "Gradients through time": gradient against lag, and the one-unit RNN's
products and bounds.

Kept apart from :mod:`chapter_code.bptt.gradients`, so that a change to a figure
never changes the key of a memoized training that uses the gradient code.

Pages: "Gradients through time", "Gated memory: LSTM and GRU".
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator

from chapter_code.bptt.gradients import OneUnitTrace
from chapter_code.core.plotting import COLORS, use_book_style


def plot_lag_curves(
    lags: Sequence[int],
    curves: dict[str, tuple[list[float], str]],
    ylabel: str,
    xlabel: str = "lag $T$ (steps between the last output and the first input)",
) -> Figure:
    """Semi-log plot of one or more gradient-norm curves against the lag; ``curves``
    maps label to (values, colour).
    """
    use_book_style()
    fig, ax = plt.subplots(figsize=(6.4, 3.3))
    for label, (values, color) in curves.items():
        dashed = color == COLORS["bound"]
        ax.semilogy(
            lags, values, "--" if dashed else "o-", color=color, label=label, ms=4
        )
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend()
    fig.tight_layout()
    return fig


def plot_one_unit(traces: Sequence[OneUnitTrace], colors: Sequence[str]) -> Figure:
    """Measured |dh_T/dh_s| (solid) and the bound |w|^(T-s) (dashed) against distance,
    one colour per (w, x).
    """
    if len(traces) != len(colors):
        raise ValueError(
            f"need one colour per trace; got {len(traces)} traces and {len(colors)} "
            "colours"
        )
    use_book_style()
    fig, ax = plt.subplots(figsize=(6.2, 4.8), layout="constrained")
    for trace, color in zip(traces, colors, strict=True):
        # A wide pale band: the bound drawn on top of it stays visible where the two
        # coincide (x = 0).
        ax.semilogy(
            range(len(trace.products)),
            trace.products,
            "-",
            color=color,
            lw=4.5,
            alpha=0.45,
            solid_capstyle="butt",
            label=f"measured, $w$ = {trace.w:g}, $x$ = {trace.x:g}",
        )
    bound_colors: dict[float, str] = {}
    # one dashed bound per |w|, in its first trace's colour
    for trace, color in zip(traces, colors, strict=True):
        bound_colors.setdefault(abs(trace.w), color)
    for w, color in bound_colors.items():
        bounds = next(t.bounds for t in traces if abs(t.w) == w)
        ax.semilogy(range(len(bounds)), bounds, "--", color=color, lw=1.4)
        # names the bound at its end
        ax.annotate(
            f"$|w|$ = {w:g}",
            (len(bounds) - 1, bounds[-1]),
            xytext=(5, 0),
            textcoords="offset points",
            ha="left",
            va="center",
            color=color,
            annotation_clip=False,
        )
    ax.plot(
        [], [], "--", color=COLORS["bound"], lw=1.4, label="bound $|w|^{T-s}$ (dashed)"
    )
    # The axis spans every value drawn, so no curve is cut off at an arbitrary floor.
    values = [v for t in traces for v in (*t.products, *t.bounds) if v > 0]
    low, high = min(values) / 30, max(values) * 30
    ax.set_ylim(low, high)
    ax.set_yticks([10.0**k for k in range(-300, 301, 20) if low <= 10.0**k <= high])
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("distance $T - s$ (steps back)")
    ax.set_ylabel(r"$|\partial h_T / \partial h_s|$")
    fig.legend(loc="outside lower center", ncol=2, handlelength=2.2, columnspacing=1.2)
    return fig
