"""Tests for beyond.translator: padded reversal data, the masked encoder, accuracy, the
reversal audit."""

from __future__ import annotations

import time

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
    source, target, lengths = make_padded_reversal(
        20, config, torch.Generator().manual_seed(0)
    )
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
    source, _, lengths = make_padded_reversal(
        3, config, torch.Generator().manual_seed(1), torch.tensor([3, 6, 2])
    )
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
    assert token_accuracy(predicted, target, torch.tensor([2, 1])) == pytest.approx(
        2 / 3
    )


def test_config_rejects_buckets_that_miss_a_length() -> None:
    with pytest.raises(ValueError, match="buckets"):
        TranslatorConfig(min_len=2, max_len=6, buckets=((2, 3), (5, 6)))


def test_tiny_training_learns_short_reversal() -> None:
    config = TranslatorConfig(
        vocab=4,
        min_len=2,
        max_len=3,
        buckets=((2, 3),),
        embedding_size=8,
        hidden_size=16,
        steps=120,
        batch_size=32,
        lr=1e-2,
        n_test=20,
    )
    result = train_translator("gru", seed=0, config=config)
    assert result["overall"] > 0.9
    assert set(result["by_bucket"]) == {"2-3"}
    assert 0.0 <= result["changed_when_reversed"] <= 1.0


def test_padded_reversal_draws_lengths_then_tokens_from_the_generator() -> None:
    # pins the draws: lengths uniform on min_len..max_len, then tokens uniform on
    # 0..vocab-1 (0 included), both from the caller's generator, so the global seed does
    # not matter; written out with a twin generator
    config = TranslatorConfig(vocab=3, min_len=2, max_len=5, buckets=((2, 5),))
    torch.manual_seed(123)
    source, target, lengths = make_padded_reversal(
        50, config, torch.Generator().manual_seed(8)
    )
    twin = torch.Generator().manual_seed(8)
    want_lengths = torch.randint(2, 6, (50,), generator=twin)
    tokens = torch.randint(0, 3, (50, 5), generator=twin)
    assert torch.equal(lengths, want_lengths)
    for s, t, n, row in zip(source, target, lengths.tolist(), tokens, strict=True):
        assert s.tolist() == row[:n].tolist() + [4] * (5 - n)
        assert t.tolist() == row[:n].flip(0).tolist() + [4] * (5 - n)
    assert bool((source == 0).any())  # the symbol 0 is drawn too
    torch.manual_seed(321)  # another global state: the same data
    again = make_padded_reversal(50, config, torch.Generator().manual_seed(8))
    assert all(
        torch.equal(a, b) for a, b in zip(again, (source, target, lengths), strict=True)
    )


def test_translator_layers_and_embedding_rows() -> None:
    # pins the cell ("rnn" is a vanilla nn.RNN, not a GRU), the embedding's vocab + 2
    # rows (start, pad) and the pad row: zero and never trained (padding_idx = vocab +
    # 1), while the last content symbol's row is not
    net = FinalStateTranslator("rnn", 5, 4, 8)
    for module in (net.encoder, net.decoder):
        assert type(module) is torch.nn.RNN
        assert module.weight_ih_l0.shape == (8, 4)
    assert type(FinalStateTranslator("gru", 5, 4, 8).encoder) is torch.nn.GRU
    assert net.embed.weight.shape == (7, 4)
    assert net.embed.padding_idx == 6
    assert bool((net.embed.weight[6] == 0).all())
    assert bool((net.embed.weight[4] != 0).all())
    net.embed(torch.tensor([4, 6, 6])).sum().backward()
    assert bool((net.embed.weight.grad[6] == 0).all())
    assert bool((net.embed.weight.grad[4] == 1).all())


def test_gru_keep_bias_defaults_to_one() -> None:
    # pins the default of keep_bias: the update gate starts at an effective bias of 1.0
    # when none is given
    net = FinalStateTranslator("gru", 5, 4, 8)
    for module in (net.encoder, net.decoder):
        assert torch.all(effective_gate_bias(module, "gru", "z") == 1.0)


@pytest.mark.parametrize(
    "field",
    [
        "vocab",
        "min_len",
        "max_len",
        "embedding_size",
        "hidden_size",
        "steps",
        "batch_size",
        "n_test",
    ],
)
def test_config_refuses_a_zero_count_by_name(field: str) -> None:
    # pins each count's check: 0 is refused with a message naming the field (buckets
    # cover 0..12 so that min_len = 0 trips no other check)
    buckets = ((0, 12),) if field == "min_len" else TranslatorConfig.buckets
    with pytest.raises(ValueError, match=rf"^{field} must be an int >= 1"):
        TranslatorConfig(**{field: 0}, buckets=buckets)


