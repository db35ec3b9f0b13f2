"""Sphinx extension for the book's HTML site: what a reader's browser gets.

Listed in ``_config.yml`` (``sphinx.extra_extensions: [bookbuild.site]``). It

1. typesets the math at build time (``mathrender.py``: MathJax 3.2.2 in Node,
   taken from the ``sphinx-mathjax-offline`` wheel pinned in
   ``requirements/lock.txt``), so pages ship SVG formulas and load no MathJax;
   where Node is missing, vendors that MathJax into the HTML output
   (``_static/mathjax/``) and points ``mathjax_path`` at it, so equations
   render in the browser with no network;
2. switches off sphinx-thebe, which Jupyter Book 1 loads on every page (the
   book runs nothing in the reader's browser);
3. makes the ids of exercise and solution bodies unique on a page;
4. adds the site's stylesheet and script from ``assets/`` (code wrapped to the
   column, readable figures on a phone, the sidebar buttons of the theme
   repaired, solution headers that open instead of jumping away);
5. registers the bibliography's styles (``citations.py``): the list at the end
   uses the same "Author, year" labels as the citations in the text, in
   alphabetical order, and the three source documents are cited by a shorthand
   that says what each is;
6. repairs the markup that keeps the pages from passing axe-core and the Nu
   validator, and what slows their first paint (``a11y.py``: page
   descriptions, favicon, a post-build pass over the HTML);
7. previews what a link points to, on hover, focus or a first tap, from a
   template of previews built into each page (``previews.py``);
8. makes the pages quicker to show on a phone (``speed.py``: figures loaded
   lazily with their size stated, the previews' too; where the math is left to the
   browser, MathJax loaded after the first paint and typesetting lazily);
9. links the downloads (``downloads.py``): the book's PDF from every page's
   header, and each chapter as an executed notebook in the download menu;
10. gives search results a summary, the text around the match (``search.py``).

The assets live here, never under the book's ``_static/``, because Jupyter Book
1 adds a script tag for every ``.js`` file it finds there to every page.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx

from bookbuild.site import (
    a11y,
    citations,
    downloads,
    mathrender,
    previews,
    search,
    speed,
)
from bookbuild.site.citations import author_year_label  # noqa: F401  (re-exported: the tests import it here)

ASSETS = Path(__file__).with_name("assets")
# a wheel on the package index that bundles MathJax 3.2.2
MATHJAX_PACKAGE = "sphinx-mathjax-offline"
MATHJAX_VERSION = "3.2.2"
#: What the site needs of MathJax: the TeX-to-HTML component, the TeX extensions it
#: loads on demand, its web fonts, and the menu's accessibility tools (explorer,
#: speech), all loaded from the same folder.
MATHJAX_PARTS = [
    "tex-chtml.js",
    "input/tex/extensions",
    "output/chtml",
    "a11y",
    "sre",
    "ui",
    "adaptors",
]
MATHJAX_PATH = "mathjax/tex-chtml.js"  # relative to the output's _static/


def mathjax_source() -> Path:
    """The folder holding MathJax's files in the installed wheel; a clear error if the
    wheel is missing."""
    spec = importlib.util.find_spec(MATHJAX_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            f"{MATHJAX_PACKAGE} is not installed; run `make env` (pinned in "
            "requirements/lock.txt)"
        )
    source = Path(next(iter(spec.submodule_search_locations))) / "static" / "mathjax"
    tex_chtml = (source / "tex-chtml.js").read_text(encoding="utf-8", errors="replace")
    if f'VERSION="{MATHJAX_VERSION}"' not in tex_chtml:
        raise RuntimeError(f"{source} does not hold MathJax {MATHJAX_VERSION}")
    return source


def copy_mathjax(outdir: Path) -> Path:
    """Copy the parts of MathJax the site loads into ``outdir/_static/mathjax``; return
    that folder."""
    source, target = mathjax_source(), outdir / "_static" / "mathjax"
    for part in MATHJAX_PARTS:
        src, dst = source / part, target / part
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    return target


def _on_builder_inited(app: Sphinx) -> None:
    if app.builder.format == "html":
        app.config.mathjax_path = MATHJAX_PATH


def switch_off_thebe(app: Sphinx) -> None:
    """Disconnect sphinx-thebe's handlers: Jupyter Book 1 always loads it, and nothing
    here runs in the browser.

    Left on, it puts a script naming a third-party host on every page (declared
    twice after an incremental build, a console error) and a Binder
    configuration block.
    """
    for listeners in app.events.listeners.values():
        for listener in list(listeners):
            if getattr(listener.handler, "__module__", "").startswith("sphinx_thebe"):
                app.disconnect(listener.id)
    # Its stylesheet, registered at set-up, would be linked from every page without
    # being copied.
    app.registry.css_files[:] = [
        (name, attrs)
        for name, attrs in app.registry.css_files
        if "thebe" not in str(name)
    ]


def unique_exercise_ids(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Give each exercise's and solution's content section its own id.

    sphinx-exercise gives every one of them the id ``exercise-content`` or
    ``solution-content``, so a page with several exercises repeats an id.
    """
    for section in doctree.findall(nodes.section):
        if section["ids"] in (["exercise-content"], ["solution-content"]):
            owner = section.parent
            while owner is not None and not owner.get("ids"):
                owner = owner.parent
            prefix = owner["ids"][0] if owner is not None else docname
            section["ids"] = [nodes.make_id(f"{prefix}-{section['ids'][0]}")]


