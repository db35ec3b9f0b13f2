"""Tests for core.arguments: counts are ints >= 1, and the message names the
argument."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chapter_code.core.arguments import positive_int_fields, positive_ints


@given(st.integers(min_value=1))
def test_positive_ints_accepts_every_count(n: int) -> None:
    positive_ints(n=n)


@pytest.mark.parametrize("bad", [0, -3, True, False, 2.0, "4", None])
def test_positive_ints_refuses_others_by_name(bad: object) -> None:
    with pytest.raises(ValueError, match=r"^steps must be an int >= 1; got "):
        positive_ints(window=8, steps=bad)


def test_the_first_bad_one_is_named() -> None:
    with pytest.raises(ValueError, match="^a must"):
        positive_ints(a=0, b=0)


@dataclass(frozen=True)
class _Recipe:
    window: int = 4
    steps: int = 2

    def __post_init__(self) -> None:
        positive_int_fields(self, "window", "steps")


def test_fields_of_a_dataclass() -> None:
    _Recipe()
    with pytest.raises(ValueError, match="^window must be an int >= 1; got 0$"):
        _Recipe(window=0)
