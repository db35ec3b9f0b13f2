"""Lab for "Recurrence: one rule shared across time": the step, padding a batch, and the
masked loop.
"""

from __future__ import annotations

from bookbuild.tools.labs import Exercise, Lab, Prediction


def checkpoint_rnn_step(rnn_step):
    """Compare rnn_step with nn.RNNCell on copied weights, naming the part that is
    wrong.
    """
    import torch
    from torch import nn

    torch.manual_seed(0)
    # F = 3 inputs, H = 5 hidden units: non-square, so a missing transpose shows
    cell = nn.RNNCell(3, 5)
    x_t, h_prev = torch.randn(4, 3), torch.randn(4, 5)
    bias = cell.bias_ih + cell.bias_hh
    try:
        got = rnn_step(x_t, h_prev, cell.weight_ih, cell.weight_hh, bias)
    except NotImplementedError:
        raise  # the stub itself: a NotImplementedError is a RuntimeError too
    except RuntimeError as exc:
        raise AssertionError(
            f"rnn_step raised {exc!r}: x_t is (B, F) = (4, 3) but weight_ih is stored "
            "as (H, F) = (5, 3), outputs first; think about which way round each "
            "product goes"
        ) from None
    want = cell(x_t, h_prev)
    assert tuple(got.shape) == (4, 5), (
        f"rnn_step should return a (B, H) = (4, 5) state; got {tuple(got.shape)}"
    )
    assert got.abs().max() < 1, (
        "a vanilla RNN state lies in (-1, 1), because the squashing function is "
        f"applied last; got max |h_t| = {got.abs().max().item():.2f}"
    )
    gap = (got - want).abs().max().item()
    if (
        gap > 1e-6
        and (got - torch.tanh(torch.atanh(want) - bias)).abs().max().item() < 1e-5
    ):
        raise AssertionError(
            "rnn_step matches nn.RNNCell without its bias: add the bias inside the tanh"
        )
    assert gap < 1e-6, (
        f"rnn_step differs from nn.RNNCell by up to {gap:.3g}; check that both "
        "products and the "
        "bias are inside the tanh, and that the recurrent term uses h_prev"
    )
    print("Checkpoint passed: rnn_step agrees with nn.RNNCell to", f"{gap:.1e}")


def checkpoint_pad_batch(pad_batch):
    """Three sequences of lengths 3, 1 and 2: the batch, its zeros, and the mask,
    checked entry by entry.
    """
    import torch

    seqs = [
        torch.arange(1.0, 7.0).reshape(3, 2),
        torch.tensor([[7.0, 8.0]]),
        torch.tensor([[9.0, 10.0], [11.0, 12.0]]),
    ]
    got = pad_batch(seqs)
    assert isinstance(got, tuple), "pad_batch should return the pair (batch, mask)"
    assert len(got) == 2, "pad_batch should return the pair (batch, mask)"
    batch, mask = got
    assert tuple(batch.shape) == (3, 3, 2), (
        f"three sequences of at most 3 steps of 2 features make a (B, T_max, F) "
        f"= (3, 3, 2) batch; got {tuple(batch.shape)}"
    )
    assert tuple(mask.shape) == (3, 3), (
        f"the mask is (B, T_max) = (3, 3); got {tuple(mask.shape)}"
    )
    assert mask.dtype == torch.bool, (
        f"the mask should be bool (True on a real step); got {mask.dtype}"
    )
    want_mask = [[True, True, True], [True, False, False], [True, True, False]]
    assert mask.tolist() == want_mask, (
        f"the mask should be True on each sequence's real steps, from the start: "
        f"{want_mask}; got {mask.tolist()}"
    )
    for i, s in enumerate(seqs):
        n = s.shape[0]
        assert torch.equal(batch[i, :n], s), (
            f"row {i} of the batch should start with sequence {i} itself, "
            f"{s.tolist()}; got {batch[i, :n].tolist()}"
        )
        assert bool((batch[i, n:] == 0).all()), (
            f"row {i} should be zero after its {n} real steps; got {batch[i].tolist()}"
        )
    print("Checkpoint passed: pad_batch stacks, zero-pads and masks")


