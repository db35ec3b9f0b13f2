"""Tests for chapter_code.scoreboard: every core runs, the initialisations differ as stated, a tiny job's metrics."""

from __future__ import annotations

import pytest
import torch

from chapter_code.depth import layer_parameters
from chapter_code.language_model import TrainConfig
from chapter_code.scoreboard import CONTENDERS, SMALL_INIT_STD, ScoreLM, ScoreRecipe, build_core, recipe_dict, score_run


@pytest.mark.parametrize("contender", list(CONTENDERS))
def test_every_core_maps_batch_first(contender: str) -> None:
    torch.manual_seed(0)
    logits, _ = ScoreLM(9, contender, 4, 6)(torch.randint(0, 9, (2, 5)))
    assert logits.shape == (2, 5, 9)


def test_scratch_starts_as_nn_lstm_and_small_init_does_not() -> None:
    torch.manual_seed(3)
    scratch = build_core("lstm-scratch", 4, 6)
    torch.manual_seed(3)
    lstm = build_core("lstm", 4, 6)
    assert torch.equal(scratch.weight_hh, lstm.weight_hh_l0)
    assert torch.equal(scratch.bias_ih, lstm.bias_ih_l0)
    small = build_core("lstm-scratch-small", 4, 6)
    assert small.weight_ih.std().item() == pytest.approx(SMALL_INIT_STD, rel=0.5)
    assert small.bias_ih.abs().sum() == 0
    assert small.bias_hh.abs().sum() == 0


def test_forget_bias_and_core_sizes() -> None:
    core = build_core("lstm-forget1", 4, 6)
    assert torch.allclose((core.bias_ih_l0 + core.bias_hh_l0)[6:12], torch.ones(6))
    two = build_core("lstm-2layer", 4, 6)
    assert sum(p.numel() for p in two.parameters()) == layer_parameters("lstm", 4, 6) + layer_parameters("lstm", 6, 6)
    with pytest.raises(ValueError, match="contender"):
        build_core("transformer", 4, 6)


def test_tiny_score_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from chapter_code import scoreboard
    from chapter_code.corpora import Splits

    text = "to be or not to be, that is the question. " * 40
    monkeypatch.setattr(scoreboard, "corpus_splits", lambda corpus: Splits(text[:1200], text[1200:1500], text[1500:]))
    recipe = recipe_dict(ScoreRecipe(train_chars=1000, valid_chars=200, embedding_size=4, hidden_size=8,
                                     train=TrainConfig(window=8, batch_size=4, steps=3, log_every=1)))
    a, b = score_run(0, "gru", recipe), score_run(0, "gru", recipe)
    assert a["valid_nats"] == b["valid_nats"]
    assert len(a["train_curve"]) == 3
    assert a["valid_perplexity"] == pytest.approx(torch.tensor(a["valid_nats"]).exp().item())
    assert a["core_parameters"] == layer_parameters("gru", 4, 8)
    assert a["seconds_per_step"] > 0
