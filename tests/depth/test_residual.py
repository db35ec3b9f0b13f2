"""Tests for chapter_code.depth.residual: the residual stack against nn.LSTM, a hand
computation and autograd; a toy depth run against its recipe written out, and its step
times against a fake clock."""

from __future__ import annotations

import dataclasses
import itertools
import math
import time
import types

import pytest
import torch
from torch import nn

from chapter_code.corpora.texts import Splits
from chapter_code.depth import residual
from chapter_code.depth.residual import (
    DepthRecipe,
    ResidualLSTM,
    build_stack,
    depth_run,
)
from chapter_code.lm.char_lm import (
    CharLM,
    TrainConfig,
    Vocab,
    fit_next_token,
    fixed_window_loss,
)


def _copy_into_stack(res: ResidualLSTM, deep: nn.LSTM) -> None:
    with torch.no_grad():
        for layer, lstm in enumerate(res.layers):
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(lstm, name + "_l0").copy_(getattr(deep, f"{name}_l{layer}"))


def test_the_skips_are_added_above_the_first_layer() -> None:
    torch.manual_seed(0)
    res = ResidualLSTM(5, 7, 3)
    x = torch.randn(2, 6, 5)  # (B, T, D)
    out, (h_n, c_n) = res(x)
    # by hand: layer 1 has no skip, layers 2 and 3 add what they read
    h1, (a1, b1) = res.layers[0](x)
    o2, (a2, b2) = res.layers[1](h1)
    h2 = o2 + h1
    o3, (a3, b3) = res.layers[2](h2)
    torch.testing.assert_close(out, o3 + h2)
    torch.testing.assert_close(h_n, torch.cat([a1, a2, a3]))
    torch.testing.assert_close(c_n, torch.cat([b1, b2, b3]))
    assert out.shape == (2, 6, 7)
    assert h_n.shape == c_n.shape == (3, 2, 7)


def test_a_plain_stack_of_the_same_layers_is_nn_lstm() -> None:
    torch.manual_seed(1)
    deep = nn.LSTM(4, 4, num_layers=2, batch_first=True)
    res = ResidualLSTM(4, 4, 2)
    _copy_into_stack(res, deep)
    x = torch.randn(3, 5, 4)
    out_deep, _ = deep(x)
    lower, _ = res.layers[0](x)
    out_res, _ = res(x)
    # layer 2 reads layer 1's output in both; the residual stack adds it once more at
    # the top
    torch.testing.assert_close(out_res, out_deep + lower)
    assert isinstance(build_stack(4, 4, 2, residual=False), nn.LSTM)
    assert isinstance(build_stack(4, 4, 2, residual=True), ResidualLSTM)


def test_a_zeroed_upper_layer_adds_a_constant_and_passes_the_gradient_through() -> None:
    torch.manual_seed(2)
    res = ResidualLSTM(3, 4, 2).double()
    # i, f, g, o: one value per block
    bias = torch.tensor([0.3, -0.2, 0.5, 0.1], dtype=torch.float64)
    with torch.no_grad():
        upper = res.layers[1]
        upper.weight_ih_l0.zero_()
        upper.weight_hh_l0.zero_()
        upper.bias_hh_l0.zero_()
        upper.bias_ih_l0.copy_(bias.repeat_interleave(4))
    x = torch.randn(2, 5, 3, dtype=torch.float64, requires_grad=True)
    out, _ = res(x)
    # by hand: the gates are constants, c_t = f c_(t-1) + i g from c_0 = 0, h_t = o
    # tanh(c_t)
    i, f, o = torch.sigmoid(bias[0]), torch.sigmoid(bias[1]), torch.sigmoid(bias[3])
    g = torch.tanh(bias[2])
    c, const = torch.zeros((), dtype=torch.float64), []
    for _ in range(5):
        c = f * c + i * g
        const.append(o * torch.tanh(c))
    lower, _ = res.layers[0](x)
    torch.testing.assert_close(out, lower + torch.stack(const).view(1, 5, 1))
    # autograd: the upper layer reads its input through zero weights, so the gradient is
    # layer 1's alone
    (grad_res,) = torch.autograd.grad(out.sum(), x)
    (grad_lower,) = torch.autograd.grad(lower.sum(), x)
    torch.testing.assert_close(grad_res, grad_lower)


