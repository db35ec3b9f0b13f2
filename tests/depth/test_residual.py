"""Tests for chapter_code.depth.residual: the residual stack against nn.LSTM, a hand
computation and autograd."""

from __future__ import annotations

import functools

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
from chapter_code.lm.char_lm import CharLM, TrainConfig


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


def test_a_tiny_depth_run_is_seeded_and_times_its_steps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = "to be or not to be, that is the question. " * 40
    monkeypatch.setattr(
        residual,
        "corpus_splits",
        lambda corpus: Splits(text[:1200], text[1200:1500], text[1500:]),
    )
    recipe = DepthRecipe(
        train_chars=1000,
        valid_chars=200,
        embedding_size=4,
        hidden_size=8,
        train=TrainConfig(window=8, batch_size=4, steps=5, log_every=1),
    )
    a, b = depth_run(0, 2, True, recipe), depth_run(0, 2, True, recipe)
    assert a["valid_nats"] == b["valid_nats"]
    assert len(a["train_curve"]) == 5
    assert len(a["step_seconds"]) == 4
    assert all(s > 0 for s in a["step_seconds"])
    q1, median, q3 = a["step_seconds_quartiles"]
    assert q1 <= median <= q3
    torch.manual_seed(0)
    stack = functools.partial(build_stack, num_layers=2, residual=True)
    assert a["parameters"] == sum(
        p.numel() for p in CharLM(len(set(text[:1200])), stack, 4, 8).parameters()
    )
    assert a["valid_perplexity"] == pytest.approx(
        torch.tensor(a["valid_nats"]).exp().item()
    )
