"""Lab for "Beyond the single carried state": the linear recurrence as pairs, its loop,
and the doubling scan.
"""

from __future__ import annotations

from bookbuild.tools.labs import Exercise, Lab, Prediction


def _pairs(seed: int, steps: int) -> dict:
    """Seeded (B, T, H) = (2, steps, 3) pairs with three decimals: a in (0, 1) like a
    forget gate, b normal.
    """
    import torch

    gen = torch.Generator().manual_seed(seed)
    a = (torch.rand(2, steps, 3, generator=gen) * 1000).round().div(1000)
    b = (torch.randn(2, steps, 3, generator=gen) * 1000).round().div(1000)
    c0 = (torch.randn(2, 3, generator=gen) * 1000).round().div(1000)
    return {"a": a.tolist(), "b": b.tolist(), "c0": c0.tolist()}


def reference_combine() -> dict:
    import torch

    from chapter_code.beyond.linear_scan import combine

    v = _pairs(70, 2)
    a, b = torch.tensor(v["a"]), torch.tensor(v["b"])
    first, second = (a[:, 0], b[:, 0]), (a[:, 1], b[:, 1])
    return v | {
        "first then second": [t.tolist() for t in combine(first, second)],
        "second then first": [t.tolist() for t in combine(second, first)],
    }


def checkpoint_combine(combine, expected):
    """The composed pair against the book's, with the order of the two steps named if it
    is swapped.
    """
    import torch

    a, b = torch.tensor(expected["a"]), torch.tensor(expected["b"])
    got = combine((a[:, 0], b[:, 0]), (a[:, 1], b[:, 1]))
    assert isinstance(got, tuple), "combine should return one pair (a, b)"
    assert len(got) == 2, "combine should return one pair (a, b)"
    want = [torch.tensor(t) for t in expected["first then second"]]
    swapped = [torch.tensor(t) for t in expected["second then first"]]
    assert torch.allclose(got[0], want[0], atol=1e-6), (
        "the composed a is wrong: it is not what the two steps, applied in turn, "
        "multiply a state c by"
    )
    if not torch.allclose(got[1], want[1], atol=1e-6):
        if torch.allclose(got[1], swapped[1], atol=1e-6):
            raise AssertionError(
                "the composed b is that of 'second, then first': your b is what the "
                "two steps leave when they are applied in the opposite order"
            )
        raise AssertionError(
            "the composed b is wrong: apply (a1, b1) to a state c, then (a2, b2) to "
            "the result, and read off the part that does not depend on c"
        )
    print("Checkpoint passed: combine composes two steps in the right order")


def reference_loop_linear() -> dict:
    import torch

    from chapter_code.beyond.linear_scan import loop_linear

    v = _pairs(71, 6)
    a, b, c0 = (torch.tensor(v[k]) for k in ("a", "b", "c0"))
    return v | {
        "from zero": loop_linear(a, b).tolist(),
        "from c0": loop_linear(a, b, c0).tolist(),
    }


def checkpoint_loop_linear(loop_linear, expected):
    """Every state, from a zero start and from c0, against the book's loop."""
    import torch

    a, b, c0 = (torch.tensor(expected[k]) for k in ("a", "b", "c0"))
    got = loop_linear(a, b)
    assert tuple(got.shape) == (2, 6, 3), (
        f"loop_linear should return every state, (B, T, H) = (2, 6, 3), stacked "
        f"along time; got {tuple(got.shape)}"
    )
    want = torch.tensor(expected["from zero"])
    if not torch.allclose(got, want, atol=1e-5):
        first_bad = int(((got - want).abs() > 1e-5).any(dim=(0, 2)).nonzero()[0])
        raise AssertionError(
            "from a zero start the states first differ from the book's at step "
            f"{first_bad + 1}: compare that step with the recurrence in the task, "
            "including the order in which it scales and adds"
        )
    start = loop_linear(a, b, c0)
    if torch.allclose(start, want, atol=1e-5):
        raise AssertionError(
            "with c0 given, the states are those of a zero start: begin from c0"
        )
    from_c0 = torch.tensor(expected["from c0"])
    assert torch.allclose(start, from_c0, atol=1e-5), (
        "from c0 the states differ from the book's"
    )
    print("Checkpoint passed: loop_linear gives the book's states")


