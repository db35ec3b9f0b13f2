"""Tests for bookbuild.lint.prose: numbers typed into prose are caught; glue, {lit},
math, code and structure are not."""

from __future__ import annotations

from pathlib import Path

import pytest

from bookbuild.lint.prose import check_pages, check_text, main

FRONT = "---\njupytext:\n  format_version: 0.13\n---\n"


def numbers(text: str) -> list[str]:
    """The numbers reported for a page body, in order."""
    return [
        m.split("the number ")[1].split(" is typed")[0].strip("'")
        for m in check_text(FRONT + text)
    ]


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("The loss fell to 5.2 after training.", ["5.2"]),
        ("It reached 25% of the runs.", ["25%"]),
        ("About 23,000 optimiser steps.", ["23,000"]),
        ("We use 64 hidden units and a learning rate of 2.0.", ["64", "2.0"]),
        ("The forget bias +1 and the bias -2 help.", ["+1", "-2"]),
        ("Raised to the 80th power.", ["80th"]),
        (
            "About a fifth wider, eighteen runs, a hundred steps.",
            ["fifth", "eighteen", "hundred"],
        ),
        ("Cut at 1e-30 and 2.5e4.", ["1e-30", "2.5e4"]),
    ],
)
def test_typed_numbers_are_caught(sentence: str, expected: list[str]) -> None:
    assert numbers(sentence) == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "The gap is {glue:text}`m_gap` after {glue:text}`m_steps` steps.",
        "Shown in {glue:}`fig_value` and {glue}`raw_value`.",
        "Position {lit}`17` uses the same weights as position {lit}`18`.",
        "The product $0.9^{80} \\approx 2 \\times 10^{-4}$ is small.",
        "Call `clip(x, 1.0)` with `float64` tensors.",
        "As {cite:t}`gers2000` showed; see {eq}`eq-2` and {numref}`fig-3` and "
        "{ref}`sec-1`.",
        "A {term}`forget gate <forget gate 2>` and a [link](https://example.org/page2).",
        "Names like float64, W_2, x1 and H200 are not numbers.",
        "One, two and three, a half, the first and the second are ordinary words.",
        "Figures drawn <!-- 12 hidden --> here.",
    ],
)
def test_allowed_forms_pass(sentence: str) -> None:
    assert numbers(sentence) == []


def test_structure_is_not_prose() -> None:
    page = (
        "(sec-12)=\n"
        "% a comment for authors: 0.9 and 4 are fine here\n"
        "## 3.1 A numbered heading\n\n"
        "1. **First item.** No numbers here.\n"
        "2. `[2]` The second marker.\n\n"
        "$$\nx = 42\n$$\n\n"
        "```{code-cell} ipython3\n:label: cell-7\nprint(3.14)\n```\n\n"
        "```{math}\n:label: eq-9\nh = 2 x\n```\n\n"
        "```python\nn = 99\n```\n"
        "Taking norms, $\\lVert g_{t-1} \\rVert \\le\n\\lVert W "
        "\\rVert^{T-1}$ across two lines.\n"
    )
    assert numbers(page) == []


def test_math_spanning_lines_ends_at_the_paragraph() -> None:
    assert numbers(
        "An open $x_1 +\ny_2$ span, then 7.\n\nA stray $ sign\n\nand 8 after it."
    ) == ["7", "8"]


def test_prose_inside_prose_directives_and_titles_is_checked() -> None:
    page = (
        "````{exercise} Train for 30 epochs\n:label: ex-1\n\nUse 12 units.\n````\n\n"
        ":::{admonition} Note\n:class: note\nIt took 7 seconds.\n:::\n"
        "| a | b |\n|---|---|\n| 3 | four |\n"
    )
    assert numbers(page) == ["30", "12", "7", "3", "four"]


def test_messages_name_page_line_number_and_remedy() -> None:
    (message,) = check_text(FRONT + "\nThe accuracy was 0.38.\n", "book/x.md")
    assert message.startswith("book/x.md:6: the number '0.38'")
    assert "{glue:text}" in message
    assert "{lit}" in message


