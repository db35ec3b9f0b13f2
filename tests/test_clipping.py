"""Tests for chapter_code.clipping: clip_gradients against clip_grad_norm_, the training helpers."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from chapter_code.clipping import (
    LastStepClassifier,
    clip_gradients,
    clipped_share,
    markov_stream,
    recall_first_data,
    train_sgd,
)
from chapter_code.recurrence import NextTokenRNN


def _model_with_grads(seed: int) -> nn.Module:
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3))
    (model(torch.randn(5, 4)).pow(2).sum() * 10).backward()
    return model


@pytest.mark.parametrize("kappa", [0.01, 1.0, 1e6])
def test_clip_gradients_matches_clip_grad_norm(kappa: float) -> None:
    ours, ref = _model_with_grads(0), _model_with_grads(0)
    norm_ours = clip_gradients(ours.parameters(), kappa)
    norm_ref = nn.utils.clip_grad_norm_(ref.parameters(), kappa)
    assert norm_ours == pytest.approx(norm_ref.item(), rel=1e-6)
    for p, q in zip(ours.parameters(), ref.parameters(), strict=True):
        torch.testing.assert_close(p.grad, q.grad)


@settings(max_examples=50, deadline=None)
@given(values=st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=8), kappa=st.floats(1e-3, 1e3))
def test_clipping_keeps_direction_and_caps_the_norm(values: list[float], kappa: float) -> None:
    p = nn.Parameter(torch.zeros(len(values), dtype=torch.float64))
    p.grad = torch.tensor(values, dtype=torch.float64)
    before = p.grad.clone()
    clip_gradients([p], kappa)
    assert p.grad.norm().item() <= kappa * (1 + 1e-9) or torch.equal(p.grad, before)
    if before.norm() > 0:
        scale = (p.grad.norm() / before.norm()).item()
        torch.testing.assert_close(p.grad, before * scale)  # one factor for every coordinate


def test_worked_example_three_four() -> None:
    p = nn.Parameter(torch.zeros(2))
    p.grad = torch.tensor([3.0, 4.0])
    assert clip_gradients([p], 1.0) == pytest.approx(5.0)
    torch.testing.assert_close(p.grad, torch.tensor([0.6, 0.8]))
    p.grad = torch.tensor([3.0, 4.0])
    clip_gradients([p], 10.0)
    torch.testing.assert_close(p.grad, torch.tensor([3.0, 4.0]))


@pytest.mark.parametrize("kappa", [0, -1.0, float("inf"), float("nan")])
def test_clip_gradients_rejects_bad_kappa(kappa: float) -> None:
    with pytest.raises(ValueError, match="kappa must be a finite number > 0"):
        clip_gradients(_model_with_grads(1).parameters(), kappa)


def test_markov_stream_is_seeded_and_follows_two_successors() -> None:
    a = markov_stream(20, 30, 6, torch.Generator().manual_seed(5))
    b = markov_stream(20, 30, 6, torch.Generator().manual_seed(5))
    assert torch.equal(a, b)
    pairs = {(int(u), int(v)) for row in a for u, v in zip(row[:-1], row[1:], strict=True)}
    for u in range(6):
        assert len({v for (s, v) in pairs if s == u}) <= 2
    with pytest.raises(ValueError, match="vocab_size must be an int >= 2"):
        markov_stream(2, 3, 1, torch.Generator())


def test_clipped_sgd_steps_are_bounded_by_lr_times_kappa() -> None:
    torch.manual_seed(0)
    model = NextTokenRNN(5, 8, learn_h0=False)
    batches = markov_stream(3 * 4, 10, 5, torch.Generator().manual_seed(1)).view(3, 4, 10)
    before = torch.cat([p.detach().flatten().clone() for p in model.parameters()])
    run = train_sgd(model, batches[:1], lr=3.0, kappa=0.1)
    after = torch.cat([p.detach().flatten() for p in model.parameters()])
    assert (after - before).norm().item() <= 3.0 * 0.1 * (1 + 1e-4)
    assert len(run.losses) == len(run.grad_norms) == 1
    assert math.isfinite(run.losses[0])
    with pytest.raises(ValueError, match="lr must be > 0"):
        train_sgd(model, batches, lr=0.0, kappa=None)


def test_lstm_classifier_forget_bias_sums_to_one_and_share_is_a_fraction() -> None:
    torch.manual_seed(0)
    model = LastStepClassifier("lstm", 3, 4, 3)
    total = model.rec.bias_ih_l0 + model.rec.bias_hh_l0
    torch.testing.assert_close(total[4:8], torch.ones(4))
    x, y = recall_first_data(64, 5, 3, torch.Generator().manual_seed(0))
    share, acc = clipped_share(model, x, y, steps=3, kappa=1e-6, generator=torch.Generator().manual_seed(1))
    assert share == 1.0
    assert 0.0 <= acc <= 1.0
    with pytest.raises(ValueError, match="cell must be 'rnn' or 'lstm'"):
        LastStepClassifier("gru", 3, 4, 3)
