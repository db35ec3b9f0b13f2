"""Value tests for the JAX twins (recurrence_jax, gates_jax, gradients_jax, linear_scan_jax), issue 20.

They cover what the comparisons with PyTorch leave open: a given start state,
the dtype of the default one, the exact wording of each shape error, the scan
under ``jax.jit`` with a traced mask, the trace and compile measurements, the
Flax-style draw written out key by key, and gradient norms whose values are
known in closed form.
"""

from __future__ import annotations

import math
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
from torch import nn

from chapter_code import gates, gates_jax, gradients_jax, linear_scan_jax, recurrence, recurrence_jax

jax.config.update("jax_enable_x64", True)


def _j(t: torch.Tensor) -> jax.Array:
    return jnp.asarray(t.detach().numpy())


def _close(a, b, atol: float = 1e-12) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=atol, rtol=0)


# ---- recurrence_jax -----------------------------------------------------------------------------------

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


# ---- gates_jax ----------------------------------------------------------------------------------------

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


def re_tuple(shape: tuple) -> str:
    return str(tuple(shape)).replace("(", r"\(").replace(")", r"\)")


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


# ---- gradients_jax ------------------------------------------------------------------------------------

def _running_sum(x: jax.Array) -> jax.Array:
    return 1.5 * jnp.cumsum(x, axis=1)  # every output depends on x_1 with slope 1.5


def test_first_input_grad_norm_in_closed_form() -> None:
    x = jnp.ones((2, 4, 3))
    norm = gradients_jax.first_input_grad_norm(_running_sum, x)
    assert type(norm) is float
    assert norm == pytest.approx(1.5 * math.sqrt(2 * 3), rel=1e-12)  # |1.5| in each of B * F entries
    squares = gradients_jax.first_input_grad_norm(lambda s: jnp.cumsum(s ** 2, axis=1), x * 2.0)
    assert squares == pytest.approx(4.0 * math.sqrt(6), rel=1e-12)  # d/dx of x^2 at 2, B * F times
    last_only = gradients_jax.first_input_grad_norm(lambda s: s * 3.0, x)
    assert last_only == 0.0  # the last output of an elementwise map does not see x_1 (T > 1)


@pytest.mark.parametrize("shape", [(2, 3), (1, 2, 3, 4)])
def test_first_input_grad_norm_needs_a_sequence(shape: tuple) -> None:
    with pytest.raises(ValueError, match=rf"^x must have shape \(batch, time, features\); got {re_tuple(shape)}$"):
        gradients_jax.first_input_grad_norm(_running_sum, jnp.zeros(shape))


def test_default_draw_is_a_standard_normal_per_lag_from_seed_plus_lag() -> None:
    seen: list[tuple] = []

    def squares(x: jax.Array) -> jax.Array:
        seen.append(x.shape)
        return jnp.cumsum(x ** 2, axis=1)

    norms = gradients_jax.grad_at_first_input(squares, [1, 4], input_size=2, batch=3, seed=5)
    assert seen == [(3, 1, 2), (3, 4, 2)]
    for lag, norm in zip([1, 4], norms, strict=True):
        x = jax.random.normal(jax.random.key(5 + lag), (3, lag, 2))
        assert norm == pytest.approx(2 * float(jnp.linalg.norm(x[:, 0])), rel=1e-12)
    default = gradients_jax.grad_at_first_input(squares, [2], input_size=2)
    x = jax.random.normal(jax.random.key(102), (8, 2, 2))
    assert default == [pytest.approx(2 * float(jnp.linalg.norm(x[:, 0])), rel=1e-12)]


def test_a_given_draw_is_used_per_lag() -> None:
    asked: list[int] = []

    def draw(lag: int) -> jax.Array:
        asked.append(lag)
        return jnp.full((1, lag, 2), float(lag))

    norms = gradients_jax.grad_at_first_input(lambda s: jnp.cumsum(s ** 2, axis=1), [3, 1], input_size=2,
                                              batch=5, seed=0, draw=draw)
    assert asked == [3, 1]
    assert norms == [pytest.approx(2 * 3 * math.sqrt(2)), pytest.approx(2 * 1 * math.sqrt(2))]


def test_a_batch_of_one_is_allowed_and_zero_is_named() -> None:
    assert len(gradients_jax.grad_at_first_input(_running_sum, [2], input_size=1, batch=1)) == 1
    with pytest.raises(ValueError, match=r"^batch must be >= 1; got 0$"):
        gradients_jax.grad_at_first_input(_running_sum, [2], input_size=1, batch=0)


