"""Claims on the built pages, in Chromium: the mark opens what was checked from the
keyboard, on hover and on touch, inside the window, without moving the text, and Escape
closes it; the appendix lists every claim."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.test_pages import VIEWPORTS, open_page, page, viewport  # noqa: F401  (shared fixtures)
from tests.browser.test_reading import OPEN_FOLDS

CLAIMED_PAGE = "book/recurrence.html"


def _tip_state(tab) -> dict:  # type: ignore[no-untyped-def]
    return tab.evaluate("""() => {
      const mark = document.activeElement;
      const tip = mark && mark.nextElementSibling;
      if (!tip || !mark.classList.contains('claim-mark')) return {focused: false};
      const r = tip.getBoundingClientRect();
      return {focused: true, shown: getComputedStyle(tip).display !== 'none', left: r.left, right: r.right,
              top: r.top, bottom: r.bottom, width: document.documentElement.clientWidth,
              height: window.innerHeight, text: tip.innerText,
              described: mark.getAttribute('aria-describedby') === tip.id};
    }""")  # noqa: E501  (JavaScript run in the page)


def test_the_keyboard_reaches_every_claim_and_its_preview_fits_the_window(
    page,  # noqa: F811
    site_dir,
    viewport,  # noqa: F811
):
    open_page(page, site_dir, CLAIMED_PAGE)
    marks = page.locator("button.claim-mark")
    count = marks.count()
    assert count >= 10
    height_before = page.evaluate("document.documentElement.scrollHeight")
    for i in range(count):
        marks.nth(i).focus()
        state = _tip_state(page)
        assert state["focused"], i
        assert state["shown"], i
        assert state["described"], i
        assert state["text"].startswith("Checked: "), state["text"]
        assert "held in this build" in state["text"]
        assert state["left"] >= 0, (i, state)
        assert state["right"] <= state["width"], (i, state)
        if viewport == "phone":  # docked at the bottom of the screen
            assert state["bottom"] <= state["height"], (i, state)
    # no layout shift
    assert page.evaluate("document.documentElement.scrollHeight") == height_before


def test_escape_closes_a_preview_and_keeps_the_focus(page, site_dir: Path) -> None:  # noqa: F811
    open_page(page, site_dir, CLAIMED_PAGE)
    mark = page.locator("button.claim-mark").first
    mark.focus()
    assert _tip_state(page)["shown"]
    page.keyboard.press("Escape")
    state = _tip_state(page)
    assert state["focused"]
    assert not state["shown"]
    page.keyboard.press("Tab")
    page.keyboard.press("Shift+Tab")
    assert _tip_state(page)["shown"]  # open again once the focus comes back


def test_hover_opens_the_preview(page, site_dir: Path, viewport: str) -> None:  # noqa: F811
    if viewport == "phone":
        pytest.skip("no hover on a phone; the focus a tap gives is tested above")
    open_page(page, site_dir, CLAIMED_PAGE)
    mark = page.locator("button.claim-mark").nth(2)
    mark.scroll_into_view_if_needed()
    mark.hover()
    assert (
        page.evaluate(
            "getComputedStyle(document.querySelectorAll('button.claim-mark')[2].nextElementSibling).display"
        )
        == "block"
    )


def test_a_claim_reads_as_its_sentence(page, site_dir: Path) -> None:  # noqa: F811
    open_page(page, site_dir, CLAIMED_PAGE)
    claim = page.locator("#claim-c-pad-state")
    text = claim.evaluate(
        "el => { const c = el.cloneNode(true); "
        "c.querySelectorAll('.claim-anchor').forEach(a => a.remove()); return "
        "c.innerText; }"
    )
    assert text.startswith("With the mask, every sequence ends within")
    weight = claim.evaluate("el => getComputedStyle(el).fontWeight")
    body = page.evaluate(
        "getComputedStyle(document.querySelector('article p')).fontWeight"
    )
    assert weight == body


def test_the_appendix_lists_each_claim_with_its_condition(page, site_dir: Path) -> None:  # noqa: F811
    open_page(page, site_dir, "book/checked.html")
    assert page.locator("#check-c-pad-state").count() == 1
    entry = page.locator("#check-c-pad-state").evaluate(
        "el => el.parentElement.innerText"
    )
    assert "gap_masked < 1e-6" in entry
    assert "held" in entry


def test_a_mark_takes_a_finger_s_tap_and_keeps_its_punctuation_on_its_line(
    page,  # noqa: F811
    site_dir,
    viewport,  # noqa: F811
):
    """Issue 53, item 4: the mark's tap target is at least 24 x 24 CSS px (an invisible
    box around it), and the full stop after a claim never starts a line of its own."""
    open_page(page, site_dir, "book/gated.html")
    # the solutions' claims too, as a reader who opens them sees them
    page.evaluate(OPEN_FOLDS)
    page.wait_for_timeout(300)
    found = page.evaluate("""() => {
      const out = {small: [], alone: [], punctuated: 0, marks: 0};
      for (const mark of document.querySelectorAll('button.claim-mark')) {
        const r = mark.getBoundingClientRect();
        if (!r.width) continue;
        out.marks++;
        const cx = r.left + r.width / 2, cy = r.top + r.height / 2;
        mark.scrollIntoView({block: 'center'});
        const s = mark.getBoundingClientRect(), x = s.left + s.width / 2, y = s.top + s.height / 2;
        const hits = [[x - 11, y], [x + 11, y], [x, y - 11], [x, y + 11]]
          .map(([px, py]) => document.elementFromPoint(px, py) === mark);
        if (!hits.every(Boolean)) out.small.push(mark.closest('.claim').textContent.slice(0, 50));
        const after = mark.parentElement.querySelector(':scope > span.claim-after');
        if (after) {
          out.punctuated++;
          const a = after.getBoundingClientRect();
          if (Math.abs(a.bottom - mark.getBoundingClientRect().bottom) > s.height) out.alone.push(after.textContent);
        }
      }
      return out;
    }""")  # noqa: E501  (JavaScript run in the page)
    assert found["marks"] >= 20
    assert found["punctuated"] >= 10  # most claims end a sentence
    assert found["small"] == []
    assert found["alone"] == []


def test_one_tab_stop_per_claim_enter_reaches_its_link_and_focus_never_falls_to_the_body(  # noqa: E501  (the test's name)
    page,  # noqa: F811
    site_dir,
):
    """Issue 53, item 2: the link inside a claim's preview is out of the Tab order;
    Enter on the mark moves the focus onto it with the preview open; Escape gives the
    focus back to the mark, closed; Tab from the link goes on to what follows, never to
    the page's body."""
    open_page(page, site_dir, CLAIMED_PAGE)
    assert page.evaluate(
        "Array.from(document.querySelectorAll('a.claim-tip-link')).every(a => "
        "a.getAttribute('tabindex') === '-1')"
    )
    mark = page.locator("button.claim-mark").nth(1)
    mark.focus()
    page.keyboard.press("Enter")
    state = page.evaluate("""() => { const a = document.activeElement;
      return {link: a.classList.contains('claim-tip-link'), shown: getComputedStyle(a.parentElement).display,
              text: a.textContent}; }""")  # noqa: E501  (JavaScript run in the page)
    assert state == {
        "link": True,
        "shown": "block",
        "text": "every check of this build",
    }
    page.keyboard.press("Escape")
    state = _tip_state(page)
    assert state["focused"]
    assert not state["shown"]
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    after = page.evaluate("""() => { const a = document.activeElement;
      return {body: a === document.body, tag: a.tagName, inTip: !!a.closest('.claim-tip')}; }""")  # noqa: E501  (JavaScript run in the page)
    assert not after["body"]
    assert not after["inTip"]


def test_a_preview_closes_when_its_sentence_scrolls_away(page, site_dir: Path) -> None:  # noqa: F811
    """Issue 53, item 4: on a phone a preview is docked at the bottom of the screen;
    once its claim or number has scrolled out of view, the preview closes (it stayed
    docked 600 px away before)."""
    open_page(page, site_dir, CLAIMED_PAGE)
    mark = page.locator("button.claim-mark").nth(3)
    mark.focus()
    assert _tip_state(page)["shown"]
    page.evaluate("window.scrollBy(0, 1200)")
    page.wait_for_timeout(200)
    assert not _tip_state(page)["shown"]
    number = page.locator("span.glued[data-glue]").nth(2)
    number.focus()
    assert page.evaluate("!document.getElementById('glue-tip').hidden")
    page.evaluate("window.scrollBy(0, 1200)")
    page.wait_for_timeout(200)
    assert page.evaluate("document.getElementById('glue-tip').hidden")
