"""chapter_code.memory_robustness: the job's metrics carry every number under its name."""

from __future__ import annotations

import dataclasses

from chapter_code.memory_robustness import recall_metrics
from chapter_code.memory_task import CONTENDERS, RecallConfig, train_recall

TINY = RecallConfig(lag=4, n_train=32, n_test=16, batch_size=16, epochs=2, hidden_size=4)


def test_job_metrics_have_exactly_these_keys_and_the_birth_gradient() -> None:
    contender = CONTENDERS[0]
    metrics = recall_metrics(seed=1, contender=dataclasses.asdict(contender), recipe=dataclasses.asdict(TINY))
    run, _ = train_recall(contender, 1, TINY)
    assert set(metrics) == {"final_accuracy", "epochs", "solved_epoch", "history", "birth"}
    assert metrics["birth"] == run.birth
    assert metrics["final_accuracy"] == run.accuracy