def test_check_pages_and_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "good.md").write_text(
        FRONT + "Glued: {glue:text}`a`.\n", encoding="utf-8"
    )
    # generated: skipped
    (tmp_path / "book" / "build-report.md").write_text("Took 12 s.\n", encoding="utf-8")
    assert check_pages(tmp_path) == []
    assert main([str(tmp_path)]) == 0
    (tmp_path / "book" / "bad.md").write_text(FRONT + "Typed: 138.\n", encoding="utf-8")
    assert check_pages(tmp_path) == [
        "book/bad.md:5: the number '138' is typed into the prose; "
        + check_text("x 1")[0].split("; ", 1)[1]
    ]
    assert main([str(tmp_path)]) == 1
    assert "138" in capsys.readouterr().out


def test_missing_book_folder_is_a_named_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="root must hold the book's pages"):
        check_pages(tmp_path)


def test_lit_role_renders_plain_text() -> None:
    from docutils import nodes

    from bookbuild.site.lit import lit_role

    (node,), messages = lit_role("lit", "{lit}`17`", "17", 1, None)
    assert messages == []
    assert isinstance(node, nodes.inline)
    assert node.astext() == "17"
    assert node["classes"] == ["lit"]


def test_lit_role_sets_e_notation_as_a_power_of_ten() -> None:
    """A literal in E notation (a source's 1.2e-07, a setting's 2e-3) reads as the glued
    numbers do."""
    from docutils import nodes

    from bookbuild.site.lit import lit_role

    (node,), _ = lit_role("lit", "{lit}`1.2e-07`", "1.2e-07", 1, None)
    assert node["classes"] == ["lit"]
    assert node.astext() == "1.2\u00a0×\u00a010\u22127"
    assert [type(c).__name__ for c in node.children] == ["Text", "superscript"]
    (setting,), _ = lit_role("lit", "{lit}`2e-3`", "2e-3", 1, None)
    assert setting.next_node(nodes.superscript).astext() == "\u22123"


def test_pages_are_read_again_once_when_the_rendering_of_literals_changes() -> None:
    from types import SimpleNamespace

    from bookbuild.site.lit import pages_to_reread, rendering_key

    env = SimpleNamespace(found_docs={"book/a", "book/checked", "book/new"})
    assert pages_to_reread(None, env, {"book/new"}, set(), set()) == [
        "book/a",
        "book/checked",
    ]
    assert env.book_lit_rendering == rendering_key()
    # the same code: nothing more
    assert pages_to_reread(None, env, set(), set(), set()) == []
    env.book_lit_rendering = "an older rendering"
    assert pages_to_reread(None, env, set(), set(), set()) == [
        "book/a",
        "book/checked",
        "book/new",
    ]


def test_figure_captions_in_code_cell_options_are_prose() -> None:
    page = (
        "```{code-cell} ipython3\n:label: fig-a\n:mystnb:\n:  figure:\n"
        ':    caption: "Trained for 150 steps at rate {glue:text}`lr`; cut at '
        '$10^{-30}$, gate from {lit}`0`."\n'
        ":    name: fig-a\n:  image:\n"
        # alt text: bookbuild.lint.alttext's business, not prose
        ':    alt: "A line from 0 to 60."\n'
        "x = 3\n```\n"
    )
    assert numbers(page) == ["150"]


