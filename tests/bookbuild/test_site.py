"""Tests for bookbuild.site: the vendored MathJax and the bibliography's author-year
labels."""

from __future__ import annotations

from pathlib import Path

import pytest
from pybtex.database import Entry, Person

from bookbuild.site import (
    MATHJAX_PARTS,
    MATHJAX_PATH,
    author_year_label,
    copy_mathjax,
    mathjax_source,
)


def entry(authors: list[str], year: str = "1997", **fields: str) -> Entry:
    persons = {"author": [Person(a) for a in authors]}
    return Entry(
        "article", fields={"year": year, "title": "T", **fields}, persons=persons
    )


@pytest.mark.parametrize(
    ("authors", "label"),
    [
        (["Elman, Jeffrey L."], "Elman, 1997"),
        (
            ["Hochreiter, Sepp", 'Schmidhuber, J{\\"u}rgen'],
            "Hochreiter and Schmidhuber, 1997",
        ),
        (
            ["Bengio, Yoshua", "Simard, Patrice", "Frasconi, Paolo"],
            "Bengio et al., 1997",
        ),
        (['van Merri{\\"e}nboer, Bart'], "van Merriënboer, 1997"),
    ],
)
def test_author_year_labels(authors: list[str], label: str) -> None:
    assert author_year_label(entry(authors)) == label


def test_mathjax_is_copied_into_the_output_only(tmp_path: Path) -> None:
    source = mathjax_source()
    assert (source / "tex-chtml.js").exists()
    target = copy_mathjax(tmp_path)
    assert target == tmp_path / "_static" / "mathjax"
    assert (tmp_path / "_static" / MATHJAX_PATH).exists()
    assert (
        target / "output" / "chtml" / "fonts" / "woff-v2" / "MathJax_Main-Regular.woff"
    ).exists()
    assert all((target / part).exists() for part in MATHJAX_PARTS)
    assert not (target / "tex-svg-full.js").exists()  # only the parts the site loads
    # never the book's _static/
    assert not list((Path(__file__).parents[2] / "book").glob("_static/**/*.js"))


def test_a_panel_whose_static_figure_has_overlapping_texts_stops_the_build(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import matplotlib.pyplot as plt

    from bookbuild.lint import figure_layout
    from bookbuild.site.panels import BookPanel
    from chapter_code.panels.figures import static_figure

    class Directive:
        def error(self, message: str) -> Exception:
            return ValueError(message)

    fig = static_figure("keep-dial")
    try:
        BookPanel._layout_check(Directive(), "keep-dial")(fig)  # the real figure passes
        monkeypatch.setattr(
            figure_layout, "overlapping_texts", lambda f: ['"a" and "b"']
        )
        with pytest.raises(
            ValueError,
            match='^book-panel keep-dial: texts of its static figure overlap: "a" '
            'and "b"$',
        ):
            BookPanel._layout_check(Directive(), "keep-dial")(fig)
    finally:
        plt.close(fig)


def test_an_edited_asset_reaches_the_site_without_a_page_written(
    tmp_path: Path,
) -> None:
    from bookbuild.site import ASSETS, refresh_assets

    names = sorted(p.name for p in ASSETS.iterdir() if p.is_file())
    assert {"book-site.css", "book-site.js"} <= set(names)
    assert refresh_assets(tmp_path) == names  # a site without them gets every one
    (tmp_path / "_static" / "book-site.js").write_text(
        "// the version of an earlier build\n"
    )
    assert refresh_assets(tmp_path) == ["book-site.js"]
    assert (tmp_path / "_static" / "book-site.js").read_bytes() == (
        ASSETS / "book-site.js"
    ).read_bytes()
    assert refresh_assets(tmp_path) == []  # nothing differs: nothing copied
