"""The LSTM and GRU steps in JAX, scanned over time; the JAX twin of ``gates.py``.

Module naming follows ``recurrence_jax.py`` (the PyTorch module's name plus
``_jax``). Weights keep PyTorch's stacked layout, LSTM blocks ``i, f, g, o`` and
GRU blocks ``r, z, n``, two bias vectors where PyTorch has two, so an ``nn.LSTM``
or ``nn.GRU``'s tensors copy across unchanged. Each loop is a ``jax.lax.scan``
whose carry is the state: ``(h, c)`` for the LSTM, ``h`` for the GRU.

:func:`flax_lstm_init` draws weights the way Flax's ``LSTMCell`` does by
default (fan-in-scaled truncated normal input kernels, orthogonal recurrent
kernels, zero biases), written with ``jax.random`` and laid out like
PyTorch's, so the two frameworks' starting points can be compared without
adding Flax to the book's environment.

Pages: "Gated memory: LSTM and GRU" (the PyTorch/JAX tabs and the
initialisation comparison).
Follows Hochreiter and Schmidhuber (1997), Gers et al. (2000), Cho et al. (2014).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def _check_sequence(x: jax.Array, weight_ih: jax.Array, blocks: int) -> tuple[int, int]:
    if x.ndim != 3:
        raise ValueError(
            f"x must have shape (batch, time, features); got {tuple(x.shape)}"
        )
    hidden = weight_ih.shape[0] // blocks
    if weight_ih.shape != (blocks * hidden, x.shape[2]):
        raise ValueError(
            f"weight_ih must have shape ({blocks} * hidden, features) with features = "
            f"{x.shape[2]}; got {tuple(weight_ih.shape)}"
        )
    return x.shape[0], hidden


def lstm_cell_step(
    x_t: jax.Array,
    h_prev: jax.Array,
    c_prev: jax.Array,
    weight_ih: jax.Array,
    weight_hh: jax.Array,
    bias: jax.Array,
) -> tuple[jax.Array, jax.Array]:
    """One LSTM step; ``x_t`` (B, F), ``h_prev``/``c_prev`` (B, H), ``bias`` = bias_ih +
    bias_hh; returns (h, c).
    """
    pre = x_t @ weight_ih.T + h_prev @ weight_hh.T + bias  # (B, 4H), blocks i, f, g, o
    a_i, a_f, a_g, a_o = jnp.split(pre, 4, axis=1)
    i, f, o = jax.nn.sigmoid(a_i), jax.nn.sigmoid(a_f), jax.nn.sigmoid(a_o)
    c = f * c_prev + i * jnp.tanh(a_g)  # the additive accumulator, gated
    return o * jnp.tanh(c), c


def lstm_loop(
    x: jax.Array,
    weight_ih: jax.Array,
    weight_hh: jax.Array,
    bias: jax.Array,
    state: tuple[jax.Array, jax.Array] | None = None,
) -> tuple[jax.Array, tuple[jax.Array, jax.Array]]:
    """Scan :func:`lstm_cell_step` over x (B, T, F); return (outputs (B, T, H), (h_T,
    c_T)).
    """
    batch, hidden = _check_sequence(x, weight_ih, 4)
    if state is None:
        zeros = jnp.zeros((batch, hidden), x.dtype)
        state = (zeros, zeros)

    def step(carry, x_t):  # carry (h, c), each (B, H)
        h, c = lstm_cell_step(x_t, *carry, weight_ih, weight_hh, bias)
        return (h, c), h

    # over time: (T, B, F)
    last, outputs = jax.lax.scan(step, state, jnp.swapaxes(x, 0, 1))
    return jnp.swapaxes(outputs, 0, 1), last


def gru_step(
    x_t: jax.Array,
    h_prev: jax.Array,
    weight_ih: jax.Array,
    weight_hh: jax.Array,
    bias_ih: jax.Array,
    bias_hh: jax.Array,
    reset_after: bool,
) -> jax.Array:
    """One GRU step in PyTorch's layout (blocks r, z, n); ``reset_after=True`` is
    ``nn.GRU``'s form.
    """
    gx_r, gx_z, gx_n = jnp.split(x_t @ weight_ih.T + bias_ih, 3, axis=1)  # (B, H) each
    w_r, w_z, w_n = jnp.split(weight_hh, 3, axis=0)
    b_r, b_z, b_n = jnp.split(bias_hh, 3)
    r = jax.nn.sigmoid(gx_r + h_prev @ w_r.T + b_r)  # reset gate
    u = jax.nn.sigmoid(gx_z + h_prev @ w_z.T + b_z)  # update gate (PyTorch's z)
    if reset_after:  # a Python bool: decided at trace time, not a traced branch
        candidate = jnp.tanh(gx_n + r * (h_prev @ w_n.T + b_n))
    else:
        candidate = jnp.tanh(gx_n + (r * h_prev) @ w_n.T + b_n)
    return u * h_prev + (1.0 - u) * candidate


def gru_loop(
    x: jax.Array,
    weight_ih: jax.Array,
    weight_hh: jax.Array,
    bias_ih: jax.Array,
    bias_hh: jax.Array,
    reset_after: bool,
    h0: jax.Array | None = None,
) -> tuple[jax.Array, jax.Array]:
    """Scan :func:`gru_step` over x (B, T, F); return states (B, T, H) and the last
    state (B, H).
    """
    batch, hidden = _check_sequence(x, weight_ih, 3)
    h0 = jnp.zeros((batch, hidden), x.dtype) if h0 is None else h0

    def step(h, x_t):
        h = gru_step(x_t, h, weight_ih, weight_hh, bias_ih, bias_hh, reset_after)
        return h, h

    last, states = jax.lax.scan(step, h0, jnp.swapaxes(x, 0, 1))
    return jnp.swapaxes(states, 0, 1), last


def flax_lstm_init(
    key: jax.Array, input_size: int, hidden_size: int
) -> dict[str, jax.Array]:
    """Flax ``LSTMCell``'s default draw, in PyTorch's layout: ``weight_ih``,
    ``weight_hh``, ``bias_ih``, ``bias_hh``.

    Per gate: input kernel ``lecun_normal`` (truncated normal, variance 1/F),
    recurrent kernel orthogonal (H, H), and zero biases.
    """
    for name, value in [("input_size", input_size), ("hidden_size", hidden_size)]:
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive int; got {value!r}")
    k_in, k_rec = jax.random.split(key)
    lecun = jax.nn.initializers.lecun_normal()
    orthogonal = jax.nn.initializers.orthogonal()
    # (4H, F)
    w_ih = jnp.concatenate(
        [lecun(k, (input_size, hidden_size)).T for k in jax.random.split(k_in, 4)]
    )
    w_hh = jnp.concatenate(
        [
            orthogonal(k, (hidden_size, hidden_size)).T
            for k in jax.random.split(k_rec, 4)
        ]
    )
    zeros = jnp.zeros(4 * hidden_size)
    return {"weight_ih": w_ih, "weight_hh": w_hh, "bias_ih": zeros, "bias_hh": zeros}
