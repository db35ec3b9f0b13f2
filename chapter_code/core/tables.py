"""Results as tables: rows of values become a table, typeset on the site and in the PDF.

A cell that reports a grid of numbers calls :func:`show_table` instead of
printing aligned f-strings: the rows go out as a Markdown table (optionally
inside a ``{table}`` directive with a caption), which myst-nb parses like the
page's own Markdown, so the site shows an HTML table and the PDF a LaTeX one.
Columns whose every filled cell starts with a number are right-aligned, their
cells do not break across lines and numbers in E notation in them are set as
powers of ten (:func:`powers_of_ten`); the other columns are left-aligned; text is
escaped, so a sample holding ``*``, ``|`` or ``$`` reads as itself.

Pages: every chapter that reports a table of results (first: "Generating text").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

#: A cell that starts like a number: sign, digits, or a decimal point then digits.
_NUMERIC = re.compile(r"^[-+\u2212]?(?:\d|\.\d)")
#: Markdown punctuation that could start markup inside a table cell.
_SPECIAL = re.compile(r"([\\`*_{}\[\]<>|$~&#!])")

#: The no-break space that joins the parts of a numeric cell.
NBSP = "\u00a0"
#: A number in E notation standing alone (``4.4e-05``, not inside a word or number).
_E_NUMBER = re.compile(r"(?<![\w.])([-+]?\d+(?:\.\d+)?)[eE]([-+]?)(\d+)(?![\w.])")

Format = str | Callable[[Any], str]


def cell_text(value: Any, fmt: Format | None = None) -> str:
    """One cell's text: ``fmt`` (a format spec such as ``".2f"``, or a function)
    applied to ``value``; ``None`` is an empty cell; without ``fmt``, ``str(value)``."""
    if value is None:
        return ""
    if fmt is None:
        return str(value)
    if callable(fmt):
        return str(fmt(value))
    return format(value, fmt)


def escape(text: str) -> str:
    """``text`` safe in a Markdown table cell: markup escaped, line breaks as spaces."""
    return _SPECIAL.sub(r"\\\1", " ".join(text.splitlines()))


def powers_of_ten(text: str) -> str:
    """Each number in E notation in ``text`` set as a power of ten, as the prose sets
    glued numbers: ``4.4e-05`` becomes ``4.4 × 10`` with the exponent ``−5`` as a
    superscript (MyST's ``{sup}`` role), joined by no-break spaces; a mantissa of 1
    is dropped (``1e-06`` is 10 to the ``−6``) and a zero exponent too (``2.3e+00``
    is 2.3)."""

    def power(m: re.Match[str]) -> str:
        mantissa, sign, digits = m.groups()
        if int(digits) == 0:  # 2.3e+00 is 2.3
            return mantissa.lstrip("+").replace("-", "\u2212")
        exponent = ("\u2212" if sign == "-" else "") + str(int(digits))
        unsigned = mantissa.lstrip("+-")
        base = (
            "10"
            if re.fullmatch(r"1(?:\.0+)?", unsigned)
            else f"{unsigned}{NBSP}×{NBSP}10"
        )
        return (
            ("\u2212" if mantissa.startswith("-") else "")
            + base
            + "{sup}`"
            + exponent
            + "`"
        )

    return _E_NUMBER.sub(power, text)


def is_numeric(texts: Sequence[str]) -> bool:
    """Whether a column reads as numbers: at least one filled cell, and every filled
    cell starts with a number (``0.43 [0.40, 0.47]``, ``12%``, ``-3`` do; ``n/a``
    does not)."""
    filled = [t for t in texts if t.strip()]
    return bool(filled) and all(_NUMERIC.match(t.strip()) for t in filled)


def markdown_table(
    rows: Sequence[Sequence[Any] | Mapping[str, Any]],
    columns: Sequence[str],
    *,
    formats: Mapping[str, Format] | None = None,
    caption: str | None = None,
    name: str | None = None,
    keep_together: bool = True,
) -> str:
    """The Markdown of a table with a header of ``columns`` and one line per row.

    A row is a sequence in the order of ``columns`` or a mapping from column name to
    value (a missing key is an empty cell). ``formats`` maps a column to its format
    (:func:`cell_text`). With a ``caption`` (Markdown, not escaped) the table is wrapped
    in a ``{table}`` directive, numbered like the page's figures; ``name`` gives it a
    label to ``{numref}``. With ``keep_together`` (the default) the parts of a
    numeric cell are joined by no-break spaces; without, a wide table may wrap them.
    """
    if not columns:
        raise ValueError("a table needs at least one column")
    if len(set(columns)) != len(columns):
        raise ValueError(f"column names must be distinct; got {list(columns)}")
    blank = [i for i, c in enumerate(columns) if not str(c).strip()]
    if blank:
        raise ValueError(
            f"column {blank[0]} has no header; every column needs one (a screen reader "
            f"announces it with each cell); got {list(columns)}"
        )
    if name is not None and caption is None:
        raise ValueError("a table with a name needs a caption")
    formats = dict(formats or {})
    unknown = set(formats) - set(columns)
    if unknown:
        raise ValueError(
            f"formats for columns the table does not have: {sorted(unknown)}"
        )
    grid = []
    for i, row in enumerate(rows):
        if isinstance(row, Mapping):
            extra = set(row) - set(columns)
            if extra:
                raise ValueError(
                    f"row {i} has values for columns the table does not have: "
                    f"{sorted(extra)}"
                )
            values = [row.get(c) for c in columns]
        else:
            if len(row) != len(columns):
                raise ValueError(
                    f"row {i} has {len(row)} values for {len(columns)} columns"
                )
            values = list(row)
        grid.append(
            [cell_text(v, formats.get(c)) for v, c in zip(values, columns, strict=True)]
        )
    numeric = [is_numeric([r[j] for r in grid]) for j in range(len(columns))]
    align = ["---:" if n else ":---" for n in numeric]
    # a number with its range ("0.91 [0.89, 0.94]") stays on one line: no-break spaces
    grid = [
        [
            t.replace(" ", NBSP) if n and keep_together else t
            for t, n in zip(r, numeric, strict=True)
        ]
        for r in grid
    ]
    lines = [
        "| " + " | ".join(escape(c) for c in columns) + " |",
        "|" + "|".join(align) + "|",
    ]
    for r in grid:
        texts = [
            powers_of_ten(escape(t)) if n else escape(t)
            for t, n in zip(r, numeric, strict=True)
        ]
        lines.append("| " + " | ".join(texts) + " |")
    body = "\n".join(lines)
    if caption is None:
        return body
    options = f":name: {name}\n" if name else ""
    return f"```{{table}} {caption}\n{options}{body}\n```"


def show_table(
    rows: Sequence[Sequence[Any] | Mapping[str, Any]],
    columns: Sequence[str],
    *,
    formats: Mapping[str, Format] | None = None,
    caption: str | None = None,
    name: str | None = None,
    keep_together: bool = True,
) -> None:
    """Display :func:`markdown_table`'s table as the cell's Markdown output."""
    from IPython.display import Markdown, display

    md = markdown_table(
        rows,
        columns,
        formats=formats,
        caption=caption,
        name=name,
        keep_together=keep_together,
    )
    display(Markdown(md))
