"""The PDF edition (``make pdf``): chapters, figures, numbered listings, no solutions, no terminal noise.

``make test`` builds the PDF after the HTML when TeX Live is present (it
installs it with apt where it can) and points ``$BOOK_PDF`` at it; without it
these tests are skipped with the reason. ``bookbuild.pdf``'s tree surgery is
also tested directly on a small document, without TeX.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from docutils import nodes
from sphinx import addnodes

from bookbuild.pdf import SOLUTIONS_NOTE, chapters_as_chapters

ROOT = Path(__file__).resolve().parents[2]


def chapters() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [c["file"] for part in toc["parts"] for c in part["chapters"]]


def title_of(page: str) -> str:
    text = (ROOT / f"{page}.md").read_text(encoding="utf-8")
    return next(line[2:].strip() for line in text.splitlines() if line.startswith("# "))


@pytest.fixture(scope="module")
def pdf() -> Path:
    given = os.environ.get("BOOK_PDF")
    if not given:
        pytest.skip("BOOK_PDF is not set: `make test` sets it after building the PDF (`make pdf`, needs TeX Live)")
    path = Path(given)
    if not path.is_file():
        pytest.fail(f"BOOK_PDF={given} is not a file; build it with `make pdf`")
    if shutil.which("pdftotext") is None:
        pytest.fail("pdftotext (poppler-utils) is needed to read the PDF; `make tex` installs it")
    return path


@pytest.fixture(scope="module")
def text(pdf: Path) -> str:
    return subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout


def test_page_count_is_a_book(pdf: Path) -> None:
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    pages = int(re.search(r"^Pages:\s+(\d+)", info, re.MULTILINE).group(1))
    assert 40 <= pages <= 600, pages


def test_every_chapter_is_a_chapter_with_its_text(text: str) -> None:
    # the reference pages, from the glossary on (bookbuild.pdf.FIRST_APPENDIX), in the table of contents' order
    listed = chapters()
    appendices = listed[listed.index("book/glossary"):]
    numbered = listed[:listed.index("book/glossary")]
    for n, page in enumerate(numbered, start=1):
        title = title_of(page)
        # a line of the contents, which may open a page of it (pdftotext's form feed)
        assert re.search(rf"^\f?{n}\s+{re.escape(title)}", text, re.MULTILINE), f"chapter {n} {title!r} not in the TOC"
        flat = " ".join(text.split()).lower()
        assert flat.count(" ".join(title.split()).lower()) >= 2, f"chapter {n} has no heading of its own"
    for letter, page in zip("ABCDEFGH", appendices, strict=False):
        assert re.search(rf"^\f?{letter}\s+{re.escape(title_of(page))}", text, re.MULTILINE), page


def test_every_figure_is_embedded(pdf: Path) -> None:
    listed = subprocess.run(["pdfimages", "-list", str(pdf)], capture_output=True, text=True, check=True).stdout
    embedded = len(listed.splitlines()) - 2  # two header lines
    figures = 0
    for page in chapters():
        baseline = ROOT / "baselines" / "cpu-avx2" / f"{Path(page).name}.json"
        if baseline.is_file():
            records = json.loads(baseline.read_text())
            figures += sum(out.get("kind") == "image" for outs in records.values() for out in outs)
    assert figures > 10
    assert embedded >= figures, (embedded, figures)


def test_solutions_are_omitted_and_the_reader_is_told(text: str) -> None:
    flat = " ".join(text.split())
    assert " ".join(SOLUTIONS_NOTE.split()) in flat
    assert "Solution to Exercise" not in flat


def test_no_terminal_or_kernel_noise(text: str) -> None:
    assert "\x1b[" not in text
    for noise in ("[0m", "Traceback (most recent call last)", "DeprecationWarning", "UserWarning"):
        assert noise not in text, noise


def test_listings_are_numbered_and_cells_are_not() -> None:
    tex_file = ROOT / "_build" / "latex" / "book.tex"
    if not tex_file.is_file() or not os.environ.get("BOOK_PDF"):
        pytest.skip("no LaTeX output (build the PDF with `make pdf`)")
    tex = tex_file.read_text(encoding="utf-8")
    numbered = tex.count("numbers=left")
    verbatim = tex.count(r"\begin{sphinxVerbatim}")
    assert numbered > 10
    assert numbered < verbatim  # code cells and outputs are not numbered


def test_chapters_are_lifted_out_of_the_root_page_and_reference_pages_become_appendices() -> None:
    doc = nodes.document(None, None)
    root = nodes.section("", nodes.title("", "Book"), nodes.paragraph("", "Preface text."))
    notation = nodes.section("", nodes.title("", "Notation"), nodes.paragraph("", "Symbols."))
    last = nodes.section("", nodes.title("", "This build"))
    for name in ["book/recurrence", "book/glossary"]:
        included = addnodes.start_of_file(docname=name)
        included += nodes.section("", nodes.title("", name))
        last += included
    root += [notation, last]
    doc += root
    chapters_as_chapters(doc)
    kinds = [type(c).__name__ for c in root.children]
    assert kinds == ["title", "paragraph", "rubric", "paragraph", "rubric", "start_of_file", "raw", "start_of_file"]
    assert root.children[-2].astext() == "\\appendix\n"
    assert [c["docname"] for c in root.children if isinstance(c, addnodes.start_of_file)] == [
        "book/recurrence", "book/glossary"]


def test_the_bibliography_shows_labels_and_no_tex_or_n_d(text: str) -> None:
    """The list of references at the end: author-year labels and the source documents' shorthands, no "n.d."
    and no TeX left as text (the entries of book/references.bib are checked one by one in test_citations.py)."""
    references = text[text.rindex("Bahdanau et al., 2015"):]
    for label in ("Elman, 1990", "Hochreiter and Schmidhuber, 1997", "RNN textbook chapter",
                  "Sequence-models workshop", "Gated-RNN textbook section"):
        assert label in references, label
    assert "n.d." not in references
    assert not re.search(r"\\[A-Za-z]+|\$", references), re.search(r".{40}(\\[A-Za-z]+|\$).{40}", references)
