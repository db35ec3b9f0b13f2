"""Gated recurrent cells written out by hand: the LSTM and the GRU.

Everything is batch-first, as in the rest of the book: a sequence batch is
``(B, T, F)`` and a state is ``(B, H)``. Weights use PyTorch's layout so they can
be copied in both directions: the LSTM stacks its four blocks in the order
input gate, forget gate, candidate, output gate (``i, f, g, o``); the GRU stacks
reset gate, update gate, candidate (``r, z, n``). Both keep two bias vectors,
``bias_ih`` and ``bias_hh``, which only ever enter as their sum, except in the
GRU's candidate, where PyTorch applies the reset gate after adding ``bias_hn``.

Pages: "Gated memory: LSTM and GRU" (every function here); later chapters reuse
:class:`LSTMScratch` and :func:`set_gate_bias`.
Follows Hochreiter and Schmidhuber (1997) with the forget gate of Gers et al.
(2000), and Cho et al. (2014) for the GRU.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from chapter_code.core.arguments import positive_ints

#: The order in which PyTorch stacks the gate blocks of each cell.
GATE_ORDER: dict[str, tuple[str, ...]] = {
    "lstm": ("i", "f", "g", "o"),
    "gru": ("r", "z", "n"),
}

#: An LSTM's carried state, (h, c), each (B, H).
LSTMState = tuple[torch.Tensor, torch.Tensor]

_MODULE_CELL = {nn.LSTM: "lstm", nn.LSTMCell: "lstm", nn.GRU: "gru", nn.GRUCell: "gru"}


def gate_index(cell: str, gate: str) -> int:
    """Position of ``gate`` in PyTorch's stacked layout for ``cell`` (``'lstm'`` or
    ``'gru'``).
    """
    if cell not in GATE_ORDER:
        raise ValueError(f"cell must be one of {sorted(GATE_ORDER)}; got {cell!r}")
    if gate not in GATE_ORDER[cell]:
        raise ValueError(
            f"gate must be one of {list(GATE_ORDER[cell])} for cell {cell!r}; got "
            f"{gate!r}"
        )
    return GATE_ORDER[cell].index(gate)


def set_gate_bias(module: nn.Module, cell: str, gate: str, value: float) -> None:
    """Make the *effective* bias of one gate equal ``value`` in every unit.

    PyTorch adds ``bias_ih`` and ``bias_hh``; we write ``value`` into the gate's
    slice of ``bias_ih`` and zero the same slice of ``bias_hh``, so their sum is
    ``value`` (filling both would give ``2 * value``). Works on ``nn.LSTM``,
    ``nn.GRU`` (every layer), ``nn.LSTMCell``, ``nn.GRUCell`` and :class:`LSTMScratch`.
    """
    index = gate_index(cell, gate)  # [1]
    expected = (
        "lstm" if isinstance(module, LSTMScratch) else _MODULE_CELL.get(type(module))
    )
    if expected is None:
        raise TypeError(
            "module must be an nn.LSTM, nn.GRU, nn.LSTMCell, nn.GRUCell or "
            f"LSTMScratch; got {type(module).__name__}"
        )
    if expected != cell:
        raise ValueError(
            f"cell={cell!r} does not match the module, which is a "
            f"{type(module).__name__} ({expected!r})"
        )
    pairs = [
        (n, n.replace("bias_ih", "bias_hh"))
        for n, _ in module.named_parameters()
        if n.startswith("bias_ih")
    ]
    if not pairs:
        raise ValueError("module has no bias vectors (built with bias=False)")
    hidden = module.hidden_size
    block = slice(index * hidden, (index + 1) * hidden)  # [2]
    params = dict(module.named_parameters())
    with torch.no_grad():
        for name_ih, name_hh in pairs:
            params[name_ih][block].fill_(value)
            params[name_hh][block].zero_()  # [3]


def effective_gate_bias(module: nn.Module, cell: str, gate: str) -> torch.Tensor:
    """The sum ``bias_ih + bias_hh`` restricted to one gate's block (first layer), shape
    (H,).
    """
    index = gate_index(cell, gate)
    hidden = module.hidden_size
    suffix = "" if isinstance(module, (nn.LSTMCell, nn.GRUCell, LSTMScratch)) else "_l0"
    total = getattr(module, "bias_ih" + suffix) + getattr(module, "bias_hh" + suffix)
    return total[index * hidden : (index + 1) * hidden].detach()


# ----------------------------------------------------------------------------- LSTM


def lstm_update(
    c_prev: torch.Tensor,
    i: torch.Tensor,
    f: torch.Tensor,
    g: torch.Tensor,
    o: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The two update lines of the LSTM: ``c_t = f*c_{t-1} + i*g`` and ``h_t =
    o*tanh(c_t)``.
    """
    c = f * c_prev + i * g  # the additive accumulator, gated
    return o * torch.tanh(c), c


