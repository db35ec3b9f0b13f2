"""What the PDF edition does differently from the HTML site (a Sphinx extension).

The PDF is built from the same pages and the same executed outputs as the
site (``make pdf``, LaTeX through xelatex). Its layout (fonts, running heads,
chapter openings, front and back matter) is ``bookbuild/latex/bookprint.sty``;
what differs in the document itself is done here, on the assembled tree,
only when the builder writes LaTeX:

- **Front matter, chapters, back matter.** Sphinx inlines each chapter where
  the root page's table of contents stands, inside the root page's last
  section, so the chapters would print as its subsections. Here the root
  page's text becomes the *Preface* (an unnumbered front-matter chapter, in
  roman page numbers after the title page and the contents), its sections
  become unnumbered headings of it, the chapters become the numbered chapters
  (in the site's order and numbers, arabic pages from 1), and the reference
  pages (glossary, bibliography, how the book is built, what the build
  checked, build report) become appendices B to F after the solutions
  (Appendix A), followed by the index.
- **The bibliography is Appendix C.** Sphinx gathers every citation into one
  list at the end of the document; it is moved into the bibliography's own
  appendix, with the entries and labels the site shows.
- **An index.** Besides the glossary's own entries (bold page numbers), every
  use of a glossary term in a chapter (``{term}``) is indexed where it stands.
- **Listings carry line numbers.** A block included from ``chapter_code``
  (``literalinclude``) is numbered, where a reader cannot hover or copy; code
  cells and their outputs are not.
- **Solutions in an appendix.** An exercise's solution is folded away on the
  site; a printed page cannot fold, so the solutions move to Appendix A,
  "Solutions to the exercises" (:data:`SOLUTIONS_TITLE`), one section per
  chapter, each under its exercise's number and title with a link back to the
  exercise, and each exercise says on which page its solution is
  (:func:`solutions_in_an_appendix`).
- **Panels are figures without a number.** An interactive panel prints as its
  static figure, headed "Interactive panel" with the panel's title and summary
  and where its interactive version is (:func:`panels_as_figures`), followed
  by its note, its check-yourself question with the answer, and its beats; the
  panels' wording about the browser is put in print terms
  (:data:`PRINT_WORDING`). The site does not number its panels, so neither
  does the PDF.
- **The site's figure and table numbers.** Every numbered figure and table
  prints the number Sphinx gave it, which the site shows
  (:func:`numbers_as_on_the_site`), not a count LaTeX keeps of its own (a
  figure moved to the solutions appendix, or a long table without a caption,
  which steps LaTeX's table counter, would shift it).
- **Figures at the body's text size.** Every figure is set at the width that
  makes its largest text (:data:`LARGEST_FIGURE_TEXT_PT` at the figure's own
  size) the body size, :data:`BODY_PT` (:func:`figure_widths`).
- **Download links name their files.** A print reader cannot click the labs'
  ``{download}`` links, so each names its file (``recurrence-student.ipynb``,
  never the folder the build writes it to), and the lab section says on which
  page of the HTML edition the notebooks are offered (:func:`lab_links`).
- **The build's appendices as summaries.** The build report and the list of
  every claim's check stay whole on the site; the PDF prints what a reader
  needs (what was checked, how many outputs and claims, where the full
  report is): the pages' print-only summaries, without their sections
  (:func:`build_appendices_summarised`).
- **Wide tables fit.** Tables get column widths from their content and break
  their long tokens (hashes, versions, settings) where a reader would; a wide
  one is set in smaller type, a long one breaks across pages
  (:func:`tables_fit`). A long table without a caption says it continues
  without borrowing another table's number (``bookbuild/latex/longtable.tex.jinja``).
"""

from __future__ import annotations

import json
import posixpath
import re
import struct
from pathlib import Path
from typing import Any

from docutils import nodes

