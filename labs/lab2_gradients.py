"""Lab for "Gradients through time": backpropagation through time by hand, the Jacobian
product, clipping.
"""

from __future__ import annotations

from bookbuild.tools.labs import Exercise, Lab, Prediction


def checkpoint_bptt_vanilla(bptt_vanilla):
    """Every gradient of bptt_vanilla against autograd in float64, naming the first one
    that is wrong.
    """
    import torch
    from torch import nn

    torch.manual_seed(2)
    rnn = nn.RNN(3, 4, batch_first=True).double()  # F = 3, H = 4
    x = torch.randn(2, 5, 3, dtype=torch.float64, requires_grad=True)
    h0 = torch.randn(2, 4, dtype=torch.float64, requires_grad=True)
    states, _ = rnn(x, h0.unsqueeze(0))  # (B, T, H)
    # the loss is sum(grad_states * states)
    grad_states = torch.randn(2, 5, 4, dtype=torch.float64)
    want = dict(
        zip(
            ["weight_ih", "weight_hh", "bias", "x", "h0"],
            torch.autograd.grad(
                (states * grad_states).sum(),
                [rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0, x, h0],
            ),
            strict=True,
        )
    )
    got = bptt_vanilla(
        x.detach(),
        states.detach(),
        h0.detach(),
        rnn.weight_ih_l0.detach(),
        rnn.weight_hh_l0.detach(),
        grad_states,
    )
    last = (got.x[:, -1] - want["x"][:, -1]).abs().max().item()
    assert last < 1e-9, (
        f"even the gradient at the last input is off by {last:.3g}; nothing flows "
        "into it from later steps, so look at the step through the tanh: its "
        "derivative is written with the state the tanh produced"
    )
    gap_x = (got.x - want["x"]).abs().max().item()
    assert gap_x < 1e-9, (
        "the gradient at the last input is right but earlier ones are off by up to "
        f"{gap_x:.3g}: check what each step hands back to the step before it (through "
        "which weight, which way round), and that the walk goes from the last step "
        "to the first"
    )
    for name in ("weight_ih", "bias", "weight_hh", "h0"):
        gap = (getattr(got, name) - want[name]).abs().max().item()
        hint = {
            "weight_hh": (
                "each use of W_hh pairs the step's gradient with the state that "
                "step read, h_{t-1}"
            ),
            "h0": "the gradient left over after the first step is the gradient with "
            "respect to h0",
            "bias": "sum the steps' gradients over the batch and over time",
            "weight_ih": (
                "each use of W_ih pairs the step's gradient with that step's input"
            ),
        }[name]
        assert gap < 1e-9, (
            f"the gradient with respect to {name} differs from autograd's by up to "
            f"{gap:.3g}: {hint}"
        )
    per_use = got.weight_hh_per_use
    shape = tuple(per_use.shape)
    assert shape == (5, 4, 4), (
        f"weight_hh_per_use should be (T, H, H) = (5, 4, 4); got {shape}"
    )
    summed = (per_use.sum(dim=0) - want["weight_hh"]).abs().max()
    assert summed < 1e-9, "the per-use terms should add up to the W_hh gradient"
    print("Checkpoint passed: bptt_vanilla agrees with autograd on every gradient")


