"""Tests for bookbuild.gate: accept refuses under CI, the report shows outcomes and failures."""

from __future__ import annotations

from pathlib import Path

import pytest

from bookbuild import engine, gate, records


def test_accept_refuses_under_ci(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.setattr(engine, "run", lambda *a, **k: pytest.fail("accept must not execute anything under CI"))
    assert gate.accept(tmp_path) == 2


def test_report_lists_outcomes_differences_and_failures(tmp_path: Path) -> None:
    (tmp_path / "book").mkdir()
    fp = {"device": "cpu", "torch_version": "2.13.0", "threads": 1, "seed": 0}
    ok = engine.ChapterResult("book/a", "hit", "unchanged", 1.5, "k1", {"chapter_code/x.py": "h"}, "", "t", fp)
    bad = engine.ChapterResult("book/b", "failed", "code cells changed", 2.0, "k2", {}, "book/b.md: cell 'c' failed")
    diff = records.Difference("book/a", "cell-1", "loss = 1", "loss = 2")
    checks = [gate.ChapterCheck(ok, [diff], None), gate.ChapterCheck(bad, [], None)]
    page = gate.write_report(tmp_path, checks, "cpu").read_text()
    assert "| {doc}`/book/a` | cache hit | unchanged | 1.5 | t | cpu | 2.13.0 | 1 | 0 |" in page
    assert "**1 difference(s)**" in page
    assert "**FAILED**" in page
    assert "book/a [cell-1]: loss = 1 -> loss = 2" in page
    assert "book/b.md: cell 'c' failed" in page
    assert "`x.py`" in page
