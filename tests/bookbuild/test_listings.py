"""Tests for bookbuild.lint.listings: every taught function a visible cell uses is shown
on its page."""

from __future__ import annotations

from pathlib import Path

from bookbuild.lint import listings

MODULE = """
from chapter_code.pkg.other import moved

LIMIT = 3


def taught(x):
    return x


class Model:
    pass


def plot_curve(x):
    return x
"""
OTHER = "def moved():\n    return 1\n"
FIGURES = "def plot_it():\n    return None\n"
TIMING = "def stopwatch():\n    return 0.0\n"


def book(tmp_path: Path, page: str) -> Path:
    (tmp_path / "chapter_code" / "pkg").mkdir(parents=True)
    (tmp_path / "chapter_code" / "pkg" / "mod.py").write_text(MODULE)
    (tmp_path / "chapter_code" / "pkg" / "other.py").write_text(OTHER)
    (tmp_path / "chapter_code" / "pkg" / "figures.py").write_text(FIGURES)
    (tmp_path / "chapter_code" / "pkg" / "timing.py").write_text(TIMING)
    (tmp_path / "book").mkdir()
    path = tmp_path / "book" / "page.md"
    path.write_text(page)
    return path


def cell(code: str, *options: str) -> str:
    return (
        "```{code-cell} ipython3\n"
        + "".join(f"{o}\n" for o in options)
        + code
        + "\n```\n"
    )


def test_a_visible_cell_using_an_unshown_function_or_class_is_named_with_its_line_and_file(  # noqa: E501  (the test's name)
    tmp_path: Path,
) -> None:
    page = book(
        tmp_path,
        "# Page\n\nText.\n\n"
        + cell(
            "from chapter_code.pkg.mod import LIMIT, Model, taught\n\nm = "
            "Model()\ntaught(LIMIT)"
        ),
    )
    found = listings.unshown(page, tmp_path)
    assert [(u.name, u.line, u.file) for u in found] == [
        ("Model", 5, "chapter_code/pkg/mod.py"),
        ("taught", 5, "chapter_code/pkg/mod.py"),
    ]
    assert (
        "book/page.md:5: the cell uses Model (chapter_code/pkg/mod.py), which "
        "the page never shows" in str(found[0])
    )
    assert ":pyobject: Model" in str(found[0])


def test_a_listing_anywhere_on_the_page_removed_cells_constants_and_presentation_helpers_pass(  # noqa: E501  (the test's name)
    tmp_path: Path,
) -> None:
    page = book(
        tmp_path,
        "\n".join(
            [
                "```{literalinclude} ../chapter_code/pkg/mod.py\n:pyobject: "
                "taught\n```\n",
                cell("from chapter_code.pkg.mod import LIMIT, taught\n\ntaught(LIMIT)"),
                cell(
                    "from chapter_code.pkg.mod import Model\n\nModel()",
                    ":tags: [remove-input]",
                ),
                cell(
                    "from chapter_code.pkg.mod import Model\n\nModel()",
                    ":tags: [remove-cell]",
                ),
                cell("from chapter_code.pkg.figures import plot_it\n\nplot_it()"),
                cell("from chapter_code.pkg.mod import plot_curve\n\nplot_curve(1)"),
                cell("from chapter_code.pkg.timing import stopwatch\n\nstopwatch()"),
                cell("from chapter_code.pkg.mod import Model  # imported, never used"),
            ]
        ),
    )
    assert listings.unshown(page, tmp_path) == []


def test_a_hide_input_cell_is_visible_so_its_unshown_call_is_named(
    tmp_path: Path,
) -> None:
    page = book(
        tmp_path,
        cell(
            "from chapter_code.pkg.mod import Model\n\nModel()", ":tags: [hide-input]"
        ),
    )
    assert [(u.name, u.line) for u in listings.unshown(page, tmp_path)] == [
        ("Model", 1)
    ]


def test_a_re_exported_function_is_followed_to_the_module_that_defines_it(
    tmp_path: Path,
) -> None:
    page = book(tmp_path, cell("from chapter_code.pkg.mod import moved\n\nmoved()"))
    (found,) = listings.unshown(page, tmp_path)
    assert (found.name, found.file) == ("moved", "chapter_code/pkg/other.py")


def test_a_function_passed_to_run_once_counts_as_used(tmp_path: Path) -> None:
    page = book(
        tmp_path,
        cell(
            "from chapter_code.pkg.mod import taught\n\nruntime.run_once(taught, x=1)"
        ),
    )
    assert [u.name for u in listings.unshown(page, tmp_path)] == ["taught"]


def test_every_chapter_shows_what_its_visible_cells_use() -> None:
    problems = [str(u) for page in listings.chapters() for u in listings.unshown(page)]
    assert problems == []
    assert len(listings.chapters()) == 7
