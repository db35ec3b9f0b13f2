"""Accessibility, validity and speed of the built pages: repairs of the themes' and
extensions' markup.

Part of :mod:`bookbuild.site` (which calls :func:`connect`). The browser tests
(``tests/browser/test_audit.py``) hold the result to axe-core and the Nu HTML
validator. Two kinds of repair:

* while pages are written (``html-page-context``): a ``<meta name="description">``
  from the page's first paragraph, and a favicon (none meant a 404 per page);
* after the build (``build-finished``), :func:`repair_page` rewrites each HTML
  file through :data:`REPAIRS`, small textual fixes of markup that the
  themes, myst-nb and docutils write and that Sphinx offers no setting for.
  Each fix is idempotent (a page left untouched by an incremental build is
  passed again unchanged) and names what it repairs.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx

FAVICON = Path(__file__).with_name("assets") / "favicon.svg"
DESCRIPTION_CHARS = 160
# boxes, cells, tables, references
NOT_PROSE = (nodes.Admonition, nodes.container, nodes.table, nodes.citation)


# -------------------------------------------------------------- while pages are written


def page_description(doctree: nodes.document | None, fallback: str) -> str:
    """The page's first paragraph of prose as plain text, cut at a word near 160
    characters."""
    text = ""
    if doctree is not None:
        for para in doctree.findall(nodes.paragraph):
            if any(isinstance(a, NOT_PROSE) for a in _ancestors(para)):
                continue
            text = " ".join(para.astext().split())
            if len(text) >= 40:
                break
    text = text or fallback
    if len(text) > DESCRIPTION_CHARS:
        text = text[: DESCRIPTION_CHARS - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return text


def _ancestors(node: nodes.Node):  # type: ignore[no-untyped-def]
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def add_description(
    app: Sphinx,
    pagename: str,
    templatename: str,
    context: dict,
    doctree: nodes.document | None,
) -> None:
    metatags = context.get("metatags", "")
    if 'name="description"' in metatags:
        return  # the page sets its own (MyST front matter html_meta)
    fallback = {"search": "Search", "genindex": "Index"}.get(pagename, "")
    fallback = (
        f"{fallback}: {app.config.project}" if fallback else str(app.config.project)
    )
    description = html.escape(page_description(doctree, fallback), quote=True)
    context["metatags"] = (
        metatags + f'\n<meta name="description" content="{description}" />'
    )


def _on_config_inited(app: Sphinx, config: object) -> None:
    if not getattr(config, "html_favicon", None):
        config.html_favicon = str(FAVICON)  # type: ignore[attr-defined]


# ---------------------------------------------------------------------- after the build

# (page's path under the output, its HTML) -> repaired HTML
Repair = Callable[[str, str], str]


def hidden_cell_summaries(name: str, text: str) -> str:
    """myst-nb's folded code cells: ``<p>`` inside ``<summary>`` (invalid HTML) becomes
    ``<span>``; and the summary's ``aria-label="Toggle hidden content"`` hid its visible
    text ("Show code cell source") from its accessible name (WCAG 2.5.3). book-site.css
    gives the spans the rules myst-nb wrote for the paragraphs."""

    def fix(match: re.Match[str]) -> str:
        inner = re.sub(
            r"<p( class=\"[^\"]*\")>(.*?)</p>",
            r"<span\1>\2</span>",
            match.group(2),
            flags=re.S,
        )
        return f"<summary{match.group(1)}>{inner}</summary>"

    text = text.replace('<summary aria-label="Toggle hidden content">', "<summary>")
    return re.sub(r"<summary([^>]*)>(.*?)</summary>", fix, text, flags=re.S)


def search_button_names(name: str, text: str) -> str:
    """The theme's search field is labelled "Search" but shows "Search Ctrl+K": its
    visible text is its name."""
    return re.sub(
        r'(<button class="btn search-button-field[^"]*"[^>]*?) aria-label="Search"',
        r"\1",
        text,
    )


def colour_mode_icons(name: str, text: str) -> str:
    """The colour-mode button's icons carry titles (Light, Dark, System Settings) that
    Font Awesome turns into text, so the button named "Color mode" showed other words.
    The titles go; the button keeps its label."""
    return re.sub(
        r'(<i class="theme-switch [^"]*" data-mode="[a-z]+")\s+title="[^"]*"',
        r"\1",
        text,
    )


def bibliography_roles(name: str, text: str) -> str:
    """docutils writes ``role="doc-biblioentry"`` (deprecated in DPUB-ARIA) inside
    ``role="list"``, so the list had no items to assistive technology. The entries
    become list items."""
    return text.replace('role="doc-biblioentry"', 'role="listitem"')


def search_scripts_deferred(name: str, text: str) -> str:
    """pydata-sphinx-theme loads the search index and tools in every page's head,
    blocking the first paint; only the search page uses them at once. Deferred, they run
    in order after the page is parsed."""
    for script in (
        "_static/searchtools.js",
        "_static/language_data.js",
        "searchindex.js",
    ):
        tag = rf'<script src="((?:\.\./)*{re.escape(script)})"></script>'
        text = re.sub(tag, r'<script defer src="\1"></script>', text)
    return text


def no_fontawesome_script(name: str, text: str) -> str:
    """The theme loads Font Awesome twice: as web fonts from its stylesheet and as a 1.5
    MB script that swaps every icon for an SVG. The web fonts draw the same icons; the
    script goes."""
    tag = (
        r"\s*<script defer "
        r'src="(?:\.\./)*_static/scripts/fontawesome\.js\?digest=[0-9a-f]+"></script>'
    )
    return re.sub(tag, "", text)


def redirect_page(name: str, text: str) -> str:
    """Jupyter Book's root ``index.html`` is a bare meta refresh: no doctype, language
    or title."""
    match = re.fullmatch(
        r'\s*<meta http-equiv="Refresh" content="0; url=([^"]+)" />\s*', text
    )
    if name != "index.html" or match is None:
        return text
    target = html.escape(match.group(1), quote=True)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8" />\n'
        f'<title>{TITLE_PLACEHOLDER}</title>\n<meta name="viewport" '
        'content="width=device-width, initial-scale=1" />\n'
        f'<meta name="description" content="{TITLE_PLACEHOLDER}" />\n'
        f'<meta http-equiv="Refresh" content="0; url={target}" />\n</head>\n'
        f'<body><p><a href="{target}">{TITLE_PLACEHOLDER}</a></p></body>\n</html>\n'
    )


def empty_header_cells(name: str, text: str) -> str:
    """Printed tables (Markdown from cells) with empty header cells: an empty ``<th>``
    names nothing to a screen reader. A header row with no text at all (a name/value
    table) goes; an empty corner over a column of row names becomes an ordinary empty
    cell."""
    empty = r'<th class="head"><p></p></th>'
    text = re.sub(
        rf"<thead>\s*<tr[^>]*>(?:\s*{empty})+\s*</tr>\s*</thead>\s*", "", text
    )
    return text.replace(empty, '<td class="head"></td>')


def tab_label_controls(name: str, text: str) -> str:
    """sphinx-design's tab labels (the PyTorch/JAX tabs) carry ``aria-controls`` on a
    ``<label for=...>``, which HTML forbids on a label tied to a form control: the radio
    input it labels is what a screen reader announces. The attribute goes; the label and
    its ``for`` stay."""
    return re.sub(
        r'(<label) aria-controls="[^"]*"( class="sd-tab-label")', r"\1\2", text
    )


TITLE_PLACEHOLDER = "\x00title\x00"

REPAIRS: list[Repair] = [
    hidden_cell_summaries,
    search_button_names,
    colour_mode_icons,
    bibliography_roles,
    search_scripts_deferred,
    no_fontawesome_script,
    redirect_page,
    empty_header_cells,
    tab_label_controls,
]


def repair_page(name: str, text: str, title: str = "") -> str:
    """``text`` (the page at ``name``, relative to the output folder) with every repair
    applied."""
    for repair in REPAIRS:
        text = repair(name, text)
    return text.replace(TITLE_PLACEHOLDER, html.escape(title))


def html_pages(outdir: Path) -> Iterator[tuple[str, Path]]:
    """Every HTML page under ``outdir`` (not ``_static`` and the like) as (its path
    under ``outdir``, path)."""
    for path in sorted(outdir.rglob("*.html")):
        name = path.relative_to(outdir).as_posix()
        if not name.startswith("_"):
            yield name, path


def rewrite_pages(outdir: Path, rewrite: Callable[[str, str], str]) -> int:
    """Apply ``rewrite(name, text)`` to every HTML page under ``outdir`` (not
    ``_static`` and the like); write only the pages it changes and return how many."""
    changed = 0
    for name, path in html_pages(outdir):
        before = path.read_text(encoding="utf-8")
        after = rewrite(name, before)
        if after != before:
            path.write_text(after, encoding="utf-8")
            changed += 1
    return changed


def repair_site(outdir: Path, title: str) -> int:
    """Apply :func:`repair_page` to every HTML page under ``outdir``; return how many
    files changed."""
    return rewrite_pages(outdir, lambda name, text: repair_page(name, text, title))


def _on_build_finished(app: Sphinx, exc: Exception | None) -> None:
    if exc is None and app.builder.format == "html":
        repair_site(Path(app.outdir), str(app.config.html_title or app.config.project))


def connect(app: Sphinx) -> None:
    """Register the repairs (called from :func:`bookbuild.site.setup`)."""
    app.connect("config-inited", _on_config_inited)
    app.connect("html-page-context", add_description)
    # after everything else has written
    app.connect("build-finished", _on_build_finished, priority=900)
