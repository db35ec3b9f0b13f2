"""Tests for beyond.gated_layers: GLU against torch's glu, SwiGLU by its formula, the
highway's two limits."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from chapter_code.beyond.gated_layers import GLU, Highway, SwiGLU
from chapter_code.core import runtime


@pytest.fixture(autouse=True)
def _seeded() -> None:
    runtime.seed_everything(77)


def test_glu_matches_torch_glu() -> None:
    layer = GLU(5, 3).double()
    x = torch.randn(4, 7, 5, dtype=torch.float64)
    torch.testing.assert_close(layer(x), nn.functional.glu(layer.both(x), dim=-1))


def test_swiglu_formula() -> None:
    block = SwiGLU(6, 10).double()
    x = torch.randn(3, 6, dtype=torch.float64)
    a, v = x @ block.gate.weight.T, x @ block.value.weight.T
    expected = (a * torch.sigmoid(a) * v) @ block.out.weight.T
    torch.testing.assert_close(block(x), expected)


def test_highway_limits() -> None:
    layer = Highway(4).double()
    x = torch.randn(5, 4, dtype=torch.float64)
    with torch.no_grad():
        layer.gate.weight.zero_()
        layer.gate.bias.fill_(-50.0)  # gate shut: the input passes unchanged
    torch.testing.assert_close(layer(x), x)
    with torch.no_grad():
        layer.gate.bias.fill_(50.0)  # gate open: the plain transform
    torch.testing.assert_close(layer(x), torch.relu(layer.transform(x)))


@pytest.mark.parametrize(
    "make", [lambda: GLU(0, 3), lambda: SwiGLU(4, -1), lambda: Highway(0)]
)
def test_bad_sizes(make) -> None:  # noqa: ANN001
    with pytest.raises(ValueError, match="must be an int >= 1"):
        make()


def test_highway_formula_between_the_limits_and_its_starting_gate() -> None:
    assert torch.all(Highway(3).gate.bias == -1.0)  # starts close to the identity
    layer = Highway(4, gate_bias=0.5).double()
    assert torch.all(layer.gate.bias == 0.5)
    x = torch.randn(6, 4, dtype=torch.float64)
    t = torch.sigmoid(x @ layer.gate.weight.T + layer.gate.bias)
    expected = (
        t * torch.relu(x @ layer.transform.weight.T + layer.transform.bias)
        + (1 - t) * x
    )
    torch.testing.assert_close(layer(x), expected)


def test_glu_formula_and_sizes() -> None:
    layer = GLU(3, 2).double()
    assert layer.both.weight.shape == (4, 3)
    x = torch.randn(5, 3, dtype=torch.float64)
    w, b = layer.both.weight, layer.both.bias
    expected = (x @ w[:2].T + b[:2]) * torch.sigmoid(x @ w[2:].T + b[2:])
    torch.testing.assert_close(layer(x), expected)
    assert SwiGLU(1, 1)(torch.ones(2, 1)).shape == (2, 1)
    assert Highway(1)(torch.ones(2, 1)).shape == (2, 1)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: GLU(0, 3), "^in_features must be an int >= 1; got 0"),
        (lambda: GLU(3, 0), "^out_features must be an int >= 1; got 0"),
        (lambda: GLU(2.0, 3), "^in_features must be an int >= 1; got 2.0"),
        (lambda: SwiGLU(0, 4), "^features must be an int >= 1; got 0"),
        (lambda: SwiGLU(4, -1), "^hidden must be an int >= 1; got -1"),
        (lambda: Highway(0), "^features must be an int >= 1; got 0"),
    ],
)
def test_errors_name_the_argument(make, message: str) -> None:  # noqa: ANN001
    with pytest.raises(ValueError, match=message):
        make()
