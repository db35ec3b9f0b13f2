"""Tests for chapter_code.parallel_recall: the input-gated recall network and a tiny training."""

from __future__ import annotations

import torch

from chapter_code.memory_task import RecallConfig
from chapter_code.parallel_recall import InputGatedRecallNet, train_input_gated_recall


def test_forget_bias_sits_in_the_second_block_and_output_shape() -> None:
    net = InputGatedRecallNet(vocab=4, hidden_size=6, forget_bias=1.5)
    assert torch.all(net.rec.blocks.bias[6:12] == 1.5)
    assert not torch.all(net.rec.blocks.bias[:6] == 1.5)
    assert net(torch.rand(3, 9, 4)).shape == (3, 4)


def test_tiny_run_learns_a_short_lag() -> None:
    config = RecallConfig(lag=2, vocab=3, hidden_size=8, n_train=256, n_test=128, epochs=15, batch_size=32, lr=1e-2)
    run = train_input_gated_recall(0, config)
    assert len(run["history"]) == 15
    assert run["accuracy"] > 0.9  # at lag 2 the first token is one forget gate away: learnable
