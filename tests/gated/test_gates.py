"""Tests for chapter_code.gated.gates: hand-written LSTM and GRU against PyTorch, the
gate-bias helper, demos.

Tests for chapter_code.gated.gates that pin values: effective biases with both bias
vectors nonzero, every layer and gate, the functions only the pages call (the
step-Jacobian norms against autograd through PyTorch's own cells, the 1997 no-forget
cell written out), and the demos' exact values and boundaries.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from chapter_code.core import runtime
from chapter_code.gated.gates import (
    GATE_ORDER,
    LSTMScratch,
    NoForgetLSTM,
    direct_path_and_full_jacobian,
    effective_gate_bias,
    forget_power,
    gate_index,
    gru_loop,
    gru_step,
    keep_dial,
    lstm_cell_step,
    output_gate_demo,
    set_gate_bias,
    step_jacobian_norms,
)


@pytest.fixture(autouse=True)
def _seeded() -> None:
    runtime.seed_everything(4321)


def test_lstm_step_matches_lstmcell_with_copied_weights() -> None:
    cell = nn.LSTMCell(5, 7).double()
    x = torch.randn(3, 5, dtype=torch.float64)
    h, c = (
        torch.randn(3, 7, dtype=torch.float64),
        torch.randn(3, 7, dtype=torch.float64),
    )
    ours = lstm_cell_step(
        x, h, c, cell.weight_ih, cell.weight_hh, cell.bias_ih + cell.bias_hh
    )
    ref = cell(x, (h, c))
    torch.testing.assert_close(ours[0], ref[0])
    torch.testing.assert_close(ours[1], ref[1])


def test_lstm_scratch_matches_nn_lstm_outputs_and_gradients() -> None:
    ref = nn.LSTM(4, 6, batch_first=True).double()
    ours = LSTMScratch.from_torch(ref)
    assert ours.weight_hh.dtype == torch.float64
    x = torch.randn(3, 9, 4, dtype=torch.float64)
    h0, c0 = (
        torch.randn(3, 6, dtype=torch.float64),
        torch.randn(3, 6, dtype=torch.float64),
    )
    out_ref, (h_ref, c_ref) = ref(x, (h0.unsqueeze(0), c0.unsqueeze(0)))
    out, (h, c) = ours(x, (h0, c0))
    torch.testing.assert_close(out, out_ref)
    torch.testing.assert_close(h, h_ref[0])
    torch.testing.assert_close(c, c_ref[0])
    (out_ref.square().sum() + c_ref.sum()).backward()
    (out.square().sum() + c.sum()).backward()
    for name in ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]:
        torch.testing.assert_close(
            getattr(ours, name).grad, getattr(ref, name + "_l0").grad
        )


def test_lstm_scratch_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="hidden_size must be a positive int"):
        LSTMScratch(3, 0)
    with pytest.raises(ValueError, match=r"x must have shape \(batch, time, 3\)"):
        LSTMScratch(3, 4)(torch.randn(2, 5, 2))
    with pytest.raises(ValueError, match="one-layer"):
        LSTMScratch.from_torch(nn.LSTM(3, 4, num_layers=2))


def _gru_weights(gru: nn.GRU) -> tuple[torch.Tensor, ...]:
    return gru.weight_ih_l0, gru.weight_hh_l0, gru.bias_ih_l0, gru.bias_hh_l0


def test_gru_reset_after_matches_grucell_and_nn_gru() -> None:
    cell = nn.GRUCell(4, 5).double()
    x, h = (
        torch.randn(3, 4, dtype=torch.float64),
        torch.randn(3, 5, dtype=torch.float64),
    )
    ours = gru_step(
        x,
        h,
        cell.weight_ih,
        cell.weight_hh,
        cell.bias_ih,
        cell.bias_hh,
        reset_after=True,
    )
    torch.testing.assert_close(ours, cell(x, h))
    gru = nn.GRU(4, 5, batch_first=True).double()
    xs = torch.randn(2, 8, 4, dtype=torch.float64)
    ref, last = gru(xs)
    states, h_last = gru_loop(xs, *_gru_weights(gru), reset_after=True)
    torch.testing.assert_close(states, ref)
    torch.testing.assert_close(h_last, last[0])


def test_gru_conventions_differ_for_same_weights_but_agree_when_reset_is_open() -> None:
    gru = nn.GRU(3, 4, batch_first=True).double()
    xs = torch.randn(2, 6, 3, dtype=torch.float64)
    before, _ = gru_loop(xs, *_gru_weights(gru), reset_after=False)
    after, _ = gru_loop(xs, *_gru_weights(gru), reset_after=True)
    assert (before - after).abs().max() > 1e-4
    # With the reset gate saturated at 1 the two candidates are the same expression.
    set_gate_bias(gru, "gru", "r", 60.0)
    before, _ = gru_loop(xs, *_gru_weights(gru), reset_after=False)
    after, _ = gru_loop(xs, *_gru_weights(gru), reset_after=True)
    torch.testing.assert_close(before, after)


def test_gru_reset_before_matches_cho_equations_written_separately() -> None:
    h_size, f_size = 3, 2
    w = {k: torch.randn(h_size, f_size, dtype=torch.float64) for k in "rzn"}
    u = {k: torch.randn(h_size, h_size, dtype=torch.float64) for k in "rzn"}
    b = {k: torch.randn(h_size, dtype=torch.float64) for k in "rzn"}
    x, h = (
        torch.randn(1, f_size, dtype=torch.float64),
        torch.rand(1, h_size, dtype=torch.float64),
    )
    r = torch.sigmoid(x @ w["r"].T + h @ u["r"].T + b["r"])
    keep = torch.sigmoid(x @ w["z"].T + h @ u["z"].T + b["z"])
    cand = torch.tanh(x @ w["n"].T + (r * h) @ u["n"].T + b["n"])
    expected = keep * h + (1 - keep) * cand
    weight_ih = torch.cat([w[k] for k in "rzn"])
    weight_hh = torch.cat([u[k] for k in "rzn"])
    bias_ih = torch.cat([b[k] for k in "rzn"])
    got = gru_step(
        x,
        h,
        weight_ih,
        weight_hh,
        bias_ih,
        torch.zeros_like(bias_ih),
        reset_after=False,
    )
    torch.testing.assert_close(got, expected)


@settings(max_examples=40, deadline=None)
@given(
    scale=st.floats(min_value=0.1, max_value=20.0),
    steps=st.integers(min_value=1, max_value=12),
    seed=st.integers(min_value=0, max_value=10_000),
    reset_after=st.booleans(),
)
def test_gru_state_stays_inside_minus_one_one(
    scale: float, steps: int, seed: int, reset_after: bool
) -> None:
    gen = torch.Generator().manual_seed(seed)
    h_size, f_size = 4, 3
    weights = [
        scale * torch.randn(3 * h_size, n, generator=gen, dtype=torch.float64)
        for n in (f_size, h_size)
    ]
    biases = [
        scale * torch.randn(3 * h_size, generator=gen, dtype=torch.float64)
        for _ in range(2)
    ]
    xs = scale * torch.randn(2, steps, f_size, generator=gen, dtype=torch.float64)
    h0 = 2 * torch.rand(2, h_size, generator=gen, dtype=torch.float64) - 1
    states, _ = gru_loop(
        xs, weights[0], weights[1], biases[0], biases[1], reset_after, h0=h0 * 0.999
    )
    # In exact arithmetic the bound is strict; float64 tanh rounds to exactly 1 beyond
    # about 19.
    assert states.abs().max() <= 1.0
    if scale <= 1.0:
        assert states.abs().max() < 1.0


def test_set_gate_bias_sets_the_sum_and_leaves_other_gates_alone() -> None:
    lstm = nn.LSTM(3, 5, num_layers=2)
    before = {n: p.detach().clone() for n, p in lstm.named_parameters()}
    set_gate_bias(lstm, "lstm", "f", 1.0)
    torch.testing.assert_close(effective_gate_bias(lstm, "lstm", "f"), torch.ones(5))
    torch.testing.assert_close(
        lstm.bias_ih_l1[5:10] + lstm.bias_hh_l1[5:10], torch.ones(5)
    )
    for gate in ["i", "g", "o"]:
        k = gate_index("lstm", gate)
        torch.testing.assert_close(
            lstm.bias_ih_l0[5 * k : 5 * k + 5], before["bias_ih_l0"][5 * k : 5 * k + 5]
        )
    gru = nn.GRUCell(2, 4)
    set_gate_bias(gru, "gru", "z", 2.0)
    torch.testing.assert_close(
        effective_gate_bias(gru, "gru", "z"), torch.full((4,), 2.0)
    )
    scratch = LSTMScratch(2, 3)
    set_gate_bias(scratch, "lstm", "f", -1.0)
    torch.testing.assert_close(
        effective_gate_bias(scratch, "lstm", "f"), torch.full((3,), -1.0)
    )


def test_gate_order_is_pytorchs() -> None:
    assert GATE_ORDER == {"lstm": ("i", "f", "g", "o"), "gru": ("r", "z", "n")}


def test_set_gate_bias_refuses_unknown_names_and_mismatches() -> None:
    lstm = nn.LSTM(2, 3)
    with pytest.raises(
        ValueError, match=r"cell must be one of \['gru', 'lstm'\]; got 'lsmt'"
    ):
        set_gate_bias(lstm, "lsmt", "f", 1.0)
    with pytest.raises(
        ValueError,
        match=r"gate must be one of \['i', 'f', 'g', 'o'\] for cell 'lstm'; got 'u'",
    ):
        set_gate_bias(lstm, "lstm", "u", 1.0)
    with pytest.raises(ValueError, match="does not match the module"):
        set_gate_bias(lstm, "gru", "z", 1.0)
    with pytest.raises(TypeError, match="module must be"):
        set_gate_bias(nn.RNN(2, 3), "lstm", "f", 1.0)
    with pytest.raises(ValueError, match="no bias"):
        set_gate_bias(nn.GRU(2, 3, bias=False), "gru", "z", 1.0)


def test_forget_power_and_output_gate_demo() -> None:
    powers = forget_power([-2.0, 0.0, 1.0], steps=80)
    assert powers.shape == (3, 80)
    torch.testing.assert_close(powers[1, 9], torch.tensor(0.5**10, dtype=torch.float64))
    assert bool((powers[:, 1:] < powers[:, :-1]).all())
    gates, cells, hiddens = output_gate_demo(
        c0=0.8, openings=(1.0, 0.0, 1.0), steps_each=2
    )
    torch.testing.assert_close(cells, torch.full((6,), 0.8))
    torch.testing.assert_close(hiddens, gates * torch.tanh(torch.tensor(0.8)))
    with pytest.raises(ValueError, match="steps must be an int >= 1"):
        forget_power([0.0], steps=0)
    with pytest.raises(ValueError, match=r"openings must be .* in \[0, 1\]"):
        output_gate_demo(openings=(1.5,))


def test_direct_path_is_exact_for_one_step_and_only_part_of_the_jacobian_later() -> (
    None
):
    cell = nn.LSTMCell(3, 4).double()
    x = torch.randn(6, 3, dtype=torch.float64)
    products, diagonals = direct_path_and_full_jacobian(
        cell, x, torch.randn(4, dtype=torch.float64)
    )
    assert products.shape == diagonals.shape == (6, 4)
    # h_0 = 0 does not depend on c_0
    torch.testing.assert_close(products[0], diagonals[0])
    # later steps add paths through h
    assert (products[1:] - diagonals[1:]).abs().max() > 1e-6
    with pytest.raises(ValueError, match=r"x must have shape \(time, 3\)"):
        direct_path_and_full_jacobian(cell, torch.randn(2, 5, 3), torch.zeros(4))


def test_keep_dial_blends_on_the_segment_and_matches_the_gru_update() -> None:
    from chapter_code.gated.figures import plot_keep_dial
    from chapter_code.gated.gates import keep_dial

    kept, written, new = keep_dial(0.80, 0.30, 0.5)
    assert abs(kept - 0.40) < 1e-12
    assert abs(written - 0.15) < 1e-12
    assert abs(new - 0.55) < 1e-12
    assert keep_dial(0.80, 0.30, 1.0)[2] == 0.80  # full keep: the old state
    # keep nothing: overwritten by the candidate
    assert keep_dial(0.80, 0.30, 0.0)[2] == 0.30
    for u in [0.1, 0.37, 0.9]:
        assert 0.30 <= keep_dial(0.80, 0.30, u)[2] <= 0.80
        # the same blend as the last line of the GRU step, u * h + (1 - u) * n
        h, n = torch.tensor([0.80]), torch.tensor([0.30])
        assert abs((u * h + (1 - u) * n).item() - keep_dial(0.80, 0.30, u)[2]) < 1e-6
    with pytest.raises(ValueError, match=r"keep must be in \[0, 1\]"):
        keep_dial(0.8, 0.3, 1.5)
    fig = plot_keep_dial(0.80, 0.30, 0.5, n=11)
    assert fig.axes[0].get_xlabel().startswith("keep value")
    with pytest.raises(ValueError, match="n must be >= 2"):
        plot_keep_dial(0.80, 0.30, 0.5, n=1)


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_cell_diagrams_draw_their_gates(cell: str) -> None:
    from chapter_code.gated.figures import draw_cell_diagram

    fig = draw_cell_diagram(cell)
    texts = " ".join(t.get_text() for t in fig.axes[0].texts)
    for symbol in (
        ["$f_t$", "$i_t$", "$g_t$", "$o_t$", "$c_t$"]
        if cell == "lstm"
        else ["$r_t$", "$u_t$", "$h_t$"]
    ):
        assert symbol in texts, (symbol, texts)
    # boxes and pointwise operations
    assert len(fig.axes[0].patches) >= (8 if cell == "lstm" else 7)


def test_cell_diagram_rejects_unknown_cells() -> None:
    from chapter_code.gated.figures import draw_cell_diagram

    with pytest.raises(ValueError, match=r"cell must be one of \['gru', 'lstm'\]"):
        draw_cell_diagram("rnn")


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
def test_effective_bias_is_the_sum_of_both_vectors_per_gate(
    make, cell: str, suffix: str
) -> None:
    torch.manual_seed(0)
    module = make()
    _randomise_biases(module)
    total = getattr(module, "bias_ih" + suffix) + getattr(module, "bias_hh" + suffix)
    for k, gate in enumerate(CELLS[cell]):
        assert gate_index(cell, gate) == k
        torch.testing.assert_close(
            effective_gate_bias(module, cell, gate), total[4 * k : 4 * k + 4].detach()
        )


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
    torch.testing.assert_close(
        effective_gate_bias(gru, "gru", "z"), torch.full((3,), -1.0)
    )


@pytest.mark.parametrize(
    ("args", "name"), [((0, 3), "input_size"), ((2, 0), "hidden_size")]
)
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
    states, last = gru_loop(
        x, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh, True, h0=h0
    )
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
            jac = torch.autograd.functional.jacobian(
                lambda s, t=t: cell(x[t : t + 1], s), h
            )
            norms.append(
                torch.linalg.matrix_norm(jac.reshape(hidden, hidden), ord=2).item()
            )
            h = cell(x[t : t + 1], h).detach()
        return norms
    state = torch.zeros(1, 2 * hidden, dtype=torch.float64)

    def step(s: torch.Tensor, t: int) -> torch.Tensor:
        return torch.cat(cell(x[t : t + 1], (s[:, :hidden], s[:, hidden:])), dim=1)

    for t in range(x.shape[0]):
        jac = torch.autograd.functional.jacobian(lambda s, t=t: step(s, t), state)
        norms.append(
            torch.linalg.matrix_norm(jac.reshape(2 * hidden, 2 * hidden), ord=2).item()
        )
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
    # the trajectory moves: each step has its own norm
    assert len(set(round(n, 9) for n in norms)) == 5


def test_step_jacobian_norms_reject_other_modules_and_shapes() -> None:
    for bad in (
        nn.RNN(3, 4),
        nn.GRU(3, 4, num_layers=2),
        nn.LSTM(3, 4, bidirectional=True),
    ):
        with pytest.raises(
            ValueError, match="^rec must be a one-layer, unidirectional"
        ):
            step_jacobian_norms(bad, torch.zeros(2, 3))
    with pytest.raises(ValueError, match=r"^x must have shape \(time, 3\)"):
        step_jacobian_norms(nn.GRU(3, 4), torch.zeros(2, 4))
    with pytest.raises(ValueError, match=r"^x must have shape \(time, 3\)"):
        step_jacobian_norms(nn.GRU(3, 4), torch.zeros(1, 2, 3))


def _no_forget_reference(
    model: NoForgetLSTM, x: torch.Tensor, h: torch.Tensor, c: torch.Tensor
):
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
    h0, c0 = (
        torch.randn(2, 4, dtype=torch.float64),
        torch.randn(2, 4, dtype=torch.float64),
    )
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
    # By hand with PyTorch's cell: the forget gates along the trajectory, and autograd
    # for dc_k/dc_0.
    c_start = c0.reshape(1, 4).clone().requires_grad_(True)
    h, c = torch.zeros(1, 4, dtype=torch.float64), c_start
    running = torch.ones(4, dtype=torch.float64)
    for t in range(3):
        pre = (
            x[t : t + 1] @ cell.weight_ih.T
            + h @ cell.weight_hh.T
            + cell.bias_ih
            + cell.bias_hh
        )
        running = running * torch.sigmoid(pre[0, 4:8]).detach()
        h, c = cell(x[t : t + 1], (h, c))
        torch.testing.assert_close(products[t], running)
        diag = torch.stack(
            [
                torch.autograd.grad(c[0, j], c_start, retain_graph=True)[0][0, j]
                for j in range(4)
            ]
        )
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
    torch.testing.assert_close(
        powers, torch.stack([f, f**2, f**3], dim=1), rtol=1e-15, atol=0
    )  # float32 errs ~1e-8


def test_lstm_scratch_size_boundaries() -> None:
    assert LSTMScratch(1, 1).weight_hh.shape == (4, 1)
    with pytest.raises(
        ValueError, match=r"^input_size must be a positive int; got True$"
    ):
        LSTMScratch(True, 3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "kwargs",
    [{"bias": False}, {"bidirectional": True}, {"num_layers": 2}, {"proj_size": 2}],
)
def test_lstm_scratch_from_torch_rejects_each_unsupported_option(
    kwargs: dict[str, object],
) -> None:
    with pytest.raises(
        ValueError, match="^lstm must be a one-layer, unidirectional nn.LSTM"
    ):
        LSTMScratch.from_torch(nn.LSTM(2, 3, **kwargs))
