"""Gradient clipping by norm, and the experiments that show what it does and does not
do.

:func:`clip_gradients` rescales the gradient of a set of parameters, taken as
one long vector, so that its Euclidean norm is at most ``kappa``; it is checked
against :func:`torch.nn.utils.clip_grad_norm_`. The rest of the module holds the
small training runs the chapter uses: plain SGD at a high learning rate with and
without clipping on a synthetic next-token stream, and the share of Adam
updates that clipping rescales on a first-token recall task.

Pages: "Gradients through time". Follows Pascanu et al. (2013).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure
from torch import nn

from chapter_code.core.device import model_device
from chapter_code.core.plotting import COLORS, use_book_style
from chapter_code.rnn.recurrence import NextTokenRNN, per_position_loss


def clip_gradients(params: Iterable[nn.Parameter], kappa: float) -> float:
    """Rescale the gradients in place by ``min(1, kappa / ||g||)``; return ``||g||``
    before clipping.

    ``g`` is every parameter's ``.grad`` flattened and joined into one vector;
    parameters without a gradient are skipped.
    """
    if not (isinstance(kappa, int | float) and math.isfinite(kappa) and kappa > 0):
        raise ValueError(f"kappa must be a finite number > 0; got {kappa!r}")
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return 0.0
    ### BEGIN SOLUTION
    total = torch.sqrt(
        sum(g.detach().double().pow(2).sum() for g in grads)
    ).item()  # [1]
    scale = min(1.0, kappa / (total + 1e-6))  # [2]
    if scale < 1.0:
        for g in grads:
            # one factor for every coordinate: the direction is kept
            g.mul_(scale)  # [3]
    return total
    ### END SOLUTION


FIRST_SUCCESSOR_P = (
    0.8  # in markov_stream, the chance that a token is followed by its first successor
)


def markov_stream(
    n: int, length: int, vocab_size: int, generator: torch.Generator
) -> torch.Tensor:
    """(n, length) tokens from a fixed random Markov chain in which every token has two
    likely successors.

    The chain itself is drawn from ``generator`` first, so one generator fixes
    both the rules and the samples.
    """
    for name, value in [("n", n), ("length", length), ("vocab_size", vocab_size)]:
        if not isinstance(value, int) or value < 2:
            raise ValueError(f"{name} must be an int >= 2; got {value!r}")
    successors = torch.stack(
        [torch.randperm(vocab_size, generator=generator)[:2] for _ in range(vocab_size)]
    )
    tokens = torch.empty(n, length, dtype=torch.long)  # (N, T)
    tokens[:, 0] = torch.randint(0, vocab_size, (n,), generator=generator)
    for t in range(1, length):
        pick = (
            torch.rand(n, generator=generator) < FIRST_SUCCESSOR_P
        ).long()  # 1: first successor
        tokens[:, t] = successors[tokens[:, t - 1], 1 - pick]
    return tokens


@dataclass
class SGDRun:
    """Per-step records of one training run."""

    grad_norms: list[float]  # before any clipping
    losses: list[float]


def train_sgd(
    model: NextTokenRNN, batches: torch.Tensor, lr: float, kappa: float | None
) -> SGDRun:
    """Plain SGD on the mean next-token loss, one step per batch in ``batches`` (S, B,
    T); clip if ``kappa``. The batches are moved to the model's device.
    """
    if batches.dim() != 3:
        raise ValueError(
            f"batches must be (steps, batch, time); got {tuple(batches.shape)}"
        )
    if not lr > 0:
        raise ValueError(f"lr must be > 0; got {lr}")
    batches = batches.to(model_device(model))
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    run = SGDRun([], [])
    for tokens in batches:  # (B, T)
        loss = per_position_loss(model, tokens).mean()
        opt.zero_grad()
        loss.backward()
        if kappa is None:
            norm = torch.sqrt(
                sum(
                    p.grad.double().pow(2).sum()
                    for p in model.parameters()
                    if p.grad is not None
                )
            )
            run.grad_norms.append(norm.item())
        else:
            run.grad_norms.append(clip_gradients(model.parameters(), kappa))
        opt.step()
        run.losses.append(loss.item())
    return run


def plot_clipping_runs(runs: dict[str, SGDRun], uniform_loss: float) -> Figure:
    """Gradient norm and loss per step (both on log axes), one line per run; a grey line
    marks the uniform guess.

    The loss axis is logarithmic because the runs end an order of magnitude
    apart: on a linear axis the clipped run and the uniform guess would share
    the bottom few pixels.
    """
    use_book_style()
    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(6.2, 5.4), sharex=True, layout="constrained"
    )
    colors = [COLORS["rnn"], COLORS["other"]]
    for (label, run), color in zip(runs.items(), colors, strict=False):
        top.semilogy(run.grad_norms, color=color, label=label, lw=1.4)
        bottom.semilogy(run.losses, color=color, label=label, lw=1.4)
    bottom.axhline(
        uniform_loss, color=COLORS["bound"], ls="--", lw=1.4, label="uniform guess"
    )
    top.set_ylabel("gradient norm\n(before clipping)")
    bottom.set_ylabel("training loss\n(nats, log axis)")
    bottom.set_xlabel("SGD step")
    fig.legend(
        *bottom.get_legend_handles_labels(),
        loc="outside upper center",
        ncol=3,
        handlelength=2.0,
    )
    return fig


def recall_first_data(
    n: int, length: int, vocab_size: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """One-hot random sequences (n, length, V) and their labels (n,): the first
    token.
    """
    tokens = torch.randint(0, vocab_size, (n, length), generator=generator)  # (N, T)
    return nn.functional.one_hot(tokens, vocab_size).float(), tokens[:, 0]


class LastStepClassifier(nn.Module):
    """An ``nn.RNN`` or ``nn.LSTM`` read out once, at the last step; the LSTM's forget
    bias can start at +1.
    """

    def __init__(
        self, cell: str, input_size: int, hidden_size: int, classes: int
    ) -> None:
        super().__init__()
        if cell not in ("rnn", "lstm"):
            raise ValueError(f"cell must be 'rnn' or 'lstm'; got {cell!r}")
        self.rec = (nn.RNN if cell == "rnn" else nn.LSTM)(
            input_size, hidden_size, batch_first=True
        )
        if cell == "lstm":
            # PyTorch sums its two bias vectors: set one slice to 1, the other to 0
            with torch.no_grad():
                self.rec.bias_ih_l0[hidden_size : 2 * hidden_size].fill_(1.0)
                self.rec.bias_hh_l0[hidden_size : 2 * hidden_size].zero_()
        self.out = nn.Linear(hidden_size, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outputs, _ = self.rec(x)  # (B, T, H)
        return self.out(outputs[:, -1])


def clipped_share(
    model: LastStepClassifier,
    x: torch.Tensor,
    y: torch.Tensor,
    steps: int,
    kappa: float,
    generator: torch.Generator,
) -> tuple[float, float]:
    """Train with Adam (lr 3e-3, batches of 64) and clipping at ``kappa``; return (share
    of steps clipped, accuracy). The data are moved to the model's device.
    """
    x, y = x.to(model_device(model)), y.to(model_device(model))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    clipped = 0
    for _ in range(steps):
        rows = torch.randint(0, x.shape[0], (64,), generator=generator)
        loss = nn.functional.cross_entropy(model(x[rows]), y[rows])
        opt.zero_grad()
        loss.backward()
        clipped += clip_gradients(model.parameters(), kappa) > kappa
        opt.step()
    with torch.no_grad():
        accuracy = (model(x).argmax(dim=1) == y).float().mean().item()
    return clipped / steps, accuracy
