"""Previews of what a link points to: a citation's entry, a glossary term's definition,
a section, figure, table, equation, exercise or listing, shown on hover, focus or a
first tap, with no network.

Part of :mod:`bookbuild.site` (which calls :func:`connect`). Two steps:

1. **Collect** (``html-page-context``, each page as Sphinx writes it): every element a
   link can point to on the page becomes a short preview (:func:`collect`), written to
   ``<doctrees>/previews/<page>.json``. One file per page, so parallel writers never
   share one, and a later build that rewrites only some pages still finds the previews
   of the others.
2. **Attach** (``build-finished``, after the accessibility pass and before the speed
   pass, :mod:`bookbuild.site.speed`, which sizes the figures and listings of the
   previews as it does the page's, and before the math is typeset,
   :mod:`bookbuild.site.mathrender`): each page Sphinx wrote in this build gets, before
   ``</body>``, one ``<template id="book-previews">`` holding the previews of the
   targets its article links to, keyed by the link's ``href`` as written
   (:func:`attach`). Their formulas are then typeset with the page's own, so they use
   its glyph cache; a template's content is inert, so it adds no ids, no tab stops and
   nothing for a screen reader until ``book-site.js`` shows one.

A page that already holds its template (not rewritten by this build) is left as it is,
as Sphinx leaves the text of its links. Why not sphinx-tippy: its tips carry raw TeX
(the site typesets math at build time, so a page loads no MathJax), its data lives in
the environment and is lost to parallel writes and to pages an incremental build does
not rewrite, it assigns ``window.onload``, and pinning it in ``requirements/lock.txt``
would re-key every memoized run.
"""

from __future__ import annotations

import copy
import html
import json
import posixpath
import re
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

TEMPLATE_ID = "book-previews"
FOLDER = "previews"
#: paragraphs a section's, a term's or an exercise's preview keeps after its heading
PARAGRAPHS = 1
#: lines of a listing a preview keeps
LISTING_LINES = 8
#: attributes a preview drops: ids (the template must add none to the page), focus and
#: description wiring
DROPPED_ATTRIBUTES = (
    "id",
    "tabindex",
    "aria-describedby",
    "aria-labelledby",
    "title",
    "data-glue",
)
#: elements a preview drops: heading anchors, claims' own previews, figure-data links
DROPPED = "a.headerlink, span.claim-tip, p.figure-data, script, style, button"
_LINK = re.compile(r'<a class="reference internal"\s+href="([^"]+)"')
_ARTICLE = re.compile(r'<article class="bd-article">(.*?)</article>', re.S)
_HEADING = re.compile("^h[1-6]$")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:")


def _clean(tag: Any, page: str, target_page: str) -> Any:
    """``tag`` (a copy) without ids and focus stops, its links and images pointing from
    ``page`` (the page that will show the preview) to where they point from
    ``target_page``."""
    for dropped in tag.select(DROPPED):
        dropped.decompose()
    here, there = posixpath.dirname(page), posixpath.dirname(target_page)
    for el in [tag, *tag.find_all(True)]:
        for name in DROPPED_ATTRIBUTES:
            el.attrs.pop(name, None)
        for name in ("href", "src"):
            value = el.get(name)
            if not value or _SCHEME.match(value):
                continue
            if value.startswith("#"):
                value = posixpath.basename(target_page) + value
            el[name] = posixpath.relpath(
                posixpath.normpath(posixpath.join(there, value)), here or "."
            )
        if el.name == "a":
            # a preview is read, not tabbed through; the link it previews is the tab
            # stop
            el["tabindex"] = "-1"
        if el.name == "img":
            # the page's display size; the preview's stylesheet sizes it
            el.attrs.pop("style", None)
            el["loading"] = "lazy"
    return tag


def _first_paragraphs(start: Any, limit: int = PARAGRAPHS) -> list[Any]:
    """The first ``limit`` paragraphs after ``start`` among its siblings, before the
    next section."""
    out = []
    for sibling in start.find_next_siblings(True):
        if sibling.name == "section" or len(out) >= limit:
            break
        if sibling.name == "p":
            out.append(sibling)
        elif sibling.name == "div" and "math" in (sibling.get("class") or []):
            out.append(sibling)
    return out


