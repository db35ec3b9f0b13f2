"""Tests for chapter_code.panel_data and chapter_code.panel_figures: the panels' numbers, beats and figures."""

from __future__ import annotations

import json
import math

import pytest
import torch
from PIL import Image

from chapter_code import panel_data
from chapter_code.figures import SMALLEST_TEXT_KEY
from chapter_code.gates import keep_dial
from chapter_code.gradients import one_unit_gradient
from chapter_code.panel_data import PANELS, crossing, dial_parts, forget_curve, number, panel, panel_json
from chapter_code.panel_figures import static_figure, write_static_figure


@pytest.mark.parametrize("name", list(PANELS))
def test_every_panel_has_beats_with_text_and_controls_that_hold_its_values(name: str) -> None:
    data = panel(name)
    assert data["name"] == name
    assert data["title"]
    assert data["summary"]
    assert data["note"]
    assert len(data["beats"]) >= 3
    for beat in data["beats"]:
        assert beat["text"].strip()
        assert "'" not in beat["text"]
        assert all(isinstance(v, (int, float)) and math.isfinite(v) for v in beat["state"].values())
        for control in data["controls"]:  # every beat's parameter lies on its slider
            assert control["min"] <= beat["state"][control["id"]] <= control["max"]
    json.loads(panel_json(name))  # strict JSON (no NaN)


def test_panel_json_is_safe_inside_a_script_element(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(PANELS, "keep-dial", lambda: {"name": "x", "title": "</script><b>", "beats": []})
    text = panel_json("keep-dial")
    assert "</script>" not in text
    assert json.loads(text)["title"] == "</script><b>"


def test_unknown_panel_names_the_argument_and_the_choices() -> None:
    with pytest.raises(ValueError, match=r"name must be one of .*one-unit.*; got 'nope'"):
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
    assert [(b["state"]["w"], b["state"]["x"]) for b in data["beats"]] == panel_data.ONE_UNIT_CASES
    saturated = one_unit_gradient(2.0, 0.5, data["steps"])
    assert number(saturated.products[-1]) in data["beats"][-1]["text"]
    curves = panel_data.one_unit_curves(1.5, 0.1)
    assert curves["products"] == one_unit_gradient(1.5, 0.1, 60).products


def test_truncation_lanes_value_crosses_a_detach_and_no_gradient_crosses_any_cut() -> None:
    lanes = crossing(6, 3, 2, loss_at=6)
    assert lanes["carry"]["value"] == [2, 3, 4, 5, 6]
    assert lanes["reset"]["value"] == [2, 3]
    assert lanes["carry"]["gradient"] == lanes["reset"]["gradient"] == [4, 5, 6]
    assert crossing(9, 3, 5, loss_at=9)["carry"]["gradient"] == [7, 8, 9]
    with pytest.raises(ValueError, match="marked"):
        crossing(6, 3, 7, loss_at=6)


def test_lstm_gate_states_follow_the_update_lines() -> None:
    states = panel_data.lstm_gate_states()
    for s in states:
        assert s["c"] == pytest.approx(s["f"] * s["cPrev"] + s["i"] * s["g"], abs=1e-12)
        assert s["h"] == pytest.approx(s["o"] * math.tanh(s["c"]), abs=1e-12)
    assert [s["cPrev"] for s in states[1:]] == [s["c"] for s in states[:-1]]  # the cell is carried
    with pytest.raises(ValueError, match="gate f must be in"):
        panel_data.lstm_gate_states(steps=[(1.5, 0.0, 0.0, 0.0)])


def test_forget_curve_and_dial_parts_match_their_formulas() -> None:
    f = 1 / (1 + math.exp(-1.0))
    assert forget_curve(1.0)[19] == pytest.approx(f**20, rel=1e-13)
    assert len(forget_curve(1.0)) == panel_data.FORGET_STEPS
    assert dial_parts(0.25) == dict(zip(["kept", "written", "new"], keep_dial(0.8, 0.3, 0.25), strict=True))


def test_a_false_claim_stops_the_panel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(panel_data, "ONE_UNIT_CASES", [(0.9, 0.0), (2.0, 0.0), (2.0, 0.0)])  # no saturation
    with pytest.raises(AssertionError, match="vanishing under a growing bound"):
        panel("one-unit")


@pytest.mark.parametrize("name", list(PANELS))
def test_static_figure_is_written_as_a_book_png(name: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    torch.manual_seed(0)
    path = write_static_figure(name, tmp_path / f"{name}.png")
    with Image.open(path) as image:
        assert image.width > 400
        assert float(image.text[SMALLEST_TEXT_KEY]) > 0
