"""Tests for chapter_code.ngram that pin the histories used at the start of a text, the
default (empty) history, the float64 arithmetic of the matrix, and the checks' edges."""

from __future__ import annotations

import math

import pytest
import torch

from chapter_code.ngram import CharNGram

TEXT = "XXabXXbaXXabbaXab"


@pytest.mark.parametrize("order", [2, 3])
def test_matrix_rows_use_the_same_histories_as_log_prob_from_the_first_character(order: int) -> None:
    model = CharNGram(order, 0.1).fit(TEXT)
    text = "abXa"
    matrix = model.log_prob_matrix(text)  # no history: the first rows see a short (or empty) one
    for i in range(len(text)):
        h = text[max(0, i - (order - 1)) : i]
        expected = [model.log_prob(h, c) for c in model.vocab]
        assert matrix[i].tolist() == pytest.approx(expected, rel=1e-13)
    assert matrix.dtype == torch.float64


@pytest.mark.parametrize("method", ["nats_per_char", "log_prob_matrix"])
def test_the_default_history_is_empty(method: str) -> None:
    model = CharNGram(3, 0.1).fit(TEXT)  # "X" is in the vocabulary, so a history of X's is counted
    score = getattr(model, method)
    assert torch.equal(torch.as_tensor(score("ab")), torch.as_tensor(score("ab", history="")))
    expected = -(model.log_prob("", "a") + model.log_prob("a", "b")) / 2
    assert model.nats_per_char("ab") == pytest.approx(expected, rel=1e-13)


def test_an_unfitted_model_has_no_counts() -> None:
    assert CharNGram(2, 0.5).stored_counts == 0


def test_k_must_not_be_a_bool_and_text_must_be_a_string_of_order_characters() -> None:
    with pytest.raises(ValueError, match=r"^k must be a number > 0"):
        CharNGram(2, True)
    with pytest.raises(ValueError, match=r"^text must be a string of at least order = 3 characters$"):
        CharNGram(3, 0.1).fit(["a", "b", "c"])  # type: ignore[arg-type]
    model = CharNGram(3, 0.1).fit("abc")  # exactly order characters: one trigram
    assert model.stored_counts == 1
    assert model.log_prob("ab", "c") == pytest.approx(math.log(1.1 / 1.3))
