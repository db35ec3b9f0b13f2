"""Tests for bookbuild.tools.bench: the plain build's configuration, the edits each step
makes, the table and targets."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bookbuild.build import ROOT
from bookbuild.tools import bench


def test_the_plain_config_turns_execution_off_and_keeps_only_third_party_extensions() -> (  # noqa: E501  (the test's name)
    None
):
    ours = yaml.safe_load((ROOT / "_config.yml").read_text())
    plain = yaml.safe_load(bench.plain_config((ROOT / "_config.yml").read_text()))
    assert ours["execute"]["execute_notebooks"] == "cache"
    assert plain["execute"]["execute_notebooks"] == "off"
    kept = plain["sphinx"]["extra_extensions"]
    assert kept == [
        e for e in ours["sphinx"]["extra_extensions"] if not e.startswith("bookbuild")
    ]
    assert "sphinx_exercise" in kept
    assert not any(e.startswith("bookbuild") for e in kept)
    assert (
        set(plain["sphinx"]["config"])
        == set(ours["sphinx"]["config"]) - bench.PLAIN_DROP
    )
    # every dropped key is one the book sets
    assert bench.PLAIN_DROP <= set(ours["sphinx"]["config"])
    for key in ["title", "parse", "bibtex_bibfiles", "html", "latex"]:
        assert plain[key] == ours[key], key


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "book").mkdir()
    (tmp_path / "chapter_code" / "rnn").mkdir(parents=True)
    (tmp_path / "book" / "recurrence.md").write_text(
        "# One\n\nText.\n\n## Summary\n\nLast words.\n"
    )
    (tmp_path / "book" / "gated.md").write_text(
        "# Three\n\n```{code-cell} ipython3\n:label: train\nx = 1\n```\n\n"
        "```{code-cell} ipython3\n:label: fig-m-one\n:tags: "
        "[hide-input]\n:mystnb:\n:  figure:\n"
        ":    caption: A.\nplot(x)\n```\n\n```{code-cell} ipython3\n:label: "
        "fig-m-two\nplot(2)\n```\n"
    )
    (tmp_path / "chapter_code" / "rnn" / "recurrence.py").write_text(
        "def step():\n    return 1\n"
    )
    return tmp_path


def test_each_edit_changes_what_its_step_names_and_a_new_one_each_time(
    tmp_path: Path,
) -> None:
    work = _tree(tmp_path)
    bench.add_sentence(work, 0)
    bench.add_sentence(work, 1)
    text = (work / "book" / "recurrence.md").read_text()
    assert text == (
        "# One\n\nText.\n\n## Summary\n\nOne more sentence of prose, number 1.\n\n"
        "One more sentence of prose, number 0.\n\nLast words.\n"
    )
    bench.comment_figure_cell(work, 4)
    gated = (work / "book" / "gated.md").read_text()
    # after the options, inside the first figure cell
    assert ":    caption: A.\n# bench edit 4\nplot(x)\n" in gated
    assert gated.count("# bench edit") == 1
    assert "x = 1\n" in gated  # the training cell is left alone
    bench.comment_listing(work, 2)
    assert (
        (work / "chapter_code" / "rnn" / "recurrence.py")
        .read_text()
        .endswith("return 1\n\n# bench edit 2: the listing changed\n")
    )
    assert bench.EDITS["no-change rebuild"] is None


def test_an_edit_that_cannot_find_its_place_says_so(tmp_path: Path) -> None:
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "recurrence.md").write_text("# One\n")
    (tmp_path / "book" / "gated.md").write_text(
        "```{code-cell} ipython3\n:label: train\n```\n"
    )
    with pytest.raises(RuntimeError, match="no '## Summary' heading"):
        bench.add_sentence(tmp_path, 0)
    with pytest.raises(RuntimeError, match="no code cell labelled fig-"):
        bench.comment_figure_cell(tmp_path, 0)


@pytest.mark.parametrize("repeats", [0, -1, True, 2.0])
def test_repeats_must_be_a_positive_int(repeats: object) -> None:
    with pytest.raises(ValueError, match="repeats must be an int >= 1"):
        bench.measure(repeats)  # type: ignore[arg-type]


def _results(
    no_change: tuple[float, float],
    prose: tuple[float, float],
    figure: float,
    listing: float = 30.0,
) -> dict:
    def step(ours: float, plain: float) -> dict:
        reading = {"wall_s": ours, "plain_s": plain, "executed": [], "chapter_s": {}}
        return {
            "ours_s": ours,
            "plain_s": plain,
            "ratio": round(ours / plain, 2),
            "readings": [reading],
        }

    return {
        "date": "d",
        "machine": "m",
        "repeats": 1,
        "first build": {"ours": {"wall_s": 50.0}, "plain_s": 20.0, "reused": ["runs"]},
        "steps": {
            bench.STEPS[0]: step(*no_change),
            bench.STEPS[1]: step(*prose),
            bench.STEPS[2]: step(figure, 10.0),
            bench.STEPS[3]: step(listing, 10.0),
        },
    }


def test_verdicts_hold_the_targets_at_their_bounds() -> None:
    met = bench.verdicts(_results((4.5, 3.0), (15.0, 10.0), 20.0, 30.0))
    assert [line.endswith(": met") for line in met] == [True, True, True, True]
    missed = bench.verdicts(_results((4.6, 3.0), (15.2, 10.0), 20.1, 30.1))
    assert [line.endswith("NOT met") for line in missed] == [True, True, True, True]
    assert (
        missed[0]
        == "no-change rebuild: 1.53x the plain build (target <= 1.5x): NOT met"
    )
    assert (
        missed[3] == "listing edit (recurrence.py): 30.1 s, 3.01x the plain build "
        "(target <= 30 s): "
        "NOT met"
    )


def test_the_table_has_one_row_per_step_with_every_reading() -> None:
    text = bench.table(_results((6.0, 3.0), (20.0, 10.0), 25.0))
    rows = [
        line
        for line in text.splitlines()
        if line.startswith("| ") and not line.startswith("| step")
    ]
    assert [r.split(" | ")[0][2:] for r in rows] == bench.STEPS
    assert rows[0] == "| no-change rebuild | 6.0 | 3.0 | 2.0 | none | 6 / 3 |"
    assert (
        "First build (not in the medians): ours 50.0 s, reusing runs; plain 20.0 s."
        in text
    )
