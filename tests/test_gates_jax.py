"""Tests for chapter_code.gates_jax: scanned LSTM and GRU against PyTorch with copied weights; Flax's default draw."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
from torch import nn

from chapter_code import gates, gates_jax

jax.config.update("jax_enable_x64", True)


def _j(t: torch.Tensor) -> jax.Array:
    return jnp.asarray(t.detach().numpy())


def test_lstm_step_and_loop_match_pytorch_outputs_and_gradients() -> None:
    torch.manual_seed(3)
    lstm = nn.LSTM(5, 7, batch_first=True).double()
    x = torch.randn(3, 8, 5, dtype=torch.float64, requires_grad=True)
    out, (h, c) = lstm(x)
    (out ** 2).sum().backward()
    w_ih, w_hh, bias = _j(lstm.weight_ih_l0), _j(lstm.weight_hh_l0), _j(lstm.bias_ih_l0 + lstm.bias_hh_l0)
    ours, (h_j, c_j) = gates_jax.lstm_loop(_j(x), w_ih, w_hh, bias)
    np.testing.assert_allclose(np.asarray(ours), out.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(np.asarray(h_j), h[0].detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(np.asarray(c_j), c[0].detach().numpy(), atol=1e-12)
    g_x, g_w = jax.grad(lambda x_, w_: (gates_jax.lstm_loop(x_, w_ih, w_, bias)[0] ** 2).sum(), argnums=(0, 1))(
        _j(x), w_hh)
    np.testing.assert_allclose(np.asarray(g_x), x.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(np.asarray(g_w), lstm.weight_hh_l0.grad.numpy(), atol=1e-10)
    h0, c0 = torch.randn(3, 7, dtype=torch.float64), torch.randn(3, 7, dtype=torch.float64)
    ref = gates.lstm_cell_step(x[:, 0], h0, c0, lstm.weight_ih_l0, lstm.weight_hh_l0, lstm.bias_ih_l0 + lstm.bias_hh_l0)
    step = gates_jax.lstm_cell_step(_j(x[:, 0]), _j(h0), _j(c0), w_ih, w_hh, bias)
    for a, b in zip(step, ref, strict=True):
        np.testing.assert_allclose(np.asarray(a), b.detach().numpy(), atol=1e-12)


@pytest.mark.parametrize("reset_after", [True, False])
def test_gru_loop_matches_the_pytorch_listing_outputs_and_gradients(reset_after: bool) -> None:
    torch.manual_seed(5)
    gru = nn.GRU(4, 6, batch_first=True).double()
    params = [gru.weight_ih_l0, gru.weight_hh_l0, gru.bias_ih_l0, gru.bias_hh_l0]
    x = torch.randn(2, 9, 4, dtype=torch.float64, requires_grad=True)
    ref, ref_last = gates.gru_loop(x, *params, reset_after=reset_after)
    (ref ** 2).sum().backward()
    if reset_after:  # the listing's nn.GRU form is nn.GRU itself
        torch.testing.assert_close(ref, gru(x)[0])
    jp = [_j(p) for p in params]
    ours, last = gates_jax.gru_loop(_j(x), *jp, reset_after=reset_after)
    np.testing.assert_allclose(np.asarray(ours), ref.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(np.asarray(last), ref_last.detach().numpy(), atol=1e-12)
    g_x, g_w = jax.grad(lambda x_, w_: (gates_jax.gru_loop(x_, jp[0], w_, *jp[2:], reset_after)[0] ** 2).sum(),
                        argnums=(0, 1))(_j(x), jp[1])
    np.testing.assert_allclose(np.asarray(g_x), x.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(np.asarray(g_w), gru.weight_hh_l0.grad.numpy(), atol=1e-10)


def test_bad_sequences_get_named_errors() -> None:
    with pytest.raises(ValueError, match="x must have shape"):
        gates_jax.lstm_loop(jnp.zeros((3, 5)), jnp.zeros((28, 5)), jnp.zeros((28, 7)), jnp.zeros(28))
    with pytest.raises(ValueError, match="x must have shape"):  # the PyTorch twin's words
        gates.gru_loop(torch.zeros(3, 5), *(torch.zeros(1),) * 4, reset_after=True)
    with pytest.raises(ValueError, match="weight_ih must have shape"):
        gates_jax.gru_loop(jnp.zeros((2, 3, 5)), jnp.zeros((18, 4)), jnp.zeros((18, 6)), jnp.zeros(18),
                           jnp.zeros(18), reset_after=True)
    with pytest.raises(ValueError, match="hidden_size must be a positive int"):
        gates_jax.flax_lstm_init(jax.random.key(0), 3, 0)


def test_flax_default_draw_is_orthogonal_recurrent_fan_in_input_zero_bias() -> None:
    hidden, features = 32, 200
    p = gates_jax.flax_lstm_init(jax.random.key(1), features, hidden)
    assert p["weight_ih"].shape == (4 * hidden, features)
    assert p["weight_hh"].shape == (4 * hidden, hidden)
    for block in jnp.split(p["weight_hh"], 4):  # each gate's recurrent matrix is orthogonal
        np.testing.assert_allclose(np.asarray(block @ block.T), np.eye(hidden), atol=1e-5)
    assert float(jnp.abs(p["bias_ih"]).max()) == 0.0
    assert float(jnp.abs(p["bias_hh"]).max()) == 0.0
    assert float(jnp.std(p["weight_ih"])) == pytest.approx(features ** -0.5, rel=0.05)  # variance 1/fan-in
    torch.manual_seed(0)
    torch_w = nn.LSTM(features, hidden).weight_hh_l0.detach()  # uniform in +-1/sqrt(H): not orthogonal
    singular = torch.linalg.svdvals(torch_w[:hidden])
    assert singular.min() < 0.2
    assert singular.max() > 0.9
