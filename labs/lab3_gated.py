"""Lab for "Gated memory: LSTM and GRU": the LSTM's gates, its two update lines, and the
GRU step.
"""

from __future__ import annotations

from bookbuild.tools.labs import Exercise, Lab, Prediction


def _inputs(seed: int, shapes: dict[str, tuple[int, ...]]) -> dict[str, list]:
    """Seeded normal tensors with three decimals (they survive the notebook's rounding
    exactly), as lists.
    """
    import torch

    gen = torch.Generator().manual_seed(seed)
    return {
        name: (torch.randn(*shape, generator=gen) * 1000).round().div(1000).tolist()
        for name, shape in shapes.items()
    }


def reference_lstm_gates() -> dict:
    """The book's lstm_gates on fixed inputs (B = 3, F = 2, H = 2)."""
    import torch

    from chapter_code.gated.gates import lstm_gates

    values = _inputs(
        30,
        {
            "x_t": (3, 2),
            "h_prev": (3, 2),
            "weight_ih": (8, 2),
            "weight_hh": (8, 2),
            "bias": (8,),
        },
    )
    gates = lstm_gates(
        *(
            torch.tensor(values[k])
            for k in ("x_t", "h_prev", "weight_ih", "weight_hh", "bias")
        )
    )
    return values | {"i, f, g, o": [t.tolist() for t in gates]}


def checkpoint_lstm_gates(lstm_gates, expected):
    """The four outputs against the book's, with their ranges and PyTorch's block order
    (i, f, g, o).
    """
    import torch

    args = [
        torch.tensor(expected[k])
        for k in ("x_t", "h_prev", "weight_ih", "weight_hh", "bias")
    ]
    got = lstm_gates(*args)
    assert isinstance(got, tuple), "lstm_gates should return four tensors: i, f, g, o"
    assert len(got) == 4, "lstm_gates should return four tensors: i, f, g, o"
    want = [torch.tensor(w) for w in expected["i, f, g, o"]]
    names = ["i", "f", "g", "o"]
    for name, tensor in zip(names, got, strict=True):
        assert tuple(tensor.shape) == (3, 2), (
            f"{name} should be (B, H) = (3, 2); got {tuple(tensor.shape)}"
        )
    for name in ("i", "f", "o"):
        t = got[names.index(name)]
        assert bool(((t > 0) & (t < 1)).all()), (
            f"the gate {name} should lie in (0, 1), as a sigmoid does"
        )
    assert bool((got[2] < 0).any()), (
        "the candidate g should lie in (-1, 1) and take both signs, as a tanh does"
    )

    # undo the squashing: the pre-activation of a block, which names where it came from
    def pre(k, t):
        t = t.clamp(-1 + 1e-6, 1 - 1e-6) if k == 2 else t.clamp(1e-6, 1 - 1e-6)
        return torch.atanh(t) if k == 2 else torch.log(t / (1 - t))

    for k, name in enumerate(names):
        if not torch.allclose(got[k], want[k], atol=1e-5):
            matches = [
                names[j]
                for j in range(4)
                if j != k and torch.allclose(pre(k, got[k]), pre(j, want[j]), atol=1e-3)
            ]
            if matches:
                raise AssertionError(
                    f"your {name} is computed from the block of {matches[0]}: "
                    "PyTorch's weight holds "
                    "the blocks in the order i, f, g, o, each H rows"
                )
            raise AssertionError(
                f"your {name} differs from the book's by up to "
                f"{(got[k] - want[k]).abs().max().item():.3g}: one affine map of x_t "
                "and h_prev (with the bias) feeds all four blocks"
            )
    print("Checkpoint passed: lstm_gates gives the book's i, f, g and o")


