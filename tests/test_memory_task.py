"""Tests for chapter_code.memory_task: the recall data, seeded runs, the grid, the forget-gate replay."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from chapter_code import runtime
from chapter_code.gates import effective_gate_bias
from chapter_code.memory_task import (
    CONTENDERS,
    Contender,
    RecallConfig,
    RecallNet,
    build_recall_net,
    first_epoch_at,
    forget_gate_trace,
    make_recall,
    restore,
    results_markdown,
    run_grid,
    train_recall,
    train_recall_batched,
)

TINY = RecallConfig(lag=5, vocab=3, hidden_size=6, n_train=48, n_test=24, batch_size=16, epochs=2)


@pytest.fixture(autouse=True)
def _seeded() -> None:
    runtime.seed_everything(99)


def test_make_recall_labels_are_the_first_token_and_data_are_seeded() -> None:
    x, y = make_recall(10, 7, 4, seed=3)
    assert x.shape == (10, 7, 4)
    assert y.shape == (10,)
    torch.testing.assert_close(x.argmax(dim=2)[:, 0], y)
    torch.testing.assert_close(make_recall(10, 7, 4, seed=3)[0], x)
    assert not torch.equal(make_recall(10, 7, 4, seed=4)[0], x)
    with pytest.raises(ValueError, match="lag must be an int >= 1"):
        make_recall(10, 0, 4, seed=3)


def test_contender_and_config_validation() -> None:
    with pytest.raises(ValueError, match=r"cell must be one of \['gru', 'lstm', 'rnn'\]"):
        Contender("x", "transformer")
    with pytest.raises(ValueError, match="keep_bias needs a gated cell"):
        Contender("x", "rnn", 1.0)
    with pytest.raises(ValueError, match=r"solved_at must be in \(0, 1\]"):
        RecallConfig(solved_at=1.5)
    with pytest.raises(ValueError, match="hidden_size must be an int >= 1"):
        RecallConfig(hidden_size=0)


def test_build_is_seeded_and_sets_the_keep_bias() -> None:
    lstm_plus = CONTENDERS[2]
    a, b = build_recall_net(lstm_plus, TINY, seed=5), build_recall_net(lstm_plus, TINY, seed=5)
    for (name, p), q in zip(a.named_parameters(), b.parameters(), strict=True):
        torch.testing.assert_close(p, q, msg=name)
    assert not torch.equal(a.rec.weight_hh_l0, build_recall_net(lstm_plus, TINY, seed=6).rec.weight_hh_l0)
    torch.testing.assert_close(effective_gate_bias(a.rec, "lstm", "f"), torch.ones(TINY.hidden_size))
    gru2 = build_recall_net(CONTENDERS[5], TINY, seed=5)
    torch.testing.assert_close(effective_gate_bias(gru2.rec, "gru", "z"), torch.full((TINY.hidden_size,), 2.0))


def test_training_is_reproducible_and_the_grid_matches_runs_alone() -> None:
    contenders = [CONTENDERS[4]]
    alone = [train_recall(c, s, TINY)[0] for c in contenders for s in (0, 1)]
    in_process = run_grid(contenders, (0, 1), TINY, workers=0)
    in_workers = run_grid(contenders, (0, 1), TINY, workers=2)
    for a, b, w in zip(alone, in_process, in_workers, strict=True):
        assert (a.label, a.seed) == (b.label, b.seed) == (w.label, w.seed)
        assert a.epochs == b.epochs == w.epochs == TINY.epochs
        assert a.history == b.history
        assert abs(a.birth - w.birth) < 1e-6 * max(1.0, a.birth)
        for name, tensor in a.state.items():
            torch.testing.assert_close(b.state[name], tensor, rtol=0, atol=0)
            torch.testing.assert_close(w.state[name], tensor, rtol=1e-4, atol=1e-5)  # one thread vs two: rounding


@pytest.mark.parametrize("contender", CONTENDERS, ids=lambda c: c.label)
def test_one_stream_reproduces_the_sources_global_seed(contender: Contender) -> None:
    """The sources call torch.manual_seed(seed), build the network with PyTorch's own
    constructors, set the keep bias, then draw each epoch's order with torch.randperm.
    One generator, drawing the weights and then the orders, must give the same numbers."""
    config = RecallConfig(hidden_size=8)
    torch.manual_seed(6050)
    reference = RecallNet(contender.cell, config.vocab, config.hidden_size)  # the global stream
    if contender.keep_bias is not None:
        from chapter_code.gates import set_gate_bias

        set_gate_bias(reference.rec, contender.cell, "f" if contender.cell == "lstm" else "z", contender.keep_bias)
    reference_orders = [torch.randperm(config.n_train) for _ in range(2)]
    stream = torch.Generator().manual_seed(6050)
    net = build_recall_net(contender, config, 6050, generator=stream)
    orders = [torch.randperm(config.n_train, generator=stream) for _ in range(2)]
    for (name, p), q in zip(net.named_parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(p, q, rtol=0, atol=0, msg=name)
    for a, b in zip(orders, reference_orders, strict=True):
        assert torch.equal(a, b)


def test_every_run_trains_all_epochs_and_the_table_reports_the_last() -> None:
    easy = RecallConfig(lag=3, vocab=2, hidden_size=4, n_train=32, n_test=16, batch_size=16, epochs=5)
    run, net = train_recall(CONTENDERS[1], 0, easy)
    assert run.epochs == len(run.history) == 5  # no early stop, whatever the accuracy
    x_test, y_test = make_recall(easy.n_test, easy.lag, easy.vocab, easy.test_seed)
    assert run.accuracy == run.history[-1] == (net(x_test).argmax(1) == y_test).float().mean().item()
    table = results_markdown([run], seeds=(0,), solved=0.01)
    assert "| LSTM, default |" in table
    assert f"| {run.accuracy:.0%} (≥1% from ep 1) |" in table
    assert table.endswith("| 1/1 |")
    with pytest.raises(ValueError, match=r"solved must be in \(0, 1\]"):
        results_markdown([run], seeds=(0,), solved=0)


def test_first_epoch_at() -> None:
    assert first_epoch_at([0.2, 0.5, 0.95, 0.8, 0.99], 0.9) == 3
    assert first_epoch_at([0.2, 0.5], 0.9) is None
    with pytest.raises(ValueError, match=r"threshold must be in \(0, 1\]"):
        first_epoch_at([0.5], 1.5)


def test_forget_gate_trace_replays_the_module() -> None:
    run, net = train_recall(CONTENDERS[2], 0, TINY)
    restored = restore(run, CONTENDERS[2], TINY)
    x, _ = make_recall(8, TINY.lag, TINY.vocab, seed=11)
    means, states = forget_gate_trace(restored.rec, x)
    with torch.no_grad():
        reference, _ = net.rec(x)
    torch.testing.assert_close(states, reference)
    assert len(means) == TINY.lag
    assert all(0.0 < m < 1.0 for m in means)
    with pytest.raises(ValueError, match="batch-first nn.LSTM"):
        forget_gate_trace(nn.GRU(3, 4, batch_first=True), x)


def test_learned_initial_state_gets_a_gradient() -> None:
    net = build_recall_net(CONTENDERS[2], TINY, seed=0, learn_h0=True)
    x, y = make_recall(8, TINY.lag, TINY.vocab, seed=1)
    nn.functional.cross_entropy(net(x), y).backward()
    assert net.h0 is not None
    assert net.h0.grad is not None
    assert net.h0.grad.abs().sum() > 0


def test_batched_training_equals_training_each_run_alone() -> None:
    jobs = [(CONTENDERS[3], 0), (CONTENDERS[5], 1), (CONTENDERS[4], 6050)]
    batched = train_recall_batched(jobs, TINY, dtype=torch.float64)
    for (contender, seed), b in zip(jobs, batched, strict=True):
        a, _ = train_recall(contender, seed, TINY, dtype=torch.float64)
        assert (b.label, b.seed, b.epochs) == (a.label, a.seed, a.epochs)
        assert b.history == a.history  # float64: equal accuracies after every epoch
        assert abs(b.birth - a.birth) < 1e-9 * max(1.0, a.birth)
        for name, tensor in a.state.items():
            torch.testing.assert_close(b.state[name], tensor, rtol=1e-9, atol=1e-12)
        restore(b, contender, TINY)  # the saved weights load into a single network


def test_batched_runs_train_all_epochs_and_bad_jobs() -> None:
    easy = RecallConfig(lag=3, vocab=2, hidden_size=4, n_train=32, n_test=16, batch_size=16, epochs=3)
    (run,) = train_recall_batched([(CONTENDERS[1], 0)], easy)
    assert run.epochs == len(run.history) == 3
    with pytest.raises(ValueError, match="contender_seeds must all use one cell type"):
        train_recall_batched([(CONTENDERS[0], 0), (CONTENDERS[1], 0)], TINY)
    with pytest.raises(ValueError, match="contender_seeds must hold at least one"):
        train_recall_batched([], TINY)


def test_batched_grid_matches_batched_groups() -> None:
    contenders = [CONTENDERS[0], CONTENDERS[4]]
    grid = run_grid(contenders, (0, 1), TINY, workers=0, batched=True)
    assert [(r.label, r.seed) for r in grid] == [(c.label, s) for c in contenders for s in (0, 1)]
    group = train_recall_batched([(CONTENDERS[4], 0), (CONTENDERS[4], 1)], TINY)
    assert [r.history for r in grid[2:]] == [r.history for r in group]