def reference_scan_linear() -> dict:
    import torch

    from chapter_code.beyond.linear_scan import loop_linear

    v = _pairs(72, 13)
    a, b, c0 = (torch.tensor(v[k]) for k in ("a", "b", "c0"))
    return v | {
        "from zero": loop_linear(a, b).tolist(),
        "from c0": loop_linear(a, b, c0).tolist(),
    }


def checkpoint_scan_linear(scan_linear, expected):
    """The scan equals the loop on 13 steps (from zero and from c0), in ceil(log2 13) =
    4 rounds; autograd runs.
    """
    import math

    import torch

    a, b, c0 = (torch.tensor(expected[k]) for k in ("a", "b", "c0"))
    space = scan_linear.__globals__
    book_combine, calls = space["combine"], []

    # one call per round: the whole sequence is combined at once
    def counted(first, second):
        calls.append(first[0].shape[1])
        return book_combine(first, second)

    space["combine"] = counted
    try:
        got = scan_linear(a, b)
    finally:
        space["combine"] = book_combine
    assert tuple(got.shape) == (2, 13, 3), (
        f"scan_linear should return every state, (2, 13, 3); got {tuple(got.shape)}"
    )
    want = torch.tensor(expected["from zero"])
    gap = (got - want).abs().max().item()
    assert gap < 1e-5, (
        f"the scan differs from the loop by up to {gap:.3g}: check, in a round, which "
        "pair each position passes to combine as first and which as second, and which "
        "positions that round leaves alone"
    )
    rounds = math.ceil(math.log2(13))
    assert len(calls) == rounds, (
        f"13 steps take ceil(log2 13) = {rounds} rounds of the doubling scan, one "
        "combine call on whole slices each; "
        f"your function called combine {len(calls)} times"
        + (": that is a loop over time, not a scan" if len(calls) >= 12 else "")
    )
    start = scan_linear(a, b, c0)
    if torch.allclose(start, want, atol=1e-5):
        raise AssertionError(
            "with c0 given, the scan returns the states of a zero start: fold c0 "
            "into the first step"
        )
    assert torch.allclose(start, torch.tensor(expected["from c0"]), atol=1e-5), (
        "from c0 the scan differs from the loop"
    )
    a_grad = a.clone().requires_grad_(True)
    try:
        scan_linear(a_grad, b).sum().backward()
    except RuntimeError as exc:
        raise AssertionError(
            "autograd cannot run back through the scan "
            f"({str(exc).split(':')[0]}): a or b is written in place during the "
            "rounds, over values autograd still needs"
        ) from None
    assert a_grad.grad is not None, "the scan should pass gradients back to a"
    assert bool(torch.isfinite(a_grad.grad).all()), (
        "the gradients the scan passes back to a should be finite"
    )
    print(
        f"Checkpoint passed: scan_linear equals the loop in {rounds} rounds, and "
        "autograd runs through it"
    )


def reference_input_gated_lstm() -> dict:
    """The book's InputGatedLSTM with three-decimal weights on a fixed input (B = 2, T =
    7, F = 3, H = 2).
    """
    import torch

    from chapter_code.beyond.linear_scan import InputGatedLSTM

    gen = torch.Generator().manual_seed(73)
    weight = (torch.randn(8, 3, generator=gen) * 1000).round().div(1000)
    bias = (torch.randn(8, generator=gen) * 1000).round().div(1000)
    x = (torch.randn(2, 7, 3, generator=gen) * 1000).round().div(1000)
    model = InputGatedLSTM(3, 2)
    with torch.no_grad():
        model.blocks.weight.copy_(weight)
        model.blocks.bias.copy_(bias)
        h = model(x)
    return {
        "weight": weight.tolist(),
        "bias": bias.tolist(),
        "x": x.tolist(),
        "h": h.tolist(),
    }


