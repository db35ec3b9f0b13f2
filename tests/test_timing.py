"""Tests for chapter_code.timing."""

from __future__ import annotations

import time

import pytest

from chapter_code.timing import best_time


def test_best_time_is_at_least_the_sleep_and_calls_warm_up_first() -> None:
    calls = []
    seconds = best_time(lambda: (calls.append(1), time.sleep(0.01)), repeats=3)
    assert seconds >= 0.01
    assert len(calls) == 4


@pytest.mark.parametrize("bad", [0, -1, 2.5])
def test_bad_repeats(bad: object) -> None:
    with pytest.raises(ValueError, match="repeats must be an int >= 1"):
        best_time(lambda: None, repeats=bad)  # type: ignore[arg-type]
