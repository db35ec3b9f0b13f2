"""The ``book-panel`` directive: an interactive panel on a page, with its static figure
and transcript.

Registered by :mod:`bookbuild.site` (one line). In a page::

    ```{book-panel} forget-power
    ```

places the panel of that name from :mod:`chapter_code.panels.data`. At build
time the directive computes the panel's data (beats, transcript, controls)
with the book's functions, embeds it as JSON, and draws the panel's static
figure (:mod:`chapter_code.panels.figures`) into ``_build/panels/``. Every
builder gets the title, the figure, what is measured and what is
illustrative, and the transcript as a numbered list (so the PDF prints the
same computation); HTML readers also get the player from ``panels/`` at the
repository root (copied into ``_static/panels/`` and linked only from pages
that hold a panel), which draws the live figure where the static one would
stand and adds the controls. In HTML the static figure sits in ``<noscript>``:
only a reader without JavaScript sees (and downloads) it.

Math in a panel's text (TeX between dollar signs, see
:mod:`chapter_code.panels.data`; code names between backticks become code) becomes
Sphinx math nodes, so it is typeset like the rest of the page: MathJax SVG with its
MathML for screen readers in HTML (at build time, :mod:`bookbuild.site.mathrender`),
LaTeX math in the PDF. In HTML each formula is wrapped in ``<span class="book-panel-tex"
data-tex="...">`` (its source, which the browser tests compare with the data),
and the panel's ``symbols`` are typeset once in a hidden block, from which the
player copies them into its slider labels and setting descriptions.

A panel's data and static figure are kept in ``_build/panel-cache``
(:class:`PanelCache`) with what they were computed from: the bytes of every
``chapter_code`` module the process had imported by then (the computation's own and any
others), of this file and of the figure-layout check, and the versions of Python,
PyTorch, NumPy and Matplotlib. A page read again with none of them changed (an edit to
its prose or to one of its cells) takes them from there, without importing PyTorch or
drawing the figure; any change recomputes them.
"""

from __future__ import annotations

import hashlib
import html
import json
import platform
import shutil
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[2]
PLAYER = ROOT / "panels"
#: Files the panels add to a page, in load order (the player first: the drawings
#: register with it).
SCRIPTS = ["player.js", "panels.js"]
STYLESHEET = "panels.css"


def depends() -> list[Path]:
    """Source files whose change changes a panel (a page that holds one is read again):
    every ``chapter_code`` module loaded once the panels' registries are, so a panel's
    topic module and all it imports count."""
    import chapter_code.panels.data
    import chapter_code.panels.figures  # noqa: F401

    loaded = list(sys.modules.items())
    return sorted(
        {
            Path(module.__file__)
            for name, module in loaded
            if name.split(".")[0] == "chapter_code"
            and getattr(module, "__file__", None)
        }
    )


#: Besides the ``chapter_code`` modules imported when a panel is computed, what its
#: cache entry depends on (paths from the repository's root).
CACHE_FILES = [
    "bookbuild/site/panels.py",
    "bookbuild/lint/figure_layout.py",
    "chapter_code/core/book.mplstyle",
]
CACHE_DISTRIBUTIONS = ["torch", "numpy", "matplotlib"]
# 2: a missing file is "missing", as the engine hashes it; 3: a Python source by its
# tokens
CACHE_FORMAT = 3


def _file_keys(root: Path, rels: list[str]) -> dict[str, str]:
    """What a panel's entry keeps of each file it was computed from: a Python source's
    token form without comments (``keys.source_form``, every token at its line and
    column: a comment changes no panel, the panels read no source as text), else the
    digest of its bytes as the engine hashes them (lab markers aside)."""
    from bookbuild.execute.engine import current_hashes
    from bookbuild.files import code_bytes
    from bookbuild.runs import keys

    out = current_hashes(root, rels)
    for rel in rels:
        if rel.endswith(".py") and out[rel] != "missing":
            # one token form per content and process: every panel names the same files
            if out[rel] not in _FORMS:
                _FORMS[out[rel]] = keys.source_form(code_bytes(root / rel))
            form = _FORMS[out[rel]]
            if form is not None:
                out[rel] = f"py:{form}"
    return out


