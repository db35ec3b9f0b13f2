"""Tests for chapter_code.sampling.goodness_of_fit: Pearson's statistic, chi-square
quantiles, the counting check.

Value tests for chapter_code.sampling.goodness_of_fit: every check's boundary, the
quantile as the smallest value whose CDF reaches the level, the series' term limit, and
the fields of a counting check.
"""

from __future__ import annotations

import math

import pytest
import torch

from chapter_code.sampling import goodness_of_fit as gof
from chapter_code.sampling.goodness_of_fit import (
    CountingCheck,
    chi_square_quantile,
    chi_square_statistic,
    counting_check,
    draw_counts,
    regularized_gamma,
)
from chapter_code.sampling.rules import (
    greedy,
    temperature_probs,
    temperature_rule,
    top_k_probs,
    top_k_rule,
)

Z = torch.tensor([2.0, 1.0, 0.0], dtype=torch.float64)


@pytest.mark.parametrize(
    ("level", "dof", "expected"),
    [
        (
            0.999,
            2,
            -2 * math.log(0.001),
        ),  # with 2 degrees of freedom the tail is exp(-x/2)
        (0.95, 1, 1.959963984540054**2),  # the square of the normal 0.975 quantile
        (0.95, 10, 18.307038053275146),
    ],
)
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
    stat, dof = chi_square_statistic(
        torch.tensor([9, 1, 0]), torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64)
    )
    assert math.isinf(stat)
    assert dof == 0


def test_draw_counts_add_up_and_greedy_is_always_the_argmax() -> None:
    counts = draw_counts(
        temperature_rule(1.0), Z, 500, torch.Generator().manual_seed(0)
    )
    assert counts.sum() == 500
    assert counts.shape == (3,)
    assert draw_counts(greedy, Z, 100, torch.Generator()).tolist() == [100, 0, 0]


