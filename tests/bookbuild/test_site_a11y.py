"""Tests for bookbuild.site.a11y: each repair of the built pages' markup, on the markup
the themes write.

The browser tests (tests/browser/test_audit.py) check the whole site with axe-core and
the Nu validator; these check each repair alone, quickly, and that a second pass changes
nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document

from bookbuild.site import a11y

SUMMARY = """<details class="admonition hide above-input">
<summary aria-label="Toggle hidden content">
<p class="collapsed admonition-title">Show code cell source</p>
<p class="expanded admonition-title">Hide code cell source</p>
</summary>
<div class="cell_input docutils container"><p>kept</p></div>
</details>"""

HEAD = """<head>
  <script defer src="../_static/scripts/fontawesome.js?digest=55c26ed414f5f8a31ebb"></script>
    <script src="../_static/doctools.js?v=9a2dae69"></script>
    <script src="../_static/searchtools.js"></script>
    <script src="../_static/language_data.js"></script>
    <script src="../searchindex.js"></script>
</head>"""  # noqa: E501  (HTML as the build writes it)

BUTTONS = """<button class="btn search-button-field search-button__button pst-js-only" title="Search" \
aria-label="Search" data-bs-placement="bottom" data-bs-toggle="tooltip">
 <span class="search-button__default-text">Search</span></button>
<button class="btn btn-sm pst-navbar-icon search-button search-button__button pst-js-only" title="Search" \
aria-label="Search" data-bs-placement="bottom" data-bs-toggle="tooltip"><i class="fa-solid fa-magnifying-glass"></i>
<button class="btn btn-sm nav-link pst-navbar-icon theme-switch-button pst-js-only" aria-label="Color mode">
  <i class="theme-switch fa-solid fa-sun                fa-lg" data-mode="light" title="Light"></i>
  <i class="theme-switch fa-solid fa-moon               fa-lg" data-mode="dark"  title="Dark"></i>
</button>"""  # noqa: E501  (HTML as the build writes it)

TABLES = """<table class="table"><thead>
<tr class="row-odd"><th class="head"><p></p></th>
<th class="head"><p></p></th>
</tr>
</thead>
<tbody><tr class="row-even"><td><p>device</p></td><td><p>cpu</p></td></tr></tbody></table>
<table class="table"><thead><tr class="row-odd"><th class="head"><p></p></th><th class="head"><p>loss</p></th></tr>
</thead></table>"""  # noqa: E501  (HTML as the build writes it)


def repaired(text: str, name: str = "book/x.html") -> str:
    once = a11y.repair_page(name, text, "The Book")
    assert a11y.repair_page(name, once, "The Book") == once, (
        "a second pass changed the page"
    )
    return once


def test_folded_cell_summaries_hold_spans_and_no_label_hiding_their_text() -> None:
    out = repaired(SUMMARY)
    assert "<summary>" in out
    assert "aria-label" not in out
    assert (
        '<span class="collapsed admonition-title">Show code cell source</span>' in out
    )
    assert '<span class="expanded admonition-title">Hide code cell source</span>' in out
    assert "<p>kept</p>" in out  # paragraphs outside the summary stay


def test_search_field_is_named_by_its_text_and_the_colour_button_by_its_label() -> None:
    out = repaired(BUTTONS)
    field, icon_button = out.split("<button")[1:3]
    assert "aria-label" not in field
    assert 'title="Search"' in field
    assert 'aria-label="Search"' in icon_button  # an icon-only button keeps its label
    assert 'aria-label="Color mode"' in out
    assert 'title="Light"' not in out
    assert 'title="Dark"' not in out


def test_bibliography_entries_are_list_items() -> None:
    out = repaired(
        '<div role="list" class="citation-list"><div class="citation" id="a" '
        'role="doc-biblioentry">'
    )
    assert 'role="listitem"' in out
    assert "doc-biblioentry" not in out


def test_search_scripts_are_deferred_and_font_awesome_script_dropped() -> None:
    out = repaired(HEAD)
    assert "fontawesome.js" not in out
    for script in [
        "../_static/searchtools.js",
        "../_static/language_data.js",
        "../searchindex.js",
    ]:
        assert f'<script defer src="{script}"></script>' in out
    # others untouched
    assert '<script src="../_static/doctools.js?v=9a2dae69"></script>' in out


def test_empty_header_rows_go_and_an_empty_corner_becomes_a_cell() -> None:
    out = repaired(TABLES)
    assert "<p></p>" not in out
    assert out.count("<thead>") == 1  # the name/value table lost its empty header row
    assert '<td class="head"></td><th class="head"><p>loss</p></th>' in out


def test_root_redirect_becomes_a_titled_page_in_english() -> None:
    bare = '<meta http-equiv="Refresh" content="0; url=book/intro.html" />\n'
    out = repaired(bare, name="index.html")
    assert out.startswith("<!DOCTYPE html>")
    assert '<html lang="en">' in out
    assert "<title>The Book</title>" in out
    assert 'content="0; url=book/intro.html"' in out
    assert repaired(bare, name="book/other.html") == bare  # only the root's redirect


def test_repair_site_rewrites_pages_but_not_static_files(tmp_path: Path) -> None:
    (tmp_path / "book").mkdir()
    (tmp_path / "_static").mkdir()
    (tmp_path / "book" / "x.html").write_text(SUMMARY, encoding="utf-8")
    (tmp_path / "_static" / "y.html").write_text(SUMMARY, encoding="utf-8")
    assert a11y.repair_site(tmp_path, "T") == 1
    assert a11y.repair_site(tmp_path, "T") == 0
    assert (tmp_path / "_static" / "y.html").read_text(encoding="utf-8") == SUMMARY


def doctree(rst: str) -> nodes.document:
    document = new_document("<test>", get_default_settings(Parser))
    Parser().parse(rst, document)
    return document


def test_description_is_the_first_paragraph_of_prose_cut_at_a_word() -> None:
    tree = doctree(
        ".. note::\n\n   A boxed remark that is long enough to count as prose "
        "but is not.\n\n"
        "Short.\n\n"
        + "Recurrent networks apply one rule at every step of a sequence. "
        * 5
    )
    text = a11y.page_description(tree, "fallback")
    assert text.startswith("Recurrent networks apply one rule")
    assert len(text) <= a11y.DESCRIPTION_CHARS
    assert text.endswith("…")
    assert not text.endswith(" …")
    assert a11y.page_description(None, "Search: The Book") == "Search: The Book"


@pytest.mark.parametrize("repair", a11y.REPAIRS)
def test_every_repair_leaves_unrelated_markup_alone(repair) -> None:  # type: ignore[no-untyped-def]
    page = '<p>Plain <a href="x.html">text</a> with <code>&lt;summary&gt;</code>.</p>\n'
    assert repair("book/x.html", page) == page


def test_tab_labels_lose_aria_controls_but_keep_their_for() -> None:
    from bookbuild.site.a11y import tab_label_controls

    tab = (
        '<label aria-controls="sd-tab-item-0-content" class="sd-tab-label" '
        'data-sync-group="framework" for="sd-tab-item-0">'
    )
    fixed = tab_label_controls("book/x.html", tab)
    assert "aria-controls" not in fixed
    assert 'for="sd-tab-item-0"' in fixed
    assert tab_label_controls("x.html", fixed) == fixed  # idempotent
