"""Tests for chapter_code.char_lm_metrics: every metric of a tiny job against the same
numbers computed here from its trained model, and the seed passed through."""

from __future__ import annotations

import dataclasses

import pytest

from chapter_code.char_lm_metrics import char_lm_metrics
from chapter_code.char_models import LMRecipe, corpus_splits, count_parameters, load_char_lm, train_char_lm
from chapter_code.comparison import fixed_window_logits
from chapter_code.language_model import TrainConfig, streaming_loss
from chapter_code.lm import lm_loss_and_ppl

TINY = LMRecipe("rnn", 8, TrainConfig(window=16, batch_size=4, steps=2, log_every=1), embedding_size=4)


def test_every_metric_is_the_trained_models_own_number() -> None:
    metrics = char_lm_metrics(seed=3, corpus="book-prose", recipe=dataclasses.asdict(TINY))
    model, vocab = load_char_lm(train_char_lm("book-prose", dataclasses.replace(TINY, seed=3)))
    splits = corpus_splits("book-prose")
    expected = {}
    for name, before, text in (("valid", splits.train[-1], splits.valid), ("test", splits.valid[-1], splits.test)):
        logits = fixed_window_logits(model, vocab.encode(before + text), 16)
        nats, ppl, bits = lm_loss_and_ppl(logits, vocab.encode(text))
        expected |= {f"{name}_nats": nats.item(), f"{name}_perplexity": ppl, f"{name}_bits": bits}
    expected["test_streaming_nats"] = streaming_loss(model, vocab.encode(splits.test), 16)
    expected["parameters"] = count_parameters(model)
    assert set(metrics) == set(expected) | {"steps", "train_curve"}
    for key, value in expected.items():
        assert metrics[key] == pytest.approx(value, rel=1e-9), key
    assert metrics["valid_nats"] != metrics["test_nats"]


def test_the_seed_argument_is_the_one_trained_with() -> None:
    a = char_lm_metrics(seed=1, corpus="book-prose", recipe=dataclasses.asdict(TINY))
    b = char_lm_metrics(seed=2, corpus="book-prose", recipe=dataclasses.asdict(TINY))
    assert a["train_curve"] != b["train_curve"]
