"""The built site, as a reader's Chromium shows it, at desktop and phone widths, with no
network.

Every request that is not for a local file is aborted and recorded. Each page
of the book is checked for: requests to another host, console errors, math
left unrendered, Markdown tables left as pipe text, images that did not load or
lack alt text, figure text too small to read on a phone. Links and anchors are
checked in the HTML; the sidebar, the "on this page" panel, folded solutions
and search are driven by click and keyboard.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlparse

import matplotlib
import pytest
import yaml
from bs4 import BeautifulSoup
from PIL import Image

from bookbuild.build import ROOT
from chapter_code.core.plotting import PIXEL_RATIO, SMALLEST_TEXT_KEY, STYLE_FILE
from tests.browser.conftest import recording_page

VIEWPORTS = {
    "desktop": {"width": 1280, "height": 900},
    "phone": {"width": 390, "height": 844},
}
#: Smallest figure text a phone may show, in CSS pixels (the figure's text height in the
#: PNG, scaled as displayed): issue 53 (9.3 px at 390 px before a figure was held at the
#: width that keeps it readable, bookbuild/site/speed.py).
MIN_FIGURE_TEXT_PX = 11.0
#: One width and one type scale for every figure (issue 28): each is drawn for the
#: column, at the width the book's matplotlib style gives a figure (6.4 in, shown 640
#: CSS px wide), within what ``bbox_inches="tight"`` trims or adds; on a desktop none is
#: shrunk to fit, so a point of type is the same size in every figure; and no text is
#: set smaller than the style's smallest size (its tick labels).
_STYLE = matplotlib.rc_params_from_file(str(STYLE_FILE), use_default_template=False)
FIGURE_WIDTH_CSS = _STYLE["figure.figsize"][0] * _STYLE["figure.dpi"]
FIGURE_WIDTH_BAND = (0.85, 1.07)
SMALLEST_FIGURE_PT = min(
    _STYLE["xtick.labelsize"], _STYLE["ytick.labelsize"], _STYLE["legend.fontsize"]
)
CHAPTER_WITH_SOLUTIONS = "book/gradients.html"
SIDEBAR_VISIBILITY = (
    "getComputedStyle(document.getElementById('pst-primary-sidebar')).visibility"
)


def toc_pages() -> list[str]:
    """Every page the table of contents lists, as paths under the HTML root, plus the
    search page."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]] + [
        c["file"] for part in toc.get("parts", []) for c in part.get("chapters", [])
    ]
    return [f"{f}.html" for f in files] + ["search.html", "genindex.html"]


PAGES = toc_pages()


