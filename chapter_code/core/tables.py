"""Results as tables: rows of values become a table, typeset on the site and in the PDF.

A cell that reports a grid of numbers calls :func:`show_table` instead of
printing aligned f-strings: the rows go out as a Markdown table (optionally
inside a ``{table}`` directive with a caption), which myst-nb parses like the
page's own Markdown, so the site shows an HTML table and the PDF a LaTeX one.
Columns whose every filled cell starts with a number are right-aligned, the
others left-aligned; text is escaped, so a sample holding ``*``, ``|`` or
``$`` reads as itself.

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
) -> str:
    """The Markdown of a table with a header of ``columns`` and one line per row.

    A row is a sequence in the order of ``columns`` or a mapping from column name to
    value (a missing key is an empty cell). ``formats`` maps a column to its format
    (:func:`cell_text`). With a ``caption`` (Markdown, not escaped) the table is wrapped
    in a ``{table}`` directive, numbered like the page's figures; ``name`` gives it a
    label to ``{numref}``.
    """
    if not columns:
        raise ValueError("a table needs at least one column")
    if len(set(columns)) != len(columns):
        raise ValueError(f"column names must be distinct; got {list(columns)}")
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
    align = [
        "---:" if is_numeric([r[j] for r in grid]) else ":---"
        for j in range(len(columns))
    ]
    lines = [
        "| " + " | ".join(escape(c) for c in columns) + " |",
        "|" + "|".join(align) + "|",
    ]
    lines += ["| " + " | ".join(escape(t) for t in r) + " |" for r in grid]
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
) -> None:
    """Display :func:`markdown_table`'s table as the cell's Markdown output."""
    from IPython.display import Markdown, display

    display(
        Markdown(
            markdown_table(rows, columns, formats=formats, caption=caption, name=name)
        )
    )
