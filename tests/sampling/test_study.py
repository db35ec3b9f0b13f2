"""Tests for chapter_code.sampling.study: the rules' samples scored, held-out text
scored, greedy loops.

Memoryless models whose favourite next character is fixed stand in for the
trained models: their samples hold words, and their greedy loops have numbers
known in advance.
"""

from __future__ import annotations

import math

import pytest
import torch

from chapter_code.lm.char_lm import Vocab
from chapter_code.sampling.metrics import (
    known_word_share,
    mean_log_prob,
    repeated_ngram_share,
    words_of,
)
from chapter_code.sampling.rules import generate, greedy, temperature_rule
from chapter_code.sampling.study import (
    greedy_loop,
    sample_scores,
    score_held_out,
    score_rules,
)

TEXT = (
    "the dog is dead. the king is dead. long live the king! the queen is "
    "here, and the king is gone.\n" * 3
)


class Successor(torch.nn.Module):
    """A memoryless model: logit 4 on a fixed successor of the current character (d -> o
    -> g -> space -> d, anything else -> space), 0 elsewhere; so greedy text is "dog dog
    ...", and samples at tau = 1 hold words."""

    def __init__(self, vocab: Vocab) -> None:
        super().__init__()
        after = {"d": "o", "o": "g", "g": " ", " ": "d"}
        self.next = torch.tensor([vocab.index[after.get(c, " ")] for c in vocab.chars])
        self.size = len(vocab)

    def forward(
        self, tokens: torch.Tensor, state: object = None
    ) -> tuple[torch.Tensor, None]:
        return 4.0 * torch.nn.functional.one_hot(
            self.next[tokens], self.size
        ).double(), None


@pytest.fixture(scope="module")
def model_and_vocab() -> tuple[torch.nn.Module, Vocab]:
    vocab = Vocab(TEXT)
    return Successor(vocab), vocab


def test_sample_scores_are_the_three_metrics(model_and_vocab) -> None:  # type: ignore[no-untyped-def]
    model, vocab = model_and_vocab
    known = set(words_of(TEXT))
    context, ids = vocab.encode("the "), vocab.encode("king is the king is gone")
    text = vocab.decode(ids)
    assert sample_scores(model, vocab, context, ids, known) == (
        known_word_share(text, known),
        repeated_ngram_share(text, 3),
        mean_log_prob(model, context, ids),
    )


def test_score_rules_runs_each_rule_on_every_seed_and_greedy_once(
    model_and_vocab,
) -> None:  # type: ignore[no-untyped-def]
    model, vocab = model_and_vocab
    known = set(words_of(TEXT))
    rules = {"greedy": greedy, "tau = 1": temperature_rule(1.0)}
    samples, table = score_rules(model, vocab, rules, "the ", 30, 3, known)
    assert list(samples) == list(table) == ["greedy", "tau = 1"]
    assert table["greedy"].shape == (1, 3)
    assert table["tau = 1"].shape == (3, 3)
    prompt = vocab.encode("the ")
    for seed in range(3):  # row s is the sample drawn with seed s
        ids = generate(
            model, prompt, 30, rules["tau = 1"], torch.Generator().manual_seed(seed)
        )
        assert table["tau = 1"][seed].tolist() == pytest.approx(
            list(sample_scores(model, vocab, prompt, ids, known))
        )
        if seed == 0:
            assert samples["tau = 1"] == vocab.decode(ids)
    assert samples["greedy"] == "dog " * 7 + "do"
    again, _ = score_rules(model, vocab, rules, "the ", 30, 3, known)
    assert again == samples  # reproducible from the seeds
    for bad in (0, True, 2.0):
        with pytest.raises(ValueError, match="seeds must be an int >= 1"):
            score_rules(model, vocab, rules, "the ", 30, bad, known)  # type: ignore[arg-type]


def test_score_held_out_reads_stretches_after_their_context(model_and_vocab) -> None:  # type: ignore[no-untyped-def]
    model, vocab = model_and_vocab
    known = set(words_of(TEXT))
    scores = score_held_out(model, vocab, TEXT, 4, 25, 5, known)
    assert scores.shape == (5, 3)
    starts = torch.randint(
        0, len(TEXT) - 25 - 4, (5,), generator=torch.Generator().manual_seed(0)
    ).tolist()
    s = starts[2]
    expected = sample_scores(
        model,
        vocab,
        vocab.encode(TEXT[s : s + 4]),
        vocab.encode(TEXT[s + 4 : s + 29]),
        known,
    )
    assert scores[2].tolist() == pytest.approx(list(expected))
    with pytest.raises(ValueError, match="too short"):
        score_held_out(model, vocab, TEXT[:29], 4, 25, 5, known)


class NextLetter(torch.nn.Module):
    """A memoryless model that puts logit 4 on the character after the current one
    (cyclically)."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def forward(
        self, tokens: torch.Tensor, state: object = None
    ) -> tuple[torch.Tensor, None]:
        return 4.0 * torch.nn.functional.one_hot(
            (tokens + 1) % self.size, self.size
        ).double(), None


def test_greedy_loop_of_a_model_that_cycles() -> None:
    vocab = Vocab("abc")
    report = greedy_loop(NextLetter(3), vocab, "a", 12, train_text="xbcabcay")
    assert report["text"] == "bcabcabcabca"
    loop = report["loop"]
    assert loop.period == 3
    assert loop.start == 0
    assert report["once_in_train"] == "xbcabcay".count(loop.unit)
    assert report["twice_in_train"] == "xbcabcay".count(loop.unit * 2)
    assert report["drift_first"] == 0.0  # the model carries no trace of the turn before
    assert report["drift"] == 0.0
    # softmax of (4, 0, 0) at the favourite
    step = math.exp(4.0) / (math.exp(4.0) + 2.0)
    assert report["turn_prob"] == pytest.approx(step**3)
    assert report["weakest"] == pytest.approx(step)


def test_greedy_loop_refuses_a_text_without_a_cycle(model_and_vocab) -> None:  # type: ignore[no-untyped-def]
    # the next token is the position: no cycle in 5 steps of 6 tokens
    class Counting(torch.nn.Module):
        def forward(
            self, tokens: torch.Tensor, state: int | None = None
        ) -> tuple[torch.Tensor, int]:
            t = (state or 0) + tokens.shape[1]
            return torch.nn.functional.one_hot(
                torch.full_like(tokens, t % 6), 6
            ).double(), t

    with pytest.raises(ValueError, match="ends in no cycle"):
        greedy_loop(Counting(), Vocab("abcdef"), "a", 5, train_text="abc")
