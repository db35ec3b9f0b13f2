"""Tests for bookbuild.site.mathrender: the book's math typeset at build time by MathJax
in Node.

The page rewriting is checked with stand-in SVG; the tests marked for Node run
``mathjax_render.js`` on a small site (skipped, with the reason, where there is no
``node``). The browser tests check the built book.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from bookbuild.site import mathjax_source, mathrender

MATHJAX_HEAD = (
    '<script>window.MathJax = {"loader": {"load": ["ui/lazy"]}, "tex": '
    '{"macros": {"R": "\\\\mathbb{R}"}}}</script>\n'
    '    <script defer="defer" '
    'src="../_static/mathjax/tex-chtml.js?v=20daa33d"></script>\n'
)
PAGE = f"""<!DOCTYPE html>
<html lang="en"><head>
    <title>x</title>
    {MATHJAX_HEAD}</head>
<body data-theme="light">
<p>A state <span class="math notranslate nohighlight">\\(h_t \\in \\R^{{H}}\\)</span> and
<span class="math notranslate nohighlight">\\(a &lt; b\\)</span>.</p>
<div class="math notranslate nohighlight" id="equation-eq-step">
<span class="eqno">(1.1)<a class="headerlink" href="#equation-eq-step" title="Link to this equation">#</a></span>\\[\
h_t = \\tanh(W h_{{t-1}} + U x_t)\\]</div>
</body></html>
"""  # noqa: E501  (HTML as the build writes it)
TEX = {"macros": {"R": "\\mathbb{R}"}}
needs_node = pytest.mark.skipif(
    mathrender.node_binary() is None, reason="no Node.js (`node`) on this machine"
)


def write_site(outdir: Path, pages: dict[str, str]) -> Path:
    for name, text in pages.items():
        (outdir / name).parent.mkdir(parents=True, exist_ok=True)
        (outdir / name).write_text(text, encoding="utf-8")
    return outdir


def test_formulas_are_found_in_order_with_entities_decoded() -> None:
    formulas = mathrender.find_formulas(PAGE)
    assert formulas == [
        mathrender.Formula("h_t \\in \\R^{H}", display=False),
        mathrender.Formula("a < b", display=False),
        mathrender.Formula("h_t = \\tanh(W h_{t-1} + U x_t)", display=True),
    ]


def test_a_page_gets_its_formulas_stylesheet_and_glyphs_and_loses_mathjax() -> None:
    rendered = [
        "<mjx-container>one</mjx-container>",
        "<mjx-container>two</mjx-container>",
        '<mjx-container display="true">three</mjx-container>',
    ]
    out = mathrender.render_page(
        PAGE,
        rendered,
        '<svg id="MJX-SVG-global-cache"></svg>',
        "mjx-container {\n  x: 1;\n}",
    )
    assert (
        '<span class="math notranslate '
        'nohighlight"><mjx-container>one</mjx-container></span>' in out
    )
    assert (
        '<span class="math notranslate '
        'nohighlight"><mjx-container>two</mjx-container></span>' in out
    )
    # A numbered equation keeps its id, its number and the number's link.
    assert re.search(
        r'<div class="math notranslate nohighlight" '
        r'id="equation-eq-step">\s*<span class="eqno">\(1\.1\)'
        r'<a class="headerlink"[^>]*>#</a></span><mjx-container '
        r'display="true">three</mjx-container></div>',
        out,
    )
    assert '<style id="MJX-SVG-styles">mjx-container { x: 1; }</style>\n</head>' in out
    assert '<body data-theme="light"><svg id="MJX-SVG-global-cache"></svg>' in out
    assert "\\(" not in out
    assert "\\[" not in out
    # neither its settings nor its script
    assert "MathJax" not in out.replace("<mjx-container", "")
    assert mathrender.unrendered_count(out) == 0
    # A second pass finds nothing to do and changes nothing.
    assert mathrender.find_formulas(out) == []
    assert mathrender.render_page(out, [], "", "") == out


def test_a_page_keeps_mathjax_while_a_formula_is_left_to_it() -> None:
    # not Sphinx's \[...\]: left to the browser
    raw = '<div class="math notranslate nohighlight">$$x$$</div>'
    page = PAGE.replace("</body>", raw + "\n</body>")
    out = mathrender.render_page(
        page, ["<mjx-container>a</mjx-container>"] * 3, "<svg></svg>", ""
    )
    assert mathrender.unrendered_count(out) == 1
    assert 'src="../_static/mathjax/tex-chtml.js' in out
    assert "window.MathJax" in out
    # speed.py's marker form is recognised too, and kept in the same case.
    marked = out.replace(
        '<script defer="defer" '
        'src="../_static/mathjax/tex-chtml.js?v=20daa33d"></script>',
        "<script "
        'data-book-mathjax="../_static/mathjax/tex-chtml.js?v=20daa33d"></script>',
    )
    assert mathrender.render_page(marked, [], "", "") == marked
    assert "data-book-mathjax" not in mathrender.render_page(
        marked.replace(raw, ""), [], "", ""
    )


def test_rendered_formulas_must_match_the_page() -> None:
    with pytest.raises(
        ValueError, match="rendered: 1 formulas given for a page holding 3"
    ):
        mathrender.render_page(PAGE, ["<mjx-container></mjx-container>"], "", "")


def test_a_page_without_formulas_is_left_alone_and_node_is_not_started(
    tmp_path: Path,
) -> None:
    plain = (
        "<!DOCTYPE html>\n<html><head><title>t</title></head><body><p>No math, 3 &lt; "
        "4.</p></body></html>\n"
    )
    site = write_site(tmp_path, {"search.html": plain, "_static/x.html": PAGE})
    # A node that cannot run proves that it is never started when no page holds a
    # formula.
    assert (
        mathrender.render_site(site, TEX, mathjax_source(), node="/nonexistent/node")
        == 0
    )
    assert (site / "search.html").read_text() == plain
    # not a page: _static and the like are skipped
    assert (site / "_static" / "x.html").read_text() == PAGE


def test_without_node_the_pages_keep_client_side_mathjax_with_one_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    site = write_site(tmp_path, {"book/a.html": PAGE, "book/b.html": PAGE})
    monkeypatch.setattr(mathrender, "_noted", False)
    caplog.set_level(logging.INFO)
    for _ in range(2):
        assert mathrender.render_site(site, TEX, mathjax_source(), node=None) is None
    notes = [
        r.getMessage() for r in caplog.records if "NOTE: no Node.js" in r.getMessage()
    ]
    assert len(notes) == 1, notes
    assert (site / "book" / "a.html").read_text() == PAGE
    assert mathrender.pages_loading_mathjax(site) == ["book/a.html", "book/b.html"]


def test_node_binary_follows_book_node(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOOK_NODE", "")
    assert mathrender.node_binary() is None
    monkeypatch.setenv("BOOK_NODE", "/nonexistent/node")
    assert mathrender.node_binary() is None
    # any executable on the PATH is taken as named
    monkeypatch.setenv("BOOK_NODE", "sh")
    assert mathrender.node_binary() is not None
    assert mathrender.node_binary().endswith("/sh")


@needs_node
def test_node_typesets_a_site_as_svg_with_assistive_mathml(tmp_path: Path) -> None:
    site = write_site(
        tmp_path,
        {
            "book/a.html": PAGE,
            "book/b.html": PAGE.replace("h_t", "c_t"),
            "search.html": "<html><head>\n"
            + MATHJAX_HEAD
            + "</head><body></body></html>",
        },
    )
    assert (
        mathrender.render_site(site, TEX, mathjax_source(), mathrender.node_binary())
        == 3
    )
    out = (site / "book" / "a.html").read_text()
    assert mathrender.find_formulas(out) == []
    assert mathrender.unrendered_count(out) == 0
    containers = re.findall(r"<mjx-container.*?</mjx-container>", out, re.S)
    assert len(containers) == 3
    for container in containers:
        assert 'jax="SVG"' in container
        assert 'aria-hidden="true"' in container
        # ...and its MathML read
        assert re.search(
            r"<mjx-assistive-mml[^>]*><math [^>]*>.+</math></mjx-assistive-mml>",
            container,
        )
    # the book's macro \R, from the Sphinx config
    assert '<mi mathvariant="double-struck">R</mi>' in out
    # a < b: decoded for MathJax, escaped again in its output
    assert "<mo>&lt;</mo>" in out
    assert 'display="true"' in containers[2]
    # glyphs take the text colour, so the dark theme recolours them
    assert 'fill="currentColor"' in out
    # Each glyph a formula draws is defined once, in the page's own hidden cache.
    used = set(re.findall(r'xlink:href="#([^"]+)"', out))
    cache = re.search(
        r'<svg style="display: none;" id="MJX-SVG-global-cache">.*?</svg>', out, re.S
    )
    assert cache
    assert used
    assert used <= set(re.findall(r'id="([^"]+)"', cache.group(0)))
    assert '<style id="MJX-SVG-styles">' in out
    assert "mjx-assistive-mml" in out
    assert "MathJax =" not in out
    assert "_static/mathjax/" not in out
    # The search page held no formula but MathJax's tags: they go, and no page loads
    # MathJax any more.
    assert "mathjax" not in (site / "search.html").read_text().lower()
    assert mathrender.pages_loading_mathjax(site) == []
    # A second pass changes nothing.
    assert (
        mathrender.render_site(site, TEX, mathjax_source(), mathrender.node_binary())
        == 0
    )


@needs_node
def test_a_formula_mathjax_rejects_fails_with_the_page_and_formula_named(
    tmp_path: Path,
) -> None:
    bad = PAGE.replace("a &lt; b", "\\frac{a}{b").replace("\\tanh", "\\tanhh")
    site = write_site(tmp_path, {"book/ok.html": PAGE, "book/bad.html": bad})
    with pytest.raises(mathrender.MathRenderError) as error:
        mathrender.render_site(site, TEX, mathjax_source(), mathrender.node_binary())
    message = str(error.value)
    assert "book/bad.html: formula 2 '\\\\frac{a}{b': Missing close brace" in message
    tanhh = "Undefined control sequence \\tanhh"
    assert (
        f"book/bad.html: formula 3 'h_t = \\\\tanhh(W h_{{t-1}} + U x_t)': {tanhh}"
        in message
    )
    assert "book/ok.html" not in message
    assert (site / "book" / "bad.html").read_text() == bad  # nothing written


@needs_node
def test_a_broken_mathjax_folder_is_a_clear_error(tmp_path: Path) -> None:
    site = write_site(tmp_path / "site", {"book/a.html": PAGE})
    with pytest.raises(
        mathrender.MathRenderError,
        match="expected the MathJax folder holding node-main.js",
    ):
        mathrender.render_site(
            site, TEX, tmp_path / "nothing", mathrender.node_binary()
        )


def test_mathjax_is_copied_only_while_a_page_loads_it(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from bookbuild.site import _on_build_finished

    site = write_site(tmp_path, {"book/a.html": PAGE})
    app = SimpleNamespace(outdir=str(site), builder=SimpleNamespace(format="html"))
    _on_build_finished(app, None)  # type: ignore[arg-type]
    assert (site / "_static" / "mathjax" / "tex-chtml.js").exists()
    (site / "book" / "a.html").write_text("<html><body>typeset</body></html>")
    _on_build_finished(app, None)  # type: ignore[arg-type]
    assert not (site / "_static" / "mathjax").exists()
