"""Tests for chapter_code.sampling.rules: decoding rules by hand, by counting, and
generation with a carried state.

Tests for chapter_code.sampling.rules that build the rules inside the test (rules built
at collection time are made before mutation testing switches a mutant on), check draws
token for token against the distributions they claim, and probe every boundary.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from chapter_code.lm.char_lm import CharLM
from chapter_code.sampling.rules import (
    draw,
    generate,
    greedy,
    nucleus_probs,
    nucleus_rule,
    temperature_probs,
    temperature_rule,
    top_k_probs,
    top_k_rule,
)

Z = torch.tensor([2.0, 1.0, 0.0], dtype=torch.float64)


@pytest.mark.parametrize("tau", [0.5, 1.0, 2.0])
def test_temperature_matches_the_formula(tau: float) -> None:
    weights = [math.exp(v / tau) for v in (2.0, 1.0, 0.0)]
    expected = torch.tensor([w / sum(weights) for w in weights], dtype=torch.float64)
    torch.testing.assert_close(temperature_probs(Z, tau), expected)


def test_top_two_and_nucleus_renormalise_the_same_pair() -> None:
    e2, e1 = math.exp(2), math.exp(1)
    pair = torch.tensor([e2 / (e2 + e1), e1 / (e2 + e1), 0.0], dtype=torch.float64)
    torch.testing.assert_close(top_k_probs(Z, 2), pair)
    # 0.665 + 0.245 = 0.910 >= 0.9
    torch.testing.assert_close(nucleus_probs(Z, 0.9), pair)
    torch.testing.assert_close(
        nucleus_probs(Z, 0.5), torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64)
    )


def test_confident_distribution_top_k_and_nucleus_keep_different_counts() -> None:
    confident = torch.tensor([6.0, 1.0, 0.5, 0.0, -1.0], dtype=torch.float64)
    assert int((top_k_probs(confident, 3) > 0).sum()) == 3
    assert int((nucleus_probs(confident, 0.9) > 0).sum()) == 1


def chi_square(counts: torch.Tensor, probs: torch.Tensor) -> float:
    expected = probs * counts.sum()
    nonzero = expected > 0
    assert counts[~nonzero].sum() == 0, "a token with probability 0 was drawn"
    return float(((counts[nonzero] - expected[nonzero]) ** 2 / expected[nonzero]).sum())


@pytest.mark.parametrize(
    ("rule", "probs"),
    [
        (temperature_rule(0.5), temperature_probs(Z, 0.5)),
        (temperature_rule(2.0), temperature_probs(Z, 2.0)),
        (top_k_rule(2), top_k_probs(Z, 2)),
        (nucleus_rule(0.9), nucleus_probs(Z, 0.9)),
    ],
)
def test_twenty_thousand_draws_follow_the_target_distribution(
    rule, probs: torch.Tensor
) -> None:
    g = torch.Generator().manual_seed(0)
    tokens = torch.stack([rule(Z, g) for _ in range(20_000)])
    counts = torch.bincount(tokens, minlength=3).double()
    # 13.8 is the chi-square 0.999 quantile with 2 degrees of freedom: a correct sampler
    # fails 1 time in 1000
    assert chi_square(counts, probs) < 13.8


def test_temperature_near_zero_returns_the_argmax() -> None:
    g = torch.Generator().manual_seed(0)
    assert (
        {int(temperature_rule(1e-3)(Z, g)) for _ in range(200)}
        == {int(greedy(Z))}
        == {0}
    )


@given(
    st.lists(st.floats(-20, 20), min_size=1, max_size=12),
    st.floats(0.05, 5),
    st.floats(0.01, 1.0),
    st.integers(1, 12),
)
@settings(max_examples=60, deadline=None)
def test_every_rule_gives_a_distribution_that_keeps_the_top_token(
    values: list[float], tau: float, p: float, k: int
) -> None:
    z = torch.tensor(values, dtype=torch.float64)
    k = min(k, len(values))
    tops = z == z.max()  # with tied largest logits, a rule may keep any one of them
    for probs in (
        temperature_probs(z, tau),
        top_k_probs(z, k, tau),
        nucleus_probs(z, p, tau),
    ):
        assert probs.sum().item() == pytest.approx(1.0)
        assert (probs >= 0).all()
        assert probs[tops].sum() > 0
    assert int((top_k_probs(z, k, tau) > 0).sum()) <= k


def test_batches_are_handled_row_by_row() -> None:
    batch = torch.stack([Z, Z.flip(0)])
    torch.testing.assert_close(
        nucleus_probs(batch, 0.9)[1], nucleus_probs(Z.flip(0), 0.9)
    )
    assert draw(top_k_probs(batch, 1), torch.Generator().manual_seed(0)).tolist() == [
        0,
        2,
    ]


def test_generation_with_a_carried_state_equals_rereading_the_whole_text() -> None:
    torch.manual_seed(0)
    model = CharLM(7, "lstm", embedding_size=4, hidden_size=8).double()
    prefix = torch.tensor([1, 2, 3], dtype=torch.long)
    fast = generate(
        model, prefix, 12, temperature_rule(1.0), torch.Generator().manual_seed(5)
    )
    g = torch.Generator().manual_seed(5)
    text = prefix.clone()
    for _ in range(12):  # the slow way: read everything again for every token
        logits, _ = model(text.unsqueeze(0))
        text = torch.cat([text, temperature_rule(1.0)(logits[0, -1], g).reshape(1)])
    assert fast.tolist() == text[3:].tolist()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: temperature_rule(0.0), "temperature must be a finite number > 0"),
        (lambda: temperature_rule(-1.0), "temperature must be"),
        (lambda: top_k_rule(0), "k must be an int >= 1"),
        (lambda: top_k_probs(Z, 4), r"k must be an int in \[1, 3\]"),
        (lambda: nucleus_rule(0.0), r"p must be a number in \(0, 1\]"),
        (lambda: nucleus_rule(1.5), r"p must be"),
        (
            lambda: temperature_probs(torch.zeros(2, 2, 2), 1.0),
            r"shape \(V,\) or \(B, V\)",
        ),
        (lambda: greedy(torch.tensor([1, 2])), "floating-point"),
        (
            lambda: draw(temperature_probs(Z, 1.0), None),
            "generator must be a torch.Generator",
        ),
    ],
)
def test_bad_input_is_named(make, message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        make()


def test_generate_rejects_an_empty_prefix() -> None:
    model = CharLM(7, "rnn", embedding_size=4, hidden_size=8)
    with pytest.raises(ValueError, match="prefix must be a non-empty int64 tensor"):
        generate(
            model, torch.tensor([], dtype=torch.long), 3, greedy, torch.Generator()
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
    assert _draws(temperature_rule(tau), LOGITS) == _expected(
        temperature_probs(LOGITS, tau)
    )
    assert _draws(top_k_rule(2, tau), LOGITS) == _expected(top_k_probs(LOGITS, 2, tau))
    assert _draws(nucleus_rule(0.8, tau), LOGITS) == _expected(
        nucleus_probs(LOGITS, 0.8, tau)
    )
    assert set(_draws(top_k_rule(2, tau), LOGITS)) == {0, 1}


def test_top_k_rule_caps_k_at_the_vocabulary() -> None:
    assert _draws(top_k_rule(50), LOGITS) == _expected(temperature_probs(LOGITS, 1.0))
    assert _draws(top_k_rule(1), LOGITS) == [0] * 200


@pytest.mark.parametrize("k", [0, -1, 2.0, True])
def test_top_k_rule_rejects_a_bad_k_when_built(k: object) -> None:
    with pytest.raises(ValueError, match=r"^k must be an int >= 1"):
        top_k_rule(k)  # type: ignore[arg-type]


def test_rules_check_their_temperature_and_p_when_built() -> None:
    for make in (
        lambda: temperature_rule(0.0),
        lambda: top_k_rule(2, 0.0),
        lambda: nucleus_rule(0.9, -1.0),
    ):
        with pytest.raises(
            ValueError, match=r"^temperature must be a finite number > 0"
        ):
            make()
    with pytest.raises(ValueError, match=r"^p must be a number in \(0, 1\]"):
        nucleus_rule(1.5)
    assert _draws(nucleus_rule(1.0), LOGITS) == _expected(
        temperature_probs(LOGITS, 1.0)
    )


@pytest.mark.parametrize(
    "make",
    [
        lambda: temperature_probs(LOGITS, True),
        lambda: top_k_probs(LOGITS, True),
        lambda: nucleus_probs(LOGITS, True),
    ],
)
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
    # mass before the third-ranked token equals p exactly
    kept = nucleus_probs(LOGITS, float(before[2]), 1.0)
    assert (kept > 0).tolist() == [True, True, False, False, False]


def test_nucleus_breaks_ties_at_its_edge_by_position() -> None:
    # 40 tied top tokens (interleaved with lower ones) and p that keeps only some of
    # them: the kept ones are the first tied tokens by position, as a stable sort ranks
    # them (an unstable sort of 64 entries permutes ties)
    logits = torch.zeros(64)
    tied = torch.arange(0, 64)[torch.arange(64) % 8 != 7][:40]
    logits[tied] = 3.0
    probs = nucleus_probs(logits, 0.5)
    kept = probs.nonzero().flatten()
    assert 0 < len(kept) < len(tied)
    assert kept.tolist() == tied[: len(kept)].tolist()
