"""The PDF edition (``make pdf``): its structure, fonts, figures, panels, tables and
links, as a reader checks them.

``make test`` builds the PDF after the HTML when TeX Live is present (it
installs it with apt where it can) and points ``$BOOK_PDF`` at it; without it
the tests that read the PDF are skipped with the reason. They read the PDF's
text (pdftotext), its fonts (pdffonts) and images (pdfimages), the LaTeX log
beside it (missing glyphs, overfull lines), and pages rendered as a reader sees
them (pdftoppm). ``bookbuild.site.pdf``'s tree surgery is also tested directly on
small documents, without TeX.
"""

from __future__ import annotations

import html as html_lib
import json
import os
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
import yaml
from docutils import nodes
from sphinx import addnodes

from bookbuild.site import pdf as book_pdf
from bookbuild.site.pdf import (
    BODY_PT,
    LARGEST_FIGURE_TEXT_PT,
    PANEL_HEADING,
    SOLUTIONS_TITLE,
    TABLE_CHARS,
    TABLE_PADDING,
    bibliography_in_its_appendix,
    chapters_as_chapters,
    column_widths,
    figure_width_inches,
    lab_links,
    panels_as_figures,
    print_wording,
)

ROOT = Path(__file__).resolve().parents[2]
APPENDICES = [
    "book/glossary",
    "book/bibliography",
    "book/building",
    "book/checked",
    "book/build-report",
]
#: the appendices' letters: Appendix A holds the solutions (no page of its own), the
#: reference pages follow
LETTERS = "BCDEF"
#: what a missing glyph leaves in extracted text, in the renderers that show one
MISSING_GLYPH_MARKS = ["\ufffd", "\u2370", "\u25a1"]


def chapters() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [c["file"] for part in toc["parts"] for c in part["chapters"]]


def numbered_chapters() -> list[str]:
    return [p for p in chapters() if p not in APPENDICES]


def title_of(page: str) -> str:
    text = (ROOT / f"{page}.md").read_text(encoding="utf-8")
    return next(line[2:].strip() for line in text.splitlines() if line.startswith("# "))


def panels_on_pages() -> list[tuple[str, str]]:
    """(page, panel name) for every ``{book-panel}`` directive of the book."""
    found = []
    for page in chapters():
        text = (ROOT / f"{page}.md").read_text(encoding="utf-8")
        found += [
            (page, m.group(1))
            for m in re.finditer(r"^```\{book-panel\}\s+(\S+)", text, re.MULTILINE)
        ]
    return found


def flat(text: str) -> str:
    return " ".join(text.split())


def squeezed(text: str) -> str:
    """Text without any whitespace: a path broken across lines reads whole again."""
    return "".join(text.split())


# --- the built PDF
# ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pdf() -> Path:
    given = os.environ.get("BOOK_PDF")
    if not given:
        pytest.skip(
            "BOOK_PDF is not set: `make test` sets it after building the PDF (`make "
            "pdf`, needs TeX Live)"
        )
    path = Path(given)
    if not path.is_file():
        pytest.fail(f"BOOK_PDF={given} is not a file; build it with `make pdf`")
    for tool in ("pdftotext", "pdfinfo", "pdffonts", "pdfimages", "pdftoppm"):
        if shutil.which(tool) is None:
            pytest.fail(
                f"{tool} (poppler-utils) is needed to read the PDF; `make tex` "
                "installs it"
            )
    return path


@pytest.fixture(scope="module")
def text(pdf: Path) -> str:
    return subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


@pytest.fixture(scope="module")
def pages(text: str) -> list[str]:
    """The text of each page (pdftotext separates pages by form feeds)."""
    found = text.split("\f")
    return found[:-1] if found and not found[-1].strip() else found


@pytest.fixture(scope="module")
def log(pdf: Path) -> str:
    path = pdf.with_suffix(".log")
    if not path.is_file():
        pytest.fail(
            f"no LaTeX log beside {pdf} ({path.name}); build the PDF with `make pdf`"
        )
    return path.read_text(encoding="utf-8", errors="replace")


@pytest.fixture(scope="module")
def tex(pdf: Path) -> str:
    path = pdf.with_suffix(".tex")
    if not path.is_file():
        pytest.fail(f"no LaTeX source beside {pdf}; build the PDF with `make pdf`")
    return path.read_text(encoding="utf-8")


def first_line(page: str) -> str:
    return next((line.strip() for line in page.splitlines() if line.strip()), "")


def chapter_openings(pages: list[str]) -> dict[int, str]:
    """Page index -> "Chapter 3" / "Appendix B" / "Preface" / "Index" for the pages that
    open one."""
    found = {}
    for n, page in enumerate(pages):
        line = first_line(page)
        if re.fullmatch(r"(Chapter \d+|Appendix [A-Z])", line) or line in (
            "Preface",
            "Index",
        ):
            found[n] = line
    return found


def test_page_count_is_a_book(pdf: Path) -> None:
    info = subprocess.run(
        ["pdfinfo", str(pdf)], capture_output=True, text=True, check=True
    ).stdout
    count = int(re.search(r"^Pages:\s+(\d+)", info, re.MULTILINE).group(1))
    assert 40 <= count <= 600, count


def test_front_matter_is_a_title_page_the_contents_and_a_preface(
    pages: list[str],
) -> None:
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert flat(config["title"]) in flat(pages[0]), "page 1 is the title page"
    assert first_line(pages[1]) == "Contents"
    openings = chapter_openings(pages)
    preface = next(n for n, what in openings.items() if what == "Preface")
    chapter_one = next(n for n, what in openings.items() if what == "Chapter 1")
    assert 1 < preface < chapter_one
    # front matter in roman page numbers, the chapters from arabic 1
    assert re.search(r"^\s*[ivx]+\s*$", pages[preface].rstrip().splitlines()[-1]), (
        "the preface is numbered in roman"
    )
    assert pages[chapter_one].rstrip().splitlines()[-1].strip() == "1", (
        "Chapter 1 begins on page 1"
    )


