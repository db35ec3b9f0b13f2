"""Gates outside recurrence: the gated linear unit, its SwiGLU variant, and the highway
layer.

Each multiplies one branch of a layer by a second branch squashed into a
gate, the move the LSTM makes along time, made here along depth or across
channels.

- GLU (Dauphin et al. 2017): (x W + b) * sigmoid(x V + c).
- SwiGLU (Shazeer 2020): SiLU(x W) * (x V), then a projection back, as in a transformer
  MLP.
- Highway (Srivastava et al. 2015): y = T(x) * H(x) + (1 - T(x)) * x with a transform
  gate T.

Batch-first; the last axis is the features. Pages: "Beyond the single carried state".
"""

from __future__ import annotations

import torch
from torch import nn

from chapter_code.core.arguments import positive_ints


class GLU(nn.Module):
    """Gated linear unit: (x W + b) * sigmoid(x V + c); (..., F) -> (..., H)."""

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        positive_ints(in_features=in_features, out_features=out_features)
        # value and gate blocks in one map
        self.both = nn.Linear(in_features, 2 * out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        value, gate = self.both(x).chunk(2, dim=-1)  # two (..., H)
        return value * torch.sigmoid(gate)


class SwiGLU(nn.Module):
    """The SwiGLU feed-forward block: (SiLU(x W) * (x V)) U, without biases; (..., F) ->
    (..., F).
    """

    def __init__(self, features: int, hidden: int) -> None:
        super().__init__()
        positive_ints(features=features, hidden=hidden)
        self.gate = nn.Linear(features, hidden, bias=False)
        self.value = nn.Linear(features, hidden, bias=False)
        self.out = nn.Linear(hidden, features, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(nn.functional.silu(self.gate(x)) * self.value(x))


class Highway(nn.Module):
    """Highway layer: T(x) * relu(x W_H + b_H) + (1 - T(x)) * x, with T(x) = sigmoid(x
    W_T + b_T).
    """

    def __init__(self, features: int, gate_bias: float = -1.0) -> None:
        super().__init__()
        positive_ints(features=features)
        self.transform = nn.Linear(features, features)
        self.gate = nn.Linear(features, features)
        with torch.no_grad():
            # a negative bias starts the layer close to the identity
            self.gate.bias.fill_(gate_bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = torch.sigmoid(self.gate(x))
        return t * torch.relu(self.transform(x)) + (1 - t) * x
