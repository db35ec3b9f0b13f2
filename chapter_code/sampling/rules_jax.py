"""Decoding rules in JAX: temperature, top-k and nucleus; the JAX twin of
``sampling.py``.

Module naming follows ``recurrence_jax.py``. The rules map logits ``(V,)`` or
``(B, V)`` to a distribution exactly as the PyTorch versions do (ranked by the
logits, first token always kept by the nucleus), and raise the same named
errors. Randomness is the one real difference: PyTorch draws from a stateful
``torch.Generator``, JAX from an explicit key that the caller splits, so the
same key gives the same token every time and two draws need two keys.

Pages: "Generating text" (the PyTorch/JAX tabs).
Follows Fan et al. (2018) for top-k and Holtzman et al. (2020) for nucleus sampling.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp


def _check_logits(logits: jax.Array) -> None:
    if not hasattr(logits, "dtype") or not jnp.issubdtype(logits.dtype, jnp.floating):
        raise TypeError(
            "logits must be a floating-point tensor; got "
            f"{getattr(logits, 'dtype', type(logits))}"
        )
    if logits.ndim not in (1, 2) or logits.shape[-1] < 1:
        raise ValueError(
            f"logits must have shape (V,) or (B, V); got {tuple(logits.shape)}"
        )


def temperature_probs(logits: jax.Array, temperature: float) -> jax.Array:
    """softmax(logits / temperature) over the last axis."""
    _check_logits(logits)
    if (
        isinstance(temperature, bool)
        or not isinstance(temperature, (int, float))
        or not temperature > 0
        or math.isinf(temperature)
    ):
        raise ValueError(
            f"temperature must be a finite number > 0; got {temperature!r} (use "
            "greedy for the limit 0)"
        )
    return jax.nn.softmax(logits / temperature, axis=-1)


def top_k_probs(logits: jax.Array, k: int, temperature: float = 1.0) -> jax.Array:
    """The temperature distribution restricted to the ``k`` largest logits and
    renormalised.
    """
    probs = temperature_probs(logits, temperature)
    vocab = logits.shape[-1]
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= vocab:
        raise ValueError(
            f"k must be an int in [1, {vocab}] (the vocabulary size); got {k!r}"
        )
    _, top = jax.lax.top_k(logits, k)  # (..., k) indices, ranked by the logits
    # 1 where kept, (..., V)
    kept = jax.nn.one_hot(top, vocab, dtype=probs.dtype).sum(axis=-2)
    masked = probs * kept
    return masked / masked.sum(axis=-1, keepdims=True)


def nucleus_probs(logits: jax.Array, p: float, temperature: float = 1.0) -> jax.Array:
    """The temperature distribution restricted to its smallest top set with mass >=
    ``p``, renormalised.
    """
    probs = temperature_probs(logits, temperature)
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p <= 1:
        raise ValueError(f"p must be a number in (0, 1]; got {p!r}")
    # descending; ties keep their order
    order = jnp.argsort(-logits, axis=-1, stable=True)
    sorted_probs = jnp.take_along_axis(probs, order, axis=-1)
    # mass ranked above each token
    before = jnp.cumsum(sorted_probs, axis=-1) - sorted_probs
    keep_sorted = (before < p).astype(probs.dtype)  # the first token is always kept
    kept = jnp.zeros_like(probs)
    kept = jnp.put_along_axis(kept, order, keep_sorted, axis=-1, inplace=False)
    masked = probs * kept
    return masked / masked.sum(axis=-1, keepdims=True)


def greedy(logits: jax.Array) -> jax.Array:
    """The index of the largest logit (ties: the first)."""
    _check_logits(logits)
    return jnp.argmax(logits, axis=-1)


def draw(probs: jax.Array, key: jax.Array) -> jax.Array:
    """One token per row of ``probs`` from ``key`` (``(V,)`` gives a 0-d array);
    zero-probability tokens never.
    """
    if not isinstance(key, jax.Array) or not (
        jnp.issubdtype(key.dtype, jax.dtypes.prng_key) or key.shape == (2,)
    ):
        raise TypeError(
            "key must be a jax.random key (jax.random.key(seed)), so that samples "
            "are reproducible"
        )
    # log 0 = -inf: never drawn
    return jax.random.categorical(key, jnp.log(probs), axis=-1)
