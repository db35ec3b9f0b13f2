"""Tests for chapter_code.panels.data and chapter_code.panels.figures: the panels'
numbers, beats and figures."""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
import torch
from PIL import Image

from chapter_code.bptt import panels as bptt_panels
from chapter_code.bptt.gradients import one_unit_gradient
from chapter_code.bptt.panels import crossing
from chapter_code.core.plotting import SMALLEST_TEXT_KEY
from chapter_code.gated import panels as gated_panels
from chapter_code.gated.gates import keep_dial
from chapter_code.gated.panels import dial_parts, forget_curve
from chapter_code.panels import beats as panel_beats
from chapter_code.panels.beats import number
from chapter_code.panels.data import PANELS, panel, panel_json
from chapter_code.panels.figures import static_figure, write_static_figure
from chapter_code.sampling import panels as sampling_panels
from chapter_code.sampling.rules import nucleus_probs, temperature_probs, top_k_probs


@pytest.mark.parametrize("name", list(PANELS))
def test_every_panel_has_beats_with_text_and_controls_that_hold_its_values(
    name: str,
) -> None:
    data = panel(name)
    assert data["name"] == name
    assert data["title"]
    assert data["summary"]
    assert data["note"]
    assert len(data["beats"]) >= 3
    for beat in data["beats"]:
        assert beat["text"].strip()
        assert "'" not in beat["text"]
        assert all(
            isinstance(v, (int, float)) and math.isfinite(v)
            for v in beat["state"].values()
        )
        for control in data["controls"]:  # every beat's parameter lies on its slider
            assert control["min"] <= beat["state"][control["id"]] <= control["max"]
    json.loads(panel_json(name))  # strict JSON (no NaN)


def _outside_math(text: str) -> str:
    """``text`` less its formulas (``$...$``) and its code names (```...```)."""
    prose = "".join(part for i, part in enumerate(text.split("$")) if i % 2 == 0)
    assert prose.count("`") % 2 == 0, text
    return "".join(part for i, part in enumerate(prose.split("`")) if i % 2 == 0)


@pytest.mark.parametrize("name", list(PANELS))
def test_text_writes_its_math_as_tex_between_dollars_and_names_known_symbols(
    name: str,
) -> None:
    data = panel(name)
    texts = [
        data["title"],
        data["summary"],
        data["note"],
        *[b["text"] for b in data["beats"]],
    ]
    texts += list(data.get("check", {}).values())
    for text in texts:
        # every formula closed, every code name too
        assert text.count("$") % 2 == 0, text
        # TeX in ASCII, for LaTeX too
        assert all(ord(c) < 128 for c in "".join(text.split("$")[1::2])), text
        outside = _outside_math(text)
        assert not re.search(r"[_^\\]|\b[a-zA-Z]_[a-zA-Z]|\u2202", outside), (
            f"TeX or math outside $...$: {text!r}"
        )
    assert data["alt"]
    assert "$" not in data["alt"]  # alt text is read aloud: plain words
    for control in data["controls"]:
        assert set(re.findall(r"\{(\w+)\}", control["label"])) <= set(
            data["symbols"]
        ), control["label"]


def test_reading_words_counts_formulas_by_their_pieces() -> None:
    assert panel_beats.reading_words("$b_f = +1$: every gate") == 5
    assert panel_beats.reading_words("One  two\nthree") == 3
    for name in PANELS:
        for beat in panel(name)["beats"]:
            assert beat["words"] == panel_beats.reading_words(beat["text"]) >= 10


