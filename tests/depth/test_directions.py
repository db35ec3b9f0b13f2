"""Tests for chapter_code.depth.directions: the written-out bidirectional layer and stack against PyTorch's flags."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from chapter_code.depth.directions import bidirectional_states, one_layer, stacked_states


@pytest.mark.parametrize("cls", [nn.RNN, nn.GRU, nn.LSTM])
def test_bidirectional_states_equal_the_bidirectional_flag(cls) -> None:
    torch.manual_seed(0)
    both = cls(3, 4, batch_first=True, bidirectional=True)
    x = torch.randn(2, 6, 3)
    want, _ = both(x)
    got = bidirectional_states(x, one_layer(both, 0), one_layer(both, 0, reverse=True))
    torch.testing.assert_close(got, want)


def test_the_forward_half_is_causal_and_the_backward_half_is_not() -> None:
    torch.manual_seed(1)
    fwd, bwd = nn.GRU(3, 4, batch_first=True), nn.GRU(3, 4, batch_first=True)
    x = torch.randn(1, 5, 3)
    changed = x.clone()
    changed[:, -1] += 1.0  # only the last input differs
    a, b = bidirectional_states(x, fwd, bwd), bidirectional_states(changed, fwd, bwd)
    torch.testing.assert_close(a[:, :-1, :4], b[:, :-1, :4])  # forward states before the change: unchanged
    assert (a[:, 0, 4:] - b[:, 0, 4:]).abs().max() > 1e-4  # the backward state at the start has read it


@pytest.mark.parametrize("cls", [nn.RNN, nn.LSTM])
def test_stacked_states_equal_num_layers(cls) -> None:
    torch.manual_seed(2)
    deep = cls(3, 5, num_layers=3, batch_first=True)
    x = torch.randn(2, 4, 3)
    want, _ = deep(x)
    torch.testing.assert_close(stacked_states(x, [one_layer(deep, k) for k in range(3)]), want)


def test_bad_modules_are_named_errors() -> None:
    two = nn.GRU(3, 4, num_layers=2, batch_first=True)
    with pytest.raises(ValueError, match="forward must be a one-layer"):
        bidirectional_states(torch.randn(1, 2, 3), two, one_layer(two, 0))
    with pytest.raises(ValueError, match="layers must hold at least one"):
        stacked_states(torch.randn(1, 2, 3), [])
    with pytest.raises(ValueError, match="reverse=True needs a bidirectional"):
        one_layer(two, 0, reverse=True)
    with pytest.raises(ValueError, match=r"layer must be in \[0, 1\]"):
        one_layer(two, 2)
