"""Residual connections between stacked LSTM layers, and a small depth study with them.

A plain stack feeds layer ``l`` the hidden-state sequence of layer ``l - 1``
and passes on only what layer ``l`` computes. A residual stack adds each
upper layer's input to its output,

    h^(1)_t = LSTM_1(x)_t,    h^(l)_t = LSTM_l(h^(l-1))_t + h^(l-1)_t   (l >= 2),

so every layer above the first learns a correction to what it reads, and
the output, and its gradient, have an identity path down to the first layer
(He et al. 2016's residual connections, applied between recurrent layers as
in Wu et al. 2016's translation system). The first layer has no skip: its
input is the embedding, of another width. Batch-first throughout:
``(B, T, features)``.

:func:`depth_run` trains one character model on a slice of a corpus with a
plain ``nn.LSTM`` stack or a :class:`ResidualLSTM` of ``num_layers`` layers
and returns plain numbers: validation perplexity, parameters and the time of
every training step after the first (measured in the run, so a page can
report their spread).

Pages: "Depth, direction and scale" (residual stacks; the ``num_layers`` exercise).
"""

from __future__ import annotations

import functools
import statistics
import time
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from chapter_code.core.arguments import positive_ints
from chapter_code.core.device import resolve_device
from chapter_code.lm.char_lm import (
    CharLM,
    TrainConfig,
    Vocab,
    fit_next_token,
    fixed_window_loss,
)
from chapter_code.lm.char_models import corpus_splits

#: an LSTM stack's carried state, ``(h, c)``, each ``(num_layers, B, H)``
LSTMState = tuple[torch.Tensor, torch.Tensor]


def _layers(num_layers: object) -> int:
    positive_ints(num_layers=num_layers)
    return num_layers


class ResidualLSTM(nn.Module):
    """``num_layers`` one-layer ``nn.LSTM`` modules; each layer above the first adds its
    input to its output.
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int) -> None:
        super().__init__()
        self.num_layers = _layers(num_layers)
        self.hidden_size = hidden_size
        self.layers = nn.ModuleList(
            nn.LSTM(
                input_size if layer == 0 else hidden_size, hidden_size, batch_first=True
            )
            for layer in range(self.num_layers)
        )

    def forward(
        self, x: torch.Tensor, state: LSTMState | None = None
    ) -> tuple[torch.Tensor, LSTMState]:
        """Output ``(B, T, H)`` and final ``(h_n, c_n)``, each ``(num_layers, B, H)``,
        as ``nn.LSTM`` returns them.
        """
        if state is not None and state[0].shape[0] != self.num_layers:
            raise ValueError(
                f"state must hold one row per layer ({self.num_layers}); got "
                f"{state[0].shape[0]}"
            )
        finals_h, finals_c = [], []
        seq = x  # (B, T, D) for the first layer, (B, T, H) above it
        for layer, lstm in enumerate(self.layers):
            layer_state = (
                None
                if state is None
                else (state[0][layer : layer + 1], state[1][layer : layer + 1])
            )
            out, (h, c) = lstm(seq, layer_state)  # out (B, T, H); h, c (1, B, H)
            # the skip: every layer above the first
            seq = out + seq if layer > 0 else out  # [1]
            finals_h.append(h)
            finals_c.append(c)
        return seq, (torch.cat(finals_h), torch.cat(finals_c))


def build_stack(
    input_size: int, hidden_size: int, num_layers: int, residual: bool
) -> nn.Module:
    """A batch-first LSTM stack: ``nn.LSTM(num_layers=...)``, or a :class:`ResidualLSTM`
    when ``residual``.
    """
    _layers(num_layers)
    if residual:
        return ResidualLSTM(input_size, hidden_size, num_layers)
    return nn.LSTM(input_size, hidden_size, num_layers=num_layers, batch_first=True)


@dataclass(frozen=True)
class DepthRecipe:
    """The depth study's recipe: smaller and shorter than the scoreboard's, so that four
    depths fit a build.
    """

    corpus: str = "shakespeare"
    train_chars: int = 200_000
    valid_chars: int = 20_000
    embedding_size: int = 32
    hidden_size: int = 64
    train: TrainConfig = TrainConfig(
        window=32, batch_size=32, steps=300, lr=3e-3, clip=1.0, log_every=25
    )


def depth_run(
    seed: int,
    num_layers: int,
    residual: bool,
    recipe: DepthRecipe,
    device: torch.device | str | None = None,
) -> dict[str, Any]:
    """Train a :class:`~chapter_code.lm.char_lm.CharLM` whose core is an LSTM stack
    (:func:`build_stack`) with ``recipe`` and ``seed`` on ``device`` (the build's by
    default); return its metrics.

    Metrics: validation nats per character and perplexity (fresh-state windows
    of the training length), parameters, the training curve, and the seconds of
    each training step from the second on (the time between the starts of
    consecutive forward passes), with their median and quartiles.
    """
    _layers(num_layers)
    splits = corpus_splits(recipe.corpus)
    vocab = Vocab(splits.train)
    torch.manual_seed(seed)  # the initial weights
    stack = functools.partial(build_stack, num_layers=num_layers, residual=residual)
    model = CharLM(len(vocab), stack, recipe.embedding_size, recipe.hidden_size)
    model = model.to(resolve_device(device))
    generator = torch.Generator().manual_seed(seed)  # the windows
    starts: list[float] = []
    hook = model.register_forward_pre_hook(
        lambda module, args: starts.append(time.perf_counter())
    )
    history = fit_next_token(
        model, vocab.encode(splits.train[: recipe.train_chars]), recipe.train, generator
    )  # type: ignore[arg-type]
    hook.remove()
    # one whole step each
    steps = [b - a for a, b in zip(starts[:-1], starts[1:], strict=True)]
    nats = fixed_window_loss(
        model, vocab.encode(splits.valid[: recipe.valid_chars]), recipe.train.window
    )  # type: ignore[arg-type]
    quartiles = (
        statistics.quantiles(steps, n=4, method="inclusive")
        if len(steps) > 1
        else steps * 3
    )
    return {
        "valid_nats": nats,
        "valid_perplexity": float(torch.tensor(nats).exp()),
        "parameters": sum(p.numel() for p in model.parameters()),
        "train_curve": history,
        "step_seconds": steps,
        "step_seconds_quartiles": list(quartiles),
    }
