"""A recurrence that runs in parallel: the linear cell update and a doubling scan.

When a cell's gates and candidate read only the current input, its update is
linear in the previous state,

    c_t = a_t * c_{t-1} + b_t        (elementwise; a_t, b_t known before the loop),

and one step is the pair (a_t, b_t). Two steps compose into one pair,
(a_1, b_1) then (a_2, b_2) = (a_1 a_2, a_2 b_1 + b_2), and this composition is
associative, so every prefix can be computed by a scan. :func:`scan_linear`
is the doubling scan of Hillis and Steele (1986): in round k every position
combines with the one 2^k places before it, and after ceil(log2 T) rounds each
position holds the composition of all steps up to it. It does O(T log T) work
against the loop's O(T), but its critical path is log2 T rounds, not T steps.

Also here: :class:`MinGRU`, the minimal GRU of Feng et al. (2024), whose gate
and candidate read only x_t, run either as the loop or as the scan; and
:class:`InputGatedLSTM`, the LSTM with every gate and the candidate computed
from x_t alone (seed exercise 8 of the textbook chapter; Bradbury et al. 2017
and Lei et al. 2018 for the same idea in QRNN and SRU).

Tensors are batch-first: (B, T, H).

Pages: "Beyond the single carried state".
"""

from __future__ import annotations

import math

import torch
from torch import nn

from chapter_code.core.arguments import positive_ints


def combine(
    first: tuple[torch.Tensor, torch.Tensor], second: tuple[torch.Tensor, torch.Tensor]
) -> tuple[torch.Tensor, torch.Tensor]:
    """The one pair that does what applying ``first`` and then ``second`` does."""
    ### BEGIN SOLUTION
    # (a1, b1) takes c to a1 c + b1; (a2, b2) takes that to a2 a1 c + a2 b1 + b2
    (a1, b1), (a2, b2) = first, second
    return a1 * a2, a2 * b1 + b2
    ### END SOLUTION


def _check_pairs(a: torch.Tensor, b: torch.Tensor, c0: torch.Tensor | None) -> None:
    if a.dim() != 3:
        raise ValueError(
            "a must be (batch, time, features), 3 dimensions; got shape "
            f"{tuple(a.shape)}"
        )
    if a.shape != b.shape:
        raise ValueError(
            f"a and b must have the same shape; got {tuple(a.shape)} and "
            f"{tuple(b.shape)}"
        )
    if a.shape[1] < 1:
        raise ValueError(
            f"the time axis (dim 1) must have length >= 1; got {a.shape[1]}"
        )
    if c0 is not None and c0.shape != (a.shape[0], a.shape[2]):
        raise ValueError(
            f"c0 must be (batch, features) = {(a.shape[0], a.shape[2])}; got "
            f"{tuple(c0.shape)}"
        )


def loop_linear(
    a: torch.Tensor, b: torch.Tensor, c0: torch.Tensor | None = None
) -> torch.Tensor:
    """Every c_t of c_t = a_t * c_{t-1} + b_t, one step at a time; a, b (B, T, H) -> c
    (B, T, H).

    ``c0`` (B, H) is the state before the first step; zero if not given.
    """
    _check_pairs(a, b, c0)
    ### BEGIN SOLUTION
    c = torch.zeros_like(b[:, 0]) if c0 is None else c0  # (B, H)
    states = []
    for t in range(a.shape[1]):  # T sequential steps: the critical path
        c = a[:, t] * c + b[:, t]  # (B, H)
        states.append(c)
    return torch.stack(states, dim=1)  # (B, T, H)
    ### END SOLUTION


def scan_rounds(length: int) -> int:
    """Rounds the doubling scan needs for ``length`` steps: ceil(log2 length) (0 for one
    step).
    """
    positive_ints(length=length)
    return math.ceil(math.log2(length))


