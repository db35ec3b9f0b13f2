"""The forget gates of a trained character LSTM, replayed by hand on held-out text.

A trained :class:`~chapter_code.lm.char_lm.CharLM` with an ``nn.LSTM`` layer is
run again, step by step, with the gate equations of
:func:`chapter_code.gated.gates.lstm_gates` and
:func:`chapter_code.gated.gates.lstm_update` on its own weights. The replay
returns every forget-gate value it computed, with the hidden states, so a
caller can check that the replay equals the module before reading the gates.

Along the direct cell-state path a gradient is scaled by the product of the
forget gates, :math:`\\prod_j f_{j,i}`; a unit whose gate stays near one
carries it back almost unchanged, so the summary counts the gate values above
two thresholds as well as their mean.

Pages: "Recurrent language models" (the trained LSTM's gates, beside the
workshop's follow-up measurement). Follows Gers et al. (2000) for the gate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from chapter_code.gated.gates import lstm_gates, lstm_update
from chapter_code.lm.char_lm import CharLM


@dataclass(frozen=True)
class ForgetGates:
    """Every forget-gate value of a replay, ``(B, T, H)``, and the hidden states it
    produced, ``(B, T, H)``.
    """

    values: torch.Tensor
    states: torch.Tensor

    def mean(self) -> float:
        """The mean forget-gate value over every unit, step and window."""
        return self.values.mean().item()

    def share_above(self, threshold: float) -> float:
        """The share of forget-gate values strictly above ``threshold`` (in (0, 1))."""
        if not 0 < threshold < 1:
            raise ValueError(f"threshold must lie in (0, 1); got {threshold!r}")
        return (self.values > threshold).double().mean().item()

    def summary(self, thresholds: Sequence[float] = (0.9, 0.99)) -> dict[str, float]:
        """The mean and the share above each threshold, keyed ``"mean"`` and ``"above
        0.9"``...
        """
        return {
            "mean": self.mean(),
            **{f"above {t:g}": self.share_above(t) for t in thresholds},
        }


@torch.no_grad()
def forget_gates(model: CharLM, tokens: torch.Tensor) -> ForgetGates:
    """Replay ``model``'s LSTM on ``tokens`` ``(B, T)`` from a zero state; collect its
    forget gates.

    Each step computes ``f_t = sigmoid(W_f x_t + U_f h_{t-1} + b_f)`` with the
    two bias vectors summed, as ``nn.LSTM`` does, then ``c_t = f_t c_{t-1} +
    i_t g_t`` and ``h_t = o_t tanh(c_t)``. The replay runs on the model's device;
    the gates and states come back on the CPU.
    """
    if (
        not isinstance(model, CharLM)
        or model.cell != "lstm"
        or model.rnn.num_layers != 1
    ):
        raise ValueError("model must be a one-layer CharLM with cell 'lstm'")
    if tokens.dim() != 2 or tokens.dtype != torch.long:
        raise ValueError(
            f"tokens must be int64 of shape (B, T); got {tokens.dtype} "
            f"{tuple(tokens.shape)}"
        )
    rnn = model.rnn
    bias = rnn.bias_ih_l0 + rnn.bias_hh_l0  # (4H,), blocks i, f, g, o
    x = model.embed(tokens.to(rnn.weight_ih_l0.device))  # (B, T, E)
    batch, hidden = tokens.shape[0], rnn.hidden_size
    h = x.new_zeros(batch, hidden)  # (B, H)
    c = x.new_zeros(batch, hidden)  # (B, H)
    gates, states = [], []
    for t in range(tokens.shape[1]):  # over time; x[:, t] is (B, E)
        # each (B, H)
        i, f, g, o = lstm_gates(x[:, t], h, rnn.weight_ih_l0, rnn.weight_hh_l0, bias)
        h, c = lstm_update(c, i, f, g, o)
        gates.append(f)
        states.append(h)
    # (B, T, H) each
    return ForgetGates(
        values=torch.stack(gates, dim=1).cpu(), states=torch.stack(states, dim=1).cpu()
    )