def checkpoint_rnn_loop(rnn_loop):
    """Without a mask, agree with nn.RNN; with one, every padded step keeps the state of
    the last real step.
    """
    import torch
    from torch import nn

    torch.manual_seed(1)
    ref = nn.RNN(3, 4, batch_first=True)
    w_ih, w_hh, bias = (
        ref.weight_ih_l0,
        ref.weight_hh_l0,
        ref.bias_ih_l0 + ref.bias_hh_l0,
    )
    x, h0 = torch.randn(2, 5, 3), torch.randn(2, 4)
    got = rnn_loop(x, w_ih, w_hh, bias, h0=h0)
    assert isinstance(got, tuple), (
        "rnn_loop should return the pair (states, last state)"
    )
    assert len(got) == 2, "rnn_loop should return the pair (states, last state)"
    states, last = got
    want, want_last = ref(x, h0.unsqueeze(0))
    assert tuple(states.shape) == (2, 5, 4), (
        f"the states should be (B, T, H) = (2, 5, 4), one per step, stacked "
        f"along time (dim 1); got {tuple(states.shape)}"
    )
    gap = (states - want).abs().max().item()
    if (states[:, 0] - want[:, 0]).abs().max() < 1e-6 and gap > 1e-6:
        raise AssertionError(
            "the first step is right but later ones are not: carry the new state "
            "into the next step"
        )
    if gap > 1e-6 and (rnn_loop(x, w_ih, w_hh, bias)[0] - states).abs().max() < 1e-6:
        raise AssertionError(
            "the states do not depend on h0: start the loop from the state "
            "check_loop_inputs returns"
        )
    assert gap < 1e-5, (
        "without a mask the states should match nn.RNN's; they differ by up to "
        f"{gap:.3g}"
    )
    assert (last - want_last[0]).abs().max() < 1e-5, (
        "the second value returned should be the state after the last step"
    )
    lengths = [5, 3]
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
    states, last = rnn_loop(x, w_ih, w_hh, bias, h0=h0, mask=mask)
    short, short_last = ref(x[1:, :3], h0[1:].unsqueeze(0))
    assert (states[0] - want[0]).abs().max() < 1e-5, (
        "a row whose mask is all ones changed: the mask is 1 on "
        "real steps, which take the new state"
    )
    assert (states[1, :3] - short[0]).abs().max() < 1e-5, (
        "on the real steps of a padded row (mask 1) the states should be the ones of "
        "the unpadded sequence; check which steps the mask keeps"
    )
    moved = (states[1, 3:] - short_last[0]).abs().max().item()
    assert moved < 1e-5, (
        f"a padded step (mask 0) changed the state by up to {moved:.3g}: where the "
        "mask is 0 the "
        f"state must stay as it was after the last real step (here step {lengths[1]})"
    )
    assert (last[1] - short_last[0]).abs().max() < 1e-5, (
        "the last state of a padded row is its last real state"
    )
    print(
        "Checkpoint passed: rnn_loop matches nn.RNN and keeps the state on padded steps"
    )


def checkpoint_masked_mean_state(masked_mean_state):
    """Seeded states of three sequences of lengths 4, 1 and 3, padded to 5 steps: each
    row's summary against the mean of that row's real steps alone; the padded steps
    hold values that must not count.
    """
    import torch

    gen = torch.Generator().manual_seed(3)
    states = torch.randn(3, 5, 2, generator=gen)
    lengths = [4, 1, 3]
    mask = torch.arange(5).expand(3, 5) < torch.tensor(lengths).unsqueeze(1)
    want = torch.stack([states[i, :n].mean(dim=0) for i, n in enumerate(lengths)])
    got = masked_mean_state(states, mask)
    assert tuple(got.shape) == (3, 2), (
        f"masked_mean_state should return one (H,) summary per row, (B, H) = (3, 2); "
        f"got {tuple(got.shape)}"
    )
    if not torch.allclose(got, want, atol=1e-6):
        real_sums = torch.stack(
            [states[i, :n].sum(dim=0) for i, n in enumerate(lengths)]
        )
        if torch.allclose(got, states.mean(dim=1), atol=1e-6):
            raise AssertionError(
                "your summaries average all 5 steps, padded ones included: the "
                "padding's states count as if the sequence had read them"
            )
        if torch.allclose(got, real_sums / 5, atol=1e-6):
            raise AssertionError(
                "the padded steps are out of your sum, but you divide by the padded "
                "length, 5: the row with 1 real step is averaged as if it had 5"
            )
        if torch.allclose(got, real_sums, atol=1e-6):
            raise AssertionError(
                "your summaries are sums over the real steps, not means: a longer "
                "sequence gets a larger summary for the same states"
            )
        gap = (got - want).abs().max().item()
        raise AssertionError(
            f"the summaries differ from each row's mean over its real steps by up to "
            f"{gap:.3g}; check which steps your mask lets in"
        )
    as_numbers = masked_mean_state(states, mask.float())
    assert torch.allclose(as_numbers, want, atol=1e-6), (
        "with the same mask given as 0.0/1.0 floats the summaries change: read the "
        "mask as true where it is nonzero, whatever its dtype"
    )
    print("Checkpoint passed: masked_mean_state averages each row over its real steps")


