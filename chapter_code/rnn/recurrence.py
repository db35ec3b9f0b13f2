"""The vanilla (Elman) recurrence, written out by hand.

One rule, ``h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)``, applied at every
step of a batch-first sequence: tensors are ``(B, T, F)`` for batch, time and
features throughout the book. The parameter names and layout follow
:class:`torch.nn.RNN` (``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``)
so weights can be copied in both directions and the two compared.

Pages: "Recurrence" (the step, the loop, padding with a mask, parameter counts,
the learned initial state); later chapters reuse :class:`ElmanRNN`.
Follows Elman (1990); the masking convention is the one used by packed
sequences in PyTorch: a padded step leaves the state unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn

from chapter_code.core.device import model_device


def _check_positive(name: str, value: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name} must be a positive int; got {value!r}")


def check_mask(mask: torch.Tensor, batch: int, steps: int) -> torch.Tensor:
    """Validate a padding mask of shape (B, T) holding only 0 and 1; return it as
    float.
    """
    if not isinstance(mask, torch.Tensor):
        raise TypeError(
            f"mask must be a torch.Tensor of shape ({batch}, {steps}); got "
            f"{type(mask).__name__}"
        )
    if mask.shape != (batch, steps):
        raise ValueError(
            f"mask must have shape (batch, time) = ({batch}, {steps}); got "
            f"{tuple(mask.shape)}"
        )
    if mask.dtype not in (
        torch.bool,
        torch.uint8,
        torch.int32,
        torch.int64,
        torch.float32,
        torch.float64,
    ):
        raise TypeError(
            f"mask must be bool, integer or float with values in {{0, 1}}; got dtype "
            f"{mask.dtype}"
        )
    if mask.dtype != torch.bool and not bool(((mask == 0) | (mask == 1)).all()):
        raise ValueError("mask must hold only 0 (padding) and 1 (real step)")
    return mask.float()


def rnn_step(
    x_t: torch.Tensor,
    h_prev: torch.Tensor,
    weight_ih: torch.Tensor,
    weight_hh: torch.Tensor,
    bias: torch.Tensor,
) -> torch.Tensor:
    """One vanilla RNN step: h_t = tanh(x_t W_ih^T + h_{t-1} W_hh^T + b).

    x_t is (B, F), h_prev is (B, H); bias is b_ih + b_hh.
    """
    ### BEGIN SOLUTION
    return torch.tanh(x_t @ weight_ih.T + h_prev @ weight_hh.T + bias)  # (B, H)
    ### END SOLUTION


def check_loop_inputs(
    x: torch.Tensor,
    weight_ih: torch.Tensor,
    weight_hh: torch.Tensor,
    h0: torch.Tensor | None,
    mask: torch.Tensor | None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Validate the shapes for :func:`rnn_loop`; return the start state and the mask as
    (B, T) floats.
    """
    if x.dim() != 3:
        raise ValueError(
            f"x must have shape (batch, time, features); got {tuple(x.shape)}"
        )
    batch, steps, features = x.shape
    hidden = weight_hh.shape[0]
    if weight_ih.shape != (hidden, features):
        raise ValueError(
            f"weight_ih must have shape (hidden, features) = ({hidden}, {features}); "
            f"got {tuple(weight_ih.shape)}"
        )
    if h0 is None:
        h0 = x.new_zeros(batch, hidden)
    elif h0.shape != (batch, hidden):
        raise ValueError(
            f"h0 must have shape (batch, hidden) = ({batch}, {hidden}); got "
            f"{tuple(h0.shape)}"
        )
    m = None if mask is None else check_mask(mask, batch, steps).to(x.dtype)
    return h0, m


