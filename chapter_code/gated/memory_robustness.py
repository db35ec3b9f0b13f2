"""One job of the memory test's robustness sweep: a (contender, seed) run reduced to
plain metrics.

The sweep (``bookbuild.runs.registry.MEMORY_ROBUSTNESS``) trains each contender of
:mod:`chapter_code.gated.memory_task` over many seeds with the chapter's recipe; a
job returns numbers only, so its record is small JSON and a chapter can count
solved runs and put a confidence interval on the solve rate. The weights are
not kept; :mod:`chapter_code.core.proportions` turns the records into solve rates
with confidence intervals. Everything this module imports is part of each
record's code hash, so the summary lives there, where editing it stales nothing.

Pages: "Gated memory: LSTM and GRU" (the robustness of the memory test).
"""

from __future__ import annotations

from typing import Any

from chapter_code.gated.memory_task import (
    Contender,
    RecallConfig,
    first_epoch_at,
    train_recall,
)


def recall_metrics(
    seed: int, contender: dict[str, Any], recipe: dict[str, Any]
) -> dict[str, Any]:
    """Train ``contender`` (fields of :class:`Contender`) with ``recipe`` (fields of
    :class:`RecallConfig`).

    Returns the test accuracy after the last epoch, the epochs trained, the
    epoch at which test accuracy first reached the recipe's ``solved_at`` (or ``None``),
    the test accuracy after every epoch, and the input-gradient norm at birth.
    Wall time is measured and recorded by the runner, beside these metrics.
    """
    config = RecallConfig(**recipe)
    run, _ = train_recall(Contender(**contender), seed, config)
    return {
        "final_accuracy": run.accuracy,
        "epochs": run.epochs,
        "solved_epoch": first_epoch_at(run.history, config.solved_at),
        "history": run.history,
        "birth": run.birth,
    }
