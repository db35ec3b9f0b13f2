"""The data of the book's interactive panels, computed by the functions the chapters
teach.

A panel is a short sequence of *beats*: a state to draw and one sentence of
transcript that says what the picture shows at that beat, plus, for some
panels, parameter controls a reader may move. The player in ``panels/`` (plain
JavaScript and SVG) draws the states; every number it shows on a beat is
computed here, at build time, by the chapter's own code: the one-unit RNN by
:func:`chapter_code.bptt.gradients.one_unit_gradient`, the truncation lanes by
:func:`chapter_code.bptt.truncation.unroll` and autograd, the LSTM's gates by
:func:`chapter_code.gated.gates.lstm_update`, the forget-gate power by
:func:`chapter_code.gated.gates.forget_power`, the GRU's keep dial by
:func:`chapter_code.gated.gates.keep_dial`, the sampling explorer by
:func:`chapter_code.sampling.explorer.explorer_data` (the decoding rules of
:mod:`chapter_code.sampling.rules`). Where a slider asks for a value between
beats, the panel recomputes it in JavaScript; the browser tests compare those
numbers with the Python functions here.

Every sentence that states a result is checked when the data is built
(:func:`_claim` raises if it is false), so a panel cannot say what its numbers
do not show.

Text that a page shows (titles, summaries, notes, beats) writes its math as TeX
between dollar signs (``$b_f = +1$``) and the names of code between backticks; the
directive typesets the math as the page's own math and the names as code. A slider's
label and a setting's description name a symbol as ``{key}``, one of the panel's
``symbols`` (TeX), typeset once on the page. Each beat carries the number of words
of its narration (:func:`reading_words`): playing, the player holds a beat ``words *
msPerWord`` milliseconds (at 1x), after a move of ``moveMs``.

Pages: "Gradients through time" (``one-unit``, ``truncation-lanes``) and "Gated memory:
LSTM and GRU" (``lstm-gates``, ``forget-power``, ``keep-dial``), "Generating text"
(``sampling-explorer``), through the ``book-panel`` directive of
:mod:`bookbuild.site.panels`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import torch

from chapter_code.bptt.gradients import one_unit_gradient
from chapter_code.bptt.truncation import cut_every, unroll
from chapter_code.gated.gates import forget_power, keep_dial, lstm_update
from chapter_code.rnn.recurrence import ElmanRNN
from chapter_code.sampling.explorer import (
    EXPLORER_LOGITS,
    EXPLORER_TOKENS,
    explorer_data,
)

Panel = dict[str, Any]

#: Milliseconds a beat's move takes at 1x (nothing moves under reduced motion).
MOVE_MS = 1200
#: Milliseconds a beat is held per word of its narration at 1x: about 180 words a
#: minute, slow enough to read a sentence with numbers while looking at the picture.
MS_PER_WORD = 330

_SUPERSCRIPT = str.maketrans(
    "-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079"
)


def number(value: float, digits: int = 2) -> str:
    """A number as the panels print it: plain between 0.001 and 10000, else ``m × 10ⁿ``
    (``digits`` significant).
    """
    if value == 0 or 1e-3 <= abs(value) < 1e4:
        # rounded, then printed plainly: 9999 reads 10000, as the player's JavaScript
        # prints it, not 1e+04
        return f"{float(f'{value:.{digits + 1}g}'):g}" if value else "0"
    mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
    return f"{mantissa} \u00d7 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def _signed(value: float) -> str:
    """``+1``, ``0``, ``−1``: a bias as the panels print it."""
    return "0" if value == 0 else f"{value:+g}".replace("-", "\u2212")


def reading_words(text: str) -> int:
    """The words a reader reads in ``text``: its whitespace-separated pieces, math
    included (``$b_f = +1$`` is three).
    """
    return len(text.replace("$", "").split())


def _tex_signed(value: float) -> str:
    """``+1``, ``0``, ``-1``: a signed number inside TeX (an ASCII minus, which TeX
    sets as a minus sign).
    """
    return "0" if value == 0 else f"{value:+g}"


def _claim(condition: bool, what: str) -> None:
    """Refuse to build a panel whose transcript would state something its numbers do not
    show.
    """
    if not condition:
        raise AssertionError(
            f"panel data: the transcript claims {what}, but the computation disagrees"
        )


def _beat(state: dict[str, float], text: str) -> dict[str, Any]:
    """One beat; apostrophes typeset as the page typesets them (so the transcript and
    the data agree).
    """
    return {"state": state, "text": text.replace("'", "\u2019")}


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
    _claim(
        abs(small.products[d] - small.bounds[d]) <= 1e-12 * small.bounds[d],
        "that the product equals the bound",
    )
    _claim(
        linear.products[d] == linear.bounds[d] > 1,
        "growth along the bound for w = 2, x = 0",
    )
    _claim(
        saturated.products[d] < 1e-15 < saturated.bounds[d],
        "vanishing under a growing bound when saturated",
    )
    beats = [
        _beat(
            {"w": small.w, "x": small.x},
            f"$w = {small.w:g}$ and $x = {small.x:g}$: the state stays at "
            f"{small.states[-1]:g}, every factor is exactly $w$, and the measured "
            f"product (solid) lies on the bound (dashed); {d} steps back both are "
            f"{number(small.products[d])}. The gradient vanishes, as the bound says "
            "it must.",
        ),
        _beat(
            {"w": linear.w, "x": linear.x},
            f"The weight rises to $w = {linear.w:g}$, the input stays {linear.x:g}. "
            f"The state is still {linear.states[-1]:g}, where $\\tanh$ passes the "
            "gradient "
            "unchanged, so the product climbs along the bound to "
            f"{number(linear.products[d])} at {d} steps back: it explodes.",
        ),
        _beat(
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
    _claim(
        carry["value"] == list(range(m, n + 1)),
        "that the carried value reaches the last step",
    )
    _claim(
        reset["value"] == list(range(m, cut + 1)),
        "that the reset lane's value stops at the cut",
    )
    _claim(
        carry["gradient"] == reset["gradient"] == list(range(cut + 1, n + 1)),
        "that the gradient stops at the cut",
    )
    q_steps, q_chunk, q_early, q_late = 9, 3, 5, 7
    question = crossing(q_steps, q_chunk, q_early, loss_at=q_steps)["carry"]
    _claim(
        q_late in question["gradient"] and q_early not in question["gradient"],
        "the check question's answer",
    )
    _claim(
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
        _beat(
            dict(start),
            f"One stream of {n} steps, drawn twice and split after step {cut}. Above, "
            f"the state goes over the split detached; below, step {cut + 1} restarts "
            f"from a zero state. Step {m}'s input is marked. Predict before stepping "
            "on: does the forward value get past the cut in either lane? Does the "
            "backward gradient?",
        ),
        _beat(
            {**start, "carryValue": cut, "resetValue": cut},
            f"Step {m}'s input enters the state and rides forward to step {cut} in "
            "both lanes; the shaded states are the ones whose value it changes.",
        ),
        _beat(
            {
                **start,
                "carryValue": max(carry["value"]),
                "resetValue": max(reset["value"]),
            },
            "In the carry lane the value crosses the cut and changes every state up "
            f"to step {max(carry['value'])}. In the reset lane it stops at step "
            f"{max(reset['value'])}: step {cut + 1} starts from zero.",
        ),
        _beat(
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
        _beat(
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


# ----------------------------------------------------------------------------- LSTM
# gates

#: Illustrative openings (forget, input, output) and candidate per step, from a stored
#: cell c_0.
LSTM_C0 = 0.8
LSTM_STEPS = [  # (f, i, o, g)
    (1.0, 0.0, 0.0, 0.0),
    (1.0, 0.0, 1.0, 0.0),
    (0.5, 0.0, 1.0, 0.0),
    (0.5, 1.0, 0.5, 0.6),
    (0.0, 1.0, 1.0, -0.5),
]


def lstm_gate_states(
    c0: float = LSTM_C0, steps: list[tuple[float, float, float, float]] = LSTM_STEPS
) -> list[dict]:
    """One LSTM unit stepped through given gate openings with :func:`lstm_update`; per
    step f, i, o, g, c_prev, c, h.
    """
    c = torch.tensor([c0], dtype=torch.float64)
    out = []
    for f, i, o, g in steps:
        for name, gate in [("f", f), ("i", i), ("o", o)]:
            if not 0.0 <= gate <= 1.0:
                raise ValueError(f"gate {name} must be in [0, 1]; got {gate}")
        if not -1.0 <= g <= 1.0:
            raise ValueError(f"candidate g must be in [-1, 1]; got {g}")
        one = torch.ones(1, dtype=torch.float64)
        h, c_new = lstm_update(c, i * one, f * one, g * one, o * one)
        out.append(
            {
                "f": f,
                "i": i,
                "o": o,
                "g": g,
                "cPrev": c.item(),
                "c": c_new.item(),
                "h": h.item(),
            }
        )
        c = c_new
    return out


def lstm_gates_panel() -> Panel:
    """One LSTM unit through five steps of illustrative gate openings: the cell carried,
    the hidden state shown.
    """
    s = lstm_gate_states()
    _claim(
        s[0]["c"] == LSTM_C0 and s[0]["h"] == 0.0,
        "that a shut output gate hides a kept cell",
    )
    _claim(
        s[1]["c"] == s[0]["c"] and s[1]["h"] > 0, "that reopening shows the same cell"
    )
    _claim(
        abs(s[3]["c"] - (s[3]["f"] * s[3]["cPrev"] + s[3]["i"] * s[3]["g"])) < 1e-12,
        "the additive update",
    )
    _claim(s[4]["c"] == s[4]["g"], "that f = 0, i = 1 overwrites the cell")

    def fmt(v: float) -> str:
        return f"{v:.3f}".rstrip("0").rstrip(".") if v != 0 else "0"

    texts = [
        f"Forget gate {fmt(s[0]['f'])}, input gate {fmt(s[0]['i'])}: the cell keeps "
        f"its {fmt(s[0]['cPrev'])}. The output gate is shut, so the hidden state "
        f"shows {fmt(s[0]['h'])}: the value is stored, not shown.",
        f"The output gate opens to {fmt(s[1]['o'])}. The cell is unchanged at "
        f"{fmt(s[1]['c'])}; the hidden state shows $\\tanh$ of it, {fmt(s[1]['h'])}.",
        f"The forget gate drops to {fmt(s[2]['f'])}: the cell keeps half of "
        f"{fmt(s[2]['cPrev'])}, "
        f"{fmt(s[2]['c'])}, and the hidden state follows, {fmt(s[2]['h'])}.",
        f"The input gate opens to {fmt(s[3]['i'])} on a candidate of "
        f"{fmt(s[3]['g'])}: the cell becomes {fmt(s[3]['f'])} \u00d7 "
        f"{fmt(s[3]['cPrev'])} + {fmt(s[3]['i'])} \u00d7 {fmt(s[3]['g'])} = "
        f"{fmt(s[3]['c'])}, a sum, not a product. The output gate at {fmt(s[3]['o'])} "
        f"shows {fmt(s[3]['h'])}.",
        f"Forget gate {fmt(s[4]['f'])}, input gate {fmt(s[4]['i'])}: the old cell is "
        f"discarded and the candidate {_signed(s[4]['g']).lstrip('+')} overwrites it; "
        f"the open output gate shows {_signed(round(s[4]['h'], 3)).lstrip('+')}.",
    ]
    return {
        "name": "lstm-gates",
        "title": "The LSTM's three gates: what the cell keeps, what it writes, what it "
        "shows",
        "summary": f"One LSTM unit over {len(s)} steps. Three bars: the forget, input "
        "and output gates' openings. The top line: the carried cell state $c$, from "
        "$c_{t-1}$ to $c_t$; the bottom: the exposed hidden state "
        "$h_t = o_t \\tanh(c_t)$.",
        "alt": (
            "Three bars for the forget, input and output gates' openings beside "
            "three horizontal bars for the cell state carried in, the cell state "
            "carried on and the hidden state shown, on a scale from minus one to one."
        ),
        "note": "Illustrative: the openings and candidates are set by hand (1, 0.5 or "
        "0) so the arithmetic can be "
        "read off the picture; in a trained network they are vectors computed at "
        "every step. The cell and "
        "hidden values are computed from them by `lstm_update`, the chapter's two "
        "update lines.",
        "controls": [],
        "beats": [_beat(state, text) for state, text in zip(s, texts, strict=True)],
    }


# -----------------------------------------------------------------------------
# forget-gate power

FORGET_STEPS = 80
FORGET_FLOOR = 1e-80
FORGET_REFERENCE_BIAS = 0.0
FORGET_BEATS = [-1.0, 0.0, 1.0, 2.0]
FORGET_MARK = 20  # the step whose value each beat also reads out


def forget_curve(bias: float, steps: int = FORGET_STEPS) -> list[float]:
    """sigma(bias)**k for k = 1..steps, from
    :func:`chapter_code.gated.gates.forget_power`.
    """
    return forget_power([bias], steps)[0].tolist()


def forget_power_panel() -> Panel:
    """f^k over 80 steps at a constant forget gate f = sigma(b_f); a slider for the bias
    b_f.
    """
    curves = {b: forget_curve(b) for b in FORGET_BEATS}
    k, mark = FORGET_STEPS, FORGET_MARK
    _claim(
        all(
            curves[a][-1] < curves[b][-1]
            for a, b in zip(FORGET_BEATS, FORGET_BEATS[1:], strict=False)
        ),
        "that a larger bias keeps more",
    )
    _claim(curves[2.0][-1] < 1e-4, "that even b_f = +2 keeps little after 80 steps")
    texts = []
    for b in FORGET_BEATS:
        f = torch.sigmoid(torch.tensor(b, dtype=torch.float64)).item()
        texts.append(
            f"$b_f = {_tex_signed(b)}$: every forget gate is "
            f"$\\sigma({b:g}) = {f:.3f}$; after {mark} steps the "
            f"direct path keeps {number(curves[b][mark - 1])}, after {k} steps "
            f"{number(curves[b][-1])}."
        )
    texts[0] += (
        f" The dashed line is $b_f = {FORGET_REFERENCE_BIAS:g}$, near where PyTorch's "
        "initialisation starts."
    )
    ratio = curves[1.0][-1] / curves[0.0][-1]
    texts[2] += (
        f" That is {number(ratio)} times more than at "
        f"$b_f = {FORGET_REFERENCE_BIAS:g}$, and still tiny."
    )
    half = 0.5 ** (1 / k)
    texts[3] += (
        " Each step of bias changes the slope on the log axis; for half the signal "
        f"to survive {k} steps a gate needs $f = {half:.4f}$."
    )
    return {
        "name": "forget-power",
        "title": "The forget-gate power $f^k$, with a slider for the forget bias",
        "summary": (
            "What the direct path through the cell keeps after $k$ steps when every "
            f"forget gate equals $f = \\sigma(b_f)$, for $k = 1$ to {k}, on a log "
            f"axis. Solid: the chosen bias; dashed: $b_f = {FORGET_REFERENCE_BIAS:g}$."
        ),
        "alt": (
            "A line chart on a logarithmic vertical axis: the share of the signal "
            "the direct path keeps against the number of steps, one falling line "
            "per forget bias."
        ),
        "note": "Computed, and simplified on purpose: one constant gate multiplied $k$ "
        "times (`forget_power`), the "
        "direct path of the chapter's equation only. Nothing here is trained; the "
        "memory test below, not "
        "this arithmetic, is the evidence about training. Values below "
        f"{number(FORGET_FLOOR)} are drawn on "
        "the bottom edge.",
        "steps": k,
        "floor": FORGET_FLOOR,
        "mark": mark,
        "reference": FORGET_REFERENCE_BIAS,
        "controls": [
            {
                "id": "b",
                "label": "forget-gate bias {bf}",
                "min": -3.0,
                "max": 5.0,
                "step": 0.05,
            }
        ],
        "symbols": {"bf": "b_f", "f": "f"},
        "beats": [_beat({"b": b}, t) for b, t in zip(FORGET_BEATS, texts, strict=True)],
    }


# ----------------------------------------------------------------------------- GRU keep
# dial

DIAL_OLD, DIAL_CANDIDATE = 0.8, 0.3  # the chapter's example unit
DIAL_BEATS = [1.0, 0.0, 0.5]


def dial_parts(
    u: float, old: float = DIAL_OLD, candidate: float = DIAL_CANDIDATE
) -> dict[str, float]:
    """:func:`chapter_code.gated.gates.keep_dial` as a dict: kept, written and the new
    state.
    """
    kept, written, new = keep_dial(old, candidate, u)
    return {"kept": kept, "written": written, "new": new}


def keep_dial_panel() -> Panel:
    """One GRU unit's update gate as a dial: keep u of the old state, write 1 - u of the
    candidate.
    """
    parts = {u: dial_parts(u) for u in DIAL_BEATS}
    for p in parts.values():
        low, high = sorted([DIAL_OLD, DIAL_CANDIDATE])
        _claim(low <= p["new"] <= high, "the new state on the segment")
    full, none, half = (parts[u] for u in DIAL_BEATS)
    texts = [
        f"The dial at keep $u = {DIAL_BEATS[0]:g}$: all of the old state {DIAL_OLD:g} "
        f"is kept and nothing of the candidate {DIAL_CANDIDATE:g} is written; the new "
        f"state stays at {full['new']:.2f}.",
        f"The dial at $u = {DIAL_BEATS[1]:g}$: nothing is kept and the whole candidate "
        "is written; the new state moves "
        f"the length of the segment to {none['new']:.2f}, overwritten.",
        f"The dial at $u = {DIAL_BEATS[2]:g}$: the {half['kept']:.2f} it keeps and the "
        f"{half['written']:.2f} it writes sum to {half['new']:.2f}. A single gate "
        "sets both shares, so the new state can only fall between the old state and "
        "the candidate.",
    ]
    return {
        "name": "keep-dial",
        "title": "The GRU's keep dial: one gate keeps $u$ of the old state and writes "
        "$1 - u$ of the candidate",
        "summary": f"One coordinate of a GRU: the old state ({DIAL_OLD:g}) and the "
        f"candidate ({DIAL_CANDIDATE:g}) on "
        "a line from \u22121 to 1, the new state between them, and the update gate $u$ "
        "as a dial.",
        "alt": (
            "A number line with the old state, the candidate and the new state "
            "between them; below it a bar split into the shares written and kept, "
            "and a half-circle dial for the update gate."
        ),
        "note": "Illustrative values (the chapter's example unit) put through "
        "`keep_dial`, the last line of the GRU "
        "update; the gate is set by hand, not produced by a trained network.",
        "old": DIAL_OLD,
        "candidate": DIAL_CANDIDATE,
        "controls": [
            {
                "id": "u",
                "label": "keep {u} (update gate)",
                "min": 0.0,
                "max": 1.0,
                "step": 0.01,
            }
        ],
        "symbols": {"u": "u"},
        "beats": [_beat({"u": u}, t) for u, t in zip(DIAL_BEATS, texts, strict=True)],
    }


# ----------------------------------------------------------------------------- sampling
# explorer

#: (temperature, k, p) per beat: temperature alone, then top-k, then the nucleus at
#: three temperatures.
SAMPLING_BEATS = [
    (1.0, 6, 1.0),
    (0.5, 6, 1.0),
    (2.0, 6, 1.0),
    (1.0, 2, 1.0),
    (1.0, 2, 0.9),
    (0.5, 2, 0.9),
    (2.0, 2, 0.9),
]


def sampling_parts(temperature: float, k: int, p: float) -> dict[str, list[float]]:
    """The explorer's three distributions at one setting, from :func:`explorer_data` on
    the explorer's logits.

    ``temperature``: softmax(z / temperature); ``topK``: the top-``k`` distribution;
    ``nucleus``: the nucleus distribution with mass ``p``, both at the same temperature
    (each a list in the order of the tokens).
    """
    data = explorer_data(
        EXPLORER_LOGITS, EXPLORER_TOKENS, temperatures=[temperature], ks=[k], ps=[p]
    )
    return {
        "temperature": data["temperature"][0],
        "topK": data["top_k"][0][0],
        "nucleus": data["nucleus"][0][0],
    }


def _kept(dist: list[float]) -> list[str]:
    return [t for t, q in zip(EXPLORER_TOKENS, dist, strict=True) if q > 0]


def _tokens(names: list[str]) -> str:
    """``a``, ``a and b``, ``a to e`` (a run of three or more)."""
    if len(names) <= 2:
        return " and ".join(names)
    return f"{names[0]} to {names[-1]}"


def sampling_panel() -> Panel:
    """One logit vector under temperature, top-k and nucleus sampling; sliders for tau,
    k and p.
    """
    parts = [sampling_parts(*setting) for setting in SAMPLING_BEATS]
    (t1, t_cold, t_hot, k2, p_mid, p_cold, p_hot) = parts
    tau, vocab = [s[0] for s in SAMPLING_BEATS], len(EXPLORER_TOKENS)
    z = ", ".join(_signed(v).lstrip("+") for v in EXPLORER_LOGITS)

    def ranked(q: list[float]) -> bool:
        return all(a > b for a, b in zip(q, q[1:], strict=False))

    _claim(
        all(ranked(q["temperature"]) for q in parts),
        "that temperature never changes the order",
    )
    _claim(
        t_cold["temperature"][0] > t1["temperature"][0] > t_hot["temperature"][0],
        "colder sharpens",
    )
    _claim(
        t_cold["temperature"][-1] < t1["temperature"][-1] < t_hot["temperature"][-1],
        "hotter lifts the tail",
    )
    _claim(
        t1["temperature"] == t1["topK"] == t1["nucleus"],
        "that k = 6 and p = 1 cut nothing",
    )
    _claim(_kept(k2["topK"]) == ["a", "b"], "that top-2 keeps a and b")
    p = SAMPLING_BEATS[4][2]
    pair, trio = sum(p_mid["temperature"][:2]), sum(p_mid["temperature"][:3])
    _claim(
        pair < p <= trio and _kept(p_mid["nucleus"]) == ["a", "b", "c"],
        "that the nucleus needs c to reach p",
    )
    sizes = [len(_kept(q["nucleus"])) for q in (p_cold, p_mid, p_hot)]
    _claim(
        _kept(p_cold["nucleus"]) == ["a", "b"] and p_cold["temperature"][0] < p,
        "the cold nucleus is a and b",
    )
    _claim(
        sizes[0] < sizes[1] < sizes[2]
        and all(len(_kept(q["topK"])) == 2 for q in (p_cold, p_mid, p_hot)),
        "that the nucleus grows with the temperature while top-k stays",
    )

    def probs(q: list[float], names: list[str]) -> str:
        return ", ".join(number(q[EXPLORER_TOKENS.index(n)]) for n in names)

    texts = [
        f"Six tokens with logits {z}. At $\\tau = {tau[0]:g}$, with $k = {vocab}$ and "
        f"$p = {SAMPLING_BEATS[0][2]:g}$, nothing is cut: all three columns show "
        f"$\\mathrm{{softmax}}(z)$, which gives the favourite a "
        f"{number(t1['temperature'][0])} and the last token f "
        f"{number(t1['temperature'][-1])}.",
        f"Halve the temperature, $\\tau = {tau[1]:g}$: every gap between logits "
        f"doubles, a rises to {number(t_cold['temperature'][0])} and f falls to "
        f"{number(t_cold['temperature'][-1])}. The order of the tokens stays the same.",
        f"Double it instead, $\\tau = {tau[2]:g}$: the gaps halve, a falls to "
        f"{number(t_hot['temperature'][0])} and f rises to "
        f"{number(t_hot['temperature'][-1])}, on the way to the uniform "
        f"{number(1 / vocab)}; still in the same order.",
        f"Back at $\\tau = {tau[3]:g}$, top-k with $k = {SAMPLING_BEATS[3][1]}$: a and "
        "b are kept and renormalised "
        f"to {probs(k2['topK'], ['a', 'b'])}; c to f get exactly zero.",
        f"The nucleus with $p = {p:g}$: a and b hold only {number(pair)}, so c is kept "
        f"too, which brings the sum to {number(trio)}; the three are renormalised to "
        f"{probs(p_mid['nucleus'], ['a', 'b', 'c'])}.",
        f"Colder, $\\tau = {tau[5]:g}$: a alone holds "
        f"{number(p_cold['temperature'][0])}, and a and b together "
        f"{number(sum(p_cold['temperature'][:2]))}, so the nucleus shrinks to "
        f"{_tokens(_kept(p_cold['nucleus']))}; "
        f"top-{SAMPLING_BEATS[5][1]} keeps two tokens, as always.",
        f"Hotter, $\\tau = {tau[6]:g}$: the mass spreads, and the nucleus needs "
        f"{sizes[2]} tokens, {_tokens(_kept(p_hot['nucleus']))}, to reach {p:g}, "
        f"while top-{SAMPLING_BEATS[6][1]} still keeps two. The nucleus follows how "
        "spread out the distribution is; k does not.",
    ]
    return {
        "name": "sampling-explorer",
        "title": "The sampling explorer: temperature, top-k and nucleus on one logit "
        "vector",
        "summary": f"Six tokens, a to f, with fixed logits ({z}). Left: "
        "$\\mathrm{softmax}(z / \\tau)$. Middle: top-k. "
        "Right: the nucleus with mass $p$. Hollow bars: the temperature distribution "
        "before the cut; filled "
        "bars: the renormalised distribution a token is drawn from.",
        "note": "Computed, on an illustrative logit vector (the one of the chapter's "
        "explorer figure): every "
        "distribution is what `temperature_probs`, `top_k_probs` and `nucleus_probs` "
        "return, here at build time "
        "(through `explorer_data`) and in your browser when you move a slider. No "
        "model is involved.",
        "alt": (
            "Three bar charts side by side, one bar per token a to f: the "
            "temperature distribution, the top-k distribution and the nucleus "
            "distribution, with the tokens each rule cuts marked."
        ),
        "logits": list(EXPLORER_LOGITS),
        "tokens": list(EXPLORER_TOKENS),
        "controls": [
            {
                "id": "tau",
                "label": "temperature {tau}",
                "min": 0.1,
                "max": 4.0,
                "step": 0.05,
            },
            {"id": "k", "label": "top-k: {k}", "min": 1, "max": vocab, "step": 1},
            {"id": "p", "label": "nucleus: {p}", "min": 0.05, "max": 1.0, "step": 0.01},
        ],
        "symbols": {"tau": "\\tau", "k": "k", "p": "p"},
        "beats": [
            _beat({"tau": t, "k": k, "p": q}, text)
            for (t, k, q), text in zip(SAMPLING_BEATS, texts, strict=True)
        ],
    }


# ----------------------------------------------------------------------------- all
# panels

PANELS: dict[str, Callable[[], Panel]] = {
    "one-unit": one_unit_panel,
    "truncation-lanes": truncation_panel,
    "lstm-gates": lstm_gates_panel,
    "forget-power": forget_power_panel,
    "keep-dial": keep_dial_panel,
    "sampling-explorer": sampling_panel,
}


def panel(name: str) -> Panel:
    """The data of one panel, with its timing (``moveMs``, ``msPerWord``, each beat's
    ``words``); a clear error for an unknown name.
    """
    if name not in PANELS:
        raise ValueError(f"name must be one of {sorted(PANELS)}; got {name!r}")
    data = PANELS[name]()
    for key in ["title", "summary", "note"]:  # apostrophes as the page typesets them
        if key in data:
            data[key] = data[key].replace("'", "\u2019")
    if "check" in data:
        data["check"] = {k: v.replace("'", "\u2019") for k, v in data["check"].items()}
    data.setdefault("symbols", {})
    data["moveMs"] = MOVE_MS
    data["msPerWord"] = MS_PER_WORD
    for beat in data["beats"]:
        beat["words"] = reading_words(beat["text"])
    return data


def panel_json(name: str, data: Panel | None = None) -> str:
    """The panel's data as compact JSON, safe inside an HTML ``<script>`` element;
    ``data``, if given, is ``panel(name)`` already computed.
    """
    text = json.dumps(
        panel(name) if data is None else data,
        ensure_ascii=False,
        separators=(",", ":"),
        allow_nan=False,
    )
    return text.replace("<", "\\u003c")
