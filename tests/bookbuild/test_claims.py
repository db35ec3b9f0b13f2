"""Tests for bookbuild.lint.claims: claims read from the prose, paired with checks, and
the appendix."""

from __future__ import annotations

import nbformat
import pytest

from bookbuild.lint import claims
from bookbuild.lint.prose import check_text

PAGE = """# A page

The loop {claim}`matches the module <c-match>`, and
{claim}``the state ends within {glue:text}`gap` of the
one it reaches alone <c-pad>``.

```{code-cell} ipython3
:label: x
# {claim}`not prose <c-in-code>`
```
"""


def record(name: str, held: bool = True) -> dict:
    return {
        "name": name,
        "held": held,
        "because": "b",
        "condition": "a < b",
        "values": {"a": "1"},
    }


def page(
    claimed: list[str], declared: list[str], chapter: str = "book/p"
) -> claims.PageClaims:
    return claims.PageClaims(
        chapter,
        [(n, "s", i + 1) for i, n in enumerate(claimed)],
        {n: record(n) | {"cell": "cell-1"} for n in declared},
    )


def test_claims_are_read_from_prose_only_across_lines() -> None:
    assert claims.claims_in(PAGE) == [
        ("c-match", "matches the module", 3),
        (
            "c-pad",
            "the state ends within {glue:text}`gap` of the one it reaches alone",
            4,
        ),
    ]


def test_a_paired_book_has_no_problems() -> None:
    assert (
        claims.problems([page(["a", "b"], ["a", "b"]), page(["c"], ["c"], "book/q")])
        == []
    )


def test_every_failure_mode_is_one_line_naming_page_and_label() -> None:
    problems = claims.problems(
        [
            page(["undeclared", "twice", "twice"], ["twice", "unclaimed", "shared"]),
            page(["shared"], ["shared"], "book/q"),
            claims.PageClaims("book/r", [("", "text without a name", 7)], {}),
            claims.PageClaims(
                "book/s", [("bad", "s", 1)], {"bad": record("bad", held=False)}
            ),
        ]
    )
    assert problems == [
        "book/p.md:1: the claim names check 'undeclared', which no cell of this page "
        "declared",
        "book/p.md: check 'unclaimed' (cell 'cell-1') is declared but no sentence "
        "claims it",
        "book/p.md: check 'shared' (cell 'cell-1') is declared but no sentence claims "
        "it",
        "book/q.md: check 'shared' is also declared by book/p.md; names are unique in "
        "the book",
        "book/r.md:7: a claim names no check: write {claim}`sentence <check-name>`",
        "book/s.md: check 'bad' did not hold",
    ]


def test_checks_are_read_from_the_glued_outputs() -> None:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("...", metadata={"label": "pad-check"})
    cell.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={
                "application/papermill.record/text/plain": (
                    '{"name": "c-pad", "held": true}'
                )
            },
            metadata={"scrapbook": {"name": "check:c-pad"}},
        ),
        nbformat.v4.new_output(
            "display_data",
            data={"text/plain": "'0.5'"},
            metadata={"scrapbook": {"name": "gap"}},
        ),
    ]
    nb.cells = [nbformat.v4.new_markdown_cell("x"), cell]
    assert claims.checks_in(nb) == {
        "c-pad": {"name": "c-pad", "held": True, "cell": "pad-check"}
    }


def test_the_appendix_lists_each_claim_with_its_check_and_passes_the_prose_check() -> (
    None
):
    pages = [
        claims.PageClaims(
            "book/p",
            [("c-a", "loss falls to 1.5 nats", 3)],
            {"c-a": record("c-a") | {"values": {"loss": "1.49"}}},
        ),
        claims.PageClaims("book/empty"),
    ]
    text = claims.appendix_text(pages, {"book/p": "Chapter P"})
    assert "## Chapter P" in text
    assert "book/empty" not in text
    assert "(check-c-a)=" in text
    assert "- condition: `a < b`" in text
    assert "- status: held" in text
    assert "loss = {lit}`1.49`" in text
    assert check_text(text, "checked.md") == []