PREDICTION = Prediction(
    question=(
        "A sequence of 3 steps is padded to 7 with zero inputs, and your `rnn_loop` "
        "runs over the padded batch. How far (largest absolute difference of one "
        "entry) will its final state be from the state after its 3 real steps: about "
        "0, 0.01, 0.1 or 1? First without the mask, then with it."
    ),
    guess=(
        "# your guesses, before you run the next cell (a number each)\n"
        "guess_without_mask = None\n"
        "guess_with_mask = None"
    ),
    measure="""\
torch.manual_seed(0)
cell = nn.RNNCell(2, 4)
with torch.no_grad():
    w_ih, w_hh = cell.weight_ih.clone(), cell.weight_hh.clone()
    b = cell.bias_ih + cell.bias_hh
    short = torch.randn(3, 2)
    batch, mask = pad_batch([short, torch.randn(7, 2)])  # row 0: 3 real steps of 7
    _, alone = rnn_loop(short.unsqueeze(0), w_ih, w_hh, b)
    _, unmasked = rnn_loop(batch, w_ih, w_hh, b)
    _, masked = rnn_loop(batch, w_ih, w_hh, b, mask=mask)
measured_without_mask = (unmasked[0] - alone[0]).abs().max().item()
measured_with_mask = (masked[0] - alone[0]).abs().max().item()""",
    compare="""\
print(f"without the mask: you guessed {guess_without_mask}, "
      f"measured {measured_without_mask:.3g}")
print(f"with the mask:    you guessed {guess_with_mask}, "
      f"measured {measured_with_mask:.3g}")
# Zero inputs are not nothing: the bias and the recurrent term act at every step.""",
)

STRETCH = (
    "Give your `rnn_step` a `nonlinearity` argument (`'tanh'` or `'relu'`) and "
    "check it against `nn.RNNCell(..., nonlinearity='relu')`. Then run 200 steps "
    "of each with the same recurrent weight scaled up: which state's norm can grow "
    "without bound, and why?",
    "Write `last_real_state(states, mask)`, which picks each row's state at its "
    "last real step by indexing, with no loop over the batch; check it against the "
    "second value your masked `rnn_loop` returns.",
    "Time your `rnn_loop` against `nn.RNN` for 10, 100 and 1000 steps. Which part "
    "of your loop would you move out of Python first, and how much of the gap would "
    "that close?",
)

RESULTS = """\
torch.manual_seed(1)
rnn = nn.RNN(2, 4, batch_first=True)
seqs = [torch.randn(n, 2) for n in (6, 4, 2, 1)]
with torch.no_grad():
    w_ih, w_hh = rnn.weight_ih_l0.clone(), rnn.weight_hh_l0.clone()
    b = rnn.bias_ih_l0 + rnn.bias_hh_l0
    batch, mask = pad_batch(seqs)
    states, last = rnn_loop(batch, w_ih, w_hh, b, mask=mask)
    summary = masked_mean_state(states, mask)
    print(f"{'length':>6} {'|last h|':>9} {'|mean h|':>9} {'gap to nn.RNN':>14}")
    for i, seq in enumerate(seqs):
        gap = (last[i] - rnn(seq.unsqueeze(0))[1][0, 0]).abs().max().item()
        print(f"{len(seq):>6} {last[i].norm().item():9.4f} "
              f"{summary[i].norm().item():9.4f} {gap:14.1e}")"""


