"""The translator exercise in miniature: a masked recurrent encoder, its final state, a
decoder; vanilla or gated.

The stand-in for the textbook chapter's "running translator" exercise: the
corpus is the reversal task of :mod:`chapter_code.beyond.seq2seq` (a source of
L uniform tokens, its reversal as the target), but the sources of one batch now
have different lengths and are padded. The encoder runs masked (packed, so each
row stops at its own last token; the same as keeping the state on padded steps)
and hands only its final state to the decoder. Two encoders-decoders differ
only in the cell: a vanilla ``nn.RNN``, or an ``nn.GRU`` whose keep gate starts
biased to remember (its update gate z, which keeps h_{t-1}, at bias ``keep_bias``).

Batch-first throughout: sources and targets (B, L), states (B, L, H).

Pages: "Beyond the single carried state" (the translator exercise).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

from chapter_code.core.arguments import positive_int_fields
from chapter_code.core.device import resolve_device
from chapter_code.gated.gates import set_gate_bias


@dataclass(frozen=True)
class TranslatorConfig:
    """Task sizes, buckets of source length, widths and a short recipe."""

    vocab: int = 10  # content symbols 0..vocab-1; start = vocab, pad = vocab + 1
    min_len: int = 2
    max_len: int = 12
    # inclusive source-length ranges
    buckets: tuple[tuple[int, int], ...] = (
        (2, 4),
        (5, 8),
        (9, 12),
    )
    embedding_size: int = 16
    hidden_size: int = 48
    keep_bias: float = 1.0  # the GRU's update-gate bias at the start
    steps: int = 600
    batch_size: int = 64
    lr: float = 5e-3
    clip: float = 1.0
    n_test: int = 100  # test sources per length
    test_seed: int = 77

    def __post_init__(self) -> None:
        positive_int_fields(
            self,
            "vocab",
            "min_len",
            "max_len",
            "embedding_size",
            "hidden_size",
            "steps",
            "batch_size",
            "n_test",
        )
        if self.min_len > self.max_len:
            raise ValueError(
                f"min_len must be <= max_len; got {self.min_len} > {self.max_len}"
            )
        covered = sorted(n for lo, hi in self.buckets for n in range(lo, hi + 1))
        if covered != list(range(self.min_len, self.max_len + 1)):
            raise ValueError(
                f"buckets must cover min_len..max_len once each; got {self.buckets}"
            )


def make_padded_reversal(
    n: int,
    config: TranslatorConfig,
    generator: torch.Generator,
    lengths: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Sources (n, max_len), their reversals (n, max_len), both padded with ``vocab +
    1``, and lengths (n,).
    """
    if lengths is None:
        lengths = torch.randint(
            config.min_len, config.max_len + 1, (n,), generator=generator
        )
    pad = config.vocab + 1
    tokens = torch.randint(0, config.vocab, (n, config.max_len), generator=generator)
    positions = torch.arange(config.max_len)
    source = torch.where(positions < lengths[:, None], tokens, pad)  # (n, L)
    # target[t] = source[length - 1 - t] on real positions
    index = (lengths[:, None] - 1 - positions).clamp(min=0)  # (n, L)
    target = torch.where(positions < lengths[:, None], source.gather(1, index), pad)
    return source, target, lengths


