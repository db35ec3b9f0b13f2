"""Tests for chapter_code.beyond.linear_scan_jax: associative scan against sequential
loops (JAX, NumPy and torch).

Value tests for chapter_code.beyond.linear_scan_jax (issue 20): what the comparisons
with PyTorch leave open, both scans and ``combine`` in closed form, float32 kept, and
the exact wording of each shape error.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

from chapter_code.beyond import linear_scan_jax
from chapter_code.beyond import linear_scan_jax as ls

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
    a, b, h0 = (
        rng.uniform(0.5, 1.0, (3, steps, 4)),
        rng.normal(size=(3, steps, 4)),
        rng.normal(size=(3, 4)),
    )
    ref = _numpy_loop(a, b, h0)
    for fn in (ls.linear_scan_sequential, ls.linear_scan_parallel):
        np.testing.assert_allclose(
            np.asarray(fn(jnp.asarray(a), jnp.asarray(b), jnp.asarray(h0))),
            ref,
            atol=1e-12,
        )
    np.testing.assert_allclose(
        np.asarray(ls.linear_scan_parallel(jnp.asarray(a), jnp.asarray(b))),
        _numpy_loop(a, b, np.zeros((3, 4))),
        atol=1e-12,
    )


def test_gradients_match_a_torch_loop() -> None:
    gen = torch.Generator().manual_seed(0)
    a = torch.rand(2, 12, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    b = torch.randn(2, 12, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    h, loss = torch.zeros(2, 3, dtype=torch.float64), 0.0
    for t in range(12):
        h = a[:, t] * h + b[:, t]
        loss = loss + (h**2).sum()
    loss.backward()
    g_a, g_b = jax.grad(
        lambda a_, b_: (ls.linear_scan_parallel(a_, b_) ** 2).sum(), argnums=(0, 1)
    )(jnp.asarray(a.detach().numpy()), jnp.asarray(b.detach().numpy()))
    np.testing.assert_allclose(np.asarray(g_a), a.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(np.asarray(g_b), b.grad.numpy(), atol=1e-10)


def test_combine_is_associative() -> None:
    rng = np.random.default_rng(1)
    s1, s2, s3 = (
        (jnp.asarray(rng.normal(size=3)), jnp.asarray(rng.normal(size=3)))
        for _ in range(3)
    )
    left, right = ls.combine(ls.combine(s1, s2), s3), ls.combine(s1, ls.combine(s2, s3))
    for x, y in zip(left, right, strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), atol=1e-12)


@pytest.mark.parametrize(
    ("a_shape", "b_shape", "h0_shape", "message"),
    [
        ((2, 5, 3), (2, 5), None, "b must have shape"),
        ((2, 4, 3), (2, 5, 3), None, "a must have the shape of b"),
        ((2, 5, 3), (2, 5, 3), (3,), "h0 must have shape"),
    ],
)
def test_bad_shapes_get_named_errors(a_shape, b_shape, h0_shape, message) -> None:
    h0 = None if h0_shape is None else jnp.zeros(h0_shape)
    for fn in (ls.linear_scan_sequential, ls.linear_scan_parallel):
        with pytest.raises(ValueError, match=message):
            fn(jnp.zeros(a_shape), jnp.zeros(b_shape), h0)


jax.config.update("jax_enable_x64", True)


def _close(a, b, atol: float = 1e-12) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=atol, rtol=0)


def re_tuple(shape: tuple) -> str:
    return str(tuple(shape)).replace("(", r"\(").replace(")", r"\)")


def test_combine_in_closed_form() -> None:
    a, b = linear_scan_jax.combine(
        (jnp.array(2.0), jnp.array(3.0)), (jnp.array(5.0), jnp.array(7.0))
    )
    assert (float(a), float(b)) == (10.0, 22.0)  # h -> 5 (2 h + 3) + 7 = 10 h + 22
    a, b = linear_scan_jax.combine(
        (jnp.array(5.0), jnp.array(7.0)), (jnp.array(2.0), jnp.array(3.0))
    )
    assert (float(a), float(b)) == (10.0, 17.0)  # the other order: 2 (5 h + 7) + 3


@pytest.mark.parametrize(
    "fn", [linear_scan_jax.linear_scan_sequential, linear_scan_jax.linear_scan_parallel]
)
def test_both_scans_in_closed_form(fn) -> None:
    a = jnp.array([[[0.5], [2.0], [1.0]]])
    b = jnp.array([[[1.0], [1.0], [-3.0]]])
    _close(fn(a, b), [[[1.0], [3.0], [0.0]]])  # h0 = 0: 1, 2*1+1, 3-3
    # h0 = 4: 0.5*4+1, 2*3+1, 7-3
    _close(fn(a, b, jnp.array([[4.0]])), [[[3.0], [7.0], [4.0]]])


@pytest.mark.parametrize(
    "fn", [linear_scan_jax.linear_scan_sequential, linear_scan_jax.linear_scan_parallel]
)
def test_scans_keep_float32(fn) -> None:
    a = jnp.full((2, 3, 4), 0.5, jnp.float32)
    out = fn(a, a)
    assert out.dtype == jnp.float32
    assert out.shape == (2, 3, 4)
    _close(out[:, -1], jnp.full((2, 4), 0.875), atol=1e-7)


@pytest.mark.parametrize(
    ("a_shape", "b_shape", "h0_shape", "message"),
    [
        (
            (2, 5),
            (2, 5),
            None,
            r"^b must have shape \(batch, time, hidden\); got \(2, 5\)$",
        ),
        (
            (2, 5, 3, 1),
            (2, 5, 3, 1),
            None,
            r"^b must have shape \(batch, time, hidden\); got \(2, 5, 3, 1\)$",
        ),
        (
            (2, 5, 2),
            (2, 5, 3),
            None,
            r"^a must have the shape of b \(2, 5, 3\); got \(2, 5, 2\)$",
        ),
        ((2, 5, 3), (2, 5, 3), (3, 2), None),
        ((2, 5, 3), (2, 5, 3), (2, 5), None),
    ],
)
def test_scan_shape_errors_name_the_argument(
    a_shape, b_shape, h0_shape, message
) -> None:
    message = message or (
        r"^h0 must have shape \(batch, hidden\) = \(2, 3\); got "
        + re_tuple(h0_shape)
        + "$"
    )
    h0 = None if h0_shape is None else jnp.zeros(h0_shape)
    for fn in (
        linear_scan_jax.linear_scan_sequential,
        linear_scan_jax.linear_scan_parallel,
    ):
        with pytest.raises(ValueError, match=message):
            fn(jnp.zeros(a_shape), jnp.zeros(b_shape), h0)


def test_scan_accepts_a_start_state_of_the_right_shape_only() -> None:
    a, b = jnp.ones((2, 1, 3)), jnp.ones((2, 1, 3))
    _close(
        linear_scan_jax.linear_scan_parallel(a, b, jnp.ones((2, 3))),
        jnp.full((2, 1, 3), 2.0),
    )
    _close(
        linear_scan_jax.linear_scan_sequential(a, b, jnp.ones((2, 3))),
        jnp.full((2, 1, 3), 2.0),
    )