def lstm_gates(
    x_t: torch.Tensor,
    h_prev: torch.Tensor,
    weight_ih: torch.Tensor,
    weight_hh: torch.Tensor,
    bias: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Gates ``i, f, o`` in (0, 1) and candidate ``g`` in (-1, 1), each (B, H), from one
    affine map.
    """
    ### BEGIN SOLUTION
    pre = x_t @ weight_ih.T + h_prev @ weight_hh.T + bias  # (B, 4H), blocks i, f, g, o
    a_i, a_f, a_g, a_o = pre.chunk(4, dim=1)
    return torch.sigmoid(a_i), torch.sigmoid(a_f), torch.tanh(a_g), torch.sigmoid(a_o)
    ### END SOLUTION


def lstm_cell_step(
    x_t: torch.Tensor,
    h_prev: torch.Tensor,
    c_prev: torch.Tensor,
    weight_ih: torch.Tensor,
    weight_hh: torch.Tensor,
    bias: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One LSTM step; ``x_t`` (B, F), ``h_prev`` and ``c_prev`` (B, H); ``bias`` =
    bias_ih + bias_hh.

    Returns ``(h_t, c_t)``, as ``nn.LSTMCell`` does.
    """
    ### BEGIN SOLUTION
    i, f, g, o = lstm_gates(x_t, h_prev, weight_ih, weight_hh, bias)  # [1]
    c = f * c_prev + i * g  # [2]
    h = o * torch.tanh(c)  # [3]
    return h, c
    ### END SOLUTION


class LSTMScratch(nn.Module):
    """A one-layer LSTM with ``nn.LSTM``'s parameter names and layout, looped by hand
    over time.
    """

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        for name, value in [("input_size", input_size), ("hidden_size", hidden_size)]:
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{name} must be a positive int; got {value!r}")
        self.input_size, self.hidden_size = input_size, hidden_size
        self.weight_ih = nn.Parameter(torch.empty(4 * hidden_size, input_size))  # [1]
        self.weight_hh = nn.Parameter(torch.empty(4 * hidden_size, hidden_size))
        self.bias_ih = nn.Parameter(torch.empty(4 * hidden_size))
        self.bias_hh = nn.Parameter(torch.empty(4 * hidden_size))
        bound = 1.0 / math.sqrt(hidden_size)
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)  # PyTorch's default initialisation

    @classmethod
    def from_torch(cls, lstm: nn.LSTM) -> LSTMScratch:
        """Copy the weights of a one-layer, unidirectional ``nn.LSTM`` with biases."""
        if (
            lstm.num_layers != 1
            or lstm.bidirectional
            or not lstm.bias
            or lstm.proj_size
        ):
            raise ValueError(
                "lstm must be a one-layer, unidirectional nn.LSTM with biases and no "
                "projection"
            )
        model = cls(lstm.input_size, lstm.hidden_size).to(lstm.weight_ih_l0.dtype)
        with torch.no_grad():
            for name in ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]:
                getattr(model, name).copy_(getattr(lstm, name + "_l0"))
        return model

    def forward(
        self, x: torch.Tensor, state: LSTMState | None = None
    ) -> tuple[torch.Tensor, LSTMState]:
        """Return (outputs (B, T, H), (h_T, c_T)), each state (B, H); ``state`` defaults
        to zeros.
        """
        if x.dim() != 3 or x.shape[-1] != self.input_size:
            raise ValueError(
                f"x must have shape (batch, time, {self.input_size}); got "
                f"{tuple(x.shape)}"
            )
        batch = x.shape[0]
        if state is None:
            h = c = x.new_zeros(batch, self.hidden_size)  # [2]
        else:
            h, c = state
        bias = self.bias_ih + self.bias_hh  # [3]
        outputs = []
        for t in range(x.shape[1]):  # loop over time; h and c are (B, H)
            h, c = lstm_cell_step(x[:, t], h, c, self.weight_ih, self.weight_hh, bias)
            outputs.append(h)
        return torch.stack(outputs, dim=1), (h, c)  # (B, T, H), ((B, H), (B, H))


# ----------------------------------------------------------------------------- GRU