def checkpoint_lstm_cell_step(lstm_cell_step):
    """Compare (h_t, c_t) with nn.LSTMCell on copied weights; report the cell state
    first, then the output.
    """
    import torch
    from torch import nn

    torch.manual_seed(0)
    cell = nn.LSTMCell(3, 4)
    x_t, h_prev, c_prev = torch.randn(5, 3), torch.randn(5, 4), torch.randn(5, 4)
    got = lstm_cell_step(
        x_t, h_prev, c_prev, cell.weight_ih, cell.weight_hh, cell.bias_ih + cell.bias_hh
    )
    assert isinstance(got, tuple), (
        "lstm_cell_step should return the pair (h_t, c_t), a tuple"
    )
    assert len(got) == 2, (
        f"lstm_cell_step should return the pair (h_t, c_t); got {len(got)} values"
    )
    h, c = got
    want_h, want_c = cell(x_t, (h_prev, c_prev))
    if torch.allclose(h, want_c, atol=1e-6) and torch.allclose(c, want_h, atol=1e-6):
        raise AssertionError(
            "the pair is the wrong way round: return (h_t, c_t), as nn.LSTMCell does"
        )
    gap_c = (c - want_c).abs().max().item()
    assert gap_c < 1e-6, (
        f"c_t differs from nn.LSTMCell's by up to {gap_c:.3g}: the cell state is the "
        "old one as far as the forget gate keeps it, plus the candidate as far as "
        "the input gate writes it"
    )
    gap_h = (h - want_h).abs().max().item()
    assert gap_h < 1e-6, (
        f"h_t differs from nn.LSTMCell's by up to {gap_h:.3g} although c_t is right: "
        "the output gate shows a squashed copy of the new cell state"
    )
    print(
        "Checkpoint passed: lstm_cell_step agrees with nn.LSTMCell to",
        f"{max(gap_c, gap_h):.1e}",
    )


def reference_gru_step() -> dict:
    """The book's gru_step in Cho et al.'s form (reset_after=False) on fixed inputs;
    nn.GRUCell checks the other.
    """
    import torch

    from chapter_code.gated.gates import gru_step

    values = _inputs(
        31,
        {
            "x_t": (3, 2),
            "h_prev": (3, 3),
            "weight_ih": (9, 2),
            "weight_hh": (9, 3),
            "bias_ih": (9,),
            "bias_hh": (9,),
        },
    )
    args = [
        torch.tensor(values[k])
        for k in ("x_t", "h_prev", "weight_ih", "weight_hh", "bias_ih", "bias_hh")
    ]
    return values | {"reset before": gru_step(*args, reset_after=False).tolist()}


def checkpoint_gru_step(gru_step, expected):
    """reset_after=True against nn.GRUCell with the same weights; reset_after=False
    against the book's numbers. A mismatch is named by probing: the update gate held
    shut, the r and z blocks exchanged, one recurrent bias block set to zero.
    """
    import torch
    from torch import nn

    names = ("x_t", "h_prev", "weight_ih", "weight_hh", "bias_ih", "bias_hh")
    args = [torch.tensor(expected[k]) for k in names]
    x_t, h_prev = args[:2]

    def cell_with(weights):  # nn.GRUCell holding the given (weight_ih, ..., bias_hh)
        cell = nn.GRUCell(2, 3)
        with torch.no_grad():
            for name, value in zip(names[2:], weights, strict=True):
                getattr(cell, name).copy_(value)
        return cell

    def close(a, b):
        return bool((a - b).abs().max() < 1e-5)

    with torch.no_grad():
        want = cell_with(args[2:])(x_t, h_prev)
    got = gru_step(*args, reset_after=True)
    assert tuple(got.shape) == (3, 3), (
        f"gru_step should return h_t, (B, H) = (3, 3); got {tuple(got.shape)}"
    )
    want_before = torch.tensor(expected["reset before"])
    gap = (got - want).abs().max().item()
    if gap > 1e-5:
        if close(got, want_before):
            raise AssertionError(
                "with reset_after=True, gru_step gives Cho et al.'s form: your reset "
                "gate scales h_prev before the recurrent weight multiplies it, where "
                "nn.GRU's form lets it act on the recurrent part after the product"
            )
        # the update gate's recurrent bias pushed far down: the book's u is near 0
        shut = args[5].clone()
        shut[3:6] = -30.0
        if close(gru_step(*args[:5], shut, reset_after=True), h_prev):
            raise AssertionError(
                "with the update gate held shut (u near 0), nn.GRUCell moves to the "
                "candidate but your h_t stays at h_prev: your h_t blends h_prev and "
                "the candidate the wrong way round, u weighting the candidate where "
                "the task's h_t has it weight h_{t-1}"
            )
        swapped = [w.clone() for w in args[2:]]
        for w in swapped:  # the r block and the z block exchanged
            w[:3], w[3:6] = w[3:6].clone(), w[:3].clone()
        with torch.no_grad():
            if close(got, cell_with(swapped)(x_t, h_prev)):
                raise AssertionError(
                    "your r and u are each computed from the other's blocks: "
                    "PyTorch's weights hold the blocks in the order r, z, n, the "
                    "reset gate first"
                )
        for k, block in enumerate(("b_r", "b_z", "b_n")):
            zeroed = args[5].clone()
            zeroed[3 * k : 3 * k + 3] = 0.0
            with torch.no_grad():
                want_zeroed = cell_with([*args[2:5], zeroed])(x_t, h_prev)
            if close(gru_step(*args[:5], zeroed, reset_after=True), want_zeroed):
                raise AssertionError(
                    f"gru_step agrees with nn.GRUCell once the recurrent bias {block} "
                    f"is zero, not otherwise: {block} is left out, or added in the "
                    "wrong place"
                )
        with torch.no_grad():
            want_unbiased = cell_with([*args[2:5], torch.zeros(9)])(x_t, h_prev)
        if close(gru_step(*args[:5], torch.zeros(9), reset_after=True), want_unbiased):
            raise AssertionError(
                "gru_step agrees with nn.GRUCell once bias_hh is zero, not otherwise: "
                "the recurrent biases b_r, b_z and b_n are left out (bias_ih is "
                "already in gx_r, gx_z, gx_n; bias_hh is not)"
            )
        raise AssertionError(
            "with reset_after=True, gru_step differs from nn.GRUCell by up to "
            f"{gap:.3g}, and not by a mistake this checkpoint knows: check each "
            "gate, the candidate and the update of h_t against the task, one part at "
            "a time"
        )
    before = gru_step(*args, reset_after=False)
    gap_before = (before - want_before).abs().max().item()
    if gap_before > 1e-5 and close(before, want):
        raise AssertionError(
            "reset_after=False gives nn.GRUCell's result: in Cho et al.'s form the "
            "reset gate scales h_prev before the weight multiplies it"
        )
    assert gap_before < 1e-5, (
        "with reset_after=False, gru_step differs from the book's by up to "
        f"{gap_before:.3g} although reset_after=True is right: the two forms differ "
        "only in where the reset gate enters the candidate"
    )
    print(
        "Checkpoint passed: gru_step agrees with nn.GRUCell and with Cho et al.'s form"
    )


