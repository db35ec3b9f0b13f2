"""Direction and depth from one-layer modules: a bidirectional layer and a stack,
written out.

``nn.LSTM(..., bidirectional=True, num_layers=n)`` is one call; this module
builds the same outputs from one-layer, one-direction modules, so that what
the flags do is visible. A bidirectional layer (Schuster and Paliwal 1997)
runs a second layer over the reversed sequence and joins the two states
position by position, ``h_t = [h_fwd_t ; h_bwd_t]``; the backward states must
be flipped back so that position ``t`` pairs the forward state that has read
``x_1..x_t`` with the backward state that has read ``x_T..x_t``. A stack feeds
every layer the output sequence of the layer below.

Batch-first throughout: ``(B, T, F)`` in, ``(B, T, H)`` or ``(B, T, 2H)`` out.
:func:`one_layer` copies one layer and direction of a multi-layer module
into a one-layer module, so both can be checked against PyTorch's.

Pages: "Depth, direction and scale" (its lab).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn


def _check_one_layer(name: str, module: nn.RNNBase) -> None:
    if (
        not isinstance(module, nn.RNNBase)
        or module.num_layers != 1
        or module.bidirectional
        or not module.batch_first
    ):
        raise ValueError(
            f"{name} must be a one-layer, one-direction, batch_first nn.RNN, nn.GRU "
            "or nn.LSTM"
        )


def bidirectional_states(
    x: torch.Tensor, forward: nn.RNNBase, backward: nn.RNNBase
) -> torch.Tensor:
    """``[h_fwd_t ; h_bwd_t]`` at every position: x (B, T, F) -> (B, T, 2H).

    ``forward`` reads ``x_1..x_T``; ``backward`` reads ``x_T..x_1``, and its
    states are put back in the order of the positions they belong to.
    """
    _check_one_layer("forward", forward)
    _check_one_layer("backward", backward)
    if x.dim() != 3:
        raise ValueError(
            f"x must have shape (batch, time, features); got {tuple(x.shape)}"
        )
    ### BEGIN SOLUTION
    ahead, _ = forward(x)  # (B, T, H): position t has read x_1..x_t
    # (B, T, H) in reversed time: index s has read x_T..x_{T-s}
    behind, _ = backward(x.flip(1))
    # (B, T, 2H): flipped back, position t has read x_T..x_t
    return torch.cat([ahead, behind.flip(1)], dim=-1)
    ### END SOLUTION


def stacked_states(x: torch.Tensor, layers: Sequence[nn.RNNBase]) -> torch.Tensor:
    """The top layer's states (B, T, H) of a stack: layer 1 reads x (B, T, F), every
    later layer the one below.
    """
    if len(layers) == 0:
        raise ValueError("layers must hold at least one module")
    for k, layer in enumerate(layers):
        _check_one_layer(f"layers[{k}]", layer)
    ### BEGIN SOLUTION
    h = x  # (B, T, F), then (B, T, H) after every layer
    for (
        layer
    ) in layers:  # depth: each layer reads the whole output sequence of the one below
        h, _ = layer(h)
    return h
    ### END SOLUTION


def one_layer(module: nn.RNNBase, layer: int, reverse: bool = False) -> nn.RNNBase:
    """A one-layer, batch-first copy of layer ``layer`` (and direction) of ``module``,
    with the same weights.
    """
    if not isinstance(module, nn.RNN | nn.GRU | nn.LSTM):
        raise TypeError(
            f"module must be an nn.RNN, nn.GRU or nn.LSTM; got {type(module).__name__}"
        )
    if not 0 <= layer < module.num_layers:
        raise ValueError(f"layer must be in [0, {module.num_layers - 1}]; got {layer}")
    if reverse and not module.bidirectional:
        raise ValueError("reverse=True needs a bidirectional module")
    suffix = f"_l{layer}" + ("_reverse" if reverse else "")
    size = (
        module.input_size
        if layer == 0
        else module.hidden_size * (2 if module.bidirectional else 1)
    )
    kwargs = {"nonlinearity": module.nonlinearity} if isinstance(module, nn.RNN) else {}
    copy = type(module)(
        size, module.hidden_size, batch_first=True, bias=module.bias, **kwargs
    )
    with torch.no_grad():
        for (
            name,
            param,
        ) in copy.named_parameters():  # weight_ih_l0, ...: the copy's one layer
            param.copy_(getattr(module, name.replace("_l0", suffix)))
    return copy.to(next(module.parameters()).dtype)
