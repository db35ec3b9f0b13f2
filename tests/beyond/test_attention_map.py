"""Tests for beyond.attention_map: the replay equals generate, weights are
distributions, offsets by hand."""

from __future__ import annotations

import pytest
import torch

from chapter_code.beyond.attention_map import greedy_with_weights, offset_shares
from chapter_code.beyond.seq2seq import Seq2Seq, make_reversal


def test_replay_matches_generate_and_weights_sum_to_one() -> None:
    torch.manual_seed(0)
    net = Seq2Seq(6, 4, 8, attention=True).eval()
    source, _ = make_reversal(5, 7, 6, torch.Generator().manual_seed(2))
    tokens, weights = greedy_with_weights(net, source, 7)
    assert torch.equal(tokens, net.generate(source, 7))
    assert weights.shape == (5, 7, 7)
    torch.testing.assert_close(weights.sum(-1), torch.ones(5, 7))
    with pytest.raises(ValueError, match="attention"):
        greedy_with_weights(Seq2Seq(6, 4, 8, attention=False), source, 7)


def test_offset_shares_by_hand() -> None:
    eye = torch.eye(3)
    mirror = eye.flip(1).unsqueeze(0)  # step t puts all weight on 2 - t
    assert offset_shares(mirror) == {0: 1.0}
    # argmax at positions 1, 0, 0 -> offsets -1, -1, 0
    shifted = eye[[1, 2, 2]].flip(1).unsqueeze(0)
    assert offset_shares(shifted) == pytest.approx({-1: 2 / 3, 0: 1 / 3})
    # the largest weight of each step (row) at positions 2, 2, 0: offsets 0, +1, 0 from
    # the mirror 2, 1, 0 (read by column, the same matrix would give 2, 0, 0)
    rows = torch.tensor([[0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]).unsqueeze(
        0
    )
    assert offset_shares(rows) == pytest.approx({0: 2 / 3, 1: 1 / 3})
    with pytest.raises(ValueError, match="T = S"):
        offset_shares(torch.rand(1, 2, 3))
