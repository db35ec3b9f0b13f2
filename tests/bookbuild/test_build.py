"""Tests for bookbuild.build: which pages a one-chapter build needs, and the command line's errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from bookbuild import __main__ as cli
from bookbuild import build


def write_pages(root: Path) -> None:
    (root / "book").mkdir()
    (root / "_toc.yml").write_text(
        "format: jb-book\nroot: book/intro\nparts:\n  - caption: Chapters\n    chapters:\n"
        "      - file: book/one\n      - file: book/two\n      - file: book/three\n"
        "  - caption: Reference\n    chapters:\n      - file: book/glossary\n"
    )
    (root / "book" / "intro.md").write_text("(intro)=\n# Intro\nSee {ref}`chap-one`.\n")
    (root / "book" / "one.md").write_text("(chap-one)=\n# One\n```{math}\n:label: eq-one\nx\n```\n")
    (root / "book" / "two.md").write_text("# Two\nAs in {eq}`eq-one` and {numref}`Figure {number} <fig-three>`.\n")
    (root / "book" / "three.md").write_text("# Three\n```{figure} x.png\n:name: fig-three\n```\n")
    (root / "book" / "glossary.md").write_text("# Glossary\n")


def test_only_build_includes_every_page_its_references_need(tmp_path: Path) -> None:
    write_pages(tmp_path)
    assert build.pages_needed(tmp_path, ["book/two"]) == [
        "book/intro", "book/one", "book/two", "book/three", "book/glossary"
    ]
    assert build.pages_needed(tmp_path, ["book/three"]) == ["book/intro", "book/one", "book/three", "book/glossary"]


def test_only_build_of_an_unknown_page_is_a_named_error(capsys: pytest.CaptureFixture) -> None:
    assert cli.main(["build", "--only", "book/nonesuch"]) == 2
    assert "--only: no such page book/nonesuch.md" in capsys.readouterr().err


def test_a_build_with_book_build_dir_builds_a_copy_there(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    monkeypatch.setattr(build, "build_elsewhere", lambda builder, check: calls.append((builder, check)) or 0)
    monkeypatch.setenv("BOOK_BUILD_DIR", str(tmp_path))
    assert cli.main(["build", "--check"]) == 0
    assert calls == [("html", True)]  # the copy's build: tests/bookbuild/test_build_only.py