def checkpoint_jacobian_product_norms(jacobian_product_norms):
    """Norms of dh_T/dh_s from autograd (nn.RNNCell re-run from h_s), distance by
    distance.
    """
    import torch
    from torch import nn

    torch.manual_seed(3)
    cell = nn.RNNCell(2, 4).double()
    steps = 5
    x = torch.randn(steps, 2, dtype=torch.float64)
    h = [torch.randn(4, dtype=torch.float64)]  # h_0
    with torch.no_grad():
        for t in range(steps):
            h.append(cell(x[t : t + 1], h[-1].unsqueeze(0))[0])
    states = torch.stack(h[1:])  # (T, H): h_1 .. h_T

    def last_from(s):
        def run(h_s):
            for t in range(s, steps):
                h_s = cell(x[t : t + 1], h_s.unsqueeze(0))[0]
            return h_s

        return run

    # distance d = T - s
    want = [
        torch.linalg.matrix_norm(
            torch.autograd.functional.jacobian(last_from(s), h[s]), ord=2
        ).item()
        for s in range(steps, -1, -1)
    ]
    got = jacobian_product_norms(states, cell.weight_hh.detach())
    assert len(got) == steps + 1, (
        f"one norm per distance 0..T: {steps + 1} numbers for T = {steps}; got "
        f"{len(got)}"
    )
    assert abs(got[0] - 1.0) < 1e-9, (
        f"at distance 0 the Jacobian is the identity, norm 1; got {got[0]}"
    )
    powers = [
        torch.linalg.matrix_norm(
            torch.linalg.matrix_power(cell.weight_hh.detach(), d), ord=2
        ).item()
        for d in range(steps + 1)
    ]
    if all(abs(g - p) < 1e-9 for g, p in zip(got, powers, strict=True)):
        raise AssertionError(
            "your norms are those of W_hh^d: each step's Jacobian also holds the "
            "tanh's derivative at that step's state"
        )
    assert abs(got[1] - want[1]) < 1e-9, (
        f"at distance 1 the norm should be {want[1]:.4f}; got {got[1]:.4f}: one step "
        "back is the last state's tanh derivative times W_hh"
    )
    bad = [
        d for d in range(steps + 1) if abs(got[d] - want[d]) > 1e-9 * max(1.0, want[d])
    ]
    assert not bad, (
        f"the norms at distances {bad} differ from autograd's "
        f"({[round(want[d], 4) for d in bad]}); got "
        f"{[round(got[d], 4) for d in bad]}: walk back one step at a time, using the "
        "state of the step you are crossing, and keep the order of the factors"
    )
    print(
        "Checkpoint passed: jacobian_product_norms agrees with autograd's Jacobians "
        "at every distance"
    )


def checkpoint_clip_gradients(clip_gradients):
    """Check the returned norm, the clipped gradients, one factor for all parameters,
    and no change below kappa.
    """
    import torch
    from torch import nn

    def params_with(grads):
        params = [nn.Parameter(torch.zeros_like(g)) for g in grads]
        for p, g in zip(params, grads, strict=True):
            p.grad = g.clone()
        return params

    # joint norm 5: each alone is 3 or 4
    grads = [torch.tensor([3.0, 0.0]), torch.tensor([[0.0, 4.0]])]
    ours = params_with(grads)
    norm = clip_gradients(ours, 1.0)
    assert norm is not None, (
        "clip_gradients should return the norm before clipping; it returned None"
    )
    assert abs(float(norm) - 5.0) < 1e-4, (
        f"clip_gradients should return the norm before clipping, 5.0 here; got {norm}"
    )
    unchanged = all(torch.equal(p.grad, g) for p, g in zip(ours, grads, strict=True))
    assert not unchanged, (
        "clip_gradients returned the norm 5.0 but left every .grad as it was, so "
        "clipping at kappa = 1.0 did nothing: the rescaled gradients were made as new "
        "tensors and never written into the parameters' own .grad tensors"
    )
    joint = torch.sqrt(sum(p.grad.pow(2).sum() for p in ours)).item()
    assert abs(joint - 1.0) < 1e-4, (
        "after clipping at kappa = 1.0 the joint norm of all gradients should be "
        f"1.0, got {joint:.3f}: the factor should come from the norm of all the "
        "gradients together and be the same for every parameter, not one per parameter"
    )
    for p, g in zip(ours, grads, strict=True):
        assert torch.allclose(p.grad, g / 5.0, atol=1e-5), (
            "each gradient should be scaled by the same factor 1/5 (its direction "
            f"kept); got {p.grad.tolist()} from {g.tolist()}"
        )
    small = params_with([torch.tensor([0.3, 0.4])])
    clip_gradients(small, 1.0)
    assert torch.allclose(small[0].grad, torch.tensor([0.3, 0.4])), (
        "a gradient whose norm (0.5) is below kappa (1.0) must not change; got "
        f"{small[0].grad.tolist()}"
    )
    torch.manual_seed(0)
    model = nn.Linear(6, 3)
    model(torch.randn(8, 6)).pow(2).sum().backward()
    twin = [nn.Parameter(p.detach().clone()) for p in model.parameters()]
    for t, p in zip(twin, model.parameters(), strict=True):
        t.grad = p.grad.clone()
    theirs = torch.nn.utils.clip_grad_norm_(twin, 0.5).item()
    mine = clip_gradients(list(model.parameters()), 0.5)
    assert abs(float(mine) - theirs) < 1e-4 * theirs, (
        f"the norm should be {theirs:.4f}, as PyTorch finds; got {mine}"
    )
    gap = max(
        (p.grad - t.grad).abs().max().item()
        for p, t in zip(model.parameters(), twin, strict=True)
    )
    assert gap < 1e-5, (
        "the clipped gradients differ from torch.nn.utils.clip_grad_norm_'s by "
        f"{gap:.2g}"
    )
    print(
        "Checkpoint passed: clip_gradients matches clip_grad_norm_ and keeps the "
        "direction"
    )


