"""Issue 28's reading measures per chapter and width, for BENCHMARKS.md: one script, run before and after a change.

``python -m tests.browser.reading_stats [HTML_DIR]`` opens every chapter at 1280 and 390
px (light scheme, no network), unfolds what a reader can unfold (as the browser tests
do, :data:`tests.browser.test_reading.MEASURE`) and prints, per chapter and width:

* code blocks (listings, cells, outputs), those with a wrapped line, and how many screen
  lines the wrapping adds (a block's content height over its line height, less its
  lines);
* display formulas, those wider than their box (which must scroll, with a tab stop and a
  cue), and those cut off (wider than their box without scrolling, or past the column);
* the smallest figure text, in CSS px as shown, over the page's PNG figures (the height
  the PNG records for its smallest text, scaled by the shown over the natural width),
  and the figure it is in.

The browser tests assert the limits (``test_reading.py``, ``test_pages.py``); this
script only counts.
"""  # noqa: E501  (its first line is the --help description)

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

FIGURES = r"""
() => Array.from(document.querySelectorAll('main img'))
  .filter(i => i.getBoundingClientRect().width > 0 && (i.currentSrc || i.src).endsWith('.png'))
  .map(i => ({ src: i.currentSrc || i.src, natural: i.naturalWidth, shown: i.getBoundingClientRect().width }))
"""  # noqa: E501  (JavaScript run in the page)


def wrapped_lines(block: dict) -> int:  # type: ignore[type-arg]
    """Screen lines a code block's soft wrapping adds (0 for a block that keeps its
    lines)."""
    return max(0, round(block["contentHeight"] / block["lineHeight"]) - block["lines"])


def summary(measured: dict, figures: list[dict]) -> dict:  # type: ignore[type-arg]
    """Counts from one page's :data:`~tests.browser.test_reading.MEASURE` result and its
    figures."""
    from tests.browser.test_pages import smallest_text_px

    code, formulas = measured["code"], measured["formulas"]
    wide = [
        f
        for f in formulas
        if f.get("rendered") and f["drawingWidth"] > f["boxWidth"] + 1
    ]
    cut = [
        f
        for f in formulas
        if f.get("rendered")
        and (
            (f["drawingWidth"] > f["boxWidth"] + 1 and not f["scrollStyle"])
            or f["outsideItsBlock"]
            or f["blockOverflows"]
            or f["pastColumn"]
        )
    ]
    smallest = None
    for fig in figures:
        px = smallest_text_px(Path(unquote(urlparse(fig["src"]).path)))
        if px is not None and fig["natural"]:
            shown = px * fig["shown"] / fig["natural"]
            if smallest is None or shown < smallest[0]:
                smallest = (shown, Path(fig["src"]).name)
    return {
        "code_blocks": len(code),
        "blocks_wrapped": sum(1 for c in code if wrapped_lines(c) > 0),
        "lines_added": sum(wrapped_lines(c) for c in code),
        "formulas": len(formulas),
        "formulas_wider_than_box": len(wide),
        "formulas_cut_off": len(cut),
        "equation_numbers_over_formula": sum(
            1 for f in formulas if f.get("eqnoOverlaps")
        ),
        "smallest_figure_text_px": None if smallest is None else round(smallest[0], 1),
        "smallest_in": None if smallest is None else smallest[1],
    }


def main(argv: list[str] | None = None) -> int:
    from playwright.sync_api import sync_playwright

    from tests.browser.conftest import chromium_binary, launch_chromium, new_context
    from tests.browser.test_pages import VIEWPORTS, open_page
    from tests.browser.test_reading import CHAPTERS, MEASURE

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html", nargs="?", default="_build/html", type=Path)
    parser.add_argument("--json", type=Path, help="also write the counts here")
    args = parser.parse_args(argv)
    html = args.html.resolve()
    binary = chromium_binary()
    if binary is None:
        print("no Chromium to drive (set BOOK_CHROMIUM)", file=sys.stderr)
        return 2
    results: dict[str, dict[str, dict]] = {}  # type: ignore[type-arg]
    with sync_playwright() as p:
        browser = launch_chromium(p)
        for width, viewport in VIEWPORTS.items():
            context = new_context(browser, viewport=viewport, scheme="light")
            for name in CHAPTERS:
                if not (html / name).exists():
                    continue
                page = context.new_page()
                open_page(page, html, name)
                page.wait_for_timeout(400)
                page.evaluate(MEASURE)  # unfolds the folded cells and solutions
                page.wait_for_timeout(400)
                counts = summary(page.evaluate(MEASURE), page.evaluate(FIGURES))
                page.close()
                results.setdefault(name, {})[width] = counts
                print(
                    f"{name:26} {viewport['width']:4} px  code: "
                    f"{counts['blocks_wrapped']:3}/{counts['code_blocks']:3} blocks "
                    f"wrap (+{counts['lines_added']} lines)  formulas: "
                    f"{counts['formulas_wider_than_box']:2}/{counts['formulas']:2} "
                    f"wider than their box, {counts['formulas_cut_off']} cut off  "
                    f"smallest figure text: {counts['smallest_figure_text_px']} px "
                    f"({counts['smallest_in']})",
                    flush=True,
                )
            context.close()
        browser.close()
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
