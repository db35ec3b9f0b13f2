"""What a reader can download from the site: the book's PDF, and each chapter as an
executed notebook.

Part of :mod:`bookbuild.site` (which calls :func:`connect`).

- **The chapters as notebooks.** sphinx-book-theme's download menu offers a
  page's ``.ipynb`` only when launch buttons (Binder, Colab) are configured,
  and the book runs nothing in the reader's browser. :func:`chapter_notebook`
  writes each executed chapter (the page's cells merged with the outputs myst-nb
  rendered, from the execution cache: ``_build/jupyter_execute`` holds the cells
  without them) into the site's ``_sources/`` and puts it in the menu beside the
  ``.md`` source.

- **Where the PDF lives.** ``make pdf`` writes ``_build/latex/book.pdf``; then
  :func:`publish` (called by :func:`bookbuild.build.build` after a PDF build)
  copies it into the site as :data:`PDF_NAME`, beside ``index.html``.
- **The links.** Every page's header gets a **PDF** link button (class
  :data:`LINK_CLASS`), and a page's text can link the PDF with the role
  ``{book-pdf}`text``` (plain text in the PDF itself). Where a link points is
  decided over the finished site by :func:`point_links`: at the PDF when the
  site holds one, else at the PDF section of the page on how the book is built
  (:data:`FALLBACK_DOC`, :data:`FALLBACK_LABEL`), which says how to make it. So
  a site built without TeX has no dead link, and a PDF built after the HTML
  (as ``make test`` does) is linked from pages that were written before it.
  The pass runs after every HTML build and after every PDF build, and is
  idempotent.
- **The theme's ".pdf" item.** sphinx-book-theme's download menu has an item
  labelled ".pdf" that prints the page in view (``window.print()``); it is
  relabelled "Print page", so it is not taken for the book's PDF.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx

from bookbuild.site import a11y

PDF_NAME = "book.pdf"
FALLBACK_DOC = "book/building"
FALLBACK_LABEL = "sec-building-pdf"
LINK_CLASS = "book-pdf-link"
#: the header button (sphinx-book-theme's link button: its label becomes the class
#: ``btn-<label>``)
BUTTON = {
    "type": "link",
    "text": "PDF",
    "tooltip": "The whole book as a PDF",
    "icon": "fas fa-file-pdf",
    "label": "book-pdf",
    "classes": LINK_CLASS,
}
PRINT_LABEL = "Print page"
_LINK_TAG = re.compile(r"<a\b[^>]*>")
_CLASS = re.compile(r'\bclass="([^"]*)"')
_HREF = re.compile(r'\bhref="[^"]*"')
_TARGET = re.compile(r'\s+target="_blank"')


def link_target(outdir: Path, page: Path) -> str | None:
    """Where a PDF link on ``page`` (an HTML file under ``outdir``) points: the PDF,
    else the fallback section."""
    pdf = outdir / PDF_NAME
    fallback = outdir / f"{FALLBACK_DOC}.html"
    if pdf.is_file():
        return Path(os.path.relpath(pdf, page.parent)).as_posix()
    if fallback.is_file():
        return (
            Path(os.path.relpath(fallback, page.parent)).as_posix()
            + f"#{FALLBACK_LABEL}"
        )
    return None


def point_page(text: str, target: str) -> str:
    """``text`` with the ``href`` of every ``<a>`` of class :data:`LINK_CLASS` set to
    ``target`` (same tab)."""

    def fix(match: re.Match[str]) -> str:
        tag = match.group(0)
        classes = _CLASS.search(tag)
        if classes is None or LINK_CLASS not in classes.group(1).split():
            return tag
        # in the same tab, like every other link (the theme's link buttons open a new
        # one)
        return _TARGET.sub("", _HREF.sub(f'href="{target}"', tag, count=1))

    return _LINK_TAG.sub(fix, text)


def point_links(outdir: Path) -> int:
    """Point every PDF link of the site at the PDF, or at the fallback section; return
    the pages changed."""
    changed = 0
    for _, path in a11y.html_pages(outdir):
        target = link_target(outdir, path)
        if target is None:
            continue
        before = path.read_text(encoding="utf-8")
        after = point_page(before, target)
        if after != before:
            path.write_text(after, encoding="utf-8")
            changed += 1
    return changed


def publish(pdf: Path, outdir: Path) -> Path | None:
    """Copy ``pdf`` into the site at ``outdir`` and point its links at it; the copy, or
    None without a site."""
    if not pdf.is_file() or not (outdir / "index.html").is_file():
        return None
    target = outdir / PDF_NAME
    shutil.copy2(pdf, target)
    point_links(outdir)
    return target


# -------------------------------------------------------------- while pages are written


def chapter_notebook(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any
) -> None:
    """Write the executed notebook of ``pagename``, if it has one, where the theme's
    ``.ipynb`` item links."""
    import nbformat

    from bookbuild.site.provenance import executed_notebook

    if "kernelspec" not in app.env.metadata.get(pagename, {}) or context.get(
        "ipynb_source"
    ):
        return
    notebook = executed_notebook(app, pagename)
    if notebook is None:  # no outputs cached for the page as it stands
        return
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(nbformat.writes(notebook), encoding="utf-8")
    context["ipynb_source"] = f"{pagename}.ipynb"


def header_buttons(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any
) -> None:
    """Add the PDF button in front of the theme's buttons; relabel the theme's print
    item."""
    buttons = context.get("header_buttons")
    if buttons is None:
        return
    for group in buttons:
        for button in group.get("buttons", []):
            if button.get("label") == "download-pdf-button":
                button.update(
                    text=PRINT_LABEL, tooltip="Print this page", icon="fas fa-print"
                )
    reachable = (
        Path(app.outdir, PDF_NAME).is_file() or FALLBACK_DOC in app.env.found_docs
    )
    if reachable and not any(b.get("label") == BUTTON["label"] for b in buttons):
        # the href is set over the finished site (point_links); until then it names the
        # fallback
        url = context["pathto"](FALLBACK_DOC) + f"#{FALLBACK_LABEL}"
        buttons.insert(0, {**BUTTON, "url": url})


class book_pdf_link(nodes.Inline, nodes.TextElement):  # noqa: N801 (docutils names nodes in lower case)
    """A link to the book's PDF (``{book-pdf}`text```)."""


