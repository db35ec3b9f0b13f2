"""Tests for chapter_code.sampling that build the rules inside the test (rules built at
collection time are made before mutation testing switches a mutant on), check draws
token for token against the distributions they claim, and probe every boundary."""

from __future__ import annotations

import pytest
import torch

from chapter_code.sampling import (
    draw,
    greedy,
    nucleus_probs,
    nucleus_rule,
    temperature_probs,
    temperature_rule,
    top_k_probs,
    top_k_rule,
)

LOGITS = torch.tensor([2.0, 1.0, 0.5, -1.0, 0.0])


def _draws(rule, logits: torch.Tensor, n: int = 200, seed: int = 0) -> list[int]:
    g = torch.Generator().manual_seed(seed)
    return [int(rule(logits, g)) for _ in range(n)]


def _expected(probs: torch.Tensor, n: int = 200, seed: int = 0) -> list[int]:
    g = torch.Generator().manual_seed(seed)
    return [int(draw(probs, g)) for _ in range(n)]


@pytest.mark.parametrize("tau", [0.7, 1.5])
def test_rules_draw_exactly_from_their_distributions(tau: float) -> None:
    assert _draws(temperature_rule(tau), LOGITS) == _expected(temperature_probs(LOGITS, tau))
    assert _draws(top_k_rule(2, tau), LOGITS) == _expected(top_k_probs(LOGITS, 2, tau))
    assert _draws(nucleus_rule(0.8, tau), LOGITS) == _expected(nucleus_probs(LOGITS, 0.8, tau))
    assert set(_draws(top_k_rule(2, tau), LOGITS)) == {0, 1}


def test_top_k_rule_caps_k_at_the_vocabulary() -> None:
    assert _draws(top_k_rule(50), LOGITS) == _expected(temperature_probs(LOGITS, 1.0))
    assert _draws(top_k_rule(1), LOGITS) == [0] * 200


@pytest.mark.parametrize("k", [0, -1, 2.0, True])
def test_top_k_rule_rejects_a_bad_k_when_built(k: object) -> None:
    with pytest.raises(ValueError, match=r"^k must be an int >= 1"):
        top_k_rule(k)  # type: ignore[arg-type]


def test_rules_check_their_temperature_and_p_when_built() -> None:
    for make in (lambda: temperature_rule(0.0), lambda: top_k_rule(2, 0.0), lambda: nucleus_rule(0.9, -1.0)):
        with pytest.raises(ValueError, match=r"^temperature must be a finite number > 0"):
            make()
    with pytest.raises(ValueError, match=r"^p must be a number in \(0, 1\]"):
        nucleus_rule(1.5)
    assert _draws(nucleus_rule(1.0), LOGITS) == _expected(temperature_probs(LOGITS, 1.0))


@pytest.mark.parametrize("make", [lambda: temperature_probs(LOGITS, True), lambda: top_k_probs(LOGITS, True),
                                  lambda: nucleus_probs(LOGITS, True)])
def test_a_bool_is_not_a_number_here(make) -> None:
    with pytest.raises(ValueError, match=r"^(temperature|k|p) must be"):
        make()


def test_batched_top_k_and_greedy_work_row_by_row() -> None:
    batch = torch.stack([LOGITS, LOGITS.flip(0), torch.zeros(5)])
    probs = top_k_probs(batch, 2)
    torch.testing.assert_close(probs.sum(dim=-1), torch.ones(3))
    for row, logits in zip(probs, batch, strict=True):
        torch.testing.assert_close(row, top_k_probs(logits, 2))
    assert greedy(batch).tolist() == [0, 4, 0]


def test_nucleus_stops_where_the_mass_before_a_token_reaches_p() -> None:
    probs = temperature_probs(LOGITS, 1.0)
    order = LOGITS.argsort(descending=True, stable=True)
    sorted_probs = probs[order]
    before = sorted_probs.cumsum(dim=-1) - sorted_probs
    kept = nucleus_probs(LOGITS, float(before[2]), 1.0)  # mass before the third-ranked token equals p exactly
    assert (kept > 0).tolist() == [True, True, False, False, False]
