"""Figures of "Generating text": one distribution at several temperatures, and the
sampling explorer.

Drawing code only; the numbers come from :mod:`chapter_code.sampling.rules` (the
worked example) and :func:`chapter_code.sampling.explorer.explorer_data` (the
explorer), so a figure shows exactly what the tested functions compute.

Pages: "Generating text".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from chapter_code.core.plotting import use_book_style

#: one colour per setting, from light to dark (a sequence, not architectures)
SHADES = ("#56B4E9", "#0072B2", "#003F63")


def _grouped_bars(
    ax: Axes,
    tokens: Sequence[str],
    rows: Sequence[Sequence[float]],
    labels: Sequence[str],
) -> None:
    """One group of bars per token, one bar per row (setting)."""
    if len(rows) > len(SHADES):
        raise ValueError(f"at most {len(SHADES)} settings per panel; got {len(rows)}")
    width = 0.8 / len(rows)
    for j, (row, label) in enumerate(zip(rows, labels, strict=True)):
        offset = (j - (len(rows) - 1) / 2) * width
        ax.bar(
            [i + offset for i in range(len(tokens))],
            row,
            width=width,
            color=SHADES[j],
            label=label,
        )
    ax.set_xticks(range(len(tokens)), list(tokens))
    ax.set_ylim(0, 1)
    ax.set_ylabel("probability")


def plot_temperatures(
    tokens: Sequence[str],
    probs: Sequence[Sequence[float]],
    temperatures: Sequence[float],
) -> Figure:
    """The distribution over ``tokens`` at each temperature (``probs[i]`` at
    ``temperatures[i]``), as grouped bars.
    """
    if len(probs) != len(temperatures) or not probs:
        raise ValueError("probs must hold one distribution per temperature")
    use_book_style()
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    _grouped_bars(ax, tokens, probs, [f"$\\tau$ = {t:g}" for t in temperatures])
    ax.set_xlabel("token (logit)")
    ax.legend()
    fig.tight_layout()
    return fig


def plot_explorer(data: dict[str, Any], temperature_index: int = 1) -> Figure:
    """Three panels from :func:`~chapter_code.sampling.explorer.explorer_data`:
    temperature, top-k, nucleus.

    The top-k and nucleus panels are drawn at
    ``data["temperatures"][temperature_index]``.
    """
    if not 0 <= temperature_index < len(data["temperatures"]):
        raise ValueError(
            f"temperature_index must be in [0, {len(data['temperatures'])}); got "
            f"{temperature_index!r}"
        )
    use_book_style()
    tokens = [
        f"{t}\n{z:g}" for t, z in zip(data["tokens"], data["logits"], strict=True)
    ]
    tau = data["temperatures"][temperature_index]
    fig, axes = plt.subplots(3, 1, figsize=(6.4, 8.4), sharex=True)
    panels = [
        (
            data["temperature"],
            [f"$\\tau$ = {t:g}" for t in data["temperatures"]],
            "temperature",
        ),
        (
            data["top_k"][temperature_index],
            [f"k = {k}" for k in data["ks"]],
            f"top-k at $\\tau$ = {tau:g}",
        ),
        (
            data["nucleus"][temperature_index],
            [f"p = {p:g}" for p in data["ps"]],
            f"nucleus at $\\tau$ = {tau:g}",
        ),
    ]
    for ax, (rows, labels, title) in zip(axes, panels, strict=True):
        _grouped_bars(ax, tokens, rows, labels)
        ax.set_title(title)
        ax.legend(loc="upper right")
    axes[-1].set_xlabel("token and its logit")
    fig.tight_layout()
    return fig


def plot_kept_counts(kept: Sequence[int], k: int, p: float) -> Figure:
    """Histogram of how many tokens the nucleus keeps at each position, with top-``k``'s
    constant count marked.
    """
    if len(kept) == 0:
        raise ValueError("kept must hold at least one position")
    use_book_style()
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    top = max(max(kept), k)
    shares = [
        sum(1 for n in kept if n == size) / len(kept) for size in range(1, top + 1)
    ]
    ax.bar(
        range(1, top + 1),
        shares,
        width=0.8,
        color=SHADES[1],
        label=f"nucleus, p = {p:g}",
    )
    ax.axvline(
        k, color="#D55E00", linestyle="--", label=f"top-k, k = {k} (every position)"
    )
    ax.set_xlabel("tokens kept at a position")
    ax.set_ylabel("share of positions")
    ax.legend()
    fig.tight_layout()
    return fig
