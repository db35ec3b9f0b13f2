"""Truncated backpropagation through time: what crosses a cut, and what training with
cuts can learn.

One helper, :func:`gradient_gate`, does all the cutting: it passes a state's
value forward unchanged and multiplies the gradient coming back by a number
``m``. ``m = 1`` is full BPTT, ``m = 0`` a detach (a truncation cut), and a
random ``m = Bernoulli(p) / p`` gives the reweighted random truncation of
Tallec and Ollivier (2017). A zero start state instead of the carried one is a
reset: then neither the value nor the gradient crosses. Tensors are
batch-first, ``(B, T, F)``.

Pages: "Gradients through time".
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from chapter_code.core.arguments import positive_ints
from chapter_code.core.device import model_device
from chapter_code.rnn.recurrence import ElmanRNN, rnn_step


def gradient_gate(h: torch.Tensor, m: float | torch.Tensor) -> torch.Tensor:
    """Return a tensor whose value is ``h`` and whose gradient back into ``h`` is
    multiplied by ``m``.
    """
    frozen = h.detach()
    return frozen + m * (h - frozen)  # value: h; d/dh: m  # [1]


def unroll(
    model: ElmanRNN,
    x: torch.Tensor,
    gates: torch.Tensor | None = None,
    reset_every: int | None = None,
) -> torch.Tensor:
    """Run ``model`` over (B, T, F) from h_0 = 0 and return the states (B, T, H).

    ``gates[t]`` (shape (T - 1,)) multiplies the gradient that crosses from
    step t + 1 back to step t (see :func:`gradient_gate`); ``reset_every = K``
    restarts from a zero state every K steps instead.
    """
    if x.dim() != 3:
        raise ValueError(
            f"x must have shape (batch, time, features); got {tuple(x.shape)}"
        )
    steps = x.shape[1]
    if gates is not None and gates.shape != (steps - 1,):
        raise ValueError(
            f"gates must have shape (time - 1,) = ({steps - 1},); got "
            f"{tuple(gates.shape)}"
        )
    if reset_every is not None and (
        not isinstance(reset_every, int) or reset_every < 1
    ):
        raise ValueError(f"reset_every must be an int >= 1; got {reset_every!r}")
    bias = model.bias_ih + model.bias_hh
    h = x.new_zeros(x.shape[0], model.hidden_size)  # (B, H)
    states = []
    for t in range(steps):  # (B, F) input at each step
        if t > 0 and reset_every is not None and t % reset_every == 0:
            # fixed window: neither value nor gradient crosses
            h = torch.zeros_like(h)  # [2]
        elif t > 0 and gates is not None:
            # the value crosses; the gradient is scaled
            h = gradient_gate(h, gates[t - 1])  # [3]
        h = rnn_step(x[:, t], h, model.weight_ih, model.weight_hh, bias)  # (B, H)
        states.append(h)
    return torch.stack(states, dim=1)  # (B, T, H)


def cut_every(steps: int, chunk: int) -> torch.Tensor:
    """Gates for a fixed horizon: 0 on every boundary after a multiple of ``chunk``
    steps, else 1.
    """
    positive_ints(chunk=chunk)
    gates = torch.ones(steps - 1)
    gates[chunk - 1 :: chunk] = (
        0.0  # boundary t sits between steps t+1 and t+2 (1-based)
    )
    return gates


def random_gates(
    steps: int, keep_prob: float, generator: torch.Generator
) -> torch.Tensor:
    """Independent random cuts: each boundary is kept with probability p and then scaled
    by 1/p.
    """
    if not 0.0 < keep_prob <= 1.0:
        raise ValueError(f"keep_prob must be in (0, 1]; got {keep_prob!r}")
    kept = (torch.rand(steps - 1, generator=generator) < keep_prob).double()
    return kept / keep_prob  # [4]


def reach_fraction_by_enumeration(chunk: int, lag: int) -> float:
    """Share of a chunk's losses whose gradient reaches an input ``lag`` steps back, by
    counting positions.
    """
    positive_ints(chunk=chunk)
    if not isinstance(lag, int) or lag < 0:
        raise ValueError(f"lag must be an int >= 0; got {lag!r}")
    # loss at chunk step j, input at j - lag
    reaching = sum(1 for j in range(1, chunk + 1) if j - lag >= 1)
    return reaching / chunk


def reach_fraction_by_autograd(
    model: ElmanRNN, chunk: int, lag: int, chunks: int = 3
) -> float:
    """The same share measured: for every loss L_t, does dL_t/dx_{t-lag} come out
    nonzero under a fixed horizon?
    """
    # long enough that every counted loss has an input lag steps back
    chunks = max(chunks, lag // chunk + 2)
    steps = chunk * chunks
    x = torch.randn(
        1,
        steps,
        model.input_size,
        generator=torch.Generator().manual_seed(0),
        dtype=torch.float64,
    ).to(model_device(model))  # drawn on the CPU: the same input on every device
    x.requires_grad_(True)
    # (1, T, H)
    states = unroll(model.double(), x, gates=cut_every(steps, chunk).double())
    counted = reaching = 0
    for t in range(steps - chunk, steps):  # the losses of the last chunk
        (grad,) = torch.autograd.grad(states[0, t].sum(), x, retain_graph=True)
        counted += 1
        reaching += bool(grad[0, t - lag].abs().sum() > 0)
    return reaching / counted


def weight_hh_gradient(
    model: ElmanRNN, x: torch.Tensor, gates: torch.Tensor | None = None
) -> torch.Tensor:
    """dL/dW_hh for L = the sum of every state's entries (a loss at every step), under
    the given gates.
    """
    states = unroll(model, x, gates=gates)  # (B, T, H)
    (grad,) = torch.autograd.grad(states.sum(), model.weight_hh)
    return grad


def echo_stream(
    batch: int, length: int, vocab_size: int, delay: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Random tokens (B, T) and targets (B, T): the token ``delay`` steps earlier (-100,
    ignored, where none exists).
    """
    positive_ints(delay=delay)
    tokens = torch.randint(0, vocab_size, (batch, length), generator=generator)
    targets = torch.full_like(tokens, -100)
    targets[:, delay:] = tokens[:, :-delay]
    return tokens, targets


