"""Tests for chapter_code.truncation: the gradient gate, cuts, reach fractions, random truncation."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from chapter_code.recurrence import ElmanRNN
from chapter_code.truncation import (
    EchoRNN,
    cut_every,
    echo_stream,
    gradient_gate,
    random_gates,
    reach_fraction_by_autograd,
    reach_fraction_by_enumeration,
    run_chunks,
    unroll,
    weight_hh_gradient,
)


def test_gradient_gate_keeps_value_and_scales_gradient() -> None:
    h = torch.tensor([1.5, -2.0], dtype=torch.float64, requires_grad=True)
    out = gradient_gate(h, 0.25)
    torch.testing.assert_close(out, h.detach())
    out.sum().backward()
    torch.testing.assert_close(h.grad, torch.full((2,), 0.25, dtype=torch.float64))


def test_unroll_without_gates_is_the_elman_model() -> None:
    torch.manual_seed(0)
    model = ElmanRNN(3, 4).double()
    x = torch.randn(2, 6, 3, dtype=torch.float64)
    torch.testing.assert_close(unroll(model, x), model(x)[0])
    torch.testing.assert_close(unroll(model, x, gates=cut_every(6, 2).double()), model(x)[0])  # values unchanged


def test_cut_passes_value_but_not_gradient_and_reset_passes_neither() -> None:
    torch.manual_seed(1)
    model = ElmanRNN(2, 3).double()
    x = torch.randn(1, 6, 2, dtype=torch.float64, requires_grad=True)
    carried = unroll(model, x, gates=cut_every(6, 3).double())
    (grad,) = torch.autograd.grad(carried[0, 5].sum(), x)
    assert grad[0, :3].abs().sum() == 0
    assert grad[0, 3:].abs().sum() > 0
    bumped = x.detach().clone()
    bumped[0, 0] += 1.0
    assert (unroll(model, bumped, gates=cut_every(6, 3).double())[0, 5] - carried[0, 5]).abs().max() > 0
    reset = unroll(model, x.detach(), reset_every=3)
    torch.testing.assert_close(unroll(model, bumped, reset_every=3)[0, 3:], reset[0, 3:])


@pytest.mark.parametrize("chunk", [1, 4, 8])
def test_reach_fraction_counted_two_ways_agrees_with_the_formula(chunk: int) -> None:
    model = ElmanRNN(2, 3)
    for lag in range(chunk + 2):
        formula = max(0.0, 1 - lag / chunk)
        assert reach_fraction_by_enumeration(chunk, lag) == pytest.approx(formula)
        assert reach_fraction_by_autograd(model, chunk, lag, chunks=2) == pytest.approx(formula)


def test_random_gates_have_mean_one_and_reject_bad_p() -> None:
    gates = random_gates(20001, 0.7, torch.Generator().manual_seed(0))
    assert set(gates.unique().tolist()) <= {0.0, 1 / 0.7}
    assert gates.mean().item() == pytest.approx(1.0, abs=0.03)
    with pytest.raises(ValueError, match=r"keep_prob must be in \(0, 1\]"):
        random_gates(5, 0.0, torch.Generator())


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 1000))
def test_all_ones_random_gates_give_the_full_gradient(seed: int) -> None:
    torch.manual_seed(seed)
    model = ElmanRNN(2, 3).double()
    x = torch.randn(1, 5, 2, dtype=torch.float64)
    full = weight_hh_gradient(model, x)
    torch.testing.assert_close(weight_hh_gradient(model, x, random_gates(5, 1.0, torch.Generator()).double()), full)


def test_random_truncation_is_unbiased_on_two_steps() -> None:
    # With T = 2 there is one boundary: the estimate is either the short term alone or short + long / p.
    torch.manual_seed(3)
    model = ElmanRNN(2, 3).double()
    x = torch.randn(1, 2, 2, dtype=torch.float64)
    full = weight_hh_gradient(model, x)
    cut = weight_hh_gradient(model, x, torch.zeros(1, dtype=torch.float64))
    kept = weight_hh_gradient(model, x, torch.full((1,), 1 / 0.4, dtype=torch.float64))
    torch.testing.assert_close(0.6 * cut + 0.4 * kept, full)


def test_echo_stream_and_chunks() -> None:
    tokens, targets = echo_stream(2, 12, 4, 2, torch.Generator().manual_seed(0))
    assert (targets[:, :2] == -100).all()
    assert torch.equal(targets[:, 2:], tokens[:, :-2])
    model = EchoRNN(4, 5)
    acc = run_chunks(model, tokens, targets, chunk=4, carry=True)
    assert len(acc) == 4
    assert all(0 <= a <= 1 for a in acc)
    with pytest.raises(ValueError, match="must be a multiple of chunk"):
        run_chunks(model, tokens, targets, chunk=5, carry=False)
    with pytest.raises(ValueError, match="delay must be an int >= 1"):
        echo_stream(1, 5, 3, 0, torch.Generator())
