"""The panels of "Gated memory: LSTM and GRU": the LSTM's gates step by step, the
forget gate's power over time, and the GRU's keep dial.

Each panel is its data (beats, controls and a transcript whose result sentences are
checked as the data is built, :func:`chapter_code.panels.beats.claim`) and its static
figure, both computed by this chapter's own code; :mod:`chapter_code.panels.data` and
:mod:`chapter_code.panels.figures` list every panel of the book.

Page: "Gated memory: LSTM and GRU", through the ``book-panel`` directive.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import torch
from matplotlib.figure import Figure

from chapter_code.core.plotting import COLORS, use_book_style
from chapter_code.gated.figures import plot_forget_power, plot_keep_dial
from chapter_code.gated.gates import forget_power, keep_dial, lstm_update
from chapter_code.panels.beats import (
    Panel,
    beat,
    claim,
    number,
    signed,
    tex_signed,
)

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
    claim(
        s[0]["c"] == LSTM_C0 and s[0]["h"] == 0.0,
        "that a shut output gate hides a kept cell",
    )
    claim(
        s[1]["c"] == s[0]["c"] and s[1]["h"] > 0, "that reopening shows the same cell"
    )
    claim(
        abs(s[3]["c"] - (s[3]["f"] * s[3]["cPrev"] + s[3]["i"] * s[3]["g"])) < 1e-12,
        "the additive update",
    )
    claim(s[4]["c"] == s[4]["g"], "that f = 0, i = 1 overwrites the cell")

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
        f"discarded and the candidate {signed(s[4]['g']).lstrip('+')} overwrites it; "
        f"the open output gate shows {signed(round(s[4]['h'], 3)).lstrip('+')}.",
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
        "beats": [beat(state, text) for state, text in zip(s, texts, strict=True)],
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
    claim(
        all(
            curves[a][-1] < curves[b][-1]
            for a, b in zip(FORGET_BEATS, FORGET_BEATS[1:], strict=False)
        ),
        "that a larger bias keeps more",
    )
    claim(curves[2.0][-1] < 1e-4, "that even b_f = +2 keeps little after 80 steps")
    texts = []
    for b in FORGET_BEATS:
        f = torch.sigmoid(torch.tensor(b, dtype=torch.float64)).item()
        texts.append(
            f"$b_f = {tex_signed(b)}$: every forget gate is "
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
        "beats": [beat({"b": b}, t) for b, t in zip(FORGET_BEATS, texts, strict=True)],
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
        claim(low <= p["new"] <= high, "the new state on the segment")
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
        "beats": [beat({"u": u}, t) for u, t in zip(DIAL_BEATS, texts, strict=True)],
    }


def lstm_gates_figure() -> Figure:
    """Per step: the three gate openings (bars) and the cell and hidden values they
    produce (lines).
    """
    use_book_style()
    states = lstm_gate_states()
    steps = range(1, len(states) + 1)
    fig, ax = plt.subplots(figsize=(6.4, 3.8), layout="constrained")
    width = 0.22
    for j, (gate, shade) in enumerate(
        [("f", "#9ecae1"), ("i", "#4292c6"), ("o", "#08306b")]
    ):
        ax.bar(
            [t + (j - 1) * width for t in steps],
            [s[gate] for s in states],
            width,
            color=shade,
            label=f"gate ${gate}_t$",
        )
    ax.plot(
        steps,
        [s["c"] for s in states],
        "o-",
        color=COLORS["rnn"],
        lw=2,
        label="cell $c_t$",
    )
    ax.plot(
        steps,
        [s["h"] for s in states],
        "s--",
        color=COLORS["gru"],
        lw=2,
        label="hidden $h_t$",
    )
    ax.axhline(0, color="#595959", lw=0.8)
    ax.set_xticks(list(steps))
    ax.set_xlabel("step (beat of the panel)")
    ax.set_ylabel("value")
    fig.legend(loc="outside upper center", ncol=5, handlelength=1.5, columnspacing=0.8)
    return fig


def forget_power_figure() -> Figure:
    """The forget gate's power over time at the beats' biases."""
    return plot_forget_power(FORGET_BEATS, forget_power(FORGET_BEATS, FORGET_STEPS))


def keep_dial_figure() -> Figure:
    """The keep dial's parts against u, at the last beat's u."""
    return plot_keep_dial(DIAL_OLD, DIAL_CANDIDATE, DIAL_BEATS[-1])