def refresh_assets(outdir: Path) -> list[str]:
    """Copy each file of ``assets/`` that differs from its copy in ``outdir/_static``;
    return their names.

    Sphinx copies the static files only in a build that writes a page, so an edit to
    ``book-site.css`` or ``book-site.js`` alone never reached the site of a later ``make
    book``.
    """
    static = outdir / "_static"
    copied = []
    for src in sorted(ASSETS.iterdir()):
        dst = static / src.name
        if src.is_file() and (
            not dst.is_file() or dst.read_bytes() != src.read_bytes()
        ):
            static.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
            copied.append(src.name)
    return copied


def _on_build_finished(app: Sphinx, exc: Exception | None) -> None:
    """The site's own assets as they are now (:func:`refresh_assets`). MathJax goes into
    the output only when a page still loads it (no Node to typeset the math at build
    time, mathrender.py); otherwise a copy left by an earlier build goes."""
    if exc is None and app.builder.format == "html":
        outdir = Path(app.outdir)
        refresh_assets(outdir)
        if mathrender.pages_loading_mathjax(outdir):
            copy_mathjax(outdir)
        else:
            shutil.rmtree(outdir / "_static" / "mathjax", ignore_errors=True)


def _on_config_inited(app: Sphinx, config: object) -> None:
    paths = config.html_static_path  # type: ignore[attr-defined]
    if str(ASSETS) not in paths:
        paths.append(str(ASSETS))
    # Without a default the theme's first script logs "Got invalid theme mode" on every
    # page.
    config.html_context.setdefault("default_mode", "auto")  # type: ignore[attr-defined]


def setup(app: Sphinx) -> dict[str, object]:
    from bookbuild.execute import cachekey

    # myst-nb's lookup of the stored outputs hashes as the engine's does
    cachekey.install()
    citations.register()
    # loaded before us, so that its handlers exist to be disconnected
    app.setup_extension("sphinx_thebe")
    switch_off_thebe(app)
    # the interactive panels' directive and player (panels.py)
    app.setup_extension("bookbuild.site.panels")
    app.connect("config-inited", _on_config_inited)
    app.connect("builder-inited", _on_builder_inited)
    app.connect("doctree-resolved", unique_exercise_ids)
    # after the math is typeset (mathrender.py)
    app.connect("build-finished", _on_build_finished, priority=930)
    app.add_css_file("book-site.css")
    app.add_js_file("book-site.js", loading_method="defer")
    a11y.connect(app)
    downloads.connect(app)
    search.connect(app)
    previews.connect(app)
    speed.connect(app)
    mathrender.connect(app)
    # env_version: raise it when a change (of this extension or of _config.yml) needs
    # every page read again; Sphinx then discards its saved environment. 2: citation ids
    # named by key (bibtex_cite_id). 3: every page written again, for the header's PDF
    # button and the search texts (downloads.py, search.py). 4: link previews, collected
    # as each page is written (previews.py): every page is written once with them.
    return {
        "version": "1",
        "env_version": 4,
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