def test_a_passed_state_is_used_layer_by_layer() -> None:
    torch.manual_seed(3)
    res = ResidualLSTM(4, 4, 2)
    x = torch.randn(1, 6, 4)
    full, _ = res(x)
    first, state = res(x[:, :3])
    second, _ = res(x[:, 3:], state)
    torch.testing.assert_close(torch.cat([first, second], dim=1), full)
    with pytest.raises(ValueError, match="one row per layer"):
        res(x, (state[0][:1], state[1][:1]))


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_bad_layer_counts_are_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="num_layers must be an int >= 1"):
        ResidualLSTM(4, 4, bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="num_layers"):
        build_stack(4, 4, bad, residual=False)  # type: ignore[arg-type]


def test_both_stacks_report_their_width_and_depth_as_nn_lstm_does() -> None:
    torch.manual_seed(5)
    x = torch.randn(2, 6, 3)  # (B, T, D), B != T
    for residual_flag in (False, True):
        stack = build_stack(3, 5, 2, residual=residual_flag)
        assert (stack.hidden_size, stack.num_layers) == (5, 2)
        out, (h_n, c_n) = stack(x)
        assert out.shape == (2, 6, 5)
        assert h_n.shape == c_n.shape == (2, 2, 5)
    # the plain stack is nn.LSTM itself: two layers, batch first
    plain = build_stack(3, 5, 2, residual=False)
    reference = nn.LSTM(3, 5, num_layers=2, batch_first=True)
    reference.load_state_dict(plain.state_dict())
    torch.testing.assert_close(plain(x)[0], reference(x)[0])


def test_the_state_check_reads_the_hidden_rows() -> None:
    torch.manual_seed(6)
    res = ResidualLSTM(4, 4, 2)
    x = torch.randn(1, 3, 4)
    _, (h, c) = res(x)
    # h one row short, c whole: the check names h's row count
    with pytest.raises(ValueError, match=r"one row per layer \(2\); got 1"):
        res(x, (h[:1], c))


#: two toy corpora by name, served by the fake corpus_splits below
TEXTS = {
    "bard": "to be or not to be, that is the question. " * 40,
    "prose": "a recurrent network reads its text one character at a time. " * 40,
}

TINY = DepthRecipe(
    corpus="bard",
    train_chars=1000,
    valid_chars=200,
    embedding_size=4,
    hidden_size=8,
    train=TrainConfig(window=8, batch_size=4, steps=12, lr=1e-2, log_every=3),
)


def _toy_splits(corpus: str) -> Splits:
    text = TEXTS[corpus]  # any other name, None too, is a KeyError
    return Splits(text[:1200], text[1200:1500], text[1500:])


