"""Tests for chapter_code.sampling_jax: each rule's distribution against the PyTorch listing; keyed draws."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

from chapter_code import sampling, sampling_jax

jax.config.update("jax_enable_x64", True)


def _logits() -> torch.Tensor:
    return torch.randn(4, 30, generator=torch.Generator().manual_seed(2), dtype=torch.float64) * 2


@pytest.mark.parametrize("temperature", [0.5, 1.0, 2.0])
def test_rules_match_pytorch(temperature: float) -> None:
    z = _logits()
    zj = jnp.asarray(z.numpy())
    pairs = [
        (sampling.temperature_probs(z, temperature), sampling_jax.temperature_probs(zj, temperature)),
        (sampling.top_k_probs(z, 5, temperature), sampling_jax.top_k_probs(zj, 5, temperature)),
        (sampling.nucleus_probs(z, 0.8, temperature), sampling_jax.nucleus_probs(zj, 0.8, temperature)),
        (sampling.top_k_probs(z[0], 1), sampling_jax.top_k_probs(zj[0], 1)),
        (sampling.nucleus_probs(z[1], 1.0), sampling_jax.nucleus_probs(zj[1], 1.0)),
    ]
    for ref, ours in pairs:
        np.testing.assert_allclose(np.asarray(ours), ref.numpy(), atol=1e-12)
    assert int(sampling_jax.greedy(zj[2])) == int(sampling.greedy(z[2]))


def test_nucleus_keeps_the_first_token_even_for_tiny_p_and_ties_like_pytorch() -> None:
    z = jnp.array([1.0, 3.0, 3.0, 0.0])
    np.testing.assert_array_equal(np.asarray(sampling_jax.nucleus_probs(z, 1e-9)), [0, 1, 0, 0])
    np.testing.assert_allclose(np.asarray(sampling_jax.nucleus_probs(z, 0.6)),
                               sampling.nucleus_probs(torch.tensor(np.asarray(z)), 0.6).numpy(), atol=1e-12)


def test_draws_follow_the_distribution_never_pick_dropped_tokens_and_repeat_per_key() -> None:
    probs = sampling_jax.top_k_probs(jnp.log(jnp.array([0.1, 0.5, 0.15, 0.25])), 3)  # drops token 0
    keys = jax.random.split(jax.random.key(0), 20_000)
    tokens = np.asarray(jax.vmap(lambda k: sampling_jax.draw(probs, k))(keys))
    counts = np.bincount(tokens, minlength=4) / len(tokens)
    assert counts[0] == 0.0
    np.testing.assert_allclose(counts, np.asarray(probs), atol=0.015)  # about 4 standard errors
    assert int(sampling_jax.draw(probs, keys[3])) == int(sampling_jax.draw(probs, keys[3]))
    assert sampling_jax.draw(jnp.ones((5, 4)) / 4, keys[0]).shape == (5,)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda z: sampling_jax.temperature_probs(z, 0.0), ValueError, "temperature must be a finite number > 0"),
        (lambda z: sampling_jax.top_k_probs(z, 31), ValueError, r"k must be an int in \[1, 30\]"),
        (lambda z: sampling_jax.nucleus_probs(z, 1.5), ValueError, r"p must be a number in \(0, 1\]"),
        (lambda z: sampling_jax.temperature_probs(z[None, None], 1.0), ValueError, "logits must have shape"),
        (lambda z: sampling_jax.greedy(z.astype(jnp.int32)), TypeError, "logits must be a floating-point"),
        (lambda z: sampling_jax.draw(z, 0), TypeError, "key must be a jax.random key"),
    ],
)
def test_bad_input_gets_the_pytorch_sides_named_errors(call, error, message) -> None:
    with pytest.raises(error, match=message):
        call(jnp.zeros(30))


def test_pytorch_side_uses_the_same_words() -> None:
    with pytest.raises(ValueError, match=r"k must be an int in \[1, 30\]"):
        sampling.top_k_probs(torch.zeros(30), 31)
    with pytest.raises(ValueError, match=r"p must be a number in \(0, 1\]"):
        sampling.nucleus_probs(torch.zeros(30), 1.5)