def test_a_correct_sampler_passes_and_a_wrong_target_fails() -> None:
    good = counting_check(
        top_k_rule(2), Z, top_k_probs(Z, 2), 20_000, torch.Generator().manual_seed(1)
    )
    assert good.passed
    assert good.dof == 1
    assert sum(good.counts) == 20_000
    assert good.counts[2] == 0
    wrong = counting_check(
        temperature_rule(1.0),
        Z,
        temperature_probs(Z, 0.9),
        20_000,
        torch.Generator().manual_seed(1),
    )
    assert not wrong.passed
    assert wrong.statistic > wrong.threshold


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: chi_square_quantile(1.0, 2), r"level must be in \(0, 1\)"),
        (lambda: chi_square_quantile(0.9, 0), "dof must be an int >= 1"),
        (lambda: draw_counts(greedy, Z, 0, torch.Generator()), "n must be an int >= 1"),
        (
            lambda: draw_counts(greedy, Z.reshape(1, 3), 5, torch.Generator()),
            r"shape \(V,\)",
        ),
        (lambda: chi_square_statistic(torch.tensor([1, 2]), Z), "same shape|one shape"),
        (
            lambda: chi_square_statistic(torch.tensor([1, 2, 3]), Z),
            "probability vector",
        ),
    ],
)
def test_bad_input_is_named(make, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make()


def test_one_draw_is_allowed_and_other_counts_are_named() -> None:
    assert draw_counts(greedy, Z, 1, torch.Generator()).tolist() == [1, 0, 0]
    for bad in (0, -3, 2.0, 2.5, True, "5"):
        with pytest.raises(ValueError, match="^n must be an int >= 1"):
            draw_counts(greedy, Z, bad, torch.Generator())


def test_counts_are_the_rules_own_draws_whatever_the_global_seed() -> None:
    rule = temperature_rule(1.0)
    torch.manual_seed(123)
    first = draw_counts(rule, Z, 400, torch.Generator().manual_seed(5))
    torch.manual_seed(456)
    again = draw_counts(rule, Z, 400, torch.Generator().manual_seed(5))
    assert first.tolist() == again.tolist()
    direct = rule(Z.expand(400, -1), torch.Generator().manual_seed(5))
    assert first.tolist() == torch.bincount(direct, minlength=3).tolist()
    # a token never drawn still has its (zero) count: greedy on a vector whose last
    # entry wins
    assert draw_counts(
        greedy, torch.tensor([0.0, 1.0, 5.0]), 7, torch.Generator()
    ).tolist() == [0, 0, 7]


def test_probability_vector_checks_at_their_boundaries() -> None:
    counts = torch.tensor([3, 3, 4])
    # entries that sum to 1 within 1e-6 are accepted; further off, or negative, they are
    # not
    stat, dof = chi_square_statistic(
        counts, torch.tensor([0.3, 0.3, 0.4 + 5e-7], dtype=torch.float64)
    )
    assert dof == 2
    assert stat == pytest.approx(0.0, abs=1e-5)
    for probs in (
        [0.3, 0.3, 0.4 + 2e-6],
        [0.3, 0.3, 0.4 - 2e-6],
        [0.5, 0.6, -0.1],
        [0.3, 0.3, 1.4],
    ):
        with pytest.raises(ValueError, match="^probs must be a probability vector"):
            chi_square_statistic(counts, torch.tensor(probs, dtype=torch.float64))
    with pytest.raises(
        ValueError, match="^counts and probs must be vectors of one shape"
    ):
        chi_square_statistic(
            torch.ones(2, 3), torch.full((2, 3), 1 / 6, dtype=torch.float64)
        )


def test_statistic_leaves_zero_probability_tokens_out_of_the_sum_and_degrees() -> None:
    # target (0.5, 0, 0.5) over 40 draws: expected 20 and 20; (26-20)^2/20 +
    # (14-20)^2/20 = 3.6
    stat, dof = chi_square_statistic(
        torch.tensor([26, 0, 14]), torch.tensor([0.5, 0.0, 0.5], dtype=torch.float64)
    )
    assert (stat, dof) == (pytest.approx(3.6), 1)
    stat, dof = chi_square_statistic(
        torch.tensor([26, 1, 13]), torch.tensor([0.5, 0.0, 0.5], dtype=torch.float64)
    )
    assert (stat, dof) == (math.inf, 1)


@pytest.mark.parametrize(
    ("a", "x", "expected"),
    [
        (0.5, 0.5, math.erf(math.sqrt(0.5))),  # P(1/2, x) = erf(sqrt(x))
        (0.5, 3.0, math.erf(math.sqrt(3.0))),
        (2.0, 1.5, 1 - math.exp(-1.5) * (1 + 1.5)),  # P(2, x) = 1 - e^-x (1 + x)
        (3.0, 4.0, 1 - math.exp(-4.0) * (1 + 4.0 + 4.0**2 / 2)),
    ],
)
def test_regularized_gamma_matches_closed_forms(
    a: float, x: float, expected: float
) -> None:
    assert regularized_gamma(a, x) == pytest.approx(expected, rel=1e-12)


def test_regularized_gamma_is_zero_at_and_below_zero_and_at_most_one() -> None:
    assert regularized_gamma(1.5, -2.0) == 0.0
    assert regularized_gamma(1.5, 0.0) == 0.0
    # far in the tail the series' rounding lands just above 1 (1 + 7e-16 here): it is
    # capped
    assert regularized_gamma(0.5, 32.55) == 1.0
    for a in (0.5, 1.0, 2.5):
        assert all(0.0 <= regularized_gamma(a, x / 4) <= 1.0 for x in range(1, 200))


def test_regularized_gamma_rejects_a_at_and_below_zero() -> None:
    for a in (0.0, -1.0):
        with pytest.raises(ValueError, match="^a must be > 0"):
            regularized_gamma(a, 1.0)
    assert regularized_gamma(1e-3, 1.0) == pytest.approx(1.0, abs=1e-3)


def test_series_sums_at_most_ten_thousand_terms() -> None:
    # with a = x = 1.4e6 the series needs about 9,100 terms, and one more for each unit
    # x grows; these two points need exactly 10,000 terms (allowed) and 10,001 (too
    # many)
    a = 1_400_000.0
    value = regularized_gamma(a, a + 963.9)
    # about the normal CDF at 963.9 / sqrt(a) = 0.81
    assert value == pytest.approx(0.79, abs=0.01)
    with pytest.raises(RuntimeError, match="did not converge"):
        regularized_gamma(a, a + 964.9)


# reference values: scipy.stats.chi2.ppf(level, dof) (SciPy 1.x), written out
@pytest.mark.parametrize(
    ("level", "dof", "expected"),
    [
        (0.5, 1, 0.454936423119572),  # below 1: the search starts at 0
        (0.8, 1, 1.2815515655446004**2),  # the square of the normal 0.9 quantile
        (0.999, 1, 10.827566170662733),
        (0.999, 6, 22.457744484825323),
        (0.1, 40, 29.05052293054551),
    ],
)
def test_quantiles_against_tables(level: float, dof: int, expected: float) -> None:
    assert chi_square_quantile(level, dof) == pytest.approx(expected, rel=1e-8)


def test_quantile_arguments_at_their_boundaries() -> None:
    for level in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match=r"^level must be in \(0, 1\)"):
            chi_square_quantile(level, 2)
    for dof in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match="^dof must be an int >= 1"):
            chi_square_quantile(0.9, dof)
    assert chi_square_quantile(1e-9, 1) == pytest.approx(0.0, abs=1e-15)


