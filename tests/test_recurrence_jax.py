"""Tests for chapter_code.recurrence_jax: the scanned JAX loop against the PyTorch listing, and the JIT lesson."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
from torch import nn

from chapter_code import recurrence, recurrence_jax

jax.config.update("jax_enable_x64", True)  # float64 on both sides: the comparisons can be tight


def _rnn(features: int = 4, hidden: int = 6) -> nn.RNN:
    torch.manual_seed(11)
    return nn.RNN(features, hidden, batch_first=True).double()


def _weights(rnn: nn.RNN) -> tuple[jax.Array, jax.Array, jax.Array]:
    bias = (rnn.bias_ih_l0 + rnn.bias_hh_l0).detach().numpy()
    return jnp.asarray(rnn.weight_ih_l0.detach().numpy()), jnp.asarray(rnn.weight_hh_l0.detach().numpy()), \
        jnp.asarray(bias)


def test_step_and_loop_match_pytorch_with_copied_weights() -> None:
    rnn = _rnn()
    x = torch.randn(3, 9, 4, dtype=torch.float64)
    w_ih, w_hh, b = _weights(rnn)
    ref_states, ref_last = recurrence.rnn_loop(x, rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0 + rnn.bias_hh_l0)
    states, last = recurrence_jax.rnn_loop(jnp.asarray(x.numpy()), w_ih, w_hh, b)
    np.testing.assert_allclose(np.asarray(states), ref_states.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(np.asarray(last), ref_last.detach().numpy(), atol=1e-12)
    h = torch.randn(3, 6, dtype=torch.float64)
    step = recurrence_jax.rnn_step(jnp.asarray(x[:, 0].numpy()), jnp.asarray(h.numpy()), w_ih, w_hh, b)
    ref_step = recurrence.rnn_step(x[:, 0], h, rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0 + rnn.bias_hh_l0)
    np.testing.assert_allclose(np.asarray(step), ref_step.detach().numpy(), atol=1e-12)


def test_masked_loop_matches_pytorch_and_keeps_the_state_on_padding() -> None:
    rnn = _rnn()
    x = torch.randn(2, 5, 4, dtype=torch.float64)
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    ref, _ = recurrence.rnn_loop(x, rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0 + rnn.bias_hh_l0, mask=mask)
    states, last = recurrence_jax.rnn_loop(jnp.asarray(x.numpy()), *_weights(rnn), mask=jnp.asarray(mask.numpy()))
    np.testing.assert_allclose(np.asarray(states), ref.detach().numpy(), atol=1e-12)
    np.testing.assert_array_equal(np.asarray(last[0]), np.asarray(states[0, 2]))


def test_gradients_match_pytorch() -> None:
    rnn = _rnn()
    x = torch.randn(2, 7, 4, dtype=torch.float64, requires_grad=True)
    ref, _ = recurrence.rnn_loop(x, rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0 + rnn.bias_hh_l0)
    (ref ** 2).sum().backward()
    w_ih, w_hh, b = _weights(rnn)

    def loss(x_, w_hh_):
        return (recurrence_jax.rnn_loop(x_, w_ih, w_hh_, b)[0] ** 2).sum()

    g_x, g_w = jax.grad(loss, argnums=(0, 1))(jnp.asarray(x.detach().numpy()), w_hh)
    np.testing.assert_allclose(np.asarray(g_x), x.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(np.asarray(g_w), rnn.weight_hh_l0.grad.numpy(), atol=1e-10)


def test_unrolled_loop_computes_the_same_states() -> None:
    w_ih, w_hh, b = _weights(_rnn())
    x = jax.random.normal(jax.random.key(0), (2, 6, 4), dtype=jnp.float64)
    np.testing.assert_allclose(np.asarray(recurrence_jax.rnn_loop_unrolled(x, w_ih, w_hh, b)[0]),
                               np.asarray(recurrence_jax.rnn_loop(x, w_ih, w_hh, b)[0]), atol=1e-12)


def test_traced_program_grows_with_time_for_a_python_loop_but_not_for_scan() -> None:
    w_ih, w_hh, b = _weights(_rnn())
    sizes = {}
    for steps in (4, 16, 64):
        x = jnp.zeros((2, steps, 4))
        sizes[steps] = (recurrence_jax.trace_size(lambda x: recurrence_jax.rnn_loop(x, w_ih, w_hh, b), x),
                        recurrence_jax.trace_size(lambda x: recurrence_jax.rnn_loop_unrolled(x, w_ih, w_hh, b), x))
    assert sizes[4][0] == sizes[16][0] == sizes[64][0]  # scan: one step, whatever T
    per_step = (sizes[64][1] - sizes[16][1]) / 48
    assert per_step >= 4  # matmul, matmul, add, add, tanh ... per unrolled step
    assert sizes[16][1] - sizes[4][1] == pytest.approx(12 * per_step)  # linear in T
    assert recurrence_jax.compile_seconds(lambda x: recurrence_jax.rnn_loop(x, w_ih, w_hh, b), x) > 0


@pytest.mark.parametrize(
    ("x_shape", "w_ih_shape", "h0_shape", "mask", "message"),
    [
        ((3, 4), (6, 4), None, None, "x must have shape"),
        ((2, 5, 4), (6, 3), None, None, "weight_ih must have shape"),
        ((2, 5, 4), (6, 4), (3, 6), None, "h0 must have shape"),
        ((2, 5, 4), (6, 4), None, np.ones((2, 4)), "mask must have shape"),
        ((2, 5, 4), (6, 4), None, np.full((2, 5), 2), "mask must hold only 0"),
    ],
)
def test_bad_input_gets_the_pytorch_sides_named_error(x_shape, w_ih_shape, h0_shape, mask, message) -> None:
    h0 = None if h0_shape is None else jnp.zeros(h0_shape)
    mask = None if mask is None else jnp.asarray(mask)
    args = (jnp.zeros(x_shape), jnp.zeros(w_ih_shape), jnp.zeros((6, 6)), jnp.zeros(6))
    with pytest.raises(ValueError, match=message):
        recurrence_jax.rnn_loop(*args, h0=h0, mask=mask)
    if mask is None or mask.shape == (2, 5):  # the PyTorch listing rejects the same input with the same words
        t_mask = None if mask is None else torch.as_tensor(np.array(mask))
        t_h0 = None if h0 is None else torch.zeros(h0_shape)
        with pytest.raises(ValueError, match=message):
            recurrence.rnn_loop(*(torch.zeros(a.shape) for a in args), h0=t_h0, mask=t_mask)
