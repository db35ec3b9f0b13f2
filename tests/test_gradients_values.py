"""Tests for chapter_code.gradients that pin what the first tests left open: defaults,
boundaries of each check, the one-step factors, and the spectral (not Frobenius) norm."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from chapter_code.gradients import (
    bptt_vanilla,
    grad_at_first_input,
    grad_norm_by_distance,
    jacobian_product_norms,
    one_unit_gradient,
    spectral_norm,
)


def test_grad_at_first_input_defaults_are_eight_sequences_seeded_from_100() -> None:
    torch.manual_seed(0)
    rec = nn.RNN(3, 4, batch_first=True)
    assert grad_at_first_input(rec, [2, 5], 3) == grad_at_first_input(rec, [2, 5], 3, batch=8, seed=100)
    assert grad_at_first_input(rec, [2], 3, batch=1)[0] > 0
    with pytest.raises(ValueError, match=r"^batch must be >= 1; got 0$"):
        grad_at_first_input(rec, [2], 3, batch=0)


def test_bptt_rejects_a_state_tensor_that_is_not_three_dimensional() -> None:
    x = torch.zeros(2, 3, 4)
    with pytest.raises(ValueError, match=r"^x and states must be \(batch, time, ·\)"):
        bptt_vanilla(x, torch.zeros(3, 5), torch.zeros(2, 5), torch.zeros(5, 4), torch.zeros(5, 5), torch.zeros(3, 5))


def test_grad_norm_by_distance_rejects_mismatched_targets() -> None:
    rnn, readout = nn.RNN(3, 4, batch_first=True), nn.Linear(4, 2)
    with pytest.raises(ValueError, match=r"^x must be \(batch, time, features\) and targets \(batch,\)"):
        grad_norm_by_distance(rnn, readout, torch.zeros(2, 5, 3), torch.zeros(3, dtype=torch.long))


def test_jacobian_product_norms_rejects_states_of_the_wrong_width() -> None:
    with pytest.raises(ValueError, match=r"^states must be \(time, 4\); got \(3, 5\)$"):
        jacobian_product_norms(torch.zeros(3, 5), torch.zeros(4, 4))


def test_one_unit_gradient_steps_boundaries() -> None:
    assert len(one_unit_gradient(0.5, 0.1, 10_000).states) == 10_001
    for bad in (True, 0, 10_001):
        with pytest.raises(ValueError, match=r"^steps must be an int in \[1, 10000\]"):
            one_unit_gradient(0.5, 0.1, bad)


def test_one_unit_gradient_factors_are_the_one_step_derivatives() -> None:
    trace = one_unit_gradient(0.8, 0.3, 3)
    assert trace.factors == pytest.approx([(1 - h * h) * 0.8 for h in trace.states[1:]])
    assert trace.factors[0] == pytest.approx((1 - math.tanh(0.3) ** 2) * 0.8)


def test_spectral_norm_is_the_largest_singular_value() -> None:
    assert spectral_norm(torch.diag(torch.tensor([3.0, -4.0]))) == pytest.approx(4.0)  # Frobenius would be 5
