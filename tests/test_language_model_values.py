"""Tests for chapter_code.language_model that pin the window edges, the defaults of the
character model, the seeded training loop and the gradient-reach target position."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from chapter_code.language_model import (
    CharLM,
    TrainConfig,
    Vocab,
    fit_next_token,
    fixed_window_loss,
    gradient_reach,
    random_windows,
)


def test_random_windows_at_the_shortest_text_start_at_zero() -> None:
    ids = torch.arange(6)
    x, y = random_windows(ids, 5, 3, torch.Generator().manual_seed(0))
    assert x.tolist() == [[0, 1, 2, 3, 4]] * 3
    assert y.tolist() == [[1, 2, 3, 4, 5]] * 3


def test_random_windows_start_anywhere_including_zero() -> None:
    x, _ = random_windows(torch.arange(7), 5, 200, torch.Generator().manual_seed(0))
    assert sorted(set(x[:, 0].tolist())) == [0, 1]


@pytest.mark.parametrize("ids", [torch.arange(5), torch.arange(12).reshape(2, 6)])
def test_windows_need_a_one_dimensional_text_longer_than_the_window(ids: torch.Tensor) -> None:
    with pytest.raises(ValueError, match=r"^ids must be a 1-D tensor longer than window = 5"):
        random_windows(ids, 5, 2, torch.Generator())
    with pytest.raises(ValueError, match=r"^ids must be a 1-D tensor longer than window = 5"):
        fixed_window_loss(CharLM(12, "rnn", 4, 4), ids, 5)


def test_fixed_window_loss_at_the_shortest_text_scores_one_window() -> None:
    torch.manual_seed(0)
    model = CharLM(6, "gru", 4, 5)
    ids = torch.tensor([0, 3, 1, 5, 2, 4])
    logits, _ = model(ids[:5].unsqueeze(0))
    expected = nn.functional.cross_entropy(logits[0], ids[1:]).item()
    assert fixed_window_loss(model, ids, 5) == pytest.approx(expected, rel=1e-6)


def test_char_lm_defaults_and_layers() -> None:
    model = CharLM(10)
    assert isinstance(model.rnn, nn.LSTM)
    assert model.cell == "lstm"
    assert (model.embed.embedding_dim, model.rnn.hidden_size, model.rnn.num_layers) == (64, 256, 1)
    deep = CharLM(10, "gru", 4, 6, num_layers=2)
    assert (deep.cell, deep.rnn.num_layers, deep.rnn.batch_first) == ("gru", 2, True)


@pytest.mark.parametrize("position", range(4))
def test_char_lm_names_each_bad_size(position: int) -> None:
    names = ["vocab_size", "embedding_size", "hidden_size", "num_layers"]
    sizes = [10, 4, 6, 1]
    sizes[position] = 0
    with pytest.raises(ValueError, match=rf"^{names[position]} must be an int >= 1; got 0$"):
        CharLM(sizes[0], "rnn", sizes[1], sizes[2], num_layers=sizes[3])


def test_train_config_rejects_a_zero_clip() -> None:
    with pytest.raises(ValueError, match=r"^lr and clip must be > 0"):
        TrainConfig(clip=0.0)


def test_vocab_rejects_what_is_not_a_string_and_encodes_empty_text_as_int64() -> None:
    with pytest.raises(ValueError, match=r"^text must be a non-empty string$"):
        Vocab(["a", "b"])  # type: ignore[arg-type]
    empty = Vocab("ab").encode("")
    assert empty.dtype == torch.long
    assert empty.shape == (0,)


def test_fit_next_token_depends_only_on_its_generator() -> None:
    ids = torch.randint(0, 5, (60,), generator=torch.Generator().manual_seed(1))
    config = TrainConfig(window=8, batch_size=4, steps=3, log_every=1)
    histories = []
    for global_seed in (1, 2):
        torch.manual_seed(0)
        model = CharLM(5, "rnn", 4, 6)
        torch.manual_seed(global_seed)
        histories.append(fit_next_token(model, ids, config, torch.Generator().manual_seed(3)))
    assert histories[0] == histories[1]


def test_gradient_reach_scores_the_last_position() -> None:
    torch.manual_seed(0)
    model = CharLM(5, "gru", 4, 6)
    ids = torch.randint(0, 5, (40,), generator=torch.Generator().manual_seed(1))
    reach = gradient_reach(model, ids, 6, 3, torch.Generator().manual_seed(2))
    x, y = random_windows(ids, 6, 3, torch.Generator().manual_seed(2))
    emb = model.embed(x).detach().requires_grad_(True)
    states, _ = model.rnn(emb)
    loss = nn.functional.cross_entropy(model.readout(states[:, -1]), y[:, -1], reduction="sum")
    (grad,) = torch.autograd.grad(loss, emb)
    torch.testing.assert_close(reach, grad.norm(dim=-1).mean(dim=0).flip(0))