@pytest.fixture(params=list(VIEWPORTS), scope="module")
def viewport(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def page(browser, viewport: str) -> Iterator[object]:  # type: ignore[no-untyped-def]
    """A fresh page in a context that aborts and records every non-file request and
    collects console errors."""
    with recording_page(browser, viewport=VIEWPORTS[viewport]) as p:
        yield p


def open_page(page, site_dir: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    page.goto((site_dir / name).as_uri())
    page.wait_for_load_state("load")
    # Math: typeset when the book was built (nothing to wait for); or, without Node at
    # build time, MathJax is loaded after the first paint and typesets lazily, the
    # formulas on screen first and the rest in idle-time batches (book-site.js); wait
    # until it says every formula is typeset, without scrolling.
    if page.evaluate("() => !!document.querySelector('script[data-book-mathjax]')"):
        page.wait_for_function(
            "() => document.documentElement.dataset.bookMath === 'typeset'",
            timeout=60000,
        )
    # Images: load lazy ones too, then wait for every one to decode (or fail).
    page.evaluate(
        "() => Promise.all(Array.from(document.images).map(i => { i.loading = 'eager'; "
        "return i.decode().catch(() => null); }))"
    )
    settle_transitions(page)


def settle_transitions(page) -> None:  # type: ignore[no-untyped-def]
    """Finish the CSS transitions still running, as a reader finds the page a moment
    later: the theme's buttons fade their colours over 0.15 s, and a loaded machine can
    read a colour half-way (a header button measured at 3.04:1 in the dark scheme,
    mid-fade, in one fresh-clone run)."""
    page.evaluate(
        "() => document.getAnimations().forEach(a => { if (a instanceof CSSTransition) "
        "a.finish(); })"
    )


def smallest_text_px(png: Path) -> float | None:
    """The figure's smallest text height in image pixels, from the PNG's text chunk
    (None if absent)."""
    with Image.open(png) as image:
        value = image.text.get(SMALLEST_TEXT_KEY)
    return None if value is None else float(value)


@pytest.mark.parametrize("name", PAGES)
def test_page_renders_offline_without_errors(
    shared_loads, site_dir: Path, viewport: str, name: str
) -> None:  # type: ignore[no-untyped-def]
    # the load axe read (test_audit.py), if it ran on this worker first; this test opens
    # the folds, so it is the last
    with shared_loads.changing(name, viewport) as page:
        check_rendered(page, viewport, name)


def check_rendered(page, viewport: str, name: str) -> None:  # type: ignore[no-untyped-def]
    """The render check of one page loaded by
    :class:`~tests.browser.conftest.SharedLoads` (it opens every fold)."""
    assert page.load_outside_requests == [], (
        f"{name} asked another host for: {page.load_outside_requests}"
    )
    assert page.load_console_errors == [], (
        f"{name}: console errors: {page.load_console_errors}"
    )

    # Typeset when the book was built (SVG, bookbuild/site/mathrender.py) or, without
    # Node, by MathJax here (CHTML); either way with MathJax's assistive MathML, which
    # screen readers read in place of the picture.
    unrendered = page.evaluate(
        "() => Array.from(document.querySelectorAll('.math')).filter(e => "
        "!e.querySelector('mjx-container > mjx-math, mjx-container > svg') || "
        "e.querySelector('mjx-lazy')).map(e => e.textContent.slice(0, 80))"
    )
    assert unrendered == [], f"{name}: math not rendered by MathJax: {unrendered[:5]}"
    unread = page.evaluate(
        "() => Array.from(document.querySelectorAll('.math mjx-container')).filter(c "
        "=> !(c.querySelector('mjx-assistive-mml > math') || {}).textContent).map(c => "
        "c.closest('.math').innerHTML.slice(0, 80))"
    )
    assert unread == [], (
        f"{name}: formulas without MathML for screen readers: {unread[:3]}"
    )
    prose = page.evaluate(
        "() => { const main = document.querySelector('main') || document.body; const c "
        "= main.cloneNode(true); c.querySelectorAll('pre, code, script, style, "
        "mjx-container, .highlight').forEach(e => e.remove()); return c.textContent; }"
    )
    for delimiter in ["\\(", "\\[", "$$"]:
        assert delimiter not in prose, (
            f"{name}: TeX delimiter {delimiter!r} left in the text"
        )

    pipe_tables = page.evaluate(
        "() => Array.from(document.querySelectorAll('p')).filter(p => !p.closest('pre, "
        "code') && /\\|\\s*:?-{3,}:?\\s*\\|/.test(p.textContent)).map(p => "
        "p.textContent.slice(0, 80))"
    )
    assert pipe_tables == [], f"{name}: Markdown tables shown as text: {pipe_tables}"

    # A long line scrolls inside its code block (test_reading.py); the block itself
    # stays in the column.
    too_wide = page.evaluate(
        "() => { const right = "
        "Math.min(document.querySelector('main').getBoundingClientRect().right, "
        "document.documentElement.clientWidth); return "
        "Array.from(document.querySelectorAll('main pre')).filter(p => "
        "p.getBoundingClientRect().width > 0 && p.getBoundingClientRect().right > "
        "right + 1).map(p => p.textContent.slice(0, 60)); }"
    )
    assert too_wide == [], (
        f"{name} at {viewport}: code wider than the column: {too_wide[:3]}"
    )
    # No page is wider than the screen (issue 53, item 4: the reference pages' long file
    # names and conditions in inline code pushed them 35 and 258 px past a phone's
    # width).
    past_screen = page.evaluate(
        "() => { const w = document.documentElement.clientWidth; const scrolls = e => "
        "{ for (let p = e.parentElement; p; p = p.parentElement) { if (['auto', "
        "'scroll'].includes(getComputedStyle(p).overflowX)) return true; } return "
        "false; }; return Array.from(document.querySelectorAll('main :not(pre) > "
        "code')).filter(c => c.getBoundingClientRect().width > 0 && "
        "c.getBoundingClientRect().right > w + 1"
        # inside a table that scrolls sideways, with its cue, is where it may be
        " && !scrolls(c)).map(c => c.textContent.slice(0, 60)); }"
    )
    assert past_screen == [], (
        f"{name} at {viewport}: inline code past the screen's edge: {past_screen[:3]}"
    )
    assert (
        page.evaluate(
            "document.documentElement.scrollWidth - "
            "document.documentElement.clientWidth"
        )
        <= 1
    ), f"{name} at {viewport}: the page is wider than the screen"

    # Figures as a reader who opens the folded cells and solutions sees them: a
    # solution's figure is set inside the admonition's indent, narrower than the column.
    page.evaluate(
        "() => { document.querySelectorAll('main details').forEach(d => { d.open = "
        "true; }); document.querySelectorAll('main .toggle-hidden > .admonition-title "
        "button.toggle-button').forEach(b => b.click()); }"
    )
    page.wait_for_timeout(300)
    images = page.evaluate(
        "() => Array.from(document.querySelectorAll('main img')).map(i => ({src: "
        "i.currentSrc || i.src, alt: (i.getAttribute('alt') || '').trim(), natural: "
        "i.naturalWidth, shown: i.getBoundingClientRect().width, aspect: "
        "i.naturalHeight / i.naturalWidth, shownAspect: "
        "i.getBoundingClientRect().height / i.getBoundingClientRect().width, figure: "
        "!!i.closest('.cell_output, figure'), inAside: !!i.closest('.admonition, "
        "details, .panel'), declared: (+i.getAttribute('height') || NaN) / "
        "(+i.getAttribute('width') || NaN)}))"
    )
    # Text drawn as SVG (the interactive panels' stages; not MathJax's formulas), as its
    # screen size.
    svg_text = page.evaluate(
        "() => Array.from(document.querySelectorAll('main svg text')).filter(e => "
        "!e.closest('mjx-container') && e.getBoundingClientRect().height > 0 && "
        "e.getScreenCTM()).map(e => [(e.textContent || '').slice(0, 30), "
        "parseFloat(getComputedStyle(e).fontSize) * Math.hypot(e.getScreenCTM().a, "
        "e.getScreenCTM().b)])"
    )
    small = [
        f"{text!r} at {px:.1f} px"
        for text, px in svg_text
        if px < MIN_FIGURE_TEXT_PX - 0.05
    ]
    assert small == [], (
        f"{name} at {viewport}: SVG figure text under {MIN_FIGURE_TEXT_PX} CSS px: "
        f"{small[:3]}"
    )
    for img in images:
        assert img["natural"] > 0, f"{name}: image did not load: {img['src']}"
        assert img["alt"], f"{name}: image without alt text: {img['src']}"
        assert img["shownAspect"] == pytest.approx(img["aspect"], rel=0.02), (
            f"{name}: {img['src']} is distorted"
        )
        # Its width and height attributes (bookbuild/site/speed.py) reserve its shape
        # before it loads.
        assert img["declared"] == pytest.approx(img["aspect"], rel=0.01), (
            f"{name}: {img['src']} has no or wrong size"
        )
        if img["figure"] and img["src"].endswith(".png"):
            png = Path(unquote(urlparse(img["src"]).path))
            text_px = smallest_text_px(png)
            assert text_px is not None, (
                f"{name}: {png.name} was not drawn through chapter_code.core.plotting"
            )
            shown_px = text_px * img["shown"] / img["natural"]
            assert shown_px >= MIN_FIGURE_TEXT_PX, (
                f"{name} at {viewport}: the smallest text of {png.name} is "
                f"{shown_px:.1f} CSS px (< {MIN_FIGURE_TEXT_PX})"
            )
            if viewport == "desktop" and not img["inAside"]:
                natural_css = img["natural"] / PIXEL_RATIO
                low, high = (FIGURE_WIDTH_CSS * f for f in FIGURE_WIDTH_BAND)
                assert low <= natural_css <= high, (
                    f"{name}: {png.name} is drawn {natural_css:.0f} CSS px wide, not "
                    f"at the book's figure width ({low:.0f}-{high:.0f} px: "
                    f"figure.figsize in {STYLE_FILE.name})"
                )
                assert img["shown"] == pytest.approx(natural_css, rel=0.01), (
                    f"{name}: {png.name} is shown {img['shown']:.0f} px wide for "
                    f"{natural_css:.0f}: shrunk, so its type is smaller than the other "
                    "figures'"
                )
                smallest_pt = text_px / (PIXEL_RATIO * _STYLE["figure.dpi"]) * 72
                assert smallest_pt >= SMALLEST_FIGURE_PT - 0.05, (
                    f"{name}: {png.name} sets text at {smallest_pt:.1f} pt, below the "
                    f"style's smallest {SMALLEST_FIGURE_PT} pt"
                )


def test_a_shared_load_keeps_what_the_load_logged_and_a_changed_page_is_loaded_again(
    browser, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    from tests.browser.conftest import SharedLoads

    (tmp_path / "p.html").write_text(
        "<!doctype html><title>p</title><script>console.error('at load')</script>"
    )
    loads = SharedLoads(browser, tmp_path)
    page = loads.reading("p.html", "desktop")
    page.evaluate("() => console.error('later')")
    assert loads.reading("p.html", "desktop") is page
    assert page.load_console_errors == ["at load"]
    assert page.console_errors == ["at load", "later"]
    with loads.changing("p.html", "desktop") as changed:
        assert changed is page
    with loads.changing("p.html", "desktop") as again:
        assert again is not page
        assert again.console_errors == ["at load"]
    loads.reading("p.html", "phone")
    loads.close()
    assert loads.open == {}


def test_every_page_of_the_site_is_checked(site_dir: Path) -> None:
    pages = [p.relative_to(site_dir) for p in site_dir.rglob("*.html")]
    built = {str(p) for p in pages if not p.parts[0].startswith("_")}
    assert built - {"index.html"} <= set(PAGES), (
        f"pages the browser tests do not open: {sorted(built - set(PAGES))}"
    )


def test_internal_links_and_anchors_resolve(site_dir: Path) -> None:
    ids: dict[Path, set[str]] = {}

    def ids_of(path: Path) -> set[str]:
        if path not in ids:
            soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
            named = soup.find_all("a", attrs={"name": True})
            ids[path] = {t["id"] for t in soup.find_all(id=True)} | {
                t["name"] for t in named
            }
        return ids[path]

    broken, checked = [], 0
    for page in sorted(site_dir.rglob("*.html")):
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        for a in soup.find_all("a", href=True):
            href = a["href"]
            if re.match(r"^[a-z][a-z0-9+.-]*:", href) or href.startswith("//"):
                # another scheme: a reader's link out, never loaded by the page
                continue
            url = urlparse(href)
            target = (page.parent / unquote(url.path)).resolve() if url.path else page
            if target.is_dir():
                target = target / "index.html"
            checked += 1
            if not target.exists():
                broken.append(f"{page.relative_to(site_dir)}: {href} (no such file)")
            elif (
                url.fragment
                and target.suffix == ".html"
                and unquote(url.fragment) not in ids_of(target)
            ):
                broken.append(f"{page.relative_to(site_dir)}: {href} (no such anchor)")
    assert checked > 100
    assert broken == [], "\n".join(broken)


def test_citations_and_bibliography_share_the_author_year_style(site_dir: Path) -> None:
    """Each entry's label is "Author, year" (or a source document's shorthand, never
    "n.d."); each section of the list is in label order; no entry shows TeX; every
    citation in the chapters shows its entry's label."""
    from bookbuild.site.citations import SHORTHAND, label_sort_key
    from tests.bookbuild.test_citations import BIB, RAW_TEX

    soup = BeautifulSoup(
        (site_dir / "book" / "bibliography.html").read_text(encoding="utf-8"),
        "html.parser",
    )
    labels = {
        d["id"]: d.select_one("span.label").get_text().strip("[]")
        for d in soup.select("div.citation")
    }
    assert len(labels) > 10
    shorthands = {e.fields[SHORTHAND] for e in BIB["sources.bib"].entries.values()}
    # "Elman, 1990", "Bengio et al., 1994"
    author_year = re.compile(r"^[^\d,]+, \d{4}[a-z]?$")
    assert [
        label
        for label in labels.values()
        if not author_year.match(label)
        and label.lower() not in {s.lower() for s in shorthands}
    ] == []
    lists = soup.select("div.citation-list")
    assert len(lists) == 2  # the papers, then the three source documents
    for section in lists:
        in_order = [
            d.select_one("span.label").get_text().strip("[]")
            for d in section.select("div.citation")
        ]
        assert in_order == sorted(in_order, key=label_sort_key)
    for d in soup.select("div.citation"):
        text = d.get_text(" ", strip=True)
        assert "n.d." not in text, text
        assert not RAW_TEX.search(text), text
        assert not re.search(r"[{}]", text), text
    chapters = [
        p
        for p in PAGES
        if p.startswith("book/") and p not in ("book/bibliography.html",)
    ]
    for page in chapters:
        text = BeautifulSoup(
            (site_dir / page).read_text(encoding="utf-8"), "html.parser"
        )
        for span in text.select("span.bibtex-citation"):
            assert "[]" not in span.get_text(), (
                f"{page}: an empty bracket in {span.get_text()!r}"
            )
        for a in text.select('a[href^="bibliography.html#"]'):
            target = a["href"].split("#", 1)[1]
            # a link to the page or one of its sections, not a citation
            if target not in labels:
                assert soup.find("section", id=target) is not None, (
                    f"{page}: {a['href']} leads nowhere"
                )
                continue
            label = labels[target]
            shown = (
                label.rsplit(", ", 1)[-1] if author_year.match(label) else label.lower()
            )
            assert shown in a.get_text().lower(), (
                f"{page}: citation {a.get_text()!r} does not show [{label}]"
            )


@pytest.mark.parametrize("name", [n for n in PAGES if n.startswith("book/")])
def test_element_ids_are_unique(site_dir: Path, name: str) -> None:
    soup = BeautifulSoup((site_dir / name).read_text(encoding="utf-8"), "html.parser")
    seen: dict[str, int] = {}
    for tag in soup.find_all(id=True):
        seen[tag["id"]] = seen.get(tag["id"], 0) + 1
    assert [i for i, n in seen.items() if n > 1] == []


def visible(page, selector: str):  # type: ignore[no-untyped-def]
    """The one visible element matching ``selector``."""
    found = [e for e in page.locator(selector).all() if e.is_visible()]
    assert len(found) == 1, f"{len(found)} visible elements match {selector}"
    return found[0]


def on_screen(page, locator) -> bool:  # type: ignore[no-untyped-def]
    """Visible and horizontally inside the viewport (a closed sidebar is moved off the
    left edge)."""
    box = locator.bounding_box() if locator.is_visible() else None
    return (
        box is not None
        and box["x"] + box["width"] > 1
        and box["x"] < page.viewport_size["width"]
    )


def off_screen_soon(page, locator, ms: int = 2000) -> bool:  # type: ignore[no-untyped-def]
    """True once ``locator`` has left the screen (a closing sidebar slides out over a
    quarter second)."""
    for _ in range(ms // 100):
        if not on_screen(page, locator):
            return True
        page.wait_for_timeout(100)
    return False


def dialog_open(page, dialog_id: str) -> bool:  # type: ignore[no-untyped-def]
    return page.evaluate(f"() => document.getElementById('{dialog_id}').open")


def test_sidebar_opens_and_closes_by_click_and_keyboard(
    page, site_dir: Path, viewport: str
) -> None:  # type: ignore[no-untyped-def]
    open_page(page, site_dir, CHAPTER_WITH_SOLUTIONS)
    toggle = visible(page, ".primary-toggle")
    chapters = page.locator(".bd-sidebar-primary a.reference", has_text="Gated memory")
    if viewport == "phone":
        assert not on_screen(page, chapters)
        toggle.click()
        assert dialog_open(page, "pst-primary-sidebar-modal")
        assert on_screen(page, chapters)
        page.keyboard.press("Escape")
        assert not dialog_open(page, "pst-primary-sidebar-modal")
        assert off_screen_soon(page, chapters)
        toggle.focus()
        page.keyboard.press("Enter")
        assert dialog_open(page, "pst-primary-sidebar-modal")
        assert on_screen(page, chapters)
        page.keyboard.press("Escape")
        assert not dialog_open(page, "pst-primary-sidebar-modal")
    else:
        sidebar = page.locator("#pst-primary-sidebar")
        assert on_screen(page, chapters)
        toggle.click()
        page.wait_for_function(f"() => {SIDEBAR_VISIBILITY} === 'hidden'")
        assert "pst-sidebar-hidden" in (sidebar.get_attribute("class") or "")
        toggle.focus()
        page.keyboard.press("Enter")
        page.wait_for_function(f"() => {SIDEBAR_VISIBILITY} === 'visible'")
        assert on_screen(page, chapters)


def test_on_this_page_opens_and_closes(page, site_dir: Path, viewport: str) -> None:  # type: ignore[no-untyped-def]
    open_page(page, site_dir, CHAPTER_WITH_SOLUTIONS)
    entry = page.locator(".bd-sidebar-secondary nav.page-toc a", has_text="Exercises")
    if viewport == "desktop":
        # at this width the page's contents stand beside it
        assert on_screen(page, entry)
        return
    assert not on_screen(page, entry)
    toggle = visible(page, ".secondary-toggle")
    toggle.click()
    assert dialog_open(page, "pst-secondary-sidebar-modal")
    assert on_screen(page, entry)
    page.keyboard.press("Escape")
    assert not dialog_open(page, "pst-secondary-sidebar-modal")
    assert off_screen_soon(page, entry)
    toggle.focus()
    page.keyboard.press("Enter")
    assert dialog_open(page, "pst-secondary-sidebar-modal")
    assert on_screen(page, entry)
    page.keyboard.press("Escape")


def test_solutions_start_folded_and_open_from_keyboard_and_title(
    page, site_dir: Path, viewport: str
) -> None:  # type: ignore[no-untyped-def]
    open_page(page, site_dir, CHAPTER_WITH_SOLUTIONS)
    solutions = page.locator("div.solution.dropdown")
    count = solutions.count()
    assert count >= 2
    for i in range(count):
        assert not solutions.nth(i).locator("section").first.is_visible(), (
            f"solution {i + 1} is not folded"
        )
    first, second = solutions.nth(0), solutions.nth(1)
    button = first.locator(".admonition-title button.toggle-button")
    button.focus()
    page.keyboard.press("Enter")
    expect_visible(first)
    # The exercise's name in a solution's title opens the solution; it does not leave
    # for the exercise.
    url = page.url
    second.locator(".admonition-title a").first.click()
    expect_visible(second)
    assert page.url == url


def expect_visible(solution) -> None:  # type: ignore[no-untyped-def]
    solution.locator("section").first.wait_for(state="visible", timeout=3000)


def test_offline_search_finds_pages(page, site_dir: Path, viewport: str) -> None:  # type: ignore[no-untyped-def]
    if viewport == "phone":
        pytest.skip("search is the same page at every width; checked once")
    page.goto((site_dir / "search.html").as_uri() + "?q=forget+gate")
    page.locator("#search-results ul.search li").first.wait_for(timeout=15000)
    assert page.locator("#search-results ul.search li").count() >= 2
    assert page.outside_requests == []
    assert page.console_errors == []