#: the title of the appendix that holds the solutions to the exercises (Appendix A)
SOLUTIONS_TITLE = "Solutions to the exercises"
#: the label of that appendix, and the prefix of each solution's label in it
SOLUTIONS_LABEL, SOLUTION_PREFIX = "book-solutions", "book-solution-"
#: what heads a panel's printed figure, in place of a figure number
PANEL_HEADING = "Interactive panel"
#: generated pages the PDF prints as their summaries (their sections, the full report,
#: stay on the site)
SUMMARISED = ("book/checked", "book/build-report")
#: the first page that prints as an appendix rather than a chapter
FIRST_APPENDIX = "book/glossary"
#: the page whose citations list is the bibliography appendix
BIBLIOGRAPHY = "book/bibliography"
#: the heading of the root page's text in the PDF
PREFACE = "Preface"
#: the class of the preface's headings, which were the root page's sections (unnumbered,
#: no label)
PREFACE_HEADING = "book-preface-heading"
#: the body text size, in points (``latex_elements.pointsize`` in ``_config.yml``)
BODY_PT = 10.0
#: the largest text a figure draws, in points at the figure's own size: the book's style
#: file (``chapter_code/core/book.mplstyle``, 13 pt) and the largest ``fontsize=`` a
#: figure function passes (14 pt); tests/bookbuild/test_pdf.py checks that none is
#: larger
LARGEST_FIGURE_TEXT_PT = 14.0
#: Panel wording that describes the HTML edition, put in print terms (pattern,
#: replacement).
PRINT_WORDING = [
    (
        re.compile(r"in\s+your\s+browser\s+when\s+you\s+move\s+a\s+slider"),
        "in the reader's browser, in the HTML edition, for every slider setting",
    ),
    (
        re.compile(r"when\s+you\s+move\s+a\s+slider,?\s+your\s+browser"),
        "in the HTML edition, when a reader moves a slider, the browser",
    ),
]
#: a panel title's clause about its controls ("..., with a slider for the forget bias"):
#: the printed figure has none; its caption says what the interactive version adds
_CONTROLS_CLAUSE = re.compile(r",\s*with (?:a )?sliders? for .*$")


def _is_listing(node: nodes.literal_block) -> bool:
    """A block included from a source file of the repository (``literalinclude``), not a
    cell or an output."""
    source = str(node.get("source", ""))
    return source.endswith(".py") and "chapter_code" in source


def _raw(latex: str) -> nodes.raw:
    return nodes.raw("", latex, format="latex")


def _ancestors(node: nodes.Node) -> list[nodes.Node]:
    found = []
    while node.parent is not None:
        node = node.parent
        found.append(node)
    return found


def _page_of(node: nodes.Node, default: str = "") -> str:
    """The page (docname) a node of the assembled book came from.

    Sphinx marks every section of an inlined page with its ``docname`` (the
    page's top nodes keep their own page's document as parent, so the
    ``start_of_file`` around them is not among their ancestors).
    """
    from sphinx import addnodes

    for above in _ancestors(node):
        if isinstance(above, addnodes.start_of_file | nodes.section) and above.get(
            "docname"
        ):
            return str(above["docname"])
    return default


def chapters_as_chapters(doctree: nodes.document) -> None:
    """Lift the inlined chapters out of the root page's last section; the root's text
    becomes the preface."""
    from sphinx import addnodes

    root = next(iter(doctree.findall(nodes.section)), None)
    if root is None:
        return
    included = [
        n
        for n in doctree.findall(addnodes.start_of_file)
        if not any(isinstance(a, addnodes.start_of_file) for a in _ancestors(n))
    ]
    for chapter in included:
        chapter.parent.remove(chapter)
    for child in [c for c in root.children if isinstance(c, nodes.section)]:
        title = child.next_node(nodes.title)
        heading = (
            nodes.rubric(
                "",
                "",
                *title.children,
                classes=[PREFACE_HEADING],
                ids=list(child["ids"]),
            )
            if title is not None
            else None
        )
        body = [c for c in child.children if c is not title]
        child.replace_self(([heading] if heading is not None else []) + body)
    at = 1 if root.children and isinstance(root.children[0], nodes.title) else 0
    root.insert(at, _raw(f"\\bookfrontchapter{{{PREFACE}}}\n"))
    for n, chapter in enumerate(included):
        if n == 0:
            root.append(_raw("\\bookmainmatter\n"))
        if chapter.get("docname") == FIRST_APPENDIX:
            root.append(_raw("\\appendix\n"))
        root.append(chapter)


def bibliography_in_its_appendix(doctree: nodes.document) -> None:
    """Move the list Sphinx gathers at the end of the document into the bibliography
    page's section."""
    from sphinx import addnodes
    from sphinx.builders.latex.nodes import thebibliography

    found = list(doctree.findall(thebibliography))
    page = next(
        (
            n
            for n in doctree.findall(addnodes.start_of_file)
            if n.get("docname") == BIBLIOGRAPHY
        ),
        None,
    )
    if not found or page is None:
        return
    section = page.next_node(nodes.section) or page
    for citations in found:
        citations.parent.remove(citations)
        section.append(citations)


def index_term_uses(doctree: nodes.document) -> None:
    """An index entry, at the place of use, for every reference to a glossary term."""
    from sphinx import addnodes

    names: dict[str, str] = {}
    for term in doctree.findall(nodes.term):
        for ident in term["ids"]:
            names[ident] = term.astext()
    for ref in list(doctree.findall(nodes.reference)):
        inline = ref.next_node(nodes.inline)
        if inline is None or "std-term" not in inline.get("classes", []):
            continue
        target = str(ref.get("refid") or ref.get("refuri", "")).rsplit("#", 1)[-1]
        name = names.get(target)
        if name is None or ref.parent is None:
            continue
        entry = addnodes.index(entries=[("single", name, "", "", None)], inline=True)
        at = ref.parent.index(ref)
        # \bookindexterm (bookprint.sty): read as the glossary's entry
        ref.parent.insert(at, _raw("}"))
        ref.parent.insert(at, entry)
        ref.parent.insert(at, _raw("\\bookindexterm{"))


