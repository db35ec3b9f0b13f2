"""Tests for beyond.linear_scan: the combine is associative; the scan equals the loop,
values and gradients."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from chapter_code.beyond.linear_scan import (
    InputGatedLSTM,
    MinGRU,
    combine,
    loop_linear,
    scan_linear,
    scan_rounds,
)
from chapter_code.core import runtime


@pytest.fixture(autouse=True)
def _seeded() -> None:
    runtime.seed_everything(1234)


floats = st.floats(min_value=-3, max_value=3, allow_nan=False, width=64)
pairs = st.tuples(floats, floats)


@settings(max_examples=200, deadline=None)
@given(pairs, pairs, pairs)
def test_combine_is_associative(
    p: tuple[float, float], q: tuple[float, float], r: tuple[float, float]
) -> None:
    p, q, r = [
        tuple(torch.tensor(v, dtype=torch.float64) for v in pair) for pair in (p, q, r)
    ]
    left = combine(combine(p, q), r)
    right = combine(p, combine(q, r))
    torch.testing.assert_close(left[0], right[0])
    torch.testing.assert_close(left[1], right[1])


@settings(max_examples=100, deadline=None)
@given(pairs, pairs, floats)
def test_combined_pair_is_the_two_steps(
    p: tuple[float, float], q: tuple[float, float], c: float
) -> None:
    (a1, b1), (a2, b2) = p, q
    t = lambda v: torch.tensor(v, dtype=torch.float64)  # noqa: E731
    a, b = combine((t(a1), t(b1)), (t(a2), t(b2)))
    torch.testing.assert_close(
        a * c + b, t(a2 * (a1 * c + b1) + b2), rtol=1e-9, atol=1e-9
    )


def test_combine_is_not_commutative() -> None:
    p, q = (
        (torch.tensor(0.5), torch.tensor(1.0)),
        (torch.tensor(2.0), torch.tensor(-1.0)),
    )
    assert not torch.equal(combine(p, q)[1], combine(q, p)[1])


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=1, max_value=70), st.booleans(), st.integers(0, 2**16))
def test_scan_equals_loop_for_any_length(length: int, with_c0: bool, seed: int) -> None:
    gen = torch.Generator().manual_seed(seed)
    a = torch.rand(2, length, 3, generator=gen, dtype=torch.float64) * 1.2
    b = torch.randn(2, length, 3, generator=gen, dtype=torch.float64)
    c0 = torch.randn(2, 3, generator=gen, dtype=torch.float64) if with_c0 else None
    torch.testing.assert_close(scan_linear(a, b, c0), loop_linear(a, b, c0))


def test_scan_equals_loop_at_1000_steps_values_and_gradients() -> None:
    a = torch.rand(3, 1000, 4, dtype=torch.float64).requires_grad_()
    b = torch.randn(3, 1000, 4, dtype=torch.float64).requires_grad_()
    c0 = torch.randn(3, 4, dtype=torch.float64).requires_grad_()
    weights = torch.randn(3, 1000, 4, dtype=torch.float64)
    outs, grads = [], []
    for fn in (loop_linear, scan_linear):
        c = fn(a, b, c0)
        outs.append(c)
        grads.append(torch.autograd.grad((c * weights).sum(), (a, b, c0)))
    torch.testing.assert_close(outs[0], outs[1])
    for g_loop, g_scan in zip(*grads, strict=True):
        torch.testing.assert_close(g_loop, g_scan)


def test_scan_rounds() -> None:
    assert [scan_rounds(t) for t in (1, 2, 3, 4, 5, 1000, 1024, 1025)] == [
        0,
        1,
        2,
        2,
        3,
        10,
        10,
        11,
    ]


@pytest.mark.parametrize("bad", [0, -3, 2.0, "8"])
def test_scan_rounds_rejects_bad_length(bad: object) -> None:
    with pytest.raises(ValueError, match="length must be an int >= 1"):
        scan_rounds(bad)  # type: ignore[arg-type]


def test_bad_shapes_are_named() -> None:
    a = torch.rand(2, 5, 3)
    with pytest.raises(ValueError, match="a and b must have the same shape"):
        scan_linear(a, torch.rand(2, 5, 4))
    with pytest.raises(ValueError, match=r"a must be \(batch, time, features\)"):
        loop_linear(torch.rand(5, 3), torch.rand(5, 3))
    with pytest.raises(ValueError, match="time axis"):
        scan_linear(torch.rand(2, 0, 3), torch.rand(2, 0, 3))
    with pytest.raises(ValueError, match="c0 must be"):
        scan_linear(a, a, torch.zeros(3))


def test_min_gru_parallel_equals_sequential_and_the_formula() -> None:
    net = MinGRU(5, 6).double()
    x = torch.randn(2, 33, 5, dtype=torch.float64)
    h0 = torch.randn(2, 6, dtype=torch.float64)
    par, seq = net(x, h0, parallel=True), net(x, h0, parallel=False)
    torch.testing.assert_close(par, seq)
    h = h0  # the equations written out once more, step by step
    for t in range(x.shape[1]):
        z = torch.sigmoid(net.gate(x[:, t]))
        h = (1 - z) * h + z * net.candidate(x[:, t])
        torch.testing.assert_close(par[:, t], h)


def test_input_gated_lstm_is_the_lstm_with_zero_recurrent_weights() -> None:
    net = InputGatedLSTM(4, 5).double()
    ref = nn.LSTM(4, 5, batch_first=True).double()
    with torch.no_grad():
        ref.weight_ih_l0.copy_(net.blocks.weight)
        ref.bias_ih_l0.copy_(net.blocks.bias)
        ref.weight_hh_l0.zero_()
        ref.bias_hh_l0.zero_()
    x = torch.randn(3, 40, 4, dtype=torch.float64)
    torch.testing.assert_close(net(x), ref(x)[0])
    torch.testing.assert_close(net(x, parallel=False), ref(x)[0])


@pytest.mark.parametrize("cls", [MinGRU, InputGatedLSTM])
def test_cells_reject_bad_sizes(cls: type) -> None:
    with pytest.raises(ValueError, match="hidden_size must be an int >= 1"):
        cls(3, 0)


@pytest.mark.parametrize("cls", [MinGRU, InputGatedLSTM])
def test_cells_name_the_bad_size_and_accept_size_one(cls: type) -> None:
    with pytest.raises(ValueError, match="^input_size must be an int >= 1; got 0"):
        cls(0, 3)
    with pytest.raises(ValueError, match="^hidden_size must be an int >= 1; got 2.0"):
        cls(3, 2.0)
    assert cls(1, 1)(torch.ones(2, 3, 1)).shape == (2, 3, 1)


def test_scan_and_loop_with_one_step_and_a_start_state() -> None:
    a, b, c0 = torch.tensor([[[0.5]]]), torch.tensor([[[2.0]]]), torch.tensor([[4.0]])
    for fn in (loop_linear, scan_linear):
        assert fn(a, b, c0).item() == 0.5 * 4.0 + 2.0
        assert fn(a, b).item() == 2.0


@pytest.mark.parametrize("cls", [MinGRU, InputGatedLSTM])
def test_cells_scan_by_default_and_loop_on_request(
    cls: type, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chapter_code.beyond import linear_scan

    calls = []
    for name in ("scan_linear", "loop_linear"):
        original = getattr(linear_scan, name)
        monkeypatch.setattr(
            linear_scan,
            name,
            lambda *args, _f=original, _n=name: calls.append(_n) or _f(*args),
        )
    net = cls(2, 3)
    x = torch.randn(1, 4, 2)
    net(x)
    net(x, parallel=False)
    net(x, parallel=True)
    assert calls == ["scan_linear", "loop_linear", "scan_linear"]


def test_loop_checks_its_start_state_and_the_cell_keeps_its_width() -> None:
    a = torch.rand(2, 5, 3)
    with pytest.raises(
        ValueError, match=r"^c0 must be \(batch, features\) = \(2, 3\); got \(3,\)"
    ):
        loop_linear(a, a, torch.zeros(3))
    assert InputGatedLSTM(4, 5).hidden_size == 5
