"""Tests for bookbuild.site.search: the text a search summary is cut from, and where each target starts in it."""

from __future__ import annotations

import json

from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document

from bookbuild.site.search import page_text, text_script


def doctree() -> nodes.document:
    doc = new_document("<test>", get_default_settings(Parser))
    first = nodes.section(ids=["the-gate"])
    first += nodes.title("", "The gate")
    first += nodes.paragraph("", "", nodes.Text("A gate is a "), nodes.emphasis("", "sigmoid"), nodes.Text("\n of  x."))
    first += nodes.comment("", "a comment is not searched")
    first += nodes.raw("", "<script>provenance</script>", format="html")
    hidden = nodes.paragraph("", "not this", classes=["no-search"])
    first += hidden
    second = nodes.section(ids=["the-cell", "sec-cell"])
    second += nodes.title("", "The cell")
    term = nodes.term("", "forget gate", ids=["term-forget-gate"])
    second += nodes.definition_list("", nodes.definition_list_item("", term, nodes.definition("", nodes.paragraph(
        "", "keeps the cell"))))
    doc += [first, second]
    return doc


def test_the_text_reads_as_the_page_with_blocks_apart_and_whitespace_collapsed() -> None:
    text, _ = page_text(doctree())
    assert text == "The gate A gate is a sigmoid of x. The cell forget gate keeps the cell"


def test_every_id_a_result_can_name_points_at_its_element() -> None:
    text, ids = page_text(doctree())
    assert text[ids["the-gate"]:].startswith("The gate")
    assert text[ids["the-cell"]:].startswith("The cell")
    assert ids["sec-cell"] == ids["the-cell"]
    assert text[ids["term-forget-gate"]:].startswith("forget gate")


def test_the_script_hands_the_text_to_the_search_page() -> None:
    script = text_script("book/gated", doctree())
    prefix = 'window.bookSearchText && window.bookSearchText("book/gated", '
    assert script.startswith(prefix)
    assert script.endswith(");\n")
    data = json.loads(script[len(prefix):-3])
    assert data["text"].startswith("The gate")
    assert data["sections"]["the-cell"] > 0
