"""Value tests for chapter_code.gates_jax (issue 20): what the comparisons with PyTorch leave open,
given start states, the dtype of the default ones, the exact wording of the
shape errors, and the Flax-style draw written out key by key.
"""

from __future__ import annotations

import math

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


def _close(a, b, atol: float = 1e-12) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=atol, rtol=0)


def re_tuple(shape: tuple) -> str:
    return str(tuple(shape)).replace("(", r"\(").replace(")", r"\)")


def test_lstm_loop_from_a_given_state_matches_pytorch() -> None:
    torch.manual_seed(4)
    lstm = nn.LSTM(3, 5, batch_first=True).double()
    x = torch.randn(2, 6, 3, dtype=torch.float64)
    h0, c0 = torch.randn(1, 2, 5, dtype=torch.float64), torch.randn(1, 2, 5, dtype=torch.float64)
    out, (h, c) = lstm(x, (h0, c0))
    ours, (h_j, c_j) = gates_jax.lstm_loop(_j(x), _j(lstm.weight_ih_l0), _j(lstm.weight_hh_l0),
                                           _j(lstm.bias_ih_l0 + lstm.bias_hh_l0), state=(_j(h0[0]), _j(c0[0])))
    _close(ours, out.detach())
    _close(h_j, h[0].detach())
    _close(c_j, c[0].detach())


def test_lstm_and_gru_default_states_are_zeros_of_the_input_dtype() -> None:
    x = jax.random.normal(jax.random.key(1), (2, 3, 4), dtype=jnp.float32)
    w4, u4 = jnp.full((8, 4), 0.1, jnp.float32), jnp.full((8, 2), 0.2, jnp.float32)
    out, (h, c) = gates_jax.lstm_loop(x, w4, u4, jnp.zeros(8, jnp.float32))
    assert out.dtype == h.dtype == c.dtype == jnp.float32
    z = jnp.zeros((2, 2), jnp.float32)
    h1, c1 = gates_jax.lstm_cell_step(x[:, 0], z, z, w4, u4, jnp.zeros(8, jnp.float32))
    _close(out[:, 0], h1, atol=1e-7)
    w3, u3 = jnp.full((6, 4), 0.1, jnp.float32), jnp.full((6, 2), 0.2, jnp.float32)
    states, last = gates_jax.gru_loop(x, w3, u3, jnp.zeros(6, jnp.float32), jnp.zeros(6, jnp.float32), True)
    assert states.dtype == last.dtype == jnp.float32
    step = gates_jax.gru_step(x[:, 0], z, w3, u3, jnp.zeros(6, jnp.float32), jnp.zeros(6, jnp.float32), True)
    _close(states[:, 0], step, atol=1e-7)
    _close(last, states[:, -1])


@pytest.mark.parametrize("reset_after", [True, False])
def test_gru_loop_from_a_given_state_matches_the_pytorch_listing(reset_after: bool) -> None:
    torch.manual_seed(6)
    gru = nn.GRU(3, 4, batch_first=True).double()
    params = [gru.weight_ih_l0, gru.weight_hh_l0, gru.bias_ih_l0, gru.bias_hh_l0]
    x, h0 = torch.randn(2, 5, 3, dtype=torch.float64), torch.randn(2, 4, dtype=torch.float64)
    ref, ref_last = gates.gru_loop(x, *params, reset_after=reset_after, h0=h0)
    if reset_after:
        torch.testing.assert_close(ref, gru(x, h0[None])[0])
    ours, last = gates_jax.gru_loop(_j(x), *(_j(p) for p in params), reset_after=reset_after, h0=_j(h0))
    _close(ours, ref.detach())
    _close(last, ref_last.detach())


