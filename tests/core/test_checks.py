"""Tests for chapter_code.core.checks: agreement stated as an asserted bound.

Tests for chapter_code.core.checks at the edge: a difference equal to the bound passes.
"""

from __future__ import annotations

import pytest
import torch

from chapter_code.core.checks import max_abs_diff, within


def test_max_abs_diff_is_the_largest_entrywise_gap() -> None:
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    b = torch.tensor([[1.0, 2.5], [2.0, 4.0]])
    assert max_abs_diff(a, b) == 1.0
    assert max_abs_diff(torch.zeros(0), torch.zeros(0)) == 0.0
    with pytest.raises(ValueError, match=r"same shape; got \(2, 2\) and \(4,\)"):
        max_abs_diff(a, b.flatten())


@pytest.mark.parametrize(
    ("diff", "tol", "text"),
    [(1.2e-7, 1e-6, "1e-6"), (0.0, 1e-12, "1e-12"), (0.5, 1.0, "1e0")],
)
def test_within_returns_the_bound(diff: float, tol: float, text: str) -> None:
    assert within(diff, tol) == text


def test_within_fails_when_the_bound_is_broken() -> None:
    with pytest.raises(
        AssertionError, match="differ by 2e-06, more than the stated bound 1e-06"
    ):
        within(2e-6, 1e-6)


@pytest.mark.parametrize(
    ("diff", "tol", "message"),
    [
        (1e-7, 3e-6, "power of ten"),
        (1e-7, 0.0, "power of ten"),
        (float("nan"), 1e-6, "finite number"),
        (-1.0, 1e-6, "finite number"),
    ],
)
def test_within_rejects_bad_input(diff: float, tol: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        within(diff, tol)


def test_a_difference_equal_to_the_bound_is_within_it() -> None:
    assert within(1e-6, 1e-6) == "1e-6"
    assert within(1.0, 1.0) == "1e0"