def test_the_appendix_prints_a_summary_and_keeps_its_per_claim_list_for_the_site() -> (
    None
):
    """The PDF prints the page's ``{only} latex`` summary (bookbuild.site.pdf drops its
    sections); the site reads the introduction to the per-claim list."""
    pages = [
        claims.PageClaims(
            "book/p",
            [("c-a", "x", 3), ("c-b", "y", 4)],
            {"c-a": record("c-a"), "c-b": record("c-b") | {"held": False}},
        )
    ]
    text = claims.appendix_text(pages, {"book/p": "Chapter P"})
    latex = text.split("```{only} latex", 1)[1].split("```", 1)[0]
    html = text.split("```{only} html", 1)[1].split("```", 1)[0]
    assert "| Chapter P | {lit}`2` | {lit}`2` | {lit}`1` |" in latex
    assert "`book/checked.html`" in latex
    assert "Below, for every claim" in html
    assert "Below" not in latex
    assert text.index("```{only} latex") < text.index("## Chapter P")
    assert "This build checked {lit}`2` conditions behind {lit}`2` claims." in text


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("text <c-a>", ("text", "c-a")),
        ("a $x < y$ b <c-2layer>", ("a $x < y$ b", "c-2layer")),
        ("no name", None),
        ("bad <C-A>", None),
    ],
)
def test_a_claim_names_its_check_in_angle_brackets(
    body: str, expected: tuple | None
) -> None:
    assert claims.split_target(body) == expected


def test_numbers_inside_a_claim_are_prose() -> None:
    assert check_text("A {claim}``takes 12 steps, {glue:text}`n` in all <c-a>``.\n")
    assert check_text("A {claim}``takes {glue:text}`n` steps <c-2layer>``.\n") == []


def test_the_appendix_marks_numbers_as_literal_but_never_inside_math() -> None:
    from bookbuild.lint.claims import _literal_numbers

    text = "below {lit-math}`10^{-3}` and $x = 0$ after 12 steps, {glue:text}`n` of 3.5"
    assert _literal_numbers(text) == (
        "below {lit-math}`10^{-3}` and $x = 0$ after {lit}`12` steps, {glue:text}`n` "
        "of {lit}`3.5`"
    )


def test_a_claim_s_preview_sets_e_notation_as_powers_of_ten_outside_its_code() -> None:
    from bookbuild.lint.claims import _tip_html

    record = {
        "because": "the loop matches nn.RNN to 1e-6",
        "condition": "diff_rnn <= 1e-6",
        "held": True,
        "values": {"largest difference": "1.19209e-07"},
    }
    tip = _tip_html("c-rnn-torch", record, "u1")
    assert "to 10<sup>\u22126</sup>" in tip
    assert "largest difference = 1.19209\u00a0×\u00a010<sup>\u22127</sup>" in tip
    # the Python condition is for the checks page, not the reader's tip
    assert "diff_rnn" not in tip
    # nor the internal name, but in the link
    assert "c-rnn-torch" not in tip.replace("check-c-rnn-torch", "")


def test_the_punctuation_after_a_claim_stays_with_its_mark() -> None:
    from bookbuild.lint.claims import keep_punctuation_with_mark

    end = (
        '<a class="claim-tip-link" href="checked.html#check-x">every check of '
        "this build</a></span></span></span>"
    )
    assert keep_punctuation_with_mark(f'<span class="claim">It holds{end}. Next') == (
        '<span class="claim">It holds<a class="claim-tip-link" '
        'href="checked.html#check-x">every check of this build</a></span><span '
        'class="claim-after">.</span></span></span> Next'
    )
    assert keep_punctuation_with_mark(f"x{end}), and") == (
        'x<a class="claim-tip-link" href="checked.html#check-x">every check '
        "of this build</a></span>"
        '<span class="claim-after">),</span></span></span> and'
    )
    # a word after it: a break is fine there
    assert keep_punctuation_with_mark(f"x{end} and") == f"x{end} and"


def test_a_check_that_cannot_fail_is_named_with_why() -> None:
    from bookbuild.lint.claims import trivial_checks

    page = """# P

```{code-cell} ipython3
:label: c
:tags: [remove-cell]
n = count(4, 5)
m = other(4)
claims.check("self", gap <= gap, because="x")
claims.check("recomputed", n < 3 and n == count(4, 5), because="x")
claims.check("constant", True, because="x")
claims.check("fine", n == m and gap < 1e-6, because="x")
claims.check("keyword", condition=m == other(4), because="x")
```
"""
    assert trivial_checks(page) == [
        (8, "self", "it compares `gap` with itself"),
        (
            9,
            "recomputed",
            "it compares `n` with `count(4, 5)`, the very expression that computed it",
        ),
        (10, "constant", "its condition is the constant True"),
        (
            12,
            "keyword",
            "it compares `m` with `other(4)`, the very expression that computed it",
        ),
    ]


def _bare_page(condition: str, because: str = "x") -> str:
    return f"""# P

```{{code-cell}} ipython3
:label: c
:tags: [remove-cell]
claims.check("c-bare", {condition}, because="{because}")
```
"""


