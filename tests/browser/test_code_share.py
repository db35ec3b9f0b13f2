"""Code cells show the experiment, not its bookkeeping (issue 28, item 3).

Each chapter is opened at 1280 px as a reader first sees it, and the visible
code cells with their printed (non-figure, non-table) output must take at most
:data:`~tests.browser.code_share.MAX_SHARE` of the page's height
(:mod:`tests.browser.code_share` says what is measured; BENCHMARKS.md has the
shares per chapter). Formatting code lives in ``chapter_code`` or in hidden
cells, and results a reader scans are tables (``chapter_code.core.tables``).

The browser test is
``tests/browser/test_reading.py::test_code_and_printed_output_take_a_small_share_of_the_page``: it measures
the share in the load that measures the page's code and formulas, one load of each
chapter at 1280 px for both.
"""  # noqa: E501  (a test's node id)

from __future__ import annotations

import pytest

from tests.browser.code_share import share


def test_tables_and_figures_do_not_count() -> None:
    cells = [{"inputPx": 100.0, "textPx": 50.0, "figurePx": 400.0, "tablePx": 300.0}]
    assert share({"pagePx": 1000.0, "cells": cells}) == pytest.approx(0.15)
