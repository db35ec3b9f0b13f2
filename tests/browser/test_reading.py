"""Code, formulas, glued numbers and captions as a reader sees them (issue 28, items 1,
2 and 8).

Every chapter page is opened at desktop and phone widths, in the theme's light
and dark modes, and measured once (:func:`measure`, one script in the page);
the tests below each read their part of the measurement:

* no line of a code block (listing, cell, output) wraps: its white-space is
  ``pre`` and its content is no taller than its lines (a soft wrap restarts a
  line at column 0 and loses the indentation); a block wider than its box
  scrolls sideways, has a tab stop and shows a scroll cue (a gradient);
* no display formula is cut off: it fits its box, or its box scrolls sideways,
  has a tab stop and a scroll cue; the box stays inside the column, and the
  equation number never overlaps the formula;
* on a phone, code text is at least :data:`MIN_CODE_PX` CSS px;
* numbers glued into the prose by the cells (myst-nb ``glue``) have the weight
  of the text around them;
* on a phone, Tab reaches a code block and a formula that scroll, and the arrow
  keys scroll them;
* a table wider than the column, and a figure held wider than a phone's column so
  that its text stays readable, scroll sideways in their box, have a tab stop and
  show a scroll cue (the edge beyond which more lies fades), at both widths and in
  both schemes; scrolled to its end, a table's cue moves to the other edge;
* figure captions (their text, not the permalink shown on hover) have a
  contrast of at least 4.5:1 against what is behind them, and are not set in a
  light face (the theme's 300 read as faint).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bookbuild.build import ROOT
from tests.browser.code_share import MAX_SHARE, share
from tests.browser.code_share import MEASURE as CODE_SHARE_MEASURE
from tests.browser.code_share import WIDTH as SHARE_WIDTH
from tests.browser.conftest import OnFirstUse, new_context
from tests.browser.test_pages import PAGES, VIEWPORTS, open_page, settle_transitions

#: One worker runs this file (`make test` distributes with `--dist loadgroup`): its
#: pages are measured once per width in a module fixture, which two workers would each
#: do again.
pytestmark = pytest.mark.xdist_group("reading")

CHAPTERS = [n for n in PAGES if n.startswith("book/")]
SCHEMES = ["light", "dark"]
#: Smallest code text on a phone, in CSS px.
MIN_CODE_PX = 12.0
#: WCAG AA contrast for normal text.
MIN_CONTRAST = 4.5
#: Lightest caption weight: the body's (a light face, 300, reads as faint on a phone).
MIN_TEXT_WEIGHT = 400
#: A chapter with a wide formula and long code lines, for the keyboard test.
KEYBOARD_CHAPTER = "book/gated.html"

# One script: every number the tests below need, as plain data. Folded cells (details)
# and solutions (the fold buttons of sphinx-togglebutton) are opened first, as a reader
# would, so that their code is measured too.
OPEN_FOLDS = r"""
() => {
  document.querySelectorAll('main details').forEach(d => { d.open = true; });
  document.querySelectorAll('main .toggle-hidden > .admonition-title button.toggle-button').forEach(b => b.click());
}
"""  # noqa: E501  (JavaScript run in the page)
MEASURE = r"""
() => {
  const px = v => parseFloat(v) || 0;
  const shown = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const label = e => (e.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 70);
  const scrolls = e => e.scrollWidth > e.clientWidth + 1;
  const scrollStyle = e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
  const focusable = e => e.tabIndex >= 0 && e.hasAttribute('tabindex');
  const cue = e => getComputedStyle(e).backgroundImage.includes('gradient');
  // a table's or figure's box fades the edge beyond which more lies (its rows and pictures would hide a shadow)
  const fade = e => {
    const s = getComputedStyle(e);
    return (s.maskImage || s.webkitMaskImage || '').includes('gradient');
  };
  const main = document.querySelector('main');
  const column = main.getBoundingClientRect();
  const right = Math.min(column.right, document.documentElement.clientWidth);

  const code = Array.from(main.querySelectorAll('pre')).filter(shown).map(pre => {
    const s = getComputedStyle(pre);
    const lines = pre.textContent.replace(/\n$/, '').split('\n').length;
    const lineHeight = s.lineHeight === 'normal' ? 1.2 * px(s.fontSize) : px(s.lineHeight);
    const sizes = [pre, ...pre.querySelectorAll('*')].map(e => px(getComputedStyle(e).fontSize));
    return {
      text: label(pre), whiteSpace: s.whiteSpace, lines, lineHeight,
      contentHeight: pre.scrollHeight - px(s.paddingTop) - px(s.paddingBottom),
      fontPx: Math.min(...sizes), scrolls: scrolls(pre), scrollStyle: scrollStyle(pre),
      focusable: focusable(pre), cue: cue(pre), pastColumn: pre.getBoundingClientRect().right > right + 1,
    };
  });

  const formulas = Array.from(main.querySelectorAll('div.math')).filter(shown).map(math => {
    const box = math.querySelector(':scope > mjx-container');
    if (!box) { return { text: label(math), rendered: false }; }
    const drawing = box.querySelector(':scope > svg, :scope > mjx-math');
    const b = box.getBoundingClientRect();
    const m = math.getBoundingClientRect();
    const eqno = math.querySelector(':scope > span.eqno');
    const e = eqno && eqno.getBoundingClientRect();
    return {
      text: (box.querySelector('mjx-assistive-mml') || box).textContent.trim().slice(0, 70), rendered: !!drawing,
      drawingWidth: drawing ? drawing.getBoundingClientRect().width : 0, boxWidth: box.clientWidth,
      scrolls: scrolls(box), scrollStyle: scrollStyle(box), focusable: focusable(box), cue: cue(box),
      outsideItsBlock: b.left < m.left - 1 || b.right > m.right + 1,
      blockOverflows: scrolls(math) && getComputedStyle(math).overflowX !== 'visible',
      pastColumn: m.right > right + 1 || b.right > right + 1,
      eqnoOverlaps: !!e && e.width > 0 && e.left < b.right - 0.5 && e.right > b.left + 0.5,
    };
  });

  const glued = Array.from(main.querySelectorAll('span.pasted-text')).filter(shown).map(g => ({
    text: label(g), weight: getComputedStyle(g).fontWeight, around: getComputedStyle(g.parentElement).fontWeight,
  }));

  const rgba = c => { const v = c.match(/[\d.]+/g).map(Number); return v.length > 3 ? v : [...v, 1]; };
  const behind = e => {
    for (let n = e; n; n = n.parentElement) {
      const c = rgba(getComputedStyle(n).backgroundColor);
      if (c[3] > 0) { return c; }
    }
    return [255, 255, 255, 1];
  };
  const captions = [];
  main.querySelectorAll('figcaption, figcaption *').forEach(e => {
    const own = Array.from(e.childNodes).some(n => n.nodeType === 3 && n.textContent.trim());
    if (own && shown(e) && !e.closest('.headerlink') && getComputedStyle(e).visibility === 'visible') {
      captions.push({
        text: label(e), color: rgba(getComputedStyle(e).color), background: behind(e),
        weight: Number(getComputedStyle(e).fontWeight),
      });
    }
  });
  // a table's caption, when the table scrolls sideways, stays readable in the column
  const tableCaptions = Array.from(main.querySelectorAll('table > caption')).filter(shown).map(c => {
    const r = c.getBoundingClientRect();
    return { text: label(c), left: r.left, right: r.right, columnLeft: column.left, columnRight: right };
  });
  const boxes = Array.from(main.querySelectorAll('table')).filter(shown).map(t => {
    const box = t.closest('.pst-scrollable-table-container') || t.parentElement;
    const b = box.getBoundingClientRect();
    return {
      text: label(t), scrolls: scrolls(box), scrollStyle: scrollStyle(box), focusable: focusable(box), cue: fade(box),
      pastColumn: b.right > right + 1, more: box.dataset.bookMore || '', kind: 'table',
    };
  }).concat(Array.from(main.querySelectorAll('figure > a.image-reference')).filter(shown).map(a => ({
    text: ((a.querySelector('img') || {}).alt || '').slice(0, 70), scrolls: scrolls(a), scrollStyle: scrollStyle(a),
    focusable: a.tabIndex >= 0, cue: fade(a), pastColumn: a.getBoundingClientRect().right > right + 1,
    more: a.dataset.bookMore || '', kind: 'figure',
  })));
  return { theme: document.documentElement.dataset.theme, code, formulas, glued, captions, tableCaptions, boxes };
}
"""  # noqa: E501  (JavaScript run in the page)


@pytest.fixture(params=list(VIEWPORTS), scope="module")
def viewport(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(params=SCHEMES, scope="module")
def scheme(request: pytest.FixtureRequest) -> str:
    return request.param


#: The theme's own switch (pydata-sphinx-theme's light/dark button): the mode and theme
#: attributes and the stored choice (then :func:`settle_transitions`, as a reader sees
#: the page a moment after the click).
SWITCH_THEME = r"""
(scheme) => {
  localStorage.setItem('mode', scheme);
  document.documentElement.dataset.mode = scheme;
  document.documentElement.dataset.theme = scheme;
}
"""


def measure_page(
    page, site_dir: Path, name: str, schemes: list[str], with_share: bool = False
) -> dict[str, dict]:  # type: ignore[no-untyped-def]
    """Open ``name`` (in the context's scheme, ``schemes[0]``), draw every code block
    and open every fold, and measure it; then switch the theme in place to each further
    scheme and measure again: scheme -> measurement. With ``with_share``, the page is
    first measured as a reader first sees it, nothing unfolded, for
    :mod:`tests.browser.code_share` (under the key ``"share"``): one load of the page
    serves both."""
    open_page(page, site_dir, name)
    # A code block off the screen is drawn when it comes near it, or at the reader's
    # first Tab; the Tab draws every block at once (and what is measured is what a
    # reader sees once it is drawn).
    page.keyboard.press("Tab")
    out = {}
    # drawn code keeps the height its box had before
    # (test_code_off_the_screen_is_drawn_later...)
    if with_share:
        page.wait_for_timeout(300)
        out["share"] = page.evaluate(CODE_SHARE_MEASURE)
    page.evaluate(OPEN_FOLDS)
    # the theme gives scrolling blocks their tab stops 300 ms after a change
    page.wait_for_timeout(400)
    for i, scheme in enumerate(schemes):
        if i:
            page.evaluate(SWITCH_THEME, scheme)
            settle_transitions(page)
        out[scheme] = page.evaluate(MEASURE)
    return out


@pytest.fixture(scope="module")
def measurements(browser, site_dir: Path) -> Iterator[dict[str, dict[str, dict]]]:  # type: ignore[no-untyped-def]
    """Width -> page name -> scheme -> its measurement, each measured on first use: one
    load per page and width, in the light scheme, then the theme switched in place to
    the dark one and the page measured again (the switch measures what loading the page
    in the dark scheme does:
    :func:`test_switching_the_theme_in_place_measures_what_loading_it_dark_does`). Kept
    for the module, keyed by the width, rather than built per ``viewport`` parameter:
    pytest orders this module's tests by width and scheme, and came back to 1280 px
    after 390 px, which measured every chapter at 1280 px twice."""
    contexts = []

    def for_width(viewport: str) -> dict[str, dict]:
        context = new_context(browser, viewport=VIEWPORTS[viewport], scheme=SCHEMES[0])
        contexts.append(context)

        def measured(name: str) -> dict[str, dict]:
            p = context.new_page()
            try:
                return measure_page(
                    p,
                    site_dir,
                    name,
                    SCHEMES,
                    with_share=VIEWPORTS[viewport] == SHARE_WIDTH,
                )
            finally:
                p.close()

        return OnFirstUse(measured)

    yield OnFirstUse(for_width)
    for context in contexts:
        context.close()


@pytest.fixture
def measured_schemes(measurements: dict, viewport: str) -> dict[str, dict]:  # type: ignore[type-arg]
    """Page name -> scheme -> its measurement at this width (:func:`measurements`)."""
    return measurements[viewport]


@pytest.fixture
def measured(measured_schemes: dict, scheme: str):  # type: ignore[no-untyped-def]
    """Page name -> its measurement at this width and colour scheme."""

    class OneScheme:
        def __getitem__(self, name: str) -> dict:  # type: ignore[type-arg]
            result = measured_schemes[name][scheme]
            assert result["theme"] == scheme, (
                f"{name}: the page did not switch to the {scheme} theme"
            )
            return result

    return OneScheme()


@pytest.mark.parametrize("name", ["book/gated.html"])
def test_switching_the_theme_in_place_measures_what_loading_it_dark_does(
    browser,
    site_dir: Path,  # type: ignore[no-untyped-def]
    name: str,
) -> None:
    """The measurements above load each page once, light, and switch it to dark; a page
    loaded dark must measure the same, number for number (code, formulas, glued numbers,
    captions and their colours)."""
    for viewport in VIEWPORTS:
        pages = []
        for scheme in ["dark", "light"]:
            context = new_context(browser, viewport=VIEWPORTS[viewport], scheme=scheme)
            try:
                pages.append(
                    measure_page(context.new_page(), site_dir, name, [scheme, "dark"])
                )
            finally:
                context.close()
        loaded, switched = pages[0]["dark"], pages[1]["dark"]
        assert loaded["theme"] == switched["theme"] == "dark"
        for both in (loaded, switched):
            # A block that does not scroll can still hold the tab stop of its width
            # estimate for a moment after it is drawn (the theme re-measures 300 ms
            # after a change; seen under load): that one flag is timing, not the scheme.
            # Where a block scrolls, its tab stop is compared.
            for block in both["code"]:
                if not block["scrolls"]:
                    block["focusable"] = None
        for key in loaded:
            assert switched[key] == loaded[key], (
                f"{name} at {viewport}: {key} differs between a dark load and a switch"
            )


def where(name: str, viewport: str, scheme: str) -> str:
    return f"{name} at {VIEWPORTS[viewport]['width']} px, {scheme}"


@pytest.mark.parametrize("name", CHAPTERS)
def test_code_lines_do_not_wrap(
    measured, name: str, viewport: str, scheme: str
) -> None:  # type: ignore[no-untyped-def]
    code = measured[name]["code"]
    not_pre = [c["text"] for c in code if c["whiteSpace"] != "pre"]
    assert not_pre == [], (
        f"{where(name, viewport, scheme)}: code blocks whose white-space is not pre: "
        f"{not_pre[:3]}"
    )
    wrapped = [
        f"{c['text']!r} ({c['lines']} lines, "
        f"{c['contentHeight'] / c['lineHeight']:.1f} line heights)"
        for c in code
        if c["contentHeight"] > (c["lines"] + 0.5) * c["lineHeight"]
    ]
    assert wrapped == [], (
        f"{where(name, viewport, scheme)}: code blocks with wrapped lines: "
        f"{wrapped[:3]}"
    )
    stuck = [
        c["text"]
        for c in code
        if c["scrolls"] and not (c["scrollStyle"] and c["focusable"] and c["cue"])
    ]
    assert stuck == [], (
        f"{where(name, viewport, scheme)}: wide code that does not scroll, or without "
        f"tab stop or cue: {stuck[:3]}"
    )
    past = [c["text"] for c in code if c["pastColumn"]]
    assert past == [], (
        f"{where(name, viewport, scheme)}: code blocks running past the column: "
        f"{past[:3]}"
    )


#: At most this share of a chapter's code blocks (listings, cells, printed output) may
#: scroll sideways on a desktop.
MAX_SCROLLING_CODE = 0.05


@pytest.mark.parametrize("name", CHAPTERS)
def test_code_fits_the_desktop_column(
    measured, name: str, viewport: str, scheme: str
) -> None:  # type: ignore[no-untyped-def]
    """At 1280 px a listing's or cell's 88 columns fit the column, so almost no block
    scrolls sideways (issue 53, item 1: 184 of 264 did at 14 px)."""
    if viewport != "desktop":
        pytest.skip(
            "on a phone code scrolls, with its cue (test_code_lines_do_not_wrap)"
        )
    code = measured[name]["code"]
    wide = [c["text"] for c in code if c["scrolls"]]
    assert len(wide) <= MAX_SCROLLING_CODE * len(code), (
        f"{where(name, viewport, scheme)}: {len(wide)} of {len(code)} code blocks "
        f"scroll sideways (at most {MAX_SCROLLING_CODE:.0%}): {wide[:4]}"
    )


@pytest.mark.parametrize("name", CHAPTERS)
def test_code_and_printed_output_take_a_small_share_of_the_page(
    measured_schemes, name: str, viewport: str
) -> None:  # type: ignore[no-untyped-def]
    """Code cells show the experiment, not its bookkeeping (issue 28, item 3;
    :mod:`tests.browser.code_share` says what is measured): at 1280 px, as a reader
    first sees the page, measured in the same load as the rest."""
    if VIEWPORTS[viewport] != SHARE_WIDTH:
        pytest.skip(f"the share is asserted at {SHARE_WIDTH['width']} px only")
    measured = measured_schemes[name]["share"]
    largest = sorted(measured["cells"], key=lambda c: -(c["inputPx"] + c["textPx"]))[:3]
    assert share(measured) <= MAX_SHARE, (
        f"{name}: code cells and their printed output take {share(measured):.1%} of "
        f"the page's height at 1280 px (at most {MAX_SHARE:.0%}); the largest: "
        + "; ".join(
            f"{c['text']!r} ({c['inputPx']:.0f} + {c['textPx']:.0f} px)"
            for c in largest
        )
    )


@pytest.mark.parametrize("name", CHAPTERS)
def test_wide_tables_and_figures_scroll_with_a_cue(
    measured, name: str, viewport: str, scheme: str
) -> None:  # type: ignore[no-untyped-def]
    """Every table wider than its container, and every figure wider than its box,
    scrolls sideways with a tab stop and a visible cue (issue 53, item 4: 28 wide tables
    on a phone had none); none runs past the column."""
    boxes = measured[name]["boxes"]
    at = where(name, viewport, scheme)
    stuck = [
        f"{b['kind']} {b['text']!r} (cue {b['cue']}, tab stop {b['focusable']}, more "
        f"{b['more']!r})"
        for b in boxes
        if b["scrolls"] and not (b["scrollStyle"] and b["focusable"] and b["cue"])
    ]
    assert stuck == [], (
        f"{at}: wide tables or figures without scrolling, tab stop or cue: {stuck[:3]}"
    )
    stray = [
        f"{b['kind']} {b['text']!r}" for b in boxes if b["cue"] and not b["scrolls"]
    ]
    assert stray == [], (
        f"{at}: a cue on a table or figure that does not scroll: {stray[:3]}"
    )
    past = [f"{b['kind']} {b['text']!r}" for b in boxes if b["pastColumn"]]
    assert past == [], f"{at}: tables or figures running past the screen: {past[:3]}"


@pytest.mark.parametrize("scheme", ["light"])
def test_a_table_s_cue_follows_its_scrolling(
    browser, site_dir: Path, scheme: str
) -> None:  # type: ignore[no-untyped-def]
    """On a phone the cue of a wide table is at its right edge; scrolled half-way, at
    both; at its end, at its left edge only."""
    context = new_context(browser, viewport=VIEWPORTS["phone"], scheme=scheme)
    try:
        page = context.new_page()
        open_page(page, site_dir, KEYBOARD_CHAPTER)
        box = page.wait_for_selector(
            "main .pst-scrollable-table-container[data-book-more='right']"
        )
        box.scroll_into_view_if_needed()
        seen = [box.get_attribute("data-book-more")]
        for to in ("(box.scrollWidth - box.clientWidth) / 2", "box.scrollWidth"):
            box.evaluate(f"box => {{ box.scrollLeft = {to}; }}")
            page.wait_for_timeout(150)
            seen.append(box.get_attribute("data-book-more"))
        mask = box.evaluate(
            "box => getComputedStyle(box).maskImage || "
            "getComputedStyle(box).webkitMaskImage"
        )
    finally:
        context.close()
    assert seen == ["right", "left right", "left"], seen
    assert mask.startswith("linear-gradient(to right"), mask


@pytest.mark.parametrize("name", CHAPTERS)
def test_display_formulas_are_not_cut_off(
    measured, name: str, viewport: str, scheme: str
) -> None:  # type: ignore[no-untyped-def]
    formulas = measured[name]["formulas"]
    at = where(name, viewport, scheme)
    assert [f["text"] for f in formulas if not f["rendered"]] == [], (
        f"{at}: display math not rendered"
    )
    clipped = [
        f["text"]
        for f in formulas
        if (f["drawingWidth"] > f["boxWidth"] + 1 or f["scrolls"])
        and not (f["scrollStyle"] and f["focusable"])
    ]
    assert clipped == [], (
        f"{at}: formulas wider than their box that do not scroll or take no tab stop: "
        f"{clipped[:3]}"
    )
    no_cue = [f["text"] for f in formulas if f["scrolls"] and not f["cue"]]
    assert no_cue == [], f"{at}: scrolling formulas without a scroll cue: {no_cue[:3]}"
    outside = [
        f["text"]
        for f in formulas
        if f["outsideItsBlock"] or f["blockOverflows"] or f["pastColumn"]
    ]
    assert outside == [], (
        f"{at}: formulas cut off at their block's or the column's edge: {outside[:3]}"
    )
    overlapped = [f["text"] for f in formulas if f["eqnoOverlaps"]]
    assert overlapped == [], (
        f"{at}: equation numbers over their formulas: {overlapped[:3]}"
    )


@pytest.mark.parametrize("name", CHAPTERS)
def test_display_formulas_fit_their_column_on_a_desktop(
    measured, name: str, viewport: str, scheme: str
) -> None:  # type: ignore[no-untyped-def]
    """At 1280 px no formula needs to scroll: it fits its box (on a phone it may scroll,
    with a cue)."""
    if viewport != "desktop":
        pytest.skip(
            "on a phone a formula may scroll sideways "
            "(test_display_formulas_are_not_cut_off)"
        )
    wide = [
        f"{f['text']!r} ({f['drawingWidth']:.0f} > {f['boxWidth']} px)"
        for f in measured[name]["formulas"]
        if f.get("rendered") and f["drawingWidth"] > f["boxWidth"] + 1
    ]
    assert wide == [], (
        f"{where(name, viewport, scheme)}: formulas wider than the column: {wide[:3]}"
    )


@pytest.mark.parametrize("name", CHAPTERS)
def test_code_text_is_readable_on_a_phone(
    measured, name: str, viewport: str, scheme: str
) -> None:  # type: ignore[no-untyped-def]
    if viewport != "phone":
        pytest.skip("the smallest code text is asked of a phone's width")
    small = [
        f"{c['text']!r} ({c['fontPx']:.1f} px)"
        for c in measured[name]["code"]
        if c["fontPx"] < MIN_CODE_PX
    ]
    assert small == [], (
        f"{where(name, viewport, scheme)}: code text under {MIN_CODE_PX} px: "
        f"{small[:3]}"
    )


@pytest.mark.parametrize("name", CHAPTERS)
def test_glued_numbers_have_the_weight_of_the_text(
    measured, name: str, viewport: str, scheme: str
) -> None:  # type: ignore[no-untyped-def]
    glued = measured[name]["glued"]
    # none for a generated page (the build report)
    source = (ROOT / name).with_suffix(".md")
    if source.exists() and "{glue" in source.read_text(encoding="utf-8"):
        assert glued, (
            f"{name}: its source glues numbers into the text, none found in the page"
        )
    heavy = [
        f"{g['text']!r} ({g['weight']} in {g['around']})"
        for g in glued
        if g["weight"] != g["around"]
    ]
    assert heavy == [], (
        f"{where(name, viewport, scheme)}: glued numbers in another weight than their "
        f"text: {heavy[:3]}"
    )


def luminance(rgb: list[float]) -> float:
    def channel(c: float) -> float:
        c = c / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(color: list[float], background: list[float]) -> float:
    alpha = color[3]
    shown = [
        alpha * c + (1 - alpha) * b
        for c, b in zip(color[:3], background[:3], strict=True)
    ]
    light, dark = sorted([luminance(shown), luminance(background)], reverse=True)
    return (light + 0.05) / (dark + 0.05)


@pytest.mark.parametrize("name", CHAPTERS)
def test_captions_are_not_faint(
    measured, name: str, viewport: str, scheme: str
) -> None:  # type: ignore[no-untyped-def]
    faint = [
        f"{c['text']!r} ({contrast(c['color'], c['background']):.2f}:1)"
        for c in measured[name]["captions"]
        if contrast(c["color"], c["background"]) < MIN_CONTRAST
    ]
    assert faint == [], (
        f"{where(name, viewport, scheme)}: captions under {MIN_CONTRAST}:1: {faint[:3]}"
    )
    light = [
        f"{c['text']!r} ({c['weight']:.0f})"
        for c in measured[name]["captions"]
        if c["weight"] < MIN_TEXT_WEIGHT
    ]
    assert light == [], (
        f"{where(name, viewport, scheme)}: captions in a light face: {light[:3]}"
    )


@pytest.mark.parametrize("name", CHAPTERS)
def test_table_captions_stay_in_the_column(
    measured, name: str, viewport: str, scheme: str
) -> None:  # type: ignore[no-untyped-def]
    """A table wider than the column scrolls sideways; its caption does not go with it:
    a reader on a phone reads "Table 7.4 Gates outside the LSTM and the GRU." without
    scrolling, from its first word."""
    off = [
        f"{c['text']!r} ({c['left']:.0f}-{c['right']:.0f} px, column "
        f"{c['columnLeft']:.0f}-{c['columnRight']:.0f})"
        for c in measured[name]["tableCaptions"]
        if c["left"] < c["columnLeft"] - 1 or c["right"] > c["columnRight"] + 1
    ]
    assert off == [], (
        f"{where(name, viewport, scheme)}: table captions running past the column: "
        f"{off[:3]}"
    )


@pytest.mark.parametrize("selector", ["main pre", "div.math > mjx-container"])
def test_wide_code_and_formulas_scroll_from_the_keyboard(
    browser, site_dir: Path, selector: str
) -> None:  # type: ignore[no-untyped-def]
    """On a phone, Tab reaches a block that scrolls and the arrow keys scroll it."""
    context = new_context(browser, viewport=VIEWPORTS["phone"], offline=False)
    try:
        p = context.new_page()
        open_page(p, site_dir, KEYBOARD_CHAPTER)
        # a keyboard reader: every code block is drawn from the first Tab on
        p.keyboard.press("Tab")
        p.wait_for_timeout(400)
        index = p.evaluate(
            "sel => Array.from(document.querySelectorAll(sel)).findIndex(e => "
            "e.getBoundingClientRect().width > 0 && e.scrollWidth > e.clientWidth + 1)",
            selector,
        )
        assert index >= 0, (
            f"{KEYBOARD_CHAPTER}: nothing matching {selector} scrolls at phone width"
        )
        box = p.locator(selector).nth(index)
        box.scroll_into_view_if_needed()
        # Tab from the element just before the block: the block must be the next stop.
        p.evaluate(
            "([sel, i]) => { const box = document.querySelectorAll(sel)[i]; const "
            "before = document.createElement('button'); before.id = "
            "'book-test-before'; box.parentElement.insertBefore(before, box); "
            "before.focus(); }",
            [selector, index],
        )
        p.keyboard.press("Tab")
        assert box.evaluate("e => e === document.activeElement"), (
            f"Tab does not reach the scrolling {selector}"
        )
        p.keyboard.press("ArrowRight")
        p.keyboard.press("ArrowRight")
        p.wait_for_function(
            "([sel, i]) => document.querySelectorAll(sel)[i].scrollLeft > 0",
            arg=[selector, index],
            timeout=3000,
        )
    finally:
        context.close()


def test_code_in_a_folded_cell_gets_its_tab_stop_when_opened(
    browser, site_dir: Path
) -> None:  # type: ignore[no-untyped-def]
    """A folded cell's code that is laid out only once opened scrolls from the keyboard
    when it is opened.

    Chromium lays out a closed ``<details>``' content, so the theme's tab stops (set at
    load) reach it; browsers that do not (the rule below makes Chromium do the same)
    left such a block without one. book-site.js sets it when the block gets its size.
    """
    context = new_context(browser, viewport=VIEWPORTS["phone"], offline=False)
    context.add_init_script(
        "document.addEventListener('DOMContentLoaded', () => { const s = "
        "document.createElement('style'); s.textContent = 'details:not([open]) > "
        ":not(summary) { display: none !important; }'; document.head.appendChild(s); "
        "});"
    )
    try:
        p = context.new_page()
        open_page(p, site_dir, KEYBOARD_CHAPTER)
        # a keyboard reader (every code block is drawn from the first Tab on)
        p.keyboard.press("Tab")
        p.wait_for_timeout(400)
        assert (
            p.evaluate("() => document.querySelectorAll('main details pre').length") > 0
        )
        p.evaluate(
            "() => document.querySelectorAll('main details').forEach(d => { d.open = "
            "true; })"
        )
        p.wait_for_timeout(400)
        blocks = p.evaluate(
            "() => Array.from(document.querySelectorAll('main details pre')).map(e => "
            "({text: e.textContent.slice(0, 60), scrolls: e.scrollWidth > "
            "e.clientWidth + 1, tabindex: e.getAttribute('tabindex')}))"
        )
        assert any(b["scrolls"] for b in blocks), (
            f"{KEYBOARD_CHAPTER}: no folded code scrolls at phone width"
        )
        stuck = [b["text"] for b in blocks if b["scrolls"] and b["tabindex"] != "0"]
        assert stuck == [], (
            f"{KEYBOARD_CHAPTER}: opened folded code that scrolls but takes no tab "
            f"stop: {stuck[:3]}"
        )
    finally:
        context.close()


# Each code block's box: its height and whether it scrolls (and its tab stop), in
# document order. With an index, only that block's (reading every block would lay each
# undrawn one out).
CODE_BOXES = """(only) => Array.from(document.querySelectorAll('main pre'))
  .filter((e, i) => only === null || i === only).map(e => ({
  height: e.getBoundingClientRect().height, scrolls: e.scrollWidth > e.clientWidth + 1,
  tabindex: e.getAttribute('tabindex'), text: e.textContent.slice(0, 50) }))"""


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_code_off_the_screen_is_drawn_later_in_a_box_of_its_final_height(
    browser, site_dir: Path, viewport: str
) -> None:  # type: ignore[no-untyped-def]
    """A block off the screen is not laid out until it comes near (content-visibility,
    book-site.css), in a box of exactly the height it has once drawn, so nothing moves;
    drawn by scrolling (no keyboard), a wide block takes its tab stop when it is drawn
    (book-site.js)."""
    context = new_context(browser, viewport=VIEWPORTS[viewport], offline=False)
    try:
        p = context.new_page()
        open_page(p, site_dir, KEYBOARD_CHAPTER)
        p.wait_for_timeout(400)
        # past the theme's own tab stops (300 ms after a change), which must not win
        p.wait_for_timeout(400)
        lazy = p.evaluate(CODE_BOXES, None)
        height = p.evaluate("() => document.documentElement.scrollHeight")
        skipped = p.evaluate(
            "() => Array.from(document.querySelectorAll('main pre')).filter(e => "
            "getComputedStyle(e).contentVisibility === 'auto').length"
        )
        assert skipped == len(lazy) > 20, (
            f"{KEYBOARD_CHAPTER}: {skipped} of {len(lazy)} code blocks drawn lazily"
        )
        drawn = []
        # a reader scrolling through the page; each block measured while on the screen
        for i in range(len(lazy)):
            p.evaluate(
                "() => document.querySelectorAll('main "
                f"pre')[{i}].scrollIntoView({{block: 'center'}})"
            )
            p.wait_for_timeout(80)
            (box,) = p.evaluate(CODE_BOXES, i)
            drawn.append(box)
        assert p.evaluate("() => document.documentElement.scrollHeight") == height
        moved = [
            (a["text"], a["height"], b["height"])
            for a, b in zip(lazy, drawn, strict=True)
            if abs(a["height"] - b["height"]) > 0.5
        ]
        assert moved == [], (
            f"{KEYBOARD_CHAPTER}: code blocks whose reserved height is not their drawn "
            f"one: {moved[:3]}"
        )
        wide = [b for b in drawn if b["scrolls"]]
        if viewport == "phone":
            assert wide, f"{KEYBOARD_CHAPTER}: no code block scrolls at phone width"
        stuck = [b["text"] for b in wide if b["tabindex"] != "0"]
        assert stuck == [], (
            f"{KEYBOARD_CHAPTER}: wide code drawn on scrolling without its tab stop: "
            f"{stuck[:3]}"
        )
        # Before it was drawn, each block that scrolls once drawn already had its tab
        # stop (from its longest line): a keyboard, or an accessibility checker, finds
        # every wide block in the tab order at once.
        late = [
            b["text"]
            for a, b in zip(lazy, drawn, strict=True)
            if b["scrolls"] and a["tabindex"] != "0"
        ]
        assert late == [], (
            f"{KEYBOARD_CHAPTER}: wide code without its tab stop until drawn: "
            f"{late[:3]}"
        )
        extra = [
            b["text"]
            for a, b in zip(lazy, drawn, strict=True)
            if not b["scrolls"] and a["tabindex"] == "0"
        ]
        assert len(extra) <= 2, (
            f"{KEYBOARD_CHAPTER}: blocks given a tab stop they do not need: {extra[:3]}"
        )
    finally:
        context.close()


@pytest.mark.parametrize("name", CHAPTERS)
def test_glued_numbers_are_powers_of_ten_not_e_notation(
    site_dir: Path, name: str
) -> None:
    """A glued 1.3e-20 reads 1.3 × 10⁻²⁰ (bookbuild.site.notation): no glued text shows
    E notation."""
    from bs4 import BeautifulSoup

    from bookbuild.site.notation import split_scientific

    soup = BeautifulSoup((site_dir / name).read_text(encoding="utf-8"), "html.parser")
    glued = soup.select("span.glued")
    if name.removeprefix("book/").removesuffix(".html") in {
        "recurrence",
        "gradients",
        "gated",
        "language-models",
        "generating",
        "depth",
        "beyond",
    }:
        assert glued, f"{name}: no glued number found (the marker class changed?)"
    left = [
        g.get_text()
        for g in glued
        if any(isinstance(p, tuple) for p in split_scientific(g.get_text()))
    ]
    assert left == []
    # a number glued from another page (the appendix of checks quotes the chapters'
    # sentences) too
    pasted = [
        s.get_text()
        for s in soup.select("span.pasted-text")
        if any(isinstance(p, tuple) for p in split_scientific(s.get_text()))
    ]
    assert pasted == [], (
        f"{name}: numbers glued from another page in E notation: {pasted[:5]}"
    )
    # literals too: a source's 1.2e-07 or a setting's 2e-3 quoted in the prose ({lit},
    # bookbuild.site.lit)
    literal = [
        s.get_text()
        for s in soup.select("span.lit")
        if any(isinstance(p, tuple) for p in split_scientific(s.get_text()))
    ]
    assert literal == [], f"{name}: literals in E notation: {literal[:5]}"
    # one known small number: set with a superscript exponent
    if name == "book/gated.html":
        assert any(g.select_one("sup") for g in glued)


@pytest.mark.parametrize("name", CHAPTERS)
def test_answers_start_folded(site_dir: Path, name: str) -> None:
    """Every admonition titled "Answers..." is a dropdown, so the answers are not in
    plain view under the questions."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup((site_dir / name).read_text(encoding="utf-8"), "html.parser")
    for title in soup.select("div.admonition > p.admonition-title"):
        if title.get_text().strip().startswith("Answers"):
            assert "dropdown" in title.parent["class"], (
                f"{name}: {title.get_text()!r} is not folded"
            )
    # no "Answers" paragraph hidden inside a question box
    for box in soup.select("div.admonition"):
        title = box.select_one("p.admonition-title")
        if title and "Check yourself" in title.get_text():
            assert "Answers" not in box.get_text(), (
                f"{name}: answers inside the question box"
            )