def _preview_of(el: Any, soup: Any) -> tuple[str, list[Any]] | None:
    """(kind, the elements to show) for a link target, or None for a target with no
    preview."""
    classes = el.get("class") or []
    if el.name == "div" and "citation" in classes:
        label = el.select_one("span.label")
        body = el.find_all("p", recursive=False)
        head = soup.new_tag("p", attrs={"class": "link-tip-head"})
        head.string = _text(label).strip("[]") if label else ""
        return "citation", [head, *body]
    if el.name == "dt":  # with the other names it is listed under (dt, dt, dd)
        first = el
        while (
            before := first.find_previous_sibling(True)
        ) is not None and before.name == "dt":
            first = before
        terms, sibling = [first], first.find_next_sibling(True)
        while sibling is not None and sibling.name == "dt":
            terms.append(sibling)
            sibling = sibling.find_next_sibling(True)
        head = soup.new_tag("p", attrs={"class": "link-tip-head"})
        head.string = ", ".join(_text(term) for term in terms)
        is_dd = sibling is not None and sibling.name == "dd"
        body = sibling.find_all("p", recursive=False)[:PARAGRAPHS] if is_dd else []
        return "term", [head, *body]
    if el.name == "section":
        heading = el.find(_HEADING)
        if heading is None:
            return None
        head = soup.new_tag("p", attrs={"class": "link-tip-head"})
        head.extend(list(_copy(heading).contents))
        return "section", [head, *_first_paragraphs(heading)]
    if el.name == "figure":
        captions = [_copy(c) for c in el.select("figcaption")[:1]]
        # a figcaption belongs in a figure; the preview's caption is a plain block
        for caption in captions:
            caption.name = "div"
            caption["class"] = "link-tip-caption"
        return "figure", [*el.select("img")[:1], *captions]
    if el.name == "table":
        caption = el.find("caption")
        if caption is None:
            return None
        head = soup.new_tag("p", attrs={"class": "link-tip-head"})
        head.extend(list(_copy(caption).contents))
        return "table", [head]
    if el.name == "div" and "math" in classes:
        return "equation", [el]
    # an exercise (sphinx-exercise) or a solution
    if el.name == "div" and "admonition" in classes:
        title = el.find("p", class_="admonition-title")
        content = el.find("section")
        body = (
            content.find_all("p", recursive=False)[:PARAGRAPHS]
            if content is not None
            else []
        )
        return ("exercise", [title, *body]) if title is not None else None
    if el.name == "div" and el.get("id", "").startswith("listing-"):
        pre = el.find("pre")
        if pre is None:
            return None
        lines = pre.get_text().splitlines()
        short = soup.new_tag("pre")
        short.string = "\n".join(lines[:LISTING_LINES]) + (
            "\n…" if len(lines) > LISTING_LINES else ""
        )
        return "listing", [short]
    return None


def _text(tag: Any) -> str:
    """The text of ``tag`` without its heading anchor ("#")."""
    tag = _copy(tag)
    for anchor in tag.select("a.headerlink"):
        anchor.decompose()
    return tag.get_text().strip()


def _copy(tag: Any) -> Any:
    return copy.copy(tag)  # bs4 copies a tag deeply, detached from its tree


