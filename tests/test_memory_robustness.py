"""Tests for chapter_code.memory_robustness: one job of the memory test's robustness sweep."""

from __future__ import annotations

import dataclasses

from chapter_code.memory_robustness import recall_metrics
from chapter_code.memory_task import CONTENDERS, RecallConfig, first_epoch_at, train_recall

TINY = RecallConfig(lag=5, n_train=64, n_test=32, batch_size=32, epochs=3, hidden_size=8)


def test_job_returns_the_runs_numbers_as_plain_json() -> None:
    contender = CONTENDERS[2]
    metrics = recall_metrics(seed=3, contender=dataclasses.asdict(contender), recipe=dataclasses.asdict(TINY))
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

