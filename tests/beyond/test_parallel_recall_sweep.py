"""Tests for chapter_code.beyond.parallel_recall_sweep: the input-gated run as a sweep's job."""

from __future__ import annotations

import dataclasses
import json

import pytest

from bookbuild.runs import sweeps
from chapter_code.beyond import parallel_recall_sweep
from chapter_code.beyond.parallel_recall import train_input_gated_recall
from chapter_code.beyond.parallel_recall_sweep import input_gated_metrics
from tests.beyond.test_parallel_recall import RECIPE


def test_the_job_is_the_chapters_run_with_the_recipe_from_plain_fields() -> None:
    params = json.loads(json.dumps(dataclasses.asdict(RECIPE)))
    metrics = input_gated_metrics(4, params)
    run = train_input_gated_recall(4, RECIPE)
    assert metrics["history"] == run["history"]
    assert metrics["accuracy"] == run["accuracy"]
    assert set(metrics) == {"accuracy", "history", "train_seconds"}
    assert sweeps.is_timing("train_seconds")  # the spot check does not compare it


def test_the_recipe_passes_through_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []
    monkeypatch.setattr(parallel_recall_sweep, "train_input_gated_recall",
                        lambda seed, config: seen.append((seed, config))
                        or {"accuracy": 0.5, "history": [0.5], "seconds": 2.0})
    assert input_gated_metrics(3, dataclasses.asdict(RECIPE)) == {"accuracy": 0.5, "history": [0.5],
                                                                  "train_seconds": 2.0}
    assert seen == [(3, RECIPE)]


def test_a_wrong_recipe_field_is_an_error() -> None:
    with pytest.raises(TypeError, match="lagg"):
        input_gated_metrics(0, {**dataclasses.asdict(RECIPE), "lagg": 3})
