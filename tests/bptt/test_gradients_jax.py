"""Tests for chapter_code.bptt.gradients_jax: gradient against lag with jax.grad,
against the PyTorch measurement.

Value tests for chapter_code.bptt.gradients_jax (issue 20): what the comparisons with
PyTorch leave open, gradient norms whose values are known in closed form, the default
draw key by key, a given draw, and the exact wording of each error.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
from torch import nn

from chapter_code.bptt import gradients, gradients_jax
from chapter_code.rnn import recurrence_jax

jax.config.update("jax_enable_x64", True)

LAGS = [1, 5, 20, 40]


def _torch_inputs(
    lag: int, batch: int = 8, features: int = 3, seed: int = 100
) -> jax.Array:
    # exactly the draw of gradients.grad_at_first_input
    gen = torch.Generator().manual_seed(seed + lag)
    return jnp.asarray(
        torch.randn(batch, lag, features, generator=gen).double().numpy()
    )


def test_grad_against_lag_matches_pytorch_with_copied_weights_and_inputs() -> None:
    torch.manual_seed(7)
    rnn = nn.RNN(3, 10, batch_first=True).double()
    ref = gradients.grad_at_first_input(rnn, LAGS, input_size=3)
    w_ih, w_hh = (
        jnp.asarray(rnn.weight_ih_l0.detach().numpy()),
        jnp.asarray(rnn.weight_hh_l0.detach().numpy()),
    )
    bias = jnp.asarray((rnn.bias_ih_l0 + rnn.bias_hh_l0).detach().numpy())
    ours = gradients_jax.grad_at_first_input(
        lambda x: recurrence_jax.rnn_loop(x, w_ih, w_hh, bias)[0],
        LAGS,
        input_size=3,
        draw=_torch_inputs,
    )
    np.testing.assert_allclose(ours, ref, rtol=1e-9)
    assert ours[-1] < ours[1]  # the signal fades with the lag for a fresh network


def test_default_draw_is_seeded_per_lag() -> None:
    w = jnp.eye(3) * 0.5

    def run(x):
        return recurrence_jax.rnn_loop(x, w, w, jnp.zeros(3))[0]

    first = gradients_jax.grad_at_first_input(run, [2, 6], input_size=3, seed=1)
    assert (
        first
        == gradients_jax.grad_at_first_input(run, [6, 2], input_size=3, seed=1)[::-1]
    )
    assert first != gradients_jax.grad_at_first_input(run, [2, 6], input_size=3, seed=2)


@pytest.mark.parametrize("lags", [[], [0], [3, 2.5], [True]])
def test_bad_lags_get_the_pytorch_sides_named_error(lags) -> None:
    with pytest.raises(
        ValueError, match="lags must be a non-empty sequence of ints >= 1"
    ):
        gradients_jax.grad_at_first_input(lambda x: x, lags, input_size=3)
    if lags != [True]:
        with pytest.raises(
            ValueError, match="lags must be a non-empty sequence of ints >= 1"
        ):
            gradients.grad_at_first_input(
                nn.RNN(3, 4, batch_first=True), lags, input_size=3
            )
    with pytest.raises(ValueError, match="x must have shape"):
        gradients_jax.first_input_grad_norm(lambda x: x, jnp.zeros((2, 3)))


jax.config.update("jax_enable_x64", True)


def re_tuple(shape: tuple) -> str:
    return str(tuple(shape)).replace("(", r"\(").replace(")", r"\)")


def _running_sum(x: jax.Array) -> jax.Array:
    return 1.5 * jnp.cumsum(x, axis=1)  # every output depends on x_1 with slope 1.5


def test_first_input_grad_norm_in_closed_form() -> None:
    x = jnp.ones((2, 4, 3))
    norm = gradients_jax.first_input_grad_norm(_running_sum, x)
    assert type(norm) is float
    # |1.5| in each of B * F entries
    assert norm == pytest.approx(1.5 * math.sqrt(2 * 3), rel=1e-12)
    squares = gradients_jax.first_input_grad_norm(
        lambda s: jnp.cumsum(s**2, axis=1), x * 2.0
    )
    # d/dx of x^2 at 2, B * F times
    assert squares == pytest.approx(4.0 * math.sqrt(6), rel=1e-12)
    last_only = gradients_jax.first_input_grad_norm(lambda s: s * 3.0, x)
    # the last output of an elementwise map does not see x_1 (T > 1)
    assert last_only == 0.0


@pytest.mark.parametrize("shape", [(2, 3), (1, 2, 3, 4)])
def test_first_input_grad_norm_needs_a_sequence(shape: tuple) -> None:
    with pytest.raises(
        ValueError,
        match=rf"^x must have shape \(batch, time, features\); got {re_tuple(shape)}$",
    ):
        gradients_jax.first_input_grad_norm(_running_sum, jnp.zeros(shape))


def test_default_draw_is_a_standard_normal_per_lag_from_seed_plus_lag() -> None:
    seen: list[tuple] = []

    def squares(x: jax.Array) -> jax.Array:
        seen.append(x.shape)
        return jnp.cumsum(x**2, axis=1)

    norms = gradients_jax.grad_at_first_input(
        squares, [1, 4], input_size=2, batch=3, seed=5
    )
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

    norms = gradients_jax.grad_at_first_input(
        lambda s: jnp.cumsum(s**2, axis=1),
        [3, 1],
        input_size=2,
        batch=5,
        seed=0,
        draw=draw,
    )
    assert asked == [3, 1]
    assert norms == [
        pytest.approx(2 * 3 * math.sqrt(2)),
        pytest.approx(2 * 1 * math.sqrt(2)),
    ]


def test_a_batch_of_one_is_allowed_and_zero_is_named() -> None:
    assert (
        len(gradients_jax.grad_at_first_input(_running_sum, [2], input_size=1, batch=1))
        == 1
    )
    with pytest.raises(ValueError, match=r"^batch must be >= 1; got 0$"):
        gradients_jax.grad_at_first_input(_running_sum, [2], input_size=1, batch=0)


@pytest.mark.parametrize("lags", [[], [1, 0], [2, -3], [1.0], [False], ["2"]])
def test_bad_lags_are_named_with_the_list(lags) -> None:
    with pytest.raises(
        ValueError,
        match=r"^lags must be a non-empty sequence of ints >= 1; got " + re_list(lags),
    ):
        gradients_jax.grad_at_first_input(_running_sum, lags, input_size=1)


def re_list(lags) -> str:
    return (
        repr(list(lags)).replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")
        + "$"
    )


def test_lags_of_one_are_allowed() -> None:
    (norm,) = gradients_jax.grad_at_first_input(
        _running_sum, (1,), input_size=2, batch=2
    )
    assert norm == pytest.approx(1.5 * 2)
