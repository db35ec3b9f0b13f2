"""Gradients through time: how much of the loss signal reaches an early input.

Backpropagation through time (BPTT) for the vanilla cell written out by hand,
the Jacobian products it multiplies and their spectral-norm bound, the
one-unit RNN that makes those products scalars, and the measurements the
chapter plots (gradient against lag for a fresh network, gradient against
distance for a trained one). Tensors are batch-first, ``(B, T, F)``.

Pages: "Gradients through time" (this module's main user) and "Gated memory",
which compares gated cells against the vanilla RNN with the same measurement.
Follows Bengio et al. (1994) and Pascanu et al. (2013).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn


def grad_at_first_input(
    rec: nn.Module,
    lags: Sequence[int],
    input_size: int,
    batch: int = 8,
    seed: int = 100,
) -> list[float]:
    """Norm of d(sum of the last output)/d(x_1) for random inputs of each length in
    ``lags``.

    ``rec`` is a batch-first recurrent module returning ``(outputs, state)``.
    Each lag T draws a (batch, T, input_size) standard-normal input from its own
    generator seeded with ``seed + T``, so no global random state is consumed
    and every model sees the same inputs at the same lag.
    """
    if len(lags) == 0 or any(not isinstance(t, int) or t < 1 for t in lags):
        raise ValueError(
            f"lags must be a non-empty sequence of ints >= 1; got {list(lags)!r}"
        )
    if batch < 1:
        raise ValueError(f"batch must be >= 1; got {batch}")
    param = next(rec.parameters())
    norms = []
    for lag in lags:
        gen = torch.Generator().manual_seed(seed + lag)
        # (B, T, F)
        x = torch.randn(batch, lag, input_size, generator=gen).to(
            param.device, param.dtype
        )
        x.requires_grad_(True)
        outputs, _ = rec(x)  # (B, T, H)
        (grad,) = torch.autograd.grad(outputs[:, -1].sum(), x)
        norms.append(grad[:, 0].norm().item())  # gradient at the first input
    return norms


@dataclass
class BPTTGrads:
    """Gradients of a loss with respect to everything a vanilla RNN's forward pass
    read.
    """

    weight_ih: torch.Tensor  # (H, F)
    weight_hh: torch.Tensor  # (H, H)
    bias: torch.Tensor  # (H,)
    x: torch.Tensor  # (B, T, F)
    h0: torch.Tensor  # (B, H)
    weight_hh_per_use: torch.Tensor  # (T, H, H): the term of each step's use of W_hh


def bptt_vanilla(
    x: torch.Tensor,
    states: torch.Tensor,
    h0: torch.Tensor,
    weight_ih: torch.Tensor,
    weight_hh: torch.Tensor,
    grad_states: torch.Tensor,
) -> BPTTGrads:
    """Backpropagation through time for ``h_t = tanh(W_ih x_t + W_hh h_{t-1} + b)``, by
    hand.

    ``states`` (B, T, H) are the forward states, ``grad_states`` (B, T, H) the
    direct gradient of the loss with respect to each state (dL_t/dh_t). The
    adjoint ``g_t = dL/dh_t`` obeys ``g_t = grad_states[:, t] + W_hh^T D_{t+1} g_{t+1}``
    with ``D_t = diag(1 - h_t^2)``; every use of a shared weight adds one term.
    """
    if x.dim() != 3 or states.dim() != 3:
        raise ValueError(
            f"x and states must be (batch, time, ·); got {tuple(x.shape)} and "
            f"{tuple(states.shape)}"
        )
    if grad_states.shape != states.shape:
        raise ValueError(
            f"grad_states must have the shape of states {tuple(states.shape)}; got "
            f"{tuple(grad_states.shape)}"
        )
    batch, steps, _ = states.shape
    # (B, T, H): h_{t-1} for each t
    prev = torch.cat([h0.unsqueeze(1), states[:, :-1]], dim=1)
    ### BEGIN SOLUTION
    grad_x = torch.zeros_like(x)
    per_use = x.new_zeros(steps, *weight_hh.shape)  # (T, H, H)
    grad_w_ih = torch.zeros_like(weight_ih)
    grad_b = x.new_zeros(weight_hh.shape[0])
    carry = torch.zeros_like(h0)  # dL/dh_t arriving from later steps, (B, H)
    for t in reversed(range(steps)):  # walk the unrolled chain backwards  # [1]
        g = grad_states[:, t] + carry  # (B, H): total adjoint of h_t
        da = g * (1.0 - states[:, t] ** 2)  # (B, H): through tanh, D_t g_t  # [2]
        per_use[t] = da.T @ prev[:, t]  # this step's use of W_hh  # [3]
        grad_w_ih += da.T @ x[:, t]
        grad_b += da.sum(dim=0)
        grad_x[:, t] = da @ weight_ih  # (B, F)
        carry = da @ weight_hh  # (B, H): W_hh^T D_t g_t, handed to step t-1  # [4]
    return BPTTGrads(grad_w_ih, per_use.sum(dim=0), grad_b, grad_x, carry, per_use)
    ### END SOLUTION


def jacobian_product_norms(
    states: torch.Tensor, weight_hh: torch.Tensor
) -> list[float]:
    """Spectral norms of dh_T/dh_s = prod_j diag(1 - h_j^2) W_hh for one sequence, s =
    T, T-1, ..., 0.

    ``states`` is (T, H), one sequence's states h_1..h_T. Entry d of the result is
    the norm at distance d = T - s (entry 0 is the identity, norm 1).
    """
    if states.dim() != 2 or states.shape[1] != weight_hh.shape[0]:
        raise ValueError(
            f"states must be (time, {weight_hh.shape[0]}); got {tuple(states.shape)}"
        )
    ### BEGIN SOLUTION
    product = torch.eye(weight_hh.shape[0], dtype=states.dtype)
    norms = [1.0]
    # multiply on the right: one more step back
    for t in reversed(range(states.shape[0])):
        one_step = (1.0 - states[t] ** 2).unsqueeze(
            1
        ) * weight_hh  # (H, H): diag(1 - h_t^2) W_hh
        product = product @ one_step
        norms.append(torch.linalg.matrix_norm(product, ord=2).item())
    return norms
    ### END SOLUTION


def spectral_norm(matrix: torch.Tensor) -> float:
    """The largest singular value: the most a matrix can stretch a vector."""
    if matrix.dim() != 2:
        raise ValueError(f"matrix must be 2-D; got shape {tuple(matrix.shape)}")
    return torch.linalg.matrix_norm(matrix.detach().double(), ord=2).item()


@dataclass(frozen=True)
class OneUnitTrace:
    """A one-unit RNN ``h_t = tanh(w h_{t-1} + x)`` run from ``h_0 = 0`` for ``steps``
    steps.
    """

    w: float
    x: float
    states: list[float]  # h_0 .. h_T
    factors: list[float]  # one-step factors (1 - h_t^2) w for t = 1..T
    products: list[float]  # |dh_T/dh_s| at distance d = T - s, d = 0..T
    bounds: list[float]  # |w|^d, d = 0..T


def one_unit_gradient(w: float, x: float, steps: int) -> OneUnitTrace:
    """Per-step factors and their running product for a one-unit tanh RNN on a constant
    input.

    Pure and cheap (plain floats, no autograd), so a page script can call it on
    every move of a slider. The product at distance d multiplies the d factors
    of the last d steps; the bound is |w|^d.
    """
    if (
        not isinstance(steps, int)
        or isinstance(steps, bool)
        or not 1 <= steps <= 10_000
    ):
        raise ValueError(f"steps must be an int in [1, 10000]; got {steps!r}")
    for name, value in [("w", w), ("x", x)]:
        if not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number; got {value!r}")
    states = [0.0]
    for _ in range(steps):
        states.append(math.tanh(w * states[-1] + x))  # [1]
    factors = [(1.0 - h * h) * w for h in states[1:]]  # [2]
    products = [1.0]
    for factor in reversed(factors):  # one more step back each time
        products.append(abs(products[-1] * factor))  # [3]
    bounds = [abs(w) ** d for d in range(steps + 1)]  # [4]
    return OneUnitTrace(w, x, states, factors, products, bounds)


def grad_norm_by_distance(
    rnn: nn.RNN, readout: nn.Module, x: torch.Tensor, targets: torch.Tensor
) -> list[float]:
    """Mean over the batch of ||dL_T/dh_s|| against the distance T - s, for a loss at
    the last step only.

    ``x`` is (B, T, F) and ``targets`` (B,) the class at the last step. The RNN is
    stepped one input at a time so that every state is a node autograd can report.
    """
    if x.dim() != 3 or targets.shape != (x.shape[0],):
        raise ValueError(
            "x must be (batch, time, features) and targets (batch,); got "
            f"{tuple(x.shape)}, {tuple(targets.shape)}"
        )
    h = x.new_zeros(1, x.shape[0], rnn.hidden_size)  # (1, B, H): nn.RNN's state layout
    states = []
    for t in range(x.shape[1]):
        _, h = rnn(x[:, t : t + 1], h)  # one step, (1, B, H)
        states.append(h)
    loss = nn.functional.cross_entropy(readout(h[0]), targets)
    grads = torch.autograd.grad(loss, states)
    # distance 0 is the last state; the gradient of one sequence's loss is its own row
    return [g[0].norm(dim=1).mean().item() * x.shape[0] for g in reversed(grads)]
