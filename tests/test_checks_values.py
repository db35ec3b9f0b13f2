"""Tests for chapter_code.checks at the edge: a difference equal to the bound passes."""

from __future__ import annotations

from chapter_code.checks import within


def test_a_difference_equal_to_the_bound_is_within_it() -> None:
    assert within(1e-6, 1e-6) == "1e-6"
    assert within(1.0, 1.0) == "1e0"
