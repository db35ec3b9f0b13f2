"""Tests for beyond.scratch_classifier: both cells against PyTorch, the mask, padding, the confusion matrix."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from chapter_code.beyond.authorship import ALPHABET
from chapter_code.beyond.scratch_classifier import (
    PAD,
    FusedLSTMCell,
    ScratchClassifier,
    ScratchConfig,
    VanillaCell,
    confusion_matrix,
    pad_passages,
    train_scratch_classifier,
    unroll_masked,
)
from chapter_code.core import runtime


@pytest.fixture(autouse=True)
def _seeded() -> None:
    runtime.seed_everything(3)


def test_vanilla_cell_is_rnn_cell_without_recurrent_bias() -> None:
    cell = VanillaCell(5, 7).double()
    ref = nn.RNNCell(5, 7).double()
    with torch.no_grad():
        ref.weight_ih.copy_(cell.input_map.weight)
        ref.bias_ih.copy_(cell.input_map.bias)
        ref.weight_hh.copy_(cell.recurrent.weight)
        ref.bias_hh.zero_()
    x, h = torch.randn(3, 5, dtype=torch.float64), torch.randn(3, 7, dtype=torch.float64)
    (mine,), gates = cell(x, (h,))
    assert gates is None
    torch.testing.assert_close(mine, ref(x, h))
    w = cell.recurrent.weight.detach()
    torch.testing.assert_close(w @ w.T, torch.eye(7, dtype=w.dtype), atol=1e-5, rtol=0)  # orthogonal at initialisation
    assert cell.recurrent.bias is None


def test_fused_lstm_cell_is_lstm_cell_with_forget_bias() -> None:
    cell = FusedLSTMCell(4, 6, forget_bias=1.0).double()
    assert torch.all(cell.fused.bias[6:12] == 1.0)
    ref = nn.LSTMCell(4, 6).double()
    with torch.no_grad():
        ref.weight_hh.copy_(cell.fused.weight[:, :6])
        ref.weight_ih.copy_(cell.fused.weight[:, 6:])
        ref.bias_ih.copy_(cell.fused.bias)
        ref.bias_hh.zero_()
    x = torch.randn(2, 4, dtype=torch.float64)
    h, c = torch.randn(2, 6, dtype=torch.float64), torch.randn(2, 6, dtype=torch.float64)
    (h1, c1), gates = cell(x, (h, c))
    h_ref, c_ref = ref(x, (h, c))
    torch.testing.assert_close(h1, h_ref)
    torch.testing.assert_close(c1, c_ref)
    assert gates.shape == (3, 2, 6)
    assert bool(((gates > 0) & (gates < 1)).all())


@pytest.mark.parametrize("cell", [VanillaCell(3, 5), FusedLSTMCell(3, 5)])
def test_padded_row_ends_in_the_state_it_reaches_alone(cell: nn.Module) -> None:
    x = torch.randn(2, 9, 3)
    lengths = torch.tensor([4, 9])
    h, _ = unroll_masked(cell, x, lengths)
    alone, _ = unroll_masked(cell, x[:1, :4], torch.tensor([4]))
    torch.testing.assert_close(h[0], alone[0])
    garbage = x.clone()
    garbage[0, 4:] = 100.0  # what sits on padded steps must not matter
    torch.testing.assert_close(unroll_masked(cell, garbage, lengths)[0], h)


def test_unroll_masked_rejects_bad_lengths() -> None:
    with pytest.raises(ValueError, match="lengths"):
        unroll_masked(VanillaCell(3, 4), torch.randn(2, 5, 3), torch.tensor([0, 5]))
    with pytest.raises(ValueError, match="x must be"):
        unroll_masked(VanillaCell(3, 4), torch.randn(5, 3), torch.tensor([5]))


def test_padding_row_stays_zero_and_gets_no_gradient() -> None:
    net = ScratchClassifier("lstm", 4, 6)
    ids, lengths = pad_passages(["abc", "de"])
    assert ids[1, 2].item() == PAD
    assert lengths.tolist() == [3, 2]
    net(ids, lengths).sum().backward()
    assert torch.all(net.embed.weight[PAD] == 0)
    assert torch.all(net.embed.weight.grad[PAD] == 0)
    with pytest.raises(ValueError, match="cell"):
        ScratchClassifier("gru", 4, 6)


def test_confusion_matrix_counts_true_by_predicted() -> None:
    counts = confusion_matrix(torch.tensor([0, 0, 1, 1, 1]), torch.tensor([0, 1, 1, 1, 0]), 2)
    assert counts.tolist() == [[1, 1], [1, 2]]
    with pytest.raises(ValueError, match="shape"):
        confusion_matrix(torch.tensor([0]), torch.tensor([0, 1]), 2)


def test_config_errors_name_the_argument() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        ScratchConfig(batch_size=3)
    with pytest.raises(ValueError, match="min_len"):
        ScratchConfig(min_len=70, max_len=64)


def test_tiny_training_records_norms_confusion_and_gates() -> None:
    letters = ALPHABET[9:]
    texts = {"a": "".join(letters[i % 5] for i in range(400)), "b": "".join(letters[10 + i % 7] for i in range(400))}
    config = ScratchConfig(min_len=4, max_len=8, embedding_size=4, hidden_size=6, steps=30, batch_size=8,
                           lr=2e-2, n_valid=20, block=20, cycle=4, probe_len=6)
    result = train_scratch_classifier(texts, "lstm", seed=0, config=config)
    assert len(result["grad_norms"]) == 30
    assert min(result["grad_norms"]) > 0
    assert sum(map(sum, result["confusion"])) == 40
    assert result["accuracy"] > 0.9  # two disjoint alphabets: easy
    assert len(result["gates"]) == 6
    assert all(len(g) == 3 for g in result["gates"])
    assert len(result["probe"]) == 6