class FinalStateTranslator(nn.Module):
    """Embedding (start and pad rows), masked encoder, decoder from its final state,
    linear readout.
    """

    def __init__(
        self,
        cell: str,
        vocab: int,
        embedding_size: int,
        hidden_size: int,
        keep_bias: float = 1.0,
    ) -> None:
        super().__init__()
        if cell not in ("rnn", "gru"):
            raise ValueError(f"cell must be 'rnn' or 'gru'; got {cell!r}")
        self.vocab = vocab
        self.embed = nn.Embedding(vocab + 2, embedding_size, padding_idx=vocab + 1)
        layer = nn.RNN if cell == "rnn" else nn.GRU
        self.encoder = layer(embedding_size, hidden_size, batch_first=True)
        self.decoder = layer(embedding_size, hidden_size, batch_first=True)
        if cell == "gru":
            for module in (self.encoder, self.decoder):
                # z keeps h_{t-1}: start biased to remember
                set_gate_bias(module, "gru", "z", keep_bias)
        self.readout = nn.Linear(hidden_size, vocab)

    def encode(self, source: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """The encoder's state after each row's last real token (1, B, H); ``lengths``
        (B,) on the CPU, where packing wants them.
        """
        packed = pack_padded_sequence(
            self.embed(source), lengths, batch_first=True, enforce_sorted=False
        )
        _, h = self.encoder(packed)
        return h

    def forward(
        self, source: torch.Tensor, target: torch.Tensor, lengths: torch.Tensor
    ) -> torch.Tensor:
        """Teacher-forced logits (B, L, V); positions past a row's length are padding
        (ignore them in the loss).
        """
        h = self.encode(source, lengths)
        start = torch.full_like(target[:, :1], self.vocab)
        previous = torch.cat([start, target[:, :-1]], dim=1)  # (B, L)
        dec, _ = self.decoder(self.embed(previous), h)  # (B, L, H)
        return self.readout(dec)

    @torch.no_grad()
    def generate(self, source: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Greedy decoding of source.shape[1] tokens (B, L); compare only the first
        lengths[row] of each row.
        """
        h = self.encode(source, lengths)
        token = torch.full_like(source[:, :1], self.vocab)
        out = []
        for _ in range(source.shape[1]):  # one output step at a time
            dec, h = self.decoder(self.embed(token), h)
            token = self.readout(dec).argmax(dim=-1)  # (B, 1)
            out.append(token)
        return torch.cat(out, dim=1)


def token_accuracy(
    predicted: torch.Tensor, target: torch.Tensor, lengths: torch.Tensor
) -> float:
    """Share of real target positions (t < length) that ``predicted`` gets right; the
    three on one device.
    """
    real = torch.arange(target.shape[1], device=target.device) < lengths[:, None]
    return ((predicted == target) & real).sum().item() / real.sum().item()


def reverse_sources(
    source: torch.Tensor, lengths: torch.Tensor, pad: int
) -> torch.Tensor:
    """Each row's real tokens in reverse order, padding left in place."""
    positions = torch.arange(source.shape[1], device=source.device)
    index = (lengths[:, None] - 1 - positions).clamp(min=0)
    return torch.where(positions < lengths[:, None], source.gather(1, index), pad)


def train_translator(
    cell: str,
    seed: int,
    config: TranslatorConfig = TranslatorConfig(),
    device: torch.device | str | None = None,
) -> dict:
    """Train one final-state translator on padded mixed-length batches; test overall, by
    bucket, and reversed.

    Returns the token accuracy overall and per bucket of ``config.buckets``,
    the share of test sources whose output changed when their order was
    reversed, the losses and the wall time. Batches are drawn on the CPU and the
    model trains on ``device`` (the build's by default); the lengths stay on the
    CPU, where packing wants them.
    """
    start = time.perf_counter()
    device = resolve_device(device)
    torch.manual_seed(seed)
    net = FinalStateTranslator(
        cell, config.vocab, config.embedding_size, config.hidden_size, config.keep_bias
    ).to(device)
    data = torch.Generator().manual_seed(seed + 1)
    opt = torch.optim.Adam(net.parameters(), lr=config.lr)
    losses = []
    for _ in range(config.steps):
        source, target, lengths = make_padded_reversal(config.batch_size, config, data)
        source, target = source.to(device), target.to(device)
        logits = net(source, target, lengths)
        loss = nn.functional.cross_entropy(
            logits.flatten(0, 1), target.flatten(), ignore_index=config.vocab + 1
        )
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), config.clip)
        opt.step()
        losses.append(loss.item())

    net.eval()
    test = torch.Generator().manual_seed(config.test_seed)
    all_lengths = torch.arange(config.min_len, config.max_len + 1).repeat_interleave(
        config.n_test
    )
    source, target, lengths = make_padded_reversal(
        len(all_lengths), config, test, all_lengths
    )
    predicted = net.generate(source.to(device), lengths).cpu()
    by_bucket = {}
    for lo, hi in config.buckets:
        rows = (lengths >= lo) & (lengths <= hi)
        by_bucket[f"{lo}-{hi}"] = token_accuracy(
            predicted[rows], target[rows], lengths[rows]
        )
    flipped = reverse_sources(source, lengths, config.vocab + 1)
    flipped = net.generate(flipped.to(device), lengths).cpu()
    real = torch.arange(config.max_len) < lengths[:, None]
    changed = ((flipped != predicted) & real).any(dim=1).float().mean().item()
    return {
        "cell": cell,
        "overall": token_accuracy(predicted, target, lengths),
        "by_bucket": by_bucket,
        "changed_when_reversed": changed,
        "losses": losses,
        "seconds": time.perf_counter() - start,
    }
