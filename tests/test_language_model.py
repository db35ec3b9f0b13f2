"""Tests for chapter_code.language_model: the character LM, its trainer and the two scoring protocols."""

from __future__ import annotations

import pytest
import torch

from chapter_code.language_model import (
    CharLM,
    TrainConfig,
    Vocab,
    fit_next_token,
    fixed_window_loss,
    gradient_reach,
    random_windows,
    streaming_loss,
)
from chapter_code.lm import lm_loss_and_ppl

TEXT = "abcabcabd " * 40


def model(cell: str = "lstm", seed: int = 0) -> CharLM:
    torch.manual_seed(seed)
    return CharLM(len(Vocab(TEXT)), cell, embedding_size=8, hidden_size=16).double()


def test_vocab_round_trip_and_unknown_character() -> None:
    vocab = Vocab(TEXT)
    assert vocab.chars == [" ", "a", "b", "c", "d"]
    assert vocab.decode(vocab.encode("cab d")) == "cab d"
    with pytest.raises(ValueError, match="character 'z' is not in the vocabulary of 5"):
        vocab.encode("zab")


def test_windows_are_shifted_by_one() -> None:
    ids = torch.arange(100)
    x, y = random_windows(ids, 10, 4, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (4, 10)
    torch.testing.assert_close(y, x + 1)
    assert (x[:, 1:] - x[:, :-1] == 1).all()


@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
def test_model_logits_match_a_manual_pass(cell: str) -> None:
    m = model(cell)
    tokens = Vocab(TEXT).encode("abcab").unsqueeze(0)
    logits, _ = m(tokens)
    states, _ = m.rnn(m.embed.weight[tokens])
    torch.testing.assert_close(logits, states @ m.readout.weight.T + m.readout.bias)


def test_streaming_with_one_window_equals_fixed_window() -> None:
    m = model()
    ids = Vocab(TEXT).encode(TEXT[:33])
    assert streaming_loss(m, ids, 32) == pytest.approx(fixed_window_loss(m, ids, 32), rel=1e-12)


def test_streaming_carries_state_and_scores_the_same_positions() -> None:
    m = model()
    ids = Vocab(TEXT).encode(TEXT[:97])
    # By hand: the whole 96-step sequence from one zero state scores the same positions as streaming.
    logits, _ = m(ids[:96].unsqueeze(0))
    whole = lm_loss_and_ppl(logits, ids[1:97].unsqueeze(0))[0].item()
    assert streaming_loss(m, ids, 32) == pytest.approx(whole, rel=1e-12)
    assert fixed_window_loss(m, ids, 32) != pytest.approx(whole, rel=1e-6)


def test_training_lowers_the_loss_and_is_reproducible() -> None:
    ids = Vocab(TEXT).encode(TEXT)
    config = TrainConfig(window=16, batch_size=8, steps=60, lr=1e-2, log_every=20)
    runs = []
    for _ in range(2):
        m = model()
        before = fixed_window_loss(m, ids, 16)
        history = fit_next_token(m, ids, config, torch.Generator().manual_seed(1))
        runs.append((history, fixed_window_loss(m, ids, 16)))
        assert runs[-1][1] < before - 0.5
    assert [s for s, _ in runs[0][0]] == [20, 40, 60]
    assert runs[0] == runs[1]


def test_gradient_reach_matches_autograd_for_one_distance() -> None:
    m = model("rnn")
    ids = Vocab(TEXT).encode(TEXT)
    reach = gradient_reach(m, ids, 12, 3, torch.Generator().manual_seed(2))
    x, y = random_windows(ids, 12, 3, torch.Generator().manual_seed(2))
    emb = m.embed(x).detach().requires_grad_(True)
    states, _ = m.rnn(emb)
    loss = torch.nn.functional.cross_entropy(m.readout(states[:, -1]), y[:, -1], reduction="sum")
    (grad,) = torch.autograd.grad(loss, emb)
    assert reach.shape == (12,)
    assert reach[5].item() == pytest.approx(grad[:, -6].norm(dim=-1).mean().item(), rel=1e-12)


@pytest.mark.parametrize(("kwargs", "message"), [({"cell": "tcn"}, "cell must be one of"),
                                                  ({"hidden_size": 0}, "hidden_size must be an int >= 1")])
def test_bad_model_arguments_are_named(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CharLM(5, **kwargs)


def test_bad_config_and_inputs_are_named() -> None:
    with pytest.raises(ValueError, match="window must be an int >= 1"):
        TrainConfig(window=0)
    with pytest.raises(ValueError, match="lr and clip must be > 0"):
        TrainConfig(lr=0)
    with pytest.raises(ValueError, match="longer than window = 50"):
        fixed_window_loss(model(), torch.arange(5), 50)
    with pytest.raises(ValueError, match=r"tokens must be int64 of shape \(B, T\)"):
        model()(torch.zeros(3, dtype=torch.long))
