"""The vanilla (Elman) recurrence in JAX, beside its PyTorch twin ``recurrence.py``.

Naming convention for the whole JAX edition: a JAX module is the PyTorch
module's name with a ``_jax`` suffix (``recurrence.py`` -> ``recurrence_jax.py``).
The twins then sort next to each other in ``chapter_code/``, a page can
``literalinclude`` either one by the same function name, and no PyTorch module
ever imports jax: the engine keys a memoized run on ``requirements/jax.txt``
only when that run's sources import jax, and a flat ``_jax`` file keeps that
boundary visible. (A ``chapter_code/jax/`` subpackage would reuse the library's
own name, which reads badly in imports and tracebacks.)

Same rule, same layout, same names as the PyTorch side: ``h_t = tanh(x_t W_ih^T
+ h_{t-1} W_hh^T + b)`` with batch-first ``(B, T, F)`` inputs and PyTorch's
``(H, F)``/``(H, H)`` weights, so weights copy across unchanged. The loop is a
``jax.lax.scan`` over time: under ``jax.jit`` a Python ``for`` loop over time is
unrolled into one copy of the step per time step, so the traced program grows
with ``T``; :func:`rnn_loop_unrolled` and :func:`trace_size` measure that.

Pages: "Recurrence" (the PyTorch/JAX tabs and the scan-versus-loop measurement).
Follows Elman (1990) and the ``jax.lax.scan`` documentation.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np


def rnn_step(
    x_t: jax.Array,
    h_prev: jax.Array,
    weight_ih: jax.Array,
    weight_hh: jax.Array,
    bias: jax.Array,
) -> jax.Array:
    """One vanilla RNN step; ``x_t`` (B, F), ``h_prev`` (B, H), ``bias`` = bias_ih +
    bias_hh.
    """
    return jnp.tanh(x_t @ weight_ih.T + h_prev @ weight_hh.T + bias)  # (B, H)


def check_loop_inputs(
    x: jax.Array,
    weight_ih: jax.Array,
    weight_hh: jax.Array,
    h0: jax.Array | None,
    mask: jax.Array | None,
) -> tuple[jax.Array, jax.Array | None]:
    """Validate shapes as ``recurrence.check_loop_inputs`` does (same messages); return
    h0 and a float mask.
    """
    if x.ndim != 3:
        raise ValueError(
            f"x must have shape (batch, time, features); got {tuple(x.shape)}"
        )
    batch, steps, features = x.shape
    hidden = weight_hh.shape[0]
    if weight_ih.shape != (hidden, features):
        raise ValueError(
            f"weight_ih must have shape (hidden, features) = ({hidden}, {features}); "
            f"got {tuple(weight_ih.shape)}"
        )
    if h0 is None:
        h0 = jnp.zeros((batch, hidden), x.dtype)
    elif h0.shape != (batch, hidden):
        raise ValueError(
            f"h0 must have shape (batch, hidden) = ({batch}, {hidden}); got "
            f"{tuple(h0.shape)}"
        )
    if mask is None:
        return h0, None
    if mask.shape != (batch, steps):
        raise ValueError(
            f"mask must have shape (batch, time) = ({batch}, {steps}); got "
            f"{tuple(mask.shape)}"
        )
    if (
        not isinstance(mask, jax.core.Tracer)
        and not np.isin(np.asarray(mask), (0, 1)).all()
    ):
        raise ValueError("mask must hold only 0 (padding) and 1 (real step)")
    return h0, jnp.asarray(mask, x.dtype)


def rnn_loop(
    x: jax.Array,
    weight_ih: jax.Array,
    weight_hh: jax.Array,
    bias: jax.Array,
    h0: jax.Array | None = None,
    mask: jax.Array | None = None,
) -> tuple[jax.Array, jax.Array]:
    """Scan :func:`rnn_step` over x (B, T, F); return every state (B, T, H) and the last
    (B, H).
    """
    h0, m = check_loop_inputs(x, weight_ih, weight_hh, h0, mask)
    keep = jnp.ones(x.shape[:2], x.dtype) if m is None else m  # (B, T)

    def step(h, inputs):  # (carry, x_t) -> (new carry, output): scan's contract
        x_t, keep_t = inputs  # (B, F), (B,)
        h_new = rnn_step(x_t, h, weight_ih, weight_hh, bias)
        # padded step: keep h
        h_new = keep_t[:, None] * h_new + (1.0 - keep_t[:, None]) * h
        return h_new, h_new

    # scan walks the leading axis: (T, B, F), (T, B)
    time_major = (jnp.swapaxes(x, 0, 1), keep.T)
    last, states = jax.lax.scan(step, h0, time_major)
    return jnp.swapaxes(states, 0, 1), last  # (B, T, H), (B, H)


def rnn_loop_unrolled(
    x: jax.Array, weight_ih: jax.Array, weight_hh: jax.Array, bias: jax.Array
) -> tuple[jax.Array, jax.Array]:
    """The same loop written as a Python ``for`` over time: under ``jax.jit`` it unrolls
    into T steps.
    """
    h, _ = check_loop_inputs(x, weight_ih, weight_hh, None, None)
    states = []
    # a Python loop: tracing records one copy of the step per t
    for t in range(x.shape[1]):
        h = rnn_step(x[:, t], h, weight_ih, weight_hh, bias)
        states.append(h)
    return jnp.stack(states, axis=1), h


def trace_size(fn: Callable, *args: jax.Array) -> int:
    """Number of equations in the jaxpr that tracing ``fn(*args)`` records (the program
    jit compiles).
    """
    return len(jax.make_jaxpr(fn)(*args).jaxpr.eqns)


def compile_seconds(fn: Callable, *args: jax.Array) -> float:
    """Wall seconds to trace, lower and compile ``jax.jit(fn)`` for these argument
    shapes (no caching).
    """
    start = time.perf_counter()
    jax.jit(fn).lower(*args).compile()
    return time.perf_counter() - start
