"""Value tests for chapter_code.sample_metrics: default arguments, every check's boundary, and loops
found at the edges of a text (a period of one, a text that is all loop, exactly the minimum turns)."""

from __future__ import annotations

import pytest

from chapter_code.sample_metrics import Loop, find_loop, repeated_ngram_share


def test_repeated_ngram_share_defaults_to_word_trigrams() -> None:
    text = "a b c a b c a"
    # trigrams: abc bca cab abc bca, the last two seen before; 4-grams: abca bcab cabc abca, one repeat
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
    # more turns than needed: the search walks back from the last three turns to the first character
    assert find_loop("abcabcabcabc") == Loop(period=3, start=0, unit="abc")
    assert find_loop("xabababab") == Loop(period=2, start=1, unit="ab")


def test_no_loop_longer_than_the_text_allows() -> None:
    # two turns of "ab" are fewer than three; no longer period fits three times into four characters
    assert find_loop("abab") is None
    assert find_loop("abcab") is None
    assert find_loop("") is None
