"""Tests for chapter_code.char_models that pin the recipe helper (called only at import),
the corpus splits and the training run against the same steps written out."""

from __future__ import annotations

import dataclasses

import torch

from chapter_code import char_models
from chapter_code.char_models import LMRecipe, _recipe, corpus_splits, train_char_lm
from chapter_code.corpora import book_prose_text, split_text
from chapter_code.language_model import CharLM, TrainConfig, Vocab, fit_next_token


def test_recipe_helper_fills_the_workshop_training_settings() -> None:
    assert _recipe("gru", 32, 8, 50) == LMRecipe(
        "gru", 32, TrainConfig(window=128, batch_size=8, steps=50, lr=2e-3, clip=1.0))


def test_shakespeare_splits_use_the_pinned_sizes(monkeypatch) -> None:
    monkeypatch.setattr(char_models, "shakespeare_text", lambda: "abcdefghijkl")
    monkeypatch.setattr(char_models, "SHAKESPEARE_SPLITS", (6, 3, 2))
    assert corpus_splits("shakespeare") == split_text("abcdefghijkl", 6, 3, 2)


def test_prose_splits_halve_what_training_leaves() -> None:
    text = book_prose_text()
    splits = corpus_splits("book-prose")
    n_train = int(len(text) * char_models.PROSE_TRAIN_SHARE)
    assert splits.train == text[:n_train]
    assert len(splits.valid) == (len(text) - n_train) // 2
    assert splits.train + splits.valid + splits.test == text


def test_train_char_lm_is_the_written_out_run() -> None:
    recipe = LMRecipe("rnn", 8, TrainConfig(window=16, batch_size=4, steps=3, log_every=1), embedding_size=4, seed=5)
    result = train_char_lm("book-prose", recipe)
    splits = corpus_splits("book-prose")
    vocab = Vocab(splits.train)
    torch.manual_seed(5)
    model = CharLM(len(vocab), "rnn", 4, 8)
    torch.manual_seed(99)  # the windows come from their own generator, not the global one
    history = fit_next_token(model, vocab.encode(splits.train), recipe.train, torch.Generator().manual_seed(5))
    assert result["history"] == history
    assert result["corpus"] == "book-prose"
    assert result["recipe"] == dataclasses.asdict(recipe)
    assert result["chars"] == vocab.chars
    for k, v in model.state_dict().items():
        assert torch.equal(result["state_dict"][k], v)