def checkpoint_clip_gradient_values(clip_gradient_values):
    """A small layer's gradients, with entries on both sides of the limit 3.0, against
    nn.utils.clip_grad_value_ on a copy; the count against the entries outside the
    limit before clipping.
    """
    import torch
    from torch import nn

    def fresh():
        torch.manual_seed(4)
        model = nn.Linear(4, 3)
        model(torch.randn(6, 4)).pow(2).sum().backward()
        return model

    limit, theirs, ours = 3.0, fresh(), fresh()
    nn.utils.clip_grad_value_(theirs.parameters(), limit)
    before = [p.grad.clone() for p in ours.parameters()]
    count = clip_gradient_values(list(ours.parameters()), limit)
    after = [p.grad for p in ours.parameters()]
    if all(torch.equal(a, b) for a, b in zip(after, before, strict=True)):
        raise AssertionError(
            "the parameters' .grad did not change: the clipped values must be "
            "written into the gradients the optimizer reads, in place"
        )
    for a, b, t in zip(after, before, theirs.parameters(), strict=True):
        inside = b.abs() <= limit
        assert torch.equal(a[inside], b[inside]), (
            "an entry already inside [-3, 3] changed: clipping by value leaves those "
            "alone (rescaling every entry is clipping by the norm)"
        )
        assert bool((a >= -limit).all()), (
            "entries below -3 were left as they were: the limit holds on the "
            "negative side too"
        )
        assert bool((a <= limit).all()), "entries above 3 were left as they were"
        gap = (a - t.grad).abs().max().item()
        assert gap < 1e-6, (
            "the clipped gradients differ from nn.utils.clip_grad_value_'s by "
            f"{gap:.3g}"
        )
    outside = sum(int((b.abs() > limit).sum()) for b in before)
    assert isinstance(count, int), (
        f"clip_gradient_values should return a whole number (an int); got "
        f"{type(count).__name__}"
    )
    assert count == outside, (
        f"{outside} entries lay outside [-3, 3] before clipping; your function "
        f"returned {count}"
        + (": count them before you clip, not after" if count == 0 else "")
    )
    print(
        "Checkpoint passed: clip_gradient_values matches nn.utils.clip_grad_value_ and "
        f"counts the {outside} entries it changed"
    )


