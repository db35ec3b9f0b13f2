"""What a page's text asks of its cells: a value glued for every ``{glue:text}`` name,
alt text for every figure, every figure drawn in the book's style, and a figure cell
that shows its figure alone (no value of its last line beside it).

Both are found wrong by Sphinx only late, or never: a misspelt glue name fails ``make
book`` after the chapters have executed, and a figure drawn without ``image: alt:`` gets
its file path as alt text on the site, which no check saw. This lint reads each executed
page (``make check``, ``make book``) and names every such mistake at once, each with its
file and line and what to write instead.
"""

from __future__ import annotations

import base64
import difflib
import re
from pathlib import Path
from typing import Any

GLUE_ROLE = re.compile(r"\{glue:text\}`([^`]+)`")
LABEL = re.compile(r"^:label:\s*(\S+)\s*$")
HIDDEN = {"remove-output", "remove-cell"}
#: the PNG text chunk every figure drawn in the book's style carries
#: (chapter_code.core.plotting.SMALLEST_TEXT_KEY: the build imports no taught code),
#: written by the PNG output ``use_book_style()`` installs in the kernel
BOOK_PNG_KEY = b"Smallest text px\x00"


def glued_names(nb: Any) -> set[str]:
    """Every name a cell of the executed notebook glued (myst-nb's ``glue``)."""
    names = set()
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                names.add(name)
    return names


def _line_of_label(lines: list[str], label: str) -> int:
    return next(
        (
            i
            for i, line in enumerate(lines, start=1)
            if LABEL.match(line) and LABEL.match(line)[1] == label
        ),
        1,
    )


def _has_figure(cell: Any) -> bool:
    return any(
        "image/png" in out.get("data", {}) or "image/svg+xml" in out.get("data", {})
        for out in cell.get("outputs", [])
    )


def _alt(cell: Any) -> str:
    image = (cell.metadata.get("mystnb") or {}).get("image") or {}
    return str(image.get("alt", "") or "").strip()


def page_problems(root: Path, chapter: str, nb: Any) -> list[str]:
    """One line per unknown glue name and per figure without alt text on ``chapter``'s
    page."""
    path = root / f"{chapter}.md"
    lines = path.read_text(encoding="utf-8").splitlines()
    glued = glued_names(nb)
    problems = []
    for number, line in enumerate(lines, start=1):
        for match in GLUE_ROLE.finditer(line):
            name = match[1].strip()
            if name not in glued:
                close = difflib.get_close_matches(name, sorted(glued), n=1, cutoff=0.7)
                hint = (
                    f"; did you mean `{close[0]}`?"
                    if close
                    else "; glue it in a cell of this page"
                )
                problems.append(
                    f"{chapter}.md:{number}: {{glue:text}}`{name}` names no value a "
                    f"cell of this page glues{hint}"
                )
    for cell in nb.cells:
        if cell.cell_type != "code" or not _has_figure(cell):
            continue
        tags = set(cell.metadata.get("tags", []))
        if tags & HIDDEN or _alt(cell):
            continue
        label = cell.metadata.get("label", "?")
        problems.append(
            f"{chapter}.md:{_line_of_label(lines, label)}: the figure of cell "
            f"'{label}' has no alt text (the site would show its file path): add "
            "`image: alt:` under the cell's `:mystnb:` option, a sentence saying what "
            "the figure shows"
        )
    for cell in nb.cells:
        if (
            cell.cell_type != "code"
            or set(cell.metadata.get("tags", [])) & HIDDEN
            or not _unstyled(cell)
        ):
            continue
        label = cell.metadata.get("label", "?")
        problems.append(
            f"{chapter}.md:{_line_of_label(lines, label)}: the figure of cell "
            f"'{label}' is not drawn in the book's style (fonts, sizes, colours, its "
            "PNG for sharp screens): call `use_book_style()` "
            "(chapter_code.core.plotting) before drawing it, as the plotting "
            "functions of chapter_code do"
        )
    for cell in nb.cells:
        value = _trailing_value(cell)
        if value is not None:
            label = cell.metadata.get("label", "?")
            problems.append(
                f"{chapter}.md:{_line_of_label(lines, label)}: the figure cell "
                f"'{label}' also shows the value of its last line ({value}) as a "
                "second output, which takes the figure's name too (Sphinx would "
                "report 'Duplicate explicit target name'): end the cell with an "
                "assignment (`fig = ...`) or put `;` after its last expression"
            )
    return problems


def _unstyled(cell: Any) -> bool:
    """Whether a PNG figure of the cell lacks the mark of the book's PNG output
    (:data:`BOOK_PNG_KEY`)."""
    for out in cell.get("outputs", []):
        png = out.get("data", {}).get("image/png")
        if png:
            raw = base64.b64decode("".join(png) if isinstance(png, list) else png)
            if BOOK_PNG_KEY not in raw:
                return True
    return False


def _trailing_value(cell: Any) -> str | None:
    """The printed value of a figure cell's last expression, when it shows one beside
    its figure."""
    if cell.cell_type != "code" or not (
        (cell.metadata.get("mystnb") or {}).get("figure")
    ):
        return None
    for out in cell.get("outputs", []):
        data = out.get("data", {})
        if out.get("output_type") == "execute_result" and not any(
            k.startswith("image/") for k in data
        ):
            text = str(data.get("text/plain", "")).strip().splitlines()
            return f"`{text[0][:60]}`" if text else "a value"
    return None