def scan_linear(
    a: torch.Tensor, b: torch.Tensor, c0: torch.Tensor | None = None
) -> torch.Tensor:
    """Every c_t of c_t = a_t * c_{t-1} + b_t by a doubling (Hillis-Steele) scan; a, b
    (B, T, H) -> c (B, T, H).

    Same contract as :func:`loop_linear`. Differentiable: written without
    in-place updates, so autograd runs back through the rounds.
    """
    _check_pairs(a, b, c0)
    ### BEGIN SOLUTION
    # fold the initial state into the first step: c_1 = a_1 c0 + b_1
    if c0 is not None:  # [1]
        b = torch.cat([(a[:, 0] * c0 + b[:, 0]).unsqueeze(1), b[:, 1:]], dim=1)
    length, offset = a.shape[1], 1
    while offset < length:  # [2] ceil(log2 T) rounds
        # [3] position t takes in the pair ending at t - offset: (A, B)_{t-offset} then
        # (A, B)_t
        # (B, T-offset, H)
        a_new, b_new = combine(
            (a[:, :-offset], b[:, :-offset]), (a[:, offset:], b[:, offset:])
        )
        # (B, T, H); the first `offset` are already complete
        a = torch.cat([a[:, :offset], a_new], dim=1)
        b = torch.cat([b[:, :offset], b_new], dim=1)
        offset *= 2
    return b  # [4] with c_0 folded in, the b of each prefix is the state itself
    ### END SOLUTION


class MinGRU(nn.Module):
    """The minimal GRU (Feng et al. 2024): gate and candidate from x_t only, so h_t is a
    linear recurrence.

    z_t = sigmoid(W_z x_t + b_z),  g_t = W_h x_t + b_h,  h_t = (1 - z_t) * h_{t-1} + z_t
    * g_t.
    """

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        positive_ints(input_size=input_size, hidden_size=hidden_size)
        self.gate = nn.Linear(input_size, hidden_size)
        self.candidate = nn.Linear(input_size, hidden_size)

    def pairs(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(a_t, b_t) = (1 - z_t, z_t * g_t) for every step at once; x (B, T, F) -> two
        (B, T, H).
        """
        z = torch.sigmoid(self.gate(x))  # (B, T, H), no h_{t-1} anywhere
        return 1 - z, z * self.candidate(x)

    def forward(
        self, x: torch.Tensor, h0: torch.Tensor | None = None, parallel: bool = True
    ) -> torch.Tensor:
        """Every h_t (B, T, H) from x (B, T, F): by the scan if ``parallel``, else by
        the loop.
        """
        a, b = self.pairs(x)
        return scan_linear(a, b, h0) if parallel else loop_linear(a, b, h0)


class InputGatedLSTM(nn.Module):
    """The LSTM with gates and candidate read from x_t alone; the cell is a linear
    recurrence.

    i, f, o = sigmoid(W x_t + b), g = tanh(W_g x_t + b_g);  c_t = f_t * c_{t-1} + i_t *
    g_t;  h_t = o_t * tanh(c_t). The blocks are stacked in nn.LSTM's order i, f, g, o.
    """

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        positive_ints(input_size=input_size, hidden_size=hidden_size)
        self.hidden_size = hidden_size
        self.blocks = nn.Linear(input_size, 4 * hidden_size)  # (4H, F): i, f, g, o

    def forward(self, x: torch.Tensor, parallel: bool = True) -> torch.Tensor:
        """Every h_t (B, T, H) from x (B, T, F), starting from c_0 = 0."""
        ### BEGIN SOLUTION
        # four (B, T, H), for all steps at once
        i, f, g, o = self.blocks(x).chunk(4, dim=-1)
        a, b = torch.sigmoid(f), torch.sigmoid(i) * torch.tanh(g)
        c = scan_linear(a, b) if parallel else loop_linear(a, b)  # (B, T, H)
        return torch.sigmoid(o) * torch.tanh(c)
        ### END SOLUTION