# N803 below: (the class itself is the argument)
def checkpoint_input_gated_lstm(InputGatedLSTM, expected):  # noqa: N803
    """The book's outputs with the same weights, the scan run when parallel is true and
    the loop when it is false, both agreeing; a mismatch is named by probing (blocks
    reordered, every gate held open).
    """
    import itertools

    import torch

    def model_with(weight, bias):
        model = InputGatedLSTM(3, 2)
        with torch.no_grad():
            model.blocks.weight.copy_(weight)
            model.blocks.bias.copy_(bias)
        return model

    weight, bias = torch.tensor(expected["weight"]), torch.tensor(expected["bias"])
    model, x = model_with(weight, bias), torch.tensor(expected["x"])
    # which of scan_linear and loop_linear forward calls (not the calls inside them)
    space, called, depth = InputGatedLSTM.forward.__globals__, [], [0]
    runs = {
        name: space[name] for name in ("scan_linear", "loop_linear") if name in space
    }

    def spy(name):
        def run(*args, **kwargs):
            if depth[0] == 0:
                called.append(name)
            depth[0] += 1
            try:
                return runs[name](*args, **kwargs)
            finally:
                depth[0] -= 1

        return run

    space.update({name: spy(name) for name in runs})
    try:
        got = model(x)
        by_scan, called[:] = list(called), []
        looped = model(x, parallel=False)
        by_loop = list(called)
    finally:
        space.update(runs)
    assert isinstance(got, torch.Tensor), (
        f"forward should return every h_t as one tensor; got {type(got).__name__}"
    )
    assert tuple(got.shape) == (2, 7, 2), (
        f"forward should return (B, T, H) = (2, 7, 2); got {tuple(got.shape)}"
    )
    if len(runs) == 2:
        assert "scan_linear" in by_scan, (
            "with parallel=True your forward never ran scan_linear: it ignores the "
            "parallel argument and computes the cell states step by step on every call"
        )
        assert "scan_linear" not in by_loop, (
            "with parallel=False your forward still ran scan_linear: it ignores the "
            "parallel argument, so the step-by-step loop is never run"
        )
    gap_paths = (got - looped).abs().max().item()
    assert gap_paths < 1e-5, (
        "parallel=True and parallel=False give different outputs, up to "
        f"{gap_paths:.3g} apart: the scan and the loop are not given the same "
        "recurrence"
    )
    want = torch.tensor(expected["h"])
    gap = (got - want).abs().max().item()
    if gap > 1e-5:
        # the book's blocks, in the order your forward reads them: if that fixes it,
        # the reading order is the mistake
        for order in itertools.permutations(range(4)):
            w = torch.cat([weight.chunk(4)[k] for k in order])
            b = torch.cat([bias.chunk(4)[k] for k in order])
            with torch.no_grad():
                if (model_with(w, b)(x) - want).abs().max() > 1e-5:
                    continue
            if order == (1, 0, 2, 3):
                raise AssertionError(
                    "your input gate and forget gate play each other's parts: the "
                    "gate that keeps the old cell state and the gate that writes the "
                    "candidate are exchanged"
                )
            raise AssertionError(
                "your i, f, g, o come from the wrong blocks of self.blocks(x): with "
                "its blocks reordered your forward gives the book's outputs; they "
                "come in nn.LSTM's order i, f, g, o"
            )
        # every gate open and the candidate at 1: the cell state grows by 1 a step
        with torch.no_grad():
            wide_open = model_with(torch.zeros(8, 3), torch.full((8,), 20.0))(x)
        top = wide_open.abs().max().item()
        assert top < 1, (
            "with every gate held open and the candidate at 1, the cell state grows "
            f"to 7 in 7 steps and your h_t reaches {top:.3g}: an LSTM's h_t lies in "
            "(-1, 1), and yours passes the cell state to the output unsquashed"
        )
        raise AssertionError(
            f"the outputs differ from the book's by up to {gap:.3g} although the scan "
            "and the loop agree: compare your pairs (a_t, b_t) with the LSTM's update "
            "in the task, and how h_t is made from c_t"
        )
    print(
        "Checkpoint passed: InputGatedLSTM gives the book's outputs, by the scan and "
        "by the loop"
    )


