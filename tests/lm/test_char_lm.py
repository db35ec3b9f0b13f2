"""Tests for chapter_code.lm.char_lm: the character LM, its trainer and the two scoring
protocols.

Tests for chapter_code.lm.char_lm that pin the window edges, the defaults of the
character model, the seeded training loop and the gradient-reach target position.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from chapter_code.lm.char_lm import (
    CharLM,
    TrainConfig,
    Vocab,
    fit_next_token,
    fixed_window_loss,
    gradient_reach,
    random_windows,
    streaming_loss,
)
from chapter_code.lm.perplexity import lm_loss_and_ppl

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
    assert streaming_loss(m, ids, 32) == pytest.approx(
        fixed_window_loss(m, ids, 32), rel=1e-12
    )


def test_streaming_carries_state_and_scores_the_same_positions() -> None:
    m = model()
    ids = Vocab(TEXT).encode(TEXT[:97])
    # By hand: the whole 96-step sequence from one zero state scores the same positions
    # as streaming.
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
    loss = torch.nn.functional.cross_entropy(
        m.readout(states[:, -1]), y[:, -1], reduction="sum"
    )
    (grad,) = torch.autograd.grad(loss, emb)
    assert reach.shape == (12,)
    assert reach[5].item() == pytest.approx(
        grad[:, -6].norm(dim=-1).mean().item(), rel=1e-12
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"cell": "tcn"}, "cell must be one of"),
        ({"hidden_size": 0}, "hidden_size must be an int >= 1"),
    ],
)
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


def test_random_windows_at_the_shortest_text_start_at_zero() -> None:
    ids = torch.arange(6)
    x, y = random_windows(ids, 5, 3, torch.Generator().manual_seed(0))
    assert x.tolist() == [[0, 1, 2, 3, 4]] * 3
    assert y.tolist() == [[1, 2, 3, 4, 5]] * 3


def test_random_windows_start_anywhere_including_zero() -> None:
    x, _ = random_windows(torch.arange(7), 5, 200, torch.Generator().manual_seed(0))
    assert sorted(set(x[:, 0].tolist())) == [0, 1]


@pytest.mark.parametrize("ids", [torch.arange(5), torch.arange(12).reshape(2, 6)])
def test_windows_need_a_one_dimensional_text_longer_than_the_window(
    ids: torch.Tensor,
) -> None:
    with pytest.raises(
        ValueError, match=r"^ids must be a 1-D tensor longer than window = 5"
    ):
        random_windows(ids, 5, 2, torch.Generator())
    with pytest.raises(
        ValueError, match=r"^ids must be a 1-D tensor longer than window = 5"
    ):
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
    assert (model.embed.embedding_dim, model.rnn.hidden_size, model.rnn.num_layers) == (
        64,
        256,
        1,
    )
    deep = CharLM(10, "gru", 4, 6, num_layers=2)
    assert (deep.cell, deep.rnn.num_layers, deep.rnn.batch_first) == ("gru", 2, True)


@pytest.mark.parametrize("position", range(4))
def test_char_lm_names_each_bad_size(position: int) -> None:
    names = ["vocab_size", "embedding_size", "hidden_size", "num_layers"]
    sizes = [10, 4, 6, 1]
    sizes[position] = 0
    with pytest.raises(
        ValueError, match=rf"^{names[position]} must be an int >= 1; got 0$"
    ):
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
        histories.append(
            fit_next_token(model, ids, config, torch.Generator().manual_seed(3))
        )
    assert histories[0] == histories[1]


def test_gradient_reach_scores_the_last_position() -> None:
    torch.manual_seed(0)
    model = CharLM(5, "gru", 4, 6)
    ids = torch.randint(0, 5, (40,), generator=torch.Generator().manual_seed(1))
    reach = gradient_reach(model, ids, 6, 3, torch.Generator().manual_seed(2))
    x, y = random_windows(ids, 6, 3, torch.Generator().manual_seed(2))
    emb = model.embed(x).detach().requires_grad_(True)
    states, _ = model.rnn(emb)
    loss = nn.functional.cross_entropy(
        model.readout(states[:, -1]), y[:, -1], reduction="sum"
    )
    (grad,) = torch.autograd.grad(loss, emb)
    torch.testing.assert_close(reach, grad.norm(dim=-1).mean(dim=0).flip(0))


@pytest.mark.parametrize("field", ["window", "batch_size", "steps", "log_every"])
def test_train_config_refuses_a_zero_count_naming_the_field(field: str) -> None:
    # each count is checked, not only the first: a config of zero steps or batches would
    # train nothing, silently
    with pytest.raises(ValueError, match=rf"^{field}\b"):
        TrainConfig(**{field: 0})


class _Core(nn.Module):
    """A batch-first core as a builder returns it: (B, T, E) -> ((B, T, H), state)."""

    def __init__(self, embedding_size: int, hidden_size: int) -> None:
        super().__init__()
        self.proj = nn.Linear(embedding_size, hidden_size)

    def forward(self, x: torch.Tensor, state: object = None) -> tuple:
        return torch.tanh(self.proj(x)), state


def test_a_built_core_is_named_by_its_class_and_a_named_cell_by_its_name() -> None:
    built = CharLM(7, _Core, embedding_size=3, hidden_size=5)
    assert built.cell == "_Core"
    assert isinstance(built.rnn, _Core)
    assert (built.rnn.proj.in_features, built.rnn.proj.out_features) == (3, 5)
    assert CharLM(7, "gru", embedding_size=3, hidden_size=5).cell == "gru"
