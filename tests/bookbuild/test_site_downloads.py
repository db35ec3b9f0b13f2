"""Tests for bookbuild.site.downloads: where the PDF links point, and the copy of the
PDF into the site."""

from __future__ import annotations

from pathlib import Path

from bookbuild.site.downloads import (
    FALLBACK_DOC,
    FALLBACK_LABEL,
    LINK_CLASS,
    PDF_NAME,
    link_target,
    point_links,
    point_page,
    publish,
)

HEADER = (
    '<a href="building.html#sec-building-pdf" target="_blank"\n   class="btn '
    "btn-sm btn-book-pdf "
    f'{LINK_CLASS}"\n   title="The whole book as a PDF">PDF</a>'
)
OTHER = '<a class="reference internal" href="gated.html">Gated</a>'


def site(tmp_path: Path, with_pdf: bool) -> Path:
    out = tmp_path / "html"
    (out / "book").mkdir(parents=True)
    (out / "index.html").write_text("<meta http-equiv='Refresh'>")
    (out / f"{FALLBACK_DOC}.html").write_text("<p>how</p>")
    (out / "book" / "gated.html").write_text(f"<div>{HEADER}{OTHER}</div>")
    (out / "search.html").write_text(f"<div>{HEADER}</div>")
    if with_pdf:
        (out / PDF_NAME).write_bytes(b"%PDF-1.5\n")
    return out


def test_links_point_at_the_building_page_without_a_pdf_and_at_the_pdf_with_one(
    tmp_path: Path,
) -> None:
    out = site(tmp_path, with_pdf=False)
    assert (
        link_target(out, out / "book" / "gated.html")
        == f"building.html#{FALLBACK_LABEL}"
    )
    assert (
        link_target(out, out / "search.html") == f"book/building.html#{FALLBACK_LABEL}"
    )
    (out / PDF_NAME).write_bytes(b"%PDF-1.5\n")
    assert link_target(out, out / "book" / "gated.html") == "../book.pdf"
    assert link_target(out, out / "search.html") == "book.pdf"


def test_only_pdf_links_change_and_open_in_the_same_tab() -> None:
    text = f"<div>{HEADER}{OTHER}</div>"
    pointed = point_page(text, "../book.pdf")
    assert 'href="../book.pdf"' in pointed
    assert 'target="_blank"' not in pointed
    assert OTHER in pointed  # a link of another class is left alone
    assert point_page(pointed, "../book.pdf") == pointed  # idempotent


def test_publish_copies_the_pdf_and_points_pages_written_before_it(
    tmp_path: Path,
) -> None:
    out = site(tmp_path, with_pdf=False)
    assert point_links(out) == 2  # the fallback, without the theme's new tab
    assert (
        f'href="building.html#{FALLBACK_LABEL}"'
        in (out / "book" / "gated.html").read_text()
    )
    pdf = tmp_path / "latex" / "book.pdf"
    pdf.parent.mkdir()
    pdf.write_bytes(b"%PDF-1.5\nthe book\n")
    assert publish(pdf, out) == out / PDF_NAME
    assert (out / PDF_NAME).read_bytes() == pdf.read_bytes()
    assert 'href="../book.pdf"' in (out / "book" / "gated.html").read_text()
    assert 'href="book.pdf"' in (out / "search.html").read_text()
    assert point_links(out) == 0


def test_publish_without_a_site_or_a_pdf_does_nothing(tmp_path: Path) -> None:
    assert publish(tmp_path / "missing.pdf", tmp_path) is None
    pdf = tmp_path / "book.pdf"
    pdf.write_bytes(b"%PDF")
    assert publish(pdf, tmp_path / "no-site") is None
