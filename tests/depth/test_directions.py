"""Tests for chapter_code.depth.directions: the written-out bidirectional layer and
stack against PyTorch's flags."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from chapter_code.depth.directions import (
    bidirectional_states,
    one_layer,
    stacked_states,
)


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
    # forward states before the change: unchanged
    torch.testing.assert_close(a[:, :-1, :4], b[:, :-1, :4])
    # the backward state at the start has read it
    assert (a[:, 0, 4:] - b[:, 0, 4:]).abs().max() > 1e-4


@pytest.mark.parametrize("cls", [nn.RNN, nn.LSTM])
def test_stacked_states_equal_num_layers(cls) -> None:
    torch.manual_seed(2)
    deep = cls(3, 5, num_layers=3, batch_first=True)
    x = torch.randn(2, 4, 3)
    want, _ = deep(x)
    torch.testing.assert_close(
        stacked_states(x, [one_layer(deep, k) for k in range(3)]), want
    )


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


def test_one_layer_copies_the_upper_layers_of_a_bidirectional_stack() -> None:
    # pins the width of layer 1's input: it reads both directions of layer 0, 2H
    # features (not H, not 3H)
    torch.manual_seed(3)
    deep = nn.GRU(3, 4, num_layers=2, batch_first=True, bidirectional=True)
    x = torch.randn(2, 5, 3)
    want, _ = deep(x)
    upper_fwd, upper_bwd = one_layer(deep, 1), one_layer(deep, 1, reverse=True)
    assert upper_fwd.input_size == 8
    assert upper_bwd.input_size == 8
    below = bidirectional_states(
        x, one_layer(deep, 0), one_layer(deep, 0, reverse=True)
    )
    torch.testing.assert_close(bidirectional_states(below, upper_fwd, upper_bwd), want)


def test_one_layer_keeps_the_relu_nonlinearity_of_an_rnn() -> None:
    # pins the copied nonlinearity: a relu RNN copied as a tanh one would give other
    # states
    torch.manual_seed(4)
    deep = nn.RNN(3, 4, num_layers=2, nonlinearity="relu", batch_first=True)
    assert one_layer(deep, 1).nonlinearity == "relu"
    x = torch.randn(2, 4, 3)
    want, _ = deep(x)
    torch.testing.assert_close(
        stacked_states(x, [one_layer(deep, 0), one_layer(deep, 1)]), want
    )


def test_one_layer_of_a_module_without_biases_has_none() -> None:
    # pins bias=module.bias: the copy of a bias-free LSTM must not grow bias vectors (of
    # PyTorch's random init)
    torch.manual_seed(5)
    plain = nn.LSTM(3, 4, num_layers=2, bias=False, batch_first=True)
    copy = one_layer(plain, 1)
    assert copy.bias is False
    assert sorted(name for name, _ in copy.named_parameters()) == [
        "weight_hh_l0",
        "weight_ih_l0",
    ]
    x = torch.randn(2, 4, 3)
    want, _ = plain(x)
    torch.testing.assert_close(stacked_states(x, [one_layer(plain, 0), copy]), want)


def test_one_layer_keeps_the_modules_dtype() -> None:
    # pins the cast back to the module's dtype: a float64 module gives a float64 copy.
    # (The copy is built in float32 first, so its weights equal the module's to float32
    # precision only, hence the tolerances.)
    torch.manual_seed(6)
    wide = nn.GRU(3, 4, batch_first=True, dtype=torch.float64)
    copy = one_layer(wide, 0)
    assert all(p.dtype == torch.float64 for p in copy.parameters())
    torch.testing.assert_close(
        copy.weight_hh_l0, wide.weight_hh_l0, rtol=1e-6, atol=1e-7
    )
    x = torch.randn(1, 3, 3, dtype=torch.float64)
    out = copy(x)[0]
    assert out.dtype == torch.float64
    torch.testing.assert_close(out, wide(x)[0], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize(
    "bad",
    [
        nn.GRU(
            3, 4, bidirectional=True, batch_first=True
        ),  # two directions, batch-first
        nn.GRU(3, 4),  # one direction, time-first
    ],
)
def test_bidirectional_or_time_first_modules_are_refused(bad) -> None:
    # pins each clause of the check on its own: a bidirectional module is refused even
    # when batch-first, and a time-first one even when it has one direction (the states
    # would be laid out wrongly)
    good = nn.GRU(3, 4, batch_first=True)
    with pytest.raises(ValueError, match="forward must be a one-layer"):
        bidirectional_states(torch.randn(1, 2, 3), bad, good)


def test_a_bad_backward_module_or_layer_is_named() -> None:
    # pins the names the errors carry: the backward module, and the index of the bad
    # layer of a stack
    good, two = (
        nn.GRU(3, 4, batch_first=True),
        nn.GRU(3, 4, num_layers=2, batch_first=True),
    )
    with pytest.raises(ValueError, match="^backward must be a one-layer"):
        bidirectional_states(torch.randn(1, 2, 3), good, two)
    with pytest.raises(ValueError, match=r"^layers\[1\] must be a one-layer"):
        stacked_states(torch.randn(1, 2, 3), [nn.GRU(3, 4, batch_first=True), two])