@pytest.mark.parametrize("lags", [[], [1, 0], [2, -3], [1.0], [False], ["2"]])
def test_bad_lags_are_named_with_the_list(lags) -> None:
    with pytest.raises(ValueError, match=r"^lags must be a non-empty sequence of ints >= 1; got " + re_list(lags)):
        gradients_jax.grad_at_first_input(_running_sum, lags, input_size=1)


def re_list(lags) -> str:
    return repr(list(lags)).replace("[", r"\[").replace("]", r"\]").replace(".", r"\.") + "$"


def test_lags_of_one_are_allowed() -> None:
    (norm,) = gradients_jax.grad_at_first_input(_running_sum, (1,), input_size=2, batch=2)
    assert norm == pytest.approx(1.5 * 2)


# ---- linear_scan_jax ----------------------------------------------------------------------------------

def test_combine_in_closed_form() -> None:
    a, b = linear_scan_jax.combine((jnp.array(2.0), jnp.array(3.0)), (jnp.array(5.0), jnp.array(7.0)))
    assert (float(a), float(b)) == (10.0, 22.0)  # h -> 5 (2 h + 3) + 7 = 10 h + 22
    a, b = linear_scan_jax.combine((jnp.array(5.0), jnp.array(7.0)), (jnp.array(2.0), jnp.array(3.0)))
    assert (float(a), float(b)) == (10.0, 17.0)  # the other order: 2 (5 h + 7) + 3


@pytest.mark.parametrize("fn", [linear_scan_jax.linear_scan_sequential, linear_scan_jax.linear_scan_parallel])
def test_both_scans_in_closed_form(fn) -> None:
    a = jnp.array([[[0.5], [2.0], [1.0]]])
    b = jnp.array([[[1.0], [1.0], [-3.0]]])
    _close(fn(a, b), [[[1.0], [3.0], [0.0]]])  # h0 = 0: 1, 2*1+1, 3-3
    _close(fn(a, b, jnp.array([[4.0]])), [[[3.0], [7.0], [4.0]]])  # h0 = 4: 0.5*4+1, 2*3+1, 7-3


@pytest.mark.parametrize("fn", [linear_scan_jax.linear_scan_sequential, linear_scan_jax.linear_scan_parallel])
def test_scans_keep_float32(fn) -> None:
    a = jnp.full((2, 3, 4), 0.5, jnp.float32)
    out = fn(a, a)
    assert out.dtype == jnp.float32
    assert out.shape == (2, 3, 4)
    _close(out[:, -1], jnp.full((2, 4), 0.875), atol=1e-7)


@pytest.mark.parametrize(("a_shape", "b_shape", "h0_shape", "message"), [
    ((2, 5), (2, 5), None, r"^b must have shape \(batch, time, hidden\); got \(2, 5\)$"),
    ((2, 5, 3, 1), (2, 5, 3, 1), None, r"^b must have shape \(batch, time, hidden\); got \(2, 5, 3, 1\)$"),
    ((2, 5, 2), (2, 5, 3), None, r"^a must have the shape of b \(2, 5, 3\); got \(2, 5, 2\)$"),
    ((2, 5, 3), (2, 5, 3), (3, 2), None),
    ((2, 5, 3), (2, 5, 3), (2, 5), None),
])
def test_scan_shape_errors_name_the_argument(a_shape, b_shape, h0_shape, message) -> None:
    message = message or (r"^h0 must have shape \(batch, hidden\) = \(2, 3\); got " + re_tuple(h0_shape) + "$")
    h0 = None if h0_shape is None else jnp.zeros(h0_shape)
    for fn in (linear_scan_jax.linear_scan_sequential, linear_scan_jax.linear_scan_parallel):
        with pytest.raises(ValueError, match=message):
            fn(jnp.zeros(a_shape), jnp.zeros(b_shape), h0)


def test_scan_accepts_a_start_state_of_the_right_shape_only() -> None:
    a, b = jnp.ones((2, 1, 3)), jnp.ones((2, 1, 3))
    _close(linear_scan_jax.linear_scan_parallel(a, b, jnp.ones((2, 3))), jnp.full((2, 1, 3), 2.0))
    _close(linear_scan_jax.linear_scan_sequential(a, b, jnp.ones((2, 3))), jnp.full((2, 1, 3), 2.0))
