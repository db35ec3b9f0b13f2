"""The memory test: recall the first of many random tokens, for six recurrent
contenders.

A sequence holds ``lag`` tokens drawn uniformly from a small alphabet, one-hot
encoded, batch-first ``(B, T, V)``; the label is the first token and the model
reads out once, after the last step. Chance is ``1 / V``. Every (contender,
seed) pair is an independent run with one random stream of its own: a
``torch.Generator`` seeded with the run's seed draws the initial weights and
then, epoch after epoch, the order of the minibatches. That is the order in
which the sources' single ``torch.manual_seed(seed)`` stream is consumed, so a
run reproduces the sources' run with the same seed, and it gives the same
numbers whether it is trained alone, in this process, or in a worker process
next to other runs.

Pages: "Gated memory: LSTM and GRU" (the grid, the results table, the
forget-gate trace, the learned-initial-state exercise).
The task and recipe follow the memory test of the chapter's sources; the
keep-gate bias follows the forget-gate practice that goes back to Gers et al. (2000).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import nn

from chapter_code.bptt.gradients import grad_at_first_input
from chapter_code.core.arguments import positive_int_fields, positive_ints
from chapter_code.core.device import resolve_device
from chapter_code.gated.gates import lstm_gates, lstm_update, set_gate_bias

CELLS = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}
# the gate whose bias decides how much old state survives
KEEP_GATE = {"lstm": "f", "gru": "z"}


@dataclass(frozen=True)
class Contender:
    """One row of the memory test: a cell and, optionally, its keep-gate bias."""

    label: str
    cell: str  # "rnn", "lstm" or "gru"
    keep_bias: float | None = (
        None  # effective bias of the LSTM forget gate / GRU update gate
    )

    def __post_init__(self) -> None:
        if self.cell not in CELLS:
            raise ValueError(f"cell must be one of {sorted(CELLS)}; got {self.cell!r}")
        if self.keep_bias is not None and self.cell == "rnn":
            raise ValueError(
                "keep_bias needs a gated cell ('lstm' or 'gru'); the vanilla RNN has "
                "no gate"
            )


CONTENDERS: tuple[Contender, ...] = (
    Contender("vanilla RNN", "rnn"),
    Contender("LSTM, default", "lstm"),
    Contender("LSTM, forget bias +1", "lstm", 1.0),
    Contender("GRU, default", "gru"),
    Contender("GRU, keep bias +1", "gru", 1.0),
    Contender("GRU, keep bias +2", "gru", 2.0),
)
SEEDS: tuple[int, ...] = (0, 1, 6050)


@dataclass(frozen=True)
class RecallConfig:
    """The recipe: data sizes, model width, optimiser, and when a run stops."""

    lag: int = 80
    vocab: int = 4
    hidden_size: int = 32
    n_train: int = 2000
    n_test: int = 500
    lr: float = 3e-3
    batch_size: int = 128
    clip: float = 1.0
    epochs: int = (
        80  # every run trains for all of them; its accuracy is read after the last
    )
    solved_at: float = (
        0.9  # a run "solves" the task if its final test accuracy reaches this
    )
    train_seed: int = 1
    test_seed: int = 2

    def __post_init__(self) -> None:
        positive_int_fields(
            self,
            "lag",
            "vocab",
            "hidden_size",
            "n_train",
            "n_test",
            "batch_size",
            "epochs",
        )
        if not self.lr > 0 or not self.clip > 0:
            raise ValueError(
                f"lr and clip must be > 0; got lr={self.lr}, clip={self.clip}"
            )
        if not 0 < self.solved_at <= 1:
            raise ValueError(f"solved_at must be in (0, 1]; got {self.solved_at}")


def make_recall(
    n: int, lag: int, vocab: int, seed: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` sequences of ``lag`` uniform tokens, one-hot (n, lag, vocab), and labels =
    first token (n,).
    """
    positive_ints(n=n, lag=lag, vocab=vocab)
    gen = torch.Generator().manual_seed(seed)
    tokens = torch.randint(0, vocab, (n, lag), generator=gen)  # (N, T)
    return nn.functional.one_hot(tokens, vocab).float(), tokens[:, 0]


