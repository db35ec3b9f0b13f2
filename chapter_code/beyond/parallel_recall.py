"""The input-gated LSTM cell of :mod:`chapter_code.beyond.linear_scan` entered in the
memory test.

The task, the data, the recipe and the accuracy are those of
:mod:`chapter_code.gated.memory_task` (recall the first of ``lag`` tokens, read out
after the last step), reused through its public functions; only the cell
differs: its gates and candidate read x_t alone, so the whole sequence of cell
states is one doubling scan. Seed exercise 8 of the textbook chapter.

Pages: "Beyond the single carried state".
"""

from __future__ import annotations

import time

import torch
from torch import nn

from chapter_code.beyond.linear_scan import InputGatedLSTM
from chapter_code.core.device import resolve_device
from chapter_code.gated.memory_task import RecallConfig, accuracy, make_recall


class InputGatedRecallNet(nn.Module):
    """An input-gated LSTM layer read out once, after the last step: x (B, T, V) ->
    logits (B, V).
    """

    def __init__(self, vocab: int, hidden_size: int, forget_bias: float = 1.0) -> None:
        super().__init__()
        self.rec = InputGatedLSTM(vocab, hidden_size)
        self.readout = nn.Linear(hidden_size, vocab)
        # the forget block is the second of i, f, g, o, as in nn.LSTM
        with torch.no_grad():
            self.rec.blocks.bias[hidden_size : 2 * hidden_size] = forget_bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.readout(self.rec(x)[:, -1])  # (B, V)


def train_input_gated_recall(
    seed: int,
    config: RecallConfig,
    forget_bias: float = 1.0,
    device: torch.device | str | None = None,
) -> dict:
    """Train one input-gated run with the memory test's recipe; test accuracy after each
    epoch, and wall time.

    The data are drawn on the CPU and moved to ``device`` (the build's by default).
    """
    start = time.perf_counter()
    device = resolve_device(device)
    x_train, y_train = make_recall(
        config.n_train, config.lag, config.vocab, config.train_seed
    )
    x_test, y_test = make_recall(
        config.n_test, config.lag, config.vocab, config.test_seed
    )
    x_train, y_train = x_train.to(device), y_train.to(device)
    x_test, y_test = x_test.to(device), y_test.to(device)
    torch.manual_seed(seed)
    net = InputGatedRecallNet(config.vocab, config.hidden_size, forget_bias).to(device)
    stream = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(net.parameters(), lr=config.lr)
    history = []
    for _ in range(config.epochs):
        order = torch.randperm(config.n_train, generator=stream)
        for first in range(0, config.n_train, config.batch_size):
            rows = order[first : first + config.batch_size]
            loss = nn.functional.cross_entropy(net(x_train[rows]), y_train[rows])
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), config.clip)
            opt.step()
        history.append(accuracy(net, x_test, y_test))
    return {
        "accuracy": history[-1],
        "history": history,
        "seconds": time.perf_counter() - start,
    }
