"""Tests for chapter_code.lm.char_models: corpora by name, the recipes as data, training
and reloading.

Tests for chapter_code.lm.char_models that pin the recipe helper (called only at
import), the corpus splits and the training run against the same steps written out.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from chapter_code.corpora.texts import book_prose_text, split_text
from chapter_code.lm import char_models
from chapter_code.lm.char_lm import CharLM, TrainConfig, Vocab, fit_next_token
from chapter_code.lm.char_models import LMRecipe, _recipe, corpus_splits, train_char_lm


def test_corpus_names_files_and_splits() -> None:
    assert char_models.corpus_file("book-prose") == "data/book_prose.txt"
    assert char_models.corpus_file("shakespeare") == "data/shakespeare.txt"
    with pytest.raises(ValueError, match=r"corpus must be one of .*'novels'"):
        char_models.corpus_file("novels")
    splits = char_models.corpus_splits("book-prose")
    text = "".join((splits.train, splits.valid, splits.test))
    assert len(splits.train) == int(len(text) * char_models.PROSE_TRAIN_SHARE)
    assert set(splits.valid + splits.test) <= set(splits.train)


def test_cpu_recipes_keep_the_workshop_shape() -> None:
    for name, full in char_models.WORKSHOP.items():
        small = char_models.CPU[name]
        assert (
            small.cell,
            small.embedding_size,
            small.train.window,
            small.train.steps,
        ) == (full.cell, full.embedding_size, full.train.window, full.train.steps)
        assert (small.hidden_size, small.train.batch_size) == (
            full.hidden_size // 2,
            full.train.batch_size // 2,
        )
    assert (
        char_models.WORKSHOP["lstm"].train.steps
        == 2 * char_models.WORKSHOP["rnn"].train.steps
    )


def test_training_is_reproducible_and_the_result_reloads_to_the_same_model() -> None:
    recipe = char_models.LMRecipe(
        "gru",
        8,
        TrainConfig(window=16, batch_size=4, steps=3, log_every=1),
        embedding_size=4,
        seed=3,
    )
    first = char_models.train_char_lm("book-prose", recipe)
    second = char_models.train_char_lm("book-prose", recipe)
    assert first["history"] == second["history"]
    assert len(first["history"]) == 3
    assert first["recipe"] == dataclasses.asdict(recipe)
    model, vocab = char_models.load_char_lm(first)
    assert not model.training
    assert vocab.chars == first["chars"]
    x = vocab.encode("The state ")[None]
    again, _ = char_models.load_char_lm(second)
    torch.testing.assert_close(model(x)[0], again(x)[0], rtol=0, atol=0)
    assert char_models.count_parameters(model) == sum(
        v.numel() for v in first["state_dict"].values()
    )


def test_the_prose_recipe_is_the_cpu_lstm_with_its_own_step_count() -> None:
    prose = char_models.PROSE_LSTM
    assert (
        dataclasses.replace(prose, train=char_models.CPU["lstm"].train)
        == char_models.CPU["lstm"]
    )
    assert prose.train.steps == 1000


def test_recipe_helper_fills_the_workshop_training_settings() -> None:
    assert _recipe("gru", 32, 8, 50) == LMRecipe(
        "gru", 32, TrainConfig(window=128, batch_size=8, steps=50, lr=2e-3, clip=1.0)
    )


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
    recipe = LMRecipe(
        "rnn",
        8,
        TrainConfig(window=16, batch_size=4, steps=3, log_every=1),
        embedding_size=4,
        seed=5,
    )
    result = train_char_lm("book-prose", recipe)
    splits = corpus_splits("book-prose")
    vocab = Vocab(splits.train)
    torch.manual_seed(5)
    model = CharLM(len(vocab), "rnn", 4, 8)
    # the windows come from their own generator, not the global one
    torch.manual_seed(99)
    history = fit_next_token(
        model,
        vocab.encode(splits.train),
        recipe.train,
        torch.Generator().manual_seed(5),
    )
    assert result["history"] == history
    assert result["corpus"] == "book-prose"
    assert result["recipe"] == dataclasses.asdict(recipe)
    assert result["chars"] == vocab.chars
    for k, v in model.state_dict().items():
        assert torch.equal(result["state_dict"][k], v)
