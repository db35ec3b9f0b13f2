"""Search results that show the text around the match, also in a site opened from disk.

Part of :mod:`bookbuild.site` (which calls :func:`connect`).

Sphinx's search page can put a summary under each result
(``html_show_search_summary``), but it makes one by fetching the page found,
which a browser refuses for a site opened from disk (``file://``: a console
error and no summary), so the book had switched it off and its results showed
titles only. Here each page's searchable text is written when the page is
written, as a small script ``_static/book-search/<page>.js`` (:func:`page_text`:
the text Sphinx's indexer reads, from the same doctree, with the offset at
which each section starts). The search page alone loads ``book-search.js``
(``assets/``), which loads those scripts for the pages in its results (a
script tag works from disk too) and puts under each result, as Sphinx's own
summary would, the text around the first word of the query it finds in the
page, or in the section the result names, with the query's words marked.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx

FOLDER = "book-search"  # under the output's _static/
SCRIPT = "book-search.js"
#: what Sphinx's indexer skips too: comments, raw markup (the provenance and claim data), error messages
_SKIP = (nodes.comment, nodes.raw, nodes.system_message, nodes.substitution_definition)
_SPACE = re.compile(r"\s+")


def page_text(doctree: nodes.document) -> tuple[str, dict[str, int]]:
    """The page's searchable text, whitespace collapsed, and {id: where the element of that id starts in it}.

    The ids are those a search result can name after ``#``: sections, glossary terms and other targets.
    """
    parts: list[str] = []
    length = 0
    sections: dict[str, int] = {}

    def add(chunk: str) -> None:
        nonlocal length
        chunk = _SPACE.sub(" ", chunk)
        if parts and parts[-1].endswith(" ") and chunk.startswith(" "):
            chunk = chunk[1:]
        if not parts and chunk.startswith(" "):
            chunk = chunk[1:]
        if chunk:
            parts.append(chunk)
            length += len(chunk)

    def walk(node: nodes.Node) -> None:
        if isinstance(node, _SKIP) or (isinstance(node, nodes.Element) and "no-search" in node["classes"]):
            return
        if isinstance(node, nodes.Text):
            add(node.astext())
            return
        if isinstance(node, nodes.Element):  # sections, and glossary terms, equations, figures...
            for target_id in node["ids"]:
                sections.setdefault(target_id, length)
        block = isinstance(node, nodes.Element) and not isinstance(node, nodes.Inline)
        if block:
            add(" ")
        for child in node.children:
            walk(child)
        if block:
            add(" ")

    walk(doctree)
    return "".join(parts).rstrip(), sections


def text_script(pagename: str, doctree: nodes.document) -> str:
    """The script that hands the page's text to the search page: ``bookSearchText(page, {text, sections})``."""
    text, sections = page_text(doctree)
    data = json.dumps({"text": text, "sections": sections}, ensure_ascii=False, separators=(",", ":"))
    return f"window.bookSearchText && window.bookSearchText({json.dumps(pagename)}, {data});\n"


def _on_page(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    if app.builder.format != "html":
        return
    if pagename == "search":
        app.add_js_file(SCRIPT, loading_method="defer")
    elif doctree is not None:
        target = Path(app.outdir) / "_static" / FOLDER / f"{pagename}.js"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text_script(pagename, doctree), encoding="utf-8")


def connect(app: Sphinx) -> None:
    """Register the per-page texts and the search page's script (called from :func:`bookbuild.site.setup`)."""
    app.connect("html-page-context", _on_page)
