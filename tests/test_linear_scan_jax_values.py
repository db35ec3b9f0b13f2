"""Value tests for chapter_code.linear_scan_jax (issue 20): what the comparisons with PyTorch leave open,
both scans and ``combine`` in closed form, float32 kept, and the exact wording
of each shape error.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from chapter_code import linear_scan_jax

jax.config.update("jax_enable_x64", True)


def _close(a, b, atol: float = 1e-12) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=atol, rtol=0)


def re_tuple(shape: tuple) -> str:
    return str(tuple(shape)).replace("(", r"\(").replace(")", r"\)")


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
