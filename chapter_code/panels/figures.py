"""Static figures of the interactive panels: what the PDF prints and a reader without
JavaScript sees.

Each figure draws the same computation as its panel, from the same data, in the
panel's topic module: the one-unit RNN's three cases and the two truncation lanes
at their last beat (:mod:`chapter_code.bptt.panels`), the LSTM gates' beats side by
side, the forget-gate power at the beats' biases and the keep dial's parts against u
(:mod:`chapter_code.gated.panels`), and the sampling explorer's three rules at the
beats' temperatures (:mod:`chapter_code.sampling.panels`).

Pages: "Gradients through time", "Gated memory: LSTM and GRU" and "Generating text",
through the ``book-panel`` directive of :mod:`bookbuild.site.panels`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from chapter_code.bptt.panels import one_unit_figure, truncation_figure
from chapter_code.core.plotting import figure_png
from chapter_code.gated.panels import (
    forget_power_figure,
    keep_dial_figure,
    lstm_gates_figure,
)
from chapter_code.panels.data import PANELS
from chapter_code.sampling.panels import sampling_figure

FIGURES: dict[str, Callable[[], Figure]] = {
    "one-unit": one_unit_figure,
    "truncation-lanes": truncation_figure,
    "lstm-gates": lstm_gates_figure,
    "forget-power": forget_power_figure,
    "keep-dial": keep_dial_figure,
    "sampling-explorer": sampling_figure,
}


def static_figure(name: str) -> Figure:
    """The static figure of panel ``name``."""
    if name not in PANELS:
        raise ValueError(f"name must be one of {sorted(PANELS)}; got {name!r}")
    return FIGURES[name]()


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