def print_wording(doctree: nodes.document) -> None:
    """Put the panels' sentences about the browser in print terms
    (:data:`PRINT_WORDING`).

    Adjacent text nodes are joined first (MyST keeps each source line in its own), so a
    phrase broken across lines of a page's source is found. Nodes are replaced by
    position: a text node equals any other of the same string (``Element.remove`` and
    ``Element.replace`` would take the first equal one, such as an earlier line break).
    """
    for element in list(doctree.findall(nodes.TextElement)):
        children = element.children
        at = 0
        while at < len(children) - 1:
            if isinstance(children[at], nodes.Text) and isinstance(
                children[at + 1], nodes.Text
            ):
                joined = nodes.Text(str(children[at]) + str(children[at + 1]))
                del element[at + 1]
                element[at] = joined
            else:
                at += 1
    for text in list(doctree.findall(nodes.Text)):
        new = str(text)
        for pattern, replacement in PRINT_WORDING:
            new = pattern.sub(replacement, new)
        if new != str(text) and text.parent is not None:
            parent = text.parent
            parent[next(i for i, c in enumerate(parent.children) if c is text)] = (
                nodes.Text(new)
            )


#: a slider label's placeholder for one of the panel's symbols (``"forget-gate bias
#: {bf}"``)
_SYMBOL = re.compile(r"\{(\w+)\}")


def _with_symbols(label: str, symbols: dict[str, str]) -> list[nodes.Node]:
    """A slider label as text, each ``{name}`` of the panel's ``symbols`` typeset as
    math."""
    out: list[nodes.Node] = []
    for i, part in enumerate(_SYMBOL.split(label)):
        if i % 2 and part in symbols:
            out.append(nodes.math(symbols[part], symbols[part]))
        elif part:
            out.append(nodes.Text(part if i % 2 == 0 else f"{{{part}}}"))
    return out


def _controls_phrase(
    controls: list[dict[str, Any]], symbols: dict[str, str] | None = None
) -> list[nodes.Node]:
    labels = [str(c.get("label", c.get("id", ""))) for c in controls]
    if not labels:
        return []
    out: list[nodes.Node] = [
        nodes.Text(f" and has {'a slider' if len(labels) == 1 else 'sliders'} for ")
    ]
    for n, label in enumerate(labels):
        if n:
            out.append(nodes.Text(" and " if n == len(labels) - 1 else ", "))
        out += _with_symbols(label, symbols or {})
    return out


def _title_for_print(title: nodes.paragraph) -> list[nodes.Node]:
    """A panel's title as caption text: its math kept, the HTML spans around it dropped,
    and no clause about its sliders (the caption names them)."""
    kept = (nodes.Text, nodes.math, nodes.literal)
    shown = [
        n
        for n in title.findall(lambda n: isinstance(n, kept))
        if not any(
            isinstance(a, nodes.raw | nodes.math | nodes.literal) for a in _ancestors(n)
        )
    ]
    out = [
        n.deepcopy() if not isinstance(n, nodes.Text) else nodes.Text(str(n))
        for n in shown
    ]
    if out and isinstance(out[-1], nodes.Text):
        out[-1] = nodes.Text(_CONTROLS_CLAUSE.sub("", str(out[-1])))
    return out


