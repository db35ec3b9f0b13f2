"""Tests for chapter_code.core.tables: the Markdown of a results table, its alignment
and escaping.

The tables are also parsed with the book's own Markdown parser (MyST, through
markdown-it), so a table that reads as pipe text on the page fails here first.
"""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from chapter_code.core.tables import (
    cell_text,
    escape,
    is_numeric,
    markdown_table,
    powers_of_ten,
    show_table,
)


def parsed_cells(md: str) -> list[list[str]]:
    """The text of each row's cells as markdown-it reads the table (header first)."""
    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    rows, row = [], None
    for t in tokens:
        if t.type == "tr_open":
            row = []
        elif t.type == "inline" and row is not None:
            row.append("".join(c.content for c in t.children or []))
        elif t.type == "tr_close":
            rows.append(row)
            row = None
    return rows


def test_a_table_has_its_header_its_rows_and_right_aligned_numbers() -> None:
    md = markdown_table(
        [["greedy", 1.0, 0.61], {"rule": "tau = 1", "known": 0.875}],
        ["rule", "known", "repeats"],
        formats={"known": ".2f", "repeats": ".3f"},
    )
    assert md.splitlines() == [
        "| rule | known | repeats |",
        "|:---|---:|---:|",
        "| greedy | 1.00 | 0.610 |",
        "| tau = 1 | 0.88 |  |",
    ]
    assert parsed_cells(md) == [
        ["rule", "known", "repeats"],
        ["greedy", "1.00", "0.610"],
        ["tau = 1", "0.88", ""],
    ]


def test_e_notation_in_numeric_columns_is_set_as_powers_of_ten() -> None:
    assert powers_of_ten("4.4e-05") == "4.4\u00a0×\u00a010{sup}`\u22125`"
    assert powers_of_ten("-3.0e+07") == "\u22123.0\u00a0×\u00a010{sup}`7`"
    assert (
        powers_of_ten("1e-06 [1.0e-3, 2e4]")
        == "10{sup}`\u22126` [10{sup}`\u22123`, 2\u00a0×\u00a010{sup}`4`]"
    )
    # not a number standing alone
    assert powers_of_ten("v1.2e3x and 12") == "v1.2e3x and 12"
    assert powers_of_ten("1.1e+00, -0.0e+00") == "1.1, \u22120.0"
    md = markdown_table([["lstm", "2.3e-01"], ["e-mail", "0.5"]], ["model", "drift"])
    assert md.splitlines()[2:] == [
        "| lstm | 2.3\u00a0×\u00a010{sup}`\u22121` |",
        "| e-mail | 0.5 |",
    ]


def test_numeric_cells_do_not_break_across_lines() -> None:
    md = markdown_table([["tau = 1", "0.71 [0.65, 0.77]"]], ["rule", "known words"])
    assert md.splitlines()[2] == "| tau = 1 | 0.71\u00a0\\[0.65,\u00a00.77\\] |"
    loose = markdown_table([["a", "1 (2)"]], ["x", "y"], keep_together=False)
    assert loose.splitlines()[2] == "| a | 1 (2) |"


def test_markup_in_text_cells_reads_as_itself() -> None:
    sample = "KING | *aside* $5 <b> [x](y) a_b `c` \\ &amp;\nsecond line"
    md = markdown_table([[sample, "1"]], ["sample", "n"])
    assert parsed_cells(md)[1] == [sample.replace("\n", " "), "1"]
    assert escape("a\nb") == "a b"


def test_numeric_columns_are_those_whose_every_filled_cell_starts_with_a_number() -> (
    None
):
    assert is_numeric(["0.43 [0.40, 0.47]", "12%", "-3", "\u22120.5", ".5", ""])
    assert not is_numeric(["1.0", "n/a"])
    assert not is_numeric(["", " "])  # an empty column is text
    assert markdown_table([["a", "n/a"]], ["x", "y"]).splitlines()[1] == "|:---|:---|"


