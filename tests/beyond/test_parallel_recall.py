"""Tests for chapter_code.beyond.parallel_recall: the input-gated recall network and a
tiny training."""

from __future__ import annotations

import torch
from torch import nn

from chapter_code.beyond.parallel_recall import (
    InputGatedRecallNet,
    train_input_gated_recall,
)
from chapter_code.core import runtime
from chapter_code.gated.memory_task import RecallConfig, make_recall


def test_forget_bias_sits_in_the_second_block_and_output_shape() -> None:
    net = InputGatedRecallNet(vocab=4, hidden_size=6, forget_bias=1.5)
    assert torch.all(net.rec.blocks.bias[6:12] == 1.5)
    assert not torch.all(net.rec.blocks.bias[:6] == 1.5)
    assert net(torch.rand(3, 9, 4)).shape == (3, 4)


def test_tiny_run_learns_a_short_lag() -> None:
    config = RecallConfig(
        lag=2,
        vocab=3,
        hidden_size=8,
        n_train=256,
        n_test=128,
        epochs=15,
        batch_size=32,
        lr=1e-2,
    )
    run = train_input_gated_recall(0, config)
    assert len(run["history"]) == 15
    # at lag 2 the first token is one forget gate away: learnable
    assert run["accuracy"] > 0.9


def test_readout_reads_the_last_state_and_the_default_forget_bias() -> None:
    torch.manual_seed(0)
    net = InputGatedRecallNet(vocab=3, hidden_size=4)
    assert torch.all(net.rec.blocks.bias[4:8] == 1.0)
    assert not torch.any(net.rec.blocks.bias[8:] == 1.0)
    x = torch.rand(2, 5, 3)
    expected = net.readout(net.rec(x)[:, -1])
    torch.testing.assert_close(net(x), expected)
    assert not torch.allclose(net(x), net.readout(net.rec(x)[:, 0]))


def _recipe_by_hand(config: RecallConfig, seed: int, forget_bias: float) -> list[float]:
    """The memory test's recipe for the input-gated net, written out: test accuracy
    after every epoch."""
    x_train, y_train = make_recall(
        config.n_train, config.lag, config.vocab, config.train_seed
    )
    x_test, y_test = make_recall(
        config.n_test, config.lag, config.vocab, config.test_seed
    )
    torch.manual_seed(seed)
    net = InputGatedRecallNet(config.vocab, config.hidden_size, forget_bias)
    stream = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(net.parameters(), lr=config.lr)
    history = []
    for _ in range(config.epochs):
        order = torch.randperm(config.n_train, generator=stream)
        # the last batch holds 4
        for first in range(0, config.n_train, config.batch_size):
            rows = order[first : first + config.batch_size]
            loss = nn.functional.cross_entropy(net(x_train[rows]), y_train[rows])
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), config.clip)
            opt.step()
        history.append((net(x_test).argmax(dim=1) == y_test).float().mean().item())
    return history


# a test set large enough that any change to the training moves its accuracy
RECIPE = RecallConfig(
    lag=3,
    vocab=3,
    hidden_size=4,
    n_train=20,
    n_test=3000,
    epochs=3,
    batch_size=8,
    lr=5e-2,
    clip=0.5,
)


def test_training_is_the_memory_test_recipe_written_out() -> None:
    run = train_input_gated_recall(4, RECIPE, forget_bias=0.5)
    history = _recipe_by_hand(RECIPE, 4, 0.5)
    assert run["history"] == history
    assert len(set(history)) == 3  # every epoch moved the accuracy
    assert run["accuracy"] == history[-1]
    assert 0 < run["seconds"] < 600
    runtime.seed_everything(11)  # the global seed changes nothing
    assert train_input_gated_recall(4, RECIPE, forget_bias=0.5)["history"] == history
    assert train_input_gated_recall(4, RECIPE)["history"] == _recipe_by_hand(
        RECIPE, 4, 1.0
    )  # the default bias
    assert _recipe_by_hand(RECIPE, 4, 1.0) != history
