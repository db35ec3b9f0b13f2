"""Lab for "Gated memory: LSTM and GRU": the two update lines of the LSTM cell."""

from __future__ import annotations

from bookbuild.labs import Exercise, Lab


def checkpoint_lstm_cell_step(lstm_cell_step):
    """Compare (h_t, c_t) with nn.LSTMCell on copied weights; report the cell state first, then the output."""
    import torch
    from torch import nn

    torch.manual_seed(0)
    cell = nn.LSTMCell(3, 4)
    x_t, h_prev, c_prev = torch.randn(5, 3), torch.randn(5, 4), torch.randn(5, 4)
    got = lstm_cell_step(x_t, h_prev, c_prev, cell.weight_ih, cell.weight_hh, cell.bias_ih + cell.bias_hh)
    assert isinstance(got, tuple), "lstm_cell_step should return the pair (h_t, c_t), a tuple"
    assert len(got) == 2, f"lstm_cell_step should return the pair (h_t, c_t); got {len(got)} values"
    h, c = got
    want_h, want_c = cell(x_t, (h_prev, c_prev))
    gap_c = (c - want_c).abs().max().item()
    assert gap_c < 1e-6, (f"c_t differs from nn.LSTMCell's by up to {gap_c:.3g}: the cell state is "
                          "f * c_prev + i * g (the forget gate keeps, the input gate writes the candidate)")
    gap_h = (h - want_h).abs().max().item()
    assert gap_h < 1e-6, (f"h_t differs from nn.LSTMCell's by up to {gap_h:.3g} although c_t is right: the output "
                          "is o * tanh(c_t)")
    print("Checkpoint passed: lstm_cell_step agrees with nn.LSTMCell to", f"{max(gap_c, gap_h):.1e}")


LAB = Lab(
    slug="gated",
    chapter="book/gated",
    title="Lab 3: the LSTM cell",
    intro=(
        "An LSTM step computes three gates and a candidate from one affine map of the input and the previous "
        "hidden state (the function `lstm_gates`, given), then updates two states: the cell state, an "
        "accumulator that the forget gate scales and the input gate writes into, and the hidden state, the "
        "part of the cell the output gate shows. You write the two updates and compare with `nn.LSTMCell`."
    ),
    setup="import torch\nfrom torch import nn",
    exercises=[
        Exercise(
            target="chapter_code.gated.gates:lstm_cell_step",
            context=("chapter_code.gated.gates:lstm_gates",),
            task=(
                "`lstm_gates` has given you the input, forget and output gates `i`, `f`, `o` and the candidate "
                "`g`, each `(B, H)`. Compute the new cell state $c_t$ and hidden state $h_t$ and return "
                "`(h, c)`, in the order `nn.LSTMCell` returns them."
            ),
            hint=(
                "$c_t = f_t \\odot c_{t-1} + i_t \\odot g_t$ and $h_t = o_t \\odot \\tanh(c_t)$; in PyTorch `*` "
                "is the elementwise product."
            ),
            checkpoint=checkpoint_lstm_cell_step,
        ),
    ],
)
