"""An encoder-decoder on a reversal task, with and without a look back at the encoder's
states.

The task: a source of L tokens drawn uniformly from ``vocab`` symbols; the
target is the same tokens in reverse order. An encoder GRU reads the source;
a decoder GRU starts from the encoder's final state and writes the target one
token at a time (teacher forcing in training, its own greedy choices in
evaluation). Without attention every source token reaches the decoder through
that one final state. With attention, at every output step the decoder's state
scores every encoder state by a scaled dot product (after one learned
linear map of the query) and reads their
softmax-weighted average (:func:`dot_product_attention`), in the manner of
Bahdanau et al. (2015) and Luong et al. (2015); nothing else changes.

Batch-first throughout: sources (B, S), targets (B, T), states (B, S, H).

Pages: "Beyond the single carried state" (revisiting evidence; seed exercise 8
of the textbook chapter, on a synthetic task in place of its corpus).
The encoder-decoder follows Sutskever et al. (2014) and Cho et al. (2014).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import torch
from torch import nn

from chapter_code.core.arguments import positive_int_fields, positive_ints
from chapter_code.core.device import model_device, resolve_device


@dataclass(frozen=True)
class ReversalConfig:
    """The task's sizes, the model's widths and the training recipe."""

    vocab: int = 24  # content symbols 0..vocab-1; the start symbol is `vocab`
    min_len: int = 2
    max_len: int = 16
    embedding_size: int = 16
    hidden_size: int = 32
    steps: int = 2000
    batch_size: int = 64
    lr: float = 5e-3
    clip: float = 1.0
    n_test: int = 200  # test sequences per source length
    test_seed: int = 99

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
        if not self.lr > 0 or not self.clip > 0:
            raise ValueError(
                f"lr and clip must be > 0; got lr={self.lr}, clip={self.clip}"
            )


def make_reversal(
    n: int, length: int, vocab: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` uniform sources of ``length`` tokens (n, L) and their reversals (n, L)."""
    positive_ints(n=n, length=length, vocab=vocab)
    source = torch.randint(0, vocab, (n, length), generator=generator)  # (N, L)
    return source, source.flip(1)


def dot_product_attention(
    queries: torch.Tensor, keys: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Read from every encoder state: queries (B, T, H), keys (B, S, H) -> context (B,
    T, H), weights (B, T, S).
    """
    # (B, T, S): one score per pair
    scores = queries @ keys.transpose(1, 2) / math.sqrt(keys.shape[-1])  # [1]
    # over the source positions; each row sums to 1
    weights = scores.softmax(dim=-1)  # [2]
    # (B, T, H): a weighted average of the encoder states
    return (weights @ keys, weights)  # [3]


class Seq2Seq(nn.Module):
    """Encoder GRU, decoder GRU started from the encoder's final state, optionally
    attention, linear readout.
    """

    def __init__(
        self, vocab: int, embedding_size: int, hidden_size: int, attention: bool
    ) -> None:
        super().__init__()
        self.vocab, self.attention = vocab, attention
        # one extra row: the start symbol
        self.embed = nn.Embedding(vocab + 1, embedding_size)
        self.encoder = nn.GRU(embedding_size, hidden_size, batch_first=True)
        self.decoder = nn.GRU(embedding_size, hidden_size, batch_first=True)
        self.readout = nn.Linear(2 * hidden_size if attention else hidden_size, vocab)
        self.query = (
            nn.Linear(hidden_size, hidden_size, bias=False) if attention else None
        )

    def _read(self, dec: torch.Tensor, enc: torch.Tensor) -> torch.Tensor:
        """Logits (B, T, V) from decoder states (B, T, H), with the attention context if
        any.
        """
        if self.attention:
            context, _ = dot_product_attention(self.query(dec), enc)  # (B, T, H)
            dec = torch.cat([dec, context], dim=-1)  # (B, T, 2H)
        return self.readout(dec)

    def forward(self, source: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """Teacher-forced logits (B, T, V): step t reads the true target token t - 1
        (the start symbol at t = 0).
        """
        # (B, S, H), (1, B, H): the one carried state
        enc, h = self.encoder(self.embed(source))
        start = torch.full_like(target[:, :1], self.vocab)  # (B, 1)
        # (B, T, H)
        dec, _ = self.decoder(self.embed(torch.cat([start, target[:, :-1]], dim=1)), h)
        return self._read(dec, enc)

    @torch.no_grad()
    def generate(self, source: torch.Tensor, length: int) -> torch.Tensor:
        """Greedy decoding of ``length`` tokens (B, length), each step fed the previous
        choice.
        """
        enc, h = self.encoder(self.embed(source))
        token = torch.full_like(source[:, :1], self.vocab)  # (B, 1)
        out = []
        for _ in range(length):  # one output step at a time
            dec, h = self.decoder(self.embed(token), h)  # (B, 1, H)
            token = self._read(dec, enc).argmax(dim=-1)  # (B, 1)
            out.append(token)
        return torch.cat(out, dim=1)


@torch.no_grad()
def accuracy_by_length(net: Seq2Seq, config: ReversalConfig) -> dict[int, float]:
    """Token accuracy of greedy decoding on ``config.n_test`` fresh sources per length,
    min_len..max_len; the sources are drawn on the CPU and decoded on ``net``'s device.
    """
    device = model_device(net)
    gen = torch.Generator().manual_seed(config.test_seed)
    result = {}
    for length in range(config.min_len, config.max_len + 1):
        source, target = make_reversal(config.n_test, length, config.vocab, gen)
        output = net.generate(source.to(device), length).cpu()
        result[length] = (output == target).float().mean().item()
    return result


def train_reversal(
    attention: bool,
    seed: int,
    config: ReversalConfig = ReversalConfig(),
    device: torch.device | str | None = None,
) -> dict:
    """Train one encoder-decoder; return its accuracy by source length, loss history,
    weights and wall time.

    Each step draws one source length uniformly from min_len..max_len and a
    batch of that length (no padding); Adam, clipping by global norm. Batches are
    drawn on the CPU and the model trains on ``device`` (the build's by default).
    """
    start = time.perf_counter()
    device = resolve_device(device)
    torch.manual_seed(seed)  # the initial weights
    net = Seq2Seq(config.vocab, config.embedding_size, config.hidden_size, attention)
    net = net.to(device)
    data = torch.Generator().manual_seed(seed + 1)  # the training stream
    opt = torch.optim.Adam(net.parameters(), lr=config.lr)
    losses = []
    for _ in range(config.steps):
        length = int(
            torch.randint(config.min_len, config.max_len + 1, (1,), generator=data)
        )
        # (B, L) each
        source, target = make_reversal(config.batch_size, length, config.vocab, data)
        source, target = source.to(device), target.to(device)
        loss = nn.functional.cross_entropy(
            net(source, target).flatten(0, 1), target.flatten()
        )
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), config.clip)
        opt.step()
        losses.append(loss.item())
    return {
        "accuracy": accuracy_by_length(net, config),
        "losses": losses,
        "state": {
            k: v.detach().to("cpu", copy=True) for k, v in net.state_dict().items()
        },
        "seconds": time.perf_counter() - start,
    }
