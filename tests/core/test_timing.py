"""Tests for chapter_code.core.timing."""

from __future__ import annotations

import time

import pytest

from chapter_code.core.timing import best_time


def test_best_time_is_at_least_the_sleep_and_calls_warm_up_first() -> None:
    calls = []
    seconds = best_time(lambda: (calls.append(1), time.sleep(0.01)), repeats=3)
    assert seconds >= 0.01
    assert len(calls) == 4


@pytest.mark.parametrize("bad", [0, -1, 2.5])
def test_bad_repeats(bad: object) -> None:
    with pytest.raises(ValueError, match=f"^repeats must be an int >= 1; got {bad!r}"):
        best_time(lambda: None, repeats=bad)  # type: ignore[arg-type]


def test_best_time_is_the_minimum_of_the_timed_calls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a fake clock: each timed call reads the clock twice; the durations are 3, 1, 2
    # seconds
    readings = iter([10.0, 13.0, 20.0, 21.0, 30.0, 32.0])
    monkeypatch.setattr(time, "perf_counter", lambda: next(readings))
    calls = []
    assert best_time(lambda: calls.append(1), repeats=3) == 1.0
    assert len(calls) == 4  # the warm-up is not timed: it reads no clock


def test_default_repeats_and_a_single_repeat() -> None:
    calls = []
    best_time(lambda: calls.append(1))
    assert len(calls) == 6  # one warm-up and five timed calls
    one = []
    assert best_time(lambda: one.append(1), repeats=1) < float("inf")
    assert len(one) == 2


def test_times_are_each_timed_call_in_order_after_one_warm_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from chapter_code.core import timing

    ticks = iter([0.0, 1.0, 5.0, 7.0, 10.0, 10.5])
    monkeypatch.setattr(timing.time, "perf_counter", lambda: next(ticks))
    calls: list[int] = []
    assert timing.times(lambda: calls.append(1), repeats=3) == [1.0, 2.0, 0.5]
    assert len(calls) == 4  # the warm-up, untimed, then three
