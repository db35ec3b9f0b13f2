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
"""

from __future__ import annotations

import shutil
from pathlib import Path

from docutils import nodes
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


class BookPanel(SphinxDirective):
    required_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        from chapter_code.panels.data import PANELS, panel, panel_json
        from chapter_code.panels.figures import write_static_figure

        name = self.arguments[0]
        if name not in PANELS:
            raise self.error(f"book-panel: name must be one of {sorted(PANELS)}; got {name!r}")
        data = panel(name)
        srcdir = Path(self.env.srcdir)
        png = write_static_figure(name, srcdir / "_build" / "panels" / f"{name}.png")
        for module in DEPENDS:
            self.env.note_dependency(str(ROOT / "chapter_code" / module))
        self.env.note_dependency(__file__)
        self.env.book_panels = getattr(self.env, "book_panels", {})  # type: ignore[attr-defined]
        self.env.book_panels.setdefault(self.env.docname, set()).add(name)  # type: ignore[attr-defined]

        box = nodes.container(classes=["book-panel"], ids=[f"panel-{name}"])
        box += nodes.paragraph("", "", nodes.strong("", data["title"]), classes=["book-panel-title"])
        static = nodes.container(classes=["book-panel-static"])
        figure = nodes.figure()
        figure += nodes.image(uri="/" + png.relative_to(srcdir).as_posix(), alt=data["summary"])
        static += figure
        # In HTML the static figure is for readers without JavaScript only: the player draws in its place,
        # and a browser running scripts does not download an image inside <noscript>.
        box += [_raw("<noscript>"), static, _raw("</noscript>")]
        box += nodes.paragraph("", data["summary"], classes=["book-panel-summary"])
        note = nodes.paragraph("", "", classes=["book-panel-note"])
        note += nodes.strong("", "Measured or illustrative. ")
        note += nodes.Text(data["note"])
        box += note
        if "check" in data:
            box += nodes.paragraph("", "", nodes.strong("", "Check yourself. "), nodes.Text(data["check"]["question"]))
            box += _raw('<details class="book-panel-answer"><summary>Answer</summary>')
            box += nodes.paragraph("", data["check"]["answer"])
            box += _raw("</details>")
        box += _raw('<details class="book-panel-transcript"><summary>Transcript, one sentence per beat</summary>')
        transcript = nodes.enumerated_list(classes=["book-panel-beats"])
        for beat in data["beats"]:
            transcript += nodes.list_item("", nodes.paragraph("", beat["text"]))
        box += transcript
        box += _raw(
            "<p>Keyboard, with the drawing focused: Space or K plays or pauses; the arrow keys step between beats; "
            "Home and End jump to the first and last beat; Escape pauses. A parameter slider pauses the animation "
            "and redraws it for your value; Play returns to the timeline. With reduced motion set in your system, "
            "each beat is shown finished, without movement.</p></details>"
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