PREDICTION = Prediction(
    question=(
        "An LSTM cell with small random weights starts from $c_0$ = all ones and reads "
        "30 steps of zero input. Its forget gate's bias is set to 3 (PyTorch starts it "
        "near 0). What is left of the cell state after the 30 steps (the mean of "
        "$|c_{30}|$): about 0.5, 0.2, 0.05, or less than 0.01? And with the forget "
        "bias at 0?"
    ),
    guess=(
        "# your guesses, before you run the next cell (a number each)\n"
        "guess_left_with_bias_3 = None\n"
        "guess_left_with_bias_0 = None"
    ),
    measure="""\
def cell_left(forget_bias, steps=30, hidden=8):
    gen = torch.Generator().manual_seed(0)
    weight_ih = 0.1 * torch.randn(4 * hidden, 1, generator=gen)
    weight_hh = 0.1 * torch.randn(4 * hidden, hidden, generator=gen)
    bias = torch.zeros(4 * hidden)
    bias[hidden : 2 * hidden] = forget_bias  # the forget gate's block
    h, c, x = torch.zeros(1, hidden), torch.ones(1, hidden), torch.zeros(1, 1)
    for _ in range(steps):
        h, c = lstm_cell_step(x, h, c, weight_ih, weight_hh, bias)
    return c.abs().mean().item()


measured_left_with_bias_3 = cell_left(3.0)
measured_left_with_bias_0 = cell_left(0.0)""",
    compare="""\
print(f"forget bias 3: you guessed {guess_left_with_bias_3}, "
      f"measured {measured_left_with_bias_3:.3g}")
print(f"forget bias 0: you guessed {guess_left_with_bias_0}, "
      f"measured {measured_left_with_bias_0:.3g}")
# Each step multiplies the cell by the forget gate: 30 factors compound.""",
)

STRETCH = (
    "Peepholes: let the three gates also read $c_{t-1}$ through a diagonal weight "
    "each. Write the step, check that with zero peephole weights it equals your "
    "`lstm_cell_step`, and check its gradients against autograd.",
    "Couple the gates: set the input gate to one minus the forget gate. Write that "
    "cell, count its parameters against `nn.LSTMCell`'s, and compare its update "
    "with the GRU's.",
    "For F = 32 inputs, find the hidden size at which a GRU cell has as many "
    "parameters as an LSTM cell with H = 64 (count with `numel`, not by hand).",
)