def gru_step(
    x_t: torch.Tensor,
    h_prev: torch.Tensor,
    weight_ih: torch.Tensor,
    weight_hh: torch.Tensor,
    bias_ih: torch.Tensor,
    bias_hh: torch.Tensor,
    reset_after: bool,
) -> torch.Tensor:
    """One GRU step in PyTorch's weight layout (blocks r, z, n); returns ``h_t`` (B, H).

    ``reset_after=False`` is Cho et al.'s form, ``tanh(W_n x + b_in + U_n (r*h) +
    b_hn)``; ``reset_after=True`` is ``nn.GRU``'s, ``tanh(W_n x + b_in + r*(U_n h +
    b_hn))``.
    """
    gx = x_t @ weight_ih.T + bias_ih  # (B, 3H): input part of r, z, n
    w_r, w_z, w_n = weight_hh.chunk(3, dim=0)  # each (H, H)
    b_r, b_z, b_n = bias_hh.chunk(3)
    gx_r, gx_z, gx_n = gx.chunk(3, dim=1)
    ### BEGIN SOLUTION
    r = torch.sigmoid(gx_r + h_prev @ w_r.T + b_r)  # reset gate
    # update gate: PyTorch's z, the book's u
    u = torch.sigmoid(gx_z + h_prev @ w_z.T + b_z)  # [1]
    if reset_after:
        candidate = torch.tanh(gx_n + r * (h_prev @ w_n.T + b_n))  # [2]
    else:
        candidate = torch.tanh(gx_n + (r * h_prev) @ w_n.T + b_n)  # [3]
    return u * h_prev + (1.0 - u) * candidate  # [4]
    ### END SOLUTION


