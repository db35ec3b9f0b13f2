"""bookbuild.lint.source: the mistakes a page's source shows, found before anything
executes, one line each at the file and line, on the authoring guide's example page
(AUTHORING.md) with one mistake made at a time."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bookbuild import build, gate
from bookbuild.lint import source
from tests.test_authoring import blocks

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = "book/authoring-example"


def example() -> str:
    return blocks()[f"{CHAPTER}.md"][1]


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


CHECK = "claims.check("  # where the check is declared
FIGURE_CELL = "```{code-cell} ipython3\n:label: fig-fg-norms"
RUN_CELL = "```{code-cell} ipython3\n:label: fg-run"


def problems(tmp_path: Path, text: str) -> list[str]:
    page = tmp_path / "book" / "authoring-example.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(text)
    return source.page_problems(page, CHAPTER)


def mistake(old: str, new: str) -> str:
    text = example()
    assert text.count(old) == 1, old
    return text.replace(old, new)


def test_the_example_page_and_every_page_of_the_book_pass(tmp_path: Path) -> None:
    assert problems(tmp_path, example()) == []
    started = time.perf_counter()
    assert source.check_pages(ROOT) == []
    # seconds, before anything executes (about 1 s on 2 cores)
    assert time.perf_counter() - started < 10


def test_an_unknown_glue_name_is_named_at_its_line_with_the_name_meant(
    tmp_path: Path,
) -> None:
    text = mistake(
        "After {glue:text}`fg_steps` steps", "After {glue:text}`fg_stesp` steps"
    )
    assert problems(tmp_path, text) == [
        f"{CHAPTER}.md:{line_of(text, 'fg_stesp')}: {{glue:text}}`fg_stesp` names no "
        "value a cell of this page glues; did you mean `fg_steps`?"
    ]


def test_a_claim_without_its_check_is_named_at_the_claim_s_line(tmp_path: Path) -> None:
    text = mistake("nine tenths <fg-geometric>", "nine tenths <fg-geometrik>")
    assert problems(tmp_path, text) == [
        f"{CHAPTER}.md:{line_of(text, '{claim}')}: the claim names check "
        "'fg-geometrik', which no cell of this page declares; did you mean "
        "'fg-geometric'?",
        f"{CHAPTER}.md:{line_of(text, CHECK)}: check 'fg-geometric' is declared but no "
        "sentence claims it: write {claim}`the sentence it holds <fg-geometric>`",
    ]


def test_a_check_without_a_claim_is_named_at_the_check_s_line(tmp_path: Path) -> None:
    text = mistake(
        "{claim}`each step keeps the same nine tenths <fg-geometric>`",
        "each step keeps nine tenths",
    )
    assert problems(tmp_path, text) == [
        f"{CHAPTER}.md:{line_of(text, CHECK)}: check 'fg-geometric' is declared but no "
        "sentence claims it: write {claim}`the sentence it holds <fg-geometric>`"
    ]


def test_a_check_that_cannot_fail_is_named_at_its_call(tmp_path: Path) -> None:
    text = mistake("bool((ratios - 0.9).abs().max() < 1e-5)", "True")
    (problem,) = problems(tmp_path, text)
    assert problem.startswith(
        f"{CHAPTER}.md:{line_of(text, CHECK)}: check 'fg-geometric' cannot fail: "
    )


def test_a_check_that_asserts_only_a_sign_is_named_at_its_call(tmp_path: Path) -> None:
    text = mistake(
        "bool((ratios - 0.9).abs().max() < 1e-5)", "bool((ratios > 0).all())"
    )
    assert problems(tmp_path, text) == [
        f"{CHAPTER}.md:{line_of(text, CHECK)}: check 'fg-geometric' asserts only a "
        "sign: its condition is the bare `ratios > 0`, which asserts only a sign; "
        "assert the bound the sentence states, or say in `because` that a sign is all "
        "it claims (nonzero, positive)"
    ]


def test_a_figure_without_alt_text_is_named_at_its_cell(tmp_path: Path) -> None:
    text = example()
    start = text.index(":  image:\n")
    text = text[:start] + text[text.index("\n", text.index(":    alt:")) + 1 :]
    assert problems(tmp_path, text) == [
        f"{CHAPTER}.md:{line_of(text, FIGURE_CELL)}: the figure of cell 'fig-fg-norms' "
        "has no alt text (the site would show its file path): add `image: alt:` under "
        "the cell's `:mystnb:` option, a sentence saying what the figure shows"
    ]


def test_two_cells_with_one_name_are_named_before_sphinx_reports_a_duplicate_target(
    tmp_path: Path,
) -> None:
    text = mistake(":    name: fig-fg-norms", ":    name: fg-run")
    assert problems(tmp_path, text) == [
        f"{CHAPTER}.md:{line_of(text, FIGURE_CELL)}: cell 'fig-fg-norms' reuses the "
        f"name 'fg-run' of the cell at line {line_of(text, RUN_CELL)} (Sphinx would "
        "report 'Duplicate explicit target name'): give each cell and figure its own"
    ]


@pytest.mark.parametrize(
    "last",
    ["ax[0].legend()", "ax[0].xaxis.set_label_text('step')", "plt.title('norms')"],
)
def test_a_figure_cell_ending_in_a_drawing_call_is_named_before_sphinx_reports_a_duplicate_target(  # noqa: E501  (the test's name)
    tmp_path: Path, last: str
) -> None:
    text = mistake(
        "fig = plot_state_norms(norms)\n",
        f"fig = plot_state_norms(norms)\nax = fig.axes\n{last}\n",
    )
    assert problems(tmp_path, text) == [
        f"{CHAPTER}.md:{line_of(text, FIGURE_CELL)}: the figure cell 'fig-fg-norms' "
        f"ends in `{last}`, whose value would show as a second output taking the "
        "figure's name (Sphinx would report 'Duplicate explicit target name'): end "
        "the cell with an assignment (`fig = ...`) or put `;` after its last "
        "expression"
    ]
    # the value is not shown
    assert problems(tmp_path, text.replace(f"{last}\n", f"{last};\n")) == []
    # returns nothing
    assert problems(tmp_path, text.replace(f"{last}\n", "plt.show()\n")) == []


def test_a_figure_drawn_before_the_book_s_style_is_named_at_its_cell(
    tmp_path: Path,
) -> None:
    direct = (
        "import matplotlib.pyplot as plt\n\nfig, ax = "
        "plt.subplots()\nax.semilogy(norms.tolist());\n"
    )
    text = mistake(
        "from chapter_code.rnn.forgetting import plot_state_norms\n\nfig = "
        "plot_state_norms(norms)\n",
        direct,
    )
    assert problems(tmp_path, text) == [
        f"{CHAPTER}.md:{line_of(text, FIGURE_CELL)}: cell 'fig-fg-norms' draws with "
        "`plt.subplots(...)` before any cell of this page calls `use_book_style()`: "
        "call it first (chapter_code.core.plotting), or draw through a plotting "
        "function of chapter_code, so the figure has the book's fonts, sizes, colours "
        "and PNG"
    ]
    styled = direct.replace(
        "import matplotlib.pyplot as plt\n",
        "import matplotlib.pyplot as plt\n\nfrom chapter_code.core.plotting import "
        "use_book_style\n\nuse_book_style()\n",
    )
    assert problems(tmp_path, text.replace(direct, styled)) == []


def test_every_mistake_is_named_at_once(tmp_path: Path) -> None:
    text = mistake(
        "After {glue:text}`fg_steps` steps", "After {glue:text}`fg_stesp` steps"
    )
    text = text.replace("nine tenths <fg-geometric>", "nine tenths <fg-geometrik>")
    text = text.replace(":    name: fig-fg-norms", ":    name: fg-run")
    assert len(problems(tmp_path, text)) == 4


@pytest.mark.parametrize(
    "call",
    [
        'glue(f"fg_{key}_left", STEPS, display=False)',
        'glue(f"fg_{key}".replace(".", "_"), STEPS, display=False)',
    ],
)
def test_names_made_by_f_strings_are_patterns(tmp_path: Path, call: str) -> None:
    text = mistake('glue("fg_steps", STEPS, display=False)', call)
    assert (
        problems(
            tmp_path, text.replace("{glue:text}`fg_steps`", "{glue:text}`fg_a_left`")
        )
        == []
    )
    # fg_steps itself is no longer glued, and the pattern fg_..._left does not make it
    if "_left" in call:
        found = problems(tmp_path, text)
        # the sentence's and the exercise's
        assert len(found) == text.count("{glue:text}`fg_steps`") == 2
        assert all(
            "{glue:text}`fg_steps` names no value" in problem for problem in found
        )


def test_names_a_loop_takes_from_a_written_out_list_are_known(tmp_path: Path) -> None:
    loop = (
        'for name, value in [("fg_steps", STEPS), ("fg_half", STEPS // 2)]:\n    '
        "glue(name, value, display=False)"
    )
    text = mistake('glue("fg_steps", STEPS, display=False)', loop)
    assert problems(tmp_path, text) == []
    found = problems(
        tmp_path,
        text.replace("After {glue:text}`fg_steps`", "After {glue:text}`fg_hlaf`"),
    )
    assert found == [
        f"{CHAPTER}.md:{line_of(text, 'After {glue:text}')}: {{glue:text}}`fg_hlaf` "
        "names no value a cell of this page glues; did you mean `fg_half`?"
    ]


def test_names_computed_at_run_time_are_left_to_the_check_after_execution(
    tmp_path: Path,
) -> None:
    text = mistake(
        'glue("fg_steps", STEPS, display=False)', "glue(name, STEPS, display=False)"
    )
    assert problems(tmp_path, text.replace("`fg_steps`", "`fg_anything`")) == []


def test_a_name_the_page_s_last_execution_glued_counts(
    tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """A helper from chapter_code may glue: what the last execution of the page's
    current code glued is known."""
    text = mistake('glue("fg_steps", STEPS, display=False)', "glue_all(STEPS)")
    problems(tmp_path, text)
    # no cache here: the source is all there is
    assert len(source.check_pages(tmp_path)) == 2
    monkeypatch.setattr(
        source, "last_glued", lambda root, chapter: frozenset({"fg_steps"})
    )
    assert source.check_pages(tmp_path) == []
    # a check a helper declares
    text = mistake("nine tenths <fg-geometric>", "nine tenths <fg-helper>")
    problems(tmp_path, text)
    monkeypatch.setattr(
        source, "last_glued", lambda root, chapter: frozenset({"check:fg-helper"})
    )
    assert [p.split(": ", 1)[1][:40] for p in source.check_pages(tmp_path)] == [
        "check 'fg-geometric' is declared but no "
    ]


def _bad_book(tmp_path: Path) -> Path:
    text = mistake(
        "After {glue:text}`fg_steps` steps", "After {glue:text}`fg_stesp` steps"
    )
    problems(tmp_path, text)
    return tmp_path


def test_make_check_stops_on_them_before_executing_anything(
    tmp_path, monkeypatch, capsys
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(
        gate, "run_and_check", lambda *a, **k: pytest.fail("nothing executes")
    )
    monkeypatch.setattr(gate, "prose_verdict", lambda root: 0)
    assert gate.check(_bad_book(tmp_path)) == 1
    err = capsys.readouterr().err
    assert "1 mistake(s) in the pages' source, found before executing anything:" in err
    assert f"  {CHAPTER}.md:" in err
    assert "check FAILED before executing anything" in err


def test_make_book_stops_on_them_before_executing_anything(
    tmp_path, monkeypatch, capsys
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(
        gate, "run_and_check", lambda *a, **k: pytest.fail("nothing executes")
    )
    monkeypatch.setattr(build, "ROOT", _bad_book(tmp_path))
    monkeypatch.setattr(build, "BUILD_DIR", tmp_path / "_build")
    monkeypatch.delenv("BOOK_BUILD_DIR", raising=False)
    assert build.build() == 1
    err = capsys.readouterr().err
    assert "{glue:text}`fg_stesp` names no value" in err
    assert "before executing anything" in err


# ---- a check's cite={...} glues (issue 51)


def test_names_a_check_cites_are_glued_names(tmp_path: Path) -> None:
    text = example()
    assert 'cite={"fg_left": ' in text
    assert problems(tmp_path, text) == []
    found = problems(
        tmp_path, text.replace("{glue:text}`fg_left`", "{glue:text}`fg_lefts`")
    )
    assert found == [
        f"{CHAPTER}.md:{line_of(text, '{glue:text}`fg_left`')}: "
        f"{{glue:text}}`fg_lefts` names no "
        "value a cell of this page glues; did you mean `fg_left`?"
    ]


def test_a_cited_name_is_known_only_from_a_check_s_cite(tmp_path: Path) -> None:
    text = mistake('    cite={"fg_left": ', '    other={"fg_left": ')
    (found,) = problems(tmp_path, text)
    assert "{glue:text}`fg_left` names no value a cell of this page glues" in found


def test_cited_names_made_by_f_strings_are_patterns_and_a_cite_built_elsewhere_is_unknowable(  # noqa: E501 (a test name)
    tmp_path: Path,
) -> None:
    text = mistake('cite={"fg_left": ', 'cite={f"fg_{STEPS}_left": ')
    assert (
        problems(
            tmp_path, text.replace("{glue:text}`fg_left`", "{glue:text}`fg_20_left`")
        )
        == []
    )
    text = mistake('cite={"fg_left": f"{norms[-1] / norms[0]:.1%}"}', "cite=cited")
    assert (
        problems(
            tmp_path, text.replace("{glue:text}`fg_left`", "{glue:text}`fg_anything`")
        )
        == []
    )
