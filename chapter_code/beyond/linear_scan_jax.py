"""The diagonal linear recurrence ``h_t = a_t * h_{t-1} + b_t`` in JAX, sequential and
associative.

Module naming follows ``recurrence_jax.py``; this module is self-contained
(Chapter 7's PyTorch listing is its own module). ``a`` and ``b`` are
``(B, T, H)``: one decay and one input per step and unit, elementwise, so the
recurrence has no nonlinearity between steps. That is what makes it
parallel: composing two steps, ``h -> a_2 (a_1 h + b_1) + b_2``, is again a step
with decay ``a_2 a_1`` and input ``a_2 b_1 + b_2``. The composition is
associative, so ``jax.lax.associative_scan`` can combine all prefixes in
``O(log T)`` rounds instead of the ``T`` dependent steps of ``jax.lax.scan``.

Pages: Chapter 7 (the linear recurrence) can show it beside its PyTorch listing. Follows
Blelloch (1990) for scans and Martin and Cundy (2018) for parallel linear recurrences.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def _check(a: jax.Array, b: jax.Array, h0: jax.Array | None) -> None:
    if b.ndim != 3:
        raise ValueError(
            f"b must have shape (batch, time, hidden); got {tuple(b.shape)}"
        )
    if a.shape != b.shape:
        raise ValueError(
            f"a must have the shape of b {tuple(b.shape)}; got {tuple(a.shape)}"
        )
    if h0 is not None and h0.shape != (b.shape[0], b.shape[2]):
        raise ValueError(
            f"h0 must have shape (batch, hidden) = ({b.shape[0]}, {b.shape[2]}); got "
            f"{tuple(h0.shape)}"
        )


def linear_scan_sequential(
    a: jax.Array, b: jax.Array, h0: jax.Array | None = None
) -> jax.Array:
    """Every state (B, T, H) of ``h_t = a_t * h_{t-1} + b_t``, one step after another
    (``lax.scan``).
    """
    _check(a, b, h0)
    h0 = jnp.zeros_like(b[:, 0]) if h0 is None else h0

    def step(h, inputs):
        a_t, b_t = inputs
        h = a_t * h + b_t
        return h, h

    _, states = jax.lax.scan(step, h0, (jnp.swapaxes(a, 0, 1), jnp.swapaxes(b, 0, 1)))
    return jnp.swapaxes(states, 0, 1)


def combine(
    earlier: tuple[jax.Array, jax.Array], later: tuple[jax.Array, jax.Array]
) -> tuple[jax.Array, jax.Array]:
    """Two steps as one: apply ``earlier`` = (a_1, b_1), then ``later`` = (a_2, b_2)."""
    a_1, b_1 = earlier
    a_2, b_2 = later
    return a_2 * a_1, a_2 * b_1 + b_2


def linear_scan_parallel(
    a: jax.Array, b: jax.Array, h0: jax.Array | None = None
) -> jax.Array:
    """The same states by ``jax.lax.associative_scan`` over time; ``h0`` is folded into
    the first input.
    """
    _check(a, b, h0)
    if h0 is not None:
        b = b.at[:, 0].add(a[:, 0] * h0)  # h_1 = a_1 h_0 + b_1
    _, states = jax.lax.associative_scan(combine, (a, b), axis=1)
    return states