def test_every_chapter_is_a_numbered_chapter_and_reference_pages_are_appendices(
    text: str,
) -> None:
    flat_text = flat(text).lower()
    for n, page in enumerate(numbered_chapters(), start=1):
        title = title_of(page)
        assert re.search(rf"^\f?{n}\s+{re.escape(title)}", text, re.MULTILINE), (
            f"chapter {n} {title!r} not in the TOC"
        )
        assert flat_text.count(flat(title).lower()) >= 2, (
            f"chapter {n} has no heading of its own"
        )
    assert re.search(rf"^\f?A\s+{re.escape(SOLUTIONS_TITLE)}", text, re.MULTILINE), (
        "no Appendix A of solutions"
    )
    for letter, page in zip(LETTERS, APPENDICES, strict=True):
        assert re.search(
            rf"^\f?{letter}\s+{re.escape(title_of(page))}", text, re.MULTILINE
        ), page
    contents = text.split("\f")[1:4]
    lines = [line.strip() for part in contents for line in part.splitlines()]
    assert any(re.match(r"Preface\b", line) for line in lines)
    assert any(re.match(r"Index\b", line) for line in lines)
    # no second, unnumbered bibliography after the appendices
    assert not any(re.match(r"Bibliography\s+\d+$", line) for line in lines), (
        "an unnumbered Bibliography"
    )


def test_running_heads_name_the_chapter(pages: list[str]) -> None:
    openings = chapter_openings(pages)
    titles = {
        f"Chapter {n}": title_of(p) for n, p in enumerate(numbered_chapters(), start=1)
    }
    titles.update(
        {
            f"Appendix {letter}": title_of(p)
            for letter, p in zip(LETTERS, APPENDICES, strict=True)
        }
    )
    titles["Appendix A"] = SOLUTIONS_TITLE
    current, wrong = None, []
    for n, page in enumerate(pages):
        if n in openings:
            current = openings[n]
            continue
        if current is None or not page.strip():
            continue
        head = first_line(page)
        expected = f"{current}. {titles[current]}" if current in titles else current
        if not flat(head).startswith(flat(expected)[:40]):
            wrong.append((n + 1, head[:80], expected))
    assert not wrong, (
        f"pages whose running head does not name their chapter: {wrong[:5]}"
    )


def site_bibliography_labels() -> list[str] | None:
    html_dir = Path(os.environ.get("BOOK_HTML_DIR") or ROOT / "_build" / "html")
    page = html_dir / "book" / "bibliography.html"
    if not page.is_file():
        return None
    html = page.read_text(encoding="utf-8")
    main = html[html.find("<main") :]
    labels = re.findall(
        r'<span class="label"><span class="fn-bracket">\[</span>(.*?)'
        r'<span class="fn-bracket">\]</span></span>',
        main,
        re.DOTALL,
    )
    return [re.sub(r"<[^>]+>", "", label).strip() for label in labels]


def test_the_bibliography_is_appendix_c_with_the_sites_entries_and_labels(
    tex: str, pages: list[str]
) -> None:
    start = tex.index(r"\chapter{Bibliography}")
    appendix = tex[start : tex.index(r"\chapter{", start + 10)]
    assert r"\begin{sphinxthebibliography}" in appendix, (
        "the entries are not inside Appendix C"
    )
    assert tex.count(r"\begin{sphinxthebibliography}") == 1
    labels = [
        re.sub(r"\\sphinxhyphen\{\}", "-", label)
        for label in re.findall(r"\\bibitem\[(.*?)\]\{", appendix)
    ]
    assert len(labels) >= 20
    site = site_bibliography_labels()
    if site is not None:
        assert labels == site, (
            "the PDF's bibliography differs from the site's (entries, labels or order)"
        )
    printed = flat(
        "".join(
            p for p in pages if first_line(p).startswith(("Appendix C", "Appendix C."))
        )
    )
    for label in labels[:3] + labels[-3:]:
        assert f"[{flat(label)}]" in printed, label


def test_the_index_holds_the_glossary_terms_with_the_pages_that_use_them(
    pages: list[str], pdf: Path
) -> None:
    openings = chapter_openings(pages)
    start = next(n for n, what in openings.items() if what == "Index")
    index = flat(" ".join(pages[start:]))
    glossary = (ROOT / "book" / "glossary.md").read_text(encoding="utf-8")
    block = glossary.split("```{glossary}", 1)[1].split("```", 1)[0]
    terms = [
        line.strip()
        for line in block.splitlines()
        if line.strip() and not line.startswith((" ", ":"))
    ]
    assert len(terms) > 10
    missing = [t for t in terms if t not in index]
    assert not missing, missing
    # one entry per term: its uses in the chapters merge with its glossary entry
    ind = pdf.with_suffix(".ind").read_text(encoding="utf-8")
    items = [
        squeezed(item)
        for item in re.findall(r"^\s*\\item \\spxentry\{(.*?)\},", ind, re.MULTILINE)
    ]
    assert len(items) == len(set(items)), sorted(
        {i for i in items if items.count(i) > 1}
    )
    # a term used in the chapters lists more than its glossary page
    entries = re.findall(r"([a-z][a-z -]+?), ((?:\d+, )*\d+)", index)
    assert sum(len(pages.split(", ")) > 1 for _, pages in entries) >= 5, entries[:10]


def test_panels_print_as_unnumbered_figures_with_a_legend_in_print_wording(
    text: str, tex: str
) -> None:
    """The site numbers no panel, so the PDF does not: a panel's figure is headed
    "Interactive panel" (a legend, no caption), and the figures numbered in the PDF are
    the site's (test_figure_and_table_numbers_...)."""
    panels = panels_on_pages()
    assert len(panels) >= 5
    whole = squeezed(text)
    for page, name in panels:
        assert squeezed(f"{page}.html#panel-{name}") in whole, (
            f"panel {name}: no address of its interactive version"
        )
    captions = re.findall(
        r"\\begin\{sphinxlegend\}\s*\\sphinxAtStartPar\s*\\sphinxstylestrong\{"
        + re.escape(PANEL_HEADING)
        + r"\. .*?Interactive in the HTML edition[^\n]*",
        tex,
    )
    assert len(captions) == len(panels), "each panel is a figure with a legend"
    assert not re.search(r"\\caption\{[^\n]*Interactive in the HTML edition", tex), (
        "a panel has a numbered caption"
    )
    # the site's HTML around math, or a slider's {symbol} placeholder, printed as text
    for caption in captions:
        assert "book-panel-tex" not in caption, caption[:160]
        assert not re.search(r"\\\{\w+\\\}", caption), caption[:300]
    assert flat(text).count("Interactive in the HTML edition") == len(panels)
    for browser_words in ("move a slider", "your browser", "in your browser"):
        assert browser_words not in flat(text), browser_words


def html_dir() -> Path:
    return Path(os.environ.get("BOOK_HTML_DIR") or ROOT / "_build" / "html")