class EchoRNN(nn.Module):
    """One-hot tokens into an ``nn.RNN``, a linear readout at every step; the state is
    passed in and out.
    """

    def __init__(self, vocab_size: int, hidden_size: int) -> None:
        super().__init__()
        self.vocab_size = vocab_size
        self.rnn = nn.RNN(vocab_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, vocab_size)

    def forward(
        self, tokens: torch.Tensor, h: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        x = nn.functional.one_hot(tokens, self.vocab_size).float()  # (B, T, V)
        states, h_last = self.rnn(x, h)  # (B, T, H), (1, B, H)
        return self.out(states), h_last


@dataclass
class ChunkResult:
    """Accuracy at each position of a chunk (list of length K), for a model trained and
    evaluated one way.
    """

    carry: bool
    accuracy_by_position: list[float]


def run_chunks(
    model: EchoRNN,
    tokens: torch.Tensor,
    targets: torch.Tensor,
    chunk: int,
    carry: bool,
    opt: torch.optim.Optimizer | None = None,
) -> list[float]:
    """Walk a (B, T) stream in chunks of ``chunk`` steps, carrying the detached state or
    resetting it.

    With an optimizer, take one step per chunk and return the losses; without,
    return the accuracy at each chunk position, pooled over all chunks.
    """
    if tokens.shape[1] % chunk:
        raise ValueError(
            f"the stream length {tokens.shape[1]} must be a multiple of chunk = {chunk}"
        )
    device = model_device(model)
    tokens, targets = tokens.to(device), targets.to(device)
    h = None
    losses = []
    correct, seen = torch.zeros(chunk, device=device), torch.zeros(chunk, device=device)
    for start in range(0, tokens.shape[1], chunk):
        # (B, K)
        piece, goal = (
            tokens[:, start : start + chunk],
            targets[:, start : start + chunk],
        )
        # reset: a zero state every chunk
        logits, h_last = model(piece, h if carry else None)
        h = h_last.detach()  # the value crosses the cut, the gradient does not
        if opt is not None:
            loss = nn.functional.cross_entropy(
                logits.transpose(1, 2), goal, ignore_index=-100
            )
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        else:
            valid = goal != -100  # (B, K)
            correct += ((logits.argmax(-1) == goal) & valid).sum(0).float()
            seen += valid.sum(0).float()
    return losses if opt is not None else (correct / seen).tolist()