def panels_as_figures(doctree: nodes.document, docname: str = "") -> None:
    """Each panel (``book-panel`` container) as a figure headed :data:`PANEL_HEADING`,
    without a number (the site numbers no panel), followed by its text."""
    for box in list(doctree.findall(nodes.container)):
        if "book-panel" not in box.get("classes", []):
            continue
        name = next(
            (i.removeprefix("panel-") for i in box["ids"] if i.startswith("panel-")),
            "panel",
        )
        data: dict[str, Any] = {}
        for raw in box.findall(nodes.raw):
            if "book-panel-data" in raw.astext():
                body = raw.astext().split(">", 1)[1].rsplit("</script>", 1)[0]
                data = json.loads(body)
        paragraphs = [p for p in box.children if isinstance(p, nodes.paragraph)]
        title = next(
            (p for p in paragraphs if "book-panel-title" in p["classes"]), None
        )
        summary = next(
            (p for p in paragraphs if "book-panel-summary" in p["classes"]), None
        )
        image = box.next_node(nodes.image)
        beats = next(
            (c for c in box.children if isinstance(c, nodes.enumerated_list)), None
        )
        if image is None:
            continue
        page = _page_of(box, docname)
        # a legend, not a caption: the site numbers no panel, so the PDF does not
        caption = nodes.paragraph()
        heading = (
            [
                nodes.Text(f"{PANEL_HEADING}. "),
                *_title_for_print(title),
                nodes.Text("."),
            ]
            if title is not None
            else [nodes.Text(f"{PANEL_HEADING}.")]
        )
        caption += nodes.strong("", "", *heading)
        caption += nodes.Text(" ")
        if summary is not None:
            # HTML-only spans
            caption += [c for c in summary.children if not isinstance(c, nodes.raw)]
        n_beats = len(beats.children) if beats is not None else 0
        caption += nodes.Text(
            f" Interactive in the HTML edition, where the panel plays its {n_beats} "
            "beats"
        )
        caption += _controls_phrase(data.get("controls", []), data.get("symbols", {}))
        caption += nodes.Text(": ")
        caption += nodes.literal("", f"{page}.html#panel-{name}")
        caption += nodes.Text(".")
        figure = nodes.figure(
            "", image.deepcopy(), nodes.legend("", caption), ids=[f"panel-{name}"]
        )
        figure["classes"].append("book-panel-figure")
        rest: list[nodes.Node] = []
        answer_next = False
        for child in box.children:
            if child in (title, summary) or isinstance(
                child, nodes.container | nodes.raw
            ):
                if (
                    isinstance(child, nodes.raw)
                    and 'class="book-panel-answer"' in child.astext()
                ):
                    answer_next = True
                continue
            if isinstance(child, nodes.enumerated_list):
                rest.append(
                    nodes.paragraph(
                        "", f"The panel's {n_beats} beats, one sentence each:"
                    )
                )
                rest.append(child)
                continue
            if answer_next and isinstance(child, nodes.paragraph):
                child.insert(0, nodes.strong("", "Answer. "))
                answer_next = False
            rest.append(child)
        box.replace_self([figure, *rest])


def _png_size(path: Path) -> tuple[int, int, float] | None:
    """Width and height in pixels and resolution in dots per inch of a PNG (72 when it
    records none)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    width, height = struct.unpack(">II", data[16:24])
    dpi, at = 72.0, 8
    while at + 8 <= len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind = data[at + 4 : at + 8]
        if kind == b"pHYs":
            per_metre, _, unit = struct.unpack(">IIB", data[at + 8 : at + 17])
            if unit == 1 and per_metre:
                dpi = per_metre * 0.0254
            break
        if kind == b"IDAT":
            break
        at += 12 + length
    return width, height, dpi


def figure_width_inches(width_px: int, dpi: float) -> float:
    """The printed width at which a figure's largest text is the body size."""
    return width_px / dpi * BODY_PT / LARGEST_FIGURE_TEXT_PT


_CSS_PIXELS = re.compile(r"\d+(\.\d+)?(px)?")


def figure_widths(doctree: nodes.document, srcdir: Path) -> None:
    """Give every PNG figure the width of :func:`figure_width_inches` (none is enlarged
    past the text)."""
    for image in doctree.findall(nodes.image):
        # myst-nb gives an output's size in CSS pixels (for the site); a size the page
        # set in other units, or a scale, is kept
        if "scale" in image or not all(
            _CSS_PIXELS.fullmatch(str(image[k]).strip())
            for k in ("width", "height")
            if k in image
        ):
            continue
        uri = str(image.get("candidates", {}).get("image/png") or image.get("uri", ""))
        size = _png_size(srcdir / uri.lstrip("/")) if uri.endswith(".png") else None
        if size is None:
            continue
        width_px, _, dpi = size
        image.attributes.pop("height", None)
        image["width"] = f"{figure_width_inches(width_px, dpi):.2f}in"


def lab_links(doctree: nodes.document, docname: str = "") -> None:
    """Name each download's file (its name, not the build folder it is written to) and
    the page of the site that offers it."""
    from sphinx import addnodes

    told: set[int] = set()
    for ref in list(doctree.findall(addnodes.download_reference)):
        page = _page_of(ref, docname)
        target = str(ref.get("reftarget", ""))
        path = (
            posixpath.normpath(posixpath.join(posixpath.dirname(page), target))
            if target
            else ""
        )
        # the file's name: where the build writes it is no reader's concern
        if path and ref.parent is not None:
            at = ref.parent.index(ref) + 1
            ref.parent.insert(at, nodes.Text(")"))
            ref.parent.insert(at, nodes.literal("", posixpath.basename(path)))
            ref.parent.insert(at, nodes.Text(" ("))
        paragraph = next(
            (a for a in _ancestors(ref) if isinstance(a, nodes.paragraph)), None
        )
        section = next(
            (a for a in _ancestors(ref) if isinstance(a, nodes.section)), None
        )
        if paragraph is None or id(paragraph) in told or paragraph.parent is None:
            continue
        told.add(id(paragraph))
        anchor = section["ids"][0] if section is not None and section["ids"] else ""
        heading = _preface_heading_before(paragraph, section)
        # in the preface: an unnumbered heading, which LaTeX gives no number
        if heading is not None:
            anchor = heading["ids"][0] if heading["ids"] else ""
        where = nodes.paragraph()
        where += nodes.Text(
            "In the HTML edition these notebooks are download links on page "
        )
        where += nodes.literal("", f"{page}.html" + (f"#{anchor}" if anchor else ""))
        if heading is not None:
            where += nodes.Text(
                f" (in the {PREFACE}, under \u201c{heading.astext()}\u201d)"
            )
        elif anchor:  # the number LaTeX gives this section
            where += nodes.Text(" (Section ")
            where += _raw(f"\\ref{{\\detokenize{{{page}:{anchor}}}}}")
            where += nodes.Text(")")
        where += nodes.Text(", under the file names given here.")
        paragraph.parent.insert(paragraph.parent.index(paragraph) + 1, where)


