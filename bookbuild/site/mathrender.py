"""The book's math typeset at build time: pages ship finished SVG formulas and load no
MathJax.

Part of :mod:`bookbuild.site` (which calls :func:`connect`). Lighthouse's mobile
audit (issue 19, ``make audit``) found most of the chapters' main-thread time in
MathJax: parsing its script, then typesetting a chapter's formulas in the
browser, and a layout shift as inline TeX source was replaced by typeset math.
This post-build pass does that work once, when the book is built:

1. :func:`find_formulas` collects every formula Sphinx wrote into a page, the
   ``<span class="math">\\(…\\)</span>`` and ``<div class="math">\\[…\\]</div>``
   elements (a numbered equation keeps its ``<span class="eqno">``; MathJax is
   configured to look nowhere else, so these are all the math there is);
2. :func:`typeset` hands the formulas of the whole site to one Node process,
   ``mathjax_render.js``, which loads MathJax 3.2.2 from the pinned
   ``sphinx-mathjax-offline`` wheel (its ``node-main.js``; no npm package) and
   returns each formula as SVG with MathJax's assistive MathML beside it;
3. :func:`render_page` puts them in place, adds the page's shared glyph shapes
   (one hidden ``<svg>``) and MathJax's SVG stylesheet, and drops MathJax's
   scripts from a page once every formula on it is rendered.

Why SVG rather than MathJax's HTML output (CHTML): CHTML needs its web fonts
and stylesheet at run time (more requests, and text that reflows when a font
arrives); SVG needs nothing but a 2 KB stylesheet, draws with ``currentColor``
(so the dark theme recolours it), and keeps its size fixed from the first
paint. Screen readers read the assistive MathML (visually hidden, as MathJax
does in the browser); the SVG itself is ``aria-hidden``.

A formula MathJax rejects (a parse error, an undefined control sequence; TeX is
strict here, unlike the red text MathJax shows in a browser) fails the build
with the page and the formula named. Without Node (``$BOOK_NODE`` names another
binary; an empty value switches the pass off) the pages keep the client-side
MathJax of :mod:`bookbuild.site.speed`, and a NOTE says so once.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

SCRIPT = Path(__file__).with_name("mathjax_render.js")
#: How long the whole site may take to typeset (seconds); about 5 s on the 2-core
#: machine for ~1000 formulas.
TIMEOUT_S = 600

FORMULA = re.compile(
    r'(?P<open><span class="math(?: '
    r'[^"]*)?"[^>]*>)\\\((?P<inline>.*?)\\\)(?P<close></span>)'
    r'|(?P<dopen><div class="math(?: [^"]*)?"[^>]*>)(?P<eqno>\s*<span '
    r'class="eqno">.*?</span>)?\s*'
    r"\\\[(?P<display>.*?)\\\]\s*(?P<dclose></div>)",
    re.S,
)
MATH_ELEMENT = re.compile(
    r'<(?:span|div) class="math(?: [^"]*)?"[^>]*>(?:\s*<span '
    r'class="eqno">.*?</span>)?\s*',
    re.S,
)
#: MathJax's tags in a page: its settings, its script (as Sphinx writes it, and as
#: speed.py's marker).
MATHJAX_SCRIPTS = re.compile(
    r"\s*<script>window\.MathJax = .*?</script>"
    r'|\s*<script defer="defer" src="(?:\.\./)*_static/mathjax/[^"]*"></script>'
    r'|\s*<script data-book-mathjax="[^"]*"></script>'
)
STYLE_ID = "MJX-SVG-styles"
CACHE_ID = "MJX-SVG-global-cache"


class MathRenderError(RuntimeError):
    """MathJax rejected a formula, or the Node process failed."""


@dataclass(frozen=True)
class Formula:
    tex: str  # as MathJax reads it: the HTML entities Sphinx wrote are decoded
    display: bool


def find_formulas(text: str) -> list[Formula]:
    """The formulas of a page, in order: inline ``\\(…\\)`` spans and display
    ``\\[…\\]`` divs of class ``math``."""
    return [
        Formula(
            html.unescape(m["inline"] if m["open"] else m["display"]),
            display=not m["open"],
        )
        for m in FORMULA.finditer(text)
    ]


def unrendered_count(text: str) -> int:
    """How many ``math`` elements of a page hold no typeset formula (no
    ``<mjx-container>`` inside)."""
    return sum(
        1
        for m in MATH_ELEMENT.finditer(text)
        if not text.startswith("<mjx-container", m.end())
    )


def render_page(text: str, rendered: list[str], cache: str, css: str) -> str:
    """``text`` with its formulas (in :func:`find_formulas` order) replaced by
    ``rendered``.

    The page gets MathJax's SVG stylesheet in its head and the glyph ``cache``
    at the start of its body; MathJax's scripts go when no ``math`` element is
    left unrendered (a page without formulas loses them too).
    """
    pieces = iter(rendered)

    def put(match: re.Match[str]) -> str:
        svg = next(pieces)
        if match["open"]:
            return f"{match['open']}{svg}{match['close']}"
        return f"{match['dopen']}{match['eqno'] or ''}{svg}{match['dclose']}"

    found = len(FORMULA.findall(text))
    if found != len(rendered):
        raise ValueError(
            f"rendered: {len(rendered)} formulas given for a page holding {found}"
        )
    text = FORMULA.sub(put, text)
    if rendered and f'id="{STYLE_ID}"' not in text:
        style = f'<style id="{STYLE_ID}">{" ".join(css.split())}</style>\n'
        text = text.replace("</head>", style + "</head>", 1)
    if rendered:
        text = re.sub(r"(<body[^>]*>)", lambda m: m.group(1) + cache, text, count=1)
    if unrendered_count(text) == 0:
        text = MATHJAX_SCRIPTS.sub("", text)
    return text


def node_binary() -> str | None:
    """The Node executable: ``$BOOK_NODE`` when set (empty: none), else ``node`` on the
    PATH, else None."""
    wanted = os.environ.get("BOOK_NODE")
    if wanted is not None:
        return (shutil.which(wanted) or None) if wanted else None
    return shutil.which("node")


def typeset(
    pages: dict[str, list[Formula]],
    tex: dict,
    mathjax_dir: Path,
    node: str,
    fold: bool = True,
) -> dict:
    """Typeset every page's formulas in one Node process; return its answer (``css``,
    and per page name ``cache`` and ``formulas``). A formula MathJax rejects raises
    :class:`MathRenderError` naming its page.

    ``fold`` (the build's choice): each ``<g>`` that only wraps one drawn element is
    folded into it (``mathjax_render.js`` says which are kept), the same drawing with
    fewer elements for the phone to style and lay out; ``fold=False`` gives MathJax's
    own tree, for the tests' comparison."""
    request = {
        "fold": fold,
        "tex": tex,
        "pages": [
            {
                "name": name,
                "formulas": [{"tex": f.tex, "display": f.display} for f in formulas],
            }
            for name, formulas in pages.items()
        ],
    }
    try:
        proc = subprocess.run(
            [node, str(SCRIPT), str(mathjax_dir)],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
    except subprocess.TimeoutExpired as error:
        raise MathRenderError(
            f"typesetting the math with {node} took over {TIMEOUT_S} s"
        ) from error
    if proc.returncode != 0:
        raise MathRenderError(
            f"typesetting the math with {node} failed:\n{proc.stderr.strip()[-2000:]}"
        )
    answer = json.loads(proc.stdout)
    problems = []
    for page in answer["pages"]:
        for error in page["errors"]:
            formula = pages[page["name"]][error["index"]]
            problems.append(
                f"{page['name']}: formula {error['index'] + 1} {formula.tex!r}: "
                f"{error['message']}"
            )
    if problems:
        raise MathRenderError("MathJax rejected formulas:\n  " + "\n  ".join(problems))
    return {
        "css": answer["css"],
        "pages": {page["name"]: page for page in answer["pages"]},
    }


_noted = False


def _note_once(message: str) -> None:
    global _noted
    if not _noted:
        _noted = True
        logger.info(message)


def render_site(
    outdir: Path, tex: dict, mathjax_dir: Path, node: str | None
) -> int | None:
    """Typeset the math of every HTML page under ``outdir``; return how many pages
    changed, or None when there is no Node (the pages keep the client-side MathJax)."""
    from bookbuild.site.a11y import html_pages, rewrite_pages

    if node is None:
        _note_once(
            "NOTE: no Node.js here (`node`, or $BOOK_NODE), so the math is typeset in "
            "the reader's browser by MathJax instead of at build time (Debian: apt-get "
            "install nodejs)"
        )
        return None
    pages = {}
    for name, path in html_pages(outdir):
        formulas = find_formulas(path.read_text(encoding="utf-8"))
        if formulas:
            pages[name] = formulas
    answer = (
        typeset(pages, tex, mathjax_dir, node) if pages else {"css": "", "pages": {}}
    )

    def rewrite(name: str, text: str) -> str:
        page = answer["pages"].get(name)
        if page is None:
            return render_page(text, [], "", "")
        return render_page(text, page["formulas"], page["cache"], answer["css"])

    return rewrite_pages(outdir, rewrite)


def pages_loading_mathjax(outdir: Path) -> list[str]:
    """The pages under ``outdir`` that still load MathJax in the browser."""
    from bookbuild.site.a11y import html_pages

    return [
        name
        for name, path in html_pages(outdir)
        if "_static/mathjax/" in path.read_text(encoding="utf-8")
    ]


def _on_build_finished(app: Sphinx, exc: Exception | None) -> None:
    if exc is None and app.builder.format == "html":
        from bookbuild.site import mathjax_source

        tex = dict((app.config.mathjax3_config or {}).get("tex", {}))
        render_site(Path(app.outdir), tex, mathjax_source(), node_binary())


def connect(app: Sphinx) -> None:
    """Register the pass (called from :func:`bookbuild.site.setup`)."""
    # after speed.py's pass
    app.connect("build-finished", _on_build_finished, priority=920)