@pytest.fixture
def toy_corpora(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(residual, "corpus_splits", _toy_splits)


def _written_out(
    seed: int, residual_flag: bool, recipe: DepthRecipe
) -> dict[str, object]:
    """depth_run's recipe step by step, with the stack built without build_stack."""
    splits = _toy_splits(recipe.corpus)
    vocab = Vocab(splits.train)
    torch.manual_seed(seed)
    if residual_flag:
        model = CharLM(
            len(vocab),
            lambda e, h: ResidualLSTM(e, h, 2),
            recipe.embedding_size,
            recipe.hidden_size,
        )
    else:
        model = CharLM(
            len(vocab), "lstm", recipe.embedding_size, recipe.hidden_size, num_layers=2
        )
    curve = fit_next_token(
        model,
        vocab.encode(splits.train[: recipe.train_chars]),
        recipe.train,
        torch.Generator().manual_seed(seed),
    )
    nats = fixed_window_loss(
        model, vocab.encode(splits.valid[: recipe.valid_chars]), recipe.train.window
    )
    return {
        "valid_nats": nats,
        "train_curve": curve,
        "parameters": sum(p.numel() for p in model.parameters()),
    }


@pytest.mark.parametrize("residual_flag", [False, True])
@pytest.mark.usefixtures("toy_corpora")
def test_a_tiny_depth_run_is_its_recipe_written_out(residual_flag: bool) -> None:
    got = depth_run(3, 2, residual_flag, TINY)
    want = _written_out(3, residual_flag, TINY)
    assert got["valid_nats"] == want["valid_nats"]
    assert got["train_curve"] == want["train_curve"]
    assert got["parameters"] == want["parameters"]
    assert [step for step, _ in got["train_curve"]] == [3, 6, 9, 12]
    assert got["train_curve"][-1][1] < got["train_curve"][0][1]  # it learns
    assert got["valid_perplexity"] == pytest.approx(math.exp(got["valid_nats"]))
    assert set(got) == {
        "valid_nats",
        "valid_perplexity",
        "parameters",
        "train_curve",
        "step_seconds",
        "step_seconds_quartiles",
    }


@pytest.mark.usefixtures("toy_corpora")
def test_the_seed_the_flag_and_the_corpus_each_change_a_depth_run() -> None:
    base = depth_run(0, 2, True, TINY)
    assert depth_run(0, 2, True, TINY)["train_curve"] == base["train_curve"]
    plain = depth_run(0, 2, False, TINY)
    # the same weights counted, another network: the skip changes every loss
    assert plain["parameters"] == base["parameters"]
    assert plain["valid_nats"] != base["valid_nats"]
    assert depth_run(1, 2, True, TINY)["valid_nats"] != base["valid_nats"]
    prose = depth_run(0, 2, True, dataclasses.replace(TINY, corpus="prose"))
    # prose has more characters: a wider embedding and read-out
    assert prose["parameters"] > base["parameters"]
    assert prose["valid_nats"] != base["valid_nats"]


@pytest.mark.parametrize(
    ("steps", "seconds", "quartiles"),
    [
        (1, [], []),
        (2, [1.0], [1.0, 1.0, 1.0]),
        # by hand: the order statistics interpolated at 0.25, 0.5, 0.75 of the way
        (3, [1.0, 2.0], [1.25, 1.5, 1.75]),
        (5, [1.0, 2.0, 3.0, 4.0], [1.75, 2.5, 3.25]),
    ],
)
@pytest.mark.usefixtures("toy_corpora")
def test_step_seconds_are_the_gaps_between_forward_passes(
    monkeypatch: pytest.MonkeyPatch,
    steps: int,
    seconds: list[float],
    quartiles: list[float],
) -> None:
    # a clock read at each training forward pass: 0, 1, 3, 6, 10 s
    clock = itertools.accumulate(itertools.count(1.0), initial=0.0)
    monkeypatch.setattr(
        residual, "time", types.SimpleNamespace(perf_counter=lambda: next(clock))
    )
    recipe = dataclasses.replace(
        TINY, train=dataclasses.replace(TINY.train, steps=steps, log_every=1)
    )
    result = depth_run(0, 2, True, recipe)
    assert result["step_seconds"] == seconds
    assert result["step_seconds_quartiles"] == pytest.approx(quartiles)
    assert len(result["step_seconds_quartiles"]) == len(quartiles)


@pytest.mark.usefixtures("toy_corpora")
def test_a_tiny_depth_run_times_its_steps_on_the_real_clock() -> None:
    began = time.perf_counter()
    result = depth_run(0, 2, True, TINY)
    elapsed = time.perf_counter() - began
    seconds = result["step_seconds"]
    assert len(seconds) == TINY.train.steps - 1
    assert all(s > 0 for s in seconds)
    assert sum(seconds) < elapsed
    q1, median, q3 = result["step_seconds_quartiles"]
    assert min(seconds) <= q1 <= median <= q3 <= max(seconds)
