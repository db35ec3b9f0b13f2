"""Tests for chapter_code.sampling.metrics: words, repeats, log-probabilities and greedy
loops.

Value tests for chapter_code.sampling.metrics: default arguments, every check's
boundary, and loops found at the edges of a text (a period of one, a text that is all
loop, exactly the minimum turns).
"""

from __future__ import annotations

import pytest
import torch

from chapter_code.lm.char_lm import CharLM
from chapter_code.sampling.metrics import (
    Loop,
    find_loop,
    known_word_share,
    loop_drift,
    mean_log_prob,
    repeated_ngram_share,
    token_log_probs,
    words_of,
)


def test_words_lose_their_punctuation() -> None:
    assert words_of("Ay, my lord! -- 'tis so.") == ["Ay", "my", "lord", "tis", "so"]


def test_known_word_share_counts_each_word() -> None:
    known = set(words_of("the king is dead"))
    assert known_word_share("the queen is dead, the", known) == pytest.approx(4 / 5)
    with pytest.raises(ValueError, match="at least one word"):
        known_word_share(" ... ", known)


def test_repeated_ngrams() -> None:
    assert repeated_ngram_share("a b c d e f", 2) == 0.0
    # bigrams: (a b) (b a) (a b) (b a) (a b): the last three repeat earlier ones
    assert repeated_ngram_share("a b a b a b", 2) == pytest.approx(3 / 5)
    with pytest.raises(ValueError, match="n must be an int >= 1"):
        repeated_ngram_share("a b", 0)
    with pytest.raises(ValueError, match="at least n=3 words"):
        repeated_ngram_share("a b", 3)


def test_find_loop() -> None:
    loop = find_loop("once upon the the the the ")
    assert loop is not None
    assert loop.period == 4
    assert loop.unit in {"the ", " the", "e th", "he t"}
    text = "xyz" + "abc" * 5
    loop = find_loop(text)
    assert (loop.period, loop.start, loop.unit) == (3, 3, "abc")
    assert find_loop("abcdefg") is None
    with pytest.raises(ValueError, match="min_turns"):
        find_loop("aaaa", 1)


def test_log_probs_equal_a_step_by_step_reading() -> None:
    torch.manual_seed(0)
    model = CharLM(5, "lstm", embedding_size=3, hidden_size=6).double()
    prefix, tokens = torch.tensor([1, 2]), torch.tensor([3, 0, 4])
    ours = token_log_probs(model, prefix, tokens)
    text = torch.cat([prefix, tokens])
    by_hand = []
    for i in range(len(prefix), len(text)):
        logits, _ = model(text[:i].unsqueeze(0))
        by_hand.append(torch.log_softmax(logits[0, -1], -1)[text[i]])
    torch.testing.assert_close(ours, torch.stack(by_hand))
    assert mean_log_prob(model, prefix, tokens) == pytest.approx(ours.mean().item())
    assert (ours < 0).all()


def test_loop_drift_is_zero_for_a_model_that_ignores_its_state() -> None:
    class Memoryless(torch.nn.Module):
        def forward(self, tokens, state=None):
            # (1, T, V): depends on x_t only
            return torch.nn.functional.one_hot(tokens, 4).double() * 3.0, None

    tokens = torch.tensor([0, 1, 2, 1, 2, 1, 2, 1, 2])
    loop = find_loop("abcbcbcbc")
    assert loop is not None
    assert loop.period == 2
    drift = loop_drift(Memoryless(), torch.tensor([3]), tokens, loop)
    assert len(drift) >= 2
    assert max(drift) == 0.0


def test_repeated_ngram_share_defaults_to_word_trigrams() -> None:
    text = "a b c a b c a"
    # trigrams: abc bca cab abc bca, the last two seen before; 4-grams: abca bcab cabc
    # abca, one repeat
    assert repeated_ngram_share(text) == pytest.approx(2 / 5)
    assert repeated_ngram_share(text, 3) == pytest.approx(2 / 5)
    assert repeated_ngram_share(text, 4) == pytest.approx(1 / 4)


def test_repeated_ngram_share_of_single_words_and_bad_n() -> None:
    assert repeated_ngram_share("to be or not to be", 1) == pytest.approx(2 / 6)
    for bad in (0, -1, 2.0, True, "2"):
        with pytest.raises(ValueError, match="^n must be an int >= 1"):
            repeated_ngram_share("a b c d", bad)


def test_find_loop_needs_three_turns_by_default() -> None:
    assert find_loop("xyzabcabcabc") == Loop(period=3, start=3, unit="abc")
    assert find_loop("xyzabcabc") is None
    assert find_loop("xyzabcabc", 2) == Loop(period=3, start=3, unit="abc")
    assert find_loop("xyzabcabcabc", 4) is None


def test_find_loop_min_turns_boundary_is_named() -> None:
    for bad in (1, 0, 2.0, True):
        with pytest.raises(ValueError, match="^min_turns must be an int >= 2"):
            find_loop("abababab", bad)


def test_find_loop_finds_a_period_of_one() -> None:
    assert find_loop("xyzaaaa") == Loop(period=1, start=3, unit="a")
    assert find_loop("aaa") == Loop(period=1, start=0, unit="a")


def test_a_text_that_is_all_loop_starts_at_zero() -> None:
    assert find_loop("abcabcabc") == Loop(period=3, start=0, unit="abc")
    assert find_loop("ababab") == Loop(period=2, start=0, unit="ab")
    # more turns than needed: the search walks back from the last three turns to the
    # first character
    assert find_loop("abcabcabcabc") == Loop(period=3, start=0, unit="abc")
    assert find_loop("xabababab") == Loop(period=2, start=1, unit="ab")


def test_no_loop_longer_than_the_text_allows() -> None:
    # two turns of "ab" are fewer than three; no longer period fits three times into
    # four characters
    assert find_loop("abab") is None
    assert find_loop("abcab") is None
    assert find_loop("") is None