def _preface_heading_before(
    node: nodes.Node, section: nodes.Node | None
) -> nodes.rubric | None:
    """The preface heading (a former section of the root page) that ``node`` stands
    under, if any."""
    child = node
    while child.parent is not None and child.parent is not section:
        child = child.parent
    if child.parent is None:
        return None
    siblings = child.parent.children
    for sibling in reversed(siblings[: siblings.index(child)]):
        if isinstance(sibling, nodes.rubric):
            return sibling if PREFACE_HEADING in sibling["classes"] else None
    return None


def exercise_references(doctree: nodes.document, registry: dict[str, Any]) -> None:
    """Point a numbered reference to an exercise at the label sphinx-exercise gives it
    in LaTeX.

    sphinx-exercise writes ``\\label{exercise:<label>}`` and rewrites the references of
    the exercise's own page into ``\\hyperref[exercise:<label>]``; a reference from
    another page (the appendix of checks quoting a claim) keeps Sphinx's
    ``<page>:<label>``, which LaTeX never defines ("Exercise ??").
    """
    from sphinx import addnodes
    from sphinx_exercise.nodes import (
        exercise_enumerable_node,
        exercise_latex_number_reference,
    )

    for ref in list(doctree.findall(addnodes.number_reference)):
        if isinstance(ref, exercise_latex_number_reference) or ref.parent is None:
            continue
        label = str(ref.get("refid") or ref.get("refuri", "")).rsplit("#", 1)[-1]
        target = registry.get(label)
        if target is None or not isinstance(
            target.get("node"), exercise_enumerable_node
        ):
            continue
        new = exercise_latex_number_reference("", "", *ref.children, refid=label)
        ref.replace_self(new)


#: characters after which a long token in a table cell may break (paths, versions,
#: settings, lists)
_TABLE_BREAKS = re.compile(r"(?<=[_=,/.+:])(?=\S)")
#: a run of hexadecimal digits long enough to be a hash: it may break after every tenth
#: digit
_HASH, _HASH_PIECE = re.compile(r"[0-9a-f]{12,}"), 10
#: tokens up to this many characters are left alone
_TABLE_TOKEN = 12
#: the text width in table characters (6.5 pt each at the body size, a wide average for
#: DejaVu), and what a column's padding (two \tabcolsep, 12 pt) costs in the same unit
TABLE_CHARS, TABLE_PADDING = 72, 2
#: a table of more rows than this, or more lines of text (estimated), is a longtable,
#: which breaks across pages
LONG_TABLE_ROWS, LONG_TABLE_LINES = 8, 36
#: the sizes a table may be set in, largest first: LaTeX size command and its scale to
#: the body size
TABLE_SIZES = [("", 1.0), ("\\small", 0.9), ("\\footnotesize", 0.8)]


def _pieces(token: str) -> list[str]:
    """A token as the pieces between which a table cell may break it."""
    if len(token) <= _TABLE_TOKEN:
        return [token]
    out: list[str] = []
    for chunk in _TABLE_BREAKS.split(token):
        if _HASH.fullmatch(chunk):
            out += [
                chunk[i : i + _HASH_PIECE] for i in range(0, len(chunk), _HASH_PIECE)
            ]
        else:
            out.append(chunk)
    return out


def _breakable(text: str) -> list[nodes.Node]:
    """``text`` with a LaTeX break opportunity between the pieces of its long tokens."""
    nodes_out: list[nodes.Node] = []
    for part in re.split(r"([ \t\n]+)", text):  # a no-break space joins
        if not part:
            continue
        pieces = [part] if not part.strip(" \t\n") else _pieces(part)
        for n, piece in enumerate(pieces):
            if n:
                nodes_out.append(_raw("\\allowbreak{}"))
            nodes_out.append(nodes.Text(piece))
    return nodes_out


def _chars(text: str) -> int:
    """A text's width in table characters: a capital (or m, w) and a digit are wider
    than the average letter."""
    return round(
        sum(
            1.4 if c.isupper() or c in "mw" else 1.2 if c.isdigit() else 1.0
            for c in text
        )
    )