@pytest.mark.parametrize(
    "condition",
    [
        "gap > 0",
        "gap >= 0",
        "gap != 0",
        "0 < gap",
        "0 <= gap",
        "gap > 0.0",
        "bool((grads > 0).all())",
        "(grads > 0).any()",
        "all(g > 0 for g in grads)",
        "(a - b).abs().max() > 0",
    ],
)
def test_a_bare_comparison_with_zero_is_named_at_its_line(condition: str) -> None:
    """A sentence saying more than a sign ("the LSTM's gradient is still 3e-5") rests on
    a check that asserts only ``> 0``: the lint names it, at the line of its call."""
    from bookbuild.lint.claims import trivial_checks, trivial_problem

    ((line, name, why),) = trivial_checks(_bare_page(condition))
    assert (line, name) == (6, "c-bare")
    assert why.startswith("its condition is the bare `")
    assert why.endswith("`, which asserts only a sign")
    assert trivial_problem("book/p.md", line, name, why).startswith(
        "book/p.md:6: check 'c-bare' asserts only a sign: its condition is the bare `"
    )


@pytest.mark.parametrize(
    "because",
    [
        "the gradient is nonzero at every distance",
        "the count is positive",
        "the loss stays above zero",
        "at least one run solved",
    ],
)
def test_a_bare_comparison_with_zero_passes_when_because_says_a_sign_is_all_it_claims(
    because: str,
) -> None:
    from bookbuild.lint.claims import trivial_checks

    assert trivial_checks(_bare_page("bool((grads > 0).all())", because)) == []


@pytest.mark.parametrize(
    "condition",
    [
        "gap > 1e-3",
        "gap < 0",
        "n > 0 and m < n",
        "lstm > 2 * rnn > 0",
        "gap > 0 < m",
        "n == 0",
        "flag is not False",
    ],
)
def test_a_comparison_that_says_more_than_a_sign_passes(condition: str) -> None:
    """A bound, a conjunction, an equality with zero (a count of none), or a comparison
    that is not with zero."""
    from bookbuild.lint.claims import trivial_checks

    assert trivial_checks(_bare_page(condition)) == []


def test_a_because_built_of_parts_is_read_for_its_words() -> None:
    from bookbuild.lint.claims import trivial_checks

    page = _bare_page("gap > 0").replace(
        'because="x"', 'because=("the gap is " f"{kind} and nonzero")'
    )
    assert 'f"{kind} and nonzero"' in page
    assert trivial_checks(page) == []


def test_no_check_of_the_book_compares_a_value_with_itself() -> None:
    from bookbuild.build import ROOT
    from bookbuild.lint.claims import trivial_checks

    found = {
        page.name: trivial_checks(page.read_text())
        for page in sorted((ROOT / "book").glob("*.md"))
    }
    assert {name: rows for name, rows in found.items() if rows} == {}


def test_a_claim_after_code_cells_is_named_at_its_own_line_and_a_check_at_its_call() -> (  # noqa: E501  (the test's name)
    None
):
    """A new author's claim on line 654 was reported at line 296: the code cells' lines
    were not counted."""
    source = (
        "# A page\n\n"
        + "".join(
            f"```{{code-cell}} ipython3\n:label: c{i}\nx = {i}\ny = x\n```\n\n"
            for i in range(3)
        )
        + (
            "```{code-cell} ipython3\n:label: checks\nclaims.check(\n    "
            '"c-held", x == 2, because="b")\n```\n\n'
            "The result {claim}`is held <c-missing>`.\n"
        )
    )
    lines = source.splitlines()
    claim_line = next(i for i, line in enumerate(lines, start=1) if "{claim}" in line)
    call_line = next(
        i for i, line in enumerate(lines, start=1) if line.startswith("claims.check(")
    )
    assert claims.claims_in(source) == [("c-missing", "is held", claim_line)]
    assert claims.declared_lines(source) == {"c-held": call_line}
    page = claims.PageClaims(
        "book/p",
        claims.claims_in(source),
        {"c-held": record("c-held", held=False) | {"cell": "checks"}},
        declared_at=claims.declared_lines(source),
    )
    assert claims.problems([page]) == [
        f"book/p.md:{claim_line}: the claim names check 'c-missing', which no cell of "
        "this page declared",
        f"book/p.md:{call_line}: check 'c-held' (cell 'checks') is declared but no "
        "sentence claims it",
        f"book/p.md:{call_line}: check 'c-held' did not hold",
    ]
