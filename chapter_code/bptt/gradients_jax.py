"""Gradient against lag in JAX: the JAX twin of ``gradients.grad_at_first_input``.

Module naming follows ``recurrence_jax.py``. Where PyTorch asks autograd for the
gradient of a tensor that was marked ``requires_grad``, JAX differentiates a
function: ``jax.grad`` of "the summed last output as a function of the input
sequence" returns a gradient with the input's shape ``(B, T, F)``, and its
slice at the first step is what the chapter plots against the lag ``T``.

Pages: "Gradients through time" (the PyTorch/JAX tabs).
Follows Bengio et al. (1994) and Pascanu et al. (2013).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp

#: ``run(x (B, T, F)) -> outputs (B, T, H)``: any scanned loop with its weights bound.
Run = Callable[[jax.Array], jax.Array]


def first_input_grad_norm(run: Run, x: jax.Array) -> float:
    """Norm of d(sum of the last output)/d(x_1), over the batch and the features."""
    if x.ndim != 3:
        raise ValueError(
            f"x must have shape (batch, time, features); got {tuple(x.shape)}"
        )
    grad = jax.grad(lambda seq: run(seq)[:, -1].sum())(x)  # (B, T, F), like x
    return float(jnp.linalg.norm(grad[:, 0]))


def grad_at_first_input(
    run: Run,
    lags: Sequence[int],
    input_size: int,
    batch: int = 8,
    seed: int = 100,
    draw: Callable[[int], jax.Array] | None = None,
) -> list[float]:
    """:func:`first_input_grad_norm` for a random input of each length in ``lags``.

    ``draw(lag)`` returns the (batch, lag, input_size) input; by default a
    standard normal from ``jax.random.key(seed + lag)``, one key per lag as the
    PyTorch version uses one generator per lag. Pass ``draw`` to feed both
    frameworks the very same inputs.
    """
    if len(lags) == 0 or any(
        isinstance(t, bool) or not isinstance(t, int) or t < 1 for t in lags
    ):
        raise ValueError(
            f"lags must be a non-empty sequence of ints >= 1; got {list(lags)!r}"
        )
    if batch < 1:
        raise ValueError(f"batch must be >= 1; got {batch}")
    if draw is None:

        def draw(lag: int) -> jax.Array:
            return jax.random.normal(
                jax.random.key(seed + lag), (batch, lag, input_size)
            )

    return [first_input_grad_norm(run, draw(lag)) for lag in lags]
