"""Tests for chapter_code.rnn.recurrence_jax: the scanned JAX loop against the PyTorch
listing, and the JIT lesson.

Value tests for chapter_code.rnn.recurrence_jax (issue 20): what the comparisons with
PyTorch leave open, a given start state, the dtype of the default one, the exact wording
of each shape error, the scan under ``jax.jit`` with a traced mask, and the trace and
compile measurements.
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
from torch import nn

from chapter_code.rnn import recurrence, recurrence_jax

# float64 on both sides: the comparisons can be tight
jax.config.update("jax_enable_x64", True)


def _rnn(features: int = 4, hidden: int = 6) -> nn.RNN:
    torch.manual_seed(11)
    return nn.RNN(features, hidden, batch_first=True).double()


def _weights(rnn: nn.RNN) -> tuple[jax.Array, jax.Array, jax.Array]:
    bias = (rnn.bias_ih_l0 + rnn.bias_hh_l0).detach().numpy()
    return (
        jnp.asarray(rnn.weight_ih_l0.detach().numpy()),
        jnp.asarray(rnn.weight_hh_l0.detach().numpy()),
        jnp.asarray(bias),
    )


def test_step_and_loop_match_pytorch_with_copied_weights() -> None:
    rnn = _rnn()
    x = torch.randn(3, 9, 4, dtype=torch.float64)
    w_ih, w_hh, b = _weights(rnn)
    ref_states, ref_last = recurrence.rnn_loop(
        x, rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0 + rnn.bias_hh_l0
    )
    states, last = recurrence_jax.rnn_loop(jnp.asarray(x.numpy()), w_ih, w_hh, b)
    np.testing.assert_allclose(
        np.asarray(states), ref_states.detach().numpy(), atol=1e-12
    )
    np.testing.assert_allclose(np.asarray(last), ref_last.detach().numpy(), atol=1e-12)
    h = torch.randn(3, 6, dtype=torch.float64)
    step = recurrence_jax.rnn_step(
        jnp.asarray(x[:, 0].numpy()), jnp.asarray(h.numpy()), w_ih, w_hh, b
    )
    ref_step = recurrence.rnn_step(
        x[:, 0], h, rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0 + rnn.bias_hh_l0
    )
    np.testing.assert_allclose(np.asarray(step), ref_step.detach().numpy(), atol=1e-12)


def test_masked_loop_matches_pytorch_and_keeps_the_state_on_padding() -> None:
    rnn = _rnn()
    x = torch.randn(2, 5, 4, dtype=torch.float64)
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    ref, _ = recurrence.rnn_loop(
        x,
        rnn.weight_ih_l0,
        rnn.weight_hh_l0,
        rnn.bias_ih_l0 + rnn.bias_hh_l0,
        mask=mask,
    )
    states, last = recurrence_jax.rnn_loop(
        jnp.asarray(x.numpy()), *_weights(rnn), mask=jnp.asarray(mask.numpy())
    )
    np.testing.assert_allclose(np.asarray(states), ref.detach().numpy(), atol=1e-12)
    np.testing.assert_array_equal(np.asarray(last[0]), np.asarray(states[0, 2]))


def test_gradients_match_pytorch() -> None:
    rnn = _rnn()
    x = torch.randn(2, 7, 4, dtype=torch.float64, requires_grad=True)
    ref, _ = recurrence.rnn_loop(
        x, rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0 + rnn.bias_hh_l0
    )
    (ref**2).sum().backward()
    w_ih, w_hh, b = _weights(rnn)

    def loss(x_, w_hh_):
        return (recurrence_jax.rnn_loop(x_, w_ih, w_hh_, b)[0] ** 2).sum()

    g_x, g_w = jax.grad(loss, argnums=(0, 1))(jnp.asarray(x.detach().numpy()), w_hh)
    np.testing.assert_allclose(np.asarray(g_x), x.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(
        np.asarray(g_w), rnn.weight_hh_l0.grad.numpy(), atol=1e-10
    )


def test_unrolled_loop_computes_the_same_states() -> None:
    w_ih, w_hh, b = _weights(_rnn())
    x = jax.random.normal(jax.random.key(0), (2, 6, 4), dtype=jnp.float64)
    np.testing.assert_allclose(
        np.asarray(recurrence_jax.rnn_loop_unrolled(x, w_ih, w_hh, b)[0]),
        np.asarray(recurrence_jax.rnn_loop(x, w_ih, w_hh, b)[0]),
        atol=1e-12,
    )


def test_traced_program_grows_with_time_for_a_python_loop_but_not_for_scan() -> None:
    w_ih, w_hh, b = _weights(_rnn())
    sizes = {}
    for steps in (4, 16, 64):
        x = jnp.zeros((2, steps, 4))
        sizes[steps] = (
            recurrence_jax.trace_size(
                lambda x: recurrence_jax.rnn_loop(x, w_ih, w_hh, b), x
            ),
            recurrence_jax.trace_size(
                lambda x: recurrence_jax.rnn_loop_unrolled(x, w_ih, w_hh, b), x
            ),
        )
    assert sizes[4][0] == sizes[16][0] == sizes[64][0]  # scan: one step, whatever T
    per_step = (sizes[64][1] - sizes[16][1]) / 48
    assert per_step >= 4  # matmul, matmul, add, add, tanh ... per unrolled step
    assert sizes[16][1] - sizes[4][1] == pytest.approx(12 * per_step)  # linear in T
    assert (
        recurrence_jax.compile_seconds(
            lambda x: recurrence_jax.rnn_loop(x, w_ih, w_hh, b), x
        )
        > 0
    )


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
def test_bad_input_gets_the_pytorch_sides_named_error(
    x_shape, w_ih_shape, h0_shape, mask, message
) -> None:
    h0 = None if h0_shape is None else jnp.zeros(h0_shape)
    mask = None if mask is None else jnp.asarray(mask)
    args = (jnp.zeros(x_shape), jnp.zeros(w_ih_shape), jnp.zeros((6, 6)), jnp.zeros(6))
    with pytest.raises(ValueError, match=message):
        recurrence_jax.rnn_loop(*args, h0=h0, mask=mask)
    # the PyTorch listing rejects the same input with the same words
    if mask is None or mask.shape == (2, 5):
        t_mask = None if mask is None else torch.as_tensor(np.array(mask))
        t_h0 = None if h0 is None else torch.zeros(h0_shape)
        with pytest.raises(ValueError, match=message):
            recurrence.rnn_loop(
                *(torch.zeros(a.shape) for a in args), h0=t_h0, mask=t_mask
            )


jax.config.update("jax_enable_x64", True)


def _j(t: torch.Tensor) -> jax.Array:
    return jnp.asarray(t.detach().numpy())


def _close(a, b, atol: float = 1e-12) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=atol, rtol=0)


def _elman(
    features: int = 3, hidden: int = 4
) -> tuple[nn.RNN, tuple[jax.Array, jax.Array, jax.Array]]:
    torch.manual_seed(2)
    rnn = nn.RNN(features, hidden, batch_first=True).double()
    return rnn, (
        _j(rnn.weight_ih_l0),
        _j(rnn.weight_hh_l0),
        _j(rnn.bias_ih_l0 + rnn.bias_hh_l0),
    )


def test_rnn_loop_from_a_given_state_matches_pytorch() -> None:
    rnn, (w_ih, w_hh, b) = _elman()
    x, h0 = (
        torch.randn(2, 5, 3, dtype=torch.float64),
        torch.randn(2, 4, dtype=torch.float64),
    )
    ref, ref_last = rnn(x, h0[None])
    states, last = recurrence_jax.rnn_loop(_j(x), w_ih, w_hh, b, h0=_j(h0))
    _close(states, ref.detach())
    _close(last, ref_last[0].detach())


def test_rnn_loop_default_state_takes_the_input_dtype() -> None:
    _, weights = _elman()
    w_ih, w_hh, b = (w.astype(jnp.float32) for w in weights)
    x = jax.random.normal(jax.random.key(0), (2, 3, 3), dtype=jnp.float32)
    h0, mask = recurrence_jax.check_loop_inputs(x, w_ih, w_hh, None, None)
    assert h0.dtype == jnp.float32
    assert h0.shape == (2, 4)
    assert float(jnp.abs(h0).max()) == 0.0
    assert mask is None
    states, last = recurrence_jax.rnn_loop(x, w_ih, w_hh, b)
    assert states.dtype == last.dtype == jnp.float32
    unrolled, last_unrolled = recurrence_jax.rnn_loop_unrolled(x, w_ih, w_hh, b)
    assert unrolled.dtype == jnp.float32
    _close(unrolled, states, atol=1e-6)
    _close(last_unrolled, states[:, -1], atol=1e-6)


def test_check_loop_inputs_returns_the_given_state_and_a_float_mask() -> None:
    _, (w_ih, w_hh, _) = _elman()
    x = jnp.ones((2, 3, 3))
    h0 = jnp.full((2, 4), 0.5)
    got_h0, mask = recurrence_jax.check_loop_inputs(
        x, w_ih, w_hh, h0, jnp.array([[1, 0, 1], [1, 1, 0]])
    )
    assert got_h0 is h0
    assert mask.dtype == x.dtype
    _close(mask, [[1.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    _, bool_mask = recurrence_jax.check_loop_inputs(
        x, w_ih, w_hh, None, jnp.array([[True, False, True]] * 2)
    )
    _close(bool_mask, [[1.0, 0.0, 1.0]] * 2)


def test_masked_loop_keeps_the_state_through_padding_and_runs_under_jit() -> None:
    rnn, (w_ih, w_hh, b) = _elman()
    x = torch.randn(2, 4, 3, dtype=torch.float64)
    mask = jnp.array([[1, 0, 1, 0], [1, 1, 1, 1]])
    states, last = recurrence_jax.rnn_loop(_j(x), w_ih, w_hh, b, mask=mask)
    ref, _ = recurrence.rnn_loop(
        x,
        rnn.weight_ih_l0,
        rnn.weight_hh_l0,
        rnn.bias_ih_l0 + rnn.bias_hh_l0,
        mask=torch.tensor(np.asarray(mask)),
    )
    _close(states, ref.detach())
    _close(states[0, 1], states[0, 0])
    _close(last[0], states[0, 2])
    jitted = jax.jit(
        lambda x_, m_: recurrence_jax.rnn_loop(x_, w_ih, w_hh, b, mask=m_)
    )(_j(x), mask)
    _close(jitted[0], states)
    _close(jitted[1], last)


@pytest.mark.parametrize(
    ("x_shape", "w_ih_shape", "h0_shape", "mask_shape", "message"),
    [
        (
            (3, 4),
            (4, 4),
            None,
            None,
            r"^x must have shape \(batch, time, features\); got \(3, 4\)$",
        ),
        (
            (2, 5, 3, 1),
            (4, 3),
            None,
            None,
            r"^x must have shape \(batch, time, features\); got \(2, 5, 3, 1\)$",
        ),
        (
            (2, 5, 3),
            (4, 2),
            None,
            None,
            r"^weight_ih must have shape \(hidden, features\) = \(4, 3\); got "
            r"\(4, 2\)$",
        ),
        (
            (2, 5, 3),
            (3, 3),
            None,
            None,
            r"^weight_ih must have shape \(hidden, features\) = \(4, 3\); got "
            r"\(3, 3\)$",
        ),
        (
            (2, 5, 3),
            (4, 3),
            (4, 2),
            None,
            r"^h0 must have shape \(batch, hidden\) = \(2, 4\); got \(4, 2\)$",
        ),
        (
            (2, 5, 3),
            (4, 3),
            (4,),
            None,
            r"^h0 must have shape \(batch, hidden\) = \(2, 4\); got \(4,\)$",
        ),
        (
            (2, 5, 3),
            (4, 3),
            None,
            (5, 2),
            r"^mask must have shape \(batch, time\) = \(2, 5\); got \(5, 2\)$",
        ),
    ],
)
def test_recurrence_shape_errors_name_the_argument_and_shapes(
    x_shape, w_ih_shape, h0_shape, mask_shape, message
) -> None:
    h0 = None if h0_shape is None else jnp.zeros(h0_shape)
    mask = None if mask_shape is None else jnp.ones(mask_shape)
    with pytest.raises(ValueError, match=message):
        recurrence_jax.check_loop_inputs(
            jnp.zeros(x_shape), jnp.zeros(w_ih_shape), jnp.zeros((4, 4)), h0, mask
        )


@pytest.mark.parametrize("value", [2, -1, 0.5])
def test_a_mask_holds_only_zeros_and_ones(value: float) -> None:
    mask = jnp.ones((2, 5)).at[1, 3].set(value)
    with pytest.raises(
        ValueError, match=r"^mask must hold only 0 \(padding\) and 1 \(real step\)$"
    ):
        recurrence_jax.check_loop_inputs(
            jnp.zeros((2, 5, 3)), jnp.zeros((4, 3)), jnp.zeros((4, 4)), None, mask
        )


def test_unrolled_loop_checks_its_inputs() -> None:
    with pytest.raises(ValueError, match=r"^weight_ih must have shape"):
        recurrence_jax.rnn_loop_unrolled(
            jnp.zeros((2, 5, 3)), jnp.zeros((4, 2)), jnp.zeros((4, 4)), jnp.zeros(4)
        )


def test_trace_size_counts_the_equations() -> None:
    assert recurrence_jax.trace_size(lambda x: jnp.sin(x) + 1.0, jnp.zeros(3)) == 2
    assert recurrence_jax.trace_size(lambda x, y: x * y, jnp.zeros(3), jnp.ones(3)) == 1
    _, (w_ih, w_hh, b) = _elman()
    x = jnp.zeros((1, 3, 3))
    unrolled = recurrence_jax.trace_size(
        lambda x_: recurrence_jax.rnn_loop_unrolled(x_, w_ih, w_hh, b), x
    )
    one_step = recurrence_jax.trace_size(
        lambda x_: recurrence_jax.rnn_loop_unrolled(x_, w_ih, w_hh, b), x[:, :1]
    )
    assert unrolled > 2 * one_step


def test_compile_seconds_times_one_compilation() -> None:
    start = time.perf_counter()
    seconds = recurrence_jax.compile_seconds(
        lambda x, y: jnp.tanh(x @ y), jnp.ones((3, 3)), jnp.ones((3, 2))
    )
    outside = time.perf_counter() - start
    assert 0 < seconds <= outside