def reference_linear_recurrence_grad() -> dict:
    """Autograd's gradient with respect to every b_t, through the book's loop, and the
    gradient a backward pass gets when each step passes it back through its own a_t.
    """
    import torch

    from chapter_code.beyond.linear_scan import loop_linear

    v = _pairs(74, 6)
    a = torch.tensor(v["a"])
    grad_c = torch.tensor(v["b"])  # the loss's direct gradient at every state
    b = torch.zeros_like(a, requires_grad=True)
    (loop_linear(a, b) * grad_c).sum().backward()
    own_step = loop_linear(a.flip(1), grad_c.flip(1)).flip(1)
    return {
        "a": v["a"],
        "grad_c": v["b"],
        "grad_b": b.grad.tolist(),
        "own step": own_step.tolist(),
    }


def checkpoint_linear_recurrence_grad(linear_recurrence_grad, expected):
    """Every gradient against autograd's through the book's loop; time reversed, run
    forwards, or scaled by the wrong step's a, each named.
    """
    import torch

    a, grad_c = torch.tensor(expected["a"]), torch.tensor(expected["grad_c"])
    got = linear_recurrence_grad(a, grad_c)
    assert isinstance(got, torch.Tensor), (
        f"linear_recurrence_grad should return a tensor; got {type(got).__name__}"
    )
    assert tuple(got.shape) == (2, 6, 3), (
        "linear_recurrence_grad should return one gradient per b_t, (B, T, H) = "
        f"(2, 6, 3); got {tuple(got.shape)}"
    )
    want = torch.tensor(expected["grad_b"])
    if not torch.allclose(got, want, atol=1e-5):
        if torch.allclose(got, want.flip(1), atol=1e-5):
            raise AssertionError(
                "your gradients come out in reversed time: the one for b_1 sits at "
                "the last position; turn the result back"
            )
        if torch.allclose(got[:, 0], grad_c[:, 0], atol=1e-5):
            raise AssertionError(
                "the gradient of b_1 is grad_c's first step alone, as if no later "
                "state depended on c_1: gradients flow from the last step back to "
                "the first"
            )
        if torch.allclose(got, torch.tensor(expected["own step"]), atol=1e-5):
            raise AssertionError(
                "each step passes the gradient back through its own scaling a_t: "
                "one step off; which step's scaling links c_t to the state after it?"
            )
        gap = (got - want).abs().max().item()
        raise AssertionError(
            f"the gradients differ from autograd's by up to {gap:.3g}; the last one "
            "should be grad_c's last step alone"
        )
    print("Checkpoint passed: linear_recurrence_grad equals autograd's gradient")


PREDICTION = Prediction(
    question=(
        "On this CPU, for B = 4 sequences of T = 4096 steps with H = 64, which is "
        "faster: your `loop_linear` (4096 small steps) or your `scan_linear` (12 "
        "rounds, each over the whole sequence, about 12 times the arithmetic)? Guess "
        "the ratio of the loop's time to the scan's: below 1 means the loop wins."
    ),
    guess=(
        "# your guess, before you run the next cell: loop time / scan time\n"
        "guess_ratio = None"
    ),
    measure="""\
import time


def best_time(fn, *args, repeats=3):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return min(times)


gen = torch.Generator().manual_seed(0)
a = torch.rand(4, 4096, 64, generator=gen)
b = torch.randn(4, 4096, 64, generator=gen)
with torch.no_grad():
    loop_s, scan_s = best_time(loop_linear, a, b), best_time(scan_linear, a, b)
measured_ratio = loop_s / scan_s""",
    compare="""\
print(f"you guessed {guess_ratio}; measured {measured_ratio:.2f} "
      f"(loop {1000 * loop_s:.1f} ms, scan {1000 * scan_s:.1f} ms)")
# The loop pays Python's overhead at each of its 4096 steps, the scan at each of
# its 12 rounds; on a GPU, where every step is a kernel launch, the gap widens.""",
)

