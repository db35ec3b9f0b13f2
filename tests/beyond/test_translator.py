"""Tests for beyond.translator: padded reversal data, the masked encoder, accuracy, the reversal audit."""

from __future__ import annotations

import pytest
import torch

from chapter_code.beyond.translator import (
    FinalStateTranslator,
    TranslatorConfig,
    make_padded_reversal,
    reverse_sources,
    token_accuracy,
    train_translator,
)
from chapter_code.core import runtime
from chapter_code.gated.gates import effective_gate_bias


@pytest.fixture(autouse=True)
def _seeded() -> None:
    runtime.seed_everything(4)


def test_padded_reversal_reverses_each_row_within_its_length() -> None:
    config = TranslatorConfig(vocab=5, min_len=2, max_len=6, buckets=((2, 6),))
    source, target, lengths = make_padded_reversal(20, config, torch.Generator().manual_seed(0))
    for s, t, n in zip(source, target, lengths.tolist(), strict=True):
        assert torch.equal(t[:n], s[:n].flip(0))
        assert bool((s[n:] == 6).all())
        assert bool((t[n:] == 6).all())
        assert bool((s[:n] < 5).all())
    assert torch.equal(reverse_sources(source, lengths, 6), target)


@pytest.mark.parametrize("cell", ["rnn", "gru"])
def test_encoder_state_ignores_padding(cell: str) -> None:
    net = FinalStateTranslator(cell, 5, 4, 8)
    config = TranslatorConfig(vocab=5, min_len=2, max_len=6, buckets=((2, 6),))
    source, _, lengths = make_padded_reversal(3, config, torch.Generator().manual_seed(1), torch.tensor([3, 6, 2]))
    h = net.encode(source, lengths)[0]  # (B, H)
    for row, n in enumerate(lengths.tolist()):
        _, alone = net.encoder(net.embed(source[row : row + 1, :n]))
        torch.testing.assert_close(h[row], alone[0, 0])


def test_gru_starts_with_the_keep_bias() -> None:
    net = FinalStateTranslator("gru", 5, 4, 8, keep_bias=1.0)
    for module in (net.encoder, net.decoder):
        assert torch.all(effective_gate_bias(module, "gru", "z") == 1.0)
    with pytest.raises(ValueError, match="cell"):
        FinalStateTranslator("lstm", 5, 4, 8)


def test_token_accuracy_counts_real_positions_only() -> None:
    target = torch.tensor([[1, 2, 9], [3, 9, 9]])
    predicted = torch.tensor([[1, 0, 5], [3, 4, 4]])
    assert token_accuracy(predicted, target, torch.tensor([2, 1])) == pytest.approx(2 / 3)


def test_config_rejects_buckets_that_miss_a_length() -> None:
    with pytest.raises(ValueError, match="buckets"):
        TranslatorConfig(min_len=2, max_len=6, buckets=((2, 3), (5, 6)))


def test_tiny_training_learns_short_reversal() -> None:
    config = TranslatorConfig(vocab=4, min_len=2, max_len=3, buckets=((2, 3),), embedding_size=8, hidden_size=16,
                              steps=120, batch_size=32, lr=1e-2, n_test=20)
    result = train_translator("gru", seed=0, config=config)
    assert result["overall"] > 0.9
    assert set(result["by_bucket"]) == {"2-3"}
    assert 0.0 <= result["changed_when_reversed"] <= 1.0
