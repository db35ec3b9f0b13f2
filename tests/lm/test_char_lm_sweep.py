"""Tests for chapter_code.lm.char_lm_sweep: the sweep job returns plain, reproducible
metrics.

Tests for chapter_code.lm.char_lm_sweep: every metric of a tiny job against the same
numbers computed here from its trained model, and the seed passed through.
"""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from chapter_code.lm.char_lm import TrainConfig, streaming_loss
from chapter_code.lm.char_lm_sweep import char_lm_metrics
from chapter_code.lm.char_models import (
    CPU,
    WORKSHOP,
    LMRecipe,
    corpus_splits,
    count_parameters,
    load_char_lm,
    train_char_lm,
)
from chapter_code.lm.comparison import fixed_window_logits
from chapter_code.lm.perplexity import lm_loss_and_ppl


def test_recipes_round_trip_through_a_jobs_parameters() -> None:
    """A sweep stores a recipe as memo.canonical writes it; the runner builds it again
    with the codec."""
    from bookbuild.runs import codec, memo

    types = codec.classes("chapter_code.lm.char_lm_sweep:char_lm_metrics")
    for recipe in (*WORKSHOP.values(), *CPU.values()):
        assert codec.from_canonical(memo.canonical(recipe), types) == recipe
    with pytest.raises(TypeError, match="dropout"):
        codec.from_canonical({**memo.canonical(CPU["rnn"]), "dropout": 0.1}, types)


def test_a_tiny_job_returns_json_ready_metrics_in_consistent_units() -> None:
    tiny = LMRecipe(
        "rnn",
        8,
        TrainConfig(window=16, batch_size=4, steps=4, log_every=2),
        embedding_size=4,
    )
    metrics = char_lm_metrics(seed=1, corpus="book-prose", recipe=tiny)
    assert json.loads(json.dumps(metrics)) == metrics
    assert metrics["test_perplexity"] == pytest.approx(math.exp(metrics["test_nats"]))
    assert metrics["test_bits"] == pytest.approx(metrics["test_nats"] / math.log(2))
    assert metrics["steps"] == 4
    assert len(metrics["train_curve"]) == 2
    again = char_lm_metrics(seed=1, corpus="book-prose", recipe=tiny)
    assert again == metrics


def test_the_workshop_sweep_defines_the_full_recipe_and_a_tiny_smoke_run() -> None:
    from bookbuild.runs.registry import SWEEPS
    from chapter_code.lm.char_models import WORKSHOP

    sweep = SWEEPS["char-lm-workshop"]
    full = sweep.configs["full-size"]
    assert {name: job["recipe"] for name, job in full.jobs.items()} == WORKSHOP
    smoke = {name: job["recipe"] for name, job in sweep.configs["smoke"].jobs.items()}
    assert all(r.train.steps <= 5 and r.hidden_size <= 16 for r in smoke.values())
    assert sweep.data == ("data/shakespeare.txt",)


TINY = LMRecipe(
    "rnn",
    8,
    TrainConfig(window=16, batch_size=4, steps=2, log_every=1),
    embedding_size=4,
)


def test_every_metric_is_the_trained_models_own_number() -> None:
    metrics = char_lm_metrics(seed=3, corpus="book-prose", recipe=TINY)
    model, vocab = load_char_lm(
        train_char_lm("book-prose", dataclasses.replace(TINY, seed=3))
    )
    splits = corpus_splits("book-prose")
    expected = {}
    for name, before, text in (
        ("valid", splits.train[-1], splits.valid),
        ("test", splits.valid[-1], splits.test),
    ):
        logits = fixed_window_logits(model, vocab.encode(before + text), 16)
        nats, ppl, bits = lm_loss_and_ppl(logits, vocab.encode(text))
        expected |= {
            f"{name}_nats": nats.item(),
            f"{name}_perplexity": ppl,
            f"{name}_bits": bits,
        }
    expected["test_streaming_nats"] = streaming_loss(
        model, vocab.encode(splits.test), 16
    )
    expected["parameters"] = count_parameters(model)
    assert set(metrics) == set(expected) | {"steps", "train_curve"}
    for key, value in expected.items():
        assert metrics[key] == pytest.approx(value, rel=1e-9), key
    assert metrics["valid_nats"] != metrics["test_nats"]


def test_the_seed_argument_is_the_one_trained_with() -> None:
    a = char_lm_metrics(seed=1, corpus="book-prose", recipe=TINY)
    b = char_lm_metrics(seed=2, corpus="book-prose", recipe=TINY)
    assert a["train_curve"] != b["train_curve"]
