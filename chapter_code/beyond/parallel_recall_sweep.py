"""The input-gated LSTM's memory-test run as the job of an experiment sweep.

:func:`chapter_code.beyond.parallel_recall.train_input_gated_recall` takes the
memory test's :class:`~chapter_code.gated.memory_task.RecallConfig` and already
returns plain numbers (accuracy after each epoch, wall time); a sweep's job takes
plain parameters, so :func:`input_gated_metrics` takes the recipe as the fields of
that configuration. The chapter reads its one seed from the ``input-gated-recall``
sweep's records (``bookbuild.runs.registry``), made ahead of the build.

Pages: "Beyond the single carried state" (the input-gated cell on the memory test).
"""

from __future__ import annotations

from typing import Any

from chapter_code.beyond.parallel_recall import train_input_gated_recall
from chapter_code.gated.memory_task import RecallConfig


def input_gated_metrics(seed: int, recipe: dict[str, Any]) -> dict[str, Any]:
    """Train the input-gated cell on the memory test with ``recipe`` (fields of
    :class:`RecallConfig`) and ``seed``: final test accuracy, the accuracy after
    every epoch, and the training's wall time (``train_seconds``: a measured time,
    which a re-run's check does not compare).
    """
    run = train_input_gated_recall(seed, RecallConfig(**recipe))
    return {
        "accuracy": run["accuracy"],
        "history": run["history"],
        "train_seconds": run["seconds"],
    }
