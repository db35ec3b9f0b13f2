"""Tests for chapter_code.linear_scan_jax: associative scan against sequential loops (JAX, NumPy and torch)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

from chapter_code import linear_scan_jax as ls

jax.config.update("jax_enable_x64", True)


def _numpy_loop(a: np.ndarray, b: np.ndarray, h0: np.ndarray) -> np.ndarray:
    h, out = h0, []
    for t in range(a.shape[1]):
        h = a[:, t] * h + b[:, t]
        out.append(h)
    return np.stack(out, axis=1)


@pytest.mark.parametrize("steps", [1, 2, 7, 64])
def test_parallel_and_sequential_match_a_plain_loop(steps: int) -> None:
    rng = np.random.default_rng(steps)
    a, b, h0 = rng.uniform(0.5, 1.0, (3, steps, 4)), rng.normal(size=(3, steps, 4)), rng.normal(size=(3, 4))
    ref = _numpy_loop(a, b, h0)
    for fn in (ls.linear_scan_sequential, ls.linear_scan_parallel):
        np.testing.assert_allclose(np.asarray(fn(jnp.asarray(a), jnp.asarray(b), jnp.asarray(h0))), ref, atol=1e-12)
    np.testing.assert_allclose(np.asarray(ls.linear_scan_parallel(jnp.asarray(a), jnp.asarray(b))),
                               _numpy_loop(a, b, np.zeros((3, 4))), atol=1e-12)


def test_gradients_match_a_torch_loop() -> None:
    gen = torch.Generator().manual_seed(0)
    a = torch.rand(2, 12, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    b = torch.randn(2, 12, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    h, loss = torch.zeros(2, 3, dtype=torch.float64), 0.0
    for t in range(12):
        h = a[:, t] * h + b[:, t]
        loss = loss + (h ** 2).sum()
    loss.backward()
    g_a, g_b = jax.grad(lambda a_, b_: (ls.linear_scan_parallel(a_, b_) ** 2).sum(), argnums=(0, 1))(
        jnp.asarray(a.detach().numpy()), jnp.asarray(b.detach().numpy()))
    np.testing.assert_allclose(np.asarray(g_a), a.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(np.asarray(g_b), b.grad.numpy(), atol=1e-10)


def test_combine_is_associative() -> None:
    rng = np.random.default_rng(1)
    s1, s2, s3 = ((jnp.asarray(rng.normal(size=3)), jnp.asarray(rng.normal(size=3))) for _ in range(3))
    left, right = ls.combine(ls.combine(s1, s2), s3), ls.combine(s1, ls.combine(s2, s3))
    for x, y in zip(left, right, strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), atol=1e-12)


@pytest.mark.parametrize(
    ("a_shape", "b_shape", "h0_shape", "message"),
    [((2, 5, 3), (2, 5), None, "b must have shape"), ((2, 4, 3), (2, 5, 3), None, "a must have the shape of b"),
     ((2, 5, 3), (2, 5, 3), (3,), "h0 must have shape")],
)
def test_bad_shapes_get_named_errors(a_shape, b_shape, h0_shape, message) -> None:
    h0 = None if h0_shape is None else jnp.zeros(h0_shape)
    for fn in (ls.linear_scan_sequential, ls.linear_scan_parallel):
        with pytest.raises(ValueError, match=message):
            fn(jnp.zeros(a_shape), jnp.zeros(b_shape), h0)