STRETCH = (
    "Complete the backward pass: the gradient with respect to every `a_t` as well, "
    "from your `linear_recurrence_grad` and the forward states, with no autograd. "
    "Check it against autograd in float64.",
    "Compute the same gradients with your `scan_linear` instead of the loop, and "
    "time the forward and backward passes, both by scan, against autograd through "
    "the loop for T = 4096.",
    "The doubling scan does about T log T combines; the Blelloch scan does about 2T "
    "in two sweeps. Write it for a power-of-two T and count its `combine` calls and "
    "the elements they touch.",
)

RESULTS = """\
import time

print(f"{'T':>6} {'rounds':>6} {'|scan - loop|':>14} {'|grad - autograd|':>18} "
      f"{'loop ms':>8} {'scan ms':>8}")
for steps in (16, 256, 2048):
    gen = torch.Generator().manual_seed(steps)
    a = torch.rand(2, steps, 8, generator=gen)
    b = torch.randn(2, steps, 8, generator=gen, requires_grad=True)
    start = time.perf_counter()
    looped = loop_linear(a, b)
    loop_ms = 1000 * (time.perf_counter() - start)
    start = time.perf_counter()
    scanned = scan_linear(a, b)
    scan_ms = 1000 * (time.perf_counter() - start)
    grad_c = torch.randn(2, steps, 8, generator=gen)
    (looped * grad_c).sum().backward()
    grad_gap = (linear_recurrence_grad(a, grad_c) - b.grad).abs().max().item()
    gap = (scanned - looped).abs().max().item()
    print(f"{steps:>6} {math.ceil(math.log2(steps)):>6} {gap:>14.1e} "
          f"{grad_gap:>18.1e} {loop_ms:>8.1f} {scan_ms:>8.1f}")"""


