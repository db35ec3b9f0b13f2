"""Tests for bookbuild.engine: a chapter re-executes exactly when something it depends on changed.

Each test builds a one-chapter fixture book in a temporary folder with its own
tiny ``chapter_code`` package and data file, and runs the real engine on it
(real kernels, so each execution costs a couple of seconds).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from bookbuild import engine

CHAPTER = """\
---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A fixture chapter

{prose}

```{{code-cell}} ipython3
:label: compute
from pathlib import Path

from chapter_code.tiny import double

print(double(int(Path("../data/number.txt").read_text())))
```
"""


def write_book(root: Path, prose: str = "Some prose.") -> None:
    (root / "book").mkdir(exist_ok=True)
    (root / "chapter_code").mkdir(exist_ok=True)
    (root / "data").mkdir(exist_ok=True)
    (root / "requirements").mkdir(exist_ok=True)
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/ch\n")
    (root / "book" / "ch.md").write_text(CHAPTER.format(prose=prose))
    (root / "chapter_code" / "__init__.py").write_text("")
    (root / "chapter_code" / "tiny.py").write_text("def double(x):\n    return 2 * x\n")
    (root / "data" / "number.txt").write_text("21\n")
    (root / "requirements" / "lock.txt").write_text("somepackage==1.0\n")


def printed(root: Path) -> str:
    import nbformat

    nb = nbformat.read(engine.executed_path(root, "book/ch"), as_version=4)
    code = next(c for c in nb.cells if c.cell_type == "code")
    return "".join(o.get("text", "") for o in code.outputs)


@pytest.fixture
def book(tmp_path: Path) -> Path:
    write_book(tmp_path)
    (first,) = engine.run(tmp_path)
    assert first.status == "executed", first.error
    assert printed(tmp_path) == "42\n"
    return tmp_path


def test_first_run_traces_module_and_data_dependencies(book: Path) -> None:
    entry = engine.load_manifest(book)["book/ch"]
    assert entry["fingerprint"] is None  # the fixture chapter never calls runtime.setup()
    deps = entry["dependencies"]
    assert "chapter_code/tiny.py" in deps
    assert "data/number.txt" in deps


def test_nothing_changed_executes_nothing(book: Path) -> None:
    (again,) = engine.run(book)
    assert again.status == "hit"


def test_prose_only_edit_executes_nothing_and_outputs_stay_available_to_myst_nb(book: Path) -> None:
    write_book(book, prose="Rewritten prose, and a second sentence.")
    (again,) = engine.run(book)
    assert again.status == "hit"
    assert engine.in_myst_nb_cache(book, engine.read_notebook(book / "book" / "ch.md"))


def test_code_cell_edit_reexecutes(book: Path) -> None:
    path = book / "book" / "ch.md"
    path.write_text(path.read_text().replace("print(double(", "print(1 + double("))
    (again,) = engine.run(book)
    assert (again.status, again.reason) == ("executed", "code cells changed")
    assert printed(book) == "43\n"


def test_imported_module_edit_reexecutes(book: Path) -> None:
    (book / "chapter_code" / "tiny.py").write_text("def double(x):\n    return x + x + 1\n")
    (again,) = engine.run(book)
    assert again.status == "executed"
    assert "chapter_code/tiny.py" in again.reason
    assert printed(book) == "43\n"


def test_data_file_edit_reexecutes(book: Path) -> None:
    (book / "data" / "number.txt").write_text("5\n")
    (again,) = engine.run(book)
    assert again.status == "executed"
    assert "data/number.txt" in again.reason
    assert printed(book) == "10\n"


def test_lock_file_edit_reexecutes(book: Path) -> None:
    (book / "requirements" / "lock.txt").write_text("somepackage==1.1\n")
    (again,) = engine.run(book)
    assert (again.status, again.reason) == ("executed", "locked dependencies changed")


def test_device_profile_change_reexecutes(book: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "device_profile", lambda: "cuda")
    (again,) = engine.run(book)
    assert (again.status, again.reason) == ("executed", "device profile cpu -> cuda")


def test_failing_cell_is_named_and_not_cached(tmp_path: Path) -> None:
    write_book(tmp_path)
    path = tmp_path / "book" / "ch.md"
    path.write_text(path.read_text().replace("print(double(", "print(1 / 0, double("))
    (result,) = engine.run(tmp_path)
    assert result.status == "failed"
    assert "book/ch.md: cell 'compute' failed" in result.error
    assert "ZeroDivisionError" in result.error
    assert not engine.executed_path(tmp_path, "book/ch").exists()
    (again,) = engine.run(tmp_path)
    assert (again.status, again.reason) == ("failed", "failed last time")


def test_cell_timeout_names_chapter_and_cell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_book(tmp_path)
    path = tmp_path / "book" / "ch.md"
    slow = textwrap.dedent(
        """
        ```{code-cell} ipython3
        :label: slow-cell
        import time
        time.sleep(30)
        ```
        """
    )
    path.write_text(path.read_text() + slow)
    monkeypatch.setenv("BOOK_CELL_TIMEOUT", "2")
    (result,) = engine.run(tmp_path)
    assert result.status == "failed"
    assert "book/ch.md: cell 'slow-cell' ran longer than the 2 s cell timeout" in result.error


def test_workers_are_bounded_by_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine.os, "cpu_count", lambda: 16)
    assert engine.workers(2) == 8
    assert engine.workers(32) == 1
    monkeypatch.setattr(engine.os, "cpu_count", lambda: 2)
    assert engine.workers(2) == 1
