"""Decoding rules: turn a model's logits into the next token, and generate text by
carrying the state.

Every rule maps a vector of logits ``z`` (shape ``(V,)``, or ``(B, V)`` for a
batch) to a distribution over the next token, then draws from it with a
``torch.Generator`` so that a page's samples are reproducible:

- *greedy*: the argmax (no randomness);
- *temperature* ``tau``: ``softmax(z / tau)``; ``tau < 1`` sharpens, ``tau > 1``
  flattens;
- *top-k*: keep the ``k`` largest logits, renormalise, sample;
- *nucleus* (top-p): keep the smallest set of most probable tokens whose
  probabilities add up to at least ``p``, renormalise, sample.

:func:`generate` runs a recurrent model forward one token at a time, feeding
each sampled token back and carrying the state, so the prefix is read once and
never again.

Pages: "Generating text"; the labs.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from chapter_code.core.arguments import positive_ints
from chapter_code.core.device import model_device

Rule = Callable[[torch.Tensor, torch.Generator], torch.Tensor]


def _check_logits(logits: torch.Tensor) -> None:
    if not isinstance(logits, torch.Tensor) or not logits.is_floating_point():
        raise TypeError(
            "logits must be a floating-point tensor; got "
            f"{getattr(logits, 'dtype', type(logits))}"
        )
    if logits.dim() not in (1, 2) or logits.shape[-1] < 1:
        raise ValueError(
            f"logits must have shape (V,) or (B, V); got {tuple(logits.shape)}"
        )


def temperature_probs(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """softmax(logits / temperature) over the last axis."""
    _check_logits(logits)
    if (
        isinstance(temperature, bool)
        or not isinstance(temperature, (int, float))
        or not temperature > 0
        or math.isinf(temperature)
    ):
        raise ValueError(
            f"temperature must be a finite number > 0; got {temperature!r} (use "
            "greedy for the limit 0)"
        )
    ### BEGIN SOLUTION
    return torch.softmax(logits / temperature, dim=-1)
    ### END SOLUTION


def top_k_probs(logits: torch.Tensor, k: int, temperature: float = 1.0) -> torch.Tensor:
    """The temperature distribution restricted to the ``k`` largest logits and
    renormalised.
    """
    probs = temperature_probs(logits, temperature)
    vocab = logits.shape[-1]
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= vocab:
        raise ValueError(
            f"k must be an int in [1, {vocab}] (the vocabulary size); got {k!r}"
        )
    ### BEGIN SOLUTION
    # ranked by the logits, not the probabilities: two logits can round to one
    # probability
    # 1 where kept
    kept = torch.zeros_like(probs).scatter(-1, logits.topk(k, dim=-1).indices, 1.0)
    masked = probs * kept
    return masked / masked.sum(dim=-1, keepdim=True)
    ### END SOLUTION


def nucleus_probs(
    logits: torch.Tensor, p: float, temperature: float = 1.0
) -> torch.Tensor:
    """The temperature distribution restricted to its smallest top set with mass >=
    ``p``, renormalised.
    """
    probs = temperature_probs(logits, temperature)
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p <= 1:
        raise ValueError(f"p must be a number in (0, 1]; got {p!r}")
    ### BEGIN SOLUTION
    # ranked by the logits, as in top_k_probs
    order = logits.argsort(dim=-1, descending=True, stable=True)
    sorted_probs = probs.gather(-1, order)
    # mass of the tokens ranked above each one
    before = sorted_probs.cumsum(dim=-1) - sorted_probs
    # the first token is always kept (before = 0 < p)
    keep_sorted = (before < p).to(probs.dtype)
    kept = torch.zeros_like(probs).scatter(-1, order, keep_sorted)
    masked = probs * kept
    return masked / masked.sum(dim=-1, keepdim=True)
    ### END SOLUTION


def greedy(
    logits: torch.Tensor, generator: torch.Generator | None = None
) -> torch.Tensor:
    """The index of the largest logit (ties: the first); ``generator`` is accepted and
    unused.
    """
    _check_logits(logits)
    return logits.argmax(dim=-1)


def draw(probs: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One token per row of ``probs`` (``(V,)`` gives a 0-d tensor)."""
    if not isinstance(generator, torch.Generator):
        raise TypeError(
            "generator must be a torch.Generator, so that samples are reproducible"
        )
    flat = probs.reshape(-1, probs.shape[-1])
    out = torch.multinomial(flat, 1, generator=generator).squeeze(-1)
    return out.reshape(probs.shape[:-1])


def temperature_rule(temperature: float) -> Rule:
    # validate now, not at the first token
    temperature_probs(torch.zeros(1), temperature)
    return lambda logits, g: draw(temperature_probs(logits, temperature), g)


def top_k_rule(k: int, temperature: float = 1.0) -> Rule:
    positive_ints(k=k)
    temperature_probs(torch.zeros(1), temperature)
    return lambda logits, g: draw(
        top_k_probs(logits, min(k, logits.shape[-1]), temperature), g
    )


def nucleus_rule(p: float, temperature: float = 1.0) -> Rule:
    nucleus_probs(torch.zeros(1), p, temperature)
    return lambda logits, g: draw(nucleus_probs(logits, p, temperature), g)


@torch.no_grad()
def generate(
    model: torch.nn.Module,
    prefix: torch.Tensor,
    steps: int,
    rule: Rule,
    generator: torch.Generator,
) -> torch.Tensor:
    """Continue ``prefix`` (int64 ``(T,)``, at least one token) by ``steps`` tokens;
    return the new tokens.

    ``model(tokens (1, t), state) -> (logits (1, t, V), state)``. The prefix is
    read once; then each sampled token is fed back alone with the carried state.
    The model may sit on any device; each token is drawn on the CPU (from
    ``generator``), so a seed gives the same draws wherever the model computes.
    """
    if prefix.dim() != 1 or prefix.numel() < 1 or prefix.dtype != torch.long:
        raise ValueError(
            "prefix must be a non-empty int64 tensor of shape (T,); got "
            f"{prefix.dtype} {tuple(prefix.shape)}"
        )
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps must be an int >= 0; got {steps!r}")
    model.eval()
    device = model_device(model)
    # (1, T, V): the prefix, read once
    logits, state = model(prefix.unsqueeze(0).to(device))
    out = []
    for _ in range(steps):
        # from the distribution after the last token
        token = rule(logits[0, -1].cpu(), generator)
        out.append(int(token))
        # (1, 1, V): one new token, the state carried
        logits, state = model(token.reshape(1, 1).to(device), state)
    return torch.tensor(out, dtype=torch.long)