LAB = Lab(
    slug="beyond",
    chapter="book/beyond",
    title="Lab 7: a recurrence that runs in parallel",
    intro=(
        "When a cell's gates read only the current input, its update $c_t = a_t "
        "\\odot c_{t-1} + b_t$ is linear in the previous state, and one step is the "
        "pair $(a_t, b_t)$. Two steps compose into one pair, and because that "
        "composition is associative, all the prefixes can be computed by a doubling "
        "scan in $\\lceil \\log_2 T \\rceil$ rounds instead of $T$ sequential steps. "
        "You write the composition, the plain loop, and the scan, and check that the "
        "scan equals the loop; then you run an LSTM whose gates read only $x_t$ "
        "through either of them."
    ),
    setup="import math\n\nimport torch\nfrom torch import nn",
    prediction=PREDICTION,
    stretch=STRETCH,
    results=RESULTS,
    exercises=[
        Exercise(
            target="chapter_code.beyond.linear_scan:combine",
            task=(
                "Return the single pair $(a, b)$ that does what applying `first` $= "
                "(a_1, b_1)$ and then `second` $= (a_2, b_2)$ does to any state $c$. "
                "All tensors have one shape; products are elementwise."
            ),
            hints=(
                "Write out what happens to a state $c$: first $a_1 c + b_1$, then "
                "the second step applied to "
                "that. Collect the result as (something) $\\cdot c$ + (something).",
                "The new $a$ is a product of the two scalings; the new $b$ is the "
                "first step's $b$ passed "
                "through the second step's scaling, plus the second step's own $b$.",
            ),
            checkpoint=checkpoint_combine,
            reference=reference_combine,
            minutes=10,
        ),
        Exercise(
            target="chapter_code.beyond.linear_scan:loop_linear",
            context=("chapter_code.beyond.linear_scan:_check_pairs",),
            task=(
                "Compute every $c_t = a_t \\odot c_{t-1} + b_t$, one step at a time, "
                "from `c0` (zeros if it is `None`); `a` and `b` are `(B, T, H)`; "
                "return all the states `(B, T, H)`."
            ),
            hints=(
                "This is the plain recurrence loop of Lab 1 without weights or a "
                "tanh: one state carried along time.",
                "Start from `torch.zeros_like(b[:, 0])` or `c0`; for each `t` update "
                "the `(B, H)` state from "
                "`a[:, t]` and `b[:, t]` and append it; `torch.stack(..., dim=1)`.",
            ),
            checkpoint=checkpoint_loop_linear,
            reference=reference_loop_linear,
            minutes=10,
        ),
        Exercise(
            target="chapter_code.beyond.linear_scan:scan_linear",
            context=("chapter_code.beyond.linear_scan:_check_pairs",),
            task=(
                "Compute the same states as `loop_linear` by the doubling "
                "(Hillis-Steele) scan: in the round of offset $d = 1, 2, 4, \\dots$ "
                "every position $t \\ge d$ combines, with your `combine`, the pair "
                "that ends at $t - d$ (as `first`) with its own (as `second`). Call "
                "`combine` once per round, on whole slices. Fold `c0`, if given, into "
                "the first step; write no tensor in place."
            ),
            hints=(
                "After the round of offset $d$, position $t$ holds the composition of "
                "the last $2d$ steps up to it (or of all of them, if there are "
                "fewer). The first $d$ positions do not change in that round. With "
                "$c_0$ folded into $b_1$, the $b$ of a full prefix is the state "
                "itself.",
                "Fold `c0` in by rebuilding `b` (with `torch.cat`) so that its first "
                "step already holds the state after step 1. Then, while the offset is "
                "below the length: combine the slices that end `offset` places early "
                "with the slices that start at `offset`, put the first `offset` "
                "positions back in front, and double the offset. The answer is the "
                "final `b`.",
            ),
            checkpoint=checkpoint_scan_linear,
            reference=reference_scan_linear,
            minutes=30,
        ),
        Exercise(
            target="chapter_code.beyond.linear_scan:InputGatedLSTM",
            context=("chapter_code.core.arguments:positive_ints",),
            task=(
                "Write `forward`: an LSTM whose gates and candidate read only $x_t$, "
                "so that its cell is the linear recurrence of this lab. `self.blocks` "
                "maps `x` `(B, T, F)` to the four blocks at every step at once, in "
                "`nn.LSTM`'s order i, f, g, o. Turn them into the pairs $(a_t, b_t)$, "
                "get every $c_t$ from `scan_linear` (or `loop_linear` when `parallel` "
                "is false), starting from $c_0 = 0$, and return every $h_t$ `(B, T, "
                "H)`. The LSTM's update, from Chapter 3, is $c_t = f_t \\odot c_{t-1} "
                "+ i_t \\odot g_t$, with $h_t = o_t \\odot \\tanh(c_t)$."
            ),
            hints=(
                "Set the LSTM's update from the task beside $c_t = a_t \\odot c_{t-1} "
                "+ b_t$: which gate is $a_t$, and what is $b_t$? None "
                "of them needs $h_{t-1}$, so all steps are computed at once.",
                "Split `self.blocks(x)` into four along the last axis and squash each "
                "as an LSTM does; read the pair off the comparison of hint 4.1 (one "
                "gate alone, and one product); run the scan or the loop on it; the "
                "outputs come from the cell states as in any LSTM.",
            ),
            checkpoint=checkpoint_input_gated_lstm,
            reference=reference_input_gated_lstm,
            minutes=20,
        ),
        Exercise(
            target="labs.solutions:linear_recurrence_grad",
            task=(
                "Beyond the page: the backward pass of the recurrence $c_t = a_t "
                "\\odot c_{t-1} + b_t$, without autograd. `grad_c[:, t]` is a loss's "
                "direct gradient at $c_t$; return the loss's gradient with respect to "
                "every $b_t$, `(B, T, H)`, computed with your `loop_linear`. The "
                "chapter does not derive it; the checkpoint compares with autograd."
            ),
            hints=(
                "Write $g_t$ for the loss's whole gradient at $c_t$: $c_t$ reaches "
                "the loss directly and through the next state. How does $g_t$ depend "
                "on $g_{t+1}$? And what is the gradient at $b_t$, given $g_t$?",
                "That dependence is a linear recurrence of the kind your `loop_linear` "
                "computes, run from the last step to the first, with each step's "
                "scaling taken from its neighbour (and nothing beyond the end): "
                "reverse time, run the loop, and reverse the result.",
            ),
            checkpoint=checkpoint_linear_recurrence_grad,
            reference=reference_linear_recurrence_grad,
            minutes=25,
        ),
    ],
)
