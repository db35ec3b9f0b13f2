"""The panels of "Gradients through time": one unit's gradient through time, and the
two truncation lanes.

Each panel is its data (beats, controls and a transcript whose result sentences are
checked as the data is built, :func:`chapter_code.panels.beats.claim`) and its static
figure, both computed by this chapter's own code; :mod:`chapter_code.panels.data` and
:mod:`chapter_code.panels.figures` list every panel of the book.

Page: "Gradients through time", through the ``book-panel`` directive.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure

from chapter_code.bptt.figures import plot_one_unit
from chapter_code.bptt.gradients import one_unit_gradient
from chapter_code.bptt.truncation import cut_every, unroll
from chapter_code.core.plotting import COLORS, use_book_style
from chapter_code.panels.beats import (
    Panel,
    beat,
    claim,
    number,
)
from chapter_code.rnn.recurrence import ElmanRNN

# ----------------------------------------------------------------------------- one-unit
# RNN

#: Steps the one-unit panel runs (the chapter's figure runs the same length).
ONE_UNIT_STEPS = 60
#: The bottom of the panel's log axis; smaller products are drawn on it.
ONE_UNIT_FLOOR = 1e-30
# the three rows of the chapter's table
ONE_UNIT_CASES = [(0.9, 0.0), (2.0, 0.0), (2.0, 0.5)]


def one_unit_panel() -> Panel:
    """Measured |dh_T/dh_s| against the bound |w|^(T-s) for the chapter's three cases; w
    and x sliders.
    """
    small, linear, saturated = (
        one_unit_gradient(w, x, ONE_UNIT_STEPS) for w, x in ONE_UNIT_CASES
    )
    d = ONE_UNIT_STEPS
    claim(
        abs(small.products[d] - small.bounds[d]) <= 1e-12 * small.bounds[d],
        "that the product equals the bound",
    )
    claim(
        linear.products[d] == linear.bounds[d] > 1,
        "growth along the bound for w = 2, x = 0",
    )
    claim(
        saturated.products[d] < 1e-15 < saturated.bounds[d],
        "vanishing under a growing bound when saturated",
    )
    beats = [
        beat(
            {"w": small.w, "x": small.x},
            f"$w = {small.w:g}$ and $x = {small.x:g}$: the state stays at "
            f"{small.states[-1]:g}, every factor is exactly $w$, and the measured "
            f"product (solid) lies on the bound (dashed); {d} steps back both are "
            f"{number(small.products[d])}. The gradient vanishes, as the bound says "
            "it must.",
        ),
        beat(
            {"w": linear.w, "x": linear.x},
            f"The weight rises to $w = {linear.w:g}$, the input stays {linear.x:g}. "
            f"The state is still {linear.states[-1]:g}, where $\\tanh$ passes the "
            "gradient "
            "unchanged, so the product climbs along the bound to "
            f"{number(linear.products[d])} at {d} steps back: it explodes.",
        ),
        beat(
            {"w": saturated.w, "x": saturated.x},
            f"Same weight, input $x = {saturated.x:g}$. The state saturates at "
            f"{saturated.states[-1]:.3f}, each factor $(1 - h^2)\\,w$ is "
            f"{saturated.factors[-1]:.3f}, and the product falls to "
            f"{number(saturated.products[d])} while the bound still climbs to "
            f"{number(saturated.bounds[d])}. A weight above 1 permits explosion; "
            "saturation turns it into vanishing.",
        ),
    ]
    return {
        "name": "one-unit",
        "title": "One hidden unit: the measured gradient product against the bound",
        "summary": (
            f"A one-unit RNN $h_t = \\tanh(w\\,h_{{t-1}} + x)$ run for {d} steps "
            "from $h_0 = 0$. Solid: the measured $|\\partial h_T / \\partial h_s|$, "
            "the product of the one-step factors; dashed: the bound $|w|^{T-s}$. The "
            "vertical axis is logarithmic."
        ),
        "alt": (
            "A line chart on a logarithmic vertical axis: the measured gradient "
            "product and its bound against the distance back in time, for the "
            "panel's weight and input."
        ),
        "note": "Measured, not illustrative: every point is computed by "
        "`one_unit_gradient`, here at build time and "
        "in your browser when you move a slider. Products below "
        f"{number(ONE_UNIT_FLOOR)} are drawn on the "
        "bottom edge.",
        "steps": d,
        "floor": ONE_UNIT_FLOOR,
        "controls": [
            {
                "id": "w",
                "label": "recurrent weight {w}",
                "min": -3.0,
                "max": 3.0,
                "step": 0.05,
            },
            {
                "id": "x",
                "label": "constant input {x}",
                "min": -1.0,
                "max": 1.0,
                "step": 0.05,
            },
        ],
        "symbols": {"w": "w", "x": "x"},
        "beats": beats,
    }


def one_unit_curves(
    w: float, x: float, steps: int = ONE_UNIT_STEPS
) -> dict[str, list[float]]:
    """What the panel's JavaScript computes for a slider value: products and bounds by
    distance, d = 0..steps.
    """
    trace = one_unit_gradient(w, x, steps)
    return {"products": trace.products, "bounds": trace.bounds}


# -----------------------------------------------------------------------------
# truncation lanes

# six steps, a cut after step 3, step 2's input followed
TRUNC_STEPS, TRUNC_CUT, TRUNC_MARKED = (6, 3, 2)


def crossing(
    steps: int, chunk: int, marked: int, loss_at: int, seed: int = 5
) -> dict[str, dict[str, list[int]]]:
    """For a small Elman RNN cut every ``chunk`` steps, in each lane (``carry``:
    detached; ``reset``: zero start):

    ``value``: the steps (1-based) whose state changes when the input at ``marked``
    changes (the value going forward); ``gradient``: the steps whose input receives a
    nonzero gradient from the state at ``loss_at``.
    """
    if not 1 <= marked <= loss_at <= steps:
        raise ValueError(
            f"need 1 <= marked <= loss_at <= steps; got marked={marked}, "
            f"loss_at={loss_at}, steps={steps}"
        )
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = ElmanRNN(2, 4).double()
        x = torch.randn(1, steps, 2, dtype=torch.float64)
    nudged = x.clone()
    nudged[0, marked - 1] += 1.0
    lanes = {
        "carry": {"gates": cut_every(steps, chunk).double()},
        "reset": {"reset_every": chunk},
    }
    out: dict[str, dict[str, list[int]]] = {}
    for lane, kwargs in lanes.items():
        xs = x.clone().requires_grad_(True)
        states = unroll(model, xs, **kwargs)  # (1, T, H)
        moved = (unroll(model, nudged, **kwargs) - states).abs().amax(dim=2)[0]  # (T,)
        (grad,) = torch.autograd.grad(states[0, loss_at - 1].sum(), xs)
        reached = grad[0].abs().amax(dim=1)  # (T,)
        out[lane] = {
            "value": [t + 1 for t in range(steps) if moved[t] > 0],
            "gradient": [t + 1 for t in range(steps) if reached[t] > 0],
        }
    return out


def truncation_panel() -> Panel:
    """Two lanes over one stream cut after a chunk: carry-and-detach against reset; what
    crosses the cut.
    """
    n, cut, m = TRUNC_STEPS, TRUNC_CUT, TRUNC_MARKED
    lanes = crossing(n, cut, m, loss_at=n)
    carry, reset = lanes["carry"], lanes["reset"]
    claim(
        carry["value"] == list(range(m, n + 1)),
        "that the carried value reaches the last step",
    )
    claim(
        reset["value"] == list(range(m, cut + 1)),
        "that the reset lane's value stops at the cut",
    )
    claim(
        carry["gradient"] == reset["gradient"] == list(range(cut + 1, n + 1)),
        "that the gradient stops at the cut",
    )
    q_steps, q_chunk, q_early, q_late = 9, 3, 5, 7
    question = crossing(q_steps, q_chunk, q_early, loss_at=q_steps)["carry"]
    claim(
        q_late in question["gradient"] and q_early not in question["gradient"],
        "the check question's answer",
    )
    claim(
        q_steps in question["value"],
        "that the early step's value reaches the last step",
    )
    first_grad = min(carry["gradient"])
    start = {
        "carryValue": 0,
        "resetValue": 0,
        "carryGrad": n + 1,
        "resetGrad": n + 1,
        "loss": 0,
        "verdict": 0,
    }
    beats = [
        beat(
            dict(start),
            f"One stream of {n} steps, drawn twice and split after step {cut}. Above, "
            f"the state goes over the split detached; below, step {cut + 1} restarts "
            f"from a zero state. Step {m}'s input is marked. Predict before stepping "
            "on: does the forward value get past the cut in either lane? Does the "
            "backward gradient?",
        ),
        beat(
            {**start, "carryValue": cut, "resetValue": cut},
            f"Step {m}'s input enters the state and rides forward to step {cut} in "
            "both lanes; the shaded states are the ones whose value it changes.",
        ),
        beat(
            {
                **start,
                "carryValue": max(carry["value"]),
                "resetValue": max(reset["value"]),
            },
            "In the carry lane the value crosses the cut and changes every state up "
            f"to step {max(carry['value'])}. In the reset lane it stops at step "
            f"{max(reset['value'])}: step {cut + 1} starts from zero.",
        ),
        beat(
            {
                **start,
                "carryValue": max(carry["value"]),
                "resetValue": max(reset["value"]),
                "loss": 1,
                "carryGrad": min(carry["gradient"]),
                "resetGrad": min(reset["gradient"]),
            },
            f"A loss at step {n}. Its gradient runs back through steps {n} to "
            f"{first_grad} in both lanes and stops "
            f"at the cut: the inputs of steps 1 to {cut} receive exactly zero.",
        ),
        beat(
            {
                **start,
                "carryValue": max(carry["value"]),
                "resetValue": max(reset["value"]),
                "loss": 1,
                "carryGrad": min(carry["gradient"]),
                "resetGrad": min(reset["gradient"]),
                "verdict": 1,
            },
            "At the cut, detach passes the value and stops the gradient; reset "
            f"passes neither. Step {n} uses step {m}'s value, yet no gradient from "
            f"step {n}'s loss can teach the model to keep it.",
        ),
    ]
    return {
        "name": "truncation-lanes",
        "title": "What crosses a truncation cut: carry and detach against reset",
        "summary": f"Two lanes of {n} steps with a cut after step {cut}. Round packets "
        "and shaded states: where "
        f"step {m}'s value reaches. Pointed packets and ringed states: where the "
        "gradient of the loss at "
        f"step {n} reaches.",
        "alt": (
            f"Two rows of {n} circles, the states of one stream, with a dashed cut "
            f"after step {cut}: shading marks where the value of step {m}'s input "
            f"reaches, rings where the gradient of the loss at step {n} reaches."
        ),
        "note": "Measured on a small network: which states the value changes and which "
        "inputs receive a nonzero "
        "gradient are computed by `unroll` (the chapter's listing) and autograd on a "
        "four-unit Elman RNN; "
        "the six steps and the one cut are a schematic of chunks that are in "
        "practice tens of steps long.",
        "steps": n,
        "cut": cut,
        "marked": m,
        "lanes": lanes,
        "check": {
            "question": (
                f"Chunks of {q_chunk} steps, carried and detached, over {q_steps} "
                f"steps. The state at step {q_steps} depends on the inputs of steps "
                f"{q_early} and {q_late}. Does its gradient get back to step "
                f"{q_early}, to step {q_late}, or to both?"
            ),
            "answer": f"Step {q_late}, not step {q_early}: the cuts fall after every "
            f"{q_chunk} steps, so the gradient "
            f"of step {q_steps} reaches only the inputs of steps "
            f"{', '.join(map(str, question['gradient']))} (computed with autograd). "
            "The value of step "
            f"{q_early} is not lost, though: the carried state brings it forward to "
            f"step {q_steps}.",
        },
        "controls": [],
        "beats": beats,
    }


GRADIENT = "#882255"  # wine: the gradient, as in the panel


def one_unit_figure() -> Figure:
    """The one-unit RNN's three cases, as the chapter's table lists them."""
    traces = [one_unit_gradient(w, x, ONE_UNIT_STEPS) for w, x in ONE_UNIT_CASES]
    return plot_one_unit(traces, [COLORS["lstm"], COLORS["rnn"], COLORS["gru"]])


def truncation_figure() -> Figure:
    """Two lanes: where the marked input's value reaches (shaded), where the last loss's
    gradient reaches (ringed).
    """
    use_book_style()
    n, cut, marked = TRUNC_STEPS, TRUNC_CUT, TRUNC_MARKED
    lanes = crossing(n, cut, marked, loss_at=n)
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    for row, (lane, name) in enumerate(
        [("carry", "carried, detached"), ("reset", "reset to zero")]
    ):
        y = 1 - row
        ax.text(0.4, y + 0.3, name, fontsize=11, fontweight="bold")
        for t in range(1, n + 1):
            shaded = t in lanes[lane]["value"]
            ringed = t in lanes[lane]["gradient"]
            ax.scatter(
                [t],
                [y],
                s=520,
                c=COLORS["other"] if shaded else "white",
                edgecolors=GRADIENT if ringed else "#595959",
                linewidths=3 if ringed else 1.2,
                zorder=3,
            )
            ax.text(t, y, f"$h_{t}$", ha="center", va="center", fontsize=10, zorder=4)
        crosses = max(lanes[lane]["value"]) > cut
        ax.text(
            cut + 0.55,
            y - 0.3,
            f"value {'crosses' if crosses else 'stops'}; gradient stops",
            fontsize=10,
        )
    ax.axvline(cut + 0.5, color="black", ls="--", lw=1)
    ax.text(marked, -0.55, f"$x_{marked}$ changed", ha="center", fontsize=10)
    ax.text(n, -0.55, f"loss at step {n}", ha="center", fontsize=10, color=GRADIENT)
    ax.set_xlim(0.3, n + 0.7)
    ax.set_ylim(-0.75, 1.5)
    ax.axis("off")
    fig.tight_layout()
    return fig
