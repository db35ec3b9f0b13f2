"""Tests for gated.gates_jax: scanned LSTM and GRU against PyTorch with copied weights;
Flax's default draw.

Value tests for chapter_code.gated.gates_jax (issue 20): what the comparisons with
PyTorch leave open, given start states, the dtype of the default ones, the exact wording
of the shape errors, and the Flax-style draw written out key by key.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
from torch import nn

from chapter_code.gated import gates, gates_jax

jax.config.update("jax_enable_x64", True)


def _j(t: torch.Tensor) -> jax.Array:
    return jnp.asarray(t.detach().numpy())


def test_lstm_step_and_loop_match_pytorch_outputs_and_gradients() -> None:
    torch.manual_seed(3)
    lstm = nn.LSTM(5, 7, batch_first=True).double()
    x = torch.randn(3, 8, 5, dtype=torch.float64, requires_grad=True)
    out, (h, c) = lstm(x)
    (out**2).sum().backward()
    w_ih, w_hh, bias = (
        _j(lstm.weight_ih_l0),
        _j(lstm.weight_hh_l0),
        _j(lstm.bias_ih_l0 + lstm.bias_hh_l0),
    )
    ours, (h_j, c_j) = gates_jax.lstm_loop(_j(x), w_ih, w_hh, bias)
    np.testing.assert_allclose(np.asarray(ours), out.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(np.asarray(h_j), h[0].detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(np.asarray(c_j), c[0].detach().numpy(), atol=1e-12)
    g_x, g_w = jax.grad(
        lambda x_, w_: (gates_jax.lstm_loop(x_, w_ih, w_, bias)[0] ** 2).sum(),
        argnums=(0, 1),
    )(_j(x), w_hh)
    np.testing.assert_allclose(np.asarray(g_x), x.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(
        np.asarray(g_w), lstm.weight_hh_l0.grad.numpy(), atol=1e-10
    )
    h0, c0 = (
        torch.randn(3, 7, dtype=torch.float64),
        torch.randn(3, 7, dtype=torch.float64),
    )
    ref = gates.lstm_cell_step(
        x[:, 0],
        h0,
        c0,
        lstm.weight_ih_l0,
        lstm.weight_hh_l0,
        lstm.bias_ih_l0 + lstm.bias_hh_l0,
    )
    step = gates_jax.lstm_cell_step(_j(x[:, 0]), _j(h0), _j(c0), w_ih, w_hh, bias)
    for a, b in zip(step, ref, strict=True):
        np.testing.assert_allclose(np.asarray(a), b.detach().numpy(), atol=1e-12)


@pytest.mark.parametrize("reset_after", [True, False])
def test_gru_loop_matches_the_pytorch_listing_outputs_and_gradients(
    reset_after: bool,
) -> None:
    torch.manual_seed(5)
    gru = nn.GRU(4, 6, batch_first=True).double()
    params = [gru.weight_ih_l0, gru.weight_hh_l0, gru.bias_ih_l0, gru.bias_hh_l0]
    x = torch.randn(2, 9, 4, dtype=torch.float64, requires_grad=True)
    ref, ref_last = gates.gru_loop(x, *params, reset_after=reset_after)
    (ref**2).sum().backward()
    if reset_after:  # the listing's nn.GRU form is nn.GRU itself
        torch.testing.assert_close(ref, gru(x)[0])
    jp = [_j(p) for p in params]
    ours, last = gates_jax.gru_loop(_j(x), *jp, reset_after=reset_after)
    np.testing.assert_allclose(np.asarray(ours), ref.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(np.asarray(last), ref_last.detach().numpy(), atol=1e-12)
    g_x, g_w = jax.grad(
        lambda x_, w_: (
            gates_jax.gru_loop(x_, jp[0], w_, *jp[2:], reset_after)[0] ** 2
        ).sum(),
        argnums=(0, 1),
    )(_j(x), jp[1])
    np.testing.assert_allclose(np.asarray(g_x), x.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(
        np.asarray(g_w), gru.weight_hh_l0.grad.numpy(), atol=1e-10
    )


def test_bad_sequences_get_named_errors() -> None:
    with pytest.raises(ValueError, match="x must have shape"):
        gates_jax.lstm_loop(
            jnp.zeros((3, 5)), jnp.zeros((28, 5)), jnp.zeros((28, 7)), jnp.zeros(28)
        )
    # the PyTorch twin's words
    with pytest.raises(ValueError, match="x must have shape"):
        gates.gru_loop(torch.zeros(3, 5), *(torch.zeros(1),) * 4, reset_after=True)
    with pytest.raises(ValueError, match="weight_ih must have shape"):
        gates_jax.gru_loop(
            jnp.zeros((2, 3, 5)),
            jnp.zeros((18, 4)),
            jnp.zeros((18, 6)),
            jnp.zeros(18),
            jnp.zeros(18),
            reset_after=True,
        )
    with pytest.raises(ValueError, match="hidden_size must be a positive int"):
        gates_jax.flax_lstm_init(jax.random.key(0), 3, 0)


def test_flax_default_draw_is_orthogonal_recurrent_fan_in_input_zero_bias() -> None:
    hidden, features = 32, 200
    p = gates_jax.flax_lstm_init(jax.random.key(1), features, hidden)
    assert p["weight_ih"].shape == (4 * hidden, features)
    assert p["weight_hh"].shape == (4 * hidden, hidden)
    # each gate's recurrent matrix is orthogonal
    for block in jnp.split(p["weight_hh"], 4):
        np.testing.assert_allclose(
            np.asarray(block @ block.T), np.eye(hidden), atol=1e-5
        )
    assert float(jnp.abs(p["bias_ih"]).max()) == 0.0
    assert float(jnp.abs(p["bias_hh"]).max()) == 0.0
    # variance 1/fan-in
    assert float(jnp.std(p["weight_ih"])) == pytest.approx(features**-0.5, rel=0.05)
    torch.manual_seed(0)
    # uniform in +-1/sqrt(H): not orthogonal
    torch_w = nn.LSTM(features, hidden).weight_hh_l0.detach()
    singular = torch.linalg.svdvals(torch_w[:hidden])
    assert singular.min() < 0.2
    assert singular.max() > 0.9


jax.config.update("jax_enable_x64", True)


def _close(a, b, atol: float = 1e-12) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=atol, rtol=0)


def re_tuple(shape: tuple) -> str:
    return str(tuple(shape)).replace("(", r"\(").replace(")", r"\)")


def test_lstm_loop_from_a_given_state_matches_pytorch() -> None:
    torch.manual_seed(4)
    lstm = nn.LSTM(3, 5, batch_first=True).double()
    x = torch.randn(2, 6, 3, dtype=torch.float64)
    h0, c0 = (
        torch.randn(1, 2, 5, dtype=torch.float64),
        torch.randn(1, 2, 5, dtype=torch.float64),
    )
    out, (h, c) = lstm(x, (h0, c0))
    ours, (h_j, c_j) = gates_jax.lstm_loop(
        _j(x),
        _j(lstm.weight_ih_l0),
        _j(lstm.weight_hh_l0),
        _j(lstm.bias_ih_l0 + lstm.bias_hh_l0),
        state=(_j(h0[0]), _j(c0[0])),
    )
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
    states, last = gates_jax.gru_loop(
        x, w3, u3, jnp.zeros(6, jnp.float32), jnp.zeros(6, jnp.float32), True
    )
    assert states.dtype == last.dtype == jnp.float32
    step = gates_jax.gru_step(
        x[:, 0], z, w3, u3, jnp.zeros(6, jnp.float32), jnp.zeros(6, jnp.float32), True
    )
    _close(states[:, 0], step, atol=1e-7)
    _close(last, states[:, -1])


@pytest.mark.parametrize("reset_after", [True, False])
def test_gru_loop_from_a_given_state_matches_the_pytorch_listing(
    reset_after: bool,
) -> None:
    torch.manual_seed(6)
    gru = nn.GRU(3, 4, batch_first=True).double()
    params = [gru.weight_ih_l0, gru.weight_hh_l0, gru.bias_ih_l0, gru.bias_hh_l0]
    x, h0 = (
        torch.randn(2, 5, 3, dtype=torch.float64),
        torch.randn(2, 4, dtype=torch.float64),
    )
    ref, ref_last = gates.gru_loop(x, *params, reset_after=reset_after, h0=h0)
    if reset_after:
        torch.testing.assert_close(ref, gru(x, h0[None])[0])
    ours, last = gates_jax.gru_loop(
        _j(x), *(_j(p) for p in params), reset_after=reset_after, h0=_j(h0)
    )
    _close(ours, ref.detach())
    _close(last, ref_last.detach())


@pytest.mark.parametrize(
    ("fn", "blocks", "w_shape", "message"),
    [
        (
            "lstm",
            4,
            (27, 5),
            r"^weight_ih must have shape \(4 \* hidden, features\) with "
            r"features = 5; got \(27, 5\)$",
        ),
        (
            "lstm",
            4,
            (28, 4),
            r"^weight_ih must have shape \(4 \* hidden, features\) with "
            r"features = 5; got \(28, 4\)$",
        ),
        (
            "gru",
            3,
            (19, 5),
            r"^weight_ih must have shape \(3 \* hidden, features\) with "
            r"features = 5; got \(19, 5\)$",
        ),
        (
            "gru",
            3,
            (18, 6),
            r"^weight_ih must have shape \(3 \* hidden, features\) with "
            r"features = 5; got \(18, 6\)$",
        ),
    ],
)
def test_gated_loops_check_the_input_weights(
    fn: str, blocks: int, w_shape: tuple, message: str
) -> None:
    x = jnp.zeros((2, 3, 5))
    if fn == "lstm":

        def loop():
            return gates_jax.lstm_loop(
                x, jnp.zeros(w_shape), jnp.zeros((28, 7)), jnp.zeros(28)
            )
    else:

        def loop():
            return gates_jax.gru_loop(
                x,
                jnp.zeros(w_shape),
                jnp.zeros((18, 6)),
                jnp.zeros(18),
                jnp.zeros(18),
                True,
            )

    with pytest.raises(ValueError, match=message):
        loop()


@pytest.mark.parametrize("shape", [(3, 5), (1, 2, 3, 5)])
def test_gated_loops_check_the_sequence(shape: tuple) -> None:
    with pytest.raises(
        ValueError,
        match=rf"^x must have shape \(batch, time, features\); got {re_tuple(shape)}$",
    ):
        gates_jax.gru_loop(
            jnp.zeros(shape),
            jnp.zeros((18, 5)),
            jnp.zeros((18, 6)),
            jnp.zeros(18),
            jnp.zeros(18),
            False,
        )


def test_check_sequence_returns_batch_and_hidden() -> None:
    assert gates_jax._check_sequence(jnp.zeros((3, 2, 5)), jnp.zeros((28, 5)), 4) == (
        3,
        7,
    )
    assert gates_jax._check_sequence(jnp.zeros((1, 4, 2)), jnp.zeros((9, 2)), 3) == (
        1,
        3,
    )


def test_flax_draw_written_out_key_by_key() -> None:
    key = jax.random.key(7)
    p = gates_jax.flax_lstm_init(key, 3, 2)
    k_in, k_rec = jax.random.split(key)
    # lecun_normal: truncated normal of variance 1/fan_in
    std = math.sqrt(1 / 3) / 0.87962566103423978
    kernels = [
        jax.random.truncated_normal(k, -2, 2, (3, 2)) * std
        for k in jax.random.split(k_in, 4)
    ]
    _close(p["weight_ih"], jnp.concatenate([k.T for k in kernels]), atol=1e-12)
    recurrent = [
        jax.nn.initializers.orthogonal()(k, (2, 2)).T
        for k in jax.random.split(k_rec, 4)
    ]
    _close(p["weight_hh"], jnp.concatenate(recurrent), atol=1e-12)
    assert p["weight_ih"].shape == (8, 3)
    assert p["weight_hh"].shape == (8, 2)
    assert sorted(p) == ["bias_hh", "bias_ih", "weight_hh", "weight_ih"]
    for name in ("bias_ih", "bias_hh"):
        assert p[name].shape == (8,)
        assert float(jnp.abs(p[name]).max()) == 0.0
    assert not np.allclose(
        np.asarray(p["weight_ih"]),
        np.asarray(gates_jax.flax_lstm_init(jax.random.key(8), 3, 2)["weight_ih"]),
    )


def test_flax_draw_of_size_one() -> None:
    p = gates_jax.flax_lstm_init(jax.random.key(0), 1, 1)
    assert p["weight_ih"].shape == (4, 1)
    _close(jnp.abs(p["weight_hh"]), jnp.ones((4, 1)))  # a 1x1 orthogonal matrix is +-1


@pytest.mark.parametrize(
    ("input_size", "hidden_size", "name"),
    [
        (0, 2, "input_size"),
        (-1, 2, "input_size"),
        (2.0, 2, "input_size"),
        (True, 2, "input_size"),
        (3, 0, "hidden_size"),
        (3, True, "hidden_size"),
        (3, "2", "hidden_size"),
        (3, -4, "hidden_size"),
    ],
)
def test_flax_draw_sizes_are_named(input_size, hidden_size, name: str) -> None:
    value = input_size if name == "input_size" else hidden_size
    with pytest.raises(
        ValueError, match=rf"^{name} must be a positive int; got {value!r}$"
    ):
        gates_jax.flax_lstm_init(jax.random.key(0), input_size, hidden_size)
