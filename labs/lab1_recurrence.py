"""Lab for "Recurrence: one rule shared across time": one step of a vanilla RNN, by hand."""

from __future__ import annotations

from bookbuild.labs import Exercise, Lab


def checkpoint_rnn_step(rnn_step):
    """Compare rnn_step with nn.RNNCell on copied weights, naming the part that is wrong."""
    import torch
    from torch import nn

    torch.manual_seed(0)
    cell = nn.RNNCell(3, 5)  # F = 3 inputs, H = 5 hidden units: non-square, so a missing transpose shows
    x_t, h_prev = torch.randn(4, 3), torch.randn(4, 5)
    bias = cell.bias_ih + cell.bias_hh
    try:
        got = rnn_step(x_t, h_prev, cell.weight_ih, cell.weight_hh, bias)
    except NotImplementedError:
        raise  # the stub itself: a NotImplementedError is a RuntimeError too
    except RuntimeError as exc:
        raise AssertionError(f"rnn_step raised {exc!r}: x_t is (B, F) and weight_ih is (H, F), so the input "
                             "term is x_t @ weight_ih.T (and h_prev @ weight_hh.T)") from None
    want = cell(x_t, h_prev)
    assert tuple(got.shape) == (4, 5), f"rnn_step should return a (B, H) = (4, 5) state; got {tuple(got.shape)}"
    assert got.abs().max() < 1, (f"a vanilla RNN state lies in (-1, 1) because of the tanh; got max |h_t| = "
                                 f"{got.abs().max().item():.2f}")
    gap = (got - want).abs().max().item()
    assert gap < 1e-6, (f"rnn_step differs from nn.RNNCell by up to {gap:.3g}; check that both products and the "
                        "bias are inside the tanh")
    print("Checkpoint passed: rnn_step agrees with nn.RNNCell to", f"{gap:.1e}")


LAB = Lab(
    slug="recurrence",
    chapter="book/recurrence",
    title="Lab 1: one step of a vanilla RNN",
    intro=(
        "The vanilla RNN applies one rule at every step: the new state is the tanh of an affine map of the "
        "input and the previous state. Here you write that rule for a batch, in PyTorch's weight layout, and "
        "check it against PyTorch's own `nn.RNNCell` with the same weights."
    ),
    setup="import math\n\nimport torch\nfrom torch import nn",
    exercises=[
        Exercise(
            target="chapter_code.rnn.recurrence:rnn_step",
            task=(
                "Return $h_t = \\tanh(x_t W_{ih}^\\top + h_{t-1} W_{hh}^\\top + b)$ for a batch: `x_t` is "
                "`(B, F)`, `h_prev` is `(B, H)`, `weight_ih` is `(H, F)`, `weight_hh` is `(H, H)` and `bias` is "
                "the sum of PyTorch's two bias vectors, `(H,)`."
            ),
            hint=(
                "PyTorch stores a weight as (outputs, inputs), so a batch of row vectors is multiplied by the "
                "transpose: `x_t @ weight_ih.T` is `(B, H)`. Add the recurrent term and the bias (it broadcasts "
                "over the batch), then apply `torch.tanh`."
            ),
            checkpoint=checkpoint_rnn_step,
        ),
    ],
)
