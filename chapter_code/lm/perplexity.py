"""Language-model arithmetic: mean loss in nats, perplexity and bits per character.

For logits ``z`` of shape ``(B, T, V)`` (batch-first) and integer targets ``y``
of shape ``(B, T)``, the loss is the mean over all ``B * T`` positions of

    -ln softmax(z)[y]          (nats per token)

perplexity is ``exp(loss)``, and bits per character is ``loss / ln 2``. The same
function scores every model of Chapter 4, counts and networks alike.

Pages: "Recurrent language models"; the labs.
"""

from __future__ import annotations

import math

import torch
from torch.nn import functional as F


def lm_loss_and_ppl(
    logits: torch.Tensor, targets: torch.Tensor
) -> tuple[torch.Tensor, float, float]:
    """Return (mean loss in nats, perplexity, bits per character) of ``targets`` under
    ``logits``.

    ``logits``: float ``(B, T, V)`` (or ``(N, V)``); ``targets``: int64 ``(B, T)`` (or
    ``(N,)``) with values in ``[0, V)``. The loss keeps its graph, so it can be the
    training loss.
    """
    if not isinstance(logits, torch.Tensor) or not logits.is_floating_point():  # [1]
        raise TypeError(
            "logits must be a floating-point tensor; got "
            f"{getattr(logits, 'dtype', type(logits))}"
        )
    if not isinstance(targets, torch.Tensor) or targets.dtype != torch.long:
        raise TypeError(
            "targets must be an int64 (torch.long) tensor; got "
            f"{getattr(targets, 'dtype', type(targets))}"
        )
    if logits.dim() not in (2, 3) or targets.shape != logits.shape[:-1]:
        raise ValueError(
            "logits must be (B, T, V) or (N, V) and targets (B, T) or (N,) to match; "
            f"got logits {tuple(logits.shape)} and targets {tuple(targets.shape)}"
        )
    vocab = logits.shape[-1]
    if targets.numel() == 0:
        raise ValueError("targets must hold at least one position to score")
    if targets.min() < 0 or targets.max() >= vocab:
        raise ValueError(
            f"targets must lie in [0, {vocab}); got values from {targets.min().item()} "
            f"to {targets.max().item()}"
        )
    ### BEGIN SOLUTION
    log_probs = torch.log_softmax(logits.reshape(-1, vocab), dim=-1)  # [2] (B*T, V)
    loss = -log_probs.gather(
        1, targets.reshape(-1, 1)
    ).mean()  # [3] the target's -ln p, averaged
    nats = loss.item()
    return loss, math.exp(nats), nats / math.log(2)  # [4]
    ### END SOLUTION


def cross_entropy_reference(
    logits: torch.Tensor, targets: torch.Tensor
) -> torch.Tensor:
    """PyTorch's own mean cross-entropy of the same positions, for checking
    :func:`lm_loss_and_ppl`.
    """
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
