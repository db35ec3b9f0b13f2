"""Tests for chapter_code.bptt.clipping: clip_gradients against clip_grad_norm_, the
training helpers.

Tests for chapter_code.bptt.clipping that pin values: the clip's edge cases, the
training loops against hand-written loops, the classifier's read-out and the chapter's
figure.
"""

from __future__ import annotations

import copy
import math

import matplotlib.pyplot as plt
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from chapter_code.bptt.clipping import (
    LastStepClassifier,
    SGDRun,
    clip_gradients,
    clipped_share,
    markov_stream,
    plot_clipping_runs,
    recall_first_data,
    train_sgd,
)
from chapter_code.core.plotting import COLORS
from chapter_code.rnn.recurrence import NextTokenRNN, per_position_loss
from tests.figure_facts import legend_facts, line_facts


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
@given(
    values=st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=8),
    kappa=st.floats(1e-3, 1e3),
)
def test_clipping_keeps_direction_and_caps_the_norm(
    values: list[float], kappa: float
) -> None:
    p = nn.Parameter(torch.zeros(len(values), dtype=torch.float64))
    p.grad = torch.tensor(values, dtype=torch.float64)
    before = p.grad.clone()
    clip_gradients([p], kappa)
    assert p.grad.norm().item() <= kappa * (1 + 1e-9) or torch.equal(p.grad, before)
    if before.norm() > 0:
        scale = (p.grad.norm() / before.norm()).item()
        # one factor for every coordinate
        torch.testing.assert_close(p.grad, before * scale)


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
    pairs = {
        (int(u), int(v)) for row in a for u, v in zip(row[:-1], row[1:], strict=True)
    }
    for u in range(6):
        assert len({v for (s, v) in pairs if s == u}) <= 2
    with pytest.raises(ValueError, match="vocab_size must be an int >= 2"):
        markov_stream(2, 3, 1, torch.Generator())


def test_clipped_sgd_steps_are_bounded_by_lr_times_kappa() -> None:
    torch.manual_seed(0)
    model = NextTokenRNN(5, 8, learn_h0=False)
    batches = markov_stream(3 * 4, 10, 5, torch.Generator().manual_seed(1)).view(
        3, 4, 10
    )
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
    share, acc = clipped_share(
        model, x, y, steps=3, kappa=1e-6, generator=torch.Generator().manual_seed(1)
    )
    assert share == 1.0
    assert 0.0 <= acc <= 1.0
    with pytest.raises(ValueError, match="cell must be 'rnn' or 'lstm'"):
        LastStepClassifier("gru", 3, 4, 3)


def test_no_gradient_means_norm_zero_and_nothing_changes() -> None:
    p = nn.Parameter(torch.ones(3))
    assert clip_gradients([p], 1.0) == 0.0
    assert p.grad is None


def test_a_norm_below_kappa_is_never_scaled_up() -> None:
    p = nn.Parameter(torch.zeros(2))
    p.grad = torch.tensor([3.0, 4.0])
    assert clip_gradients([p], 6.0) == pytest.approx(5.0)
    torch.testing.assert_close(p.grad, torch.tensor([3.0, 4.0]))


@pytest.mark.parametrize(
    ("position", "name"), [(0, "n"), (1, "length"), (2, "vocab_size")]
)
def test_markov_stream_names_each_bad_size(position: int, name: str) -> None:
    args = [3, 3, 3]
    args[position] = 1
    with pytest.raises(ValueError, match=rf"^{name} must be an int >= 2; got 1$"):
        markov_stream(*args, generator=torch.Generator())


def test_markov_stream_starts_anywhere_and_prefers_the_first_successor() -> None:
    tokens = markov_stream(2000, 3, 4, torch.Generator().manual_seed(2))
    assert sorted(tokens[:, 0].unique().tolist()) == [0, 1, 2, 3]
    # Each token's most frequent successor follows it about 80% of the time.
    shares = []
    for u in range(4):
        nxt = tokens[:, 1:][tokens[:, :-1] == u]
        shares.append(nxt.bincount(minlength=4).max().item() / len(nxt))
    assert all(0.75 < s < 0.85 for s in shares)


def test_recall_first_data_labels_the_first_token_over_the_whole_vocabulary() -> None:
    x, y = recall_first_data(1, 1, 50, torch.Generator().manual_seed(0))
    assert x.shape == (1, 1, 50)
    x, y = recall_first_data(300, 4, 3, torch.Generator().manual_seed(0))
    assert torch.equal(y, x[:, 0].argmax(dim=-1))
    assert not torch.equal(y, x[:, 1].argmax(dim=-1))
    assert sorted(y.unique().tolist()) == [0, 1, 2]
    torch.manual_seed(1)
    again, _ = recall_first_data(300, 4, 3, torch.Generator().manual_seed(0))
    assert torch.equal(again, x)


def _sgd_setup() -> tuple[NextTokenRNN, torch.Tensor]:
    torch.manual_seed(0)
    model = NextTokenRNN(5, 8, learn_h0=False)
    batches = markov_stream(2 * 4, 10, 5, torch.Generator().manual_seed(1)).view(
        2, 4, 10
    )
    return model, batches


def test_unclipped_sgd_matches_a_hand_written_loop_and_records_the_norm() -> None:
    model, batches = _sgd_setup()
    ref = copy.deepcopy(model)
    run = train_sgd(model, batches, lr=0.5, kappa=None)
    norms, losses = [], []
    for tokens in batches:
        loss = per_position_loss(ref, tokens).mean()
        ref.zero_grad()
        loss.backward()
        grads = [p.grad for p in ref.parameters() if p.grad is not None]
        norms.append(torch.cat([g.flatten() for g in grads]).double().norm().item())
        with torch.no_grad():
            for p in ref.parameters():
                if p.grad is not None:
                    p -= 0.5 * p.grad
        losses.append(loss.item())
    assert run.grad_norms == pytest.approx(norms, rel=1e-9)
    assert run.losses == pytest.approx(losses, rel=1e-6)
    for p, q in zip(model.parameters(), ref.parameters(), strict=True):
        torch.testing.assert_close(p, q)


