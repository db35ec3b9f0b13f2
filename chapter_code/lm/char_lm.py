"""Character-level recurrent language models: the model, the canonical trainer and two
ways to score.

Tokens are characters, numbered by :class:`Vocab`; tensors are batch-first,
``(B, T)`` for token ids and ``(B, T, V)`` for logits. The model embeds each
character, runs a recurrent cell over the sequence and maps every state to
logits for the next character:

    e_t = E[x_t],   h_t = cell(e_t, h_{t-1}),   z_t = W_y h_t + b_y

*Training* (:func:`fit_next_token`) follows the usual recipe: random windows of
fixed length cut from the training text, a fresh (zero) state for every
window, teacher forcing (the true previous character is the input at every
step), Adam and clipping by global norm. *Scoring* comes in two protocols that
score exactly the same positions of a held-out text:

- :func:`fixed_window_loss` cuts the text into consecutive windows and starts
  each from a fresh state, as in training: no prediction sees more than a
  window of context;
- :func:`streaming_loss` carries the state from one window into the next, so
  a prediction may use everything before it.

Pages: "Recurrent language models" (training, evaluation, gradient reach),
"Generating text" (the models sampled from).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import nn

from chapter_code.core.arguments import positive_int_fields, positive_ints
from chapter_code.core.device import model_device
from chapter_code.lm.perplexity import lm_loss_and_ppl

CELLS = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}


class Vocab:
    """The characters of a training text, numbered in sorted order."""

    def __init__(self, text: str) -> None:
        if not isinstance(text, str) or not text:
            raise ValueError("text must be a non-empty string")
        self.chars = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.chars)}

    def __len__(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> torch.Tensor:
        """Token ids (int64, shape ``(len(text),)``); a character outside the vocabulary
        is named.
        """
        try:
            return torch.tensor([self.index[c] for c in text], dtype=torch.long)
        except KeyError as exc:
            raise ValueError(
                f"character {exc.args[0]!r} is not in the vocabulary of {len(self)} "
                "characters"
            ) from None

    def decode(self, ids: Sequence[int] | torch.Tensor) -> str:
        return "".join(self.chars[int(i)] for i in ids)


class CharLM(nn.Module):
    """Embedding, a recurrent core and a linear read-out of every position: the book's
    one language model over characters.

    ``cell`` names a PyTorch layer (``"rnn"``, ``"lstm"`` or ``"gru"``, with
    ``num_layers`` of them stacked), or builds the core: ``cell(embedding_size,
    hidden_size)`` returns a batch-first module mapping ``(B, T, E)`` to ``((B, T, H),
    state)`` (a scratch LSTM, a residual stack). Either way the weights are drawn in
    one order, embedding, core, read-out, so a seed gives every core the same
    embedding.
    """

    def __init__(
        self,
        vocab_size: int,
        cell: str | Callable[[int, int], nn.Module] = "lstm",
        embedding_size: int = 64,
        hidden_size: int = 256,
        num_layers: int = 1,
    ) -> None:
        super().__init__()
        positive_ints(
            vocab_size=vocab_size,
            embedding_size=embedding_size,
            hidden_size=hidden_size,
            num_layers=num_layers,
        )
        named = isinstance(cell, str)
        if named and cell not in CELLS:
            raise ValueError(
                f"cell must be one of {sorted(CELLS)} or build a core; got {cell!r}"
            )
        if not named and (not callable(cell) or num_layers != 1):
            raise ValueError(
                "cell must be a name or a function (embedding_size, hidden_size) -> "
                "core, which brings its own layers (num_layers 1); got "
                f"{cell!r} with num_layers {num_layers}"
            )
        self.embed = nn.Embedding(vocab_size, embedding_size)
        self.rnn = (
            CELLS[cell](
                embedding_size, hidden_size, num_layers=num_layers, batch_first=True
            )
            if named
            else cell(embedding_size, hidden_size)
        )
        self.cell = cell if named else type(self.rnn).__name__
        self.readout = nn.Linear(hidden_size, vocab_size)

    def forward(
        self, tokens: torch.Tensor, state: object = None
    ) -> tuple[torch.Tensor, object]:
        """Logits ``(B, T, V)`` for the character after each of ``tokens`` ``(B, T)``,
        and the final state.
        """
        if tokens.dim() != 2 or tokens.dtype != torch.long:
            raise ValueError(
                f"tokens must be int64 of shape (B, T); got {tokens.dtype} "
                f"{tuple(tokens.shape)}"
            )
        states, last = self.rnn(self.embed(tokens), state)  # (B, T, H)
        return self.readout(states), last


@dataclass(frozen=True)
class TrainConfig:
    """The next-token recipe: window length, batch, steps, optimiser and clipping."""

    window: int = 128
    batch_size: int = 64
    steps: int = 1000
    lr: float = 2e-3
    clip: float = 1.0
    log_every: int = 50

    def __post_init__(self) -> None:
        positive_int_fields(self, "window", "batch_size", "steps", "log_every")
        if not self.lr > 0 or not self.clip > 0:
            raise ValueError(
                f"lr and clip must be > 0; got lr={self.lr}, clip={self.clip}"
            )


def random_windows(
    ids: torch.Tensor, window: int, batch_size: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """``batch_size`` windows at uniformly drawn starts: inputs ``(B, W)`` and targets
    shifted by one ``(B, W)``.
    """
    if ids.dim() != 1 or ids.numel() < window + 1:
        raise ValueError(
            f"ids must be a 1-D tensor longer than window = {window}; got shape "
            f"{tuple(ids.shape)}"
        )
    ### BEGIN SOLUTION
    # (B,)
    starts = torch.randint(0, ids.numel() - window, (batch_size,), generator=generator)
    rows = starts[:, None] + torch.arange(window + 1)  # (B, W + 1)
    chunk = ids[rows]
    return chunk[:, :-1], chunk[:, 1:]
    ### END SOLUTION


def fit_next_token(
    model: CharLM, ids: torch.Tensor, config: TrainConfig, generator: torch.Generator
) -> list[tuple[int, float]]:
    """Train ``model`` on ``ids`` by next-token prediction; return ``(step, training
    loss)`` every ``log_every`` steps.

    Each step: draw random windows [1], run them from a fresh state [2], score
    every position against the next character [3], clip the gradient's global
    norm [4], and take an Adam step.
    """
    ### BEGIN SOLUTION
    ids = ids.to(model_device(model))  # the batches live where the model does
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    history = []
    model.train()
    for step in range(1, config.steps + 1):
        # (B, W) each
        x, y = random_windows(ids, config.window, config.batch_size, generator)  # [1]
        logits, _ = model(x)  # [2] state None: zeros at every window's start
        loss, _, _ = lm_loss_and_ppl(logits, y)  # [3]
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), config.clip)  # [4]
        opt.step()
        if step % config.log_every == 0 or step == config.steps:
            history.append((step, loss.item()))
    return history
    ### END SOLUTION


def _windows(ids: torch.Tensor, window: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Consecutive windows of a held-out text: inputs and targets ``(N, W)``, the tail
    dropped.
    """
    if ids.dim() != 1 or ids.numel() < window + 1:
        raise ValueError(
            f"ids must be a 1-D tensor longer than window = {window}; got shape "
            f"{tuple(ids.shape)}"
        )
    n = (ids.numel() - 1) // window
    x = ids[: n * window].reshape(n, window)
    y = ids[1 : n * window + 1].reshape(n, window)
    return x, y


