"""bookbuild.lint.cellformat: chapter cells formatted by ruff at 88 columns, options and
prose untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from bookbuild.lint import cellformat

OPTIONS = """\
```{code-cell} ipython3
:label: long-call
:tags: [remove-cell]
:mystnb:
:  figure:
:    caption: "A caption that is long on purpose, longer than eighty-eight columns, and left as it is."
:    name: fig-long
"""  # noqa: E501  (long on purpose)
PAGE = f"""\
# A page

Prose that is long on purpose: more than eighty-eight columns of words, which the formatter never touches.

{OPTIONS}
result = some_function(first_argument=1, second_argument=2, third_argument=3, fourth_argument=4)
ax.legend();
```

```{{code-cell}} ipython3
%matplotlib inline
x=1
```
"""  # noqa: E501  (long on purpose)


@pytest.fixture
def page(tmp_path: Path) -> Path:
    path = tmp_path / "page.md"
    path.write_text(PAGE)
    return path


def test_check_lists_the_cell_and_fails(
    page: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cellformat.main(["--check", str(page)]) == 1
    out, err = capsys.readouterr()
    fences = [
        n
        for n, line in enumerate(PAGE.split("\n"), 1)
        if line.startswith("```{code-cell}")
    ]
    assert out.splitlines() == [f"{page}:{fences[0]}: this cell would be reformatted"]
    # the magic cell is reported, not formatted
    assert f"{page}:{fences[1]}: left alone" in err
    assert page.read_text() == PAGE  # --check writes nothing


def test_formatting_keeps_options_prose_and_the_hiding_semicolon(page: Path) -> None:
    assert cellformat.main([str(page)]) == 0
    text = page.read_text()
    assert OPTIONS in text
    assert "Prose that is long on purpose" in text
    assert (
        "result = some_function(\n    first_argument=1, second_argument=2, "
        "third_argument=3, fourth_argument=4\n)\n" in text
    )
    # ruff would drop it, and the cell's value would show
    assert "ax.legend();\n```" in text
    assert "%matplotlib inline\nx=1\n" in text  # unparsable: left as it was
    assert (
        max(
            len(line)
            for cell in cellformat.cells(text.split("\n"))
            for line in cell.code.split("\n")
        )
        <= 88
    )


def test_formatting_is_idempotent(page: Path) -> None:
    cellformat.main([str(page)])
    once = page.read_text()
    assert cellformat.main(["--check", str(page)]) == 0
    cellformat.main([str(page)])
    assert page.read_text() == once


def test_check_reports_a_line_the_formatter_cannot_shorten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "long.md"
    path.write_text('```{code-cell} ipython3\nprint("' + "word " * 20 + '")\n```\n')
    assert cellformat.main(["--check", str(path)]) == 1
    out = capsys.readouterr().out
    # the string alone on its line, after formatting
    assert f"{path}:3: 106 columns, over 88" in out