RESULTS = """\
def gru_left(update_bias, steps=30, hidden=8, reset_after=True):
    gen = torch.Generator().manual_seed(0)
    weight_ih = 0.1 * torch.randn(3 * hidden, 1, generator=gen)
    weight_hh = 0.1 * torch.randn(3 * hidden, hidden, generator=gen)
    bias_ih, bias_hh = torch.zeros(3 * hidden), torch.zeros(3 * hidden)
    bias_ih[hidden : 2 * hidden] = update_bias  # PyTorch's z block, the update gate
    h, x = torch.ones(1, hidden), torch.zeros(1, 1)
    for _ in range(steps):
        h = gru_step(x, h, weight_ih, weight_hh, bias_ih, bias_hh, reset_after)
    return h.abs().mean().item()


print(f"{'gate bias':>9} {'sigmoid':>8} {'LSTM |c_30|':>12} {'GRU |h_30|':>11}")
for gate_bias in (-2.0, 0.0, 1.0, 3.0, 5.0):
    kept = torch.sigmoid(torch.tensor(gate_bias)).item()
    print(f"{gate_bias:>9} {kept:>8.3f} {cell_left(gate_bias):>12.3g} "
          f"{gru_left(gate_bias):>11.3g}")"""


LAB = Lab(
    slug="gated",
    chapter="book/gated",
    title="Lab 3: the LSTM and GRU cells",
    intro=(
        "An LSTM step computes three gates and a candidate from one affine map of the "
        "input and the previous hidden state, then updates two states: the cell "
        "state, an accumulator that the forget gate scales and the input gate writes "
        "into, and the hidden state, the part of the cell the output gate shows. The "
        "GRU keeps one state and blends it with a candidate through an update gate. "
        "You write the LSTM's gates and its update, and a GRU step in both of its "
        "forms, and compare with `nn.LSTMCell` and `nn.GRUCell`."
    ),
    setup="import torch\nfrom torch import nn",
    prediction=PREDICTION,
    stretch=STRETCH,
    results=RESULTS,
    exercises=[
        Exercise(
            target="chapter_code.gated.gates:lstm_gates",
            task=(
                "`weight_ih` is `(4H, F)`, `weight_hh` `(4H, H)` and `bias` `(4H,)`, "
                "with PyTorch's blocks in the order input gate, forget gate, "
                "candidate, output gate. Return `i, f, g, o`, each `(B, H)`: the "
                "gates squashed into (0, 1), the candidate into (-1, 1)."
            ),
            hints=(
                "All four come from one affine map of `x_t` and `h_prev`, as in the "
                "vanilla RNN's step; only the squashing differs per block.",
                "Compute the `(B, 4H)` pre-activation once, split it into four `(B, "
                "H)` blocks along dim 1 (`chunk`), and apply `torch.sigmoid` to three "
                "of them and `torch.tanh` to the candidate.",
            ),
            checkpoint=checkpoint_lstm_gates,
            reference=reference_lstm_gates,
            minutes=15,
        ),
        Exercise(
            target="chapter_code.gated.gates:lstm_cell_step",
            task=(
                "Get the gates from your `lstm_gates`, then compute the new cell "
                "state $c_t$ and hidden state "
                "$h_t$ and return `(h, c)`, in the order `nn.LSTMCell` returns them."
            ),
            hints=(
                "The cell state is an accumulator: part of the old one is kept, part "
                "of the candidate is written. Which gate decides which part?",
                "Call your `lstm_gates` once. The new cell state is a sum of two "
                "elementwise products (`*`): one keeps part of `c_prev`, the other "
                "writes part of the candidate, each weighted by the gate that hint "
                "2.1 asks you to name. The new hidden state is made from the new cell "
                "state, squashed into (-1, 1), by the one gate left.",
            ),
            checkpoint=checkpoint_lstm_cell_step,
            minutes=10,
        ),
        Exercise(
            target="chapter_code.gated.gates:gru_step",
            task=(
                "The input part of all three blocks (`gx_r`, `gx_z`, `gx_n`, bias "
                "included) and the recurrent weight and bias blocks are split for "
                "you. Compute the reset gate $r$, the update gate $u$ (PyTorch's "
                "$z$), the candidate $n$ (in the form `reset_after` asks for) and "
                "return $h_t = u \\odot h_{t-1} + (1 - u) \\odot n$."
            ),
            hints=(
                "Each gate is a sigmoid of its input part plus its recurrent part; "
                "the two forms differ only in "
                "where $r$ enters the candidate: before or after the recurrent weight.",
                "`r` and `u` are the sigmoid of their input part plus `h_prev` times "
                "their recurrent block (transposed) plus its bias. For the candidate, "
                "`reset_after=True` (nn.GRU) takes the recurrent part whole, weight "
                "and bias `b_n`, and lets `r` scale it; `reset_after=False` (Cho et "
                "al.) lets `r` scale `h_prev` first, and `w_n` multiplies the "
                "product. Either way the candidate is squashed into (-1, 1).",
            ),
            checkpoint=checkpoint_gru_step,
            reference=reference_gru_step,
            minutes=25,
        ),
    ],
)
