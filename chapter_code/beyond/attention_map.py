"""Where the look-back decoder reads: its attention weights during greedy decoding.

:func:`greedy_with_weights` replays :meth:`chapter_code.beyond.seq2seq.Seq2Seq.generate`
step by step and keeps, at every output step, the softmax weights that
:func:`chapter_code.beyond.seq2seq.dot_product_attention` put on each source
position. For reversal, output step t should read source position L - 1 - t:
:func:`offset_shares` counts how far from there the largest weight lands.

Batch-first: sources (B, S), weights (B, T, S).

Pages: "Beyond the single carried state" (the attention-weights figure).
"""

from __future__ import annotations

import torch

from chapter_code.beyond.seq2seq import Seq2Seq, dot_product_attention
from chapter_code.core.arguments import positive_ints


@torch.no_grad()
def greedy_with_weights(
    net: Seq2Seq, source: torch.Tensor, length: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Greedy tokens (B, length) and the attention weights (B, length, S) of a model
    built with attention.
    """
    if not net.attention:
        raise ValueError("net must be a Seq2Seq built with attention=True")
    positive_ints(length=length)
    enc, h = net.encoder(net.embed(source))  # (B, S, H), (1, B, H)
    token = torch.full_like(source[:, :1], net.vocab)  # (B, 1): the start symbol
    tokens, weights = [], []
    for _ in range(length):  # one output step at a time, as in generate
        dec, h = net.decoder(net.embed(token), h)  # (B, 1, H)
        context, w = dot_product_attention(net.query(dec), enc)  # (B, 1, H), (B, 1, S)
        token = net.readout(torch.cat([dec, context], dim=-1)).argmax(dim=-1)  # (B, 1)
        tokens.append(token)
        weights.append(w)
    return torch.cat(tokens, dim=1), torch.cat(weights, dim=1)


def offset_shares(weights: torch.Tensor) -> dict[int, float]:
    """Share of (row, output step t) by the offset of the largest weight from the mirror
    position S - 1 - t.

    weights (B, T, S) with T = S. Offset 0: the step reads the state of the very
    token it must write; +1: the state one position later.
    """
    if weights.dim() != 3 or weights.shape[1] != weights.shape[2]:
        raise ValueError(
            "weights must be (batch, T, S) with T = S; got shape "
            f"{tuple(weights.shape)}"
        )
    mirror = torch.arange(weights.shape[2] - 1, -1, -1)  # (T,)
    offsets = (weights.argmax(dim=-1) - mirror).flatten()
    values, counts = offsets.unique(return_counts=True)
    return {
        int(v): c.item() / offsets.numel() for v, c in zip(values, counts, strict=True)
    }
