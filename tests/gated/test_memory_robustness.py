"""Tests for chapter_code.gated.memory_robustness: one job of the memory test's
robustness sweep.

chapter_code.gated.memory_robustness: the job's metrics carry every number under its
name.
"""

from __future__ import annotations

from chapter_code.gated.memory_robustness import recall_metrics
from chapter_code.gated.memory_task import (
    CONTENDERS,
    RecallConfig,
    first_epoch_at,
    train_recall,
)

TINY = RecallConfig(
    lag=5, n_train=64, n_test=32, batch_size=32, epochs=3, hidden_size=8
)


def test_job_returns_the_runs_numbers_as_plain_json() -> None:
    contender = CONTENDERS[2]
    metrics = recall_metrics(seed=3, contender=contender, recipe=TINY)
    run, _ = train_recall(contender, 3, TINY)
    assert metrics["history"] == run.history
    assert metrics["final_accuracy"] == run.history[-1]
    assert metrics["epochs"] == run.epochs
    assert metrics["solved_epoch"] == first_epoch_at(run.history, TINY.solved_at)
    assert all(type(v) in (int, float, list, type(None)) for v in metrics.values())


def test_first_epoch_at_counts_from_one() -> None:
    assert first_epoch_at([0.3, 0.91, 0.95], 0.9) == 2
    assert first_epoch_at([0.3, 0.5], 0.9) is None
    assert first_epoch_at([0.9], threshold=0.9) == 1


TINY_V = RecallConfig(
    lag=4, n_train=32, n_test=16, batch_size=16, epochs=2, hidden_size=4
)


def test_job_metrics_have_exactly_these_keys_and_the_birth_gradient() -> None:
    contender = CONTENDERS[0]
    metrics = recall_metrics(seed=1, contender=contender, recipe=TINY_V)
    run, _ = train_recall(contender, 1, TINY_V)
    assert set(metrics) == {
        "final_accuracy",
        "epochs",
        "solved_epoch",
        "history",
        "birth",
    }
    assert metrics["birth"] == run.birth
    assert metrics["final_accuracy"] == run.accuracy