LAB = Lab(
    slug="recurrence",
    chapter="book/recurrence",
    title="Lab 1: the vanilla RNN by hand",
    intro=(
        "The vanilla RNN applies one rule at every step: the new state is the tanh of "
        "an affine map of the input and the previous state. You write that step in "
        "PyTorch's weight layout and check it against `nn.RNNCell`; then you pad "
        "sequences of different lengths into one batch with a mask; then you run the "
        "step along time, keeping the state unchanged wherever the mask says a step "
        "is padding, and check the loop against `nn.RNN`."
    ),
    setup="import math\nfrom collections.abc import Sequence\n\nimport torch\nfrom "
    "torch import nn",
    prediction=PREDICTION,
    stretch=STRETCH,
    results=RESULTS,
    exercises=[
        Exercise(
            target="chapter_code.rnn.recurrence:rnn_step",
            task=(
                "Return $h_t = \\tanh(x_t W_{ih}^\\top + h_{t-1} W_{hh}^\\top + b)$ "
                "for a batch: `x_t` is `(B, F)`, `h_prev` is `(B, H)`, `weight_ih` is "
                "`(H, F)`, `weight_hh` is `(H, H)` and `bias` is the sum of PyTorch's "
                "two bias vectors, `(H,)`."
            ),
            hints=(
                "Write down the shape of every term before you write code: the "
                "result must be `(B, H)`, and "
                "PyTorch stores each weight as (outputs, inputs).",
                "One line: a batch of row vectors times the transpose of each weight "
                "(`@` and `.T`), the two products and the bias added (the bias "
                "broadcasts over the batch), all inside `torch.tanh`.",
            ),
            checkpoint=checkpoint_rnn_step,
            minutes=10,
        ),
        Exercise(
            target="chapter_code.rnn.recurrence:pad_batch",
            task=(
                "The checks are done and `features` is the common feature size. Stack "
                "the `(T_i, F)` sequences into one zero-padded `(B, T_max, F)` batch "
                "and return it with its `(B, T_max)` bool mask, `True` on each "
                "sequence's real steps."
            ),
            hints=(
                "Allocate first, fill second: a zero tensor of the final shape "
                "already holds the padding.",
                "Find the longest length; make a zero batch with "
                "`sequences[0].new_zeros(...)` and a bool mask with `torch.zeros(..., "
                "dtype=torch.bool)`; in one loop over the sequences copy sequence `i` "
                "into the first `T_i` steps of row `i` and set the same stretch of "
                "the mask.",
            ),
            checkpoint=checkpoint_pad_batch,
            minutes=15,
        ),
        Exercise(
            target="chapter_code.rnn.recurrence:rnn_loop",
            context=(
                "chapter_code.rnn.recurrence:check_mask",
                "chapter_code.rnn.recurrence:check_loop_inputs",
            ),
            task=(
                "`check_loop_inputs` has given you the start state `h` `(B, H)` and "
                "the mask `m` as floats `(B, T)`, or `None`. Run your `rnn_step` "
                "along time and return every state `(B, T, H)` and the last `(B, H)`. "
                "Where `m` is 0 the step is padding: the state must stay what it was."
            ),
            hints=(
                "The loop is over time, not over the batch; the mask decides, row by "
                "row, between the new state and the old one.",
                "For each `t`: compute the candidate state from `x[:, t]`; if there "
                "is a mask, take its column `t` with shape `(B, 1)` so it broadcasts "
                "over `H`, and blend `keep * new + (1 - keep) * old`; store the "
                "state; finally `torch.stack` the list along dim 1.",
            ),
            checkpoint=checkpoint_rnn_loop,
            minutes=20,
        ),
        Exercise(
            target="labs.solutions:masked_mean_state",
            task=(
                "Beyond the page: a classifier reads one vector per sequence, not "
                "one per step. Given the states `(B, T, H)` of a padded batch and its "
                "mask `(B, T)` (true or 1 on a real step, false or 0 on padding), "
                "return each row's mean state over its real steps, `(B, H)`. The "
                "chapter does not show this function; the padding must change "
                "nothing."
            ),
            hints=(
                "Two things depend on the padding: which states go into the sum, and "
                "how many steps you divide by. The mask can decide both.",
                "Make the mask numeric in the states' dtype, with a trailing axis of "
                "size 1 so that it broadcasts over `H`; use it once to zero the "
                "padded states before summing over time and once to count each "
                "row's real steps.",
            ),
            checkpoint=checkpoint_masked_mean_state,
            minutes=15,
        ),
    ],
)
