"""The sampling study: each decoding rule's samples measured, real text measured alike.

:func:`score_rules` continues one prompt with every rule, several seeds each
(greedy decoding has one output), and measures each sample three ways
(:func:`sample_scores`: known words, repeated word trigrams, the model's mean
log-probability per character). :func:`score_held_out` measures stretches of
held-out text of the same length, read by the same model after a context of
the prompt's length: what real text scores. :func:`greedy_loop` follows a
greedy continuation into the cycle it ends in and asks how the training text
and the model see that cycle.

Pages: "Generating text".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch

from chapter_code.lm.char_lm import Vocab
from chapter_code.sampling.metrics import (
    find_loop,
    known_word_share,
    loop_drift,
    mean_log_prob,
    repeated_ngram_share,
    token_log_probs,
)
from chapter_code.sampling.rules import Rule, generate, greedy


def sample_scores(
    model: torch.nn.Module,
    vocab: Vocab,
    context: torch.Tensor,
    ids: torch.Tensor,
    known: set[str],
) -> tuple[float, float, float]:
    """(known-word share, repeated word-trigram share, mean log-prob in nats) of the
    text ``ids`` read by ``model`` after ``context``."""
    text = vocab.decode(ids)
    return (
        known_word_share(text, known),
        repeated_ngram_share(text, 3),
        mean_log_prob(model, context, ids),
    )


def score_rules(
    model: torch.nn.Module,
    vocab: Vocab,
    rules: Mapping[str, Rule],
    prompt: str,
    length: int,
    seeds: int,
    known: set[str],
) -> tuple[dict[str, str], dict[str, torch.Tensor]]:
    """Continue ``prompt`` by ``length`` tokens with each rule, seeds ``0 .. seeds - 1``
    (greedy: one run), and score every sample.

    Returns the seed-0 sample of each rule and, per rule, its scores ``(runs, 3)``
    (the columns of :func:`sample_scores`).
    """
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise ValueError(f"seeds must be an int >= 1; got {seeds!r}")
    prompt_ids = vocab.encode(prompt)
    samples, table = {}, {}
    for name, rule in rules.items():
        scores = []
        for seed in range(1 if rule is greedy else seeds):
            gen = torch.Generator().manual_seed(seed)
            ids = generate(model, prompt_ids, length, rule, gen)
            scores.append(sample_scores(model, vocab, prompt_ids, ids, known))
            samples.setdefault(name, vocab.decode(ids))  # the seed-0 sample
        table[name] = torch.tensor(scores)  # (runs, 3)
    return samples, table


def score_held_out(
    model: torch.nn.Module,
    vocab: Vocab,
    text: str,
    context_length: int,
    length: int,
    seeds: int,
    known: set[str],
) -> torch.Tensor:
    """Scores ``(seeds, 3)`` of ``seeds`` stretches of ``text``, ``length`` characters
    each, read after the ``context_length`` characters before each.

    The stretches start at positions drawn uniformly with seed 0.
    """
    if len(text) <= length + context_length:
        raise ValueError(
            f"text of {len(text)} characters is too short for a context of "
            f"{context_length} and stretches of {length}"
        )
    starts = torch.randint(
        0,
        len(text) - length - context_length,
        (seeds,),
        generator=torch.Generator().manual_seed(0),
    )
    rows = []
    for s in starts.tolist():
        context = text[s : s + context_length]
        stretch = text[s + context_length : s + context_length + length]
        rows.append(
            sample_scores(
                model, vocab, vocab.encode(context), vocab.encode(stretch), known
            )
        )
    return torch.tensor(rows)


def greedy_loop(
    model: torch.nn.Module, vocab: Vocab, prompt: str, length: int, train_text: str
) -> dict[str, Any]:
    """Continue ``prompt`` greedily by ``length`` tokens and describe the cycle the
    text ends in.

    The keys: ``loop`` (:class:`~chapter_code.sampling.metrics.Loop`), ``text``;
    how often the training text holds the cycle's unit once (``once_in_train``) and
    twice in a row (``twice_in_train``); how far the model's predictions moved from
    one turn to the next, at the second turn (``drift_first``) and the last
    (``drift``); the probability the model, at temperature 1, gives one whole turn
    (``turn_prob``) and its least likely step (``weakest``). A text that ends in no
    cycle is an error.
    """
    context = vocab.encode(prompt)
    ids = generate(model, context, length, greedy, torch.Generator())
    text = vocab.decode(ids)
    loop = find_loop(text)
    if loop is None:
        raise ValueError(f"the greedy text ends in no cycle: {text[-60:]!r}")
    turn = ids[loop.start : loop.start + loop.period]
    # (period,)
    turn_lp = token_log_probs(model, torch.cat([context, ids[: loop.start]]), turn)
    drift = loop_drift(model, context, ids, loop)
    return {
        "loop": loop,
        "text": text,
        "twice_in_train": train_text.count(loop.unit * 2),
        "once_in_train": train_text.count(loop.unit),
        "drift_first": drift[0],
        "drift": drift[-1],
        "turn_prob": math.exp(turn_lp.sum().item()),
        "weakest": math.exp(turn_lp.min().item()),
    }