def test_panel_json_is_safe_inside_a_script_element(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(
        PANELS, "keep-dial", lambda: {"name": "x", "title": "</script><b>", "beats": []}
    )
    text = panel_json("keep-dial")
    assert "</script>" not in text
    assert json.loads(text)["title"] == "</script><b>"


def test_the_registry_typesets_the_apostrophes_of_every_text_a_page_shows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(
        PANELS,
        "keep-dial",
        lambda: {
            "title": "The GRU's dial",
            "summary": "It's one gate",
            "note": "Set by hand, not a network's",
            "check": {"question": "What's kept?", "answer": "The old state's share"},
            "beats": [{"state": {}, "text": "One beat."}],
        },
    )
    data = panel("keep-dial")
    assert data["title"] == "The GRU\u2019s dial"
    assert data["summary"] == "It\u2019s one gate"
    assert data["note"] == "Set by hand, not a network\u2019s"
    assert data["check"] == {
        "question": "What\u2019s kept?",
        "answer": "The old state\u2019s share",
    }


def test_unknown_panel_names_the_argument_and_the_choices() -> None:
    with pytest.raises(
        ValueError, match=r"name must be one of .*one-unit.*; got 'nope'"
    ):
        panel("nope")
    with pytest.raises(ValueError, match="name must be one of"):
        static_figure("nope")


def test_number_formats_small_and_large_values() -> None:
    assert number(0.0018) == "0.0018"
    assert number(0) == "0"
    assert number(1.15e18) == "1.2 \u00d7 10\u00b9\u2078"
    assert number(3.1e-73) == "3.1 \u00d7 10\u207b\u2077\u00b3"


def test_one_unit_panel_beats_are_the_chapter_cases_computed() -> None:
    data = panel("one-unit")
    assert [
        (b["state"]["w"], b["state"]["x"]) for b in data["beats"]
    ] == bptt_panels.ONE_UNIT_CASES
    saturated = one_unit_gradient(2.0, 0.5, data["steps"])
    assert number(saturated.products[-1]) in data["beats"][-1]["text"]
    curves = bptt_panels.one_unit_curves(1.5, 0.1)
    assert curves["products"] == one_unit_gradient(1.5, 0.1, 60).products


def test_the_one_unit_beats_read_the_state_where_the_run_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Cases whose state still moves, so that a sentence reading another step would
    print another number. Near 0, tanh is the identity, so from h_0 = 0 the state
    after T steps is x (1 - w^T) / (1 - w): 1e-9 (1 - 0.9^60) = 9.98203e-10 and
    1e-30 (2^60 - 1) = 1.15292e-12, small enough that every factor is exactly w.
    With w = -2 and x = 0.5 the state ends in a cycle of two steps, 0.980 =
    tanh(-2 (-0.898) + 0.5) and -0.898 = tanh(-2 (0.980) + 0.5), and the last factor
    is (1 - 0.898^2) (-2) = -0.389."""
    monkeypatch.setattr(
        bptt_panels, "ONE_UNIT_CASES", [(0.9, 1e-10), (2.0, 1e-30), (-2.0, 0.5)]
    )
    small, linear, saturated = (b["text"] for b in panel("one-unit")["beats"])
    assert "the state stays at 9.98203e-10, every factor" in small
    assert "The state is still 1.15292e-12, where" in linear
    assert (
        "saturates at -0.898, each factor $(1 - h^2)\\,w$ is -0.389, and" in saturated
    )


def test_truncation_lanes_value_crosses_a_detach_and_no_gradient_crosses_any_cut() -> (
    None
):
    lanes = crossing(6, 3, 2, loss_at=6)
    assert lanes["carry"]["value"] == [2, 3, 4, 5, 6]
    assert lanes["reset"]["value"] == [2, 3]
    assert lanes["carry"]["gradient"] == lanes["reset"]["gradient"] == [4, 5, 6]
    assert crossing(9, 3, 5, loss_at=9)["carry"]["gradient"] == [7, 8, 9]
    with pytest.raises(ValueError, match="marked"):
        crossing(6, 3, 7, loss_at=6)


def test_lstm_gate_states_follow_the_update_lines() -> None:
    states = gated_panels.lstm_gate_states()
    for s in states:
        assert s["c"] == pytest.approx(s["f"] * s["cPrev"] + s["i"] * s["g"], abs=1e-12)
        assert s["h"] == pytest.approx(s["o"] * math.tanh(s["c"]), abs=1e-12)
    # the cell is carried
    assert [s["cPrev"] for s in states[1:]] == [s["c"] for s in states[:-1]]
    with pytest.raises(ValueError, match="gate f must be in"):
        gated_panels.lstm_gate_states(steps=[(1.5, 0.0, 0.0, 0.0)])


#: Gate openings (f, i, o, g) that differ from the neighbouring steps', so a sentence
#: that read another step would print other numbers. The cells, by hand from c_0 =
#: 0.8: 0.5 * 0.8 + 1 * 0.4 = 0.8 (kept), 1 * 0.8 = 0.8, 0.5 * 0.8 = 0.4,
#: 0.75 * 0.4 + 0.5 * 0.6 = 0.6, and 0 * 0.6 + 1 * 0.5 = 0.5 (overwritten).
DISTINCT_STEPS = [
    (0.5, 1.0, 0.0, 0.4),
    (1.0, 0.0, 0.9, 0.0),
    (0.5, 0.0, 0.6, 0.0),
    (0.75, 0.5, 0.3, 0.6),
    (0.0, 1.0, 1.0, 0.5),
]


def test_each_lstm_sentence_reads_its_own_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = gated_panels.lstm_gate_states
    monkeypatch.setattr(
        gated_panels, "lstm_gate_states", lambda: real(steps=DISTINCT_STEPS)
    )
    # h = o tanh(c): 0.9 tanh(0.8) = 0.598, 0.6 tanh(0.4) = 0.228,
    # 0.3 tanh(0.6) = 0.161, tanh(0.5) = 0.462; positive numbers print unsigned
    assert [b["text"] for b in panel("lstm-gates")["beats"]] == [
        "Forget gate 0.5, input gate 1: the cell keeps its 0.8. The output gate is "
        "shut, so the hidden state shows 0: the value is stored, not shown.",
        "The output gate opens to 0.9. The cell is unchanged at 0.8; the hidden "
        "state shows $\\tanh$ of it, 0.598.",
        "The forget gate drops to 0.5: the cell keeps half of 0.8, 0.4, and the "
        "hidden state follows, 0.228.",
        "The input gate opens to 0.5 on a candidate of 0.6: the cell becomes 0.75 "
        "\u00d7 0.4 + 0.5 \u00d7 0.6 = 0.6, a sum, not a product. The output gate at "
        "0.3 shows 0.161.",
        "Forget gate 0, input gate 1: the old cell is discarded and the candidate "
        "0.5 overwrites it; the open output gate shows 0.462.",
    ]


def test_a_gate_step_without_its_sentence_stops_the_lstm_panel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = gated_panels.lstm_gate_states
    six = [*gated_panels.LSTM_STEPS, (1.0, 0.0, 1.0, 0.0)]  # five sentences
    monkeypatch.setattr(gated_panels, "lstm_gate_states", lambda: real(steps=six))
    with pytest.raises(ValueError, match=r"zip\(\) argument 2 is shorter"):
        panel("lstm-gates")


def test_the_forget_claim_compares_what_the_biases_keep_after_the_same_steps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Biases 1e-4 apart are in order after 80 steps (the larger keeps
    (sigma(1.0001) / sigma(1))**80 = 1.002 times more, though less than the smaller
    kept a step earlier); a repeated bias is not a larger one."""
    monkeypatch.setattr(gated_panels, "FORGET_BEATS", [0.0, 1.0, 1.0001, 2.0])
    beats = panel("forget-power")["beats"]
    assert [b["state"]["b"] for b in beats] == [0.0, 1.0, 1.0001, 2.0]
    monkeypatch.setattr(gated_panels, "FORGET_BEATS", [0.0, 1.0, 1.0, 2.0])
    with pytest.raises(
        AssertionError, match="claims that a larger bias keeps more, but"
    ):
        panel("forget-power")


def test_forget_curve_and_dial_parts_match_their_formulas() -> None:
    f = 1 / (1 + math.exp(-1.0))
    assert forget_curve(1.0)[19] == pytest.approx(f**20, rel=1e-13)
    assert len(forget_curve(1.0)) == gated_panels.FORGET_STEPS
    assert dial_parts(0.25) == dict(
        zip(["kept", "written", "new"], keep_dial(0.8, 0.3, 0.25), strict=True)
    )


def test_a_false_claim_stops_the_panel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        bptt_panels, "ONE_UNIT_CASES", [(0.9, 0.0), (2.0, 0.0), (2.0, 0.0)]
    )  # no saturation
    with pytest.raises(
        AssertionError,
        match="claims vanishing under a growing bound when saturated, but",
    ):
        panel("one-unit")


