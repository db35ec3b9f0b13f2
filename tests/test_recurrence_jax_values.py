"""Value tests for chapter_code.recurrence_jax (issue 20): what the comparisons with PyTorch leave open,
a given start state, the dtype of the default one, the exact wording of each
shape error, the scan under ``jax.jit`` with a traced mask, and the trace and compile measurements.
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
from torch import nn

from chapter_code import recurrence, recurrence_jax

jax.config.update("jax_enable_x64", True)


def _j(t: torch.Tensor) -> jax.Array:
    return jnp.asarray(t.detach().numpy())


def _close(a, b, atol: float = 1e-12) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=atol, rtol=0)


def _elman(features: int = 3, hidden: int = 4) -> tuple[nn.RNN, tuple[jax.Array, jax.Array, jax.Array]]:
    torch.manual_seed(2)
    rnn = nn.RNN(features, hidden, batch_first=True).double()
    return rnn, (_j(rnn.weight_ih_l0), _j(rnn.weight_hh_l0), _j(rnn.bias_ih_l0 + rnn.bias_hh_l0))


def test_rnn_loop_from_a_given_state_matches_pytorch() -> None:
    rnn, (w_ih, w_hh, b) = _elman()
    x, h0 = torch.randn(2, 5, 3, dtype=torch.float64), torch.randn(2, 4, dtype=torch.float64)
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
    got_h0, mask = recurrence_jax.check_loop_inputs(x, w_ih, w_hh, h0, jnp.array([[1, 0, 1], [1, 1, 0]]))
    assert got_h0 is h0
    assert mask.dtype == x.dtype
    _close(mask, [[1.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    _, bool_mask = recurrence_jax.check_loop_inputs(x, w_ih, w_hh, None, jnp.array([[True, False, True]] * 2))
    _close(bool_mask, [[1.0, 0.0, 1.0]] * 2)


def test_masked_loop_keeps_the_state_through_padding_and_runs_under_jit() -> None:
    rnn, (w_ih, w_hh, b) = _elman()
    x = torch.randn(2, 4, 3, dtype=torch.float64)
    mask = jnp.array([[1, 0, 1, 0], [1, 1, 1, 1]])
    states, last = recurrence_jax.rnn_loop(_j(x), w_ih, w_hh, b, mask=mask)
    ref, _ = recurrence.rnn_loop(x, rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0 + rnn.bias_hh_l0,
                                 mask=torch.tensor(np.asarray(mask)))
    _close(states, ref.detach())
    _close(states[0, 1], states[0, 0])
    _close(last[0], states[0, 2])
    jitted = jax.jit(lambda x_, m_: recurrence_jax.rnn_loop(x_, w_ih, w_hh, b, mask=m_))(_j(x), mask)
    _close(jitted[0], states)
    _close(jitted[1], last)


@pytest.mark.parametrize(("x_shape", "w_ih_shape", "h0_shape", "mask_shape", "message"), [
    ((3, 4), (4, 4), None, None, r"^x must have shape \(batch, time, features\); got \(3, 4\)$"),
    ((2, 5, 3, 1), (4, 3), None, None, r"^x must have shape \(batch, time, features\); got \(2, 5, 3, 1\)$"),
    ((2, 5, 3), (4, 2), None, None,
     r"^weight_ih must have shape \(hidden, features\) = \(4, 3\); got \(4, 2\)$"),
    ((2, 5, 3), (3, 3), None, None,
     r"^weight_ih must have shape \(hidden, features\) = \(4, 3\); got \(3, 3\)$"),
    ((2, 5, 3), (4, 3), (4, 2), None, r"^h0 must have shape \(batch, hidden\) = \(2, 4\); got \(4, 2\)$"),
    ((2, 5, 3), (4, 3), (4,), None, r"^h0 must have shape \(batch, hidden\) = \(2, 4\); got \(4,\)$"),
    ((2, 5, 3), (4, 3), None, (5, 2), r"^mask must have shape \(batch, time\) = \(2, 5\); got \(5, 2\)$"),
])
def test_recurrence_shape_errors_name_the_argument_and_shapes(x_shape, w_ih_shape, h0_shape, mask_shape,
                                                              message) -> None:
    h0 = None if h0_shape is None else jnp.zeros(h0_shape)
    mask = None if mask_shape is None else jnp.ones(mask_shape)
    with pytest.raises(ValueError, match=message):
        recurrence_jax.check_loop_inputs(jnp.zeros(x_shape), jnp.zeros(w_ih_shape), jnp.zeros((4, 4)), h0, mask)


@pytest.mark.parametrize("value", [2, -1, 0.5])
def test_a_mask_holds_only_zeros_and_ones(value: float) -> None:
    mask = jnp.ones((2, 5)).at[1, 3].set(value)
    with pytest.raises(ValueError, match=r"^mask must hold only 0 \(padding\) and 1 \(real step\)$"):
        recurrence_jax.check_loop_inputs(jnp.zeros((2, 5, 3)), jnp.zeros((4, 3)), jnp.zeros((4, 4)), None, mask)


def test_unrolled_loop_checks_its_inputs() -> None:
    with pytest.raises(ValueError, match=r"^weight_ih must have shape"):
        recurrence_jax.rnn_loop_unrolled(jnp.zeros((2, 5, 3)), jnp.zeros((4, 2)), jnp.zeros((4, 4)), jnp.zeros(4))


def test_trace_size_counts_the_equations() -> None:
    assert recurrence_jax.trace_size(lambda x: jnp.sin(x) + 1.0, jnp.zeros(3)) == 2
    assert recurrence_jax.trace_size(lambda x, y: x * y, jnp.zeros(3), jnp.ones(3)) == 1
    _, (w_ih, w_hh, b) = _elman()
    x = jnp.zeros((1, 3, 3))
    unrolled = recurrence_jax.trace_size(lambda x_: recurrence_jax.rnn_loop_unrolled(x_, w_ih, w_hh, b), x)
    one_step = recurrence_jax.trace_size(lambda x_: recurrence_jax.rnn_loop_unrolled(x_, w_ih, w_hh, b), x[:, :1])
    assert unrolled > 2 * one_step


def test_compile_seconds_times_one_compilation() -> None:
    start = time.perf_counter()
    seconds = recurrence_jax.compile_seconds(lambda x, y: jnp.tanh(x @ y), jnp.ones((3, 3)), jnp.ones((3, 2)))
    outside = time.perf_counter() - start
    assert 0 < seconds <= outside
