"""Tests for bookbuild.site.search: the text a search summary is cut from, and where
each target starts in it."""

from __future__ import annotations

import json

import pytest
from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document

from bookbuild.site.search import (
    page_text,
    readable_doctree,
    readable_math,
    text_script,
)


def doctree() -> nodes.document:
    doc = new_document("<test>", get_default_settings(Parser))
    first = nodes.section(ids=["the-gate"])
    first += nodes.title("", "The gate")
    first += nodes.paragraph(
        "",
        "",
        nodes.Text("A gate is a "),
        nodes.emphasis("", "sigmoid"),
        nodes.Text("\n of  x."),
    )
    first += nodes.comment("", "a comment is not searched")
    first += nodes.raw("", "<script>provenance</script>", format="html")
    hidden = nodes.paragraph("", "not this", classes=["no-search"])
    first += hidden
    second = nodes.section(ids=["the-cell", "sec-cell"])
    second += nodes.title("", "The cell")
    term = nodes.term("", "forget gate", ids=["term-forget-gate"])
    second += nodes.definition_list(
        "",
        nodes.definition_list_item(
            "", term, nodes.definition("", nodes.paragraph("", "keeps the cell"))
        ),
    )
    doc += [first, second]
    return doc


def test_the_text_reads_as_the_page_with_blocks_apart_and_whitespace_collapsed() -> (
    None
):
    text, _ = page_text(doctree())
    assert (
        text == "The gate A gate is a sigmoid of x. The cell forget gate keeps the cell"
    )


def test_every_id_a_result_can_name_points_at_its_element() -> None:
    text, ids = page_text(doctree())
    assert text[ids["the-gate"] :].startswith("The gate")
    assert text[ids["the-cell"] :].startswith("The cell")
    assert ids["sec-cell"] == ids["the-cell"]
    assert text[ids["term-forget-gate"] :].startswith("forget gate")


def test_the_script_hands_the_text_to_the_search_page() -> None:
    script = text_script("book/gated", doctree())
    prefix = 'window.bookSearchText && window.bookSearchText("book/gated", '
    assert script.startswith(prefix)
    assert script.endswith(");\n")
    data = json.loads(script[len(prefix) : -3])
    assert data["text"].startswith("The gate")
    assert data["sections"]["the-cell"] > 0


def test_a_formula_is_searched_and_shown_as_a_reader_reads_it_not_as_its_tex() -> None:
    doc = new_document("<test>", get_default_settings(Parser))
    section = nodes.section(ids=["the-output"])
    section += nodes.paragraph(
        "",
        "",
        nodes.Text("the output gate decides how much of "),
        nodes.math("", r"\tanh(c_t)"),
        nodes.Text(" becomes "),
        nodes.math("", "h_t"),
    )
    section += nodes.math_block("", r"c_t = f_t \odot c_{t-1} + i_t \odot g_t")
    doc += section
    text, _ = page_text(doc)
    assert (
        text == "the output gate decides how much of tanh(cₜ) becomes hₜ cₜ = fₜ ⊙ "
        "cₜ₋₁ + iₜ ⊙ gₜ"
    )
    indexed = readable_doctree(doc).astext()
    assert "tanh(cₜ)" in indexed
    assert "\\" not in indexed
    assert "odot" not in indexed
    # the page itself keeps its TeX, for the typesetting
    assert "\\tanh" in doc.astext()


@pytest.mark.parametrize(
    ("tex", "said"),
    [
        (r"h_{t-1}", "hₜ₋₁"),
        (r"W_{hf} h_{t-1} + b_f", "W_(hf) hₜ₋₁ + b_f"),
        (r"\frac{\partial L}{\partial h_t}", "(∂L)/(∂hₜ)"),
        (r"\lVert W \rVert_2^{T-t}", "‖ W ‖₂ᵀ⁻ᵗ"),
        (r"\mathbb{R}^{B \times T \times H}", "ℝ^(B × T × H)"),
        (r"\operatorname{softmax}(z/\tau)", "softmax(z/τ)"),
        (r"\big( 1 - \tanh^2 \big)", "(1 - tanh²)"),
        (r"W^\top", "Wᵀ"),
        (r"\sqrt{d}", "√d"),
        (r"\tilde{c}_t", "c̃ₜ"),
        (
            r"\begin{aligned} f_t &= \sigma(x) && \text{forget gate}\\ h_t &= "
            r"o_t \odot \tanh(c_t) \end{aligned}",
            "fₜ = σ(x) forget gate; hₜ = oₜ ⊙ tanh(cₜ)",
        ),
    ],
)
def test_readable_math_leaves_no_backslash_or_brace(tex: str, said: str) -> None:
    assert readable_math(tex) == said