def _cell_extent(entry: nodes.Element) -> tuple[int, int]:
    """A cell's length in characters and the longest piece it cannot break (math never
    breaks)."""
    length, unbreakable = 0, 1
    for node in entry.findall(lambda n: isinstance(n, nodes.Text | nodes.math)):
        if isinstance(node, nodes.math):
            # the source is longer than what prints
            size = len(node.astext()) * 2 // 3 + 1
            length, unbreakable = length + size, max(unbreakable, size)
            continue
        if any(isinstance(a, nodes.math) for a in _ancestors(node)):
            continue
        text = str(node)
        length += _chars(text)
        for token in re.split(r"[ \t\n]+", text):  # a no-break space joins
            unbreakable = max(unbreakable, *(_chars(p) + 2 for p in _pieces(token)))
    return length, unbreakable


def column_widths(
    natural: list[int], least: list[int], chars: float, pad: int = TABLE_PADDING
) -> list[int] | None:
    """Widths (padding included) that fit ``chars`` with the fewest lines in the tallest
    cell: each column the width that sets its longest cell in that many lines, none
    below its least width; None when even the least widths do not fit."""
    if sum(least) + pad * len(least) > chars:
        return None
    widths = [lo + pad for lo in least]
    for lines in range(1, max(natural) + 1):
        slack = 0 if lines == 1 else 2  # a wrapped line is rarely full
        fitted = [
            max(lo, -(-n // lines) + slack) + pad
            for n, lo in zip(natural, least, strict=True)
        ]
        if sum(fitted) <= chars:
            widths = fitted
            break
    # what is left of the line goes to the columns still short of their natural width
    short = [max(n + pad - w, 0) for n, w in zip(natural, widths, strict=True)]
    left = int(chars - sum(widths))
    if left > 0 and sum(short):
        widths = [
            w + left * s // sum(short) for w, s in zip(widths, short, strict=True)
        ]
    return widths


def _measure(
    tgroup: nodes.Element, columns: int
) -> tuple[list[int], list[int], list[list[int]]] | None:
    """Each column's natural and least width, and each cell's length; None when a cell
    spans columns."""
    natural, least = [1] * columns, [1] * columns
    cells: list[list[int]] = []
    for row in tgroup.findall(nodes.row):
        entries = [c for c in row.children if isinstance(c, nodes.entry)]
        if len(entries) != columns:
            return None
        cells.append([])
        for n, entry in enumerate(entries):
            length, unbreakable = _cell_extent(entry)
            natural[n], least[n] = max(natural[n], length), max(least[n], unbreakable)
            cells[-1].append(length)
    return natural, least, cells


def _break_long_tokens(table: nodes.Element) -> None:
    for text in list(table.findall(nodes.Text)):
        if text.parent is None or any(
            isinstance(a, nodes.raw | nodes.math | nodes.literal_block)
            for a in _ancestors(text)
        ):
            continue
        pieces = _breakable(str(text))
        if len(pieces) > 1:
            parent = text.parent
            at = parent.index(text)
            parent.remove(text)
            for offset, piece in enumerate(pieces):
                parent.insert(at + offset, piece)


def tables_fit(doctree: nodes.document) -> None:
    """Column widths from each table's content, in the largest size it fits; long tokens
    may break; a table that may not fit on one page is a longtable (a tabular cannot
    break across pages)."""
    for table in list(doctree.findall(nodes.table)):
        _break_long_tokens(table)
        tgroup = table.next_node(nodes.tgroup)
        specs = (
            [c for c in tgroup.children if isinstance(c, nodes.colspec)]
            if tgroup is not None
            else []
        )
        measured = _measure(tgroup, len(specs)) if specs else None
        if measured is None:  # a cell spans columns: the table is left to LaTeX
            continue
        natural, least, cells = measured
        size, scale = "", 1.0
        # the page set its own widths: kept, in the body size
        if "colwidths-given" in table["classes"]:
            given = [float(spec.get("colwidth", 1)) for spec in specs]
            widths = [max(1, round(TABLE_CHARS * g / sum(given))) for g in given]
        else:
            widths = None
            for size, scale in TABLE_SIZES:  # noqa: B007 (the size found is used below)
                # in the smaller type a character is narrower, the padding is not
                widths = column_widths(
                    natural, least, TABLE_CHARS / scale, round(TABLE_PADDING / scale)
                )
                if widths is not None:
                    break
            widths = widths or [lo + round(TABLE_PADDING / scale) for lo in least]
            for spec, width in zip(specs, widths, strict=True):
                spec["colwidth"] = width
            table["classes"].append("colwidths-given")
        lines = sum(
            max(
                -(-length // max(w - TABLE_PADDING, 1))
                for length, w in zip(row, widths, strict=True)
            )
            for row in cells
        )
        if len(cells) > LONG_TABLE_ROWS or lines * scale > LONG_TABLE_LINES:
            table["classes"].append("longtable")
        if size and table.parent is not None:
            at = table.parent.index(table)
            table.parent.insert(at + 1, _raw("\\endgroup\n"))
            table.parent.insert(at, _raw(f"\\begingroup{size}\n"))


def code_folds_unfolded(doctree: nodes.document) -> None:
    """A page's folded listings (``:class: dropdown code-fold``) printed open: their
    title as a rubric, then the listings themselves, outside a frame that LaTeX could
    not break across pages."""
    for fold in list(doctree.findall(nodes.admonition)):
        if "code-fold" not in fold["classes"] or fold.parent is None:
            continue
        title = next((c for c in fold.children if isinstance(c, nodes.title)), None)
        rest = [c for c in fold.children if c is not title]
        heading = [nodes.rubric("", "", *title.children)] if title is not None else []
        fold.replace_self(heading + rest)


def for_print(app: Any, doctree: nodes.document, docname: str) -> None:
    """Arrange the assembled book for print (see the module's docstring) when the
    builder writes LaTeX."""
    if app.builder.format != "latex":
        return
    root_doc = app.config.root_doc
    if docname == root_doc:  # the whole book, assembled into one tree
        chapters_as_chapters(doctree)
        bibliography_in_its_appendix(doctree)
    index_term_uses(doctree)
    panels_as_figures(doctree, docname)
    print_wording(doctree)
    figure_widths(doctree, Path(app.srcdir))
    lab_links(doctree, docname)
    exercise_references(doctree, getattr(app.env, "sphinx_exercise_registry", {}))
    tables_fit(doctree)
    code_folds_unfolded(doctree)
    for block in doctree.findall(nodes.literal_block):
        if _is_listing(block):
            block["linenos"] = True
    if docname == root_doc:
        build_appendices_summarised(doctree)
        solutions_in_an_appendix(doctree, _chapter_numbers(app.env))
    numbers_as_on_the_site(doctree, getattr(app.env, "toc_fignumbers", {}), docname)


def _chapter_numbers(env: Any) -> dict[str, int]:
    """Page -> its chapter's number, for the numbered chapters (Sphinx's section
    numbers)."""
    found = {}
    for page, numbers in getattr(env, "toc_secnumbers", {}).items():
        number = numbers.get("") or ()
        if len(number) == 1:
            found[page] = int(number[0])
    return found


#: the Sphinx node of each kind of numbered object the site numbers, by its numfig kind
_NUMBERED = {"figure": nodes.figure, "table": nodes.table}


def numbers_as_on_the_site(
    doctree: nodes.document,
    fignumbers: dict[str, dict[str, dict[str, tuple[int, ...]]]],
    docname: str = "",
) -> None:
    """Before every figure and table the site numbers, the number the site shows
    (``\\booknumber``, bookprint.sty): LaTeX then prints it and refers to it, whatever
    it counted itself."""
    for kind, cls in _NUMBERED.items():
        for node in list(doctree.findall(cls)):
            if node.parent is None:
                continue
            numbers = fignumbers.get(_page_of(node, docname), {}).get(kind, {})
            number = next((numbers[i] for i in node["ids"] if i in numbers), None)
            if number is None:
                continue
            shown = ".".join(str(n) for n in number)
            node.parent.insert(
                node.parent.index(node), _raw(f"\\booknumber{{{kind}}}{{{shown}}}\n")
            )


def solutions_in_an_appendix(
    doctree: nodes.document, chapters: dict[str, int] | None = None
) -> None:
    """Move every solution into Appendix A (:data:`SOLUTIONS_TITLE`): per chapter, each
    under its exercise's number and title, which link back to the exercise, with the
    exercise's page; the exercise says on which page its solution is.

    Each chapter's solutions stay inside a ``start_of_file`` of their page, so their
    labels (a figure's, a cell's) keep the page's name and every reference to them
    resolves.
    """
    from sphinx import addnodes
    from sphinx_exercise.nodes import (
        exercise_enumerable_node,
        exercise_node,
        solution_node,
    )

    solutions = [s for s in doctree.findall(solution_node) if s.parent is not None]
    if not solutions:
        return
    # the exercises of this tree (the registry's nodes are those Sphinx read, not the
    # assembled book's)
    exercises = {
        str(n.get("label", "")): n
        for n in doctree.findall(
            lambda n: isinstance(n, exercise_enumerable_node | exercise_node)
        )
    }
    appendix = nodes.section(
        "", nodes.title("", SOLUTIONS_TITLE), ids=[SOLUTIONS_LABEL]
    )
    appendix += nodes.paragraph(
        "",
        "The solutions to each chapter's exercises, in the order of the exercises. The "
        "HTML edition folds each one under its exercise.",
    )
    sections: dict[str, nodes.section] = {}
    for solution in solutions:
        page = _page_of(solution)
        exercise_label = str(solution.get("target_label", ""))
        exercise = exercises.get(exercise_label)
        if page not in sections:
            chapter = next(
                (
                    n
                    for n in doctree.findall(addnodes.start_of_file)
                    if n.get("docname") == page
                ),
                None,
            )
            heading = chapter.next_node(nodes.title) if chapter is not None else None
            name = heading.astext() if heading is not None else page
            number = (chapters or {}).get(page)
            title = f"Chapter {number}: {name}" if number else name
            sections[page] = nodes.section(
                "", nodes.title("", title), ids=[f"{SOLUTION_PREFIX}{Path(page).name}"]
            )
            holder = addnodes.start_of_file(docname=page)
            holder += sections[page]
            appendix += holder
        here = f"{SOLUTION_PREFIX}{exercise_label}"
        title = next((c for c in solution.children if isinstance(c, nodes.title)), None)
        heading = nodes.rubric(
            "", "", *(_linked_back(title, exercise_label) if title is not None else [])
        )
        if exercise is not None:
            heading += nodes.Text(" (exercise on page ")
            heading += _raw(f"\\pageref*{{exercise:{exercise_label}}}")
            heading += nodes.Text(")")
        labels = "".join(
            f"\\label{{\\detokenize{{{page}:{i}}}}}" for i in solution["ids"]
        )
        body = [c for c in solution.children if c is not title]
        sections[page] += [
            _raw(f"\\phantomsection\\label{{{here}}}{labels}\n"),
            heading,
            *body,
        ]
        if exercise is not None and exercise.parent is not None:
            said = nodes.paragraph(
                "",
                "",
                _raw(
                    f"\\hyperref[{here}]{{The solution is on page~\\pageref*{{{here}}} "
                    f"(Appendix~\\ref*{{{SOLUTIONS_LABEL}}})}}."
                ),
            )
            said["classes"].append("book-solution-pointer")
            exercise.parent.insert(exercise.parent.index(exercise) + 1, said)
        solution.parent.remove(solution)
    root = next(iter(doctree.findall(nodes.section)), None)
    if root is None:
        return
    mark = next(
        (
            n
            for n in root.children
            if isinstance(n, nodes.raw) and n.astext() == "\\appendix\n"
        ),
        None,
    )
    appendix.insert(1, _raw(f"\\label{{{SOLUTIONS_LABEL}}}"))
    if mark is not None:
        root.insert(root.index(mark) + 1, appendix)
    else:
        root.append(appendix)


def _linked_back(title: nodes.title, exercise_label: str) -> list[nodes.Node]:
    """A solution's title ("Solution to Exercise 3.2 (...)") with its reference to the
    exercise pointed at the label sphinx-exercise gives the exercise in LaTeX (its math
    kept as math)."""
    out: list[nodes.Node] = []
    for child in title.children:
        if not isinstance(child, nodes.reference):
            out.append(
                nodes.Text(str(child).rstrip() + " ")
                if isinstance(child, nodes.Text)
                else child.deepcopy()
            )
            continue
        inner = [c.deepcopy() for c in child.children]
        if inner and isinstance(inner[0], nodes.Text):
            inner[0] = nodes.Text(str(inner[0]).lstrip())
        out += [_raw(f"\\hyperref[exercise:{exercise_label}]{{"), *inner, _raw("}")]
    return out


def build_appendices_summarised(doctree: nodes.document) -> None:
    """The build report and the list of every check (:data:`SUMMARISED`) as their
    summaries: each page's sections, the full report, are left out of the PDF; a label
    the book links to (a claim's mark links to its check) stays, at the summary."""
    from sphinx import addnodes

    for page in SUMMARISED:
        holder = next(
            (
                n
                for n in doctree.findall(addnodes.start_of_file)
                if n.get("docname") == page
            ),
            None,
        )
        section = holder.next_node(nodes.section) if holder is not None else None
        if section is None:
            continue
        parts = [c for c in section.children if isinstance(c, nodes.section)]
        ids = [
            i
            for part in parts
            for node in part.findall(nodes.Element)
            for i in node.get("ids", [])
        ]
        for part in parts:
            section.remove(part)
        if ids:
            section.append(
                _raw(
                    "\\phantomsection"
                    + "".join(f"\\label{{\\detokenize{{{page}:{i}}}}}" for i in ids)
                    + "\n"
                )
            )


#: LaTeX-only templates and the style file: bookbuild/latex
LATEX_DIR = Path(__file__).with_name("latex")


def latex_templates(app: Any) -> None:
    """Sphinx's LaTeX table templates, as amended for the PDF
    (``bookbuild/latex/*.tex.jinja``), when writing LaTeX."""
    if (
        app.builder.format == "latex"
        and str(LATEX_DIR) not in app.config.templates_path
    ):
        app.config.templates_path.insert(0, str(LATEX_DIR))


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", latex_templates)
    app.connect("doctree-resolved", for_print)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