def gru_loop(
    x: torch.Tensor,
    weight_ih: torch.Tensor,
    weight_hh: torch.Tensor,
    bias_ih: torch.Tensor,
    bias_hh: torch.Tensor,
    reset_after: bool,
    h0: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Run :func:`gru_step` over (B, T, F); return states (B, T, H) and the last state
    (B, H).
    """
    if x.dim() != 3:
        raise ValueError(
            f"x must have shape (batch, time, features); got {tuple(x.shape)}"
        )
    hidden = weight_hh.shape[1]
    h = x.new_zeros(x.shape[0], hidden) if h0 is None else h0
    states = []
    for t in range(x.shape[1]):  # (B, H) state carried along time
        h = gru_step(x[:, t], h, weight_ih, weight_hh, bias_ih, bias_hh, reset_after)
        states.append(h)
    return torch.stack(states, dim=1), h


# ----------------------------------------------------------------------------- demos


def output_gate_demo(
    c0: float = 1.0,
    openings: tuple[float, ...] = (1.0, 0.5, 0.0, 1.0),
    steps_each: int = 5,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One LSTM unit holding ``c0`` (forget gate 1, input gate 0) while the output gate
    steps through ``openings``.

    Returns (output gate, cell state, hidden state) per step, each of length
    ``len(openings) * steps_each``, computed with :func:`lstm_update`.
    """
    positive_ints(steps_each=steps_each)
    if len(openings) == 0 or any(not 0.0 <= o <= 1.0 for o in openings):
        raise ValueError(
            "openings must be a non-empty sequence of values in [0, 1]; got "
            f"{openings!r}"
        )
    one = torch.ones(1)
    c = torch.tensor([c0])
    gates, cells, hiddens = [], [], []
    for opening in openings:
        for _ in range(steps_each):
            h, c = lstm_update(c, i=0 * one, f=one, g=0 * one, o=opening * one)
            gates.append(opening)
            cells.append(c.item())
            hiddens.append(h.item())
    return torch.tensor(gates), torch.tensor(cells), torch.tensor(hiddens)


def forget_power(biases: list[float], steps: int) -> torch.Tensor:
    """``sigmoid(b)**k`` for k = 1..steps: the direct-path factor with a constant forget
    gate; (len(biases), steps).
    """
    positive_ints(steps=steps)
    if len(biases) == 0:
        raise ValueError("biases must hold at least one value")
    f = torch.sigmoid(torch.tensor(biases, dtype=torch.float64)).unsqueeze(1)  # (n, 1)
    k = torch.arange(1, steps + 1, dtype=torch.float64).unsqueeze(0)  # (1, steps)
    return f**k


def direct_path_and_full_jacobian(
    cell: nn.LSTMCell, x: torch.Tensor, c0: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """For one sequence ``x`` (T, F) from ``(h_0 = 0, c_0)``, return for k = 1..T

    the direct-path factor ``prod_{s<=k} f_s`` (T, H), and the diagonal of the
    full Jacobian ``dc_k/dc_0`` (T, H), which also follows the paths through
    ``h`` and the gates. Computed with autograd on :func:`lstm_cell_step`.
    """
    if x.dim() != 2 or x.shape[1] != cell.input_size:
        raise ValueError(
            f"x must have shape (time, {cell.input_size}); got {tuple(x.shape)}"
        )
    hidden = cell.hidden_size
    bias = cell.bias_ih + cell.bias_hh
    c0 = c0.detach().clone().reshape(1, hidden).requires_grad_(True)
    h, c = c0.new_zeros(1, hidden), c0
    products, diagonals = [], []
    running = torch.ones(1, hidden, dtype=c0.dtype)
    for t in range(x.shape[0]):  # one sequence, state (1, H)
        f = lstm_gates(x[t : t + 1], h, cell.weight_ih, cell.weight_hh, bias)[1]
        running = running * f.detach()
        h, c = lstm_cell_step(x[t : t + 1], h, c, cell.weight_ih, cell.weight_hh, bias)
        rows = [
            torch.autograd.grad(c[0, j], c0, retain_graph=True)[0][0, j]
            for j in range(hidden)
        ]
        products.append(running[0])
        diagonals.append(torch.stack(rows))
    return torch.stack(products), torch.stack(diagonals)


def step_jacobian_norms(rec: nn.Module, x: torch.Tensor) -> list[float]:
    """Spectral norm of the one-step state Jacobian along one trajectory of x (T, F),
    from a zero state.

    For ``nn.GRU`` the state is h and the Jacobian is dh_t/dh_{t-1} (H, H); for
    ``nn.LSTM`` the state is (h, c) and the Jacobian is d(h_t, c_t)/d(h_{t-1}, c_{t-1})
    (2H, 2H).
    """
    if (
        not isinstance(rec, (nn.LSTM, nn.GRU))
        or rec.num_layers != 1
        or rec.bidirectional
    ):
        raise ValueError("rec must be a one-layer, unidirectional nn.LSTM or nn.GRU")
    if x.dim() != 2 or x.shape[1] != rec.input_size:
        raise ValueError(
            f"x must have shape (time, {rec.input_size}); got {tuple(x.shape)}"
        )
    names = ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]
    w_ih, w_hh, b_ih, b_hh = (getattr(rec, n + "_l0").detach().double() for n in names)
    hidden, xs = rec.hidden_size, x.double()
    norms = []
    if isinstance(rec, nn.GRU):
        h = torch.zeros(1, hidden, dtype=torch.float64)
        for t in range(xs.shape[0]):  # state (1, H)

            def step(h_prev: torch.Tensor, t: int = t) -> torch.Tensor:
                return gru_step(
                    xs[t : t + 1], h_prev, w_ih, w_hh, b_ih, b_hh, reset_after=True
                )

            jac = torch.autograd.functional.jacobian(step, h).reshape(hidden, hidden)
            norms.append(torch.linalg.matrix_norm(jac, ord=2).item())
            h = step(h)
        return norms
    state = torch.zeros(1, 2 * hidden, dtype=torch.float64)  # (h, c) side by side
    for t in range(xs.shape[0]):

        def lstm_step(s: torch.Tensor, t: int = t) -> torch.Tensor:
            h_new, c_new = lstm_cell_step(
                xs[t : t + 1], s[:, :hidden], s[:, hidden:], w_ih, w_hh, b_ih + b_hh
            )
            return torch.cat([h_new, c_new], dim=1)

        jac = torch.autograd.functional.jacobian(lstm_step, state).reshape(
            2 * hidden, 2 * hidden
        )
        norms.append(torch.linalg.matrix_norm(jac, ord=2).item())
        state = lstm_step(state)
    return norms


class NoForgetLSTM(LSTMScratch):
    """The 1997 cell: :class:`LSTMScratch` with the forget gate fixed at 1, so ``c_t =
    c_{t-1} + i_t * g_t``.
    """

    def forward(
        self, x: torch.Tensor, state: LSTMState | None = None
    ) -> tuple[torch.Tensor, LSTMState]:
        """Return (outputs (B, T, H), (h_T, c_T)); the forget block of the weights is
        ignored.
        """
        if x.dim() != 3 or x.shape[-1] != self.input_size:
            raise ValueError(
                f"x must have shape (batch, time, {self.input_size}); got "
                f"{tuple(x.shape)}"
            )
        h = c = x.new_zeros(x.shape[0], self.hidden_size) if state is None else state[0]
        if state is not None:
            c = state[1]
        bias = self.bias_ih + self.bias_hh
        outputs = []
        for t in range(x.shape[1]):  # (B, H) states
            i, _, g, o = lstm_gates(x[:, t], h, self.weight_ih, self.weight_hh, bias)
            h, c = lstm_update(c, i, torch.ones_like(i), g, o)
            outputs.append(h)
        return torch.stack(outputs, dim=1), (h, c)


def keep_dial(
    h_prev: float, candidate: float, keep: float
) -> tuple[float, float, float]:
    """One GRU unit's blend, h = u h_prev + (1 - u) candidate, split into its parts.

    Returns ``(kept, written, new)``: ``kept = u * h_prev``, ``written = (1 - u) *
    candidate`` and their sum, the new state, which lies on the segment between
    ``h_prev`` and ``candidate`` (the last line of the GRU update with ``u = keep``).
    """
    if not 0.0 <= keep <= 1.0:
        raise ValueError(f"keep must be in [0, 1] (a gate value); got {keep}")
    kept, written = keep * h_prev, (1.0 - keep) * candidate
    return kept, written, kept + written
