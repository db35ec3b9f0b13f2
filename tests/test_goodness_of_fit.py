"""Tests for chapter_code.goodness_of_fit: Pearson's statistic, chi-square quantiles, the counting check."""

from __future__ import annotations

import math

import pytest
import torch

from chapter_code.goodness_of_fit import (
    chi_square_quantile,
    chi_square_statistic,
    counting_check,
    draw_counts,
    regularized_gamma,
)
from chapter_code.sampling import greedy, temperature_probs, temperature_rule, top_k_probs, top_k_rule

Z = torch.tensor([2.0, 1.0, 0.0], dtype=torch.float64)


@pytest.mark.parametrize(("level", "dof", "expected"), [
    (0.999, 2, -2 * math.log(0.001)),  # with 2 degrees of freedom the tail is exp(-x/2)
    (0.95, 1, 1.959963984540054 ** 2),  # the square of the normal 0.975 quantile
    (0.95, 10, 18.307038053275146),
])
def test_quantiles_match_known_values(level: float, dof: int, expected: float) -> None:
    assert chi_square_quantile(level, dof) == pytest.approx(expected, rel=1e-9)


def test_regularized_gamma_is_the_exponential_cdf_for_a_one() -> None:
    for x in (0.1, 1.0, 7.5):
        assert regularized_gamma(1.0, x) == pytest.approx(1 - math.exp(-x), rel=1e-12)
    assert regularized_gamma(2.0, 0.0) == 0.0


def test_statistic_by_hand_and_a_forbidden_draw() -> None:
    counts = torch.tensor([50, 30, 20])
    probs = torch.tensor([0.5, 0.25, 0.25], dtype=torch.float64)
    # (50-50)^2/50 + (30-25)^2/25 + (20-25)^2/25 = 2
    assert chi_square_statistic(counts, probs) == (pytest.approx(2.0), 2)
    stat, dof = chi_square_statistic(torch.tensor([9, 1, 0]), torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64))
    assert math.isinf(stat)
    assert dof == 0


def test_draw_counts_add_up_and_greedy_is_always_the_argmax() -> None:
    counts = draw_counts(temperature_rule(1.0), Z, 500, torch.Generator().manual_seed(0))
    assert counts.sum() == 500
    assert counts.shape == (3,)
    assert draw_counts(greedy, Z, 100, torch.Generator()).tolist() == [100, 0, 0]


def test_a_correct_sampler_passes_and_a_wrong_target_fails() -> None:
    good = counting_check(top_k_rule(2), Z, top_k_probs(Z, 2), 20_000, torch.Generator().manual_seed(1))
    assert good.passed
    assert good.dof == 1
    assert sum(good.counts) == 20_000
    assert good.counts[2] == 0
    wrong = counting_check(temperature_rule(1.0), Z, temperature_probs(Z, 0.9), 20_000,
                           torch.Generator().manual_seed(1))
    assert not wrong.passed
    assert wrong.statistic > wrong.threshold


@pytest.mark.parametrize(("make", "message"), [
    (lambda: chi_square_quantile(1.0, 2), r"level must be in \(0, 1\)"),
    (lambda: chi_square_quantile(0.9, 0), "dof must be an int >= 1"),
    (lambda: draw_counts(greedy, Z, 0, torch.Generator()), "n must be an int >= 1"),
    (lambda: draw_counts(greedy, Z.reshape(1, 3), 5, torch.Generator()), r"shape \(V,\)"),
    (lambda: chi_square_statistic(torch.tensor([1, 2]), Z), "same shape|one shape"),
    (lambda: chi_square_statistic(torch.tensor([1, 2, 3]), Z), "probability vector"),
])
def test_bad_input_is_named(make, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make()
