"""Tests for core.claims: what a check records, when it fails, and the names it
accepts."""

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
    assert (
        claims.check(
            "c-gap",
            gap < 1e-6,
            because="equal to 1e-6",
            values={"largest difference": gap},
        )
        is None
    )
    record = claims.declared()["c-gap"]
    assert record.held is True
    assert record.because == "equal to 1e-6"
    assert record.condition == "gap < 1e-6"  # the source text, as written here
    # a value the condition bounds above by a small literal is rounding error: recorded
    # as the bound
    assert record.values == {"largest difference": "below 1e-6"}
    assert json.loads(record.as_json())["condition"] == "gap < 1e-6"


def test_a_condition_over_several_lines_is_read_whole() -> None:
    a, b = 1, 2
    claims.check("c-multi", a < b and b < 3, because="ordered")
    assert claims.declared()["c-multi"].condition == "a < b and b < 3"


def test_a_false_condition_fails_with_what_it_compared() -> None:
    loss = 2.5
    with pytest.raises(
        claims.CheckFailed,
        match=r"^check 'c-low' failed: loss below 2 does not hold "
        r"\(loss < 2; loss = 2\.500\)$",
    ):
        claims.check("c-low", loss < 2, because="loss below 2", values={"loss": loss})
    assert claims.declared()["c-low"].held is False


def test_values_read_tensors_floats_and_lists() -> None:
    claims.check(
        "c-v",
        True,
        because="x",
        values={
            "t": torch.tensor(0.5),
            "l": [1.0, 2],
            "n": float("nan"),
            "b": True,
            "s": "text",
            "d": {"RNN": 0.0653605950825249, "LSTM": [0.19040485142581298, 3]},
        },
    )
    # floats to four significant digits, always with a point; integers as integers;
    # inside a mapping too, its keys as written
    assert claims.declared()["c-v"].values == {
        "t": "0.5000",
        "l": "[1.000, 2]",
        "n": "nan",
        "b": "True",
        "s": "text",
        "d": "{RNN: 0.06536, LSTM: [0.1904, 3]}",
    }


def test_a_name_is_declared_once() -> None:
    claims.check("c-once", True, because="x")
    with pytest.raises(ValueError, match=r"^check 'c-once' is declared twice"):
        claims.check("c-once", True, because="x")


@pytest.mark.parametrize("name", ["C-Upper", "with space", "", "trailing-", 3, "a--b"])
def test_names_are_label_like(name: object) -> None:
    with pytest.raises(
        ValueError, match="name must be lower-case words joined by hyphens"
    ):
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


def test_inside_a_kernel_the_record_is_glued_as_its_json(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import IPython
    import myst_nb

    glued = []
    monkeypatch.setattr(IPython, "get_ipython", lambda: object())
    monkeypatch.setattr(
        myst_nb,
        "glue",
        lambda name, value, display: glued.append((name, repr(value), display)),
    )
    claims.check("c-glued", 1 < 2, because="one is less than two")
    name, text, display = glued[0]
    assert (name, display) == ("check:c-glued", False)
    assert json.loads(text) == {
        "name": "c-glued",
        "held": True,
        "because": "one is less than two",
        "condition": "1 < 2",
        "values": {},
    }


# ---- a check glues the texts its sentence cites (issue 51)


def _kernel(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, object, bool]]:
    import IPython
    import myst_nb

    glued: list[tuple[str, object, bool]] = []
    monkeypatch.setattr(IPython, "get_ipython", lambda: object())
    monkeypatch.setattr(
        myst_nb,
        "glue",
        lambda name, value, display: glued.append((name, value, display)),
    )
    return glued


def test_a_check_glues_each_cited_text_under_its_name_after_its_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    glued = _kernel(monkeypatch)
    gap = 0.123456
    claims.check(
        "c-cite",
        gap < 1,
        because="the gap is below one",
        values={"gap": gap},
        cite={"g_gap": f"{gap:.2f}", "g_run_seconds": "3"},
    )
    assert [n for n, _, _ in glued] == ["check:c-cite", "g_gap", "g_run_seconds"]
    assert glued[1:] == [
        ("g_gap", "0.12", False),
        ("g_run_seconds", "3", False),
    ]  # as glue(name, text) glues


