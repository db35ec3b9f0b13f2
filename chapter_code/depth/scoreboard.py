"""A scoreboard of recurrent character models under one fixed recipe: the job of an
experiment sweep.

Eight contenders share everything but the recurrent core: the same slice of
the Shakespeare corpus, the same embedding, read-out, windows, optimiser
(Adam), clipping, number of steps and evaluation (validation perplexity in
fresh-state windows of the training length). The cores (:data:`CONTENDERS`):

- ``rnn``: ``nn.RNN`` (tanh);
- ``lstm-scratch``: Chapter 3's :class:`chapter_code.gated.gates.LSTMScratch`, the
  step looped in Python; its initialisation copies ``nn.LSTM``'s;
- ``lstm-scratch-small``: the same module started as a naive from-scratch
  implementation often is, weights drawn from N(0, 0.01^2) and biases zero
  (every gate starts at one half);
- ``lstm``: ``nn.LSTM``;
- ``lstm-forget1``: ``nn.LSTM`` with the forget gate's effective bias set to ``+1``;
- ``lstm-no-forget``: Chapter 3's :class:`chapter_code.gated.gates.NoForgetLSTM`, the
  1997 cell with no forget gate (``c_t = c_{t-1} + i_t * g_t``), started as
  ``lstm-scratch`` is;
- ``gru``: ``nn.GRU``;
- ``lstm-2layer``: a two-layer ``nn.LSTM`` (no dropout between the layers).

One call of :func:`score_run` trains one contender with one seed and returns
plain numbers, so the sweep ``scoreboard`` (``bookbuild.runs.registry``) stores
one small record per run.

Pages: "Depth, direction and scale" (the scoreboard).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from chapter_code.core.device import resolve_device
from chapter_code.gated.gates import LSTMScratch, NoForgetLSTM, set_gate_bias
from chapter_code.lm.char_lm import (
    CharLM,
    TrainConfig,
    Vocab,
    fit_next_token,
    fixed_window_loss,
)
from chapter_code.lm.char_models import corpus_splits

#: the contenders, in the order the page lists them, with their display names
CONTENDERS: dict[str, str] = {
    "rnn": "vanilla RNN",
    "lstm-scratch": "LSTM, from scratch",
    "lstm-scratch-small": "LSTM, scratch, small init",
    "lstm": "LSTM (nn.LSTM)",
    "lstm-forget1": "LSTM, forget bias +1",
    "lstm-no-forget": "LSTM, no forget gate",
    "gru": "GRU",
    "lstm-2layer": "LSTM, 2 layers",
}

#: standard deviation of the weights of ``lstm-scratch-small``
SMALL_INIT_STD = 0.01


@dataclass(frozen=True)
class ScoreRecipe:
    """The one recipe every contender is trained with."""

    corpus: str = "shakespeare"
    train_chars: int = 200_000
    valid_chars: int = 20_000
    embedding_size: int = 32
    hidden_size: int = 128
    train: TrainConfig = TrainConfig(
        window=64, batch_size=32, steps=600, lr=3e-3, clip=1.0
    )


def build_core(contender: str, input_size: int, hidden_size: int) -> nn.Module:
    """The recurrent core of ``contender``: a batch-first module mapping ``(B, T, E)``
    to ``((B, T, H), state)``.
    """
    if contender not in CONTENDERS:
        raise ValueError(
            f"contender must be one of {list(CONTENDERS)}; got {contender!r}"
        )
    if contender == "rnn":
        return nn.RNN(input_size, hidden_size, batch_first=True)
    if contender == "gru":
        return nn.GRU(input_size, hidden_size, batch_first=True)
    if contender == "lstm-scratch":
        # nn.LSTM's initialisation, drawn in the same order
        return LSTMScratch(input_size, hidden_size)
    if contender == "lstm-no-forget":
        # the same draw as lstm-scratch; the forget block's weights are never used
        return NoForgetLSTM(input_size, hidden_size)
    if contender == "lstm-scratch-small":
        core = LSTMScratch(input_size, hidden_size)
        with torch.no_grad():
            for name, p in core.named_parameters():
                p.normal_(0.0, SMALL_INIT_STD) if name.startswith(
                    "weight"
                ) else p.zero_()
        return core
    core = nn.LSTM(
        input_size,
        hidden_size,
        num_layers=2 if contender == "lstm-2layer" else 1,
        batch_first=True,
    )
    if contender == "lstm-forget1":
        # bias_ih + bias_hh = +1 in the forget block
        set_gate_bias(core, "lstm", "f", 1.0)
    return core


def count(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def score_run(
    seed: int,
    contender: str,
    recipe: ScoreRecipe,
    device: torch.device | str | None = None,
) -> dict[str, Any]:
    """Train ``contender`` with ``recipe`` and ``seed`` on ``device`` (the build's by
    default); return its metrics.

    Metrics: validation nats per character and perplexity, parameters (all,
    and the recurrent core's), seconds per training step, the training curve.
    """
    splits = corpus_splits(recipe.corpus)
    vocab = Vocab(splits.train)
    torch.manual_seed(seed)  # the initial weights
    model = CharLM(
        len(vocab),
        functools.partial(build_core, contender),
        recipe.embedding_size,
        recipe.hidden_size,
    )
    model = model.to(resolve_device(device))
    generator = torch.Generator().manual_seed(seed)  # the windows
    train_ids = vocab.encode(splits.train[: recipe.train_chars])
    start = time.perf_counter()
    history = fit_next_token(model, train_ids, recipe.train, generator)  # type: ignore[arg-type]
    per_step = (time.perf_counter() - start) / recipe.train.steps
    nats = fixed_window_loss(
        model, vocab.encode(splits.valid[: recipe.valid_chars]), recipe.train.window
    )  # type: ignore[arg-type]
    return {
        "valid_nats": nats,
        "valid_perplexity": float(torch.tensor(nats).exp()),
        "parameters": count(model),
        "core_parameters": count(model.rnn),
        "seconds_per_step": per_step,
        "train_curve": [loss for _, loss in history],
    }


#: the Adam learning rates of the chapter's exercise; the recipe's own is among them
LR_GRID = (1e-3, 3e-3, 1e-2, 3e-2)


def doubled_steps(recipe: ScoreRecipe) -> ScoreRecipe:
    """``recipe`` with twice its training steps."""
    return dataclasses.replace(
        recipe, train=dataclasses.replace(recipe.train, steps=2 * recipe.train.steps)
    )


def with_lr(recipe: ScoreRecipe, lr: float) -> ScoreRecipe:
    """``recipe`` with Adam's learning rate ``lr``."""
    return dataclasses.replace(recipe, train=dataclasses.replace(recipe.train, lr=lr))


def resized(
    recipe: ScoreRecipe,
    *,
    hidden_size: int | None = None,
    embedding_size: int | None = None,
) -> ScoreRecipe:
    """``recipe`` with another hidden width or embedding width (the rest unchanged)."""
    return dataclasses.replace(
        recipe,
        hidden_size=recipe.hidden_size if hidden_size is None else hidden_size,
        embedding_size=recipe.embedding_size
        if embedding_size is None
        else embedding_size,
    )


def core_parameters(gates: int, input_size: int, hidden_size: int) -> int:
    """Parameters of a one-layer PyTorch recurrent core with ``gates`` blocks (1 for
    ``nn.RNN``, 3 for ``nn.GRU``, 4 for ``nn.LSTM``): two weight matrices and two
    bias vectors per block.
    """
    return gates * hidden_size * (input_size + hidden_size + 2)


def matched_width(gates: int, target: int, input_size: int) -> int:
    """The hidden width whose core of ``gates`` blocks has the parameter count closest
    to ``target``.
    """
    if gates < 1 or target < 1 or input_size < 1:
        raise ValueError(
            f"gates, target and input_size must be positive; got {gates}, {target}, "
            f"{input_size}"
        )
    widths = range(1, target + 1)
    return min(
        widths, key=lambda h: abs(core_parameters(gates, input_size, h) - target)
    )
