"""How much of a chapter's height its code cells and their printed output take (issue 28, item 3).

One script in the page (:data:`MEASURE`), shared by the browser test
(``tests/browser/test_code_share.py``) and the before/after numbers in
BENCHMARKS.md (``python -m tests.browser.code_share [HTML_DIR]``). The page is
measured as a reader first sees it: nothing is unfolded, so a ``hide-input``
cell counts only its "Show code cell source" toggle, and a cell in a folded
solution counts nothing.

What counts, summed over the visible code cells (``div.cell``):

* the cell's input: its ``cell_input`` block, or the toggle that folds it;
* each output that is neither a figure (an image, a ``figure``) nor a table
  (an output holding a ``table``): printed text (streams, ``text/plain``,
  text in HTML or Markdown outputs).

Included listings (``literalinclude``) are no cells and do not count. The
share is that sum over the height of the page's article (``article.bd-article``).
"""  # noqa: E501  (its first line is the --help description)

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

#: Largest share of a chapter's height that its visible code cells and their printed
#: output may take.
MAX_SHARE = 0.15
#: The width the share is measured and asserted at.
WIDTH = {"width": 1280, "height": 900}

MEASURE = r"""
() => {
  const article = document.querySelector('main article.bd-article') || document.querySelector('main');
  const height = e => e.getBoundingClientRect().height;
  // a folded solution keeps its content's boxes but hides them (visibility: hidden, in a 0-px section)
  const shown = e => height(e) > 0 && e.getBoundingClientRect().width > 0
    && e.checkVisibility({ visibilityProperty: true, opacityProperty: true });
  const label = e => (e.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 60);
  const isFigure = o => o.matches('figure, img, .figure-data') && !o.querySelector('pre')
    || (o.querySelector('img, svg') && !o.querySelector('pre, p, table'));
  const cells = [];
  for (const cell of article.querySelectorAll('div.cell')) {
    if (!shown(cell)) { continue; }
    const fold = cell.querySelector(':scope > details.above-input');
    const input = fold || cell.querySelector(':scope > div.cell_input');
    const inputPx = input && shown(input) ? height(input) : 0;
    let textPx = 0, figurePx = 0, tablePx = 0;
    const output = cell.querySelector(':scope > div.cell_output, :scope > details.below-input');
    const parts = output ? Array.from(output.querySelectorAll(':scope > *')) : [];
    for (const o of parts) {
      if (!shown(o)) { continue; }
      if (o.querySelector('table') || o.matches('table')) { tablePx += height(o); }
      else if (isFigure(o)) { figurePx += height(o); }
      else { textPx += height(o); }
    }
    cells.push({ text: label(input || cell), folded: !!fold, inputPx, textPx, figurePx, tablePx });
  }
  return { pagePx: height(article), cells };
}
"""  # noqa: E501  (JavaScript run in the page)


def share(measured: dict) -> float:  # type: ignore[type-arg]
    """The code-and-printed-output share of the page's height, from a :data:`MEASURE`
    result."""
    counted = sum(c["inputPx"] + c["textPx"] for c in measured["cells"])
    return counted / measured["pagePx"]


def measure_page(browser, site_dir: Path, name: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    """Open ``name`` at :data:`WIDTH` (light scheme, no network) and return the
    :data:`MEASURE` result."""
    from tests.browser.conftest import new_context
    from tests.browser.test_pages import open_page

    context = new_context(browser, viewport=WIDTH, scheme="light")
    try:
        page = context.new_page()
        open_page(page, site_dir, name)
        page.wait_for_timeout(300)
        return page.evaluate(MEASURE)
    finally:
        context.close()


def main(argv: list[str] | None = None) -> int:
    """Print each chapter's share (and its largest counted cells with ``--cells``) for a
    built site."""
    from playwright.sync_api import sync_playwright

    from tests.browser.conftest import chromium_binary, launch_chromium
    from tests.browser.test_reading import CHAPTERS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html", nargs="?", default="_build/html", type=Path)
    parser.add_argument(
        "--cells",
        type=int,
        default=0,
        help="list the N largest counted cells per chapter",
    )
    parser.add_argument("--json", type=Path, help="also write the measurements here")
    args = parser.parse_args(argv)
    args.html = args.html.resolve()
    binary = chromium_binary()
    if binary is None:
        print("no Chromium to drive (set BOOK_CHROMIUM)", file=sys.stderr)
        return 2
    results = {}
    with sync_playwright() as p:
        browser = launch_chromium(p)
        for name in CHAPTERS:
            if not (args.html / name).exists():
                continue
            m = measure_page(browser, args.html, name)
            results[name] = m
            code = sum(c["inputPx"] for c in m["cells"])
            text = sum(c["textPx"] for c in m["cells"])
            print(
                f"{name:26} {share(m):6.1%}  (code {code / m['pagePx']:5.1%}, printed "
                f"text {text / m['pagePx']:5.1%}; page {m['pagePx'] / 1000:.1f} kpx, "
                f"{len(m['cells'])} cells)"
            )
            for c in sorted(m["cells"], key=lambda c: -(c["inputPx"] + c["textPx"]))[
                : args.cells
            ]:
                print(f"    {c['inputPx']:6.0f} + {c['textPx']:6.0f} px  {c['text']!r}")
        browser.close()
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