PREDICTION = Prediction(
    question=(
        "Clipping changes a gradient's length; does it change its direction? An RNN's "
        "gradient is clipped twice, once by your `clip_gradients` (joint norm at most "
        "1) and once by your `clip_gradient_values` (every entry within 20). Guess "
        "the cosine between the gradient before and after each: exactly 1, about "
        "0.9, about 0.5, or lower?"
    ),
    guess=(
        "# your guesses, before you run the next cell (a number each)\n"
        "guess_cosine_by_norm = None\n"
        "guess_cosine_by_value = None"
    ),
    measure="""\
def rnn_with_gradient():
    torch.manual_seed(0)
    model = nn.RNN(3, 8, batch_first=True)
    states, _ = model(torch.randn(4, 30, 3))
    states.pow(2).sum().backward()
    return model


def joined(model):
    return torch.cat([p.grad.flatten() for p in model.parameters()])


by_norm, by_value = rnn_with_gradient(), rnn_with_gradient()
before = joined(by_norm)
clip_gradients(by_norm.parameters(), 1.0)
changed = clip_gradient_values(by_value.parameters(), 20.0)
cosine = nn.functional.cosine_similarity
measured_cosine_by_norm = cosine(before, joined(by_norm), dim=0).item()
measured_cosine_by_value = cosine(before, joined(by_value), dim=0).item()""",
    compare="""\
print(f"by the norm:  you guessed {guess_cosine_by_norm}, "
      f"measured {measured_cosine_by_norm:.4f}")
print(f"by the value: you guessed {guess_cosine_by_value}, "
      f"measured {measured_cosine_by_value:.4f} "
      f"({changed} of {before.numel()} entries clipped)")""",
)

STRETCH = (
    "Truncated backpropagation through time: give your `bptt_vanilla` an argument "
    "`k` so that what a step hands back is dropped after `k` steps. Check it against "
    "autograd on a loop that detaches the state every `k` steps, and measure how the "
    "gradient of the first input changes with `k`.",
    "Train a small `nn.RNN` on a task of your choice three times: no clipping, "
    "clipping by the norm, clipping by value. Plot the loss against the step; does "
    "clipping by value still train when its limit is tiny?",
    "Find, for a random `W_hh` of size 16, the scale at which your Jacobian norms "
    "stop shrinking with distance. How does it compare with the spectral norm of "
    "`W_hh`, and why do the tanh's derivatives move it?",
)

RESULTS = """\
x = torch.randn(1, 30, 3, generator=torch.Generator().manual_seed(2))
distances = (1, 5, 10, 20, 30)
print(f"{'||W_hh||_2':>10}" + "".join(f"{'d = ' + str(d):>10}" for d in distances))
for scale in (0.5, 1.0, 2.0):
    torch.manual_seed(2)
    rnn = nn.RNN(3, 16, batch_first=True)
    with torch.no_grad():
        w = rnn.weight_hh_l0
        w.mul_(scale / torch.linalg.matrix_norm(w, ord=2))  # spectral norm = scale
        states = rnn(x)[0][0]  # (T, H)
        norms = jacobian_product_norms(states, w)
    print(f"{scale:>10}" + "".join(f"{norms[d]:>10.2e}" for d in distances))"""


