"""Tests for chapter_code.seq2seq: the task, the attention's shapes and weights, decoding, and a tiny training."""

from __future__ import annotations

import pytest
import torch

from chapter_code import runtime
from chapter_code.seq2seq import ReversalConfig, Seq2Seq, dot_product_attention, make_reversal, train_reversal


@pytest.fixture(autouse=True)
def _seeded() -> None:
    runtime.seed_everything(5)


def test_reversal_targets() -> None:
    source, target = make_reversal(4, 6, 5, torch.Generator().manual_seed(0))
    assert source.shape == target.shape == (4, 6)
    assert torch.equal(target[:, 0], source[:, -1])
    assert torch.equal(target.flip(1), source)
    assert int(source.max()) < 5


def test_attention_weights_sum_to_one_and_pick_a_matching_key() -> None:
    keys = torch.eye(5).unsqueeze(0) * 30  # (1, 5, 5): five orthogonal keys
    queries = keys[:, [3, 0]]  # (1, 2, 5): match keys 3 and 0
    context, weights = dot_product_attention(queries, keys)
    assert context.shape == (1, 2, 5)
    assert weights.shape == (1, 2, 5)
    torch.testing.assert_close(weights.sum(-1), torch.ones(1, 2))
    assert weights[0].argmax(-1).tolist() == [3, 0]
    assert weights[0].max(-1).values.min() > 0.99


def test_generate_is_teacher_forcing_on_its_own_outputs() -> None:
    for attention in (False, True):
        net = Seq2Seq(6, 4, 8, attention)
        source, _ = make_reversal(3, 7, 6, torch.Generator().manual_seed(1))
        out = net.generate(source, 7)
        greedy_again = net(source, out).argmax(-1)  # feeding its own choices back reproduces them
        assert torch.equal(out, greedy_again)


def test_tiny_training_learns_short_reversals() -> None:
    config = ReversalConfig(vocab=4, min_len=2, max_len=3, steps=150, hidden_size=16, n_test=50)
    result = train_reversal(True, 0, config)
    assert result["losses"][-1] < result["losses"][0] / 2
    assert min(result["accuracy"].values()) > 0.9


def test_bad_config_and_input() -> None:
    with pytest.raises(ValueError, match="min_len must be <= max_len"):
        ReversalConfig(min_len=5, max_len=4)
    with pytest.raises(ValueError, match="hidden_size must be an int >= 1"):
        ReversalConfig(hidden_size=0)
    with pytest.raises(ValueError, match="length must be an int >= 1"):
        make_reversal(2, 0, 3, torch.Generator())