def test_numbers_typed_into_markup_fail_the_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bookbuild.lint import prose

    page = (
        "# A page\n\nThe loss is $0.135$ after `26` steps of the "
        "{ref}`400-step run <sec-run>`, with\n"
        "`hidden=64`; $h_{t-1}$, $W_2$, `float64`, {ref}`sec-run`, "
        "{lit-math}`p = 0.9` and {lit}`0.5` are "
        "fine.\n\n```{code-cell} python\nx = 26  # $0.1$\n```\n"
    )
    assert prose.markup_numbers(page) == [
        (3, "{ref} text", "{ref}`400-step run <sec-run>`"),
        (3, "code span", "`26`"),
        (3, "inline math", "$0.135$"),
        (4, "code span", "`hidden=64`"),
    ]
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "ch.md").write_text(page)
    assert prose.MARKUP_RULE_ENFORCED
    problems = prose.check_pages(tmp_path)
    assert len(problems) == 4
    assert problems[2].startswith(
        "book/ch.md:3: a number is typed into inline math '$0.135$'; glue it"
    )
    assert "{lit-math}" in problems[2]
    assert prose.main(["--markup", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "book/ch.md: 4\n  book/ch.md:3: {ref} text: {ref}`400-step run <sec-run>`\n"
    )
    assert "  book/ch.md:3: inline math: $0.135$\n" in out
    assert out.rstrip().endswith("4 number(s) typed into markup")


def test_lit_math_renders_as_inline_math() -> None:
    from docutils import nodes

    from bookbuild.site.lit import lit_math_role

    (node,), messages = lit_math_role(
        "lit-math", "{lit-math}`p = 0.9`", "p = 0.9", 1, None
    )
    assert messages == []
    assert isinstance(node, nodes.math)
    assert node.astext() == "p = 0.9"


# ---- literals declared once per page (issue 51)


def declaring(*literals: str) -> str:
    """A page whose front matter declares ``literals``, as an author writes it."""
    listed = ", ".join(f'"{lit}"' for lit in literals)
    return (
        f"---\njupytext:\n  format_version: 0.13\nbook:\n  literals: [{listed}]\n---\n"
    )


def test_declared_literals_are_accepted_wherever_the_prose_writes_them() -> None:
    page = declaring("0.5", "four", "nine tenths") + (
        "A gate of 0.5 halves it; Four steps later, and again after four.\n"
        "It keeps nine tenths, not 0.55 or 40.\n"
        '```{code-cell} ipython3\n:label: c\n:mystnb:\n:  figure:\n:    caption: "At '
        '0.5, nine tenths."\n'
        "x = 1\n```\n"
    )
    assert [m.split(": ", 1)[1][:22] for m in check_text(page, "book/x.md")] == [
        "the number '0.55' is t",
        "the number '40' is typ",
    ]


def test_a_declared_literal_the_prose_never_writes_is_named_at_the_declaration() -> (
    None
):
    page = declaring("0.5", "four") + "A gate of {lit}`0.5` halves it, four times.\n"
    assert check_text(page, "book/x.md") == [
        "book/x.md:5: the page declares the literal '0.5' (front matter, book: "
        "literals), but its prose never "
        "writes it outside a role: remove it from the declaration"
    ]


def test_a_declared_literal_in_e_notation_keeps_its_role() -> None:
    page = declaring("1e-6") + "Equal to {lit}`1e-6`, and to 1e-6 typed.\n"
    first, second = check_text(page, "book/x.md")
    assert first == (
        "book/x.md:5: the page's literals (front matter, book: literals) declare "
        "'1e-6', in E "
        "notation, which only {lit} sets as a power of ten: keep {lit}`1e-6` where "
        "the prose writes "
        "it and remove it from the declaration"
    )
    assert second.startswith("book/x.md:7: the number '1e-6' is typed into the prose")


def test_declared_literals_are_quoted_numbers() -> None:
    page = '---\nbook:\n  literals: [0.5, "step"]\n---\nA gate of 0.5 and a step.\n'
    messages = check_text(page, "book/x.md")
    assert messages[0] == (
        "book/x.md:3: the page's literals (front matter, book: literals) declare "
        "0.5, which "
        "YAML read as a float: quote each literal, written as the prose prints it "
        '("0.50", '
        '"four")'
    )
    assert messages[1] == (
        "book/x.md:3: the page's literals (front matter, book: literals) declare "
        "'step', which "
        "holds no number the check would refuse: remove it from the declaration"
    )
    assert messages[2].startswith("book/x.md:5: the number '0.5' is typed")


def test_declared_literals_do_not_cover_inline_math_or_another_page() -> None:
    page = declaring("0.55") + "Prose 0.55, but $x = 0.55$ in math.\n"
    assert check_text(page) == []  # math is not prose: the markup rule reads it
    from bookbuild.lint.prose import markup_numbers

    assert markup_numbers(page) == [(7, "inline math", "$x = 0.55$")]
    assert numbers("Prose 0.55 on a page that declares nothing.\n") == ["0.55"]