class RecallNet(nn.Module):
    """A recurrent layer read out once, at the last step; optionally a learned initial
    state.
    """

    def __init__(
        self, cell: str, vocab: int, hidden_size: int, learn_h0: bool = False
    ) -> None:
        super().__init__()
        if cell not in CELLS:
            raise ValueError(f"cell must be one of {sorted(CELLS)}; got {cell!r}")
        self.cell = cell
        self.rec = CELLS[cell](vocab, hidden_size, batch_first=True)
        self.readout = nn.Linear(hidden_size, vocab)
        self.h0 = nn.Parameter(torch.zeros(hidden_size)) if learn_h0 else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits (B, V) from the state after the last step of x (B, T, V)."""
        if self.h0 is None:
            outputs, _ = self.rec(x)  # (B, T, H)
        else:
            h0 = self.h0.expand(1, x.shape[0], -1).contiguous()  # (1, B, H)
            state = (h0, torch.zeros_like(h0)) if self.cell == "lstm" else h0
            outputs, _ = self.rec(x, state)
        return self.readout(outputs[:, -1])  # read out at the end only


def build_recall_net(
    contender: Contender,
    config: RecallConfig,
    seed: int,
    learn_h0: bool = False,
    generator: torch.Generator | None = None,
) -> RecallNet:
    """A fresh network for one run, initialised from the run's random stream.

    Every weight and bias is drawn uniform in (-1/sqrt(H), 1/sqrt(H)), in the
    order of ``named_parameters()``: PyTorch's default for the recurrent layer
    and for a linear layer with H inputs, drawn in the order PyTorch's own
    constructors draw them. Then the keep-gate bias, if any, is set with
    :func:`set_gate_bias` (which draws nothing). The draws come from
    ``generator`` if given (it is left positioned after them, ready for the
    minibatch order), else from a new generator seeded with ``seed``.
    """
    net = RecallNet(contender.cell, config.vocab, config.hidden_size, learn_h0=learn_h0)
    gen = torch.Generator().manual_seed(seed) if generator is None else generator
    bound = 1.0 / math.sqrt(config.hidden_size)
    with torch.no_grad():
        for name, p in net.named_parameters():
            if name != "h0":
                p.uniform_(-bound, bound, generator=gen)
    if contender.keep_bias is not None:
        set_gate_bias(
            net.rec, contender.cell, KEEP_GATE[contender.cell], contender.keep_bias
        )
    return net


@dataclass
class RecallRun:
    """What one (contender, seed) run produced."""

    label: str
    seed: int
    birth: float  # input-gradient norm at lag `config.lag`, at initialisation
    accuracy: float  # test accuracy after the last epoch: the number the sources report
    epochs: int  # epochs trained (all of config.epochs)
    # test accuracy after each epoch, never used to stop
    history: list[float] = field(default_factory=list)
    state: dict[str, torch.Tensor] = field(default_factory=dict)  # trained weights
    seconds: float = 0.0


def first_epoch_at(history: Sequence[float], threshold: float) -> int | None:
    """The first epoch (counted from 1) whose test accuracy reached ``threshold``, or
    None.
    """
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1]; got {threshold}")
    return next((e for e, acc in enumerate(history, start=1) if acc >= threshold), None)


@torch.no_grad()
def accuracy(net: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    """Fraction of sequences whose first token is the arg max of the logits."""
    return (net(x).argmax(dim=1) == y).float().mean().item()


def train_recall(
    contender: Contender,
    seed: int,
    config: RecallConfig = RecallConfig(),
    learn_h0: bool = False,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> tuple[RecallRun, RecallNet]:
    """Train one run: Adam, clipping by global norm, shuffled minibatches, read-out at
    the end.

    One generator, seeded with ``seed``, draws the initial weights and then each
    epoch's minibatch order, as the sources' ``torch.manual_seed(seed)`` does.
    The run trains for all ``config.epochs`` epochs; the test accuracy after
    each epoch is recorded but never used to stop or to select weights. The
    data are drawn on the CPU and moved to ``device`` (the build's by default),
    so a seed draws the same sequences on every device.
    """
    start = time.perf_counter()
    device = resolve_device(device)
    x_train, y_train = make_recall(
        config.n_train, config.lag, config.vocab, config.train_seed
    )
    x_test, y_test = make_recall(
        config.n_test, config.lag, config.vocab, config.test_seed
    )
    # float64 only for the equivalence tests
    x_train, x_test = x_train.to(device, dtype), x_test.to(device, dtype)
    y_train, y_test = y_train.to(device), y_test.to(device)
    stream = torch.Generator().manual_seed(seed)  # the run's one random stream
    net = build_recall_net(contender, config, seed, learn_h0, stream)  # [1]
    net = net.to(device, dtype)
    # [2]
    birth = grad_at_first_input(net.rec, [config.lag], input_size=config.vocab)[0]
    opt = torch.optim.Adam(net.parameters(), lr=config.lr)
    history: list[float] = []
    for _ in range(config.epochs):
        order = torch.randperm(config.n_train, generator=stream)  # [3]
        for start_row in range(0, config.n_train, config.batch_size):
            rows = order[start_row : start_row + config.batch_size]
            loss = nn.functional.cross_entropy(net(x_train[rows]), y_train[rows])
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), config.clip)  # [4]
            opt.step()
        history.append(accuracy(net, x_test, y_test))  # [5]
    run = RecallRun(
        label=contender.label,
        seed=seed,
        birth=birth,
        accuracy=history[-1],
        epochs=len(history),
        history=history,
        state={k: v.detach().to("cpu", copy=True) for k, v in net.state_dict().items()},
        seconds=time.perf_counter() - start,
    )
    return run, net


def restore(
    run: RecallRun, contender: Contender, config: RecallConfig = RecallConfig()
) -> RecallNet:
    """Rebuild a trained network from a run's saved weights."""
    net = RecallNet(contender.cell, config.vocab, config.hidden_size)
    net.load_state_dict(run.state)
    return net


@torch.no_grad()
def forget_gate_trace(
    lstm: nn.LSTM, x: torch.Tensor
) -> tuple[list[float], torch.Tensor]:
    """Replay a trained one-layer ``nn.LSTM`` by hand on x (B, T, V).

    Returns the mean forget gate at each step (over sequences and units) and the
    hand-computed states (B, T, H), which must equal the module's own output.
    """
    if (
        not isinstance(lstm, nn.LSTM)
        or lstm.num_layers != 1
        or lstm.bidirectional
        or not lstm.batch_first
    ):
        raise ValueError(
            "lstm must be a one-layer, unidirectional, batch-first nn.LSTM"
        )
    w_ih, w_hh = lstm.weight_ih_l0, lstm.weight_hh_l0
    x = x.to(w_ih.device)  # replayed where the LSTM is
    bias = lstm.bias_ih_l0 + lstm.bias_hh_l0
    h = c = x.new_zeros(x.shape[0], lstm.hidden_size)  # (B, H)
    means, states = [], []
    for t in range(x.shape[1]):  # replay step by step
        i, f, g, o = lstm_gates(x[:, t], h, w_ih, w_hh, bias)
        h, c = lstm_update(c, i, f, g, o)
        means.append(f.mean().item())
        states.append(h)
    return means, torch.stack(states, dim=1).cpu()
