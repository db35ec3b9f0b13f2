"""The book build is itself a test: every chapter executed, no warning, no cell error,
every output as accepted.

`make test` builds the book once (``python -m bookbuild build --check``: the
engine executes what is stale, the gate compares every output with its
baseline, Sphinx renders with warnings as errors) and points these tests at the
result through ``BOOK_HTML_DIR``. Run alone, the ``site`` fixture builds the
checkout first. The ``book``-marked test repeats the whole thing from a clean
copy (``make test-clean``); CI does not need it, since CI's checkout is fresh.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bookbuild.build import ROOT, copy_sources, failures_in


@pytest.fixture(scope="session")
def site() -> Path:
    given = os.environ.get("BOOK_HTML_DIR")
    if given:
        html = Path(given).resolve()
        assert (html / "index.html").exists(), (
            f"BOOK_HTML_DIR={given} holds no built book"
        )
        return html
    proc = subprocess.run(
        [sys.executable, "-m", "bookbuild", "build"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    return ROOT / "_build" / "html"


def test_chapter_outputs_and_glue_reached_the_page(site: Path) -> None:
    page = (site / "book" / "recurrence.html").read_text()
    assert "max |difference|" in page  # a printed output of an executed cell
    assert "hand-written loop vs nn.RNN" in page
    assert 'alt="Left, a single box labelled f' in page  # figure alt text
    assert "fig-unrolled" in page
    building = (site / "book" / "building.html").read_text()
    assert "output profile" in building  # the build-information table was generated
    # a cached page never claims to be from the current commit
    assert "git commit" not in building


def test_no_markup_leaks_into_a_page_s_text(site: Path) -> None:
    """A role the parser did not take (a backtick too many: ``{cite:p}`key```) shows as
    its raw syntax in the page's text; no page may show one, in its prose or its code
    spans."""
    import re

    leaked = {}
    for page in sorted((site / "book").glob("*.html")):
        html = page.read_text()
        body = html[html.find("<main") : html.find("</main>")]
        # code the page shows on purpose (listings, cells, the guide's examples) is left
        # out: only prose is read
        prose = re.sub(r"<pre\b.*?</pre>", "", body, flags=re.S)
        text = re.sub(r"<[^>]+>", "", prose)
        found = re.findall(
            r"\{(?:cite:[a-z]+|glue:text|claim|nonresult|lit|lit-math|numref|ref|eq|doc|term)\}`",
            text,
        )
        if found:
            leaked[page.name] = found[:3]
    assert leaked == {}


def test_build_report_states_a_verdict_for_every_chapter(site: Path) -> None:
    report = (site / "book" / "build-report.html").read_text()
    for chapter in ("recurrence", "gradients", "gated"):
        assert f"book/{chapter}" in report or f"{chapter}.html" in report
    assert "matches the baseline" in report
    assert "git commit" in report


@pytest.mark.book
def test_clean_copy_builds_with_no_warning_and_matches_every_baseline(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    work = tmp_path_factory.mktemp("book")
    copy_sources(work)
    proc = subprocess.run(
        [sys.executable, "-m", "bookbuild", "build", "--check"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=2400,
    )
    log = proc.stdout + proc.stderr
    assert failures_in(log) == [], log[-4000:]
    warnings = [line for line in log.splitlines() if "WARNING" in line]
    assert warnings == [], "\n".join(warnings)
    assert proc.returncode == 0, log[-4000:]
    assert "matches baselines/" in log


def test_failures_in_finds_cell_errors() -> None:
    log = (
        "reading sources\n/x.md: WARNING: Executing notebook failed: "
        "CellExecutionError [mystnb.exec]\nfine\n"
    )
    assert failures_in(log) == [
        "/x.md: WARNING: Executing notebook failed: CellExecutionError [mystnb.exec]"
    ]
    assert failures_in("all good\n") == []


def test_every_image_of_every_page_is_lazy_and_sized_the_previews_too(
    site: Path,
) -> None:
    """bookbuild.site.speed's pass reached every ``<img>`` the build wrote, those in the
    link previews' templates included: each decodes asynchronously and states the pixel
    size of its local raster file."""
    import re

    from bookbuild.site.a11y import html_pages

    unsized = []
    for name, path in html_pages(site):
        for tag in re.findall(r"<img [^>]*>", path.read_text(encoding="utf-8")):
            src = re.search(r'\bsrc="([^"]+)"', tag)
            local = (
                src is not None
                and ":" not in src.group(1)
                and src.group(1).endswith(".png")
            )
            if 'decoding="async"' not in tag or (
                local and not re.search(r'\bwidth="\d+" height="\d+"', tag)
            ):
                unsized.append(f"{name}: {tag[-120:]}")
    assert unsized == [], f"{len(unsized)} image(s) not lazy and sized:\n" + "\n".join(
        unsized[:5]
    )


def test_search_index_and_snippets_hold_no_tex(site: Path) -> None:
    """Search finds and shows a formula as it reads (``tanh(cₜ)``), not as its TeX
    (``\\tanh(c_t)``, issue 53): neither Sphinx's index (its words and titles) nor the
    text a result's snippet is cut from holds one of the control words the book's
    formulas use. (Code keeps its own backslashes: a docstring's ``c_{t-1}``, a regex's
    ``\\b``, a plot's label ``r"$\\partial L$"``.)"""
    import json
    import re

    words = (
        "odot tau partial tanh rVert lVert sigma ell kappa mathrm delta approx bullet "
        "frac big text log ln mathcal qquad quad le ge dots cdot top sqrt in tilde hat "
        "operatorname left right begin end sum prod exp overleftarrow overrightarrow "
        "mapsto mathbb times to"
    )
    tex = re.compile(r"\\(?:" + "|".join(words.split()) + r")(?![A-Za-z])")
    index = json.loads(
        (site / "searchindex.js").read_text()[len("Search.setIndex(") : -1]
    )
    # (a word of no page is kept with an empty list by an incremental build)
    words = {w for w, pages in index["terms"].items() if pages or pages == 0}
    assert (
        words & {"odot", "mathrm", "frac", "lvert", "rvert", "qquad", "operatornam"}
        == set()
    )
    titles = [t for t in index["alltitles"] if tex.search(t)]
    assert titles == [], titles
    leaks = {}
    texts = sorted((site / "_static" / "book-search").rglob("*.js"))
    assert len(texts) >= 10, "no page texts for the search snippets"
    for path in texts:
        text = path.read_text(encoding="utf-8").replace("\\\\", "\\")
        # a cell's matplotlib label is code: r"$\\partial L$"
        found = tex.findall(re.sub(r"\$[^$]*\$", "", text))
        if found:
            leaks[path.stem] = found[:5]
    assert leaks == {}, f"snippet texts with raw TeX: {leaks}"


def test_plotted_data_is_the_data_s_own_and_diagrams_offer_none(site: Path) -> None:
    """Issue 53: a "Plotted data" CSV names its columns by the figure's axes (not
    ``axes,kind,x,y``), holds the data's values (no 16-digit float of a layout), and has
    rows; a schematic diagram offers no CSV at all."""
    import csv
    import io
    import re

    diagrams = {
        "recurrence": "fig-unrolled",
        "depth": "fig-d-wiring",
        "beyond": "fig-b-doubling-scan",
        "gated": "fig-m-lstm-cell",
    }
    links = 0
    linked = set()
    for page in sorted((site / "book").glob("*.html")):
        text = page.read_text()
        for href in re.findall(
            r'<p class="figure-data">Plotted data: <a href="([^"]+\.csv)"', text
        ):
            links += 1
            linked |= {
                (page.parent / href).resolve(),
                (page.parent / href[:-4]).with_suffix(".json").resolve(),
            }
            rows = list(
                csv.reader(
                    io.StringIO((page.parent / href).read_text(encoding="utf-8"))
                )
            )
            assert len(rows) > 1, f"{href}: a header and no data"
            assert rows[0][:2] != ["axes", "kind"], (
                f"{href}: plot coordinates, not the data's columns"
            )
            assert all(c.strip() for c in rows[0]), (
                f"{href}: an unnamed column: {rows[0]}"
            )
            digits = [
                (v, re.sub(r"^0+", "", re.sub(r"[-.]|e.*$", "", v)))
                for row in rows[1:]
                for v in row
                if re.fullmatch(r"-?[\d.]+(e[-+]?\d+)?", v)
            ]
            long = [
                v
                for v, significant in digits
                if len(significant.rstrip("0") or "0") > 12
            ]
            assert long == [], f"{href}: numbers longer than the data held: {long[:3]}"
        if page.stem in diagrams:
            figure = text.find(f'id="{diagrams[page.stem]}"')
            assert figure >= 0
            assert (
                '<p class="figure-data">'
                not in text[figure : text.find("</figure>", figure) + 40]
            ), f"{page.stem}: the diagram {diagrams[page.stem]} offers plotted data"
    assert links >= 20
    # no file left from a figure that is gone or now a diagram (an incremental build
    # writes over the folder)
    files = {p.resolve() for p in (site / "_static" / "figure-data").rglob("*.*")}
    assert files == linked, sorted(str(p) for p in files ^ linked)[:5]
