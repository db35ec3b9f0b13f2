"""Tests for chapter_code.gradients_jax: gradient against lag with jax.grad, against the PyTorch measurement."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
from torch import nn

from chapter_code import gradients, gradients_jax, recurrence_jax

jax.config.update("jax_enable_x64", True)

LAGS = [1, 5, 20, 40]


def _torch_inputs(lag: int, batch: int = 8, features: int = 3, seed: int = 100) -> jax.Array:
    gen = torch.Generator().manual_seed(seed + lag)  # exactly the draw of gradients.grad_at_first_input
    return jnp.asarray(torch.randn(batch, lag, features, generator=gen).double().numpy())


def test_grad_against_lag_matches_pytorch_with_copied_weights_and_inputs() -> None:
    torch.manual_seed(7)
    rnn = nn.RNN(3, 10, batch_first=True).double()
    ref = gradients.grad_at_first_input(rnn, LAGS, input_size=3)
    w_ih, w_hh = jnp.asarray(rnn.weight_ih_l0.detach().numpy()), jnp.asarray(rnn.weight_hh_l0.detach().numpy())
    bias = jnp.asarray((rnn.bias_ih_l0 + rnn.bias_hh_l0).detach().numpy())
    ours = gradients_jax.grad_at_first_input(lambda x: recurrence_jax.rnn_loop(x, w_ih, w_hh, bias)[0], LAGS,
                                             input_size=3, draw=_torch_inputs)
    np.testing.assert_allclose(ours, ref, rtol=1e-9)
    assert ours[-1] < ours[1]  # the signal fades with the lag for a fresh network


def test_default_draw_is_seeded_per_lag() -> None:
    w = jnp.eye(3) * 0.5

    def run(x):
        return recurrence_jax.rnn_loop(x, w, w, jnp.zeros(3))[0]

    first = gradients_jax.grad_at_first_input(run, [2, 6], input_size=3, seed=1)
    assert first == gradients_jax.grad_at_first_input(run, [6, 2], input_size=3, seed=1)[::-1]
    assert first != gradients_jax.grad_at_first_input(run, [2, 6], input_size=3, seed=2)


@pytest.mark.parametrize("lags", [[], [0], [3, 2.5], [True]])
def test_bad_lags_get_the_pytorch_sides_named_error(lags) -> None:
    with pytest.raises(ValueError, match="lags must be a non-empty sequence of ints >= 1"):
        gradients_jax.grad_at_first_input(lambda x: x, lags, input_size=3)
    if lags != [True]:
        with pytest.raises(ValueError, match="lags must be a non-empty sequence of ints >= 1"):
            gradients.grad_at_first_input(nn.RNN(3, 4, batch_first=True), lags, input_size=3)
    with pytest.raises(ValueError, match="x must have shape"):
        gradients_jax.first_input_grad_norm(lambda x: x, jnp.zeros((2, 3)))
