"""Tests for bookbuild.lint.references: a glue name the text cites but no cell glues, a
figure without alt text, a figure not drawn in the book's style, a figure cell that
shows the value of its last line."""

from __future__ import annotations

import base64
import functools
from pathlib import Path

import matplotlib
import nbformat

from bookbuild.lint import references

matplotlib.use("Agg")

PAGE = """# A page

The loss ends at {glue:text}`loss_final`, after {glue:text}`n_steps` steps.

```{code-cell} ipython3
:label: fig-loss
plot()
```
"""


@functools.cache
def png(styled: bool = True) -> str:
    """A figure's PNG as a cell's output holds it: through the book's PNG output
    (``use_book_style()``), or through matplotlib's own."""
    import io

    import matplotlib.pyplot as plt

    from chapter_code.core.plotting import figure_png

    fig, ax = plt.subplots(figsize=(2, 1))
    ax.plot([0, 1], [1, 0])
    if styled:
        data = figure_png(fig)[0]
    else:
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png")
        data = buffer.getvalue()
    plt.close(fig)
    return base64.b64encode(data).decode()


def notebook(
    glued: list[str], figure_options: dict | None = None, tags: list[str] | None = None
):
    nb = nbformat.v4.new_notebook()
    glue = nbformat.v4.new_code_cell("glue(...)", metadata={"label": "numbers"})
    glue.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={"text/plain": "1"},
            metadata={"scrapbook": {"name": name, "mime_prefix": ""}},
        )
        for name in glued
    ]
    meta = {
        "label": "fig-loss",
        **({"mystnb": figure_options} if figure_options else {}),
        **({"tags": tags} if tags else {}),
    }
    figure = nbformat.v4.new_code_cell("plot()", metadata=meta)
    figure.outputs = [nbformat.v4.new_output("display_data", data={"image/png": png()})]
    nb.cells = [glue, figure]
    return nb


def problems(tmp_path: Path, nb) -> list[str]:
    (tmp_path / "book").mkdir(exist_ok=True)
    (tmp_path / "book" / "ch.md").write_text(PAGE)
    return references.page_problems(tmp_path, "book/ch", nb)


ALT = {"image": {"alt": "The loss falls over the steps."}}


def test_a_page_whose_cells_provide_every_name_and_alt_text_passes(
    tmp_path: Path,
) -> None:
    assert problems(tmp_path, notebook(["loss_final", "n_steps"], ALT)) == []


def test_a_misspelt_glue_name_is_named_at_its_line_with_the_name_meant(
    tmp_path: Path,
) -> None:
    assert problems(tmp_path, notebook(["loss_finl", "n_steps"], ALT)) == [
        "book/ch.md:3: {glue:text}`loss_final` names no value a cell of this page "
        "glues; did you mean `loss_finl`?"
    ]


def test_a_name_no_cell_glues_at_all_says_to_glue_it(tmp_path: Path) -> None:
    assert problems(tmp_path, notebook(["loss_final"], ALT)) == [
        "book/ch.md:3: {glue:text}`n_steps` names no value a cell of this page glues; "
        "glue it in a cell of this page"
    ]


def test_a_figure_without_alt_text_is_named_at_its_cell(tmp_path: Path) -> None:
    (problem,) = problems(
        tmp_path,
        notebook(["loss_final", "n_steps"], {"figure": {"caption": "The loss."}}),
    )
    assert problem.startswith(
        "book/ch.md:6: the figure of cell 'fig-loss' has no alt text (the site would "
        "show its file path): add `image: alt:`"
    )
    (problem,) = problems(
        tmp_path, notebook(["loss_final", "n_steps"], {"image": {"alt": "  "}})
    )  # blank
    assert "has no alt text" in problem


def test_every_mistake_is_named_at_once(tmp_path: Path) -> None:
    assert len(problems(tmp_path, notebook([], None))) == 3


def test_a_figure_whose_output_the_page_does_not_show_needs_no_alt_text(
    tmp_path: Path,
) -> None:
    assert (
        problems(
            tmp_path, notebook(["loss_final", "n_steps"], None, tags=["remove-output"])
        )
        == []
    )


def test_a_figure_cell_ending_in_an_expression_is_named_with_what_sphinx_would_say(
    tmp_path: Path,
) -> None:
    nb = notebook(
        ["loss_final", "n_steps"],
        {**ALT, "figure": {"caption": "The loss.", "name": "fig-loss"}},
    )
    legend = nbformat.v4.new_output(
        "execute_result",
        data={"text/plain": "<matplotlib.legend.Legend at 0x7f>"},
        execution_count=1,
    )
    nb.cells[1].outputs.append(legend)
    (problem,) = problems(tmp_path, nb)
    assert problem == (
        "book/ch.md:6: the figure cell 'fig-loss' also shows the value of its last "
        "line (`<matplotlib.legend.Legend at 0x7f>`) as a second output, which takes "
        "the figure's name too (Sphinx would report 'Duplicate explicit target name'): "
        "end the cell with an assignment (`fig = ...`) or put `;` after its last "
        "expression"
    )
    nb.cells[1].outputs[-1] = nbformat.v4.new_output(
        "execute_result", data={"image/png": png()}, execution_count=1
    )
    # the figure itself as the last value is what a figure cell shows
    assert problems(tmp_path, nb) == []
    # no figure option: a value beside an image is fine
    plain = notebook(["loss_final", "n_steps"], ALT)
    plain.cells[1].outputs.append(legend)
    assert problems(tmp_path, plain) == []


def test_a_figure_not_drawn_in_the_book_s_style_is_named_at_its_cell(
    tmp_path: Path,
) -> None:
    from chapter_code.core.plotting import SMALLEST_TEXT_KEY

    assert references.BOOK_PNG_KEY == SMALLEST_TEXT_KEY.encode() + b"\0"
    nb = notebook(["loss_final", "n_steps"], ALT)
    nb.cells[1].outputs = [
        nbformat.v4.new_output("display_data", data={"image/png": png(styled=False)})
    ]
    assert problems(tmp_path, nb) == [
        "book/ch.md:6: the figure of cell 'fig-loss' is not drawn in the book's style "
        "(fonts, sizes, colours, its PNG for sharp screens): call `use_book_style()` "
        "(chapter_code.core.plotting) before drawing it, as the plotting functions of "
        "chapter_code do"
    ]
    nb.cells[1].metadata["tags"] = ["remove-output"]  # a figure the page does not show
    assert problems(tmp_path, nb) == []
