"""The fair comparison of Chapter 4: counts and networks scored on the same characters
by the same function.

Every model here ends in a ``(N, V)`` matrix of log-probabilities (or
logits) for the ``N`` characters of a held-out text over the training text's
vocabulary, and :func:`chapter_code.lm.perplexity.lm_loss_and_ppl` turns each into nats
per character, perplexity and bits per character. The n-gram's order and
smoothing are chosen on the validation split only (:func:`choose_ngram`).

Pages: "Recurrent language models".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from chapter_code.core.device import model_device
from chapter_code.lm.char_lm import CharLM
from chapter_code.lm.ngram import CharNGram


@dataclass(frozen=True)
class NGramChoice:
    """The validation scores of an n-gram grid, and the best ``(order, k)`` overall and
    per order.
    """

    valid_nats: dict[tuple[int, float], float]

    def best(self, order: int | None = None) -> tuple[int, float]:
        """The ``(order, k)`` with the lowest validation loss, among all orders or at
        one ``order``.
        """
        cells = [
            (nats, o, k)
            for (o, k), nats in self.valid_nats.items()
            if order is None or o == order
        ]
        if not cells:
            raise ValueError(f"order {order} is not in the grid")
        _, o, k = min(cells)
        return o, k


def choose_ngram(
    train: str, valid: str, orders: Sequence[int], ks: Sequence[float]
) -> tuple[NGramChoice, dict]:
    """Fit every order on ``train`` and score every ``k`` on ``valid`` (history: the end
    of ``train``).

    Returns the grid's validation scores and the fitted models, one per
    ``(order, k)``.
    """
    if not orders or not ks:
        raise ValueError("orders and ks must each hold at least one value")
    scores: dict[tuple[int, float], float] = {}
    models: dict[tuple[int, float], CharNGram] = {}
    for order in orders:
        for k in ks:
            model = CharNGram(order, k).fit(train)
            scores[(order, k)] = model.nats_per_char(
                valid, history=train[-(order - 1) :] if order > 1 else ""
            )
            models[(order, k)] = model
    return NGramChoice(scores), models


@torch.no_grad()
def fixed_window_logits(model: CharLM, ids: torch.Tensor, window: int) -> torch.Tensor:
    """Logits ``(N, V)`` for every one of ``ids[1:]``, read in consecutive windows from
    a fresh state each.

    ``ids[0]`` is context only (the character before the scored text). Unlike
    :func:`chapter_code.lm.char_lm.fixed_window_loss`, a last, shorter
    window is scored too, so every position is scored exactly once.
    """
    if ids.dim() != 1 or ids.numel() < 2:
        raise ValueError(
            f"ids must be a 1-D tensor of at least 2 ids; got shape {tuple(ids.shape)}"
        )
    model.eval()
    ids = ids.to(model_device(model))
    n = ids.numel() - 1
    full = n // window
    parts = []
    if full:
        x = ids[: full * window].reshape(full, window)  # (N_w, W)
        # (N_w * W, V)
        parts.append(model(x)[0].reshape(-1, model.readout.out_features))
    if n > full * window:
        tail = ids[full * window : n][None]  # (1, rest)
        parts.append(model(tail)[0][0])
    return torch.cat(parts).cpu()


def word_perplexity(char_nats: float, n_chars: int, n_words: int) -> float:
    """The per-word perplexity a character model implies: ``exp(nats * N_c / N_w) =
    PPL_char ** (N_c / N_w)``.
    """
    if n_chars < 1 or n_words < 1:
        raise ValueError(
            f"n_chars and n_words must be >= 1; got {n_chars} and {n_words}"
        )
    return math.exp(char_nats * n_chars / n_words)


def share_saturated(states: torch.Tensor, threshold: float = 0.9) -> float:
    """The share of hidden-unit values whose magnitude is above ``threshold``."""
    return (states.abs() > threshold).float().mean().item()


@torch.no_grad()
def loss_by_position(model: CharLM, ids: torch.Tensor, window: int) -> torch.Tensor:
    """Mean nats at each position ``0 .. window - 1`` of consecutive fresh-state windows
    of ``ids``: ``(window,)``.

    The windows are those of :func:`chapter_code.lm.char_lm.fixed_window_loss`,
    so the mean of the result is that function's loss.
    """
    if ids.dim() != 1 or ids.numel() < window + 1:
        raise ValueError(
            f"ids must be a 1-D tensor longer than window = {window}; got shape "
            f"{tuple(ids.shape)}"
        )
    model.eval()
    ids = ids.to(model_device(model))
    n = (ids.numel() - 1) // window
    x = ids[: n * window].reshape(n, window)  # (N, W)
    y = ids[1 : n * window + 1].reshape(n, window)  # (N, W)
    log_probs = torch.log_softmax(model(x)[0], dim=-1)  # (N, W, V)
    return -log_probs.gather(-1, y[..., None])[..., 0].mean(dim=0).cpu()  # (W,)
