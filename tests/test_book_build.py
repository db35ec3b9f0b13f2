"""The book build is itself a test: a clean build with every chapter executed, no warning, no cell error.

This builds into a temporary copy of the repository so it never touches the
author's own `_build/`. It takes a few minutes on a 2-core machine.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bookbuild.build import copy_sources, failures_in


@pytest.fixture(scope="module")
def clean_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    work = tmp_path_factory.mktemp("book")
    copy_sources(work)
    proc = subprocess.run(
        [sys.executable, "-m", "bookbuild", "build"], cwd=work, capture_output=True, text=True, timeout=2400
    )
    return work, proc


@pytest.mark.book
def test_whole_book_builds_clean_with_no_warning(clean_build: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    work, proc = clean_build
    log = proc.stdout + proc.stderr
    assert failures_in(log) == [], log[-4000:]
    warnings = [line for line in log.splitlines() if "WARNING" in line and "TCP without encryption" not in line]
    assert warnings == [], "\n".join(warnings)
    assert proc.returncode == 0, log[-4000:]
    html = work / "_build" / "html"
    assert (html / "book" / "recurrence.html").exists()


@pytest.mark.book
def test_chapter_outputs_and_glue_reached_the_page(clean_build: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    work, proc = clean_build
    assert proc.returncode == 0
    page = (work / "_build" / "html" / "book" / "recurrence.html").read_text()
    assert "max |difference|" in page  # a printed output of an executed cell
    assert "hand-written loop vs nn.RNN" in page
    assert 'alt="Left, a single box labelled f' in page  # figure alt text
    assert "fig-unrolled" in page
    intro = (work / "_build" / "html" / "book" / "intro.html").read_text()
    assert "output profile" in intro  # the build-information table was generated


@pytest.mark.book
def test_clean_build_matches_every_baseline(clean_build: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    work, proc = clean_build
    assert proc.returncode == 0
    report = (work / "_build" / "html" / "book" / "build-report.html").read_text()
    assert "executed" in report
    assert "never executed" in report
    check = subprocess.run([sys.executable, "-m", "bookbuild", "check"], cwd=work, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "matches baselines/" in check.stdout


def test_failures_in_finds_cell_errors() -> None:
    log = "reading sources\n/x.md: WARNING: Executing notebook failed: CellExecutionError [mystnb.exec]\nfine\n"
    assert failures_in(log) == ["/x.md: WARNING: Executing notebook failed: CellExecutionError [mystnb.exec]"]
    assert failures_in("all good\n") == []
