"""One job of the memory test's robustness sweep: a (contender, seed) run reduced to
plain metrics.

The sweep (``bookbuild.runs.registry.MEMORY_ROBUSTNESS``) trains each contender of
:mod:`chapter_code.gated.memory_task` over many seeds with the chapter's recipe; a
job returns numbers only, so its record is small JSON and a chapter can count
solved runs and put a confidence interval on the solve rate. The weights are
not kept; :mod:`chapter_code.core.proportions` turns the records into solve rates
with confidence intervals.

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
    seed: int, contender: Contender, recipe: RecallConfig
) -> dict[str, Any]:
    """Train ``contender`` with ``recipe``.

    Returns the test accuracy after the last epoch, the epochs trained, the
    epoch at which test accuracy first reached the recipe's ``solved_at`` (or ``None``),
    the test accuracy after every epoch, and the input-gradient norm at birth.
    Wall time is measured and recorded by the runner, beside these metrics.
    """
    run, _ = train_recall(contender, seed, recipe)
    return {
        "final_accuracy": run.accuracy,
        "epochs": run.epochs,
        "solved_epoch": first_epoch_at(run.history, recipe.solved_at),
        "history": run.history,
        "birth": run.birth,
    }