@torch.no_grad()
def fixed_window_loss(model: CharLM, ids: torch.Tensor, window: int) -> float:
    """Mean nats per character over consecutive windows of ``ids``, each started from a
    fresh state.
    """
    model.eval()  # [1]
    x, y = _windows(ids.to(model_device(model)), window)  # [2] (N, W)
    # the N windows side by side, as a batch: no state passes between them
    logits, _ = model(x)  # [3]
    return lm_loss_and_ppl(logits, y)[0].item()  # [4]


@torch.no_grad()
def streaming_loss(model: CharLM, ids: torch.Tensor, window: int) -> float:
    """Mean nats per character over the same positions, the state carried from each
    window into the next.
    """
    model.eval()
    x, y = _windows(ids.to(model_device(model)), window)  # (N, W)
    state = None
    total = 0.0
    for i in range(x.shape[0]):  # one window at a time, in order
        logits, state = model(x[i : i + 1], state)  # (1, W, V)
        total += lm_loss_and_ppl(logits, y[i : i + 1])[0].item() * window
    return total / y.numel()


def gradient_reach(
    model: CharLM,
    ids: torch.Tensor,
    length: int,
    chunks: int,
    generator: torch.Generator,
) -> torch.Tensor:
    """Mean norm of d(loss at the last position) / d(embedding at each earlier
    position), by distance.

    ``chunks`` random stretches of ``length + 1`` characters are read from a
    fresh state; entry ``d`` of the result (``d = 0 .. length - 1``) is the
    gradient's norm at the input ``d`` steps before the scored one, averaged
    over the stretches.
    """
    model.eval()
    # (C, L): drawn on the CPU, read on the model's device
    x, y = random_windows(ids.to(model_device(model)), length, chunks, generator)
    emb = model.embed(x).detach().requires_grad_(True)  # (C, L, E)
    states, _ = model.rnn(emb)  # (C, L, H)
    logits = model.readout(states[:, -1])  # (C, V): the last position only
    loss = nn.functional.cross_entropy(logits, y[:, -1], reduction="sum")
    (grad,) = torch.autograd.grad(loss, emb)  # (C, L, E)
    norms = grad.norm(dim=-1).mean(dim=0)  # (L,)
    return norms.flip(0).cpu()  # distance 0 first
