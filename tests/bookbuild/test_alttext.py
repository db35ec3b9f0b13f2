"""Tests for bookbuild.lint.alttext: numbers in alt text must be shown by the recorded
figure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bookbuild.lint.alttext import alt_numbers, check_page, page_alts, shown_values
from bookbuild.lint.prose import check_pages

PAGE = (
    "---\njupytext:\n  format_version: 0.13\n---\n\n"
    "```{code-cell} ipython3\n:label: fig-curve\n:mystnb:\n:  figure:\n:    "
    'caption: "A curve."\n'
    ":  image:\n"
    ':    alt: "{alt}"\n\nfig = plot()\n```\n'
)
TEXT = [
    "axes 1 x label: step",
    "axes 1 x ticks: 0 | 20 | 40 | 60",
    "axes 1 y ticks: $\\mathdefault{10^{-30}}$ | $\\mathdefault{10^{0}}$",
    "axes 1 legend: RNN | LSTM",
]
DATA = [
    {"axes": 1, "xlim": [0, 60], "ylim": [1e-31, 2]},
    {"axes": 1, "line": "RNN", "xy": [[0, 1.0], [60, 0.7614]]},
    {"axes": 1, "line": "LSTM", "xy": [[0, 1.0], [60, 4.4e-5]]},
]


def book(tmp_path: Path, alt: str, glued: str = "17") -> Path:
    (tmp_path / "book").mkdir(exist_ok=True)
    (tmp_path / "book" / "ch.md").write_text(
        PAGE.replace("{alt}", alt), encoding="utf-8"
    )
    base = tmp_path / "baselines" / "cpu-avx2"
    (base / "ch").mkdir(parents=True, exist_ok=True)
    records = {
        "fig-curve": [{"kind": "image", "file": "fig-curve-1.png", "text": TEXT}],
        "glue-cell": [{"kind": "glue", "name": "n", "lines": [f"'{glued}'"]}],
    }
    (base / "ch.json").write_text(json.dumps(records), encoding="utf-8")
    (base / "ch" / "fig-curve-1.json").write_text(json.dumps(DATA), encoding="utf-8")
    return tmp_path


def test_alt_numbers_reads_digits_words_and_scientific_notation_but_not_indices() -> (
    None
):
    found = alt_numbers(
        "Five lines from step 1 to 60, down to 4e-5 and 0.76 (95%), h_(t-1), x_4, t+1."
    )
    assert [(w, v) for w, v, _ in found] == [
        ("Five", 5.0),
        ("1", 1.0),
        ("60", 60.0),
        ("4e-5", 4e-5),
        ("0.76", 0.76),
        ("95%", 95.0),
    ]
    assert found[4][2] == pytest.approx(0.005)
    assert found[3][2] == pytest.approx(0.5e-5)


def test_shown_values_include_ticks_powers_data_and_line_counts() -> None:
    shown = shown_values(TEXT, DATA)
    for value in (20.0, 1e-30, 0.7614, 4.4e-5, 2.0):
        assert value in shown
    assert shown.count(2.0) >= 2  # two legend entries and two lines (and the y limit)


@pytest.mark.parametrize(
    "alt",
    [
        "Two lines over steps 0 to 60 on a log axis from 1e-30; the RNN ends near "
        "0.76, the LSTM near 4e-5.",
        "A plot whose legend names the RNN and the LSTM, and 17 glued runs.",
        "No numbers at all.",
    ],
)
def test_true_alt_texts_pass(tmp_path: Path, alt: str) -> None:
    root = book(tmp_path, alt)
    assert check_page(root, root / "book" / "ch.md") == []


@pytest.mark.parametrize(
    ("alt", "bad"),
    [
        ("Steps 0 to 80.", "80"),  # the axis ends at 60
        ("The RNN ends near 0.74.", "0.74"),  # 0.7614 rounds to 0.76
        ("Three lines, four boxes.", "four"),  # two lines are drawn
        ("Down to 4e-6.", "4e-6"),
        ("A glued 17.5.", "17.5"),  # the glue reads 17, not 17.5
    ],
)
def test_a_number_the_figure_does_not_show_is_named(
    tmp_path: Path, alt: str, bad: str
) -> None:
    root = book(tmp_path, alt)
    (problem,) = check_page(root, root / "book" / "ch.md")
    assert problem.startswith("book/ch.md:12: the alt text of 'fig-curve' says")
    assert f"{bad!r}" in problem
    assert "baselines/cpu-avx2/" in problem


def test_a_diagram_s_coordinates_are_not_shown_values(tmp_path: Path) -> None:
    root = book(tmp_path, "Four boxes.")
    records = json.loads((root / "baselines/cpu-avx2/ch.json").read_text())
    # axes without ticks: a diagram
    records["fig-curve"][0]["text"] = ["axes 1 text: $h_t$"]
    (root / "baselines/cpu-avx2/ch.json").write_text(json.dumps(records))
    (root / "baselines/cpu-avx2/ch/fig-curve-1.json").write_text(
        json.dumps([{"axes": 1, "bars": [[4, 4, 4, 4]]}])
    )
    assert len(check_page(root, root / "book" / "ch.md")) == 1


def test_unrecorded_figures_are_reported_and_the_prose_check_includes_alt_texts(
    tmp_path: Path,
) -> None:
    root = book(tmp_path, "Steps 0 to 80.")
    assert any("'80'" in p for p in check_pages(root))
    (root / "baselines/cpu-avx2/ch.json").write_text(json.dumps({}))
    (problem,) = check_page(root, root / "book" / "ch.md")
    assert "records no figure for that cell" in problem


def test_page_alts_reads_yaml_quoted_alt_with_its_cell_label() -> None:
    assert page_alts(PAGE.replace("{alt}", 'A \\"quoted\\" 5')) == [
        (12, "fig-curve", 'A "quoted" 5')
    ]


def test_every_number_the_figure_does_not_show_is_named_in_one_run(
    tmp_path: Path,
) -> None:
    root = book(
        tmp_path, "Steps 0 to 80; the RNN ends near 0.74 and the LSTM near 4e-6."
    )
    found = check_page(root, root / "book" / "ch.md")
    assert [p.split(" says ")[1].split(",")[0] for p in found] == [
        "'80'",
        "'0.74'",
        "'4e-6'",
    ]
    assert all(
        p.startswith("book/ch.md:12: the alt text of 'fig-curve' says") for p in found
    )