def caption_words(caption: str) -> tuple[str, ...]:
    """A caption's first three words, letters only (math prints differently in the two
    editions)."""
    return tuple(re.findall(r"[A-Za-z]+", caption)[:3])


def site_numbers() -> list[tuple[str, tuple[str, ...]]] | None:
    """("Fig. 3.7", its caption's first words) for every numbered figure and table of
    the site, in book order (figcaption and table caption only: a link's preview repeats
    a caption), or None without a built site."""
    found: list[tuple[str, tuple[str, ...]]] = []
    for page in chapters():
        path = html_dir() / f"{page}.html"
        if not path.is_file():
            return None
        html = path.read_text(encoding="utf-8")
        for match in re.finditer(
            r"<(?:figcaption>\s*<p|caption)>\s*<span "
            r'class="caption-number">((?:Fig\.|Table) '
            r'[\d.]+) </span><span class="caption-text">(.*?)</span>',
            html,
            re.DOTALL,
        ):
            text = html_lib.unescape(re.sub(r"<[^>]+>", " ", match.group(2)))
            found.append((match.group(1), caption_words(text)))
    return found


def pdf_numbers(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """The same for the PDF: every caption line "Fig. 3.7: ..." or "Table 2.2: ..."
    (pdftotext)."""
    return [
        (m.group(1), caption_words(m.group(2)))
        for m in re.finditer(
            r"^\s*((?:Fig\.|Table) \d+\.\d+): (.*)$", text, re.MULTILINE
        )
    ]


def test_figure_and_table_numbers_and_captions_are_the_sites(text: str) -> None:
    """One story in both editions: the PDF numbered the panels' static figures as
    figures (the site's Fig. 3.7 was the PDF's Fig. 3.10), and a long table without a
    caption took a table number (the site's Table 2.2 was the PDF's 2.3). Every numbered
    figure and table, solutions' included, carries the site's number and caption."""
    site = site_numbers()
    if site is None:
        pytest.skip(f"no built site in {html_dir()} to compare with (`make book`)")
    printed = pdf_numbers(text)
    assert len(site) >= 40
    assert sorted(printed) == sorted(site), (
        f"only in the PDF: {sorted(set(printed) - set(site))}; only on the site: "
        f"{sorted(set(site) - set(printed))}"
    )
    assert len({n for n, _ in printed}) == len(printed), "a number printed twice"


def test_the_build_appendices_print_as_short_summaries_with_their_counts(
    text: str, pages: list[str]
) -> None:
    """What the build checked and the build report print their summaries (counts, where
    the full report is), not the per-claim list and the report's JSON and file lists (64
    of the PDF's 261 pages before); the site keeps both whole."""
    openings = chapter_openings(pages)
    letters = dict(zip(APPENDICES, LETTERS, strict=True))
    spans = {}
    for page in ("book/checked", "book/build-report"):
        start = next(
            n for n, what in openings.items() if what == f"Appendix {letters[page]}"
        )
        end = min(n for n in openings if n > start)
        spans[page] = flat(" ".join(pages[start:end]))
        assert end - start <= 2, f"{page} prints {end - start} pages"
    checked = (ROOT / "book" / "checked.md").read_text(encoding="utf-8")
    conditions, claims = re.search(
        r"checked \{lit\}`(\d+)` conditions behind \{lit\}`(\d+)` claims", checked
    ).groups()
    assert (
        f"This build checked {conditions} conditions behind {claims} claims."
        in spans["book/checked"]
    )
    assert "book/checked.html" in spans["book/checked"]
    for page in numbered_chapters():
        assert flat(title_of(page)) in spans["book/checked"], page
    report = spans["book/build-report"]
    compared = re.search(
        r"This build compared (\d+) outputs of (\d+) pages: (\d+) equal bit "
        r"for bit, (\d+) equal "
        r"within their declared precision, (\d+) different\.",
        report,
    )
    assert compared, report[:600]
    total, _, exact, within, differ = (int(n) for n in compared.groups())
    assert total == exact + within + differ > 100
    assert "book/build-report.html" in report
    for plumbing in ("What each chapter read", "Memoized runs", "condition:", ".json"):
        assert plumbing not in report + spans["book/checked"], plumbing
    site = html_dir() / "book" / "build-report.html"
    if site.is_file():  # the site keeps the full report, and says the same count
        html = site.read_text(encoding="utf-8")
        assert "What each chapter read" in html
        assert (
            f"This build: {exact} output(s) bit for bit, {within} within"
            in html_lib.unescape(html)
        )
        assert 'id="check-' in (html_dir() / "book" / "checked.html").read_text(
            encoding="utf-8"
        )


def test_a_long_table_without_a_caption_does_not_borrow_a_table_number(
    tex: str,
) -> None:
    tables = re.findall(r"\\begin\{longtable\}(.*?)\\endhead", tex, re.DOTALL)
    assert tables
    for table in tables:
        first_head, continued = table.split("\\endfirsthead", 1)
        assert ("\\thetable" in continued) == ("\\caption{" in first_head), continued[
            :200
        ]


def exercises_on_pages() -> dict[str, list[str]]:
    """Page -> the labels of its exercises that have a solution, in the page's order."""
    found = {}
    for page in numbered_chapters():
        source = (ROOT / f"{page}.md").read_text(encoding="utf-8")
        found[page] = re.findall(
            r"^`{3,}\{solution(?:-start)?\}\s+(\S+)", source, re.MULTILINE
        )
    return found


def test_solutions_are_appendix_a_per_chapter_each_under_its_exercise_with_links_both_ways(  # noqa: E501  (the test's name)
    text: str, tex: str, pages: list[str]
) -> None:
    solutions = exercises_on_pages()
    assert sum(len(v) for v in solutions.values()) >= 20
    start = tex.index(r"\chapter{" + SOLUTIONS_TITLE + "}")
    appendix = tex[start : tex.index(r"\chapter{", start + 10)]
    assert tex.index(r"\appendix") < start < tex.index(r"\chapter{Glossary}")
    # per chapter, in the book's order, each solution under its exercise's number and
    # title, linked back
    headings = re.findall(r"\\section\{Chapter (\d+): (.*?)\}", appendix)
    chapters_with = [p for p in numbered_chapters() if solutions[p]]
    assert [(int(n), flat(t)) for n, t in headings] == [
        (numbered_chapters().index(p) + 1, flat(title_of(p))) for p in chapters_with
    ]
    # each solution's heading (a solution's text may also refer to another exercise by
    # its number)
    in_order = re.findall(
        r"Solution to \\hyperref\[exercise:([\w-]+)\]\{Exercise \d+\.\d+", appendix
    )
    assert in_order == [label for p in chapters_with for label in solutions[p]]
    for label in in_order:
        assert f"\\pageref*{{exercise:{label}}}" in appendix, label
        assert f"\\hyperref[book-solution-{label}]" in tex[:start], (
            f"exercise {label} does not point to its solution"
        )
    # what a reader sees: the appendix holds every solution's title, and no page says
    # they are left out
    openings = chapter_openings(pages)
    first = next(n for n, what in openings.items() if what == "Appendix A")
    after = min(n for n in openings if n > first)
    printed = flat(" ".join(pages[first:after]))
    assert printed.count("Solution to Exercise") == len(in_order)
    assert re.search(
        r"Solution to Exercise 1\.1 \(.+?\) \(exercise on page \d+\)", printed
    )
    assert flat(text).count("The solution is on page") == len(in_order)
    for omitted in (
        "omits the solutions",
        "solutions to the exercises are left out",
        "omits the exercise solutions",
    ):
        assert omitted not in flat(text), omitted


def test_no_terminal_or_kernel_noise(text: str) -> None:
    assert "\x1b[" not in text
    for noise in (
        "[0m",
        "Traceback (most recent call last)",
        "DeprecationWarning",
        "UserWarning",
    ):
        assert noise not in text, noise


def test_listings_are_numbered_and_cells_are_not(tex: str) -> None:
    numbered = tex.count("numbers=left")
    verbatim = tex.count(r"\begin{sphinxVerbatim}")
    assert numbered > 10
    assert numbered < verbatim  # code cells and outputs are not numbered


def test_no_glyph_is_missing(log: str, text: str) -> None:
    missing = sorted(
        set(re.findall(r"Missing character: There is no (.+?) in font", log))
    )
    assert not missing, f"characters the fonts lack: {missing}"
    for mark in MISSING_GLYPH_MARKS:
        assert mark not in text, f"a missing-glyph mark {mark!r} in the text"


def test_every_reference_resolves(log: str, text: str) -> None:
    undefined = sorted(
        set(re.findall(r"LaTeX Warning: (?:Hyper r|R)eference `([^'\n]+)", log))
    )
    assert not undefined, (
        f"references LaTeX could not resolve (they print as ??): {undefined}"
    )
    assert "??" not in text


def test_no_overfull_line_wider_than_one_point(log: str) -> None:
    overfull = [
        (float(width), where)
        for width, where in re.findall(
            r"^Overfull \\hbox \(([\d.]+)pt too wide\) (.*)$", log, re.MULTILINE
        )
    ]
    wide = [f"{width:.1f} pt {where}" for width, where in overfull if width > 1.0]
    assert not wide, f"{len(wide)} overfull lines (see the LaTeX log): {wide[:8]}"


#: how far a page may run into its bottom margin where framed.sty splits a code box
#: across pages (it overshoots by up to about 2 pt, invisibly); a table or figure taller
#: than the page is far more
FRAME_SPLIT_PT = 3.0


def test_nothing_runs_off_the_foot_of_a_page(log: str) -> None:
    overfull = [
        (float(height), where)
        for height, where in re.findall(
            r"^Overfull \\vbox \(([\d.]+)pt too high\) (.*)$", log, re.MULTILINE
        )
    ]
    tall = [
        f"{height:.1f} pt {where}"
        for height, where in overfull
        if height > FRAME_SPLIT_PT
    ]
    assert not tall, f"boxes taller than their page (see the LaTeX log): {tall[:8]}"


def test_one_font_family_for_text_code_and_math(pdf: Path) -> None:
    listed = subprocess.run(
        ["pdffonts", str(pdf)], capture_output=True, text=True, check=True
    ).stdout
    names = {
        line.split()[0].split("+")[-1]
        for line in listed.splitlines()[2:]
        if line.strip()
    }
    assert names, listed
    others = sorted(n for n in names if not n.startswith("DejaVu"))
    assert not others, f"fonts outside the DejaVu family: {others}"


def test_figures_are_set_so_their_text_is_at_most_the_body_size(
    tex: str, pdf: Path
) -> None:
    included = re.findall(
        r"\\sphinxincludegraphics(\[[^\]]*\])?\{\{?([^}]+?)\}?\}", tex
    )
    assert len(included) > 10
    for options, name in included:
        width = re.search(r"width=([\d.]+)in", options or "")
        assert width, (
            f"{name} has no width of its own: it would be set at the text width"
        )
        png = pdf.parent / (name if name.endswith(".png") else f"{name}.png")
        size = book_pdf._png_size(png)
        assert size is not None, png
        natural = size[0] / size[2]
        text_scale = float(width.group(1)) / natural
        assert text_scale * LARGEST_FIGURE_TEXT_PT <= BODY_PT + 0.05, (name, text_scale)


def test_each_labs_notebooks_are_named_with_where_the_site_offers_them(
    text: str,
) -> None:
    whole = squeezed(text)
    labs = [
        p
        for p in numbered_chapters()
        if "\n## Lab\n" in (ROOT / f"{p}.md").read_text(encoding="utf-8")
    ]
    assert len(labs) >= 5
    for page in labs:
        slug = Path(page).name
        for edition in ("student", "solution"):
            assert f"({slug}-{edition}.ipynb)" in whole, (page, edition)
        assert f"{page}.html#lab" in whole, page
    assert "_build/labs" not in whole, "a build folder printed"
    assert "labs-student.zip" in whole


def test_rendered_pages_show_no_empty_page_no_uncaptioned_figure_no_missing_glyph(
    pdf: Path, pages: list[str], tmp_path: Path
) -> None:
    """What a reader leafing through sees: pages rendered by pdftoppm, at a low
    resolution, in grey."""
    subprocess.run(
        ["pdftoppm", "-gray", "-r", "20", str(pdf), str(tmp_path / "p")], check=True
    )
    rendered = sorted(tmp_path.glob("p-*.pgm"))
    assert len(rendered) == len(pages)
    openings = chapter_openings(pages)
    blank = []
    for n, image in enumerate(rendered):
        ink = _ink(image)
        if ink < 0.0005 and n + 1 not in openings and n != len(rendered) - 1:
            blank.append(n + 1)
    assert not blank, f"empty pages that do not come before a chapter: {blank}"
    listed = subprocess.run(
        ["pdfimages", "-list", str(pdf)], capture_output=True, text=True, check=True
    ).stdout
    with_images = sorted(
        {
            int(line.split()[0])
            for line in listed.splitlines()[2:]
            if line.split() and line.split()[2] == "image"
        }
    )
    assert with_images
    uncaptioned = [
        p
        for p in with_images
        if not re.search(rf"Fig\. \d+\.\d+: |{PANEL_HEADING}\. ", flat(pages[p - 1]))
    ]
    assert not uncaptioned, f"pages with a figure and no figure caption: {uncaptioned}"
    for p in with_images:
        page_text = subprocess.run(
            ["pdftotext", "-f", str(p), "-l", str(p), str(pdf), "-"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert not any(mark in page_text for mark in MISSING_GLYPH_MARKS), p


def _ink(pgm: Path) -> float:
    """The share of inked pixels on a rendered page, its head and foot (running head,
    page number) left out."""
    data = pgm.read_bytes()
    header = re.match(rb"P5\s+(\d+)\s+(\d+)\s+(\d+)\s", data)
    assert header, pgm
    width, height = int(header.group(1)), int(header.group(2))
    pixels = data[header.end() :]
    body = pixels[width * int(height * 0.085) : width * (height - int(height * 0.07))]
    return sum(1 for value in body if value < 230) / max(len(body), 1)


def test_every_figure_is_embedded(pdf: Path) -> None:
    listed = subprocess.run(
        ["pdfimages", "-list", str(pdf)], capture_output=True, text=True, check=True
    ).stdout
    embedded = sum(
        1
        for line in listed.splitlines()[2:]
        if line.split() and line.split()[2] == "image"
    )
    figures = 0
    for page in chapters():
        baseline = ROOT / "baselines" / "cpu-avx2" / f"{Path(page).name}.json"
        if baseline.is_file():
            records = json.loads(baseline.read_text())
            figures += sum(
                out.get("kind") == "image" for outs in records.values() for out in outs
            )
    assert figures > 10
    assert embedded >= figures + len(panels_on_pages()), (embedded, figures)


# --- bookbuild.site.pdf on small documents, without TeX
# --------------------------------------------------


def small_book() -> tuple[nodes.document, nodes.section]:
    doc = nodes.document(None, None)
    root = nodes.section(
        "", nodes.title("", "Book"), nodes.paragraph("", "Preface text.")
    )
    notation = nodes.section(
        "", nodes.title("", "Notation"), nodes.paragraph("", "Symbols.")
    )
    last = nodes.section("", nodes.title("", "This build"))
    for name in ["book/recurrence", "book/glossary", "book/bibliography"]:
        included = addnodes.start_of_file(docname=name)
        included += nodes.section("", nodes.title("", name), docname=name)
        last += included
    root += [notation, last]
    doc += root
    return doc, root


def test_chapters_are_lifted_out_of_the_root_page_which_becomes_the_preface() -> None:
    doc, root = small_book()
    chapters_as_chapters(doc)
    kinds = [type(c).__name__ for c in root.children]
    assert kinds == [
        "title",
        "raw",
        "paragraph",
        "rubric",
        "paragraph",
        "rubric",
        "raw",
        "start_of_file",
        "raw",
        "start_of_file",
        "start_of_file",
    ]
    assert root.children[1].astext() == "\\bookfrontchapter{Preface}\n"
    assert root.children[6].astext() == "\\bookmainmatter\n"
    assert root.children[8].astext() == "\\appendix\n"
    assert [
        c["docname"] for c in root.children if isinstance(c, addnodes.start_of_file)
    ] == ["book/recurrence", "book/glossary", "book/bibliography"]


def test_the_bibliography_shows_labels_and_no_tex_or_n_d(text: str) -> None:
    """The list of references at the end: author-year labels and the source documents'
    shorthands, no "n.d." and no TeX left as text (the entries of book/references.bib
    are checked one by one in test_citations.py)."""
    # from the first entry to the end of Appendix C (the appendices after it and the
    # index hold code and TeX)
    references = text[text.rindex("Bahdanau et al., 2015") :].split("Appendix D")[0]
    for label in (
        "Elman, 1990",
        "Hochreiter and Schmidhuber, 1997",
        "RNN textbook chapter",
        "Sequence-models workshop",
        "Gated-RNN textbook section",
    ):
        assert label in references, label
    assert "n.d." not in references
    assert not re.search(r"\\[A-Za-z]+|\$", references), re.search(
        r".{40}(\\[A-Za-z]+|\$).{40}", references
    )


def test_the_gathered_citations_move_into_the_bibliography_appendix() -> None:
    from sphinx.builders.latex.nodes import thebibliography

    doc, root = small_book()
    chapters_as_chapters(doc)
    citations = thebibliography()
    citations += nodes.citation(
        "", nodes.label("", "Elman, 1990"), nodes.paragraph("", "Finding structure.")
    )
    doc += citations
    bibliography_in_its_appendix(doc)
    assert citations.parent is not doc
    assert citations.parent["docname"] == "book/bibliography"


def panel_box(name: str = "forget-power") -> nodes.container:
    """A panel as bookbuild.site.panels builds it."""
    box = nodes.container(classes=["book-panel"], ids=[f"panel-{name}"])
    box += nodes.paragraph(
        "",
        "",
        nodes.strong("", "The forget-gate power, with a slider for the forget bias"),
        classes=["book-panel-title"],
    )
    static = nodes.container(classes=["book-panel-static"])
    static += nodes.figure("", nodes.image(uri="_build/panels/x.png", alt="alt"))
    box += [
        nodes.raw("", "<noscript>", format="html"),
        static,
        nodes.raw("", "</noscript>", format="html"),
    ]
    box += nodes.paragraph(
        "", "What the path keeps after k steps.", classes=["book-panel-summary"]
    )
    box += nodes.paragraph(
        "",
        "Computed, here at build time and in your browser when you move a slider.",
        classes=["book-panel-note"],
    )
    box += nodes.paragraph(
        "", "", nodes.strong("", "Check yourself. "), nodes.Text("Why?")
    )
    box += nodes.raw(
        "",
        '<details class="book-panel-answer"><summary>Answer</summary>',
        format="html",
    )
    box += nodes.paragraph("", "Because.")
    box += nodes.raw("", "</details>", format="html")
    beats = nodes.enumerated_list()
    beats += [nodes.list_item("", nodes.paragraph("", f"Beat {n}.")) for n in range(4)]
    box += beats
    data = {"controls": [{"id": "bias", "label": "forget-gate bias b_f"}]}
    box += nodes.raw(
        "",
        '<script type="application/json" '
        f'class="book-panel-data">{json.dumps(data)}</script>',
        format="html",
    )
    return box


def test_a_panel_becomes_a_figure_with_a_legend_and_no_number_followed_by_its_text_in_print_wording() -> (  # noqa: E501  (the test's name)
    None
):
    doc = nodes.document(None, None)
    section = nodes.section(
        "", nodes.title("", "Gated"), panel_box(), docname="book/gated"
    )
    doc += section
    panels_as_figures(doc)
    print_wording(doc)
    figure = section.children[1]
    assert isinstance(figure, nodes.figure)
    assert figure["ids"] == ["panel-forget-power"]
    assert figure.next_node(nodes.caption) is None, (
        "a caption would number the panel, which the site does not"
    )
    caption = figure.next_node(nodes.legend).astext()
    assert caption.startswith(
        f"{PANEL_HEADING}. The forget-gate power. What the path keeps after k steps."
    )
    assert (
        "Interactive in the HTML edition, where the panel plays its 4 beats and has a "
        "slider for forget-gate bias b_f: book/gated.html#panel-forget-power."
    ) in caption
    after = flat(" ".join(n.astext() for n in section.children[2:]))
    assert "slider" not in after.replace("for every slider setting", "")
    assert "your browser" not in after
    assert "Answer. Because." in after
    assert "The panel's 4 beats, one sentence each:" in after
    assert not list(section.findall(nodes.raw))


def test_a_panel_caption_typesets_its_math_and_slider_symbols_and_prints_no_html() -> (
    None
):
    """The title's math comes as the site builds it (an HTML span around a math node,
    bookbuild.site.panels): the caption keeps the math and drops the span; a slider
    label's ``{symbol}`` is the panel's symbol, typeset."""
    from bookbuild.site.panels import inline

    box = panel_box()
    box.children[0].replace_self(
        nodes.paragraph(
            "",
            "",
            nodes.strong(
                "",
                "",
                *inline(
                    "The forget-gate power $f^k$, with a slider for the forget bias"
                ),
            ),
            classes=["book-panel-title"],
        )
    )
    data = {
        "controls": [
            {"id": "b", "label": "forget-gate bias {bf}"},
            {"id": "k", "label": "top-k: {k}"},
        ],
        "symbols": {"bf": "b_f", "k": "k"},
    }
    box.children[-1].replace_self(
        nodes.raw(
            "",
            '<script type="application/json" '
            f'class="book-panel-data">{json.dumps(data)}</script>',
            format="html",
        )
    )
    doc = nodes.document(None, None)
    section = nodes.section("", nodes.title("", "Gated"), box, docname="book/gated")
    doc += section
    panels_as_figures(doc)
    caption = section.children[1].next_node(nodes.legend)
    assert not list(caption.findall(nodes.raw)), "HTML in the caption"
    said = caption.astext()
    assert "<span" not in said
    assert "{bf}" not in said
    assert "{k}" not in said
    assert said.startswith(f"{PANEL_HEADING}. The forget-gate power f^k. "), said
    assert [m.astext() for m in caption.findall(nodes.math)] == ["f^k", "b_f", "k"]
    assert (
        "sliders for forget-gate bias b_f and top-k: k: "
        "book/gated.html#panel-forget-power." in said
    )


def test_figures_and_tables_print_the_number_the_site_gave_them() -> None:
    doc = nodes.document(None, None)
    chapter = addnodes.start_of_file(docname="book/gated")
    section = nodes.section("", nodes.title("", "Gated"), docname="book/gated")
    numbered = nodes.figure(
        "",
        nodes.image(uri="a.png"),
        nodes.caption("", "Share of seeds."),
        ids=["fig-share"],
    )
    panel = nodes.figure(
        "",
        nodes.image(uri="b.png"),
        nodes.legend("", nodes.paragraph("", "A panel.")),
        ids=["panel-x"],
    )
    table = nodes.table("", nodes.title("", "Lag 80."), ids=["tab-lag"])
    section += [numbered, panel, table]
    chapter += section
    doc += chapter
    numbers = {
        "book/gated": {"figure": {"fig-share": (3, 7)}, "table": {"tab-lag": (3, 3)}}
    }
    book_pdf.numbers_as_on_the_site(doc, numbers)
    raws = [(type(n).__name__, n.astext().strip()) for n in section.children[1:]]
    assert raws == [
        ("raw", "\\booknumber{figure}{3.7}"),
        ("figure", "Share of seeds."),
        ("figure", "A panel."),
        ("raw", "\\booknumber{table}{3.3}"),
        ("table", "Lag 80."),
    ]


def test_solutions_move_to_appendix_a_under_their_exercise_linked_both_ways() -> None:
    from sphinx_exercise.nodes import exercise_enumerable_node, solution_node

    doc, root = small_book()
    chapter = next(
        n
        for n in doc.findall(addnodes.start_of_file)
        if n["docname"] == "book/recurrence"
    )
    section = chapter.next_node(nodes.section)
    exercise = exercise_enumerable_node(
        "",
        nodes.title("", "Exercise 1.1"),
        nodes.paragraph("", "Count."),
        label="ex-count",
    )
    solution = solution_node(
        "",
        nodes.title(
            "",
            "",
            nodes.Text("Solution to"),
            nodes.reference(
                "", "", nodes.Text(" Exercise 1.1 (Count)"), refuri="#ex-count"
            ),
        ),
        nodes.paragraph("", "Forty-two."),
        ids=["sol-count"],
        target_label="ex-count",
    )
    section += [exercise, solution]
    chapters_as_chapters(doc)
    book_pdf.solutions_in_an_appendix(doc, {"book/recurrence": 1})
    assert not [n for n in section.findall(solution_node)], (
        "the solution is still in its chapter"
    )
    pointer = section.children[section.index(exercise) + 1]
    assert (
        "\\hyperref[book-solution-ex-count]{The solution is on "
        "page~\\pageref*{book-solution-ex-count}" in pointer.astext()
    )
    mark = next(
        n
        for n in root.children
        if isinstance(n, nodes.raw) and n.astext() == "\\appendix\n"
    )
    appendix = root.children[root.index(mark) + 1]
    assert appendix.next_node(nodes.title).astext() == SOLUTIONS_TITLE
    holder = appendix.next_node(addnodes.start_of_file)
    assert holder["docname"] == "book/recurrence", (
        "a solution's labels keep their page's name"
    )
    assert holder.next_node(nodes.title).astext() == "Chapter 1: book/recurrence"
    said = holder.astext()
    assert "\\label{\\detokenize{book/recurrence:sol-count}}" in said
    heading = holder.next_node(nodes.rubric).astext()
    assert heading == (
        "Solution to \\hyperref[exercise:ex-count]{Exercise 1.1 (Count)} (exercise on "
        "page \\pageref*{exercise:ex-count})"
    ), heading
    assert said.endswith("Forty-two.")


def test_the_build_appendices_keep_their_summary_and_the_labels_the_book_links_to() -> (
    None
):
    doc = nodes.document(None, None)
    page = addnodes.start_of_file(docname="book/checked")
    entry = nodes.paragraph("", "c-a: condition x < 1", ids=["check-c-a"])
    full = nodes.section("", nodes.title("", "Recurrence"), entry, ids=["recurrence"])
    section = nodes.section(
        "",
        nodes.title("", "What this build checked"),
        nodes.paragraph("", "This build checked 2 conditions behind 3 claims."),
        full,
        docname="book/checked",
    )
    page += section
    doc += page
    book_pdf.build_appendices_summarised(doc)
    said = section.astext()
    assert "This build checked 2 conditions behind 3 claims." in said
    assert "condition x < 1" not in said
    assert "\\label{\\detokenize{book/checked:check-c-a}}" in said
    assert "\\label{\\detokenize{book/checked:recurrence}}" in said


def test_print_wording_rewrites_the_prose_about_moving_a_slider() -> None:
    doc = nodes.document(None, None)
    doc += nodes.paragraph(
        "", "built, and when you move a slider\nyour browser repeats the rules"
    )
    print_wording(doc)
    assert "you move" not in doc.astext()
    assert (
        "in the HTML edition, when a reader moves a slider, the browser repeats"
        in doc.astext()
    )


def test_joining_text_keeps_every_piece_where_it_stands() -> None:
    """Text nodes compare as strings: joining by value removed an earlier equal piece (a
    line break between two inline nodes) and put the joined text in its place, so
    Chapter 5's PDF read "tau < 1stretches every gap ..., so the favourite gains mass;
    as, so the favourite gains mass; as"."""
    doc = nodes.document(None, None)
    paragraph = nodes.paragraph(
        "",
        "",
        nodes.Text("Dividing by "),
        nodes.math("", "\\tau < 1"),
        nodes.Text("\n"),
        nodes.inline("", "stretches every gap"),
        nodes.Text(", so it gains; as"),
        nodes.Text("\n"),
        nodes.math("", "\\tau \\to 0"),
        nodes.Text(" all of it"),
        nodes.Text("\n"),
        nodes.Text("goes to one."),
    )
    doc += paragraph
    before = paragraph.astext()
    print_wording(doc)
    assert paragraph.astext() == before
    assert [type(c).__name__ for c in paragraph.children] == [
        "Text",
        "math",
        "Text",
        "inline",
        "Text",
        "math",
        "Text",
    ]


def test_downloads_name_their_file_and_the_page_that_offers_them() -> None:
    doc = nodes.document(None, None)
    paragraph = nodes.paragraph("", "Notebooks: the ")
    paragraph += addnodes.download_reference(
        "",
        "",
        nodes.literal("", "student edition"),
        reftarget="../_build/labs/recurrence-student.ipynb",
    )
    paragraph += nodes.Text(".")
    doc += nodes.section(
        "", nodes.title("", "Lab"), paragraph, ids=["lab"], docname="book/recurrence"
    )
    lab_links(doc)
    said = flat(doc.astext())
    assert "the student edition (recurrence-student.ipynb)." in said
    assert "_build" not in said
    assert "download links on page book/recurrence.html#lab" in said
    assert "\\ref{\\detokenize{book/recurrence:lab}}" in said


def test_downloads_in_the_preface_name_their_heading_not_a_section_number() -> None:
    """The root page's sections print as unnumbered headings of the preface: no
    ``\\ref`` to a number LaTeX never gives (it printed "Section ??"), and the address
    is the heading's own anchor, not the book's title."""
    doc, root = small_book()
    labs_section = nodes.section(
        "", nodes.title("", "Labs"), ids=["labs", "sec-intro-labs"]
    )
    paragraph = nodes.paragraph("", "All labs: ")
    paragraph += addnodes.download_reference(
        "", "", nodes.literal("", "zip"), reftarget="../_build/labs/labs-student.zip"
    )
    labs_section += paragraph
    root["ids"] = ["recurrent-sequence-models"]
    root.insert(3, labs_section)
    chapters_as_chapters(doc)
    lab_links(doc, "book/intro")
    said = flat(doc.astext())
    assert (
        "download links on page book/intro.html#labs (in the Preface, under "
        "\u201cLabs\u201d)" in said
    ), said
    assert "\\ref{" not in said
    assert "#recurrent-sequence-models" not in said


def test_a_reference_from_another_page_to_an_exercise_points_at_the_exercise_s_label() -> (  # noqa: E501  (the test's name)
    None
):
    """sphinx-exercise labels an exercise ``exercise:<label>`` in LaTeX and rewrites
    only the references of its own page; one from another page (the appendix of checks)
    must point there too, not at a label LaTeX lacks ("Exercise ??")."""
    from sphinx_exercise.nodes import (
        exercise_enumerable_node,
        exercise_latex_number_reference,
    )

    doc = nodes.document(None, None)
    paragraph = nodes.paragraph("", "the passage traced in ")
    paragraph += addnodes.number_reference(
        "", "Exercise 7.4", refuri="beyond.html#ex-b-scratch", title="Exercise %s"
    )
    paragraph += addnodes.number_reference(
        "", "Fig. 7.1", refuri="beyond.html#fig-b-costs", title="Fig. %s"
    )
    doc += paragraph
    book_pdf.exercise_references(
        doc, {"ex-b-scratch": {"node": exercise_enumerable_node()}}
    )
    first, second = paragraph.children[1:]
    assert isinstance(first, exercise_latex_number_reference)
    assert first["refid"] == "ex-b-scratch"
    assert first.astext() == "Exercise 7.4"
    # not an exercise: left alone
    assert not isinstance(second, exercise_latex_number_reference)


def test_column_widths_fit_the_line_with_the_fewest_lines_per_cell() -> None:
    natural, least = [47, 20, 9, 13, 19, 19], [10, 8, 7, 4, 8, 10]
    widths = column_widths(natural, least, TABLE_CHARS)
    assert widths is not None
    assert sum(widths) <= TABLE_CHARS
    assert all(w >= lo + TABLE_PADDING for w, lo in zip(widths, least, strict=True))
    assert column_widths([5, 6], [5, 6], TABLE_CHARS) == [
        5 + TABLE_PADDING,
        6 + TABLE_PADDING,
    ]
    assert column_widths([40] * 8, [10] * 8, TABLE_CHARS) is None  # smaller type, then


def small_table(rows: list[list[str]], classes: list[str] | None = None) -> nodes.table:
    table = nodes.table(classes=classes or [])
    tgroup = nodes.tgroup(cols=len(rows[0]))
    tgroup += [nodes.colspec(colwidth=1) for _ in rows[0]]
    body = nodes.tbody()
    for cells in rows:
        body += nodes.row(
            "", *(nodes.entry("", nodes.paragraph("", cell)) for cell in cells)
        )
    tgroup += body
    table += tgroup
    return table


def test_tables_get_widths_from_their_content_smaller_type_when_wide_and_page_breaks_when_long() -> (  # noqa: E501  (the test's name)
    None
):
    doc = nodes.document(None, None)
    narrow = small_table(
        [["chapter", "key"], ["Recurrent language models", "9c21cc9e29ab7d60707f"]]
    )
    wide = small_table([[f"column{n}_with_a_long_name" for n in range(8)]] * 2)
    long = small_table([["a row", "of text"]] * 12)
    given = small_table([["x " * 150, "y " * 150]] * 6, classes=["colwidths-given"])
    doc += [narrow, wide, long, given]
    book_pdf.tables_fit(doc)
    widths = [spec["colwidth"] for spec in narrow.findall(nodes.colspec)]
    assert sum(widths) <= TABLE_CHARS
    assert widths[1] >= 10 + TABLE_PADDING  # the key's pieces (ten digits) stay whole
    assert "longtable" not in narrow["classes"]
    assert wide.parent.children[wide.parent.index(wide) - 1].astext() in (
        "\\begingroup\\small\n",
        "\\begingroup\\footnotesize\n",
    )
    assert "longtable" in long["classes"]
    # about 6 x 9 lines: more than a page holds, whoever set the widths
    assert "longtable" in given["classes"]
    assert [spec["colwidth"] for spec in given.findall(nodes.colspec)] == [1, 1]


def test_long_tokens_in_tables_break_after_separators_and_within_hashes() -> None:
    assert book_pdf._pieces("chapter_code.lm.char_models.train_char_lm")[:3] == [
        "chapter_",
        "code.",
        "lm.",
    ]
    assert book_pdf._pieces("9c21cc9e29ab7d60707f") == ["9c21cc9e29", "ab7d60707f"]
    # short enough to stay whole
    assert book_pdf._pieces("2.13.0+cpu") == ["2.13.0+cpu"]
    joined = book_pdf._breakable("1.1\u00a0\u00d7\u00a010 apart")
    assert [n.astext() for n in joined] == ["1.1\u00a0\u00d7\u00a010", " ", "apart"]


def _png(width: int, height: int, dpi: float) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body))
            + kind
            + body
            + struct.pack(">I", zlib.crc32(kind + body))
        )

    per_metre = round(dpi / 0.0254)
    raw = b"".join(b"\x00" + b"\xff" * width for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
        + chunk(b"pHYs", struct.pack(">IIB", per_metre, per_metre, 1))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


def test_a_figure_is_set_so_its_largest_text_is_the_body_size(tmp_path: Path) -> None:
    path = tmp_path / "f.png"
    path.write_bytes(_png(1240, 10, 200))
    width, height, dpi = book_pdf._png_size(path)
    assert (width, height, round(dpi)) == (1240, 10, 200)
    inches = figure_width_inches(width, dpi)
    assert inches == pytest.approx(6.2 * BODY_PT / LARGEST_FIGURE_TEXT_PT, rel=1e-4)
    doc = nodes.document(None, None)
    doc += nodes.image(uri="f.png")
    book_pdf.figure_widths(doc, tmp_path)
    assert doc.next_node(nodes.image)["width"] == f"{inches:.2f}in"


def test_no_figure_draws_text_larger_than_the_size_the_pdf_assumes() -> None:
    style = (ROOT / "chapter_code" / "core" / "book.mplstyle").read_text()
    sizes = [
        float(v)
        for k, v in re.findall(r"^([\w.]*size):\s*([\d.]+)\s*$", style, re.MULTILINE)
        if "fig" not in k
    ]
    assert sizes, "no font sizes in the style file"
    for source in (ROOT / "chapter_code").rglob("*.py"):
        sizes += [
            float(v)
            for v in re.findall(
                r"\bfontsize=([\d.]+)", source.read_text(encoding="utf-8")
            )
        ]
    assert max(sizes) <= LARGEST_FIGURE_TEXT_PT, max(sizes)


def test_a_fresh_machine_gets_the_fonts_the_pdf_is_set_in() -> None:
    style = (ROOT / "bookbuild" / "site" / "latex" / "bookprint.sty").read_text()
    families = set(re.findall(r"\\set(?:main|sans|mono|math)font\{([^}]+)\}", style))
    assert families == {
        "DejaVu Serif",
        "DejaVu Sans",
        "DejaVu Sans Mono",
        "DejaVu Math TeX Gyre",
    }
    makefile = (ROOT / "Makefile").read_text()
    packages = (
        re.search(r"^TEX_PACKAGES := (.*)$", makefile, re.MULTILINE).group(1).split()
    )
    # core: Serif, Sans, Sans Mono upright and bold; extra: their italics and DejaVu
    # Math TeX Gyre
    assert {
        "fonts-dejavu-core",
        "fonts-dejavu-extra",
        "fontconfig",
        "texlive-xetex",
        "poppler-utils",
    } <= set(packages)
    setup_system = (ROOT / ".ci" / "setup-system").read_text()
    # `make tex` and `make test` see a missing font as missing TeX
    for check in (makefile, setup_system):
        assert "fc-list 'DejaVu Math TeX Gyre'" in check
        assert "fc-list 'DejaVu Serif:style=Italic'" in check


def test_the_body_size_the_figures_are_scaled_to_is_the_documents() -> None:
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["sphinx"]["config"]["latex_elements"]["pointsize"] == f"{BODY_PT:g}pt"
