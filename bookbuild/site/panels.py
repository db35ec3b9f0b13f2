"""The ``book-panel`` directive: an interactive panel on a page, with its static figure and transcript.

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
:mod:`chapter_code.panels.data`; code names between backticks become code) becomes Sphinx math nodes, so it is typeset
like the rest of the page: MathJax SVG with its MathML for screen readers in
HTML (at build time, :mod:`bookbuild.site.mathrender`), LaTeX math in the PDF.
In HTML each formula is wrapped in ``<span class="book-panel-tex"
data-tex="...">`` (its source, which the browser tests compare with the data),
and the panel's ``symbols`` are typeset once in a hidden block, from which the
player copies them into its slider labels and setting descriptions.
"""

from __future__ import annotations

import html
import shutil
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[2]
PLAYER = ROOT / "panels"
#: Files the panels add to a page, in load order (the player first: the drawings register with it).
SCRIPTS = ["player.js", "panels.js"]
STYLESHEET = "panels.css"
#: Source files whose change changes a panel: a page that holds one is read again.
DEPENDS = [
    "panels/data.py",
    "panels/figures.py",
    "gated/gates.py",
    "bptt/gradients.py",
    "bptt/truncation.py",
    "rnn/recurrence.py",
    "core/plotting.py",
    "gated/figures.py",
    "bptt/figures.py",
    "sampling/rules.py",
    "sampling/explorer.py",
]


def _raw(text: str) -> nodes.raw:
    return nodes.raw("", text, format="html")


def inline(text: str) -> list[nodes.Node]:
    """``text`` as inline nodes: plain text, code for each ```...``` span, and math for each ``$...$`` span
    (wrapped, in HTML, in a span that keeps its TeX)."""
    parts = text.split("$")
    if len(parts) % 2 == 0:
        raise ValueError(f"book-panel: unbalanced $ in {text!r}")
    out: list[nodes.Node] = []
    for i, part in enumerate(parts):
        if i % 2 == 0:
            pieces = part.split("`")
            if len(pieces) % 2 == 0:
                raise ValueError(f"book-panel: unbalanced ` in {text!r}")
            out += [nodes.literal(p, p) if j % 2 else nodes.Text(p) for j, p in enumerate(pieces) if p]
        else:
            out += [_raw(f'<span class="book-panel-tex" data-tex="{html.escape(part)}">'), nodes.math(part, part),
                    _raw("</span>")]
    return out


def _para(text: str, **kwargs: object) -> nodes.paragraph:
    return nodes.paragraph("", "", *inline(text), **kwargs)


class BookPanel(SphinxDirective):
    required_arguments = 1
    has_content = False

    def _layout_check(self, name: str):  # type: ignore[no-untyped-def]
        """The build's figure-layout rule for the panel's static figure: no two of its texts overlap
        (``bookbuild.figure_layout``, as for every figure a chapter draws)."""
        from bookbuild.figure_layout import overlapping_texts

        def check(fig) -> None:  # type: ignore[no-untyped-def]
            clashes = overlapping_texts(fig)
            if clashes:
                raise self.error(f"book-panel {name}: texts of its static figure overlap: " + "; ".join(clashes))

        return check

    def run(self) -> list[nodes.Node]:
        from chapter_code.panels.data import PANELS, panel, panel_json
        from chapter_code.panels.figures import write_static_figure

        name = self.arguments[0]
        if name not in PANELS:
            raise self.error(f"book-panel: name must be one of {sorted(PANELS)}; got {name!r}")
        data = panel(name)
        srcdir = Path(self.env.srcdir)
        # beside the builder's own output (``_build/panels`` for ``_build/html``), so that a PDF built at the same
        # time into another output folder (``bookbuild build --pdf-after``) never writes the same file
        folder = Path(self.env.app.outdir).parent / "panels"
        png = write_static_figure(name, folder / f"{name}.png", check=self._layout_check(name))
        for module in DEPENDS:
            self.env.note_dependency(str(ROOT / "chapter_code" / module))
        self.env.note_dependency(__file__)
        self.env.book_panels = getattr(self.env, "book_panels", {})  # type: ignore[attr-defined]
        self.env.book_panels.setdefault(self.env.docname, set()).add(name)  # type: ignore[attr-defined]

        box = nodes.container(classes=["book-panel"], ids=[f"panel-{name}"])
        box += nodes.paragraph("", "", nodes.strong("", "", *inline(data["title"])), classes=["book-panel-title"])
        static = nodes.container(classes=["book-panel-static"])
        figure = nodes.figure()
        figure += nodes.image(uri="/" + png.relative_to(srcdir).as_posix(), alt=data["alt"])
        static += figure
        # In HTML the static figure is for readers without JavaScript only: the player draws in its place,
        # and a browser running scripts does not download an image inside <noscript>.
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
                symbols += [_raw(f'<span data-symbol="{html.escape(key)}">'), nodes.math(tex, tex), _raw("</span>")]
            only = addnodes.only(expr="html")
            only += [_raw('<div class="book-panel-symbols" hidden>'), symbols, _raw("</div>")]
            box += only
        box += _raw('<details class="book-panel-transcript"><summary>Transcript, one sentence per beat</summary>')
        transcript = nodes.enumerated_list(classes=["book-panel-beats"])
        for beat in data["beats"]:
            transcript += nodes.list_item("", _para(beat["text"]))
        box += transcript
        box += _raw(
            "<p>The panel opens on its first beat and waits: Next and Back step between beats, and Play shows "
            "them in turn, each for a time in proportion to its words (the speed menu scales it). Keyboard, with "
            "the drawing focused: Space or K plays or pauses; the arrow keys step between beats; Home and End jump "
            "to the first and last beat; Escape pauses. A parameter slider pauses the animation and redraws it for "
            "your value; Play returns to the timeline. With reduced motion set in your system, each beat is shown "
            "finished, without movement.</p></details>"
        )
        box += _raw(f'<script type="application/json" class="book-panel-data">{panel_json(name)}</script>')
        return [box]


def _purge(app: Sphinx, env: object, docname: str) -> None:
    getattr(env, "book_panels", {}).pop(docname, None)


def _merge(app: Sphinx, env: object, docnames: set[str], other: object) -> None:
    mine = env.__dict__.setdefault("book_panels", {})
    for docname, names in getattr(other, "book_panels", {}).items():
        if docname in docnames:
            mine[docname] = names


def _page(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object) -> None:
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

