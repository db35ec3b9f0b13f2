"""Tests for bookbuild.lint.vocabulary: a chapter's prose, captions and openable cells
free of the build's language."""

from __future__ import annotations

from pathlib import Path

import pytest

from bookbuild.lint import vocabulary


def prose(text: str, names: tuple[str, ...] = ()) -> list[str]:
    return [p.text for p in vocabulary.prose_problems(text, "page.md", list(names))]


@pytest.mark.parametrize(
    ("sentence", "word"),
    [
        (
            "The runs come from an experiment sweep made ahead of the build.",
            "experiment sweep",
        ),
        ("These runs repeat every sweep's seeds.", "sweep's"),
        ("Start it with `make experiments SWEEP=scoreboard`.", "make experiments"),
        ("It runs through submitit, locally or on Slurm.", "submitit"),
        ("The build reads them with `runtime.load_sweep`.", "load_sweep"),
        ("Each run writes a file under `records/scoreboard/`.", "records/"),
        ("On the records, the large model took longer.", "the records"),
        ("The grid's records give the same accuracy.", "grid's records"),
        ("The result is memoized under the build folder.", "memoized"),
        ("The snapshot is committed with the book.", "committed"),
        ("The median step took a millisecond in this build.", "this build"),
        ("The runs were trained ahead of the build.", "the build"),
        ("The counts are this build's.", "this build's"),
        ("```{admonition} Answers, computed by the build", "the build"),
        ("## This build beside the sources", "This build"),
        ("In both builds each row scores below the one before it.", "both builds"),
        (
            "The notebooks are generated from the listings at every\nbuild, so they "
            "cannot drift.",
            "every build",
        ),
    ],
)
def test_each_kind_of_build_word_is_named(sentence, word):
    found = prose(sentence + "\n")
    assert found
    assert any(
        word.lower() in text.lower() or text.lower() in word.lower() for text in found
    ), found


@pytest.mark.parametrize(
    "sentence",
    [
        "Pick one contender and one setting and sweep it over three values.",
        "A learning-rate sweep of your own shows the same thing.",
        "The loop records the contribution of each step.",
        "Nothing in the state records how many turns came before.",
        "We commit to one recipe for every contender.",
        "The scoreboard of Chapter 6 lists every contender.",
        "See {ref}`the window study <sec-l-window-sweep>` and "
        "{numref}`fig-l-window-sweep`.",
        "We build a memory out of two parts.",
        "The next cell builds a seeded `nn.RNN` with `build_recall_net`.",
        "Build the cell of {cite:t}`hochreiter1997` from its equations.",
        "Both build on the gated cells.",
        "They were trained beforehand ({doc}`how the book is built </book/building>`).",
        "The notebooks are generated each time the book is built.",
    ],
)
def test_english_and_targets_pass(sentence):
    assert prose(sentence + "\n", ("memory-robustness",)) == []


def test_a_sweeps_registered_name_is_named_and_a_caption_is_read():
    page = (
        "```{code-cell} ipython3\n:mystnb:\n:  figure:\n"
        ':    caption: "Runs of memory-robustness, sixteen seeds."\nx = 1\n```\n'
    )
    found = vocabulary.prose_problems(page, "page.md", ["memory-robustness"])
    assert [(p.line, p.text) for p in found] == [(4, "memory-robustness")]


def test_a_cell_a_reader_can_open_may_not_load_records():
    page = (
        "```{code-cell} ipython3\n:tags: [hide-input]\nboard = "
        "runtime.load_sweep('scoreboard')\n"
        "runs = board.by_job()\n```\n\n"
        "```{code-cell} ipython3\n:tags: [remove-cell]\nboard = "
        "runtime.load_sweep('scoreboard')\n```\n\n"
        "```{code-cell} ipython3\nfrom bookbuild.runs.registry import GPU_SIZES\n```\n"
    )
    found = vocabulary.cell_problems(page, "page.md")
    assert [(p.line, p.text) for p in found] == [
        (3, "load_sweep("),
        (4, ".by_job("),
        (13, "from bookbuild"),
    ]
    assert "remove-cell" in str(found[0])


def test_the_books_chapters_pass(tmp_path: Path):
    assert [str(p) for p in vocabulary.problems()] == []


def test_main_names_page_and_line(tmp_path: Path, capsys):
    (tmp_path / "book").mkdir()
    (tmp_path / "records" / "char-lm-book").mkdir(parents=True)
    (tmp_path / "_toc.yml").write_text(
        "parts:\n- numbered: true\n  chapters:\n  - file: book/one\n"
    )
    (tmp_path / "book" / "one.md").write_text(
        "# One\n\nThe runs of char-lm-book, from the sweep's records.\n"
    )
    (tmp_path / "book" / "intro.md").write_text("# Intro\n")
    assert vocabulary.main([str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    # the name, the sweep, the records
    assert [line.split(":")[:2] for line in out] == [["book/one.md", "3"]] * 3
    assert "char-lm-book" in out[0] + out[1] + out[2]


def test_a_phrase_broken_across_two_lines_is_named_where_it_starts():
    page = (
        "# One\n\nThe notebooks are made at every\nbuild, so they stay.\n\nbuild "
        "again\n"
    )
    found = vocabulary.prose_problems(page, "page.md")
    assert [(p.line, p.text) for p in found] == [(3, "every build")]
