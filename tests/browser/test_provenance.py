"""Glued numbers and figure data on the built pages, in Chromium: focus or hover on a
number says, in the reader's words, whether the build computed it or read it from a
training made ahead of the build, links the code that computed it and the build report,
inside the window and without moving the text; no Python statement, cache key, commit or
hidden-cell number reaches the reader; a glued phrase is ordinary text; Enter pins the
preview and hands its links the focus, Escape gives the focus back; every figure drawn
by a cell links its data."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from tests.browser.test_pages import VIEWPORTS, open_page, page, viewport  # noqa: F401  (shared fixtures)

PAGE = "book/language-models.html"
#: a page whose numbers still come from a memoized run: Chapter 3 trains one run in the
#: build (Chapters 4, 6 and 7 read their trainings from sweep records since 2026-12-03
#: and 12-04, so their numbers name records)
RUNS_PAGE = "book/gated.html"


def _tip(tab) -> dict:  # type: ignore[no-untyped-def]
    return tab.evaluate("""() => {
      const tip = document.getElementById('glue-tip');
      if (!tip) return {exists: false};
      const r = tip.getBoundingClientRect();
      return {exists: true, shown: !tip.hidden && getComputedStyle(tip).display !== 'none', left: r.left,
              right: r.right, top: r.top, bottom: r.bottom, width: document.documentElement.clientWidth,
              height: window.innerHeight, text: tip.innerText,
              active: document.activeElement && document.activeElement.getAttribute('data-glue')};
    }""")  # noqa: E501  (JavaScript run in the page)


def _provenance(tab, site_dir: Path, name: str) -> tuple[list[str], dict]:  # type: ignore[no-untyped-def]
    """The page's glued numbers (their keys, in order) and its provenance data, after
    checking that every one has an entry."""
    open_page(tab, site_dir, name)
    keys = tab.evaluate(
        "Array.from(document.querySelectorAll('span.glued:not(.glued-words)'), el => "
        "el.getAttribute('data-glue'))"
    )
    assert len(keys) >= 50
    assert all(keys), "a glued number without provenance"
    data = json.loads(
        tab.evaluate("document.getElementById('glue-provenance').textContent")
    )
    assert set(keys) <= set(data)
    return keys, data


def test_every_glued_number_has_a_provenance_entry(page, site_dir: Path) -> None:  # noqa: F811
    keys, data = _provenance(page, site_dir, RUNS_PAGE)
    with_runs = [
        k for k in keys if any(r["outcome"] != "made ahead" for r in data[k]["runs"])
    ]
    assert with_runs, "no number on the page names the memoized run it came from"
    run = next(r for r in data[with_runs[0]]["runs"] if r["outcome"] != "made ahead")
    assert run["function"].startswith("chapter_code.")
    assert len(run["key"]) == 12
    assert run["outcome"] in ("computed", "reused")
    assert run["anchor"].startswith("run-")


def test_chapter_4s_numbers_name_the_sweep_records_of_its_models(
    page,  # noqa: F811
    site_dir: Path,
) -> None:
    keys, data = _provenance(page, site_dir, PAGE)
    assert all(r["outcome"] == "made ahead" for k in keys for r in data[k]["runs"]), (
        "Chapter 4 trains nothing in the build: every run it names was made ahead"
    )
    named = [
        k for k in keys if any(s["sweep"] == "char-lm-book" for s in data[k]["sweeps"])
    ]
    assert len(named) >= 10, (
        "the numbers measured on Chapter 4's models name the records they were read "
        "from"
    )
    record = next(s for s in data[named[0]]["sweeps"] if s["sweep"] == "char-lm-book")
    assert record["config"] == "book-runs"
    assert record["records"] == record["total"] == 3
    assert all(len(c) == 12 for c in record["commits"])
    shown = next(
        k
        for k in named
        if page.locator(f'span.glued[data-glue="{k}"]').first.is_visible()
    )  # not folded
    page.locator(f'span.glued[data-glue="{shown}"]').first.focus()
    text = _tip(page)["text"]
    assert text.startswith("Read from the training"), text
    assert "made ahead of the book's build" in text, text
    assert record["commits"][0] not in text
    assert "char-lm-book" not in text


def test_focus_shows_where_a_number_came_from_inside_the_window(
    page,  # noqa: F811
    site_dir,
    viewport,  # noqa: F811
):
    open_page(page, site_dir, PAGE)
    numbers = page.locator("span.glued[data-glue]")
    count = numbers.count()
    height_before = page.evaluate("document.documentElement.scrollHeight")
    for i in range(0, count, max(1, count // 12)):
        numbers.nth(i).focus()
        state = _tip(page)
        assert state["shown"], i
        assert state["text"].startswith(
            ("Computed when the book was built", "Read from ")
        ), state["text"]
        assert not re.search(
            r"code cell|glue\(|key |commit|[0-9a-f]{12}", state["text"]
        ), state["text"]
        assert state["text"].endswith("How it was made, in detail: the build report"), (
            state["text"]
        )
        assert state["left"] >= 0, (i, state)
        assert state["right"] <= state["width"], (i, state)
        assert state["top"] >= 0, (i, state)
        assert state["bottom"] <= state["height"], (i, state)
    # no layout shift
    assert page.evaluate("document.documentElement.scrollHeight") == height_before


def test_a_run_is_named_by_its_training_and_whether_this_build_trained_it(
    page,  # noqa: F811
    site_dir: Path,
) -> None:
    open_page(page, site_dir, RUNS_PAGE)
    data = json.loads(
        page.evaluate("document.getElementById('glue-provenance').textContent")
    )
    shown = page.evaluate(
        "Array.from(document.querySelectorAll('span.glued[data-glue]'), el => "
        "el.getAttribute('data-glue'))"
    )
    key = next(k for k in shown if data[k]["runs"])
    page.locator(f'span.glued[data-glue="{key}"]').first.focus()
    text = _tip(page)["text"]
    run = data[key]["runs"][0]
    assert f"the training {run['function'].rsplit('.', 1)[-1]}" in text
    assert run["key"] not in text
    assert (", trained by this build" in text) or (
        ", trained by an earlier build of the same code" in text
    )


def test_a_glued_phrase_is_ordinary_text_without_a_preview_or_a_tab_stop(
    page,  # noqa: F811
    site_dir: Path,
) -> None:
    open_page(page, site_dir, "book/depth.html")
    found = page.evaluate("""() => Array.from(document.querySelectorAll('span.glued'), el => ({
        text: el.textContent, words: el.classList.contains('glued-words'), tab: el.getAttribute('tabindex'),
        preview: el.hasAttribute('data-glue')}))""")  # noqa: E501  (JavaScript run in the page)
    phrases = [f for f in found if not re.search(r"[0-9]", f["text"])]
    assert phrases, "Chapter 6 glues at least one phrase"
    assert all(f["words"] and f["tab"] is None and not f["preview"] for f in phrases), (
        phrases[:3]
    )
    assert all(f["preview"] for f in found if re.search(r"[0-9]", f["text"])), (
        "every number keeps its preview"
    )


def test_enter_pins_the_preview_and_escape_gives_the_focus_back(
    page,  # noqa: F811
    site_dir: Path,
) -> None:
    open_page(page, site_dir, PAGE)
    data = json.loads(
        page.evaluate("document.getElementById('glue-provenance').textContent")
    )
    shown = page.evaluate(
        "Array.from(document.querySelectorAll('span.glued[data-glue]'), el => "
        "el.getAttribute('data-glue'))"
    )
    key = next(k for k in shown if data[k]["listings"])
    number = page.locator(f'span.glued[data-glue="{key}"]').first
    number.focus()
    page.keyboard.press("Enter")
    assert _tip(page)["shown"]
    focused = page.evaluate("document.activeElement.className")
    assert focused == "glue-tip-link"
    href = page.evaluate("document.activeElement.getAttribute('href')")
    assert page.locator(href).count() == 1, (
        f"the listing anchor {href} is not on the page"
    )
    page.keyboard.press("Escape")
    state = _tip(page)
    assert not state["shown"]
    assert state["active"] == key


def test_hover_opens_the_preview(page, site_dir: Path, viewport: str) -> None:  # noqa: F811
    if viewport == "phone":
        pytest.skip("no hover on a phone; a tap focuses the number, tested above")
    open_page(page, site_dir, PAGE)
    number = page.locator("span.glued[data-glue]").nth(3)
    number.scroll_into_view_if_needed()
    number.hover()
    assert _tip(page)["shown"]


def test_every_figure_links_its_plotted_data(page, site_dir: Path) -> None:  # noqa: F811
    open_page(page, site_dir, PAGE)
    figures = page.locator("figure").count()
    links = page.evaluate(
        "Array.from(document.querySelectorAll('p.figure-data a'), a => "
        "a.getAttribute('href'))"
    )
    assert figures >= 1
    assert len(links) == 2 * figures
    for href in links:
        target = (site_dir / "book" / href).resolve()
        assert target.is_file(), href
        if href.endswith(".csv"):
            rows = list(csv.reader(io.StringIO(target.read_text())))
            # the figure's own columns (issue 53), not plot coordinates
            assert rows[0][0] != "axes", rows[0]
            assert any(
                "(nats per character)" in column or "characters" in column
                for column in rows[0]
            ), rows[0]
            assert len(rows) > 1
        else:
            assert json.loads(target.read_text())[0]


def test_a_paragraph_s_numbers_are_one_tab_stop_and_the_arrow_keys_move_between_them(
    page,  # noqa: F811
    site_dir,
):
    """Issue 53, item 2: Chapter 6 glues about 250 numbers; a keyboard reader meets one
    Tab stop per paragraph (its first number), the arrow keys move between the
    paragraph's numbers, and the preview says so."""
    open_page(page, site_dir, "book/depth.html")
    counts = page.evaluate("""() => {
      const numbers = Array.from(document.querySelectorAll('span.glued[data-glue]'));
      const stops = numbers.filter(e => e.getAttribute('tabindex') === '0');
      const blocks = new Set(numbers.map(e => e.closest('p, li, td, th, figcaption, dd, .admonition-title')));
      return {numbers: numbers.length, stops: stops.length, blocks: blocks.size};
    }""")  # noqa: E501  (JavaScript run in the page)
    assert counts["numbers"] >= 150
    assert counts["stops"] == counts["blocks"] < counts["numbers"] / 2, counts
    first = page.locator("span.glued[data-glue][data-numbers='3']").first
    first.focus()
    key = first.get_attribute("data-glue")
    assert "\u2190 \u2192: the other numbers of this paragraph" in _tip(page)["text"]
    page.keyboard.press("ArrowRight")
    moved = page.evaluate("""() => ({key: document.activeElement.getAttribute('data-glue'),
      tab: document.activeElement.getAttribute('tabindex')})""")  # noqa: E501  (JavaScript run in the page)
    assert moved["key"] != key
    assert moved["tab"] == "0"
    assert first.get_attribute("tabindex") == "-1"
    assert _tip(page)["shown"]
    page.keyboard.press("ArrowLeft")
    assert page.evaluate("document.activeElement.getAttribute('data-glue')") == key


def test_a_preview_names_the_seed_and_links_the_runs_row_in_the_build_report(
    page,  # noqa: F811
    site_dir: Path,
) -> None:
    """A number from a seeded training says which seed, and its preview's report link
    lands on that run's row."""
    open_page(page, site_dir, RUNS_PAGE)
    data = json.loads(
        page.evaluate("document.getElementById('glue-provenance').textContent")
    )
    shown = page.evaluate(
        "Array.from(document.querySelectorAll('span.glued[data-glue]'), el => "
        "el.getAttribute('data-glue'))"
    )
    key = next(
        k for k in shown if len({r.get("seed") for r in data[k]["runs"]} - {None}) == 1
    )
    run = data[key]["runs"][0]
    page.locator(f'span.glued[data-glue="{key}"]').first.focus()
    text = _tip(page)["text"]
    assert f"seed {run['seed']}" in text, text
    href = page.evaluate(
        "Array.from(document.querySelectorAll('#glue-tip "
        "a')).pop().getAttribute('href')"
    )
    assert href == f"build-report.html#{run['anchor']}", href
    report = (site_dir / "book" / "build-report.html").read_text()
    assert f'id="{run["anchor"]}"' in report, (
        "the report has no row for the run the preview names"
    )
