"""Measured properties of a generated text, so decoding rules are compared by numbers,
not by taste.

Three measurements of a sample, each cheap and each blind to a different
failure:

- :func:`known_word_share`: the fraction of its words that occur in the
  training text (low when the sampler invents words);
- :func:`repeated_ngram_share`: the fraction of its word n-grams that already
  occurred earlier in the same sample (high when the sampler loops);
- :func:`mean_log_prob`: the model's own log-probability per character of the
  sample, at temperature 1 (high for the model's favourite continuations,
  whether or not a text like them exists).

:func:`find_loop` finds the cycle a greedy decoder ends in, and
:func:`loop_drift` measures whether the model's predictions still change from
one turn of that cycle to the next.

Pages: "Generating text".
"""

from __future__ import annotations

import string
from dataclasses import dataclass

import torch

from chapter_code.core.arguments import positive_ints
from chapter_code.core.device import model_device

_STRIP = string.punctuation + "\u2018\u2019\u201c\u201d"


def words_of(text: str) -> list[str]:
    """The whitespace-separated words of ``text``, with punctuation stripped from their
    ends; empty ones dropped.
    """
    return [w for w in (raw.strip(_STRIP) for raw in text.split()) if w]


def known_word_share(text: str, known: set[str]) -> float:
    """Fraction of the words of ``text`` found in ``known`` (a set built with
    :func:`words_of` on training text).
    """
    found = words_of(text)
    if not found:
        raise ValueError("text must contain at least one word")
    return sum(w in known for w in found) / len(found)


def repeated_ngram_share(text: str, n: int = 3) -> float:
    """Fraction of the word ``n``-grams of ``text`` that already occurred earlier in
    ``text`` (0 for no repeats).
    """
    positive_ints(n=n)
    found = words_of(text)
    grams = [tuple(found[i : i + n]) for i in range(len(found) - n + 1)]
    if not grams:
        raise ValueError(f"text must contain at least n={n} words")
    seen: set[tuple[str, ...]] = set()
    repeats = 0
    for gram in grams:
        repeats += gram in seen
        seen.add(gram)
    return repeats / len(grams)


@torch.no_grad()
def token_log_probs(
    model: torch.nn.Module, prefix: torch.Tensor, tokens: torch.Tensor
) -> torch.Tensor:
    """ln p(token_t | prefix, tokens_<t) under ``model`` at temperature 1, for each of
    ``tokens`` ``(N,)``.
    """
    if (
        prefix.dim() != 1
        or prefix.numel() < 1
        or tokens.dim() != 1
        or tokens.numel() < 1
    ):
        raise ValueError("prefix and tokens must be non-empty int64 vectors")
    model.eval()
    device = model_device(model)
    text = torch.cat([prefix, tokens]).to(device)  # (P + N,)
    # (1, P + N - 1, V): the logits after each character
    logits, _ = model(text[:-1].unsqueeze(0))
    scored = logits[0, prefix.numel() - 1 :]  # (N, V): those that predict the tokens
    picked = text[prefix.numel() :, None]  # (N, 1): the tokens, on the model's device
    return torch.log_softmax(scored, dim=-1).gather(-1, picked).squeeze(-1).cpu()


def mean_log_prob(
    model: torch.nn.Module, prefix: torch.Tensor, tokens: torch.Tensor
) -> float:
    """The model's mean log-probability per token of ``tokens`` after ``prefix`` (nats;
    0 is certainty).
    """
    return token_log_probs(model, prefix, tokens).mean().item()


@dataclass(frozen=True)
class Loop:
    """A text that ends in a cycle: ``text[start:]`` repeats ``text[start : start +
    period]``.
    """

    period: int
    start: int
    unit: str


def find_loop(text: str, min_turns: int = 3) -> Loop | None:
    """The shortest cycle the end of ``text`` repeats at least ``min_turns`` times, and
    where it begins.

    ``None`` when the text does not end in such a cycle.
    """
    if isinstance(min_turns, bool) or not isinstance(min_turns, int) or min_turns < 2:
        raise ValueError(f"min_turns must be an int >= 2; got {min_turns!r}")
    for period in range(1, len(text) // min_turns + 1):
        tail = len(text) - min_turns * period
        if all(text[i] == text[i + period] for i in range(tail, len(text) - period)):
            start = tail
            while start > 0 and text[start - 1] == text[start - 1 + period]:
                start -= 1
            return Loop(period=period, start=start, unit=text[start : start + period])
    return None


@torch.no_grad()
def loop_drift(
    model: torch.nn.Module, prefix: torch.Tensor, tokens: torch.Tensor, loop: Loop
) -> list[float]:
    """For each turn of ``loop`` after the first: how far the model's next-token
    probabilities, after reading each character of the turn, moved from those after the
    same character one turn earlier (the largest total-variation distance over the
    turn's positions).

    Zeros mean the model predicts exactly as it did one turn earlier: it carries no
    trace of having repeated.
    """
    model.eval()
    text = torch.cat([prefix, tokens])  # (P + N,)
    logits, _ = model(text.unsqueeze(0).to(model_device(model)))
    # (N, V): after reading each generated token
    probs = torch.softmax(logits[0, prefix.numel() :], dim=-1)
    turns = (len(tokens) - loop.start) // loop.period
    drift = []
    for k in range(1, turns):
        # (period, V)
        now = probs[loop.start + k * loop.period : loop.start + (k + 1) * loop.period]
        before = probs[
            loop.start + (k - 1) * loop.period : loop.start + k * loop.period
        ]
        drift.append(0.5 * (now - before).abs().sum(dim=-1).max().item())
    return drift
