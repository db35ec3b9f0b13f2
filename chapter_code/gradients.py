"""Gradients through time: how much of the loss signal reaches an early input.

Pages: "Gradients through time" (this module's main user) and "Gated memory",
which compares gated cells against the vanilla RNN with the same measurement.
Follows Bengio et al. (1994) and Pascanu et al. (2013).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn


def grad_at_first_input(
    rec: nn.Module, lags: Sequence[int], input_size: int, batch: int = 8, seed: int = 100
) -> list[float]:
    """Norm of d(sum of the last output)/d(x_1) for random inputs of each length in ``lags``.

    ``rec`` is a batch-first recurrent module returning ``(outputs, state)``.
    Each lag T draws a (batch, T, input_size) standard-normal input from its own
    generator seeded with ``seed + T``, so no global random state is consumed
    and every model sees the same inputs at the same lag.
    """
    if len(lags) == 0 or any(not isinstance(t, int) or t < 1 for t in lags):
        raise ValueError(f"lags must be a non-empty sequence of ints >= 1; got {list(lags)!r}")
    if batch < 1:
        raise ValueError(f"batch must be >= 1; got {batch}")
    param = next(rec.parameters())
    norms = []
    for lag in lags:
        gen = torch.Generator().manual_seed(seed + lag)
        x = torch.randn(batch, lag, input_size, generator=gen).to(param.device, param.dtype)  # (B, T, F)
        x.requires_grad_(True)
        outputs, _ = rec(x)  # (B, T, H)
        (grad,) = torch.autograd.grad(outputs[:, -1].sum(), x)
        norms.append(grad[:, 0].norm().item())  # gradient at the first input
    return norms