@pytest.mark.parametrize(("fn", "blocks", "w_shape", "message"), [
    ("lstm", 4, (27, 5), r"^weight_ih must have shape \(4 \* hidden, features\) with features = 5; got \(27, 5\)$"),
    ("lstm", 4, (28, 4), r"^weight_ih must have shape \(4 \* hidden, features\) with features = 5; got \(28, 4\)$"),
    ("gru", 3, (19, 5), r"^weight_ih must have shape \(3 \* hidden, features\) with features = 5; got \(19, 5\)$"),
    ("gru", 3, (18, 6), r"^weight_ih must have shape \(3 \* hidden, features\) with features = 5; got \(18, 6\)$"),
])
def test_gated_loops_check_the_input_weights(fn: str, blocks: int, w_shape: tuple, message: str) -> None:
    x = jnp.zeros((2, 3, 5))
    if fn == "lstm":
        def loop():
            return gates_jax.lstm_loop(x, jnp.zeros(w_shape), jnp.zeros((28, 7)), jnp.zeros(28))
    else:
        def loop():
            return gates_jax.gru_loop(x, jnp.zeros(w_shape), jnp.zeros((18, 6)), jnp.zeros(18), jnp.zeros(18), True)
    with pytest.raises(ValueError, match=message):
        loop()


@pytest.mark.parametrize("shape", [(3, 5), (1, 2, 3, 5)])
def test_gated_loops_check_the_sequence(shape: tuple) -> None:
    with pytest.raises(ValueError, match=rf"^x must have shape \(batch, time, features\); got {re_tuple(shape)}$"):
        gates_jax.gru_loop(jnp.zeros(shape), jnp.zeros((18, 5)), jnp.zeros((18, 6)), jnp.zeros(18), jnp.zeros(18),
                           False)


def test_check_sequence_returns_batch_and_hidden() -> None:
    assert gates_jax._check_sequence(jnp.zeros((3, 2, 5)), jnp.zeros((28, 5)), 4) == (3, 7)
    assert gates_jax._check_sequence(jnp.zeros((1, 4, 2)), jnp.zeros((9, 2)), 3) == (1, 3)


def test_flax_draw_written_out_key_by_key() -> None:
    key = jax.random.key(7)
    p = gates_jax.flax_lstm_init(key, 3, 2)
    k_in, k_rec = jax.random.split(key)
    std = math.sqrt(1 / 3) / 0.87962566103423978  # lecun_normal: truncated normal of variance 1/fan_in
    kernels = [jax.random.truncated_normal(k, -2, 2, (3, 2)) * std for k in jax.random.split(k_in, 4)]
    _close(p["weight_ih"], jnp.concatenate([k.T for k in kernels]), atol=1e-12)
    recurrent = [jax.nn.initializers.orthogonal()(k, (2, 2)).T for k in jax.random.split(k_rec, 4)]
    _close(p["weight_hh"], jnp.concatenate(recurrent), atol=1e-12)
    assert p["weight_ih"].shape == (8, 3)
    assert p["weight_hh"].shape == (8, 2)
    assert sorted(p) == ["bias_hh", "bias_ih", "weight_hh", "weight_ih"]
    for name in ("bias_ih", "bias_hh"):
        assert p[name].shape == (8,)
        assert float(jnp.abs(p[name]).max()) == 0.0
    assert not np.allclose(np.asarray(p["weight_ih"]), np.asarray(gates_jax.flax_lstm_init(jax.random.key(8), 3, 2)
                                                                 ["weight_ih"]))


def test_flax_draw_of_size_one() -> None:
    p = gates_jax.flax_lstm_init(jax.random.key(0), 1, 1)
    assert p["weight_ih"].shape == (4, 1)
    _close(jnp.abs(p["weight_hh"]), jnp.ones((4, 1)))  # a 1x1 orthogonal matrix is +-1


@pytest.mark.parametrize(("input_size", "hidden_size", "name"), [
    (0, 2, "input_size"), (-1, 2, "input_size"), (2.0, 2, "input_size"), (True, 2, "input_size"),
    (3, 0, "hidden_size"), (3, True, "hidden_size"), (3, "2", "hidden_size"), (3, -4, "hidden_size"),
])
def test_flax_draw_sizes_are_named(input_size, hidden_size, name: str) -> None:
    value = input_size if name == "input_size" else hidden_size
    with pytest.raises(ValueError, match=rf"^{name} must be a positive int; got {value!r}$"):
        gates_jax.flax_lstm_init(jax.random.key(0), input_size, hidden_size)
