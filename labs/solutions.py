"""Solutions of the lab exercises that go beyond their chapter's page.

The book's pages show the functions the other exercises ask for; these three are
variants and extensions the pages do not show, so a student cannot copy them from
the page: pooling a padded batch's states (Lab 1), clipping gradients by value
(Lab 2), and the backward pass of the linear recurrence (Lab 7). Each has its
solution region, like a listing, and is tested against PyTorch or autograd in
``tests/test_lab_solutions.py``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import torch
from torch import nn

from chapter_code.beyond.linear_scan import loop_linear


def masked_mean_state(states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """One summary vector per sequence: the mean of its states over its real steps.

    ``states`` is ``(B, T, H)``, batch first; ``mask`` is ``(B, T)``, true (or 1)
    on a real step and false (or 0) on padding, with at least one real step in
    every row. Returns ``(B, H)``. A sequence's summary does not depend on how much
    padding its batch added.
    """
    if states.dim() != 3:
        raise ValueError(f"states must be (B, T, H); got shape {tuple(states.shape)}")
    if tuple(mask.shape) != tuple(states.shape[:2]):
        raise ValueError(
            f"mask must be (B, T) = {tuple(states.shape[:2])}; got {tuple(mask.shape)}"
        )
    if not bool((mask != 0).any(dim=1).all()):
        raise ValueError("every row of mask needs at least one real step")
    ### BEGIN SOLUTION
    keep = (mask != 0).to(states.dtype).unsqueeze(-1)  # (B, T, 1)
    real_steps = keep.sum(dim=1)  # (B, 1)
    return (states * keep).sum(dim=1) / real_steps  # (B, H)
    ### END SOLUTION


def clip_gradient_values(params: Iterable[nn.Parameter], limit: float) -> int:
    """Clip every gradient entry into ``[-limit, limit]`` in place; return how many
    entries were changed.

    Unlike clipping by the norm, each coordinate is clipped on its own.
    Parameters without a gradient are skipped.
    """
    if not (isinstance(limit, int | float) and math.isfinite(limit) and limit > 0):
        raise ValueError(f"limit must be a finite number > 0; got {limit!r}")
    grads = [p.grad for p in params if p.grad is not None]
    ### BEGIN SOLUTION
    changed = 0
    for g in grads:
        changed += int((g.abs() > limit).sum())
        g.clamp_(min=-limit, max=limit)  # in place: the optimizer reads .grad
    return changed
    ### END SOLUTION


def linear_recurrence_grad(a: torch.Tensor, grad_c: torch.Tensor) -> torch.Tensor:
    """The gradient of a loss with respect to every ``b_t`` of the linear recurrence
    ``c_t = a_t * c_{t-1} + b_t``, given its gradient with respect to every state.

    ``a`` and ``grad_c`` are ``(B, T, H)``; ``grad_c[:, t]`` is the loss's direct
    gradient at ``c_t``, not counting what reaches ``c_t`` through later states.
    Returns ``(B, T, H)``, computed with ``loop_linear`` (no autograd).
    """
    if a.shape != grad_c.shape or a.dim() != 3:
        raise ValueError(
            "a and grad_c must be (B, T, H) of one shape; got "
            f"{tuple(a.shape)} and {tuple(grad_c.shape)}"
        )
    ### BEGIN SOLUTION
    # the scaling that carries c_t into c_{t+1}; nothing follows the last step
    onward = torch.cat([a[:, 1:], torch.zeros_like(a[:, :1])], dim=1)  # (B, T, H)
    backwards = loop_linear(onward.flip(1), grad_c.flip(1))  # from t = T down to 1
    return backwards.flip(1)
    ### END SOLUTION
