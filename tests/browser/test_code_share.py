"""Code cells show the experiment, not its bookkeeping (issue 28, item 3).

Each chapter is opened at 1280 px as a reader first sees it, and the visible
code cells with their printed (non-figure, non-table) output must take at most
:data:`~tests.browser.code_share.MAX_SHARE` of the page's height
(:mod:`tests.browser.code_share` says what is measured; BENCHMARKS.md has the
shares per chapter). Formatting code lives in ``chapter_code`` or in hidden
cells, and results a reader scans are tables (``chapter_code.core.tables``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.code_share import MAX_SHARE, measure_page, share
from tests.browser.test_reading import CHAPTERS


@pytest.mark.parametrize("name", CHAPTERS)
def test_code_and_printed_output_take_a_small_share_of_the_page(browser, site_dir: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    measured = measure_page(browser, site_dir, name)
    largest = sorted(measured["cells"], key=lambda c: -(c["inputPx"] + c["textPx"]))[:3]
    assert share(measured) <= MAX_SHARE, (
        f"{name}: code cells and their printed output take {share(measured):.1%} of the page's height at 1280 px "
        f"(at most {MAX_SHARE:.0%}); the largest: "
        + "; ".join(f"{c['text']!r} ({c['inputPx']:.0f} + {c['textPx']:.0f} px)" for c in largest)
    )


def test_tables_and_figures_do_not_count() -> None:
    cells = [{"inputPx": 100.0, "textPx": 50.0, "figurePx": 400.0, "tablePx": 300.0}]
    assert share({"pagePx": 1000.0, "cells": cells}) == pytest.approx(0.15)
