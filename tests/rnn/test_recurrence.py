"""Tests for chapter_code.rnn.recurrence: the hand-written RNN against PyTorch, masks,
bad input.

Tests for chapter_code.rnn.recurrence that pin values where the first tests pinned
shapes.

Each test here kills mutants that survived `make mutation MODULE=recurrence`:
arguments named in errors, boundaries, seeded reproducibility, the initialisation
range, and the learned start state feeding the recurrence.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from chapter_code.core import runtime
from chapter_code.rnn.recurrence import (
    ElmanRNN,
    NextTokenRNN,
    check_mask,
    fixed_start_sequences,
    pad_batch,
    per_position_loss,
    rnn_loop,
    rnn_parameters,
    rnn_step,
    train_next_token,
    window_mlp_parameters,
)


@pytest.fixture(autouse=True)
def _seeded() -> None:
    runtime.seed_everything(1234)


def test_step_matches_rnncell_with_copied_weights() -> None:
    cell = nn.RNNCell(5, 7).double()
    x, h = (
        torch.randn(3, 5, dtype=torch.float64),
        torch.randn(3, 7, dtype=torch.float64),
    )
    ours = rnn_step(x, h, cell.weight_ih, cell.weight_hh, cell.bias_ih + cell.bias_hh)
    torch.testing.assert_close(ours, cell(x, h))


def test_elman_matches_nn_rnn_outputs_and_gradients() -> None:
    ref = nn.RNN(4, 6, batch_first=True).double()
    ours = ElmanRNN.from_torch(ref)
    x = torch.randn(3, 11, 4, dtype=torch.float64)
    h0 = torch.randn(3, 6, dtype=torch.float64)
    out_ref, h_ref = ref(x, h0.unsqueeze(0))
    out, h = ours(x, h0)
    torch.testing.assert_close(out, out_ref)
    torch.testing.assert_close(h, h_ref[0])
    out_ref.square().sum().backward()
    out.square().sum().backward()
    for name in ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]:
        torch.testing.assert_close(
            getattr(ours, name).grad, getattr(ref, name + "_l0").grad
        )


def test_from_torch_keeps_dtype() -> None:
    ref = nn.RNN(2, 3, batch_first=True).double()
    assert ElmanRNN.from_torch(ref).weight_hh.dtype == torch.float64


@settings(max_examples=25, deadline=None)
@given(lengths=st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=5))
def test_masked_batch_ends_where_each_sequence_ends_alone(lengths: list[int]) -> None:
    torch.manual_seed(len(lengths))
    model = ElmanRNN(3, 4).double()
    seqs = [torch.randn(n, 3, dtype=torch.float64) for n in lengths]
    batch, mask = pad_batch(seqs)
    states, last = model(batch, mask=mask)
    for i, s in enumerate(seqs):
        alone_states, alone_last = model(s.unsqueeze(0))
        torch.testing.assert_close(last[i], alone_last[0])
        torch.testing.assert_close(states[i, : len(s)], alone_states[0])


def test_mask_keeps_state_on_padded_step_and_float_mask_matches_bool() -> None:
    model = ElmanRNN(2, 3)
    x = torch.randn(2, 4, 2)
    mask = torch.tensor([[1, 1, 0, 0], [1, 1, 1, 1]], dtype=torch.bool)
    states, _ = model(x, mask=mask)
    torch.testing.assert_close(states[0, 2], states[0, 1])
    torch.testing.assert_close(states[0, 3], states[0, 1])
    assert not torch.allclose(states[1, 2], states[1, 1])
    states_f, _ = model(x, mask=mask.float())
    torch.testing.assert_close(states_f, states)


def test_pad_batch_shapes_and_mask() -> None:
    batch, mask = pad_batch([torch.ones(2, 3), torch.ones(4, 3)])
    assert batch.shape == (2, 4, 3)
    assert mask.tolist() == [[True, True, False, False], [True, True, True, True]]
    assert batch[0, 2:].abs().sum() == 0


@pytest.mark.parametrize(
    ("mask", "message"),
    [
        (torch.ones(2, 5), r"mask must have shape \(batch, time\) = \(2, 4\)"),
        (torch.ones(4, 2), r"mask must have shape"),
        (torch.full((2, 4), 0.5), r"mask must hold only 0"),
        (
            torch.ones(2, 4, dtype=torch.complex64),
            r"mask must be bool, integer or float",
        ),
        ([[1, 1, 1, 1], [1, 1, 1, 1]], r"mask must be a torch.Tensor"),
    ],
)
def test_bad_mask_is_named(mask: object, message: str) -> None:
    model = ElmanRNN(3, 5)
    with pytest.raises((ValueError, TypeError), match=message):
        model(torch.randn(2, 4, 3), mask=mask)  # type: ignore[arg-type]


def test_bad_shapes_are_named() -> None:
    model = ElmanRNN(3, 5)
    with pytest.raises(ValueError, match=r"x must have shape \(batch, time, 3\)"):
        model(torch.randn(2, 4, 4))
    with pytest.raises(ValueError, match=r"x must have shape"):
        model(torch.randn(4, 3))
    with pytest.raises(
        ValueError, match=r"h0 must have shape \(batch, hidden\) = \(2, 5\)"
    ):
        model(torch.randn(2, 4, 3), h0=torch.zeros(1, 5))
    with pytest.raises(ValueError, match=r"weight_ih must have shape"):
        rnn_loop(
            torch.randn(2, 4, 3), torch.randn(5, 2), torch.randn(5, 5), torch.zeros(5)
        )


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_non_positive_sizes_are_named(bad: object) -> None:
    with pytest.raises(ValueError, match="hidden_size must be a positive int"):
        ElmanRNN(3, bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="input_size must be a positive int"):
        ElmanRNN(bad, 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="window must be a positive int"):
        window_mlp_parameters(bad, 3, 4, 5)  # type: ignore[arg-type]


def test_pad_batch_rejects_bad_sequences() -> None:
    with pytest.raises(ValueError, match="at least one"):
        pad_batch([])
    with pytest.raises(
        ValueError, match=r"sequences\[1\] must have shape \(time >= 1, 3\)"
    ):
        pad_batch([torch.ones(2, 3), torch.ones(2, 4)])
    with pytest.raises(ValueError, match=r"sequences\[0\]"):
        pad_batch([torch.ones(0, 3)])


def test_check_mask_returns_float() -> None:
    assert check_mask(torch.tensor([[True, False]]), 1, 2).dtype == torch.float32


def test_from_torch_rejects_unsupported_rnn() -> None:
    with pytest.raises(ValueError, match="one-layer, unidirectional"):
        ElmanRNN.from_torch(nn.RNN(2, 3, num_layers=2))
    with pytest.raises(ValueError, match="one-layer, unidirectional"):
        ElmanRNN.from_torch(nn.RNN(2, 3, nonlinearity="relu"))


@given(
    k=st.integers(1, 20),
    v=st.integers(1, 30),
    h=st.integers(1, 30),
    o=st.integers(1, 30),
)
@settings(max_examples=20, deadline=None)
def test_parameter_counts_match_torch_modules(k: int, v: int, h: int, o: int) -> None:
    mlp = nn.Sequential(nn.Linear(k * v, h), nn.Tanh(), nn.Linear(h, o))
    assert sum(p.numel() for p in mlp.parameters()) == window_mlp_parameters(k, v, h, o)
    rnn_and_readout = [nn.RNN(v, h), nn.Linear(h, o)]
    assert sum(
        p.numel() for m in rnn_and_readout for p in m.parameters()
    ) == rnn_parameters(v, h, o)


def test_next_token_rnn_first_logits_come_from_h0() -> None:
    net = NextTokenRNN(5, 4, learn_h0=True)
    with torch.no_grad():
        net.h0.copy_(torch.randn(4))
    tokens = torch.randint(0, 5, (3, 6))
    logits = net(tokens)
    assert logits.shape == (3, 6, 5)
    torch.testing.assert_close(logits[:, 0], net.readout(net.h0).expand(3, -1))
    frozen = NextTokenRNN(5, 4, learn_h0=False)
    assert not frozen.h0.requires_grad


def test_learned_h0_learns_a_fixed_start_token() -> None:
    gen = torch.Generator().manual_seed(0)
    tokens = fixed_start_sequences(256, 6, 4, start_token=2, generator=gen)
    assert (tokens[:, 0] == 2).all()
    net = NextTokenRNN(4, 8, learn_h0=True)
    before = per_position_loss(net, tokens)[0].item()
    history = train_next_token(
        net, tokens, steps=150, lr=0.05, batch_size=32, generator=gen
    )
    after = per_position_loss(net, tokens)[0].item()
    assert len(history) == 150
    assert after < 0.2 < before


def test_fixed_start_sequences_rejects_bad_start_token() -> None:
    with pytest.raises(ValueError, match=r"start_token must be in \[0, 3\]"):
        fixed_start_sequences(2, 3, 4, start_token=4, generator=torch.Generator())
    with pytest.raises(ValueError, match="lr must be > 0"):
        train_next_token(
            NextTokenRNN(3, 2, True),
            torch.zeros(2, 3, dtype=torch.long),
            1,
            0.0,
            1,
            torch.Generator(),
        )


@pytest.mark.parametrize("position", range(4))
def test_window_mlp_parameters_names_each_bad_argument(position: int) -> None:
    names = ["window", "features", "hidden_size", "outputs"]
    args = [2, 3, 4, 5]
    args[position] = 0
    with pytest.raises(
        ValueError, match=rf"^{names[position]} must be a positive int; got 0$"
    ):
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


@pytest.mark.parametrize(
    ("position", "name"), [(0, "n"), (1, "length"), (2, "vocab_size")]
)
def test_fixed_start_sequences_names_each_bad_size(position: int, name: str) -> None:
    args = [2, 3, 4]
    args[position] = 0
    with pytest.raises(ValueError, match=rf"^{name} must be a positive int"):
        fixed_start_sequences(*args, start_token=0, generator=torch.Generator())


def test_fixed_start_sequences_accepts_token_zero_and_covers_the_vocabulary() -> None:
    tokens = fixed_start_sequences(
        400, 5, 4, start_token=0, generator=torch.Generator().manual_seed(3)
    )
    assert tokens.shape == (400, 5)
    assert (tokens[:, 0] == 0).all()
    assert sorted(tokens[:, 1:].unique().tolist()) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="start_token"):
        fixed_start_sequences(2, 3, 4, start_token=-1, generator=torch.Generator())


def test_fixed_start_sequences_depend_only_on_the_generator() -> None:
    torch.manual_seed(1)
    a = fixed_start_sequences(
        8, 6, 5, start_token=1, generator=torch.Generator().manual_seed(7)
    )
    torch.manual_seed(2)
    b = fixed_start_sequences(
        8, 6, 5, start_token=1, generator=torch.Generator().manual_seed(7)
    )
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


@pytest.mark.parametrize(
    ("args", "name"), [((0, 4), "vocab_size"), ((3, 0), "hidden_size")]
)
def test_next_token_rnn_names_bad_sizes(args: tuple[int, int], name: str) -> None:
    with pytest.raises(ValueError, match=rf"^{name} must be a positive int"):
        NextTokenRNN(*args, learn_h0=True)


def test_next_token_rnn_runs_from_h0_and_one_hot_over_the_whole_vocabulary() -> None:
    net = NextTokenRNN(5, 4, learn_h0=True)
    with torch.no_grad():
        net.h0.copy_(torch.randn(4))
    # only token 0: one_hot must still have 5 classes
    tokens = torch.zeros(2, 4, dtype=torch.long)
    logits = net(tokens)
    x = nn.functional.one_hot(tokens[:, :-1], 5).float()
    states, _ = net.rnn(x, net.h0.expand(2, -1).unsqueeze(0).contiguous())
    torch.testing.assert_close(logits[:, 1:], net.readout(states))
    zero_start, _ = net.rnn(x)
    assert not torch.allclose(logits[:, 1:], net.readout(zero_start))


@pytest.mark.parametrize(
    ("kwargs", "name"), [({"steps": 0}, "steps"), ({"batch_size": 0}, "batch_size")]
)
def test_train_next_token_names_bad_counts(kwargs: dict[str, int], name: str) -> None:
    args = {
        "steps": 1,
        "lr": 0.1,
        "batch_size": 1,
        "generator": torch.Generator(),
    } | kwargs
    with pytest.raises(ValueError, match=rf"^{name} must be a positive int"):
        train_next_token(
            NextTokenRNN(3, 2, True), torch.zeros(2, 3, dtype=torch.long), **args
        )


def test_train_next_token_is_reproducible_from_its_generator() -> None:
    tokens = fixed_start_sequences(
        6, 5, 3, start_token=1, generator=torch.Generator().manual_seed(0)
    )
    histories = []
    for global_seed in (1, 2):
        torch.manual_seed(0)
        net = NextTokenRNN(3, 4, learn_h0=True)
        torch.manual_seed(global_seed)
        histories.append(
            train_next_token(
                net,
                tokens,
                steps=5,
                lr=0.05,
                batch_size=2,
                generator=torch.Generator().manual_seed(9),
            )
        )
    assert histories[0] == histories[1]
    assert all(isinstance(v, float) for v in histories[0])


def test_train_next_token_samples_every_row_including_the_first() -> None:
    # One sequence: the only valid row index is 0, and the loss history is that
    # sequence's loss.
    tokens = torch.tensor([[1, 0, 2, 1]])
    net = NextTokenRNN(3, 4, learn_h0=True)
    first = per_position_loss(net, tokens).mean().item()
    history = train_next_token(
        net, tokens, steps=3, lr=0.01, batch_size=2, generator=torch.Generator()
    )
    assert history[0] == pytest.approx(first)
    assert history[-1] < history[0]
