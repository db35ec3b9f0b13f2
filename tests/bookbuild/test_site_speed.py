"""Tests for bookbuild.site.speed: the post-build pass that makes the pages quicker to
show on a phone.

Lighthouse itself runs in ``make audit`` (tests/browser/test_lighthouse.py); the browser
tests check that every formula is still typeset and every figure keeps its shape. These
check each repair on the markup the themes write, quickly, and that a second pass
changes nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

from PIL import Image

from bookbuild.site import speed

HEAD = """<head>
    <script src="../_static/documentation_options.js?v=22f3372e"></script>
    <script src="../_static/doctools.js?v=9a2dae69"></script>
    <script defer="defer" src="../_static/book-site.js?v=4cff5a53"></script>
    <script>let toggleHintShow = 'Click to show';</script>
    <script data-sd-tabs-storage-prefix="sphinx-design-tab-id-" src="../_static/design-tabs.js?v=fcb327ea"></script>
    <script>window.MathJax = {"loader": {"load": ["ui/lazy"]}}</script>
    <script defer="defer" src="../_static/mathjax/tex-chtml.js?v=20daa33d"></script>
    <script>DOCUMENTATION_OPTIONS.pagename = 'book/x';</script>
</head>"""  # noqa: E501  (HTML as the build writes it)


def repaired(outdir: Path, text: str, name: str = "book/x.html") -> str:
    once = speed.speed_page(outdir, name, text)
    assert speed.speed_page(outdir, name, once) == once, (
        "a second pass changed the page"
    )
    return once


def test_head_scripts_run_after_parsing_except_the_options_inline_scripts_use(
    tmp_path: Path,
) -> None:
    out = repaired(tmp_path, HEAD)
    assert (
        '<script src="../_static/documentation_options.js?v=22f3372e"></script>' in out
    )
    assert '<script defer src="../_static/doctools.js?v=9a2dae69"></script>' in out
    assert (
        '<script data-sd-tabs-storage-prefix="sphinx-design-tab-id-" defer '
        'src="../_static/design-tabs.js' in out
    )
    assert (
        '<script defer="defer" src="../_static/book-site.js?v=4cff5a53"></script>'
        in out
    )  # already deferred
    # inline: untouched
    assert "<script>let toggleHintShow = 'Click to show';</script>" in out
    # No script left that blocks parsing, apart from the options.
    blocking = [line for line in out.splitlines() if "<script src=" in line]
    assert blocking == [
        '    <script src="../_static/documentation_options.js?v=22f3372e"></script>'
    ]


def test_mathjax_becomes_a_marker_that_book_site_js_loads_after_the_first_paint(
    tmp_path: Path,
) -> None:
    out = repaired(tmp_path, HEAD)
    assert 'tex-chtml.js?v=20daa33d"></script>' in out
    assert (
        "<script "
        'data-book-mathjax="../_static/mathjax/tex-chtml.js?v=20daa33d"></script>'
        in out
    )
    assert 'src="../_static/mathjax/' not in out
    script = (Path(speed.__file__).with_name("assets") / "book-site.js").read_text()
    assert "script[data-book-mathjax]" in script
    assert "lazyObserve" in script


def test_images_load_lazily_with_their_pixel_size(tmp_path: Path) -> None:
    (tmp_path / "_images").mkdir()
    Image.new("RGB", (1240, 622)).save(tmp_path / "_images" / "fig.png")
    page = (
        '<p><img alt="A plot." src="../_images/fig.png" style="width: 620px; '
        'height: 311px;" /></p>\n'
        '<img alt="gone" src="../_images/missing.png" />\n'
        '<img alt="remote" src="https://example.invalid/a.png" loading="eager" />'
    )
    out = repaired(tmp_path, page)
    first, missing, remote = out.splitlines()
    assert first == (
        '<p><img alt="A plot." src="../_images/fig.png" style="width: 620px; height: '
        '311px;" loading="lazy" decoding="async" width="1240" height="622" /></p>'
    )
    assert 'loading="lazy"' in missing
    assert "width=" not in missing
    assert 'loading="eager"' in remote
    assert 'loading="lazy"' not in remote
    assert "width=" not in remote


def test_speed_site_rewrites_each_page_once_and_leaves_static_files(
    tmp_path: Path,
) -> None:
    (tmp_path / "book").mkdir()
    (tmp_path / "_static").mkdir()
    (tmp_path / "book" / "x.html").write_text(HEAD)
    (tmp_path / "_static" / "y.html").write_text(HEAD)
    assert speed.speed_site(tmp_path) == 1
    assert speed.speed_site(tmp_path) == 0
    assert (tmp_path / "_static" / "y.html").read_text() == HEAD


def test_the_lazy_typesetting_extension_is_configured_and_vendored() -> None:
    import yaml

    from bookbuild.build import ROOT
    from bookbuild.site import MATHJAX_PARTS

    config = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"][
        "mathjax3_config"
    ]
    assert "ui/lazy" in config["loader"]["load"]
    assert "ui" in MATHJAX_PARTS  # copied with MathJax into _static/mathjax/ui/lazy.js


def test_code_blocks_state_their_lines_and_longest_line() -> None:
    page = (
        '<div class="highlight"><pre><span></span><span class="k">def</span> f():\n'
        "    return &quot;&lt;&gt;&quot;\n</pre></div>\n"
        '<pre style="color: red;">\none\ntwo\tx\nthree</pre><pre></pre>'
    )
    out = speed.code_blocks_sized(Path("."), "book/x.html", page)
    blocks = re.findall(r"<pre([^>]*)>", out)
    # two lines (the closing line break draws none), the second 15 characters once its
    # entities are read
    assert blocks[0] == ' style="--book-lines: 2" data-book-cols="15"'
    # a line break just after <pre> draws no line either; a tab counts to its stop; the
    # page's own style is kept
    assert blocks[1] == ' style="color: red; --book-lines: 3" data-book-cols="9"'
    assert blocks[2] == ' style="--book-lines: 1" data-book-cols="0"'
    # a second pass changes nothing
    assert speed.code_blocks_sized(Path("."), "book/x.html", out) == out
    assert speed.code_blocks_sized in speed.REPAIRS


def test_a_figure_states_the_width_that_keeps_its_smallest_text_readable_on_a_phone(
    tmp_path: Path,
) -> None:
    from PIL.PngImagePlugin import PngInfo

    from chapter_code.core.plotting import SMALLEST_TEXT_KEY

    (tmp_path / "_images").mkdir()
    info = PngInfo()
    # 12.5 pt at 200 dpi: 17.36 CSS px at the figure's own width
    info.add_text(SMALLEST_TEXT_KEY, "34.72")
    Image.new("RGB", (1262, 700)).save(tmp_path / "_images" / "drawn.png", pnginfo=info)
    Image.new("RGB", (600, 300)).save(tmp_path / "_images" / "photo.png")
    page = (
        '<img alt="A plot." src="../_images/drawn.png" style="width: 631px; '
        'height: 350px;" />\n'
        '<img alt="A photo." src="../_images/photo.png" />'
    )
    drawn, photo = repaired(tmp_path, page).splitlines()
    # 631 CSS px with text of 17.36 px: 11 px at 631 * 11 / 17.36 = 399.8 px
    assert 'style="width: 631px; height: 350px; --book-min-width: 400px;"' in drawn
    assert (
        speed.min_readable_width(tmp_path / "_images" / "drawn.png") * 34.72 / 1262
        >= speed.PHONE_TEXT_PX
    )
    assert "--book-min-width" not in photo
