r"""Checking a sampler by counting: many draws against the distribution it claims to
sample.

A decoding rule (:mod:`chapter_code.sampling.rules`) computes a distribution and
then draws from it. The first half is checked against its formula; the
second half can only be checked statistically: draw ``n`` tokens, count them,
and compare the counts with ``n`` times the target probabilities through
Pearson's statistic

.. math:: X^2 = \sum_{i:\,q_i > 0} \frac{(c_i - n q_i)^2}{n q_i},

which, for a correct sampler, follows approximately a chi-square law with
(number of tokens of nonzero probability) - 1 degrees of freedom. A draw of a
token the target gives probability zero fails the check outright.

The threshold is the chi-square quantile at a stated level, computed here from
the regularised incomplete gamma function (no statistics package needed): at
level 0.999 a correct sampler fails one check in a thousand.

Pages: "Generating text" (the counting check).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from chapter_code.core.arguments import positive_ints
from chapter_code.sampling.rules import Rule


def draw_counts(
    rule: Rule, logits: torch.Tensor, n: int, generator: torch.Generator
) -> torch.Tensor:
    """How often ``rule`` picks each token in ``n`` independent draws from one logit
    vector ``(V,)``.

    The ``n`` draws are made as one batch of ``n`` identical rows ``(n, V)``;
    each row is an independent draw with the generator's next random numbers.
    """
    if logits.dim() != 1:
        raise ValueError(f"logits must have shape (V,); got {tuple(logits.shape)}")
    positive_ints(n=n)
    tokens = rule(logits.expand(n, -1), generator)  # (n,)
    return torch.bincount(tokens, minlength=logits.shape[0])  # (V,)


def chi_square_statistic(
    counts: torch.Tensor, probs: torch.Tensor
) -> tuple[float, int]:
    """Pearson's X^2 of ``counts`` against target ``probs``, and its degrees of freedom.

    Tokens of probability zero are left out of the sum; if any of them was
    drawn, the statistic is infinite (no correct sampler can draw one).
    """
    if counts.shape != probs.shape or counts.dim() != 1:
        raise ValueError(
            "counts and probs must be vectors of one shape; got "
            f"{tuple(counts.shape)} and {tuple(probs.shape)}"
        )
    if (probs < 0).any() or abs(float(probs.sum()) - 1.0) > 1e-6:
        raise ValueError(
            "probs must be a probability vector (entries >= 0 that sum to 1)"
        )
    ### BEGIN SOLUTION
    counts = counts.double()
    expected = probs.double() * counts.sum()
    support = probs > 0
    dof = int(support.sum()) - 1
    if counts[~support].sum() > 0:
        return math.inf, dof
    return float(
        ((counts[support] - expected[support]) ** 2 / expected[support]).sum()
    ), dof
    ### END SOLUTION


def regularized_gamma(a: float, x: float) -> float:
    """P(a, x) = gamma(a, x) / Gamma(a), the chi-square CDF at 2x with 2a degrees of
    freedom (series form).
    """
    if not a > 0:
        raise ValueError(f"a must be > 0; got {a!r}")
    if x <= 0:
        return 0.0
    term = total = 1.0 / a
    k = 0
    while term > total * 1e-16:
        k += 1
        term *= x / (a + k)
        total += term
        if k > 10_000:
            raise RuntimeError("series did not converge")
    return min(1.0, total * math.exp(a * math.log(x) - x - math.lgamma(a)))


def chi_square_quantile(level: float, dof: int) -> float:
    """The value a chi-square variable with ``dof`` degrees of freedom stays below with
    probability ``level``.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1); got {level!r}")
    positive_ints(dof=dof)
    low, high = 0.0, float(dof)
    while regularized_gamma(dof / 2, high / 2) < level:
        high *= 2
    for _ in range(200):  # bisection: the CDF is increasing
        mid = (low + high) / 2
        low, high = (
            (mid, high) if regularized_gamma(dof / 2, mid / 2) < level else (low, mid)
        )
    return (low + high) / 2


@dataclass(frozen=True)
class CountingCheck:
    """One rule's draws against its target: counts, expected counts, X^2, its threshold
    and the verdict.
    """

    counts: list[int]
    expected: list[float]
    statistic: float
    dof: int
    threshold: float
    level: float

    @property
    def passed(self) -> bool:
        return self.statistic < self.threshold


def counting_check(
    rule: Rule,
    logits: torch.Tensor,
    target: torch.Tensor,
    n: int,
    generator: torch.Generator,
    level: float = 0.999,
) -> CountingCheck:
    """Draw ``n`` tokens with ``rule`` from ``logits`` and test the counts against
    ``target`` at ``level``.
    """
    counts = draw_counts(rule, logits, n, generator)
    statistic, dof = chi_square_statistic(counts, target)
    return CountingCheck(
        counts=counts.tolist(),
        expected=(target.double() * n).tolist(),
        statistic=statistic,
        dof=dof,
        threshold=chi_square_quantile(level, max(dof, 1)),
        level=level,
    )