def collect(body: str, page: str) -> dict[str, dict[str, str]]:
    """The previews of the link targets in a page's ``body`` HTML: ``{"kinds": {id:
    kind}, "html": {id: preview}}``, with every id of a target (an empty ``<span id>``
    names its parent) and ``""`` for the page itself (its title and first paragraph).
    ``page`` is the page's path under the output folder."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(body, "html.parser")
    kinds: dict[str, str] = {}
    previews: dict[str, str] = {}
    for el in soup.find_all(id=True):
        target = el
        if el.name == "span" and not el.get_text(strip=True) and el.parent is not None:
            target = el.parent
        found = _preview_of(target, soup)
        if found is None:
            continue
        kind, parts = found
        inner = "".join(
            str(_clean(_copy(part), page, page)) for part in parts if part is not None
        )
        if not inner:
            continue
        kinds[el["id"]] = kind
        previews[el["id"]] = inner
    first = soup.find("section")
    if first is not None and first.get("id") in previews:
        kinds[""], previews[""] = "page", previews[first["id"]]
    return {"kinds": kinds, "html": previews}


def _on_page_context(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any
) -> None:
    if app.builder.format != "html" or doctree is None or "body" not in context:
        return
    page = pagename + ".html"
    path = Path(app.doctreedir) / FOLDER / (pagename + ".json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(collect(context["body"], page), sort_keys=True), encoding="utf-8"
    )


def load(doctreedir: Path) -> dict[str, dict[str, dict[str, str]]]:
    """Every page's collected previews, by page path under the output folder
    (``book/gated.html``)."""
    folder = doctreedir / FOLDER
    return {
        path.relative_to(folder).with_suffix(".html").as_posix(): json.loads(
            path.read_text(encoding="utf-8")
        )
        for path in sorted(folder.rglob("*.json"))
    }


def resolve(page: str, href: str) -> tuple[str, str]:
    """(target page, target id) of ``href`` written on ``page``: ``#x`` is on ``page``;
    ``a.html`` is the page."""
    path, _, anchor = href.partition("#")
    target = (
        posixpath.normpath(posixpath.join(posixpath.dirname(page), path))
        if path
        else page
    )
    return target, anchor


def template(
    page: str, text: str, previews: dict[str, dict[str, dict[str, str]]]
) -> str:
    """The ``<template>`` of previews for the links in ``text``'s article ("" when none
    resolves)."""
    article = _ARTICLE.search(text)
    if article is None:
        return ""
    entries = []
    for href in dict.fromkeys(
        html.unescape(h) for h in _LINK.findall(article.group(1))
    ):
        target, anchor = resolve(page, href)
        found = previews.get(target)
        if found is None or anchor not in found["html"]:
            continue
        kind, inner = found["kinds"][anchor], found["html"][anchor]
        if target != page:
            inner = _rebase(inner, target, page)
        entries.append(
            f'<div class="link-tip-body" data-href="{html.escape(href, quote=True)}" '
            f'data-kind="{kind}">{inner}</div>'
        )
    if not entries:
        return ""
    return f'<template id="{TEMPLATE_ID}">' + "".join(entries) + "</template>\n"


def _rebase(inner: str, target: str, page: str) -> str:
    """A preview written for ``target``'s folder, with its relative links made relative
    to ``page``'s."""
    if posixpath.dirname(target) == posixpath.dirname(page):
        return inner
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(inner, "html.parser")
    here, there = posixpath.dirname(page), posixpath.dirname(target)
    for el in soup.find_all(True):
        for name in ("href", "src"):
            value = el.get(name)
            if value and not _SCHEME.match(value):
                el[name] = posixpath.relpath(
                    posixpath.normpath(posixpath.join(there, value)), here or "."
                )
    return str(soup)


def attach(text: str, page: str, previews: dict[str, dict[str, dict[str, str]]]) -> str:
    """``text`` with its template of previews before ``</body>``; a page that has one is
    returned as it is."""
    if f'id="{TEMPLATE_ID}"' in text or "</body>" not in text:
        return text
    block = template(page, text, previews)
    if not block:
        return text
    head, _, tail = text.rpartition("</body>")
    return head + block + "</body>" + tail


def _on_build_finished(app: Sphinx, exc: Exception | None) -> None:
    if exc is not None or app.builder.format != "html":
        return
    from bookbuild.site.a11y import rewrite_pages

    previews = load(Path(app.doctreedir))
    rewrite_pages(Path(app.outdir), lambda name, text: attach(text, name, previews))


def connect(app: Sphinx) -> None:
    """Register the two steps (called from :func:`bookbuild.site.setup`)."""
    # after the other extensions' changes
    app.connect("html-page-context", _on_page_context, priority=900)
    # after a11y.py, before speed.py and mathrender.py
    app.connect("build-finished", _on_build_finished, priority=915)
