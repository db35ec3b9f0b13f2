"""The front page, the page on how the book is built, the PDF in every header, and
search (issue 28, item 7).

Each is opened in Chromium at desktop and phone widths, in the theme's light
and dark modes, with no network:

* the front page is written for readers: who the book is for, what it
  assumes, what each chapter of the table of contents lets a reader do, a path
  through them, how to read a page (panels included), how to use the labs, and
  links to the PDF, the lab notebooks and the chapters' notebooks; how the book
  is built and checked is on a page of its own, with the build's table;
* every page's header holds a **PDF** button that leads to the book's PDF when
  the site holds one (``make pdf`` copies it in), else to the section of the
  building page that says how to make it; the theme's print item of the
  download menu says it prints the page, and the menu offers the chapter's
  executed notebook;
* search results show a snippet of text around the match, with the query's
  words marked and readable; the query in the search field never starts under
  the field's magnifier (the search page and the Ctrl+K dialog).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
import yaml
from bs4 import BeautifulSoup

from bookbuild.build import ROOT
from bookbuild.site.downloads import FALLBACK_DOC, FALLBACK_LABEL, PDF_NAME
from tests.browser.conftest import recording_page
from tests.browser.test_pages import PAGES, VIEWPORTS, open_page, settle_transitions
from tests.browser.test_reading import MIN_CONTRAST, SCHEMES, SWITCH_THEME, contrast

FRONT = "book/intro.html"
BUILDING = f"{FALLBACK_DOC}.html"
CHAPTER = "book/gated.html"
#: pages whose header is opened in the browser: the front page, a chapter, a reference
#: page, search, the index
HEADER_PAGES = [FRONT, CHAPTER, BUILDING, "search.html", "genindex.html"]
FRONT_SECTIONS = {
    "sec-intro-audience": "who the book is for",
    "sec-intro-prerequisites": "what it assumes",
    "sec-intro-chapters": "what each chapter lets you do",
    "sec-intro-path": "a path through the book",
    "sec-intro-reading": "how to read a page",
    "sec-intro-labs": "how to use the labs",
    "sec-intro-downloads": "the PDF and the notebooks",
}
QUERY = "forget gate"

# Colours as shown: an element's text colour and the first opaque background behind it.
COLOURS = r"""
(selector) => {
  const rgba = c => { const v = c.match(/[\d.]+/g).map(Number); return v.length > 3 ? v : [...v, 1]; };
  const behind = e => {
    for (let n = e; n; n = n.parentElement) {
      const c = rgba(getComputedStyle(n).backgroundColor);
      if (c[3] > 0) { return c; }
    }
    return [255, 255, 255, 1];
  };
  return Array.from(document.querySelectorAll(selector))
    .filter(e => e.getBoundingClientRect().width > 0)
    .map(e => ({
      text: e.textContent.trim().slice(0, 60), color: rgba(getComputedStyle(e).color), background: behind(e),
    }));
}
"""  # noqa: E501  (JavaScript run in the page)


def numbered_chapters() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [
        f"{c['file']}.html"
        for part in toc["parts"]
        if part.get("numbered")
        for c in part["chapters"]
    ]


@pytest.fixture(params=list(VIEWPORTS), scope="module")
def viewport(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(params=SCHEMES, scope="module")
def scheme(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def tab(browser, viewport: str, scheme: str) -> Iterator[object]:  # type: ignore[no-untyped-def]
    """A page at this width and colour scheme that records non-file requests and console
    errors."""
    with recording_page(browser, viewport=VIEWPORTS[viewport], scheme=scheme) as p:
        yield p


def where(name: str, viewport: str, scheme: str) -> str:
    return f"{name} at {VIEWPORTS[viewport]['width']} px, {scheme}"


def opened(tab, site_dir: Path, name: str, scheme: str, query: str = "") -> None:  # type: ignore[no-untyped-def]
    if query:
        tab.goto((site_dir / name).as_uri() + query)
        tab.wait_for_load_state("load")
        settle_transitions(tab)
    else:
        open_page(tab, site_dir, name)
    assert tab.evaluate("() => document.documentElement.dataset.theme") == scheme


def target_of(site_dir: Path, page: str, href: str) -> tuple[Path, str]:
    """The file and fragment that ``href`` on ``page`` leads to."""
    url = urlparse(href)
    return ((site_dir / page).parent / unquote(url.path)).resolve(), url.fragment


def assert_pdf_link(site_dir: Path, page: str, href: str) -> None:
    """A PDF link leads to the site's PDF when there is one, else to the building page's
    PDF section."""
    target, fragment = target_of(site_dir, page, href)
    pdf = site_dir / PDF_NAME
    if pdf.is_file():
        assert target == pdf.resolve(), (
            f"{page}: the PDF link {href!r} misses the site's {PDF_NAME}"
        )
        assert pdf.read_bytes()[:5] == b"%PDF-", f"{pdf} is not a PDF"
    else:
        assert target == (site_dir / BUILDING).resolve(), (
            f"{page}: without a PDF, {href!r} should lead to {BUILDING}"
        )
        ids = {
            t["id"]
            for t in BeautifulSoup(
                target.read_text(encoding="utf-8"), "html.parser"
            ).find_all(id=True)
        }
        assert fragment == FALLBACK_LABEL
        assert fragment in ids, f"{BUILDING} has no #{fragment}"


def readable(tab, selector: str, at: str) -> list[str]:  # type: ignore[no-untyped-def]
    shown = tab.evaluate(COLOURS, selector)
    assert shown, f"{at}: nothing matches {selector}"
    return [
        f"{c['text']!r} ({contrast(c['color'], c['background']):.2f}:1)"
        for c in shown
        if contrast(c["color"], c["background"]) < MIN_CONTRAST
    ]


# ----------------------------------------------------------------------- the front page


def test_front_page_is_written_for_readers(
    tab, site_dir: Path, viewport: str, scheme: str
) -> None:  # type: ignore[no-untyped-def]
    opened(tab, site_dir, FRONT, scheme)
    at = where(FRONT, viewport, scheme)
    sections = tab.evaluate(
        "ids => ids.map(id => { const s = document.getElementById(id); const section = "
        "s && s.closest('section'); const h = section && section.querySelector('h2'); "
        "return {id, heading: h ? h.textContent.trim() : null, words: section ? "
        "section.innerText.split(/\\s+/).length : 0, width: h ? "
        "h.getBoundingClientRect().width : 0}; })",
        list(FRONT_SECTIONS),
    )
    for s in sections:
        what = FRONT_SECTIONS[s["id"]]
        assert s["heading"], f"{at}: no section on {what} (#{s['id']})"
        assert s["width"] > 0, f"{at}: the section on {what} is not shown"
        assert s["words"] > 40, (
            f"{at}: the section on {what} says almost nothing ({s['words']} words)"
        )

    # What each chapter lets you do: one entry per chapter of the table of contents, in
    # its order, each a link.
    entries = tab.evaluate(
        "() => Array.from(document.getElementById('sec-intro-chapters')"
        ".closest('section').querySelectorAll('dt')).map(dt => ({href: "
        "dt.querySelector('a') ? dt.querySelector('a').getAttribute('href') : '', "
        "says: dt.nextElementSibling ? dt.nextElementSibling.innerText : ''}))"
    )
    linked = [
        str(target_of(site_dir, FRONT, e["href"])[0].relative_to(site_dir.resolve()))
        for e in entries
    ]
    assert linked == numbered_chapters(), (
        f"{at}: the chapter list does not follow the table of contents: {linked}"
    )
    terse = [e["href"] for e in entries if len(e["says"].split()) < 15]
    assert terse == [], (
        f"{at}: chapters with no line on what they let a reader do: {terse}"
    )

    # The path names the chapters; the page explains the panels, the labs' checkpoints
    # and hints.
    text = tab.evaluate("() => document.querySelector('main').innerText")
    path = tab.evaluate(
        "() => document.getElementById('sec-intro-path').closest('section').innerHTML"
    )
    for chapter in numbered_chapters():
        assert Path(chapter).name in path, (
            f"{at}: the suggested path never names {chapter}"
        )
    for words in (
        "panel",
        "Space or K",
        "transcript",
        "checkpoint",
        "hints",
        "solution edition",
        ".ipynb",
    ):
        assert words in text, f"{at}: the front page never says {words!r}"

    # Links: the building page, the labs' zips, the PDF; each resolves.
    hrefs = tab.evaluate(
        "() => Array.from(document.querySelectorAll('main a[href]')).map(a => "
        "a.getAttribute('href'))"
    )
    targets = {
        target_of(site_dir, FRONT, h)[0] for h in hrefs if not re.match(r"^[a-z]+:", h)
    }
    assert (site_dir / BUILDING).resolve() in targets, (
        f"{at}: no link to the page on how the book is built"
    )
    for edition in ("student", "solution"):
        zips = [t for t in targets if t.name == f"labs-{edition}.zip"]
        assert zips, f"{at}: no link to the {edition} labs"
        assert all(z.is_file() and z.stat().st_size > 1000 for z in zips), (
            f"{at}: the {edition} zip is missing"
        )
    in_text = tab.evaluate(
        "() => Array.from(document.querySelectorAll('article.bd-article "
        "a.book-pdf-link')).map(a => a.getAttribute('href'))"
    )
    assert len(in_text) == 1, (
        f"{at}: the front page's text should link the PDF once, found {len(in_text)}"
    )
    assert_pdf_link(site_dir, FRONT, in_text[0])

    # How the book is built and checked is no longer here.
    assert "make test" not in text, f"{at}: the front page still explains the build"
    assert "output profile" not in text.lower(), (
        f"{at}: the build table is still on the front page"
    )

    # Laid out for this width and readable in this scheme.
    wide = tab.evaluate(
        "() => document.documentElement.scrollWidth - "
        "document.documentElement.clientWidth"
    )
    assert wide <= 1, f"{at}: the page scrolls sideways by {wide} px"
    faint = readable(tab, "main dt a, main dd p, main li p, main section > p", at)
    assert faint == [], f"{at}: text under {MIN_CONTRAST}:1: {faint[:3]}"
    assert tab.outside_requests == [], (
        f"{at}: requests to another host: {tab.outside_requests}"
    )
    assert tab.console_errors == [], f"{at}: console errors: {tab.console_errors}"


def test_building_page_holds_how_the_book_is_made(
    tab, site_dir: Path, viewport: str, scheme: str
) -> None:  # type: ignore[no-untyped-def]
    opened(tab, site_dir, BUILDING, scheme)
    at = where(BUILDING, viewport, scheme)
    # textContent: a code block off the screen is not drawn yet (content-visibility), so
    # innerText leaves it out
    text = tab.evaluate("() => document.querySelector('main').textContent")
    for words in (
        "make book",
        "make test",
        "make pdf",
        "BOOK_THREADS",
        "chapter_code.core.runtime",
    ):
        assert words in text, f"{at}: the building page never says {words!r}"
    table = tab.evaluate(
        "() => Array.from(document.querySelectorAll('main table td')).map(td => "
        "td.innerText)"
    )
    assert any("output profile" in cell for cell in table), (
        f"{at}: the build table is missing: {table[:6]}"
    )
    section = tab.locator(f"#{FALLBACK_LABEL}")
    assert section.count() == 1, f"{at}: no PDF section (#{FALLBACK_LABEL})"
    title = tab.evaluate(
        "() => document.querySelector('main h1').textContent.replace('#', '').trim()"
    )
    nav = tab.evaluate(
        "() => Array.from(document.querySelectorAll('.bd-sidebar-primary nav "
        "a')).map(a => a.textContent.trim())"
    )
    assert title in nav, f"{at}: the sidebar does not list {title!r}"
    wide = tab.evaluate(
        "() => document.documentElement.scrollWidth - "
        "document.documentElement.clientWidth"
    )
    assert wide <= 1, f"{at}: the page scrolls sideways by {wide} px"
    assert tab.console_errors == [], f"{at}: console errors: {tab.console_errors}"


# -------------------------------------------------------------- the PDF in every header


def test_every_page_has_one_pdf_button_that_resolves(site_dir: Path) -> None:
    missing = []
    for name in PAGES:
        soup = BeautifulSoup(
            (site_dir / name).read_text(encoding="utf-8"), "html.parser"
        )
        buttons = soup.select(".bd-header-article a.btn-book-pdf")
        if len(buttons) != 1:
            missing.append(f"{name}: {len(buttons)} PDF buttons")
            continue
        assert buttons[0].get_text(strip=True) == "PDF", name
        assert_pdf_link(site_dir, name, buttons[0]["href"])
        printing = [
            b.get_text(strip=True) for b in soup.select(".btn-download-pdf-button")
        ]
        assert all(label == "Print page" for label in printing), (
            f"{name}: the theme's print item reads {printing}"
        )
    assert missing == []


@pytest.mark.parametrize("name", HEADER_PAGES)
def test_pdf_button_is_in_the_header(
    browser, site_dir: Path, viewport: str, name: str
) -> None:  # type: ignore[no-untyped-def]
    """Loaded once per width, in the first scheme, then read again with the theme
    switched in place to the other (tests/browser/test_reading.py checks that a switch
    draws what a load in that scheme does)."""
    with recording_page(
        browser, viewport=VIEWPORTS[viewport], scheme=SCHEMES[0]
    ) as tab:
        opened(tab, site_dir, name, SCHEMES[0])
        for i, scheme in enumerate(SCHEMES):
            if i:
                tab.evaluate(SWITCH_THEME, scheme)
                settle_transitions(tab)
            _check_pdf_button(
                tab, site_dir, viewport, scheme, name, click=i == len(SCHEMES) - 1
            )


def _check_pdf_button(
    tab, site_dir: Path, viewport: str, scheme: str, name: str, click: bool
) -> None:  # type: ignore[no-untyped-def]
    at = where(name, viewport, scheme)
    assert tab.evaluate("() => document.documentElement.dataset.theme") == scheme, at
    buttons = [
        b
        for b in tab.locator(".bd-header-article a.btn-book-pdf").all()
        if b.is_visible()
    ]
    assert len(buttons) == 1, f"{at}: {len(buttons)} visible PDF buttons in the header"
    button = buttons[0]
    assert button.inner_text().strip() == "PDF", (
        f"{at}: the button reads {button.inner_text()!r}"
    )
    box = button.bounding_box()
    assert box["x"] >= 0, f"{at}: the PDF button is off the left edge"
    assert box["x"] + box["width"] <= VIEWPORTS[viewport]["width"], (
        f"{at}: the PDF button is off the right edge"
    )
    assert box["y"] + box["height"] <= 80, (
        f"{at}: the PDF button is not at the top of the page"
    )
    others = tab.evaluate(
        "() => Array.from(document.querySelectorAll('.bd-header-article "
        ".article-header-buttons > *')).filter(e => "
        "!e.classList.contains('btn-book-pdf') && e.getBoundingClientRect().width > "
        "0).map(e => { const r = e.getBoundingClientRect(); return {x: r.x, w: "
        "r.width, y: r.y, h: r.height}; })"
    )
    for o in others:
        apart = o["x"] >= box["x"] + box["width"] - 1 or o["x"] + o["w"] <= box["x"] + 1
        assert apart or o["y"] >= box["y"] + box["height"] - 1, (
            f"{at}: the PDF button overlaps another button"
        )
    faint = readable(tab, ".bd-header-article a.btn-book-pdf .btn__text-container", at)
    assert faint == [], f"{at}: the PDF button's word is faint: {faint}"
    assert_pdf_link(site_dir, name, button.get_attribute("href"))
    # the fallback: a click lands on the section that says how
    if click and not (site_dir / PDF_NAME).is_file():
        button.click()
        tab.wait_for_load_state("load")
        assert tab.url.endswith(f"{BUILDING}#{FALLBACK_LABEL}"), (
            f"{at}: the button led to {tab.url}"
        )
    assert tab.console_errors == [], f"{at}: console errors: {tab.console_errors}"


def test_download_menu_offers_the_notebook_and_names_the_print_item(
    tab,
    site_dir: Path,
    viewport: str,  # type: ignore[no-untyped-def]
    scheme: str,
) -> None:
    opened(tab, site_dir, CHAPTER, scheme)
    at = where(CHAPTER, viewport, scheme)
    tab.locator(".dropdown-download-buttons > button").click()
    items = tab.locator(".dropdown-download-buttons .dropdown-item")
    items.first.wait_for(state="visible", timeout=3000)
    labels = [i.inner_text().strip() for i in items.all() if i.is_visible()]
    assert labels == [".ipynb", ".md", "Print page"], (
        f"{at}: the download menu holds {labels}"
    )
    notebook = tab.locator(
        ".dropdown-download-buttons a.btn-download-notebook-button"
    ).get_attribute("href")
    path, _ = target_of(site_dir, CHAPTER, notebook)
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    assert any(c["cell_type"] == "code" and c.get("outputs") for c in cells), (
        f"{at}: {path.name} has no outputs"
    )
    faint = readable(
        tab, ".dropdown-download-buttons .dropdown-item .btn__text-container", at
    )
    assert faint == [], f"{at}: faint items in the download menu: {faint}"


# ----------------------------------------------------------------------------- search


def search_box(tab, form: str) -> dict:  # type: ignore[no-untyped-def]
    return tab.evaluate(
        "form => { const f = document.querySelector(form); const i = "
        "f.querySelector('i.fa-magnifying-glass'); const input = "
        "f.querySelector('input'); const s = getComputedStyle(input); const icon = "
        "i.getBoundingClientRect(); const box = input.getBoundingClientRect(); return "
        "{iconRight: icon.right, iconWidth: icon.width, textStart: box.left + "
        "parseFloat(s.borderLeftWidth) + parseFloat(s.paddingLeft), value: "
        "input.value}; }",
        form,
    )


def test_a_search_snippet_shows_a_formula_as_text_not_tex(
    tab, site_dir: Path, viewport: str, scheme: str
) -> None:  # type: ignore[no-untyped-def]
    """Issue 53, item 5: the snippet around "output gate" in Chapter 3 read
    ``\\tanh(c_t) becomes h_t``."""
    if viewport != "desktop" or scheme != "light":
        pytest.skip("the snippets' text is the same at every width and in both schemes")
    opened(tab, site_dir, "search.html", scheme, "?q=becomes")
    tab.wait_for_function(
        "() => { const items = document.querySelectorAll('#search-results ul.search > "
        "li'); return items.length > 0 && Array.from(items).every(li => "
        "li.dataset.bookSummary === 'shown'); }",
        timeout=15000,
    )
    snippets = tab.evaluate(
        "() => Array.from(document.querySelectorAll('#search-results p.context'), p => "
        "p.textContent)"
    )
    assert any("tanh(cₜ) becomes hₜ" in s for s in snippets), snippets
    assert not [s for s in snippets if re.search(r"\\[a-zA-Z]+|[_^]\{", s)], snippets


def test_search_results_show_a_snippet(
    tab, site_dir: Path, viewport: str, scheme: str
) -> None:  # type: ignore[no-untyped-def]
    opened(tab, site_dir, "search.html", scheme, "?q=" + QUERY.replace(" ", "+"))
    at = where("search.html", viewport, scheme)
    results = tab.locator("#search-results ul.search > li")
    results.first.wait_for(timeout=15000)
    tab.wait_for_function(
        "() => { const items = document.querySelectorAll('#search-results ul.search > "
        "li'); return items.length > 0 && Array.from(items).every(li => "
        "li.dataset.bookSummary === 'shown'); }",
        timeout=15000,
    )
    found = tab.evaluate(
        "() => Array.from(document.querySelectorAll('#search-results ul.search > "
        "li')).map(li => ({ title: li.querySelector('a').textContent, snippet: "
        "(li.querySelector('p.context') || {}).textContent || '', marked: "
        "Array.from(li.querySelectorAll('p.context .highlighted')).map(m => "
        "m.textContent.toLowerCase())}))"
    )
    assert len(found) >= 3, f"{at}: {len(found)} results for {QUERY!r}"
    words = QUERY.split()
    for r in found:
        snippet = r["snippet"].lower()
        assert 40 <= len(snippet) <= 260, (
            f"{at}: {r['title']}: a snippet of {len(snippet)} characters"
        )
        assert any(w in snippet for w in words), (
            f"{at}: {r['title']}: the snippet holds no word of the query"
        )
        assert r["marked"], f"{at}: {r['title']}: the query's words are not marked"
        assert all(
            any(w.startswith(m) or m.startswith(w) for w in words) for m in r["marked"]
        ), r["marked"]
    both = [r for r in found if all(w in r["snippet"].lower() for w in words)]
    assert both, f"{at}: no snippet shows the two words of {QUERY!r} together"
    faint = readable(
        tab, "#search-results p.context, #search-results p.context .highlighted", at
    )
    assert faint == [], f"{at}: snippets under {MIN_CONTRAST}:1: {faint[:3]}"
    assert tab.outside_requests == [], (
        f"{at}: requests to another host: {tab.outside_requests}"
    )
    assert tab.console_errors == [], f"{at}: console errors: {tab.console_errors}"


def test_query_is_never_under_the_search_icon(
    tab, site_dir: Path, viewport: str, scheme: str
) -> None:  # type: ignore[no-untyped-def]
    opened(tab, site_dir, "search.html", scheme, "?q=" + QUERY.replace(" ", "+"))
    at = where("search.html", viewport, scheme)
    box = search_box(tab, ".bd-search-container form.bd-search")
    assert box["value"] == QUERY
    assert box["iconWidth"] > 0, f"{at}: the search field has no icon"
    assert box["iconRight"] <= box["textStart"], (
        f"{at}: the query starts under the icon ({box})"
    )

    # The Ctrl+K dialog of a chapter page holds the same form.
    opened(tab, site_dir, CHAPTER, scheme)
    tab.keyboard.press("Control+k")
    tab.locator("#pst-search-dialog input").wait_for(state="visible", timeout=3000)
    tab.keyboard.type(QUERY)
    box = search_box(tab, "#pst-search-dialog form.bd-search")
    assert box["value"] == QUERY
    assert box["iconRight"] <= box["textStart"], (
        f"{where(CHAPTER, viewport, scheme)}: in the dialog ({box})"
    )


def test_pdf_tests_see_the_pdf_the_site_links() -> None:
    """Under `make test` (BOOK_PDF set), the PDF the site links is the one the PDF tests
    read."""
    given, html = os.environ.get("BOOK_PDF"), os.environ.get("BOOK_HTML_DIR")
    if not (given and html):
        pytest.skip(
            "BOOK_PDF and BOOK_HTML_DIR are set by `make test` after it builds the PDF"
        )
    linked = Path(html) / PDF_NAME
    assert linked.is_file(), f"make pdf did not copy the PDF into the site ({linked})"
    assert linked.read_bytes() == Path(given).read_bytes()


def test_headings_are_set_in_one_weight_so_no_section_reads_lighter_than_its_subsections(  # noqa: E501  (the test's name)
    browser, site_dir: Path
) -> None:  # type: ignore[no-untyped-def]
    """Issue 53, item 5: the theme set h2 lighter than h3. Every heading of every
    chapter page, at both widths."""
    from tests.browser.conftest import new_context
    from tests.browser.test_pages import PAGES, VIEWPORTS, open_page

    weights: dict[str, list[int]] = {}
    for viewport in VIEWPORTS.values():
        context = new_context(browser, viewport=viewport, scheme="light")
        try:
            page = context.new_page()
            for name in [n for n in PAGES if n.startswith("book/")]:
                open_page(page, site_dir, name)
                found = page.evaluate(
                    "() => Array.from(document.querySelectorAll('article :is(h1, h2, "
                    "h3, h4, h5, h6)')).map(h => [Number(h.tagName[1]), "
                    "Number(getComputedStyle(h).fontWeight)])"
                )
                for level, weight in found:
                    weights.setdefault(f"h{level}", []).append(weight)
        finally:
            context.close()
    assert {"h1", "h2", "h3"} <= set(weights), sorted(weights)
    assert len({w for ws in weights.values() for w in ws}) == 1, {
        h: sorted(set(ws)) for h, ws in weights.items()
    }