@pytest.mark.parametrize("name", list(PANELS))
def test_static_figure_is_written_as_a_book_png(name: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    torch.manual_seed(0)
    path = write_static_figure(name, tmp_path / f"{name}.png")
    with Image.open(path) as image:
        assert image.width > 400
        assert float(image.text[SMALLEST_TEXT_KEY]) > 0


def test_sampling_parts_are_the_decoding_rules_at_one_setting() -> None:
    z = torch.tensor(sampling_panels.EXPLORER_LOGITS, dtype=torch.float64)
    parts = sampling_panels.sampling_parts(0.7, 3, 0.8)
    assert parts["temperature"] == temperature_probs(z, 0.7).tolist()
    assert parts["topK"] == top_k_probs(z, 3, 0.7).tolist()
    assert parts["nucleus"] == nucleus_probs(z, 0.8, 0.7).tolist()
    assert [q > 0 for q in parts["topK"]] == [True, True, True, False, False, False]
    with pytest.raises(ValueError, match=r"k must be an int in \[1, 6\]"):
        sampling_panels.sampling_parts(1.0, 7, 0.9)
    with pytest.raises(ValueError, match="temperature must be"):
        sampling_panels.sampling_parts(0.0, 2, 0.9)
    with pytest.raises(ValueError, match=r"p must be a number in \(0, 1\]"):
        sampling_panels.sampling_parts(1.0, 2, 1.5)


def test_sampling_panel_beats_state_what_the_rules_compute() -> None:
    data = panel("sampling-explorer")
    settings = [
        (b["state"]["tau"], b["state"]["k"], b["state"]["p"]) for b in data["beats"]
    ]
    assert settings == sampling_panels.SAMPLING_BEATS
    assert data["logits"] == list(sampling_panels.EXPLORER_LOGITS)
    assert data["tokens"] == list(sampling_panels.EXPLORER_TOKENS)
    texts = [b["text"] for b in data["beats"]]
    cold = sampling_panels.sampling_parts(0.5, 6, 1.0)["temperature"]
    assert f"a rises to {number(cold[0])}" in texts[1]
    assert "renormalised to 0.69, 0.31" in texts[3]
    assert "the nucleus shrinks to a and b" in texts[5]
    assert "the nucleus needs 5 tokens, a to e" in texts[6]
    k = next(c for c in data["controls"] if c["id"] == "k")
    assert (k["min"], k["max"], k["step"]) == (1, 6, 1)


def test_a_false_sampling_claim_stops_the_panel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    beats = list(sampling_panels.SAMPLING_BEATS)
    beats[6] = (0.25, 2, 0.9)  # "hotter" made colder: the nucleus no longer grows
    monkeypatch.setattr(sampling_panels, "SAMPLING_BEATS", beats)
    with pytest.raises(
        AssertionError,
        match="claims that the nucleus grows with the temperature while top-k "
        "stays, but",
    ):
        panel("sampling-explorer")


def test_sampling_tokens_read_as_runs() -> None:
    assert sampling_panels._tokens(["a"]) == "a"
    assert sampling_panels._tokens(["a", "b"]) == "a and b"
    assert sampling_panels._tokens(["a", "b", "c", "d"]) == "a to d"


def test_sampling_static_figure_shows_the_beats_temperatures_and_cuts() -> None:
    fig = static_figure("sampling-explorer")
    try:
        axes = fig.axes
        assert len(axes) == 9  # 3 temperatures x (softmax, top-k, nucleus)
        titles = [ax.get_title() for ax in axes]
        assert titles[0].startswith("$\\tau$ = 0.5")
        assert titles[6].startswith("$\\tau$ = 2")
        assert [t.split(": ")[-1] for t in titles[2::3]] == [
            "2 kept",
            "3 kept",
            "5 kept",
        ]
        assert all(t.endswith("2 kept") for t in titles[1::3])
        # tau = 1, nucleus 0.9
        filled = [p.get_height() for p in axes[5].patches if p.get_fill()]
        assert filled == pytest.approx(
            sampling_panels.sampling_parts(1.0, 2, 0.9)["nucleus"]
        )
        hollow = [p.get_height() for p in axes[5].patches if not p.get_fill()]
        assert hollow == pytest.approx(
            sampling_panels.sampling_parts(1.0, 2, 0.9)["temperature"]
        )
    finally:
        plt.close(fig)


def _same(ours: object, stored: object, where: str) -> None:
    """Equal structure and text; floats to a relative 1e-9 (the stored JSON is the
    reviewed data)."""
    if isinstance(stored, float) and not isinstance(ours, bool):
        assert ours == pytest.approx(stored, rel=1e-9, abs=1e-300), where
    elif isinstance(stored, dict):
        assert isinstance(ours, dict), where
        assert sorted(ours) == sorted(stored), where
        for key in stored:
            _same(ours[key], stored[key], f"{where}.{key}")
    elif isinstance(stored, list):
        assert isinstance(ours, list), where
        assert len(ours) == len(stored), where
        for i, (a, b) in enumerate(zip(ours, stored, strict=True)):
            _same(a, b, f"{where}[{i}]")
    else:
        assert ours == stored, where
        assert type(ours) is type(stored), where


@pytest.mark.parametrize("name", list(PANELS))
def test_panel_data_matches_its_reviewed_snapshot(name: str) -> None:
    """Every panel's data (beats, transcript, controls, notes) against
    tests/golden/panel_<name>.json.

    The transcript is content a reader reads: after changing a panel on purpose, read
    its beats, then rewrite the snapshots with ``BOOK_UPDATE_GOLDEN=1 .venv/bin/python
    -m pytest tests/panels/test_data.py``.
    """
    ours = json.loads(panel_json(name))
    path = Path(__file__).parents[1] / "golden" / f"panel_{name}.json"
    if os.environ.get("BOOK_UPDATE_GOLDEN") == "1":
        path.write_text(json.dumps(ours, ensure_ascii=False, indent=1) + "\n")
    _same(ours, json.loads(path.read_text()), name)


def test_small_formatters_at_their_edges() -> None:
    assert panel_beats.beat({}, "it's")["text"] == "it\u2019s"
    assert panel_beats.signed(0) == "0"
    assert panel_beats.signed(2) == "+2"
    assert panel_beats.signed(-1.5) == "\u22121.5"
    assert [panel_beats.tex_signed(v) for v in (-1.0, 0.0, 2.0)] == ["-1", "0", "+2"]
    assert sampling_panels._tokens(["a", "b", "c"]) == "a to c"
    assert number(1e-3) == "0.001"
    # rounded to three significant digits, printed plainly
    assert number(9999.0) == "10000"
    assert number(0.35) == "0.35"
    assert number(1e4) == "1.0 \u00d7 10\u2074"
    assert number(-0.0) == "0"
    assert number(0.123456) == "0.123"
    with pytest.raises(ValueError, match="zip"):
        sampling_panels._kept([0.5, 0.5])  # one probability per token, or nothing


def test_crossing_accepts_its_whole_range_and_refuses_outside_it() -> None:
    assert crossing(6, 3, 1, loss_at=6)["carry"]["value"] == [1, 2, 3, 4, 5, 6]
    assert crossing(6, 3, 3, loss_at=3)["reset"]["gradient"] == [1, 2, 3]
    for marked, loss_at in [(0, 6), (5, 4), (2, 7)]:
        with pytest.raises(ValueError, match="need 1 <= marked <= loss_at <= steps"):
            crossing(6, 3, marked, loss_at=loss_at)


def test_lstm_gate_states_name_the_gate_out_of_range_and_accept_the_edges() -> None:
    for j, name in enumerate("fio"):
        gates = [0.5, 0.5, 0.5, 0.0]
        gates[j] = -0.1
        with pytest.raises(ValueError, match=f"gate {name} must be in"):
            gated_panels.lstm_gate_states(steps=[tuple(gates)])
    edges = gated_panels.lstm_gate_states(
        c0=0.0, steps=[(0.0, 1.0, 1.0, -1.0), (0.0, 1.0, 1.0, 1.0)]
    )
    assert [s["c"] for s in edges] == [-1.0, 1.0]
    for g in (-1.5, 1.5):
        with pytest.raises(ValueError, match="candidate g must be in"):
            gated_panels.lstm_gate_states(steps=[(0.5, 0.5, 0.5, g)])


def test_panel_json_is_compact_unescaped_and_strict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = panel_json("sampling-explorer")
    assert "\u2212" in text  # UTF-8 as is, not \\u escapes
    assert '": ' not in text
    assert '", "' not in text
    assert json.loads(text)["msPerWord"] == panel_beats.MS_PER_WORD
    assert json.loads(text)["moveMs"] == panel_beats.MOVE_MS
    monkeypatch.setitem(
        PANELS, "keep-dial", lambda: {"name": "x", "title": "<b>", "beats": []}
    )
    assert "\\u003cb>" in panel_json("keep-dial")
    monkeypatch.setitem(
        PANELS, "keep-dial", lambda: {"name": "x", "value": float("nan"), "beats": []}
    )
    with pytest.raises(ValueError, match="not JSON compliant"):
        panel_json("keep-dial")


def test_one_unit_curves_name_their_two_curves() -> None:
    curves = bptt_panels.one_unit_curves(0.5, 0.0, steps=3)
    assert sorted(curves) == ["bounds", "products"]
    assert curves["bounds"] == pytest.approx([1.0, 0.5, 0.25, 0.125])


def _lanes_with(change: Callable[[dict, int], None]) -> Callable[..., dict]:
    """crossing, with ``change(lanes, steps)`` applied to what it returns (a false
    computation to catch)."""
    real = bptt_panels.crossing

    def fake(steps: int, chunk: int, marked: int, loss_at: int, seed: int = 5) -> dict:
        lanes = real(steps, chunk, marked, loss_at, seed)
        change(lanes, steps)
        return lanes

    return fake


def _set(
    lanes: dict, steps: int, when: int, lane: str, key: str, value: list[int]
) -> None:
    if steps == when:
        lanes[lane][key] = value


def _states_with(index: int, **changes: float) -> Callable[[], list[dict]]:
    real = gated_panels.lstm_gate_states
    return lambda: [s | changes if i == index else s for i, s in enumerate(real())]


def _sampling_beat(
    index: int, setting: tuple[float, int, float]
) -> list[tuple[float, int, float]]:
    beats = list(sampling_panels.SAMPLING_BEATS)
    beats[index] = setting
    return beats


def _parts_with(
    changes: dict[tuple[float, int, float], dict[str, list[float]]],
) -> Callable[[float, int, float], dict[str, list[float]]]:
    """sampling_parts, with what it returns at some settings changed (a false
    computation to catch)."""
    real = sampling_panels.sampling_parts
    return lambda t, k, p: real(t, k, p) | changes.get((t, k, p), {})


#: the topic module that owns each panel (what a false-claim test patches)
TOPIC = {
    "one-unit": bptt_panels,
    "truncation-lanes": bptt_panels,
    "lstm-gates": gated_panels,
    "forget-power": gated_panels,
    "keep-dial": gated_panels,
    "sampling-explorer": sampling_panels,
}

# (panel, what to patch, its false value, words of the claim that must stop the panel)
FALSE_CLAIMS = [
    (
        "one-unit",
        "ONE_UNIT_CASES",
        [(0.9, 0.3), (2.0, 0.0), (2.0, 0.5)],
        "that the product equals the bound",
    ),
    (
        "one-unit",
        "ONE_UNIT_CASES",
        [(0.9, 0.0), (0.9, 0.0), (2.0, 0.5)],
        "growth along the bound for w = 2, x = 0",
    ),
    (  # an input of 1e-6 bends the product off the bound by a relative 5e-9
        "one-unit",
        "ONE_UNIT_CASES",
        [(0.9, 1e-6), (2.0, 0.0), (2.0, 0.5)],
        "that the product equals the bound",
    ),
    (  # w = 1: product and bound stay at 1, neither growing nor vanishing
        "one-unit",
        "ONE_UNIT_CASES",
        [(0.9, 0.0), (1.0, 0.0), (2.0, 0.5)],
        "growth along the bound for w = 2, x = 0",
    ),
    (  # w = 1.02, x = 0.01: the product shrinks to 0.02, far from vanishing
        "one-unit",
        "ONE_UNIT_CASES",
        [(0.9, 0.0), (2.0, 0.0), (1.02, 0.01)],
        "vanishing under a growing bound when saturated",
    ),
    (
        "truncation-lanes",
        "crossing",
        _lanes_with(lambda la, n: _set(la, n, 6, "carry", "value", [2, 3])),
        "that the carried value reaches the last step",
    ),
    (
        "truncation-lanes",
        "crossing",
        _lanes_with(lambda la, n: _set(la, n, 6, "reset", "value", [2, 3, 4])),
        "that the reset lane's value stops at the cut",
    ),
    (
        "truncation-lanes",
        "crossing",
        _lanes_with(lambda la, n: _set(la, n, 6, "reset", "gradient", [3, 4, 5, 6])),
        "that the gradient stops at the cut",
    ),
    (
        "truncation-lanes",
        "crossing",
        _lanes_with(lambda la, n: _set(la, n, 9, "carry", "gradient", [5, 6, 7, 8, 9])),
        "the check question's answer",
    ),
    (
        "truncation-lanes",
        "crossing",
        _lanes_with(lambda la, n: _set(la, n, 9, "carry", "value", [5, 6, 7, 8])),
        "that the early step's value reaches the last step",
    ),
    (
        "lstm-gates",
        "lstm_gate_states",
        _states_with(0, h=0.1),
        "that a shut output gate hides a kept cell",
    ),
    (
        "lstm-gates",
        "lstm_gate_states",
        _states_with(1, c=0.5),
        "that reopening shows the same cell",
    ),
    (
        "lstm-gates",
        "lstm_gate_states",
        _states_with(1, h=0.0),
        "that reopening shows the same cell",
    ),
    ("lstm-gates", "lstm_gate_states", _states_with(3, c=0.0), "the additive update"),
    (
        "lstm-gates",
        "lstm_gate_states",
        _states_with(4, c=0.1),
        "that f = 0, i = 1 overwrites the cell",
    ),
    (
        "forget-power",
        "FORGET_BEATS",
        [0.0, -1.0, 1.0, 2.0],
        "that a larger bias keeps more",
    ),
    (
        "forget-power",
        "forget_curve",
        lambda b: [0.1 * (b + 2)] * 80,
        "that even b_f = +2 keeps little after 80 steps",
    ),
    (
        "keep-dial",
        "dial_parts",
        lambda u: {"kept": 0.0, "written": 0.0, "new": 0.9},
        "the new state on the segment",
    ),
    (
        "sampling-explorer",
        "sampling_parts",
        lambda t, k, p: {
            "temperature": [0.1, 0.5, 0.1, 0.1, 0.1, 0.1],
            "topK": [],
            "nucleus": [],
        },
        "that temperature never changes the order",
    ),
    (
        "sampling-explorer",
        "SAMPLING_BEATS",
        _sampling_beat(1, (1.0, 6, 1.0)),
        "colder sharpens",
    ),
    (  # b and c swapped: a swap of neighbours is a change of order
        "sampling-explorer",
        "sampling_parts",
        lambda t, k, p: {
            "temperature": [0.5, 0.2, 0.22, 0.05, 0.02, 0.01],
            "topK": [],
            "nucleus": [],
        },
        "that temperature never changes the order",
    ),
    (  # "hotter" at tau = 1: the favourite keeps its share
        "sampling-explorer",
        "SAMPLING_BEATS",
        _sampling_beat(2, (1.0, 6, 1.0)),
        "colder sharpens",
    ),
    (
        "sampling-explorer",
        "SAMPLING_BEATS",
        _sampling_beat(0, (1.0, 5, 1.0)),
        "that k = 6 and p = 1 cut nothing",
    ),
    (
        "sampling-explorer",
        "SAMPLING_BEATS",
        _sampling_beat(3, (1.0, 3, 1.0)),
        "that top-2 keeps a and b",
    ),
    (
        "sampling-explorer",
        "SAMPLING_BEATS",
        _sampling_beat(4, (1.0, 2, 0.7)),
        "that the nucleus needs c to reach p",
    ),
    (
        "sampling-explorer",
        "SAMPLING_BEATS",
        _sampling_beat(5, (0.5, 2, 0.97)),
        "the cold nucleus is a and b",
    ),
    (  # the rule keeps a and b although a and b hold less than p
        "sampling-explorer",
        "sampling_parts",
        _parts_with({(1.0, 2, 0.9): {"nucleus": [0.69, 0.31, 0.0, 0.0, 0.0, 0.0]}}),
        "that the nucleus needs c to reach p",
    ),
    (  # a alone holds p = 0.9, so the nucleus would be a alone
        "sampling-explorer",
        "sampling_parts",
        _parts_with(
            {(0.5, 2, 0.9): {"temperature": [0.9, 0.05, 0.03, 0.01, 0.007, 0.003]}}
        ),
        "the cold nucleus is a and b",
    ),
    (  # "hotter" at the middle temperature: the nucleus keeps three, as there
        "sampling-explorer",
        "SAMPLING_BEATS",
        _sampling_beat(6, (1.0, 2, 0.9)),
        "that the nucleus grows with the temperature while top-k stays",
    ),
]


@pytest.mark.parametrize(
    ("name", "attribute", "false", "claim"),
    FALSE_CLAIMS,
    ids=[f"{c[0]}: {c[3]}" for c in FALSE_CLAIMS],
)
def test_every_claim_of_a_transcript_is_checked(
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    attribute: str,
    false: object,
    claim: str,
) -> None:
    monkeypatch.setattr(TOPIC[name], attribute, false)
    with pytest.raises(
        AssertionError, match=f"the transcript claims {re.escape(claim)}, but"
    ):
        panel(name)


def test_hotter_must_lift_the_tail(monkeypatch: pytest.MonkeyPatch) -> None:
    real = sampling_panels.sampling_parts

    def flat_tail(t: float, k: int, p: float) -> dict[str, list[float]]:
        parts = real(t, k, p)
        # the hot beat keeps its favourite lower but gives f less than at tau = 1
        if t == 2.0:
            parts["temperature"] = [0.45, 0.25, 0.15, 0.1, 0.049, 0.001]
        return parts

    monkeypatch.setattr(sampling_panels, "sampling_parts", flat_tail)
    with pytest.raises(AssertionError, match="claims hotter lifts the tail, but"):
        panel("sampling-explorer")


@pytest.mark.parametrize(
    "setting", [(0.5, 6, 1.0), (2.0, 6, 1.0)], ids=["colder", "hotter"]
)
def test_a_tail_that_keeps_its_share_is_refused(
    monkeypatch: pytest.MonkeyPatch, setting: tuple[float, int, float]
) -> None:
    """The colder beat must lower f's probability and the hotter one raise it: one
    that gives f what tau = 1 gives it (0.0098) is refused."""
    tail = sampling_panels.sampling_parts(1.0, 6, 1.0)["temperature"][-1]
    head = {(0.5, 6, 1.0): [0.8, 0.12, 0.05], (2.0, 6, 1.0): [0.4, 0.3, 0.2]}
    q = [*head[setting], 0.02, 0.01, tail]  # still in order, and a as before
    monkeypatch.setattr(
        sampling_panels, "sampling_parts", _parts_with({setting: {"temperature": q}})
    )
    with pytest.raises(AssertionError, match="claims hotter lifts the tail, but"):
        panel("sampling-explorer")


def test_the_tail_claim_compares_the_last_token_at_the_three_temperatures(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At tau = 1, f holds 0.0098 and e 0.0266: a colder f of 0.005 (whose e, 0.015,
    is above 0.0098) and a hotter f of 0.02 (below 0.0266) hold the claim, and the
    beats say so."""
    cold = [0.8, 0.1, 0.05, 0.03, 0.015, 0.005]
    hot = [0.4, 0.25, 0.15, 0.12, 0.06, 0.02]
    monkeypatch.setattr(
        sampling_panels,
        "sampling_parts",
        _parts_with(
            {(0.5, 6, 1.0): {"temperature": cold}, (2.0, 6, 1.0): {"temperature": hot}}
        ),
    )
    texts = [b["text"] for b in panel("sampling-explorer")["beats"]]
    assert "a rises to 0.8 and f falls to 0.005" in texts[1]
    assert "a falls to 0.4 and f rises to 0.02" in texts[2]


def test_each_sampling_sentence_reads_its_own_beat(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    beats = list(sampling_panels.SAMPLING_BEATS)
    beats[1] = (0.5, 6, 0.95)  # the cold beat's claims read only its temperature
    beats[3] = (1.5, 2, 1.0)
    monkeypatch.setattr(sampling_panels, "SAMPLING_BEATS", beats)
    texts = [b["text"] for b in panel("sampling-explorer")["beats"]]
    assert "$k = 6$ and $p = 1$, nothing is cut" in texts[0]
    # at tau = 1.5, a : b = exp(0.8 / 1.5) = 1.705 : 1, that is 0.63 and 0.37
    assert texts[3] == (
        "Back at $\\tau = 1.5$, top-k with $k = 2$: a and b are kept and "
        "renormalised to 0.63, 0.37; c to f get exactly zero."
    )


def test_the_sampling_figure_draws_the_last_three_beats(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    beats = list(sampling_panels.SAMPLING_BEATS)
    beats[3:] = [(1.5, 3, 1.0), (1.0, 2, 0.9), (0.25, 2, 0.9), (4.0, 2, 0.9)]
    monkeypatch.setattr(sampling_panels, "SAMPLING_BEATS", beats)
    fig = static_figure("sampling-explorer")
    try:
        titles = [ax.get_title() for ax in fig.axes]
        assert [t.split(":")[0] for t in titles[::3]] == [
            "$\\tau$ = 0.25",
            "$\\tau$ = 1",
            "$\\tau$ = 4",
        ]
        assert all(t.startswith("top-k, k = 2:") for t in titles[1::3])
        for row, tau in enumerate([0.25, 1.0, 4.0]):
            filled = [
                p.get_height() for p in fig.axes[3 * row + 2].patches if p.get_fill()
            ]
            assert filled == pytest.approx(
                sampling_panels.sampling_parts(tau, 2, 0.9)["nucleus"]
            )
    finally:
        plt.close(fig)
