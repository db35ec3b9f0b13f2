"""Tests for core.claims: what a check records, when it fails, and the names it accepts."""

from __future__ import annotations

import json

import pytest
import torch

from chapter_code.core import claims


@pytest.fixture(autouse=True)
def _fresh():
    claims.forget()
    yield
    claims.forget()


def test_a_check_that_holds_records_name_condition_and_values() -> None:
    gap = 3e-7
    assert claims.check("c-gap", gap < 1e-6, because="equal to 1e-6", values={"largest difference": gap}) is True
    record = claims.declared()["c-gap"]
    assert record.held is True
    assert record.because == "equal to 1e-6"
    assert record.condition == "gap < 1e-6"  # the source text, as written here
    assert record.values == {"largest difference": "3e-07"}
    assert json.loads(record.as_json())["condition"] == "gap < 1e-6"


def test_a_condition_over_several_lines_is_read_whole() -> None:
    a, b = 1, 2
    claims.check("c-multi",
                 a < b
                 and b < 3, because="ordered")
    assert claims.declared()["c-multi"].condition == "a < b and b < 3"


def test_a_false_condition_fails_with_what_it_compared() -> None:
    loss = 2.5
    with pytest.raises(claims.CheckFailed, match=r"^check 'c-low' failed: loss below 2 does not hold "
                       r"\(loss < 2; loss = 2\.5\)$"):
        claims.check("c-low", loss < 2, because="loss below 2", values={"loss": loss})
    assert claims.declared()["c-low"].held is False


def test_values_read_tensors_floats_and_lists() -> None:
    claims.check("c-v", True, because="x", values={"t": torch.tensor(0.5), "l": [1.0, 2], "n": float("nan"),
                                                    "b": True, "s": "text"})
    assert claims.declared()["c-v"].values == {"t": "0.5", "l": "[1, 2]", "n": "nan", "b": "True", "s": "text"}


def test_a_name_is_declared_once() -> None:
    claims.check("c-once", True, because="x")
    with pytest.raises(ValueError, match=r"^check 'c-once' is declared twice"):
        claims.check("c-once", True, because="x")


@pytest.mark.parametrize("name", ["C-Upper", "with space", "", "trailing-", 3, "a--b"])
def test_names_are_label_like(name: object) -> None:
    with pytest.raises(ValueError, match="name must be lower-case words joined by hyphens"):
        claims.check(name, True, because="x")  # type: ignore[arg-type]


@pytest.mark.parametrize("because", ["", "   ", None])
def test_a_check_says_what_it_establishes(because: object) -> None:
    with pytest.raises(ValueError, match="because must say in words"):
        claims.check("c-b", True, because=because)  # type: ignore[arg-type]


def test_values_are_a_mapping() -> None:
    with pytest.raises(TypeError, match="values must be a mapping"):
        claims.check("c-m", True, because="x", values=[1, 2])  # type: ignore[arg-type]


def test_outside_a_kernel_nothing_is_glued(monkeypatch: pytest.MonkeyPatch) -> None:
    glued = []
    import myst_nb

    monkeypatch.setattr(myst_nb, "glue", lambda *a, **k: glued.append(a))
    claims.check("c-quiet", True, because="x")
    assert glued == []


def test_inside_a_kernel_the_record_is_glued_as_its_json(monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython
    import myst_nb

    glued = []
    monkeypatch.setattr(IPython, "get_ipython", lambda: object())
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display: glued.append((name, repr(value), display)))
    claims.check("c-glued", 1 < 2, because="one is less than two")
    name, text, display = glued[0]
    assert (name, display) == ("check:c-glued", False)
    assert json.loads(text) == {"name": "c-glued", "held": True, "because": "one is less than two",
                                "condition": "1 < 2", "values": {}}
