"""``build --only``: the named pages alone, their references to other pages resolved
from the last full build.

A fixture book (a root page, two chapters, the real ``bookbuild``) is built in full
once, then one chapter is broken; ``build_only`` of the other must still succeed,
executing and rendering only its page, with its ``{ref}`` and ``{eq}`` to the broken
chapter linking into the full build. Two Sphinx builds: about a minute.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from bookbuild import build

HEAD = (
    "---\njupytext:\n  text_representation:\n    extension: .md\n    "
    "format_name: myst\n"
    "kernelspec:\n  display_name: Python 3\n  language: python\n  name: "
    "python3\n---\n\n"
)
CONFIG = """\
title: A fixture book
only_build_toc_files: true
exclude_patterns: [_build, bookbuild, chapter_code]
execute:
  execute_notebooks: cache
  cache: _build/.jupyter_cache
sphinx:
  extra_extensions: [bookbuild.site.xrefs]
  config:
    nb_execution_raise_on_error: true
    numfig: true
    math_numfig: true
"""
TOC = """\
format: jb-book
root: book/intro
parts:
- caption: Chapters
  chapters:
  - file: book/a
  - file: book/b
"""
PAGE_A = (
    HEAD
    + """# Chapter A

(sec-a)=
## Uses B

As {ref}`sec-b` shows, see {eq}`eq-b` and {ref}`the section <sec-b>`.

```{code-cell} ipython3
:label: a-cell
print("a ran")
```
"""
)
PAGE_B = (
    HEAD
    + """# Chapter B

(sec-b)=
## The section of B

```{math}
:label: eq-b
x = 1
```

```{code-cell} ipython3
:label: b-cell
print("b ran")
```
"""
)


def fixture_book(root: Path) -> None:
    from chapter_code.core import runtime

    (root / "book").mkdir(parents=True)
    (root / "chapter_code" / "core").mkdir(parents=True)
    (root / "chapter_code" / "__init__.py").write_text("")
    (root / "chapter_code" / "core" / "__init__.py").write_text("")
    shutil.copy(runtime.__file__, root / "chapter_code" / "core" / "runtime.py")
    # and the chapter_code modules runtime imports: the pins (numerics, machine) and the
    # device setting (BOOK_DEVICE)
    for name in ("numerics.py", "machine.py", "device.py"):
        shutil.copy(
            Path(runtime.__file__).with_name(name),
            root / "chapter_code" / "core" / name,
        )
    shutil.copytree(
        Path(build.__file__).parent,
        root / "bookbuild",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    (root / "_config.yml").write_text(CONFIG)
    (root / "_toc.yml").write_text(TOC)
    (root / "book" / "intro.md").write_text(
        "# A fixture book\n\nIts introduction, not executed.\n"
    )
    (root / "book" / "a.md").write_text(PAGE_A)
    (root / "book" / "b.md").write_text(PAGE_B)


def test_only_builds_the_named_page_alone_with_its_references_into_the_last_full_build(
    tmp_path: Path,
) -> None:
    root = tmp_path / "book-root"
    fixture_book(root)
    full = subprocess.run(
        [sys.executable, "-m", "bookbuild", "build"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert full.returncode == 0, full.stdout[-3000:] + full.stderr[-3000:]
    assert (root / "_build" / "html" / "xrefs.json").is_file()
    (root / "book" / "b.md").write_text(
        PAGE_B.replace('print("b ran")', 'raise RuntimeError("b is broken")')
    )
    work = tmp_path / "only"
    assert build.build_only(["book/a"], dest=work, root=root) == 0
    html = (work / "_build" / "html" / "book" / "a.html").read_text()
    base = (root / "_build" / "html").as_uri()
    assert f'href="{base}/book/b.html#sec-b"' in html
    assert f'href="{base}/book/b.html#equation-eq-b"' in html
    # the title, the explicit text, the number
    for text in ["The section of B", "the section", "(1)"]:
        assert f'bookbuild-full-build">{text}</span>' in html
    # neither executed nor rendered
    assert not (work / "_build" / "html" / "book" / "b.html").exists()
    assert "b is broken" not in (work / "_build" / "build.log").read_text()


def test_a_read_only_checkout_with_the_build_dir_elsewhere_builds_the_html_and_writes_nothing_into_it(  # noqa: E501  (the test's name)
    tmp_path: Path,
) -> None:
    import os
    import stat

    root = tmp_path / "book-root"
    fixture_book(root)
    before = {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*")}
    for path in [root, *root.rglob("*")]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        env = {**os.environ, "BOOK_BUILD_DIR": str(tmp_path / "state")}
        done = subprocess.run(
            [sys.executable, "-m", "bookbuild", "build"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert (
            tmp_path / "state" / "checkout" / "_build" / "html" / "book" / "a.html"
        ).is_file()
        assert {
            str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*")
        } == before
    finally:
        for path in [root, *root.rglob("*")]:
            os.chmod(path, path.stat().st_mode | stat.S_IWUSR)
