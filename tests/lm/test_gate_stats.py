"""Tests for chapter_code.lm.gate_stats: the replay equals nn.LSTM, and the summary
counts what it says."""

from __future__ import annotations

import pytest
import torch

from chapter_code.lm.char_lm import CharLM
from chapter_code.lm.gate_stats import ForgetGates, forget_gates


def _model(cell: str = "lstm") -> CharLM:
    torch.manual_seed(0)
    return CharLM(9, cell, 5, 7).eval()


def test_the_replay_equals_the_module_and_its_gates_are_its_forget_gates() -> None:
    model = _model()
    tokens = torch.randint(0, 9, (3, 11), generator=torch.Generator().manual_seed(1))
    replay = forget_gates(model, tokens)
    with torch.no_grad():
        reference, _ = model.rnn(model.embed(tokens))  # (B, T, H)
    torch.testing.assert_close(replay.states, reference)
    assert replay.values.shape == (3, 11, 7)
    # the first step's forget gate, from a zero state, by its own formula
    rnn, h = model.rnn, 7
    with torch.no_grad():
        pre = (
            model.embed(tokens[:, 0]) @ rnn.weight_ih_l0[h : 2 * h].T
            + rnn.bias_ih_l0[h : 2 * h]
            + rnn.bias_hh_l0[h : 2 * h]
        )
    torch.testing.assert_close(replay.values[:, 0], torch.sigmoid(pre))


def test_the_summary_counts_values_above_each_threshold() -> None:
    values = torch.tensor([0.5, 0.95, 0.995, 0.999]).reshape(1, 4, 1)
    gates = ForgetGates(values=values, states=torch.zeros_like(values))
    assert gates.summary() == pytest.approx(
        {"mean": values.mean().item(), "above 0.9": 0.75, "above 0.99": 0.5}
    )
    with pytest.raises(ValueError, match="threshold must lie in"):
        gates.share_above(1.0)
    with pytest.raises(ValueError, match="threshold must lie in"):
        gates.share_above(0.0)
    # strictly above: the value 0.5 itself (exact in float32) does not count
    assert gates.share_above(0.5) == pytest.approx(0.75)


def test_bad_input_is_refused_with_the_argument_named() -> None:
    with pytest.raises(ValueError, match="model must be a one-layer CharLM"):
        forget_gates(_model("gru"), torch.zeros(1, 3, dtype=torch.long))
    with pytest.raises(ValueError, match="tokens must be int64"):
        forget_gates(_model(), torch.zeros(3, dtype=torch.long))
