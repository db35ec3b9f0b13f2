"""Tests for chapter_code.gates: hand-written LSTM and GRU against PyTorch, the gate-bias helper, demos."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from chapter_code import runtime
from chapter_code.gates import (
    GATE_ORDER,
    LSTMScratch,
    direct_path_and_full_jacobian,
    effective_gate_bias,
    forget_power,
    gate_index,
    gru_loop,
    gru_step,
    lstm_cell_step,
    output_gate_demo,
    set_gate_bias,
)


@pytest.fixture(autouse=True)
def _seeded() -> None:
    runtime.seed_everything(4321)


def test_lstm_step_matches_lstmcell_with_copied_weights() -> None:
    cell = nn.LSTMCell(5, 7).double()
    x = torch.randn(3, 5, dtype=torch.float64)
    h, c = torch.randn(3, 7, dtype=torch.float64), torch.randn(3, 7, dtype=torch.float64)
    ours = lstm_cell_step(x, h, c, cell.weight_ih, cell.weight_hh, cell.bias_ih + cell.bias_hh)
    ref = cell(x, (h, c))
    torch.testing.assert_close(ours[0], ref[0])
    torch.testing.assert_close(ours[1], ref[1])


def test_lstm_scratch_matches_nn_lstm_outputs_and_gradients() -> None:
    ref = nn.LSTM(4, 6, batch_first=True).double()
    ours = LSTMScratch.from_torch(ref)
    assert ours.weight_hh.dtype == torch.float64
    x = torch.randn(3, 9, 4, dtype=torch.float64)
    h0, c0 = torch.randn(3, 6, dtype=torch.float64), torch.randn(3, 6, dtype=torch.float64)
    out_ref, (h_ref, c_ref) = ref(x, (h0.unsqueeze(0), c0.unsqueeze(0)))
    out, (h, c) = ours(x, (h0, c0))
    torch.testing.assert_close(out, out_ref)
    torch.testing.assert_close(h, h_ref[0])
    torch.testing.assert_close(c, c_ref[0])
    (out_ref.square().sum() + c_ref.sum()).backward()
    (out.square().sum() + c.sum()).backward()
    for name in ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]:
        torch.testing.assert_close(getattr(ours, name).grad, getattr(ref, name + "_l0").grad)


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
    x, h = torch.randn(3, 4, dtype=torch.float64), torch.randn(3, 5, dtype=torch.float64)
    ours = gru_step(x, h, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh, reset_after=True)
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
    x, h = torch.randn(1, f_size, dtype=torch.float64), torch.rand(1, h_size, dtype=torch.float64)
    r = torch.sigmoid(x @ w["r"].T + h @ u["r"].T + b["r"])
    keep = torch.sigmoid(x @ w["z"].T + h @ u["z"].T + b["z"])
    cand = torch.tanh(x @ w["n"].T + (r * h) @ u["n"].T + b["n"])
    expected = keep * h + (1 - keep) * cand
    weight_ih = torch.cat([w[k] for k in "rzn"])
    weight_hh = torch.cat([u[k] for k in "rzn"])
    bias_ih = torch.cat([b[k] for k in "rzn"])
    got = gru_step(x, h, weight_ih, weight_hh, bias_ih, torch.zeros_like(bias_ih), reset_after=False)
    torch.testing.assert_close(got, expected)


@settings(max_examples=40, deadline=None)
@given(
    scale=st.floats(min_value=0.1, max_value=20.0),
    steps=st.integers(min_value=1, max_value=12),
    seed=st.integers(min_value=0, max_value=10_000),
    reset_after=st.booleans(),
)
def test_gru_state_stays_inside_minus_one_one(scale: float, steps: int, seed: int, reset_after: bool) -> None:
    gen = torch.Generator().manual_seed(seed)
    h_size, f_size = 4, 3
    weights = [scale * torch.randn(3 * h_size, n, generator=gen, dtype=torch.float64) for n in (f_size, h_size)]
    biases = [scale * torch.randn(3 * h_size, generator=gen, dtype=torch.float64) for _ in range(2)]
    xs = scale * torch.randn(2, steps, f_size, generator=gen, dtype=torch.float64)
    h0 = 2 * torch.rand(2, h_size, generator=gen, dtype=torch.float64) - 1
    states, _ = gru_loop(xs, weights[0], weights[1], biases[0], biases[1], reset_after, h0=h0 * 0.999)
    # In exact arithmetic the bound is strict; float64 tanh rounds to exactly 1 beyond about 19.
    assert states.abs().max() <= 1.0
    if scale <= 1.0:
        assert states.abs().max() < 1.0


def test_set_gate_bias_sets_the_sum_and_leaves_other_gates_alone() -> None:
    lstm = nn.LSTM(3, 5, num_layers=2)
    before = {n: p.detach().clone() for n, p in lstm.named_parameters()}
    set_gate_bias(lstm, "lstm", "f", 1.0)
    torch.testing.assert_close(effective_gate_bias(lstm, "lstm", "f"), torch.ones(5))
    torch.testing.assert_close(lstm.bias_ih_l1[5:10] + lstm.bias_hh_l1[5:10], torch.ones(5))
    for gate in ["i", "g", "o"]:
        k = gate_index("lstm", gate)
        torch.testing.assert_close(lstm.bias_ih_l0[5 * k : 5 * k + 5], before["bias_ih_l0"][5 * k : 5 * k + 5])
    gru = nn.GRUCell(2, 4)
    set_gate_bias(gru, "gru", "z", 2.0)
    torch.testing.assert_close(effective_gate_bias(gru, "gru", "z"), torch.full((4,), 2.0))
    scratch = LSTMScratch(2, 3)
    set_gate_bias(scratch, "lstm", "f", -1.0)
    torch.testing.assert_close(effective_gate_bias(scratch, "lstm", "f"), torch.full((3,), -1.0))


def test_gate_order_is_pytorchs() -> None:
    assert GATE_ORDER == {"lstm": ("i", "f", "g", "o"), "gru": ("r", "z", "n")}


def test_set_gate_bias_refuses_unknown_names_and_mismatches() -> None:
    lstm = nn.LSTM(2, 3)
    with pytest.raises(ValueError, match=r"cell must be one of \['gru', 'lstm'\]; got 'lsmt'"):
        set_gate_bias(lstm, "lsmt", "f", 1.0)
    with pytest.raises(ValueError, match=r"gate must be one of \['i', 'f', 'g', 'o'\] for cell 'lstm'; got 'u'"):
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
    gates, cells, hiddens = output_gate_demo(c0=0.8, openings=(1.0, 0.0, 1.0), steps_each=2)
    torch.testing.assert_close(cells, torch.full((6,), 0.8))
    torch.testing.assert_close(hiddens, gates * torch.tanh(torch.tensor(0.8)))
    with pytest.raises(ValueError, match="steps must be an int >= 1"):
        forget_power([0.0], steps=0)
    with pytest.raises(ValueError, match=r"openings must be .* in \[0, 1\]"):
        output_gate_demo(openings=(1.5,))


def test_direct_path_is_exact_for_one_step_and_only_part_of_the_jacobian_later() -> None:
    cell = nn.LSTMCell(3, 4).double()
    x = torch.randn(6, 3, dtype=torch.float64)
    products, diagonals = direct_path_and_full_jacobian(cell, x, torch.randn(4, dtype=torch.float64))
    assert products.shape == diagonals.shape == (6, 4)
    torch.testing.assert_close(products[0], diagonals[0])  # h_0 = 0 does not depend on c_0
    assert (products[1:] - diagonals[1:]).abs().max() > 1e-6  # later steps add paths through h
    with pytest.raises(ValueError, match=r"x must have shape \(time, 3\)"):
        direct_path_and_full_jacobian(cell, torch.randn(2, 5, 3), torch.zeros(4))


def test_keep_dial_blends_on_the_segment_and_matches_the_gru_update() -> None:
    from chapter_code.gate_figures import plot_keep_dial
    from chapter_code.gates import keep_dial

    kept, written, new = keep_dial(0.80, 0.30, 0.5)
    assert abs(kept - 0.40) < 1e-12
    assert abs(written - 0.15) < 1e-12
    assert abs(new - 0.55) < 1e-12
    assert keep_dial(0.80, 0.30, 1.0)[2] == 0.80  # full keep: the old state
    assert keep_dial(0.80, 0.30, 0.0)[2] == 0.30  # keep nothing: overwritten by the candidate
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
    from chapter_code.gate_figures import draw_cell_diagram

    fig = draw_cell_diagram(cell)
    texts = " ".join(t.get_text() for t in fig.axes[0].texts)
    for symbol in (["$f_t$", "$i_t$", "$g_t$", "$o_t$", "$c_t$"] if cell == "lstm" else ["$r_t$", "$u_t$", "$h_t$"]):
        assert symbol in texts, (symbol, texts)
    assert len(fig.axes[0].patches) >= (8 if cell == "lstm" else 7)  # boxes and pointwise operations


def test_cell_diagram_rejects_unknown_cells() -> None:
    from chapter_code.gate_figures import draw_cell_diagram

    with pytest.raises(ValueError, match=r"cell must be one of \['gru', 'lstm'\]"):
        draw_cell_diagram("rnn")
