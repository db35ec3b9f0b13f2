"""Tests for bookbuild.site.notation: E notation in glued text becomes a power of ten,
and nothing else changes."""

from __future__ import annotations

import re

import pytest
from docutils import nodes
from hypothesis import given
from hypothesis import strategies as st

from bookbuild.site.notation import (
    MINUS,
    NBSP,
    scientific_nodes,
    set_scientific,
    split_scientific,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.3e-20", [(f"1.3{NBSP}×{NBSP}10", f"{MINUS}20")]),
        ("1e-6", [("10", f"{MINUS}6")]),
        ("1.0e+03", [("10", "3")]),
        ("2e+13", [(f"2{NBSP}×{NBSP}10", "13")]),
        ("3e-01", [(f"3{NBSP}×{NBSP}10", f"{MINUS}1")]),
        ("-4.5E5", [(f"{MINUS}4.5{NBSP}×{NBSP}10", "5")]),
        ("-1e-9", [(f"{MINUS}10", f"{MINUS}9")]),
        ("below 1e-6 at every step", ["below ", ("10", f"{MINUS}6"), " at every step"]),
    ],
)
def test_numbers_in_e_notation(text: str, expected: list) -> None:
    assert split_scientific(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "0.25",
        "1,234",
        "seed 6050",
        "torch 2.13.0",
        "v1e5",
        "1e",
        "e-5",
        "3.1.4e5",
        "1.5e-3x",
        "ratio 12.5",
    ],
)
def test_other_text_is_left_alone(text: str) -> None:
    assert split_scientific(text) == [text]


@given(
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e30, max_value=1e30),
    st.integers(0, 3),
)
def test_every_formatted_float_reads_back_as_its_value(x: float, digits: int) -> None:
    text = f"{x:.{digits}e}"
    ((base, power),) = split_scientific(text)
    mantissa = (
        base.split(f"{NBSP}×{NBSP}")[0]
        if "×" in base
        else base.removesuffix("10") + "1"
    )
    value = float(mantissa.replace(MINUS, "-")) * 10 ** int(power.replace(MINUS, "-"))
    assert value == pytest.approx(float(text), rel=1e-12)


def test_nodes_have_a_superscript_exponent() -> None:
    out = scientific_nodes("about 1.3e-20 of it")
    assert [type(n) for n in out] == [
        nodes.Text,
        nodes.Text,
        nodes.superscript,
        nodes.Text,
    ]
    assert out[2].astext() == f"{MINUS}20"
    assert [type(n) for n in scientific_nodes("no number")] == [nodes.Text]


def test_set_scientific_rewrites_inside_an_inline_node() -> None:
    node = nodes.inline("", "", nodes.strong("", "7e-16"), nodes.Text(" and 0.5"))
    set_scientific(node)
    html = re.sub(r"\s+", " ", node.pformat())
    assert "<superscript>" in html
    assert node.astext() == f"7{NBSP}×{NBSP}10{MINUS}16 and 0.5"
