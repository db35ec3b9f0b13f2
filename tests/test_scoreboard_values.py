"""Value tests for chapter_code.scoreboard: which module each contender gets, state carried, the job's bookkeeping."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from chapter_code import scoreboard
from chapter_code.corpora import Splits
from chapter_code.language_model import TrainConfig
from chapter_code.scoreboard import SMALL_INIT_STD, ScoreLM, ScoreRecipe, build_core, count, recipe_dict, score_run

TEXT = "to be or not to be, that is the question. " * 40


@pytest.mark.parametrize(("contender", "kind", "layers"), [
    ("rnn", nn.RNN, 1), ("gru", nn.GRU, 1), ("lstm", nn.LSTM, 1), ("lstm-forget1", nn.LSTM, 1),
    ("lstm-2layer", nn.LSTM, 2),
])
def test_each_library_contender_is_its_own_batch_first_module(contender: str, kind: type, layers: int) -> None:
    core = build_core(contender, 4, 6)
    assert type(core) is kind
    assert core.batch_first is True
    assert core.num_layers == layers
    outputs, _ = core(torch.zeros(2, 5, 4))  # (B, T, E): batch 2, 5 steps
    assert outputs.shape == (2, 5, 6)


def test_the_small_initialisation_is_centred_on_zero() -> None:
    torch.manual_seed(0)
    small = build_core("lstm-scratch-small", 16, 32)
    weights = torch.cat([small.weight_ih.flatten(), small.weight_hh.flatten()])
    assert weights.mean().abs().item() < SMALL_INIT_STD / 5
    assert weights.std().item() == pytest.approx(SMALL_INIT_STD, rel=0.1)


@pytest.mark.parametrize("contender", ["rnn", "gru", "lstm", "lstm-scratch"])
def test_a_passed_state_is_carried_on(contender: str) -> None:
    torch.manual_seed(1)
    model = ScoreLM(9, contender, 4, 6)
    tokens = torch.randint(0, 9, (2, 7))
    whole, _ = model(tokens)
    _, state = model(tokens[:, :3])
    rest, _ = model(tokens[:, 3:], state)
    assert torch.allclose(rest, whole[:, 3:], atol=1e-6)
    fresh, _ = model(tokens[:, 3:])
    assert not torch.allclose(fresh, whole[:, 3:], atol=1e-3)


def test_the_job_reads_its_corpus_seeds_its_windows_and_times_its_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []
    monkeypatch.setattr(scoreboard, "corpus_splits",
                        lambda corpus: asked.append(corpus) or Splits(TEXT[:1200], TEXT[1200:1500], TEXT[1500:]))
    real_fit = scoreboard.fit_next_token
    seen: list[torch.Tensor] = []

    def spy(model: nn.Module, ids: torch.Tensor, config: TrainConfig, generator: torch.Generator) -> object:
        seen.append(generator.get_state())
        return real_fit(model, ids, config, generator)

    monkeypatch.setattr(scoreboard, "fit_next_token", spy)
    clock = iter([100.0, 106.0])
    monkeypatch.setattr(scoreboard.time, "perf_counter", lambda: next(clock))
    recipe = recipe_dict(ScoreRecipe(corpus="prose", train_chars=1000, valid_chars=200, embedding_size=4,
                                     hidden_size=8, train=TrainConfig(window=8, batch_size=4, steps=3, log_every=1)))
    result = score_run(5, "rnn", recipe)
    assert asked == ["prose"]
    assert torch.equal(seen[0], torch.Generator().manual_seed(5).get_state())
    assert result["seconds_per_step"] == pytest.approx(6.0 / 3)
    torch.manual_seed(5)
    assert result["parameters"] == count(ScoreLM(len(set(TEXT[:1200])), "rnn", 4, 8))
    assert set(result) == {"valid_nats", "valid_perplexity", "parameters", "core_parameters", "seconds_per_step",
                           "train_curve"}
