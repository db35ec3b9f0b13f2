"""Speed of the built pages on a phone: a post-build pass over the HTML (issue 19,
Lighthouse performance).

Part of :mod:`bookbuild.site` (which calls :func:`connect`). Measured with
Lighthouse's mobile profile (``make audit``), the chapters' first paint waited
for every byte requested before it (about 1.1 MB on the gradients chapter: the
figures, MathJax) and the main thread was blocked by MathJax typesetting all of
a chapter's math in one task. The repairs, each idempotent like those of
:mod:`bookbuild.site.a11y`:

* :func:`figures_load_lazily`: figures load when they come near the screen
  (``loading="lazy"``, decoded off the main thread), and carry their pixel size
  as ``width``/``height`` so the browser reserves their space before they load
  (no layout shift; book-site.css keeps the displayed width);
* :func:`figures_readable_on_phones` (for reading rather than speed, but it reads the
  same images): each figure drawn by ``chapter_code.core.plotting`` states, as
  ``--book-min-width`` in its ``style``, the narrowest width at which its smallest
  text is still :data:`PHONE_TEXT_PX` CSS px (from the height the PNG records of its
  smallest text); book-site.css holds it there, so on a phone it scrolls sideways in
  its box, with a cue, instead of shrinking its text to 9 px;
* :func:`head_scripts_deferred`: the themes' and extensions' scripts in the
  page's head (Sphinx's doctools, copy buttons, toggles, tabs) run after the
  page is parsed instead of holding up its first paint; they keep their order,
  and the inline settings they read are set before they run. Only
  ``documentation_options.js`` stays, since inline scripts use it at once;
* :func:`mathjax_after_first_paint` (only where the math was not typeset at
  build time, :mod:`bookbuild.site.mathrender`, for want of Node; that pass
  runs after this one and drops the marker from every page it typesets):
  MathJax's script tag becomes a marker that
  ``book-site.js`` reads after the page's ``load`` event and first paint; the
  script is then fetched and run. With MathJax's lazy-typesetting extension
  (``ui/lazy``, configured in ``_config.yml``) the math on screen is typeset
  first and ``book-site.js`` typesets the rest in small idle-time batches, so
  every formula is rendered (for screen readers, find in page and print) a
  moment later without a long task.
"""

from __future__ import annotations

import html
import math
import os
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from sphinx.application import Sphinx

# (output folder, page's path under it, its HTML) -> repaired HTML
Repair = Callable[[Path, str, str], str]

MATHJAX_TAG = re.compile(
    r'<script defer="defer" '
    r'src="((?:\.\./)*_static/mathjax/tex-chtml\.js[^"]*)"></script>'
)
IMG_TAG = re.compile(r"<img (?P<attrs>[^>]*?)\s*/?>")


#: The smallest figure text a phone shows, in CSS px (issue 53: the figures shrunk to a
#: 390-px screen set it at 9.3 px).
PHONE_TEXT_PX = 11.0


@lru_cache(maxsize=4096)
def _pixel_size(path: str, mtime_ns: int) -> tuple[int, int] | None:
    from PIL import Image

    try:
        with Image.open(path) as image:
            return image.size
    except OSError:
        return None


def image_size(path: Path) -> tuple[int, int] | None:
    """An image file's (width, height) in pixels; None when the file is missing or not a
    raster image."""
    if not path.is_file() or path.suffix.lower() not in {
        ".png",
        ".jpg",
        ".jpeg",
        ".gif",
        ".webp",
    }:
        return None
    return _pixel_size(str(path), path.stat().st_mtime_ns)


def figures_load_lazily(outdir: Path, name: str, text: str) -> str:
    """Every ``<img>`` of the page loads lazily, decodes asynchronously and states its
    width and height.

    The ``width``/``height`` attributes give the image's aspect ratio before it
    loads; an inline ``style`` width (myst-nb's display size) still decides the
    shown size, and book-site.css scales both to the column.
    """
    page_dir = (outdir / name).parent

    def fix(match: re.Match[str]) -> str:
        attrs = match.group("attrs")
        added = []
        if " loading=" not in f" {attrs}":
            added.append('loading="lazy"')
        if " decoding=" not in f" {attrs}":
            added.append('decoding="async"')
        src = re.search(r'\bsrc="([^"]+)"', attrs)
        if src and " width=" not in f" {attrs}" and " height=" not in f" {attrs}":
            target = src.group(1).split("?")[0].split("#")[0]
            size = (
                None
                if ":" in target
                else image_size(
                    Path(os.path.normpath(page_dir / html.unescape(target)))
                )
            )
            if size is not None:
                added.append(f'width="{size[0]}" height="{size[1]}"')
        if not added:
            return match.group(0)
        return f"<img {attrs} {' '.join(added)} />"

    return IMG_TAG.sub(fix, text)


@lru_cache(maxsize=4096)
def _smallest_text(path: str, mtime_ns: int) -> float | None:
    from PIL import Image

    from chapter_code.core.plotting import SMALLEST_TEXT_KEY

    try:
        with Image.open(path) as image:
            value = getattr(image, "text", {}).get(SMALLEST_TEXT_KEY)
    except OSError:
        return None
    return float(value) if value else None


def min_readable_width(path: Path) -> int | None:
    """The narrowest width, in CSS px, at which the figure's smallest text is
    :data:`PHONE_TEXT_PX`; None for an image that does not record its smallest text (not
    drawn by ``chapter_code.core.plotting``)."""
    size = image_size(path)
    if size is None or path.suffix.lower() != ".png":
        return None
    smallest = _smallest_text(str(path), path.stat().st_mtime_ns)
    if not smallest:
        return None
    # image px per CSS px cancel out
    return math.ceil(size[0] * PHONE_TEXT_PX / smallest)