def test_quantile_is_the_smallest_value_whose_cdf_reaches_the_level(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A stand-in CDF with a flat stretch at exactly the level: the quantile is where the
    # stretch begins (x = 1.5, so the chi-square value 3), not where it ends. The upper
    # end is found by doubling from dof.
    calls: list[tuple[float, float]] = []

    def stepped(a: float, x: float) -> float:
        calls.append((a, x))
        return 0.25 if x < 1.5 else 0.5 if x < 5.0 else 1.0

    monkeypatch.setattr(gof, "regularized_gamma", stepped)
    assert chi_square_quantile(0.5, 2) == pytest.approx(3.0, abs=1e-12)
    # dof 2 gives a = 1; high = 2, then 4: CDF 0.5 stops it
    assert calls[:2] == [(1.0, 1.0), (1.0, 2.0)]
    assert all(a == 1.0 for a, _ in calls)
    assert len(calls) == 2 + 200  # two to bracket, then 200 halvings
    assert all(0.0 <= x <= 2.0 for _, x in calls[2:])


def test_quantile_brackets_by_doubling_with_the_true_cdf(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[tuple[float, float]] = []
    real = gof.regularized_gamma

    def spy(a: float, x: float) -> float:
        calls.append((a, x))
        return real(a, x)

    monkeypatch.setattr(gof, "regularized_gamma", spy)
    q = chi_square_quantile(0.999, 3)
    assert q == pytest.approx(16.26623619623813, rel=1e-9)
    # high = 3, 6, 12, 24: the CDF first reaches 0.999 at 24
    assert [x for _, x in calls[:4]] == [1.5, 3.0, 6.0, 12.0]
    assert {a for a, _ in calls} == {1.5}
    assert len(calls) == 4 + 200


def test_passed_means_strictly_below_the_threshold() -> None:
    def check(statistic: float) -> CountingCheck:
        return CountingCheck(
            counts=[1],
            expected=[1.0],
            statistic=statistic,
            dof=1,
            threshold=3.0,
            level=0.9,
        )

    assert check(2.999).passed
    assert not check(3.0).passed
    assert not check(math.inf).passed


def test_counting_check_reports_its_inputs_and_threshold() -> None:
    target = temperature_probs(Z, 1.0)
    result = counting_check(
        temperature_rule(1.0),
        Z,
        target,
        600,
        torch.Generator().manual_seed(3),
        level=0.99,
    )
    assert result.level == 0.99
    assert result.expected == pytest.approx((target * 600).tolist())
    assert (
        result.counts
        == draw_counts(
            temperature_rule(1.0), Z, 600, torch.Generator().manual_seed(3)
        ).tolist()
    )
    assert result.dof == 2
    assert result.threshold == pytest.approx(chi_square_quantile(0.99, 2))
    assert result.statistic == pytest.approx(
        chi_square_statistic(torch.tensor(result.counts), target)[0]
    )
    default = counting_check(
        temperature_rule(1.0), Z, target, 600, torch.Generator().manual_seed(3)
    )
    assert default.level == 0.999
    assert default.threshold == pytest.approx(-2 * math.log(0.001))


def test_a_one_token_target_has_zero_degrees_and_the_one_degree_threshold() -> None:
    target = torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64)
    result = counting_check(greedy, Z, target, 50, torch.Generator())
    assert (result.dof, result.statistic, result.counts) == (0, 0.0, [50, 0, 0])
    assert result.expected == [50.0, 0.0, 0.0]
    assert result.threshold == pytest.approx(chi_square_quantile(0.999, 1))
    assert result.passed