def book_pdf_role(
    name: str,
    rawtext: str,
    text: str,
    lineno: int,
    inliner: Any,
    options: dict | None = None,
    content: Any = None,
) -> tuple[list[nodes.Node], list[nodes.system_message]]:
    return [book_pdf_link(rawtext, text)], []


def _visit_html(self: Any, node: book_pdf_link) -> None:
    builder = self.builder
    href = (
        builder.get_relative_uri(builder.current_docname, FALLBACK_DOC)
        + f"#{FALLBACK_LABEL}"
    )
    self.body.append(f'<a class="reference external {LINK_CLASS}" href="{href}">')


def _depart_html(self: Any, node: book_pdf_link) -> None:
    self.body.append("</a>")


def _pass(self: Any, node: book_pdf_link) -> None:
    """Elsewhere (the PDF itself): the text alone."""


def _on_build_finished(app: Sphinx, exc: Exception | None) -> None:
    if exc is None and app.builder.format == "html":
        point_links(Path(app.outdir))


def connect(app: Sphinx) -> None:
    """Register the button, the role and the pass over the site (called from
    :func:`bookbuild.site.setup`)."""
    app.add_node(
        book_pdf_link,
        html=(_visit_html, _depart_html),
        latex=(_pass, _pass),
        text=(_pass, _pass),
    )
    app.add_role("book-pdf", book_pdf_role)
    # before the theme reads ipynb_source (501)
    app.connect("html-page-context", chapter_notebook, priority=500)
    # after the theme's buttons (501)
    app.connect("html-page-context", header_buttons, priority=510)
    # after a11y's repairs (900)
    app.connect("build-finished", _on_build_finished, priority=950)
