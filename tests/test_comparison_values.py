"""Tests for chapter_code.comparison that pin the n-gram grid's validation history, and the
edges of word_perplexity and share_saturated."""

from __future__ import annotations

import math

import pytest
import torch

from chapter_code.comparison import choose_ngram, share_saturated, word_perplexity
from chapter_code.ngram import CharNGram

TRAIN = "abcabdabcabdaacbbd"
VALID = "cabdab"


def test_each_grid_score_reads_its_history_from_the_end_of_train() -> None:
    choice, models = choose_ngram(TRAIN, VALID, orders=[1, 2, 3], ks=[0.1, 1.0])
    for (order, k), nats in choice.valid_nats.items():
        history = TRAIN[len(TRAIN) - (order - 1) :] if order > 1 else ""
        assert nats == CharNGram(order, k).fit(TRAIN).nats_per_char(VALID, history=history)
        assert models[(order, k)].order == order
    # the history matters here: without it the first characters are scored as uniform
    assert choice.valid_nats[(3, 0.1)] != CharNGram(3, 0.1).fit(TRAIN).nats_per_char(VALID)


def test_word_perplexity_accepts_one_character_and_one_word() -> None:
    assert word_perplexity(0.5, 1, 1) == pytest.approx(math.exp(0.5))
    assert word_perplexity(0.5, 6, 2) == pytest.approx(math.exp(1.5))


def test_a_value_at_the_threshold_is_not_saturated() -> None:
    assert share_saturated(torch.tensor([0.5, 0.75, -0.75, 0.25]), threshold=0.5) == 0.5
