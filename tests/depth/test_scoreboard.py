"""Tests for chapter_code.depth.scoreboard: every core runs, the initialisations differ
as stated, a tiny job's metrics.

Value tests for chapter_code.depth.scoreboard: which module each contender gets, state
carried, the job's bookkeeping.
"""

from __future__ import annotations

import functools

import pytest
import torch
from torch import nn

from chapter_code.corpora.texts import Splits
from chapter_code.depth import scoreboard
from chapter_code.depth.layers import layer_parameters
from chapter_code.depth.scoreboard import (
    CONTENDERS,
    SMALL_INIT_STD,
    ScoreRecipe,
    build_core,
    count,
    score_run,
)
from chapter_code.gated.gates import NoForgetLSTM
from chapter_code.lm.char_lm import CharLM, TrainConfig


def _model(vocab: int, contender: str, embedding: int, hidden: int) -> CharLM:
    """The scoreboard's model of ``contender``, as score_run builds it."""
    return CharLM(vocab, functools.partial(build_core, contender), embedding, hidden)


def test_a_core_built_after_the_embedding_draws_as_a_named_one() -> None:
    torch.manual_seed(4)
    built = _model(9, "gru", 4, 6)
    torch.manual_seed(4)
    named = CharLM(9, "gru", 4, 6)
    assert all(
        torch.equal(a, b)
        for a, b in zip(built.parameters(), named.parameters(), strict=True)
    )
    with pytest.raises(ValueError, match="brings its own layers"):
        CharLM(9, functools.partial(build_core, "gru"), 4, 6, num_layers=2)
    with pytest.raises(ValueError, match="cell must be one of"):
        CharLM(9, "transformer", 4, 6)


@pytest.mark.parametrize("contender", list(CONTENDERS))
def test_every_core_maps_batch_first(contender: str) -> None:
    torch.manual_seed(0)
    logits, _ = _model(9, contender, 4, 6)(torch.randint(0, 9, (2, 5)))
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


def test_the_no_forget_core_starts_as_the_scratch_lstm_and_never_forgets() -> None:
    torch.manual_seed(3)
    scratch = build_core("lstm-scratch", 4, 6)
    torch.manual_seed(3)
    no_forget = build_core("lstm-no-forget", 4, 6)
    assert isinstance(no_forget, NoForgetLSTM)
    assert all(
        torch.equal(a, b)
        for a, b in zip(scratch.parameters(), no_forget.parameters(), strict=True)
    )
    # one input at t = 0, then zero input and a zero recurrent weight: the cell holds i
    # * g for ever
    with torch.no_grad():
        no_forget.weight_hh.zero_()
        no_forget.bias_ih.zero_()
        no_forget.bias_hh.zero_()
    x = torch.zeros(1, 50, 4)
    x[0, 0] = 1.0
    _, (_, c) = no_forget(x)
    _, (_, c1) = no_forget(x[:, :1])
    assert torch.equal(c, c1)  # nothing is ever erased


def test_forget_bias_and_core_sizes() -> None:
    core = build_core("lstm-forget1", 4, 6)
    assert torch.allclose((core.bias_ih_l0 + core.bias_hh_l0)[6:12], torch.ones(6))
    two = build_core("lstm-2layer", 4, 6)
    assert sum(p.numel() for p in two.parameters()) == layer_parameters(
        "lstm", 4, 6
    ) + layer_parameters("lstm", 6, 6)
    with pytest.raises(ValueError, match="contender"):
        build_core("transformer", 4, 6)


def test_tiny_score_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from chapter_code.corpora.texts import Splits
    from chapter_code.depth import scoreboard

    text = "to be or not to be, that is the question. " * 40
    monkeypatch.setattr(
        scoreboard,
        "corpus_splits",
        lambda corpus: Splits(text[:1200], text[1200:1500], text[1500:]),
    )
    recipe = ScoreRecipe(
        train_chars=1000,
        valid_chars=200,
        embedding_size=4,
        hidden_size=8,
        train=TrainConfig(window=8, batch_size=4, steps=3, log_every=1),
    )
    a, b = score_run(0, "gru", recipe), score_run(0, "gru", recipe)
    assert a["valid_nats"] == b["valid_nats"]
    assert len(a["train_curve"]) == 3
    assert a["valid_perplexity"] == pytest.approx(
        torch.tensor(a["valid_nats"]).exp().item()
    )
    assert a["core_parameters"] == layer_parameters("gru", 4, 8)
    assert a["seconds_per_step"] > 0


TEXT = "to be or not to be, that is the question. " * 40