def test_a_failing_check_glues_nothing_it_cites(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    glued = _kernel(monkeypatch)
    with pytest.raises(claims.CheckFailed):
        claims.check(
            "c-cite-no", 2 < 1, because="two is below one", cite={"g_two": "2"}
        )
    assert "g_two" not in [n for n, _, _ in glued]


@pytest.mark.parametrize("text", [3, 0.5, None])
def test_a_cited_text_is_a_string_not_a_number(text: object) -> None:
    with pytest.raises(
        TypeError,
        match=r"cite\['g_n'\] is a .*, not a string: the page shows exactly the "
        r"cited text",
    ):
        claims.check("c-cite-num", True, because="x", cite={"g_n": text})  # type: ignore[dict-item]
    assert "c-cite-num" not in claims.declared()


@pytest.mark.parametrize("key", ["check:c-x", "g-gap", "", 3])
def test_a_cited_name_is_a_glue_name(key: object) -> None:
    with pytest.raises(
        ValueError, match="a cited glue name is letters, digits and underscores"
    ):
        claims.check("c-cite-key", True, because="x", cite={key: "1"})  # type: ignore[dict-item]


def test_cite_is_a_mapping() -> None:
    with pytest.raises(
        TypeError, match="cite must map glue names to the texts the sentence cites"
    ):
        claims.check("c-cite-list", True, because="x", cite=["g_a"])  # type: ignore[arg-type]


def test_outside_a_kernel_a_check_checks_and_glues_nothing_it_cites(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import myst_nb

    glued = []
    monkeypatch.setattr(myst_nb, "glue", lambda *a, **k: glued.append(a))
    claims.check("c-cite-quiet", True, because="x", cite={"g_a": "1"})
    assert "c-cite-quiet" in claims.declared()
    assert glued == []


# ---- values at the precision they have (issue 57)


def test_only_values_the_condition_bounds_above_by_a_small_literal_become_bounds() -> (
    None
):
    diff_out, diff_grad, loss, a = 2.4e-8, 3.1e-6, 0.6321, torch.ones(3)
    b = a + 1e-7
    claims.check(
        "c-b",
        diff_out < 1e-6
        and diff_grad <= 1e-5
        and loss < 1.0
        and (a - b).abs().max() < 1e-4,
        because="x",
        values={
            "outputs": diff_out,
            "gradients": diff_grad,
            "loss": loss,
            "gap": (a - b).abs().max(),
            "unrelated": diff_out * 2,
        },
    )
    assert claims.declared()["c-b"].values == {
        "outputs": "below 1e-6",
        "gradients": "below 1e-5",
        "gap": "below 0.0001",
        # bounded by 1.0, above ROUNDING_BOUND: its value is a result, shown
        "loss": "0.6321",
        # another expression than the condition's: shown as it is
        "unrelated": "4.800e-08",
    }


def test_a_bound_literal_on_the_left_counts_too_and_a_lower_bound_does_not() -> None:
    gap, spread = 4e-9, 0.3
    claims.check(
        "c-left",
        1e-6 > gap and spread > 1e-4,
        because="x",
        values={"gap": gap, "spread": spread},
    )
    assert claims.declared()["c-left"].values == {
        "gap": "below 1e-6",
        "spread": "0.3000",
    }


def test_below_and_above_record_the_bound_and_refuse_a_value_outside_it() -> None:
    assert str(claims.below(3e-7, 1e-6)) == "below 1e-6"
    assert str(claims.above(torch.tensor(51.7), 2.772588)) == "above 2.773"
    with pytest.raises(ValueError, match="must lie below it; got 2e-06"):
        claims.below(2e-6, 1e-6)
    with pytest.raises(ValueError, match="must lie above it"):
        claims.above(1.0, 2.0)
    loss = 51.7
    claims.check(
        "c-above", loss > 5, because="x", values={"loss": claims.above(loss, 5)}
    )
    assert claims.declared()["c-above"].values == {"loss": "above 5"}


def test_limit_text_writes_bounds_as_a_page_does() -> None:
    assert [
        claims.limit_text(x) for x in (1e-6, 1e-12, 0.001, 2.772588, 100.0, 1e4)
    ] == ["1e-6", "1e-12", "0.001", "2.773", "100", "1e4"]