def test_train_sgd_accepts_a_small_rate_and_rejects_zero() -> None:
    model, batches = _sgd_setup()
    assert len(train_sgd(model, batches, lr=0.5, kappa=1.0).losses) == 2
    with pytest.raises(ValueError, match=r"^lr must be > 0; got -1"):
        train_sgd(model, batches, lr=-1, kappa=None)


def test_lstm_classifier_sets_only_the_forget_slice() -> None:
    torch.manual_seed(0)
    model = LastStepClassifier("lstm", 3, 4, 2)
    assert torch.equal(model.rec.bias_ih_l0[4:8], torch.ones(4))
    assert torch.equal(model.rec.bias_hh_l0[4:8], torch.zeros(4))
    for bias in (model.rec.bias_ih_l0, model.rec.bias_hh_l0):
        assert not torch.isin(bias[8:16], torch.tensor([0.0, 1.0])).any()


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_classifier_reads_out_the_last_step(cell: str) -> None:
    torch.manual_seed(0)
    model = LastStepClassifier(cell, 3, 4, 2)
    assert isinstance(model.rec, nn.RNN if cell == "rnn" else nn.LSTM)
    assert model.rec.batch_first
    x = torch.randn(5, 6, 3)
    _, state = model.rec(x)
    h_last = state[0] if cell == "lstm" else state  # (1, B, H)
    torch.testing.assert_close(model(x), model.out(h_last[0]))


def test_clipped_share_matches_a_hand_written_adam_loop() -> None:
    torch.manual_seed(0)
    model = LastStepClassifier("rnn", 3, 5, 3)
    ref = copy.deepcopy(model)
    x, y = recall_first_data(100, 4, 3, torch.Generator().manual_seed(0))
    torch.manual_seed(123)
    share, acc = clipped_share(
        model, x, y, steps=6, kappa=0.2, generator=torch.Generator().manual_seed(4)
    )
    gen = torch.Generator().manual_seed(4)
    opt = torch.optim.Adam(ref.parameters(), lr=3e-3)
    clipped = 0
    for _ in range(6):
        rows = torch.randint(0, 100, (64,), generator=gen)
        loss = nn.functional.cross_entropy(ref(x[rows]), y[rows])
        opt.zero_grad()
        loss.backward()
        clipped += nn.utils.clip_grad_norm_(ref.parameters(), 0.2).item() > 0.2
        opt.step()
    for p, q in zip(model.parameters(), ref.parameters(), strict=True):
        torch.testing.assert_close(p, q)
    with torch.no_grad():
        expected_acc = (ref(x).argmax(dim=1) == y).float().mean().item()
    assert share == clipped / 6
    assert 0 < share < 1
    assert acc == pytest.approx(expected_acc)
    assert 0 < acc < 1


def test_plot_clipping_runs_draws_each_run_and_the_uniform_guess() -> None:
    runs = {
        "plain": SGDRun([10.0, 20.0, 5.0], [2.0, 1.5, 1.2]),
        "clipped": SGDRun([1.0, 2.0, 3.0], [1.9, 1.0, 0.5]),
    }
    fig = plot_clipping_runs(runs, uniform_loss=1.6)
    top, bottom = fig.axes
    assert [ln["y"] for ln in line_facts(top)] == [[10.0, 20.0, 5.0], [1.0, 2.0, 3.0]]
    lines = line_facts(bottom)
    assert [ln["y"] for ln in lines] == [[2.0, 1.5, 1.2], [1.9, 1.0, 0.5], [1.6, 1.6]]
    assert [ln["label"] for ln in lines] == ["plain", "clipped", "uniform guess"]
    assert [ln["color"] for ln in lines] == [
        COLORS["rnn"],
        COLORS["other"],
        COLORS["bound"],
    ]
    assert [ln["color"] for ln in line_facts(top)] == [COLORS["rnn"], COLORS["other"]]
    assert [ln["label"] for ln in line_facts(top)] == ["plain", "clipped"]
    assert {ln["lw"] for ln in lines + line_facts(top)} == {1.4}
    assert [ln["ls"] for ln in lines] == ["-", "-", "--"]
    assert top.get_yscale() == bottom.get_yscale() == "log"
    assert top.get_ylabel() == "gradient norm\n(before clipping)"
    assert bottom.get_ylabel() == "training loss\n(nats, log axis)"
    assert bottom.get_xlabel() == "SGD step"
    assert top.get_shared_x_axes().joined(top, bottom)
    assert tuple(fig.get_size_inches()) == (6.2, 5.4)
    assert type(fig.get_layout_engine()).__name__ == "ConstrainedLayoutEngine"
    assert legend_facts(fig) == {
        "labels": ["plain", "clipped", "uniform guess"],
        "ncols": 3,
        "handlelength": 2.0,
        "loc": 9,
        "outside": "upper",
    }
    plt.close(fig)


def test_plot_clipping_runs_draws_only_the_first_two_runs() -> None:
    runs = {name: SGDRun([1.0, 2.0], [1.0, 0.5]) for name in ("a", "b", "c")}
    fig = plot_clipping_runs(runs, uniform_loss=1.0)
    assert [ln["label"] for ln in line_facts(fig.axes[0])] == ["a", "b"]
    plt.close(fig)