def figures_readable_on_phones(outdir: Path, name: str, text: str) -> str:
    """Every figure image that records its smallest text gets ``--book-min-width``
    (:func:`min_readable_width`) in its ``style``; book-site.css keeps the figure at
    least that wide."""
    page_dir = (outdir / name).parent

    def fix(match: re.Match[str]) -> str:
        attrs = match.group("attrs")
        src = re.search(r'\bsrc="([^"]+)"', attrs)
        if "--book-min-width" in attrs or src is None or ":" in src.group(1):
            return match.group(0)
        target = src.group(1).split("?")[0].split("#")[0]
        width = min_readable_width(
            Path(os.path.normpath(page_dir / html.unescape(target)))
        )
        if width is None:
            return match.group(0)
        rule = f"--book-min-width: {width}px;"
        style = re.search(r'\bstyle="([^"]*)"', attrs)
        if style is None:
            return f'<img {attrs} style="{rule}" />'
        kept = style.group(1).rstrip()
        kept = kept + ("" if not kept or kept.endswith(";") else ";")
        return (
            f"<img {attrs[: style.start(1)]}{kept} {rule}{attrs[style.end(1) :]} "
            "/>".replace('style=" ', 'style="')
        )

    return IMG_TAG.sub(fix, text)


HEAD_SCRIPT = re.compile(
    r'<script (data-[a-z-]+="[^"]*" '
    r')?src="((?:\.\./)*_static/[^"]+\.js(?:\?[^"]*)?)"></script>'
)


def head_scripts_deferred(outdir: Path, name: str, text: str) -> str:
    """Every blocking ``<script src="…_static/….js">`` gets ``defer``, except
    ``documentation_options.js``."""

    def fix(match: re.Match[str]) -> str:
        if "/documentation_options.js" in f"/{match.group(2)}":
            return match.group(0)
        return f'<script {match.group(1) or ""}defer src="{match.group(2)}"></script>'

    return HEAD_SCRIPT.sub(fix, text)


def mathjax_after_first_paint(outdir: Path, name: str, text: str) -> str:
    """MathJax's deferred script tag becomes ``<script data-book-mathjax="…">``, loaded
    by book-site.js.

    A deferred script is fetched while the page is parsed and run before the
    first paint on a slow phone; the marker keeps both until the page is shown.
    """
    return MATHJAX_TAG.sub(r'<script data-book-mathjax="\1"></script>', text)


PRE_TAG = re.compile(r"<pre(?P<attrs>(?:\s[^>]*)?)>(?P<body>.*?)</pre>", re.S)


def code_blocks_sized(outdir: Path, name: str, text: str) -> str:
    """Every ``<pre>`` states its count of lines (``style="--book-lines: N"``), so that
    book-site.css can skip laying out a block that is off the screen and still reserve
    its exact height, and the length of its longest line (``data-book-cols``), from
    which book-site.js tells whether the block will scroll before it is drawn.

    A block's lines never wrap on screen (book-site.css), so its content is ``N`` line
    heights tall; the count is that of its text's line breaks (a break at the very start
    or end draws no line of its own).
    """

    def fix(match: re.Match[str]) -> str:
        attrs, body = match.group("attrs"), match.group("body")
        if "--book-lines" in attrs:
            return match.group(0)
        inner = body[1:] if body.startswith("\n") else body
        lines = max(1, inner.count("\n") + (0 if inner.endswith("\n") else 1))
        text = html.unescape(re.sub(r"<[^>]*>", "", inner))
        cols = max((len(line.expandtabs()) for line in text.split("\n")), default=0)
        style = re.search(r'\sstyle="([^"]*)"', attrs)
        if style:
            kept = style.group(1).rstrip().rstrip(";")
            attrs = attrs.replace(
                style.group(0),
                f' style="{kept}; --book-lines: {lines}"'
                if kept
                else f' style="--book-lines: {lines}"',
            )
        else:
            attrs = f'{attrs} style="--book-lines: {lines}"'
        return f'<pre{attrs} data-book-cols="{cols}">{body}</pre>'

    return PRE_TAG.sub(fix, text)


REPAIRS: list[Repair] = [
    figures_load_lazily,
    figures_readable_on_phones,
    head_scripts_deferred,
    mathjax_after_first_paint,
    code_blocks_sized,
]


def speed_page(outdir: Path, name: str, text: str) -> str:
    """``text`` (the page at ``name``, relative to ``outdir``) with every repair
    applied."""
    for repair in REPAIRS:
        text = repair(outdir, name, text)
    return text


def speed_site(outdir: Path) -> int:
    """Apply :func:`speed_page` to every HTML page under ``outdir``; return how many
    files changed."""
    from bookbuild.site.a11y import rewrite_pages

    return rewrite_pages(outdir, lambda name, text: speed_page(outdir, name, text))


def _on_build_finished(app: Sphinx, exc: Exception | None) -> None:
    if exc is None and app.builder.format == "html":
        speed_site(Path(app.outdir))


def connect(app: Sphinx) -> None:
    """Register the pass (called from :func:`bookbuild.site.setup`)."""
    # after the accessibility repairs (900) and the link previews (previews.py, 915),
    # whose templates copy figures and listings that this pass must size too; before the
    # math is typeset (mathrender.py, 920)
    app.connect("build-finished", _on_build_finished, priority=917)
