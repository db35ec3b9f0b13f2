"""Tests for chapter_code.wordlm: tokens, the vocabulary, and a tiny job that picks its checkpoint on validation."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from chapter_code import wordlm
from chapter_code.corpora import Splits
from chapter_code.language_model import TrainConfig
from chapter_code.wordlm import UNK, WordLM, WordRecipe, WordVocab, words


def test_words() -> None:
    assert words("Thou art, I'll say; 'tis O'er!") == ["thou", "art", ",", "i'll", "say", ";", "'", "tis", "o'er", "!"]


def test_vocab_ranks_and_unknown() -> None:
    vocab = WordVocab(["b", "a", "b", "c", "a", "b"], size=3)
    assert vocab.words == [UNK, "b", "a"]
    assert vocab.encode(["a", "c", "b"]).tolist() == [2, 0, 1]
    with pytest.raises(ValueError, match="size"):
        WordVocab(["a"], size=1)


def test_model_shapes() -> None:
    torch.manual_seed(0)
    logits, _ = WordLM(11, 6, 2, 0.1)(torch.randint(0, 11, (3, 5)))
    assert logits.shape == (3, 5, 11)


def test_tiny_job_chooses_on_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "the king is dead . long live the king ! " * 60
    monkeypatch.setattr(wordlm, "corpus_splits", lambda corpus: Splits(text[:1600], text[1600:2000], text[2000:]))
    recipe = WordRecipe(vocab_size=20, eval_every=2, train=TrainConfig(window=6, batch_size=4, steps=6, log_every=2))
    out = wordlm.word_lm_metrics(0, 8, 1, dataclasses.asdict(recipe))
    assert [s for s, _ in out["valid_curve"]] == [2, 4, 6]
    assert out["valid_nats"] == min(v for _, v in out["valid_curve"])
    assert out["best_step"] in (2, 4, 6)
    assert out["test_perplexity"] == pytest.approx(torch.tensor(out["test_nats"]).exp().item())
