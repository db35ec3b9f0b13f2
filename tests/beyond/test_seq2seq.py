"""Tests for beyond.seq2seq: the task, the attention's shapes and weights, decoding, and
a tiny training."""

from __future__ import annotations

import pytest
import torch

from chapter_code.beyond.seq2seq import (
    ReversalConfig,
    Seq2Seq,
    dot_product_attention,
    make_reversal,
    train_reversal,
)
from chapter_code.core import runtime


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
        # feeding its own choices back reproduces them
        greedy_again = net(source, out).argmax(-1)
        assert torch.equal(out, greedy_again)


def test_tiny_training_learns_short_reversals() -> None:
    config = ReversalConfig(
        vocab=4, min_len=2, max_len=3, steps=150, hidden_size=16, n_test=50
    )
    result = train_reversal(True, 0, config)
    assert "query.weight" in result["state"]  # the attention model was trained
    assert result["losses"][-1] < result["losses"][0] / 2
    assert min(result["accuracy"].values()) > 0.9


def test_bad_config_and_input() -> None:
    with pytest.raises(ValueError, match="min_len must be <= max_len"):
        ReversalConfig(min_len=5, max_len=4)
    with pytest.raises(ValueError, match="hidden_size must be an int >= 1"):
        ReversalConfig(hidden_size=0)
    with pytest.raises(ValueError, match="length must be an int >= 1"):
        make_reversal(2, 0, 3, torch.Generator())


def test_reversal_sources_cover_the_alphabet_and_follow_the_generator() -> None:
    source, _ = make_reversal(200, 5, 4, torch.Generator().manual_seed(2))
    assert sorted(source.unique().tolist()) == [0, 1, 2, 3]
    runtime.seed_everything(9)  # the global seed changes nothing
    again, _ = make_reversal(200, 5, 4, torch.Generator().manual_seed(2))
    assert torch.equal(source, again)
    assert make_reversal(1, 1, 1, torch.Generator())[0].tolist() == [[0]]


def test_attention_is_scaled_dot_product_attention() -> None:
    queries, keys = (
        torch.randn(2, 3, 4, dtype=torch.float64),
        torch.randn(2, 5, 4, dtype=torch.float64),
    )
    context, weights = dot_product_attention(queries, keys)
    # sqrt(H) = 2
    expected = torch.softmax(queries @ keys.transpose(1, 2) / 2.0, dim=-1)
    torch.testing.assert_close(weights, expected)
    torch.testing.assert_close(context, expected @ keys)
    reference = torch.nn.functional.scaled_dot_product_attention(queries, keys, keys)
    torch.testing.assert_close(context, reference)


def test_teacher_forcing_reads_the_start_symbol_then_the_target() -> None:
    torch.manual_seed(0)
    net = Seq2Seq(5, 3, 6, attention=False)
    assert net.embed.num_embeddings == 6
    assert net.readout.in_features == 6
    source = torch.tensor([[1, 2, 3]])
    target = torch.tensor([[3, 2, 1]])
    _, h = net.encoder(net.embed(source))
    inputs = torch.tensor([[5, 3, 2]])  # start symbol, then the target shifted right
    dec, _ = net.decoder(net.embed(inputs), h)
    torch.testing.assert_close(net(source, target), net.readout(dec))
    assert net.query is None
    with_attention = Seq2Seq(5, 3, 6, attention=True)
    assert with_attention.readout.in_features == 12
    assert with_attention.query.bias is None
    assert with_attention(source, target).shape == (1, 3, 5)


def test_accuracy_keys_are_every_length_and_training_is_seeded() -> None:
    config = ReversalConfig(
        vocab=3,
        min_len=2,
        max_len=4,
        steps=3,
        hidden_size=4,
        embedding_size=2,
        n_test=5,
    )
    one = train_reversal(False, 1, config)
    assert list(one["accuracy"]) == [2, 3, 4]
    assert len(one["losses"]) == 3
    assert 0 < one["seconds"] < 600
    runtime.seed_everything(3)
    two = train_reversal(False, 1, config)
    assert one["losses"] == two["losses"]
    assert one["accuracy"] == two["accuracy"]
    other = train_reversal(False, 2, config)
    assert other["losses"][1:] != one["losses"][1:]
    # the recipe, written out: weights from the seed, batches from the stream seeded
    # seed + 1, Adam, clipping
    torch.manual_seed(1)
    net = Seq2Seq(3, 2, 4, attention=False)
    data = torch.Generator().manual_seed(2)
    opt = torch.optim.Adam(net.parameters(), lr=config.lr)
    losses = []
    for _ in range(config.steps):
        length = int(torch.randint(2, 5, (1,), generator=data))
        source, target = make_reversal(config.batch_size, length, 3, data)
        loss = torch.nn.functional.cross_entropy(
            net(source, target).flatten(0, 1), target.flatten()
        )
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), config.clip)
        opt.step()
        losses.append(loss.item())
    assert one["losses"] == pytest.approx(losses, rel=1e-6)
    assert set(one["state"]) == set(net.state_dict())
    for name, value in net.state_dict().items():
        torch.testing.assert_close(one["state"][name], value)


def test_config_boundaries() -> None:
    config = ReversalConfig(
        vocab=1,
        min_len=1,
        max_len=1,
        embedding_size=1,
        hidden_size=1,
        steps=1,
        batch_size=1,
        n_test=1,
        lr=1e-9,
        clip=1e-9,
    )
    assert config.min_len == config.max_len == 1
    for name in ["vocab", "min_len", "embedding_size", "steps", "batch_size", "n_test"]:
        with pytest.raises(ValueError, match=f"^{name} must be an int >= 1; got 0"):
            ReversalConfig(**{name: 0})
    with pytest.raises(ValueError, match="^max_len must be an int >= 1; got 1.5"):
        ReversalConfig(max_len=1.5)
    with pytest.raises(
        ValueError, match="^lr and clip must be > 0; got lr=0, clip=1.0"
    ):
        ReversalConfig(lr=0)
    with pytest.raises(
        ValueError, match="^lr and clip must be > 0; got lr=0.005, clip=0"
    ):
        ReversalConfig(clip=0)
    with pytest.raises(ValueError, match="^n must be an int >= 1; got 0"):
        make_reversal(0, 2, 3, torch.Generator())
    with pytest.raises(ValueError, match="^vocab must be an int >= 1; got 0"):
        make_reversal(2, 2, 0, torch.Generator())
