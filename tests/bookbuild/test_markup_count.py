"""bookbuild.tools.markup: what a page's markup costs its author, counted from its
source."""

from __future__ import annotations

from pathlib import Path

from bookbuild.tools import markup

ROOT = Path(__file__).resolve().parents[2]

PAGE = """---
book:
  literals: ["0.5", "four"]
---
A gate of 0.5, {lit}`17` steps, {lit-math}`x = 0.5`: {claim}`the gap is {glue:text}`g_gap` <c-gap>`.
{nonresult}`Four steps.`

```{code-cell} ipython3
:label: shown
x = 1

y = 2
```

```{code-cell} ipython3
:label: hidden
:tags: [remove-cell]
claims.check("c-gap", x < y, because="x below y", cite={"g_gap": "1", "g_y": "2"})
glue("g_x", x, display=False)
```
"""  # noqa: E501 (a page's lines, as an author writes them)


def test_a_page_s_roles_calls_and_hidden_lines_are_counted() -> None:
    assert markup.count(PAGE) == {
        "glue:text": 1,
        "claim": 1,
        "lit": 1,
        "lit-math": 1,
        "nonresult": 1,
        "roles": 5,
        "declared": 2,
        "glue()": 1,
        "check()": 1,
        "cited": 2,
        "hidden": 2,
        "shown": 2,
    }


def test_the_table_has_a_row_per_chapter_with_checks_and_the_total() -> None:
    rows = markup.table(ROOT).splitlines()
    assert rows[0].startswith("| chapter | `glue:text` |")
    assert rows[2].startswith("| recurrence |")
    assert rows[-1].startswith("| all |")
    assert len(rows) == 2 + 7 + 1  # the seven chapters