def rnn_loop(
    x: torch.Tensor,
    weight_ih: torch.Tensor,
    weight_hh: torch.Tensor,
    bias: torch.Tensor,
    h0: torch.Tensor | None = None,
    mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Run rnn_step over x (B, T, F); return every state (B, T, H) and the last (B, H).

    Where mask (B, T) is 0, the step keeps the previous state.
    """
    h, m = check_loop_inputs(x, weight_ih, weight_hh, h0, mask)  # [1]
    ### BEGIN SOLUTION
    states = []
    for t in range(x.shape[1]):  # over time: h_t needs h_{t-1}  # [2]
        h_new = rnn_step(x[:, t], h, weight_ih, weight_hh, bias)  # (B, H)
        if m is not None:
            keep = m[:, t : t + 1]  # (B, 1)
            h_new = keep * h_new + (1.0 - keep) * h  # [3]
        h = h_new
        states.append(h)
    return torch.stack(states, dim=1), h  # (B, T, H), (B, H)
    ### END SOLUTION


class ElmanRNN(nn.Module):
    """A one-layer vanilla RNN with :class:`torch.nn.RNN`'s parameters, batch-first,
    looped by hand.
    """

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        _check_positive("input_size", input_size)
        _check_positive("hidden_size", hidden_size)
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.weight_ih = nn.Parameter(torch.empty(hidden_size, input_size))
        self.weight_hh = nn.Parameter(torch.empty(hidden_size, hidden_size))
        self.bias_ih = nn.Parameter(torch.empty(hidden_size))
        self.bias_hh = nn.Parameter(torch.empty(hidden_size))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default: every entry uniform in (-1/sqrt(H), 1/sqrt(H))."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    @classmethod
    def from_torch(cls, rnn: nn.RNN) -> ElmanRNN:
        """Copy the weights of a one-layer, unidirectional, tanh
        :class:`torch.nn.RNN`.
        """
        if (
            rnn.num_layers != 1
            or rnn.bidirectional
            or rnn.nonlinearity != "tanh"
            or not rnn.bias
        ):
            raise ValueError(
                "rnn must be a one-layer, unidirectional nn.RNN with tanh and biases"
            )
        model = cls(rnn.input_size, rnn.hidden_size)
        with torch.no_grad():
            model.weight_ih.copy_(rnn.weight_ih_l0)
            model.weight_hh.copy_(rnn.weight_hh_l0)
            model.bias_ih.copy_(rnn.bias_ih_l0)
            model.bias_hh.copy_(rnn.bias_hh_l0)
        return model.to(rnn.weight_ih_l0.device, rnn.weight_ih_l0.dtype)

    def forward(
        self,
        x: torch.Tensor,
        h0: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Return (states (B, T, H), last state (B, H)); ``mask`` is (B, T), 0 on
        padding.
        """
        if x.dim() != 3 or x.shape[-1] != self.input_size:
            raise ValueError(
                f"x must have shape (batch, time, {self.input_size}); got "
                f"{tuple(x.shape)}"
            )
        bias = self.bias_ih + self.bias_hh
        return rnn_loop(x, self.weight_ih, self.weight_hh, bias, h0=h0, mask=mask)


def pad_batch(sequences: Sequence[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack (T_i, F) sequences into a zero-padded (B, T_max, F) batch and its (B,
    T_max) mask.
    """
    if len(sequences) == 0:
        raise ValueError("sequences must hold at least one (time, features) tensor")
    features = sequences[0].shape[-1]
    for i, s in enumerate(sequences):
        if s.dim() != 2 or s.shape[0] == 0 or s.shape[1] != features:
            raise ValueError(
                f"sequences[{i}] must have shape (time >= 1, {features}); got "
                f"{tuple(s.shape)}"
            )
    ### BEGIN SOLUTION
    longest = max(s.shape[0] for s in sequences)
    batch = sequences[0].new_zeros(len(sequences), longest, features)  # (B, T, F)
    mask = torch.zeros(len(sequences), longest, dtype=torch.bool)  # (B, T)
    for i, s in enumerate(sequences):
        batch[i, : s.shape[0]] = s
        mask[i, : s.shape[0]] = True
    return batch, mask
    ### END SOLUTION


def window_mlp_parameters(
    window: int, features: int, hidden_size: int, outputs: int
) -> int:
    """Parameters of a one-hidden-layer MLP reading the last ``window`` inputs."""
    for name, value in [
        ("window", window),
        ("features", features),
        ("hidden_size", hidden_size),
        ("outputs", outputs),
    ]:
        _check_positive(name, value)
    return (window * features + 1) * hidden_size + (hidden_size + 1) * outputs


def rnn_parameters(features: int, hidden_size: int, outputs: int) -> int:
    """Parameters of a vanilla RNN with a linear readout (PyTorch layout: two bias
    vectors).
    """
    for name, value in [
        ("features", features),
        ("hidden_size", hidden_size),
        ("outputs", outputs),
    ]:
        _check_positive(name, value)
    recurrent = hidden_size * (features + hidden_size) + 2 * hidden_size
    return recurrent + (hidden_size + 1) * outputs


class NextTokenRNN(nn.Module):
    """A vanilla RNN that predicts token t+1 from tokens 1..t, with an optional learned
    initial state.

    The prediction for the *first* token is read out from ``h_0`` itself, so a
    learned ``h_0`` gives the model a start-of-sequence belief that a zero start
    state cannot express beyond the readout bias every step shares.
    """

    def __init__(self, vocab_size: int, hidden_size: int, learn_h0: bool) -> None:
        super().__init__()
        _check_positive("vocab_size", vocab_size)
        _check_positive("hidden_size", hidden_size)
        self.vocab_size = vocab_size
        self.rnn = nn.RNN(vocab_size, hidden_size, batch_first=True)
        self.readout = nn.Linear(hidden_size, vocab_size)
        self.h0 = nn.Parameter(torch.zeros(hidden_size), requires_grad=learn_h0)  # [4]

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits (B, T, V): position t predicts ``tokens[:, t]`` from ``tokens[:,
        :t]``.
        """
        if tokens.dim() != 2:
            raise ValueError(
                f"tokens must have shape (batch, time); got {tuple(tokens.shape)}"
            )
        batch = tokens.shape[0]
        x = nn.functional.one_hot(
            tokens[:, :-1], self.vocab_size
        ).float()  # (B, T-1, V)
        h0 = self.h0.expand(batch, -1)  # (B, H)
        states, _ = self.rnn(x, h0.unsqueeze(0).contiguous())  # (B, T-1, H)
        all_states = torch.cat([h0.unsqueeze(1), states], dim=1)  # (B, T, H)
        return self.readout(all_states)


def fixed_start_sequences(
    n: int, length: int, vocab_size: int, start_token: int, generator: torch.Generator
) -> torch.Tensor:
    """(n, length) token ids: the first is always ``start_token``, the rest uniform over
    the vocabulary.
    """
    for name, value in [("n", n), ("length", length), ("vocab_size", vocab_size)]:
        _check_positive(name, value)
    if not 0 <= start_token < vocab_size:
        raise ValueError(
            f"start_token must be in [0, {vocab_size - 1}]; got {start_token}"
        )
    tokens = torch.randint(0, vocab_size, (n, length), generator=generator)  # (N, T)
    tokens[:, 0] = start_token
    return tokens


def per_position_loss(model: NextTokenRNN, tokens: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy in nats at each position, shape (T,), on the model's
    device.
    """
    tokens = tokens.to(model_device(model))
    logits = model(tokens)  # (B, T, V)
    # (B, T)
    losses = nn.functional.cross_entropy(
        logits.transpose(1, 2), tokens, reduction="none"
    )
    return losses.mean(dim=0)


def train_next_token(
    model: NextTokenRNN,
    tokens: torch.Tensor,
    steps: int,
    lr: float,
    batch_size: int,
    generator: torch.Generator,
) -> list[float]:
    """Adam on the mean next-token loss; return the loss of every step.

    The minibatch rows are drawn on the CPU from ``generator`` and the batches
    moved to the model's device.
    """
    _check_positive("steps", steps)
    _check_positive("batch_size", batch_size)
    if not lr > 0:
        raise ValueError(f"lr must be > 0; got {lr}")
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=lr)
    history = []
    for _ in range(steps):
        rows = torch.randint(0, tokens.shape[0], (batch_size,), generator=generator)
        loss = per_position_loss(model, tokens[rows]).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        history.append(loss.item())
    return history
