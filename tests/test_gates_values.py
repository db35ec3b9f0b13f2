"""Tests for chapter_code.gates that pin values: effective biases with both bias vectors
nonzero, every layer and gate, the functions only the pages call (the step-Jacobian norms
against autograd through PyTorch's own cells, the 1997 no-forget cell written out), and the
demos' exact values and boundaries."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from chapter_code.gates import (
    LSTMScratch,
    NoForgetLSTM,
    direct_path_and_full_jacobian,
    effective_gate_bias,
    forget_power,
    gate_index,
    gru_loop,
    keep_dial,
    output_gate_demo,
    set_gate_bias,
    step_jacobian_norms,
)

CELLS = {"lstm": ("i", "f", "g", "o"), "gru": ("r", "z", "n")}


def _randomise_biases(module: nn.Module) -> None:
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name.startswith("bias"):
                p.copy_(torch.randn_like(p))


@pytest.mark.parametrize(
    ("make", "cell", "suffix"),
    [
        (lambda: nn.LSTM(3, 4), "lstm", "_l0"),
        (lambda: nn.GRU(3, 4), "gru", "_l0"),
        (lambda: nn.LSTMCell(3, 4), "lstm", ""),
        (lambda: nn.GRUCell(3, 4), "gru", ""),
        (lambda: LSTMScratch(3, 4), "lstm", ""),
    ],
)
def test_effective_bias_is_the_sum_of_both_vectors_per_gate(make, cell: str, suffix: str) -> None:
    torch.manual_seed(0)
    module = make()
    _randomise_biases(module)
    total = getattr(module, "bias_ih" + suffix) + getattr(module, "bias_hh" + suffix)
    for k, gate in enumerate(CELLS[cell]):
        assert gate_index(cell, gate) == k
        torch.testing.assert_close(effective_gate_bias(module, cell, gate), total[4 * k : 4 * k + 4].detach())


def test_set_gate_bias_sets_every_layer_and_only_that_gate() -> None:
    torch.manual_seed(0)
    lstm = nn.LSTM(3, 4, num_layers=2)
    _randomise_biases(lstm)
    before = {n: p.detach().clone() for n, p in lstm.named_parameters()}
    set_gate_bias(lstm, "lstm", "o", 2.5)
    for layer in (0, 1):
        ih, hh = getattr(lstm, f"bias_ih_l{layer}"), getattr(lstm, f"bias_hh_l{layer}")
        assert torch.equal(ih[12:16], torch.full((4,), 2.5))
        assert torch.equal(hh[12:16], torch.zeros(4))
        assert torch.equal(ih[:12], before[f"bias_ih_l{layer}"][:12])
        assert torch.equal(hh[:12], before[f"bias_hh_l{layer}"][:12])
    for name in ("weight_ih_l0", "weight_hh_l1"):
        assert torch.equal(getattr(lstm, name), before[name])


def test_set_gate_bias_errors() -> None:
    with pytest.raises(TypeError, match="^module must be an nn.LSTM"):
        set_gate_bias(nn.RNN(2, 3), "lstm", "f", 1.0)
    with pytest.raises(ValueError, match="^module has no bias vectors"):
        set_gate_bias(nn.GRU(2, 3, bias=False), "gru", "z", 1.0)
    with pytest.raises(ValueError, match="^cell='gru' does not match"):
        set_gate_bias(LSTMScratch(2, 3), "gru", "z", 1.0)
    gru = nn.GRUCell(2, 3)
    set_gate_bias(gru, "gru", "z", -1.0)
    torch.testing.assert_close(effective_gate_bias(gru, "gru", "z"), torch.full((3,), -1.0))


@pytest.mark.parametrize(("args", "name"), [((0, 3), "input_size"), ((2, 0), "hidden_size")])
def test_lstm_scratch_names_bad_sizes(args: tuple[int, int], name: str) -> None:
    with pytest.raises(ValueError, match=rf"^{name} must be a positive int; got 0$"):
        LSTMScratch(*args)


def test_lstm_scratch_initialisation_spans_the_default_range() -> None:
    torch.manual_seed(0)
    values = torch.cat([p.detach().flatten() for p in LSTMScratch(4, 16).parameters()])
    bound = 1 / math.sqrt(16)
    assert values.abs().max() <= bound
    assert values.max() > 0.9 * bound
    assert values.min() < -0.9 * bound


def test_lstm_scratch_without_state_starts_from_zeros() -> None:
    torch.manual_seed(0)
    model = LSTMScratch(3, 4).double()
    x = torch.randn(2, 5, 3, dtype=torch.float64)
    zeros = torch.zeros(2, 4, dtype=torch.float64)
    out, (h, c) = model(x)
    out_z, (h_z, c_z) = model(x, (zeros, zeros))
    torch.testing.assert_close(out, out_z)
    torch.testing.assert_close(c, c_z)
    ref = nn.LSTM(3, 4, batch_first=True).double()
    with torch.no_grad():
        for n in ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]:
            getattr(ref, n + "_l0").copy_(getattr(model, n))
    ref_out, (ref_h, ref_c) = ref(x)
    torch.testing.assert_close(out, ref_out)
    torch.testing.assert_close(c, ref_c[0])


def test_gru_loop_starts_from_h0_when_given() -> None:
    torch.manual_seed(0)
    cell = nn.GRUCell(2, 3).double()
    x = torch.randn(2, 4, 2, dtype=torch.float64)
    h0 = torch.randn(2, 3, dtype=torch.float64)
    states, last = gru_loop(x, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh, True, h0=h0)
    h = h0
    for t in range(4):
        h = cell(x[:, t], h)
        torch.testing.assert_close(states[:, t], h)
    torch.testing.assert_close(last, h)


def _autograd_norms(cell: nn.Module, x: torch.Tensor, lstm: bool) -> list[float]:
    hidden = cell.hidden_size
    norms = []
    if not lstm:
        h = torch.zeros(1, hidden, dtype=torch.float64)
        for t in range(x.shape[0]):
            jac = torch.autograd.functional.jacobian(lambda s, t=t: cell(x[t : t + 1], s), h)
            norms.append(torch.linalg.matrix_norm(jac.reshape(hidden, hidden), ord=2).item())
            h = cell(x[t : t + 1], h).detach()
        return norms
    state = torch.zeros(1, 2 * hidden, dtype=torch.float64)

    def step(s: torch.Tensor, t: int) -> torch.Tensor:
        return torch.cat(cell(x[t : t + 1], (s[:, :hidden], s[:, hidden:])), dim=1)

    for t in range(x.shape[0]):
        jac = torch.autograd.functional.jacobian(lambda s, t=t: step(s, t), state)
        norms.append(torch.linalg.matrix_norm(jac.reshape(2 * hidden, 2 * hidden), ord=2).item())
        state = step(state, t).detach()
    return norms


@pytest.mark.parametrize("kind", ["gru", "lstm"])
def test_step_jacobian_norms_match_autograd_through_pytorchs_cells(kind: str) -> None:
    torch.manual_seed(0)
    rec = (nn.GRU if kind == "gru" else nn.LSTM)(3, 4)
    _randomise_biases(rec)
    cell = (nn.GRUCell if kind == "gru" else nn.LSTMCell)(3, 4).double()
    with torch.no_grad():
        for n in ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]:
            getattr(cell, n).copy_(getattr(rec, n + "_l0"))
    x = torch.randn(5, 3)
    norms = step_jacobian_norms(rec, x)
    expected = _autograd_norms(cell, x.double(), lstm=kind == "lstm")
    assert len(norms) == 5
    assert norms == pytest.approx(expected, rel=1e-9)
    assert len(set(round(n, 9) for n in norms)) == 5  # the trajectory moves: each step has its own norm


def test_step_jacobian_norms_reject_other_modules_and_shapes() -> None:
    for bad in (nn.RNN(3, 4), nn.GRU(3, 4, num_layers=2), nn.LSTM(3, 4, bidirectional=True)):
        with pytest.raises(ValueError, match="^rec must be a one-layer, unidirectional"):
            step_jacobian_norms(bad, torch.zeros(2, 3))
    with pytest.raises(ValueError, match=r"^x must have shape \(time, 3\)"):
        step_jacobian_norms(nn.GRU(3, 4), torch.zeros(2, 4))
    with pytest.raises(ValueError, match=r"^x must have shape \(time, 3\)"):
        step_jacobian_norms(nn.GRU(3, 4), torch.zeros(1, 2, 3))


def _no_forget_reference(model: NoForgetLSTM, x: torch.Tensor, h: torch.Tensor, c: torch.Tensor):
    hidden = model.hidden_size
    w_ih, w_hh = model.weight_ih, model.weight_hh
    b = model.bias_ih + model.bias_hh
    outs = []
    for t in range(x.shape[1]):
        pre = x[:, t] @ w_ih.T + h @ w_hh.T + b
        i = torch.sigmoid(pre[:, :hidden])
        g = torch.tanh(pre[:, 2 * hidden : 3 * hidden])
        o = torch.sigmoid(pre[:, 3 * hidden :])
        c = c + i * g
        h = o * torch.tanh(c)
        outs.append(h)
    return torch.stack(outs, dim=1), h, c


def test_no_forget_lstm_adds_to_its_cell_and_ignores_the_forget_block() -> None:
    torch.manual_seed(0)
    model = NoForgetLSTM(3, 4).double()
    x = torch.randn(2, 6, 3, dtype=torch.float64)
    h0, c0 = torch.randn(2, 4, dtype=torch.float64), torch.randn(2, 4, dtype=torch.float64)
    out, (h, c) = model(x, (h0, c0))
    ref_out, ref_h, ref_c = _no_forget_reference(model, x, h0, c0)
    torch.testing.assert_close(out, ref_out)
    torch.testing.assert_close(h, ref_h)
    torch.testing.assert_close(c, ref_c)
    zeros = torch.zeros(2, 4, dtype=torch.float64)
    out0, (h0_, c0_) = model(x)
    ref_out0, _, ref_c0 = _no_forget_reference(model, x, zeros, zeros)
    torch.testing.assert_close(out0, ref_out0)
    torch.testing.assert_close(c0_, ref_c0)
    with torch.no_grad():
        model.weight_ih[4:8].add_(5.0)
        model.bias_ih[4:8].add_(5.0)
    torch.testing.assert_close(model(x)[0], out0)
    with pytest.raises(ValueError, match=r"^x must have shape \(batch, time, 3\)"):
        model(torch.zeros(2, 6, 4, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"^x must have shape"):
        model(torch.zeros(6, 3, dtype=torch.float64))


def test_output_gate_demo_values_and_boundaries() -> None:
    gates, cells, hiddens = output_gate_demo()
    assert gates.tolist() == [1.0] * 5 + [0.5] * 5 + [0.0] * 5 + [1.0] * 5
    torch.testing.assert_close(cells, torch.ones(20))
    torch.testing.assert_close(hiddens, gates * math.tanh(1.0))
    gates, cells, hiddens = output_gate_demo(c0=-0.5, openings=(0.0, 1.0), steps_each=1)
    assert gates.tolist() == [0.0, 1.0]
    torch.testing.assert_close(hiddens, torch.tensor([0.0, math.tanh(-0.5)]))
    for bad in (0, 1.5):
        with pytest.raises(ValueError, match="^steps_each must be an int >= 1"):
            output_gate_demo(steps_each=bad)  # type: ignore[arg-type]
    for bad_openings in ((), (-0.1,), (1.1,)):
        with pytest.raises(ValueError, match="^openings must be a non-empty sequence"):
            output_gate_demo(openings=bad_openings)


def test_forget_power_values_and_boundaries() -> None:
    powers = forget_power([0.0, 2.0], steps=1)
    s = 1 / (1 + math.exp(-2.0))
    assert powers.shape == (2, 1)
    assert powers[:, 0].tolist() == pytest.approx([0.5, s])
    assert forget_power([2.0], steps=3)[0].tolist() == pytest.approx([s, s**2, s**3])
    with pytest.raises(ValueError, match="^steps must be an int >= 1"):
        forget_power([0.0], steps=1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="^biases must hold at least one value"):
        forget_power([], steps=2)


def test_direct_path_products_and_diagonals_by_hand() -> None:
    torch.manual_seed(0)
    cell = nn.LSTMCell(3, 4).double()
    x = torch.randn(3, 3, dtype=torch.float64)
    c0 = torch.randn(4, dtype=torch.float64)
    products, diagonals = direct_path_and_full_jacobian(cell, x, c0)
    # By hand with PyTorch's cell: the forget gates along the trajectory, and autograd for dc_k/dc_0.
    c_start = c0.reshape(1, 4).clone().requires_grad_(True)
    h, c = torch.zeros(1, 4, dtype=torch.float64), c_start
    running = torch.ones(4, dtype=torch.float64)
    for t in range(3):
        pre = x[t : t + 1] @ cell.weight_ih.T + h @ cell.weight_hh.T + cell.bias_ih + cell.bias_hh
        running = running * torch.sigmoid(pre[0, 4:8]).detach()
        h, c = cell(x[t : t + 1], (h, c))
        torch.testing.assert_close(products[t], running)
        diag = torch.stack([torch.autograd.grad(c[0, j], c_start, retain_graph=True)[0][0, j] for j in range(4)])
        torch.testing.assert_close(diagonals[t], diag)
    with pytest.raises(ValueError, match=r"^x must have shape \(time, 3\)"):
        direct_path_and_full_jacobian(cell, torch.randn(2, 4, dtype=torch.float64), c0)


def test_keep_dial_parts_and_boundaries() -> None:
    assert keep_dial(0.8, -0.2, 0.25) == pytest.approx((0.2, -0.15, 0.05))
    assert keep_dial(0.8, -0.2, 0.0) == pytest.approx((0.0, -0.2, -0.2))
    assert keep_dial(0.8, -0.2, 1.0) == pytest.approx((0.8, 0.0, 0.8))
    for bad in (-0.01, 1.01):
        with pytest.raises(ValueError, match=r"^keep must be in \[0, 1\]"):
            keep_dial(0.0, 0.0, bad)


def test_forget_power_is_computed_in_float64() -> None:
    powers = forget_power([2.0, -0.5], steps=3)
    assert powers.dtype == torch.float64
    f = torch.sigmoid(torch.tensor([2.0, -0.5], dtype=torch.float64))
    torch.testing.assert_close(powers, torch.stack([f, f**2, f**3], dim=1), rtol=1e-15, atol=0)  # float32 errs ~1e-8


def test_lstm_scratch_size_boundaries() -> None:
    assert LSTMScratch(1, 1).weight_hh.shape == (4, 1)
    with pytest.raises(ValueError, match=r"^input_size must be a positive int; got True$"):
        LSTMScratch(True, 3)  # type: ignore[arg-type]


@pytest.mark.parametrize("kwargs", [{"bias": False}, {"bidirectional": True}, {"num_layers": 2}, {"proj_size": 2}])
def test_lstm_scratch_from_torch_rejects_each_unsupported_option(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="^lstm must be a one-layer, unidirectional nn.LSTM"):
        LSTMScratch.from_torch(nn.LSTM(2, 3, **kwargs))
