"""Tests for chapter_code.recurrence that pin values where the first tests pinned shapes.

Each test here kills mutants that survived `make mutation MODULE=recurrence`:
arguments named in errors, boundaries, seeded reproducibility, the initialisation
range, and the learned start state feeding the recurrence.
"""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from chapter_code import runtime
from chapter_code.recurrence import (
    ElmanRNN,
    NextTokenRNN,
    fixed_start_sequences,
    pad_batch,
    per_position_loss,
    rnn_parameters,
    train_next_token,
    window_mlp_parameters,
)


@pytest.fixture(autouse=True)
def _seeded() -> None:
    runtime.seed_everything(1234)


@pytest.mark.parametrize("position", range(4))
def test_window_mlp_parameters_names_each_bad_argument(position: int) -> None:
    names = ["window", "features", "hidden_size", "outputs"]
    args = [2, 3, 4, 5]
    args[position] = 0
    with pytest.raises(ValueError, match=rf"^{names[position]} must be a positive int; got 0$"):
        window_mlp_parameters(*args)


@pytest.mark.parametrize("position", range(3))
def test_rnn_parameters_names_each_bad_argument(position: int) -> None:
    names = ["features", "hidden_size", "outputs"]
    args = [3, 4, 5]
    args[position] = -1
    with pytest.raises(ValueError, match=rf"^{names[position]} must be a positive int"):
        rnn_parameters(*args)


def test_parameter_counts_by_hand() -> None:
    # window 2 of 3 features -> 4 hidden -> 5 outputs: (6 + 1) * 4 + (4 + 1) * 5
    assert window_mlp_parameters(2, 3, 4, 5) == 53
    # 3 features, 4 hidden: 4 * (3 + 4) + 2 * 4 recurrent, then (4 + 1) * 5 readout
    assert rnn_parameters(3, 4, 5) == 36 + 25


@pytest.mark.parametrize(("position", "name"), [(0, "n"), (1, "length"), (2, "vocab_size")])
def test_fixed_start_sequences_names_each_bad_size(position: int, name: str) -> None:
    args = [2, 3, 4]
    args[position] = 0
    with pytest.raises(ValueError, match=rf"^{name} must be a positive int"):
        fixed_start_sequences(*args, start_token=0, generator=torch.Generator())


def test_fixed_start_sequences_accepts_token_zero_and_covers_the_vocabulary() -> None:
    tokens = fixed_start_sequences(400, 5, 4, start_token=0, generator=torch.Generator().manual_seed(3))
    assert tokens.shape == (400, 5)
    assert (tokens[:, 0] == 0).all()
    assert sorted(tokens[:, 1:].unique().tolist()) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="start_token"):
        fixed_start_sequences(2, 3, 4, start_token=-1, generator=torch.Generator())


def test_fixed_start_sequences_depend_only_on_the_generator() -> None:
    torch.manual_seed(1)
    a = fixed_start_sequences(8, 6, 5, start_token=1, generator=torch.Generator().manual_seed(7))
    torch.manual_seed(2)
    b = fixed_start_sequences(8, 6, 5, start_token=1, generator=torch.Generator().manual_seed(7))
    assert torch.equal(a, b)


def test_pad_batch_copies_values_and_returns_a_bool_mask() -> None:
    a = torch.arange(6.0).reshape(2, 3)
    b = torch.arange(12.0).reshape(4, 3) + 100
    batch, mask = pad_batch([a, b])
    assert mask.dtype == torch.bool
    torch.testing.assert_close(batch[0, :2], a)
    torch.testing.assert_close(batch[1], b)
    assert batch[0, 2:].eq(0).all()


def test_elman_initialisation_spans_pytorch_default_range() -> None:
    model = ElmanRNN(5, 16)
    bound = 1.0 / math.sqrt(16)
    values = torch.cat([p.detach().flatten() for p in model.parameters()])
    assert values.abs().max() <= bound
    assert values.max() > 0.9 * bound
    assert values.min() < -0.9 * bound


@pytest.mark.parametrize(("args", "name"), [((0, 4), "vocab_size"), ((3, 0), "hidden_size")])
def test_next_token_rnn_names_bad_sizes(args: tuple[int, int], name: str) -> None:
    with pytest.raises(ValueError, match=rf"^{name} must be a positive int"):
        NextTokenRNN(*args, learn_h0=True)


def test_next_token_rnn_runs_from_h0_and_one_hot_over_the_whole_vocabulary() -> None:
    net = NextTokenRNN(5, 4, learn_h0=True)
    with torch.no_grad():
        net.h0.copy_(torch.randn(4))
    tokens = torch.zeros(2, 4, dtype=torch.long)  # only token 0: one_hot must still have 5 classes
    logits = net(tokens)
    x = nn.functional.one_hot(tokens[:, :-1], 5).float()
    states, _ = net.rnn(x, net.h0.expand(2, -1).unsqueeze(0).contiguous())
    torch.testing.assert_close(logits[:, 1:], net.readout(states))
    zero_start, _ = net.rnn(x)
    assert not torch.allclose(logits[:, 1:], net.readout(zero_start))


@pytest.mark.parametrize(("kwargs", "name"), [({"steps": 0}, "steps"), ({"batch_size": 0}, "batch_size")])
def test_train_next_token_names_bad_counts(kwargs: dict[str, int], name: str) -> None:
    args = {"steps": 1, "lr": 0.1, "batch_size": 1, "generator": torch.Generator()} | kwargs
    with pytest.raises(ValueError, match=rf"^{name} must be a positive int"):
        train_next_token(NextTokenRNN(3, 2, True), torch.zeros(2, 3, dtype=torch.long), **args)


def test_train_next_token_is_reproducible_from_its_generator() -> None:
    tokens = fixed_start_sequences(6, 5, 3, start_token=1, generator=torch.Generator().manual_seed(0))
    histories = []
    for global_seed in (1, 2):
        torch.manual_seed(0)
        net = NextTokenRNN(3, 4, learn_h0=True)
        torch.manual_seed(global_seed)
        histories.append(train_next_token(net, tokens, steps=5, lr=0.05, batch_size=2,
                                          generator=torch.Generator().manual_seed(9)))
    assert histories[0] == histories[1]
    assert all(isinstance(v, float) for v in histories[0])


def test_train_next_token_samples_every_row_including_the_first() -> None:
    # One sequence: the only valid row index is 0, and the loss history is that sequence's loss.
    tokens = torch.tensor([[1, 0, 2, 1]])
    net = NextTokenRNN(3, 4, learn_h0=True)
    first = per_position_loss(net, tokens).mean().item()
    history = train_next_token(net, tokens, steps=3, lr=0.01, batch_size=2, generator=torch.Generator())
    assert history[0] == pytest.approx(first)
    assert history[-1] < history[0]
