"""Tests for chapter_code.lm.ngram: add-k character n-grams against counting by hand.

Tests for chapter_code.lm.ngram that pin the histories used at the start of a text, the
default (empty) history, the float64 arithmetic of the matrix, and the checks' edges.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from chapter_code.lm.ngram import CharNGram

TEXT = "the cat sat on the mat; the hat sat."


def by_hand(text: str, order: int, k: float, history: str, char: str) -> float:
    """p(char | history) by counting substrings directly."""
    vocab = sorted(set(text))
    h = history[-(order - 1) :] if order > 1 else ""
    joint = sum(
        1
        for i in range(order - 1, len(text))
        if text[i - order + 1 : i + 1] == h + char
    )
    hist = sum(1 for i in range(order - 1, len(text)) if text[i - order + 1 : i] == h)
    return (joint + k) / (hist + k * len(vocab))


@pytest.mark.parametrize("order", [1, 2, 3, 4])
@pytest.mark.parametrize("k", [0.01, 0.1, 1.0])
def test_probabilities_match_counting_by_hand(order: int, k: float) -> None:
    model = CharNGram(order, k).fit(TEXT)
    for history in ["the", "t", "xyz", "sat."]:
        for char in "aet .":
            assert math.exp(model.log_prob(history, char)) == pytest.approx(
                by_hand(TEXT, order, k, history, char)
            )


def test_nats_per_char_uses_the_given_history_then_the_text_itself() -> None:
    model = CharNGram(3, 0.1).fit(TEXT)
    held_out = "the hat"
    expected = -sum(
        math.log(by_hand(TEXT, 3, 0.1, ("at " + held_out)[: 3 + i], c))
        for i, c in enumerate(held_out)
    )
    assert model.nats_per_char(held_out, history="at ") == pytest.approx(
        expected / len(held_out)
    )
    no_history = -sum(
        math.log(by_hand(TEXT, 3, 0.1, held_out[max(0, i - 2) : i], c))
        for i, c in enumerate(held_out)
    )
    assert model.nats_per_char(held_out) == pytest.approx(no_history / len(held_out))


@given(
    history=st.text(alphabet="thecaso .;xq", max_size=5),
    order=st.integers(1, 5),
    k=st.floats(0.001, 5),
)
@settings(max_examples=50, deadline=None)
def test_every_distribution_sums_to_one(history: str, order: int, k: float) -> None:
    model = CharNGram(order, k).fit(TEXT)
    assert sum(
        math.exp(model.log_prob(history, c)) for c in model.vocab
    ) == pytest.approx(1.0)


def test_uniform_unigram_on_equal_counts() -> None:
    model = CharNGram(1, 1.0).fit("abcd")
    assert model.nats_per_char("dcba") == pytest.approx(math.log(4))


def test_a_character_outside_the_vocabulary_is_named() -> None:
    model = CharNGram(2, 0.1).fit(TEXT)
    with pytest.raises(
        ValueError, match=r"character 'z' is not in the training text's vocabulary"
    ):
        model.nats_per_char("zebra")


@pytest.mark.parametrize(
    ("order", "k", "message"),
    [
        (0, 0.1, "order must be an int >= 1"),
        (2.0, 0.1, "order must be"),
        (2, -0.5, "k must be a number > 0"),
        (2, 0, "k must be"),
        (2, float("nan"), "k must be"),
    ],
)
def test_bad_order_or_k_is_named(order: object, k: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CharNGram(order, k)  # type: ignore[arg-type]


def test_scoring_before_fitting_or_nothing_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="call fit"):
        CharNGram(2, 0.1).nats_per_char("ab")
    with pytest.raises(ValueError, match="at least one character"):
        CharNGram(2, 0.1).fit(TEXT).nats_per_char("")


@pytest.mark.parametrize("order", [1, 2, 3, 5])
def test_log_prob_matrix_rows_are_the_models_distributions_and_score_like_nats_per_char(
    order: int,
) -> None:
    import torch

    from chapter_code.lm.perplexity import lm_loss_and_ppl

    model = CharNGram(order, 0.1).fit(TEXT)
    held_out, history = "the hat sat on", "mat; "
    matrix = model.log_prob_matrix(held_out, history=history)  # (N, V)
    assert matrix.shape == (len(held_out), len(model.vocab))
    assert matrix.dtype == torch.float64
    context = history + held_out
    for i in (0, 3, len(held_out) - 1):
        h = context[: len(history) + i]
        for j, c in enumerate(model.vocab):
            assert matrix[i, j].item() == pytest.approx(model.log_prob(h, c))
    torch.testing.assert_close(
        matrix.exp().sum(dim=1), torch.ones(len(held_out), dtype=torch.float64)
    )
    targets = torch.tensor([model.vocab.index(c) for c in held_out])
    scored = lm_loss_and_ppl(matrix, targets)[0].item()
    assert scored == pytest.approx(model.nats_per_char(held_out, history), abs=1e-12)


def test_log_prob_matrix_names_an_unknown_character_and_stored_counts_count_distinct_grams() -> (  # noqa: E501  (the test's name)
    None
):
    model = CharNGram(2, 0.1).fit("abab")
    assert model.stored_counts == 2  # "ab", "ba"
    with pytest.raises(ValueError, match=r"character 'z' is not in"):
        model.log_prob_matrix("az")
    with pytest.raises(RuntimeError, match="call fit"):
        CharNGram(2, 0.1).log_prob_matrix("ab")


TEXT_V = "XXabXXbaXXabbaXab"


@pytest.mark.parametrize("order", [2, 3])
def test_matrix_rows_use_the_same_histories_as_log_prob_from_the_first_character(
    order: int,
) -> None:
    model = CharNGram(order, 0.1).fit(TEXT_V)
    text = "abXa"
    # no history: the first rows see a short (or empty) one
    matrix = model.log_prob_matrix(text)
    for i in range(len(text)):
        h = text[max(0, i - (order - 1)) : i]
        expected = [model.log_prob(h, c) for c in model.vocab]
        assert matrix[i].tolist() == pytest.approx(expected, rel=1e-13)
    assert matrix.dtype == torch.float64


@pytest.mark.parametrize("method", ["nats_per_char", "log_prob_matrix"])
def test_the_default_history_is_empty(method: str) -> None:
    # "X" is in the vocabulary, so a history of X's is counted
    model = CharNGram(3, 0.1).fit(TEXT_V)
    score = getattr(model, method)
    assert torch.equal(
        torch.as_tensor(score("ab")), torch.as_tensor(score("ab", history=""))
    )
    expected = -(model.log_prob("", "a") + model.log_prob("a", "b")) / 2
    assert model.nats_per_char("ab") == pytest.approx(expected, rel=1e-13)


def test_an_unfitted_model_has_no_counts() -> None:
    assert CharNGram(2, 0.5).stored_counts == 0


def test_k_must_not_be_a_bool_and_text_must_be_a_string_of_order_characters() -> None:
    with pytest.raises(ValueError, match=r"^k must be a number > 0"):
        CharNGram(2, True)
    with pytest.raises(
        ValueError, match=r"^text must be a string of at least order = 3 characters$"
    ):
        CharNGram(3, 0.1).fit(["a", "b", "c"])  # type: ignore[arg-type]
    model = CharNGram(3, 0.1).fit("abc")  # exactly order characters: one trigram
    assert model.stored_counts == 1
    assert model.log_prob("ab", "c") == pytest.approx(math.log(1.1 / 1.3))