#: Token forms of this process, by the digest of the bytes they were read from.
_FORMS: dict[str, str | None] = {}


def _content_digest(data: dict[str, Any], script_json: str) -> str:
    """A digest of a panel's data and script JSON, kept in its entry: an entry edited or
    damaged on disk is recomputed, never shown."""
    text = json.dumps(
        [data, script_json], ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _environment() -> dict[str, str | None]:
    def version(name: str) -> str | None:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    return {
        "format": str(CACHE_FORMAT),
        "python": platform.python_version(),
        **{name: version(name) for name in CACHE_DISTRIBUTIONS},
    }


def _imported_sources(root: Path = ROOT) -> list[Path]:
    """The source files of the ``chapter_code`` modules this process has imported, and
    :data:`CACHE_FILES`."""
    package = (root / "chapter_code").resolve()
    found = {
        Path(f).resolve()
        for m in list(sys.modules.values())
        if (f := getattr(m, "__file__", None))
    }
    return sorted(
        {f for f in found if f.is_relative_to(package)}
        | {(root / f).resolve() for f in CACHE_FILES}
    )


class PanelCache:
    """Each panel's data, its script JSON and its static figure's PNG, kept in
    ``folder`` with the digests of the files they were computed from
    (:func:`_imported_sources`) and :func:`_environment`. :meth:`get` gives them back
    only while every one of those still matches; an entry that is unreadable, or whose
    data or PNG does not match its digest, is treated as absent (and recomputed)."""

    def __init__(self, folder: Path, root: Path = ROOT) -> None:
        # the files are named relative to ``root``
        self.folder, self.root = folder, root

    def _entry(self, name: str) -> Path:
        return self.folder / f"{name}.json"

    def _png(self, name: str) -> Path:
        return self.folder / f"{name}.png"

    def get(self, name: str) -> tuple[dict[str, Any], str, bytes] | None:
        """(data, its JSON, the PNG's bytes) as stored for panel ``name``, or None where
        anything differs."""
        try:
            entry = json.loads(self._entry(name).read_text(encoding="utf-8"))
            png = self._png(name).read_bytes()
            if (
                entry["environment"] != _environment()
                or hashlib.sha256(png).hexdigest() != entry["png"]
                or _content_digest(entry["data"], entry["json"]) != entry["content"]
                or _file_keys(self.root, list(entry["files"])) != entry["files"]
            ):
                return None
            return entry["data"], entry["json"], png
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def sources(self, name: str) -> list[Path] | None:
        """The files panel ``name``'s entry was computed from (absolute paths), or None
        without a readable entry.

        On a hit (:meth:`get`) they are what :func:`depends` would give and more (the
        ``chapter_code`` modules imported once its registries were, which a change to
        any of them would have shown, and :data:`CACHE_FILES`), without importing the
        registries and PyTorch with them (2-7 s of a page's read)."""
        try:
            return [
                self.root / rel
                for rel in json.loads(self._entry(name).read_text(encoding="utf-8"))[
                    "files"
                ]
            ]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(
        self, name: str, data: dict[str, Any], script_json: str, png: bytes
    ) -> None:
        """Keep panel ``name``'s outputs with what they were computed from (call it
        right after computing them)."""
        from bookbuild.files import write_bytes, write_text

        root = self.root.resolve()
        files = _file_keys(
            root, [f.relative_to(root).as_posix() for f in _imported_sources(root)]
        )
        write_bytes(
            self._png(name), png
        )  # first: an entry never names a PNG that is not there yet
        entry = {
            "environment": _environment(),
            "files": files,
            "png": hashlib.sha256(png).hexdigest(),
            "content": _content_digest(data, script_json),
            "data": data,
            "json": script_json,
        }  # data's keys in their order: the symbols are typeset in it
        write_text(
            self._entry(name), json.dumps(entry, ensure_ascii=False, indent=1) + "\n"
        )


def _raw(text: str) -> nodes.raw:
    return nodes.raw("", text, format="html")


def inline(text: str) -> list[nodes.Node]:
    """``text`` as inline nodes: plain text, code for each ```...``` span, and math for
    each ``$...$`` span (wrapped, in HTML, in a span that keeps its TeX)."""
    parts = text.split("$")
    if len(parts) % 2 == 0:
        raise ValueError(f"book-panel: unbalanced $ in {text!r}")
    out: list[nodes.Node] = []
    for i, part in enumerate(parts):
        if i % 2 == 0:
            pieces = part.split("`")
            if len(pieces) % 2 == 0:
                raise ValueError(f"book-panel: unbalanced ` in {text!r}")
            out += [
                nodes.literal(p, p) if j % 2 else nodes.Text(p)
                for j, p in enumerate(pieces)
                if p
            ]
        else:
            out += [
                _raw(f'<span class="book-panel-tex" data-tex="{html.escape(part)}">'),
                nodes.math(part, part),
                _raw("</span>"),
            ]
    return out


def _para(text: str, **kwargs: object) -> nodes.paragraph:
    return nodes.paragraph("", "", *inline(text), **kwargs)


class BookPanel(SphinxDirective):
    required_arguments = 1
    has_content = False

    def _layout_check(self, name: str):  # type: ignore[no-untyped-def]
        """The build's figure-layout rule for the panel's static figure: no two of its
        texts overlap (``bookbuild.lint.figure_layout``, as for every figure a chapter
        draws)."""
        from bookbuild.lint.figure_layout import overlapping_texts

        def check(fig) -> None:  # type: ignore[no-untyped-def]
            clashes = overlapping_texts(fig)
            if clashes:
                raise self.error(
                    f"book-panel {name}: texts of its static figure overlap: "
                    + "; ".join(clashes)
                )

        return check

    def _computed(self, name: str, png: Path) -> tuple[dict[str, Any], str]:
        """Panel ``name``'s data and script JSON, computed, with its static figure drawn
        into ``png``."""
        from chapter_code.panels.data import PANELS, panel, panel_json
        from chapter_code.panels.figures import write_static_figure

        if name not in PANELS:
            raise self.error(
                f"book-panel: name must be one of {sorted(PANELS)}; got {name!r}"
            )
        data = panel(name)
        write_static_figure(name, png, check=self._layout_check(name))
        return data, panel_json(name, data)

    def run(self) -> list[nodes.Node]:
        from bookbuild.execute.engine import build_dir
        from bookbuild.files import write_bytes

        name = self.arguments[0]
        srcdir = Path(self.env.srcdir)
        # beside the builder's own output (``_build/panels`` for ``_build/html``), so
        # that a PDF built at the same time into another output folder (``bookbuild
        # build --pdf-after``) never writes the same file
        folder = Path(self.env.app.outdir).parent / "panels"
        png = folder / f"{name}.png"
        cache = PanelCache(build_dir(srcdir) / "panel-cache")
        kept = cache.get(name)
        sources = None
        if kept is None:
            data, script_json = self._computed(name, png)
            cache.put(name, data, script_json, png.read_bytes())
        else:
            data, script_json, png_bytes = kept
            if not png.is_file() or png.read_bytes() != png_bytes:
                write_bytes(png, png_bytes)
            sources = cache.sources(
                name
            )  # what it was computed from, unchanged: no import of the registries
        for path in depends() if sources is None else sources:
            self.env.note_dependency(str(path))
        self.env.note_dependency(__file__)
        self.env.book_panels = getattr(self.env, "book_panels", {})  # type: ignore[attr-defined]
        self.env.book_panels.setdefault(self.env.docname, set()).add(name)  # type: ignore[attr-defined]

        box = nodes.container(classes=["book-panel"], ids=[f"panel-{name}"])
        box += nodes.paragraph(
            "",
            "",
            nodes.strong("", "", *inline(data["title"])),
            classes=["book-panel-title"],
        )
        static = nodes.container(classes=["book-panel-static"])
        figure = nodes.figure()
        figure += nodes.image(
            uri="/" + png.relative_to(srcdir).as_posix(), alt=data["alt"]
        )
        static += figure
        # In HTML the static figure is for readers without JavaScript only: the player
        # draws in its place, and a browser running scripts does not download an image
        # inside <noscript>.
        box += [_raw("<noscript>"), static, _raw("</noscript>")]
        box += _para(data["summary"], classes=["book-panel-summary"])
        note = _para(data["note"], classes=["book-panel-note"])
        note.insert(0, nodes.strong("", "Measured or illustrative. "))
        box += note
        if "check" in data:
            question = _para(data["check"]["question"])
            question.insert(0, nodes.strong("", "Check yourself. "))
            box += question
            box += _raw('<details class="book-panel-answer"><summary>Answer</summary>')
            box += _para(data["check"]["answer"])
            box += _raw("</details>")
        if data.get("symbols"):
            symbols = nodes.paragraph()
            for key, tex in data["symbols"].items():
                symbols += [
                    _raw(f'<span data-symbol="{html.escape(key)}">'),
                    nodes.math(tex, tex),
                    _raw("</span>"),
                ]
            only = addnodes.only(expr="html")
            only += [
                _raw('<div class="book-panel-symbols" hidden>'),
                symbols,
                _raw("</div>"),
            ]
            box += only
        box += _raw(
            '<details class="book-panel-transcript"><summary>Transcript, one '
            "sentence per beat</summary>"
        )
        transcript = nodes.enumerated_list(classes=["book-panel-beats"])
        for beat in data["beats"]:
            transcript += nodes.list_item("", _para(beat["text"]))
        box += transcript
        box += _raw(
            "<p>The panel opens on its first beat and waits: Next and Back step "
            "between beats, and Play shows them in turn, each for a time in proportion "
            "to its words (the speed menu scales it). Keyboard, with the drawing "
            "focused: Space or K plays or pauses; the arrow keys step between beats; "
            "Home and End jump to the first and last beat; Escape pauses. A parameter "
            "slider pauses the animation and redraws it for your value; Play returns "
            "to the timeline. With reduced motion set in your system, each beat is "
            "shown finished, without movement.</p></details>"
        )
        box += _raw(
            '<script type="application/json" '
            f'class="book-panel-data">{script_json}</script>'
        )
        return [box]


def _purge(app: Sphinx, env: object, docname: str) -> None:
    getattr(env, "book_panels", {}).pop(docname, None)


def _merge(app: Sphinx, env: object, docnames: set[str], other: object) -> None:
    mine = env.__dict__.setdefault("book_panels", {})
    for docname, names in getattr(other, "book_panels", {}).items():
        if docname in docnames:
            mine[docname] = names


def _page(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object
) -> None:
    if pagename in getattr(app.env, "book_panels", {}):
        app.add_css_file(f"panels/{STYLESHEET}")
        for script in SCRIPTS:
            app.add_js_file(f"panels/{script}", loading_method="defer")


def copy_player(outdir: Path) -> Path:
    """Copy the player's files into ``outdir/_static/panels``; return that folder."""
    target = outdir / "_static" / "panels"
    target.mkdir(parents=True, exist_ok=True)
    for name in [*SCRIPTS, STYLESHEET]:
        shutil.copy2(PLAYER / name, target / name)
    return target


def _finished(app: Sphinx, exc: Exception | None) -> None:
    if exc is None and app.builder.format == "html":
        copy_player(Path(app.outdir))


def setup(app: Sphinx) -> dict[str, object]:
    app.add_directive("book-panel", BookPanel)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("html-page-context", _page)
    app.connect("build-finished", _finished)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
