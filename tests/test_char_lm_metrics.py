"""Tests for chapter_code.char_lm_metrics: the sweep job returns plain, reproducible metrics."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from chapter_code.char_lm_metrics import char_lm_metrics, recipe_from_dict
from chapter_code.char_models import CPU, WORKSHOP, LMRecipe
from chapter_code.language_model import TrainConfig


def test_recipes_round_trip_through_plain_dicts() -> None:
    for recipe in (*WORKSHOP.values(), *CPU.values()):
        assert recipe_from_dict(dataclasses.asdict(recipe)) == recipe
    with pytest.raises(ValueError, match=r"unknown fields \['dropout'\]"):
        recipe_from_dict({**dataclasses.asdict(CPU["rnn"]), "dropout": 0.1})


def test_a_tiny_job_returns_json_ready_metrics_in_consistent_units() -> None:
    tiny = LMRecipe("rnn", 8, TrainConfig(window=16, batch_size=4, steps=4, log_every=2), embedding_size=4)
    metrics = char_lm_metrics(seed=1, corpus="book-prose", recipe=dataclasses.asdict(tiny))
    assert json.loads(json.dumps(metrics)) == metrics
    assert metrics["test_perplexity"] == pytest.approx(math.exp(metrics["test_nats"]))
    assert metrics["test_bits"] == pytest.approx(metrics["test_nats"] / math.log(2))
    assert metrics["steps"] == 4
    assert len(metrics["train_curve"]) == 2
    again = char_lm_metrics(seed=1, corpus="book-prose", recipe=dataclasses.asdict(tiny))
    assert again == metrics


def test_the_workshop_sweep_defines_the_full_recipe_and_a_tiny_smoke_run() -> None:
    from chapter_code.char_lm_metrics import recipe_from_dict
    from chapter_code.char_models import WORKSHOP
    from chapter_code.sweeps import SWEEPS

    sweep = SWEEPS["char-lm-workshop"]
    full = sweep.configs["cluster"]
    assert {name: recipe_from_dict(job["recipe"]) for name, job in full.jobs.items()} == WORKSHOP
    smoke = {name: recipe_from_dict(job["recipe"]) for name, job in sweep.configs["smoke"].jobs.items()}
    assert all(r.train.steps <= 5 and r.hidden_size <= 16 for r in smoke.values())
    assert sweep.data == ("data/shakespeare.txt",)