def test_config_accepts_one_source_length() -> None:
    # pins the edge of min_len <= max_len: equal is allowed (every source of one
    # length), one more is not
    config = TranslatorConfig(min_len=3, max_len=3, buckets=((3, 3),))
    assert (config.min_len, config.max_len) == (3, 3)
    with pytest.raises(ValueError, match="min_len must be <= max_len"):
        TranslatorConfig(min_len=4, max_len=3, buckets=((3, 3),))


_SMALL = TranslatorConfig(
    vocab=4,
    min_len=2,
    max_len=5,
    buckets=((2, 3), (4, 5)),
    embedding_size=8,
    hidden_size=16,
    keep_bias=3.0,
    steps=25,
    batch_size=16,
    lr=1e-2,
    n_test=10,
    test_seed=5,
)


def _train_by_hand(
    cell: str, seed: int, config: TranslatorConfig
) -> tuple[FinalStateTranslator, list[float]]:
    """The recipe of train_translator written out: seeded model, its own data stream
    (seed + 1), Adam, clipping."""
    torch.manual_seed(seed)
    net = FinalStateTranslator(
        cell, config.vocab, config.embedding_size, config.hidden_size, config.keep_bias
    )
    data = torch.Generator().manual_seed(seed + 1)
    opt = torch.optim.Adam(net.parameters(), lr=config.lr)
    losses = []
    for _ in range(config.steps):
        source, target, lengths = make_padded_reversal(config.batch_size, config, data)
        logits = net(source, target, lengths)
        loss = torch.nn.functional.cross_entropy(
            logits.flatten(0, 1), target.flatten(), ignore_index=config.vocab + 1
        )
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), config.clip)
        opt.step()
        losses.append(loss.item())
    return net.eval(), losses


def test_training_losses_follow_the_written_out_recipe() -> None:
    # pins the training run: the model built with the config's keep_bias (3.0, not the
    # default), the data stream seeded seed + 1, one loss per step as a float
    result = train_translator("gru", seed=2, config=_SMALL)
    _, losses = _train_by_hand("gru", 2, _SMALL)
    assert len(result["losses"]) == _SMALL.steps
    assert result["losses"] == pytest.approx(losses, rel=1e-6)
    assert result["losses"][0] != pytest.approx(result["losses"][-1])


def test_test_scores_are_recounted_row_by_row() -> None:
    # pins the test set (n_test sources of every length, drawn from test_seed), the
    # accuracy of each bucket (both ends inclusive), and the share of sources whose real
    # output positions change when the source is reversed: all recounted here with loops
    # over the rows of the same trained model
    began = time.perf_counter()
    result = train_translator("gru", seed=2, config=_SMALL)
    elapsed = time.perf_counter() - began
    net, _ = _train_by_hand("gru", 2, _SMALL)
    lengths = torch.arange(2, 6).repeat_interleave(10)
    source, target, _ = make_padded_reversal(
        40, _SMALL, torch.Generator().manual_seed(5), lengths
    )
    predicted = net.generate(source, lengths)
    flipped = net.generate(
        torch.stack(
            [
                torch.cat([s[:n].flip(0), s[n:]])
                for s, n in zip(source, lengths.tolist(), strict=True)
            ]
        ),
        lengths,
    )
    right = {n: 0 for n in range(2, 6)}
    changed = 0
    for p, f, t, n in zip(predicted, flipped, target, lengths.tolist(), strict=True):
        right[n] += int((p[:n] == t[:n]).sum())
        changed += int(bool((p[:n] != f[:n]).any()))
    # real positions of the 10 sources of each length
    seen = {n: 10 * n for n in range(2, 6)}
    assert result["cell"] == "gru"
    assert result["overall"] == pytest.approx(sum(right.values()) / sum(seen.values()))
    assert result["by_bucket"] == {
        "2-3": pytest.approx((right[2] + right[3]) / (seen[2] + seen[3])),
        "4-5": pytest.approx((right[4] + right[5]) / (seen[4] + seen[5])),
    }
    # neither none nor every source changes: the share below is informative
    assert 0 < changed < 40
    assert result["changed_when_reversed"] == pytest.approx(changed / 40)
    assert 0 < result["seconds"] <= elapsed