LAB = Lab(
    slug="gradients",
    chapter="book/gradients",
    title="Lab 2: gradients through time",
    intro=(
        "Backpropagation through time is the chain rule run backwards along the "
        "unrolled recurrence: every step hands the step before it the gradient that "
        "crosses it, and every use of a shared weight adds one term. You write that "
        "backward walk for the vanilla RNN and check it against autograd; then the "
        "norms of the Jacobian products that decide whether a gradient vanishes or "
        "explodes over distance; then clipping by the global norm, against PyTorch's "
        "`clip_grad_norm_`."
    ),
    setup=(
        "import math\nfrom collections.abc import Iterable\nfrom dataclasses import "
        "dataclass\n\nimport torch\nfrom torch import nn"
    ),
    prediction=PREDICTION,
    stretch=STRETCH,
    results=RESULTS,
    exercises=[
        Exercise(
            target="chapter_code.bptt.gradients:bptt_vanilla",
            context=("chapter_code.bptt.gradients:BPTTGrads",),
            task=(
                "`prev[:, t]` is $h_{t-1}$ for each step. Walk from the last step to "
                "the first: the total gradient of $h_t$ is `grad_states[:, t]` plus "
                "what step $t+1$ handed back; take it through the tanh, add this "
                "step's terms to the gradients of `weight_ih`, `weight_hh` (one term "
                "per step, kept in `per_use`) and the bias, write the gradient of "
                "`x[:, t]`, and hand the rest to step $t-1$. Return a `BPTTGrads`; "
                "its `h0` is what is handed back from the first step."
            ),
            hints=(
                "Shapes first: the gradient of a state is `(B, H)`, like the state. A "
                "product of a `(B, H)` gradient with a `(B, K)` tensor that gives a "
                "`(H, K)` weight gradient needs a transpose on one side. The tanh's "
                "derivative can be read from its output: $1 - h_t^2$.",
                "Keep a `carry` `(B, H)`, zero to start. For `t` in "
                "`reversed(range(steps))`: `g` = direct gradient + carry; `da = g * "
                "(1 - states[:, t] ** 2)`; weight terms are `da.T @ (what the weight "
                "multiplied)`; the bias term sums `da` over the batch; the input "
                "gradient and the new carry are `da` times the matching weight, not "
                "transposed.",
            ),
            checkpoint=checkpoint_bptt_vanilla,
            minutes=30,
        ),
        Exercise(
            target="chapter_code.bptt.gradients:jacobian_product_norms",
            task=(
                "`states` is `(T, H)`, the states $h_1..h_T$ of one sequence. Return "
                "the spectral norms of $\\partial h_T / \\partial h_s$ for $s = T, "
                "T-1, \\dots, 0$: the list starts with 1 (distance 0, the identity) "
                "and grows by one product per step back."
            ),
            hints=(
                "One step back multiplies the product so far by that step's Jacobian; "
                "start from the identity and record a norm after every multiplication.",
                "Step $t$'s Jacobian is $\\mathrm{diag}(1 - h_t^2)\\,W_{hh}$: scaling "
                "the rows of `weight_hh` by `(1 - states[t] ** 2).unsqueeze(1)` "
                "builds it without a diagonal matrix. Walk `t` from the last state "
                "down, multiply the new factor on the right, and take "
                "`torch.linalg.matrix_norm(product, ord=2)`.",
            ),
            checkpoint=checkpoint_jacobian_product_norms,
            minutes=15,
        ),
        Exercise(
            target="chapter_code.bptt.clipping:clip_gradients",
            task=(
                "The parameters' gradients are already collected in `grads`. Compute "
                "their joint norm $\\lVert g \\rVert$ (all entries of all gradients "
                "as one vector), rescale every gradient in place by $\\min(1, \\kappa "
                "/ \\lVert g \\rVert)$, and return the norm before clipping as a "
                "float."
            ),
            hints=(
                '"Joint" is the point: the norm is computed once, over all '
                "parameters together, and the same "
                "factor is applied to each of them.",
                "Sum the squared entries of every gradient, take one square root, "
                "turn it into a Python float; compute the factor (a tiny constant in "
                "the denominator avoids dividing by zero); only if it is below 1, "
                "multiply each gradient in place (`mul_`).",
            ),
            checkpoint=checkpoint_clip_gradients,
            minutes=15,
        ),
        Exercise(
            target="labs.solutions:clip_gradient_values",
            task=(
                "Beyond the page: the other common way to clip. The gradients of the "
                "parameters that have one are in `grads`. Clip every entry into "
                "$[-\\text{limit}, \\text{limit}]$ in place, each entry on its own, "
                "and return how many entries the clipping changed, as an `int`. The "
                "chapter clips by the norm only; check yours against "
                "`nn.utils.clip_grad_value_`."
            ),
            hints=(
                "An entry inside the interval must come out untouched, and the "
                "count is of entries that lay outside it before you clipped.",
                "Loop over the gradients: count the entries whose size exceeds the "
                "limit, then clamp the tensor in place (a method whose name ends in "
                "an underscore) with both bounds.",
            ),
            checkpoint=checkpoint_clip_gradient_values,
            minutes=10,
        ),
    ],
)