@pytest.mark.parametrize(
    ("contender", "kind", "layers"),
    [
        ("rnn", nn.RNN, 1),
        ("gru", nn.GRU, 1),
        ("lstm", nn.LSTM, 1),
        ("lstm-forget1", nn.LSTM, 1),
        ("lstm-2layer", nn.LSTM, 2),
    ],
)
def test_each_library_contender_is_its_own_batch_first_module(
    contender: str, kind: type, layers: int
) -> None:
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
    model = _model(9, contender, 4, 6)
    tokens = torch.randint(0, 9, (2, 7))
    whole, _ = model(tokens)
    _, state = model(tokens[:, :3])
    rest, _ = model(tokens[:, 3:], state)
    assert torch.allclose(rest, whole[:, 3:], atol=1e-6)
    fresh, _ = model(tokens[:, 3:])
    assert not torch.allclose(fresh, whole[:, 3:], atol=1e-3)


def test_the_job_reads_its_corpus_seeds_its_windows_and_times_its_steps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[str] = []
    monkeypatch.setattr(
        scoreboard,
        "corpus_splits",
        lambda corpus: (
            asked.append(corpus) or Splits(TEXT[:1200], TEXT[1200:1500], TEXT[1500:])
        ),
    )
    real_fit = scoreboard.fit_next_token
    seen: list[torch.Tensor] = []

    def spy(
        model: nn.Module,
        ids: torch.Tensor,
        config: TrainConfig,
        generator: torch.Generator,
    ) -> object:
        seen.append(generator.get_state())
        return real_fit(model, ids, config, generator)

    monkeypatch.setattr(scoreboard, "fit_next_token", spy)
    clock = iter([100.0, 106.0])
    monkeypatch.setattr(scoreboard.time, "perf_counter", lambda: next(clock))
    recipe = ScoreRecipe(
        corpus="prose",
        train_chars=1000,
        valid_chars=200,
        embedding_size=4,
        hidden_size=8,
        train=TrainConfig(window=8, batch_size=4, steps=3, log_every=1),
    )
    result = score_run(5, "rnn", recipe)
    assert asked == ["prose"]
    assert torch.equal(seen[0], torch.Generator().manual_seed(5).get_state())
    assert result["seconds_per_step"] == pytest.approx(6.0 / 3)
    torch.manual_seed(5)
    assert result["parameters"] == count(_model(len(set(TEXT[:1200])), "rnn", 4, 8))
    assert set(result) == {
        "valid_nats",
        "valid_perplexity",
        "parameters",
        "core_parameters",
        "seconds_per_step",
        "train_curve",
    }


@pytest.mark.parametrize(("module", "gates"), [(nn.RNN, 1), (nn.GRU, 3), (nn.LSTM, 4)])
@pytest.mark.parametrize(("inputs", "hidden"), [(32, 128), (7, 5), (1, 1)])
def test_core_parameters_counts_what_pytorch_allocates(
    module, gates: int, inputs: int, hidden: int
) -> None:
    assert scoreboard.core_parameters(gates, inputs, hidden) == sum(
        p.numel() for p in module(inputs, hidden).parameters()
    )


def test_the_matched_width_is_the_closest_count_and_the_chapters_gru_is_150_wide() -> (
    None
):
    recipe = scoreboard.ScoreRecipe()
    target = scoreboard.core_parameters(4, recipe.embedding_size, recipe.hidden_size)
    width = scoreboard.matched_width(3, target, recipe.embedding_size)
    gap = abs(scoreboard.core_parameters(3, recipe.embedding_size, width) - target)
    for other in (width - 1, width + 1):
        assert (
            abs(scoreboard.core_parameters(3, recipe.embedding_size, other) - target)
            >= gap
        )
    assert width == 150
    assert gap < 0.01 * target
    with pytest.raises(ValueError, match="must be positive"):
        scoreboard.matched_width(0, target, 32)


@pytest.mark.parametrize(
    ("gates", "target", "input_size"), [(0, 9, 1), (1, 0, 5), (1, 9, 0), (-1, -1, -1)]
)
def test_a_width_is_matched_only_for_positive_sizes(
    gates: int, target: int, input_size: int
) -> None:
    with pytest.raises(ValueError, match="must be positive"):
        scoreboard.matched_width(gates, target, input_size)


def test_the_smallest_sizes_match_width_one() -> None:
    # one block, one input, width 1: 1 * 1 * (1 + 1 + 2) = 4 parameters; width 0 (none)
    # would be closer to a target of 1 but is not a layer
    assert scoreboard.core_parameters(1, 1, 1) == 4
    assert scoreboard.matched_width(1, 1, 1) == 1
    assert scoreboard.matched_width(1, 4, 1) == 1
    assert scoreboard.matched_width(2, 20, 1) == 2  # 2 * 2 * (1 + 2 + 2) = 20 exactly


def test_resized_changes_only_the_widths_it_is_given() -> None:
    base = scoreboard.ScoreRecipe()
    wide = scoreboard.resized(base, hidden_size=256)
    assert (wide.hidden_size, wide.embedding_size, wide.train) == (
        256,
        base.embedding_size,
        base.train,
    )
    assert scoreboard.resized(base, embedding_size=64).hidden_size == base.hidden_size
    assert scoreboard.resized(base) == base
