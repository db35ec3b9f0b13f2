"""Link previews on the built pages, in Chromium with no network
(bookbuild/site/previews.py, book-site.js): every citation, glossary term and
cross-reference in a chapter has one; focus or hover shows it inside the window, the
pointer can move onto it, Escape closes it and leaves the focus on the link; on a touch
screen the first tap shows it docked at the foot of the screen and the second follows
the link; its math is typeset."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from tests.browser.conftest import new_context
from tests.browser.test_pages import PAGES, VIEWPORTS, open_page, page, viewport  # noqa: F401  (shared fixtures)

CHAPTER = "book/gated.html"
CITATION = 'article a.reference.internal[href^="bibliography.html#cite-"]'
TERM_WITH_MATH = 'article a.reference.internal[href="glossary.html#term-cell-state"]'
#: the targets every link to which must have a preview: citations, glossary terms,
#: numbered things, sections
PREVIEWED = re.compile(
    r"(bibliography\.html#cite-|glossary\.html#term-|#equation-|#fig-|#tab-|#ex-|#sec-|#chap-)"
)


def _tip(tab) -> dict:  # type: ignore[no-untyped-def]
    return tab.evaluate("""() => {
      const tip = document.getElementById('link-tip');
      if (!tip) return {exists: false};
      const r = tip.getBoundingClientRect();
      const active = document.activeElement;
      return {exists: true, shown: !tip.hidden && getComputedStyle(tip).display !== 'none', left: r.left,
              right: r.right, top: r.top, bottom: r.bottom, width: document.documentElement.clientWidth,
              height: window.innerHeight, text: tip.innerText, kind: tip.dataset.kind,
              html: tip.innerHTML, active: active && active.getAttribute('href'),
              describedby: active && active.getAttribute('aria-describedby')};
    }""")  # noqa: E501  (JavaScript run in the page)


def _first_visible(tab, selector: str):  # type: ignore[no-untyped-def]
    link = tab.locator(f"{selector}:visible").first
    link.scroll_into_view_if_needed()
    return link


@pytest.mark.parametrize(
    "name",
    [
        "book/gated.html",
        "book/language-models.html",
        "book/beyond.html",
        "book/glossary.html",
    ],
)
def test_every_citation_term_and_cross_reference_has_a_preview(
    site_dir: Path, name: str
) -> None:
    text = (site_dir / name).read_text(encoding="utf-8")
    article = BeautifulSoup(
        re.search(r"<article.*?</article>", text, re.S).group(0), "html.parser"
    )
    match = re.search(r'<template id="book-previews">(.*?)</template>', text, re.S)
    assert match, f"{name} has no previews"
    have = {
        e["data-href"]
        for e in BeautifulSoup(match.group(1), "html.parser").select(
            "div.link-tip-body"
        )
    }
    wanted = {
        a["href"]
        for a in article.select("a.reference.internal[href]")
        if PREVIEWED.search(a["href"])
    }
    assert len(wanted) > 5
    assert wanted - have == set()
    assert not re.search(r"\\\(|\\\[", match.group(1)), (
        "math left untypeset in a preview"
    )


def test_focus_shows_the_preview_inside_the_window_and_escape_closes_it(
    page,  # noqa: F811
    site_dir,
    viewport,  # noqa: F811
):
    open_page(page, site_dir, CHAPTER)
    links = page.locator(f"{CITATION}:visible")
    assert links.count() > 3
    for i in range(links.count()):
        link = links.nth(i)
        link.focus()
        state = _tip(page)
        assert state["shown"], i
        assert state["kind"] == "citation"
        assert state["describedby"] == "link-tip"
        # "Gers et al., 2000": the entry's label heads the preview
        label = state["text"].splitlines()[0]
        cited = link.locator(
            "xpath=ancestor::span[contains(@class, 'bibtex-citation')]"
        ).inner_text()
        # "Gers et al. [2000]" or "[Gers et al., 2000]"
        assert label.split(" ")[0].rstrip(",") in cited, (label, cited)
        assert state["left"] >= 0, (i, state)
        assert state["right"] <= state["width"], (i, state)
        assert state["top"] >= 0, (i, state)
        assert state["bottom"] <= state["height"], (i, state)
    page.keyboard.press("Escape")
    state = _tip(page)
    assert not state["shown"]
    # the focus stays on the link
    assert state["active"] == links.nth(links.count() - 1).get_attribute("href")
    assert page.outside_requests == []
    assert page.console_errors == []


def test_a_term_s_preview_shows_its_definition_with_the_math_typeset(
    page,  # noqa: F811
    site_dir,
) -> None:
    open_page(page, site_dir, CHAPTER)
    _first_visible(page, TERM_WITH_MATH).focus()
    state = _tip(page)
    assert state["shown"]
    assert state["kind"] == "term"
    assert state["text"].startswith("cell state")
    assert "<svg" in state["html"] or "mjx-container" in state["html"]
    assert "\\(" not in state["text"]


def test_the_pointer_can_move_onto_a_hover_preview(page, site_dir, viewport) -> None:  # noqa: F811
    if viewport == "phone":
        pytest.skip("no hover on a phone: see the tap test")
    open_page(page, site_dir, CHAPTER)
    link = _first_visible(page, CITATION)
    link.hover()
    page.wait_for_timeout(600)
    assert _tip(page)["shown"]
    box = page.locator("#link-tip").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2, steps=5)
    page.wait_for_timeout(400)
    assert _tip(page)["shown"], "the preview closed as the pointer moved onto it"
    page.mouse.move(2, 2)
    page.wait_for_timeout(1000)
    assert not _tip(page)["shown"]


def test_a_first_tap_previews_and_a_second_follows_the_link(
    browser, site_dir: Path
) -> None:  # type: ignore[no-untyped-def]
    context = new_context(
        browser, viewport=VIEWPORTS["phone"], has_touch=True, is_mobile=True
    )
    tab = context.new_page()
    try:
        open_page(tab, site_dir, CHAPTER)
        link = _first_visible(tab, CITATION)
        href = link.get_attribute("href")
        link.tap()
        tab.wait_for_timeout(300)
        state = _tip(tab)
        assert state["shown"]
        assert tab.url.split("#")[0].endswith(CHAPTER)  # the tap stayed on the page
        assert state["bottom"] <= state["height"]
        # docked across the foot of the screen
        assert state["right"] - state["left"] >= state["width"] - 24
        assert "Go to the bibliography entry" in state["text"]
        link.tap()
        tab.wait_for_url(re.compile(re.escape(href.split("#")[0])))
    finally:
        context.close()


def test_the_site_loads_no_script_or_style_from_another_host(site_dir: Path) -> None:
    external = re.compile(
        r'<(?:script|link|img)\b[^>]*\b(?:src|href)="(?:https?:)?//', re.I
    )
    offenders = [
        name
        for name in PAGES
        if (site_dir / name).exists()
        and external.search((site_dir / name).read_text(encoding="utf-8"))
    ]
    assert offenders == []
