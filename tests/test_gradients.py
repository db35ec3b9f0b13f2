"""Tests for chapter_code.gradients."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from chapter_code.gradients import grad_at_first_input


def test_grad_at_first_input_matches_a_direct_autograd_computation() -> None:
    torch.manual_seed(0)
    rnn = nn.RNN(3, 5, batch_first=True).double()
    (ours,) = grad_at_first_input(rnn, [4], input_size=3, batch=2, seed=7)
    x = torch.randn(2, 4, 3, generator=torch.Generator().manual_seed(11)).double().requires_grad_(True)
    out, _ = rnn(x)
    out[:, -1].sum().backward()
    assert ours == pytest.approx(x.grad[:, 0].norm().item(), rel=1e-12)


def test_grad_at_first_input_consumes_no_global_randomness() -> None:
    rnn = nn.RNN(2, 3, batch_first=True)
    torch.manual_seed(5)
    grad_at_first_input(rnn, [1, 3], input_size=2)
    after = torch.rand(1)
    torch.manual_seed(5)
    assert torch.equal(torch.rand(1), after)


@pytest.mark.parametrize("lags", [[], [0], [2, -1]])
def test_grad_at_first_input_rejects_bad_lags(lags: list[int]) -> None:
    with pytest.raises(ValueError, match="lags must be a non-empty sequence of ints >= 1"):
        grad_at_first_input(nn.RNN(2, 3, batch_first=True), lags, input_size=2)