def test_cell_text_applies_a_spec_or_a_function_and_leaves_none_empty() -> None:
    assert cell_text(0.12345, ".2f") == "0.12"
    assert cell_text(0.25, lambda v: f"{v:.0%}") == "25%"
    assert cell_text(None, ".2f") == ""
    assert cell_text(3) == "3"


def test_a_caption_wraps_the_table_in_a_table_directive_with_its_name() -> None:
    md = markdown_table([[1]], ["n"], caption="Counts per rule", name="tab-counts")
    lines = md.splitlines()
    assert lines[0] == "```{table} Counts per rule"
    assert lines[1] == ":name: tab-counts"
    assert lines[2:5] == ["| n |", "|---:|", "| 1 |"]
    assert lines[-1] == "```"
    assert markdown_table([[1]], ["n"], caption="Counts").splitlines()[1] == "| n |"


@pytest.mark.parametrize(
    ("rows", "columns", "kwargs", "message"),
    [
        ([[1]], [], {}, "at least one column"),
        ([[1, 2]], ["a", "a"], {}, "distinct"),
        ([[1, 2]], [" ", "a"], {}, "column 0 has no header"),
        ([[1, 2]], ["a"], {}, "row 0 has 2 values for 1 columns"),
        ([{"b": 1}], ["a"], {}, "row 0 has values for columns the table does not have"),
        ([[1]], ["a"], {"formats": {"b": ".2f"}}, "formats for columns"),
        ([[1]], ["a"], {"name": "t"}, "needs a caption"),
    ],
)
def test_malformed_tables_are_refused(rows, columns, kwargs, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        markdown_table(rows, columns, **kwargs)


def test_show_table_displays_the_markdown(monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", shown.append)
    show_table(
        [["x", "2 (3)"]], ["name", "n"], caption="A caption", keep_together=False
    )
    assert len(shown) == 1
    assert shown[0]._repr_markdown_() == markdown_table(
        [["x", "2 (3)"]], ["name", "n"], caption="A caption", keep_together=False
    )
    assert "2 (3)" in shown[0]._repr_markdown_()


def test_a_zero_exponent_drops_a_leading_plus_and_keeps_the_sign_of_a_minus() -> None:
    # Pins the zero-exponent branch on signed mantissas: "+2.3e+00" is "2.3" (the plus
    # is dropped from the left, where it stands), "-2.3e-00" is "−2.3" with a true minus
    # sign.
    assert powers_of_ten("+2.3e+00") == "2.3"
    assert powers_of_ten("-2.3e-00") == "\u22122.3"
    assert powers_of_ten("+1e0 [+4.5E+00]") == "1 [4.5]"


def test_e_notation_in_a_text_column_is_left_as_written() -> None:
    # Pins that only numeric columns are set as powers of ten: a text cell naming a
    # setting ("lr 3e-3") keeps its E notation, while the numeric column beside it is
    # set.
    md = markdown_table([["lr 3e-3", "1e-06"], ["n/a", "2.0e+01"]], ["setting", "loss"])
    assert md.splitlines()[1] == "|:---|---:|"
    assert md.splitlines()[2:] == [
        "| lr 3e-3 | 10{sup}`\u22126` |",
        "| n/a | 2.0\u00a0×\u00a010{sup}`1` |",
    ]


def test_show_table_passes_every_option_on_and_keeps_numeric_cells_together_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Pins that show_table hands its formats, caption and name to markdown_table, and
    # that its keep_together defaults to True like markdown_table's: the cell "2 (3)" is
    # joined by no-break spaces, the value 0.123 formatted to two places, the table
    # labelled.
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", shown.append)
    show_table(
        [["x", "2 (3)", 0.123]],
        ["name", "n", "p"],
        formats={"p": ".2f"},
        caption="Cap",
        name="tab-x",
    )
    md = shown[0]._repr_markdown_()
    assert md.splitlines() == [
        "```{table} Cap",
        ":name: tab-x",
        "| name | n | p |",
        "|:---|---:|---:|",
        "| x | 2\u00a0(3) | 0.12 |",
        "```",
    ]
