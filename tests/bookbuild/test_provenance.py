"""Where a glued number came from: the cells a glue reads from, the runs and sweeps
those cells used, the listings of the functions involved; a figure's data as CSV rows
(bookbuild/site/provenance.py)."""

from __future__ import annotations

import csv
import io
import json

import nbformat
import numpy as np

from bookbuild.execute import kernel_hooks
from bookbuild.site import provenance


def _cell(
    source: str, count: int, label: str = "", glued: tuple[str, ...] = ()
) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source, execution_count=count)
    cell.metadata["label"] = label
    cell.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={"text/plain": "1"},
            metadata={"scrapbook": {"name": name}},
        )
        for name in glued
    ]
    return cell


def _book() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# A page"),
        _cell("from myst_nb import glue\nimport torch", 1, "imports"),
        _cell("model = runtime.run_once(train, steps=3)", 2, "train"),
        _cell("table = runtime.load_sweep('grid')", 3, "sweep"),
        _cell("SIZE = 4\nother = runtime.run_once(train, steps=9)", 4, "size"),
        _cell(
            "loss = evaluate(model)\nglue('loss', loss)\nglue('size', SIZE)",
            5,
            "report",
            glued=("loss", "size", "check:ignored"),
        ),
        _cell(
            "for k in ('a',):\n    glue(f'best_{k}', table.best)",
            6,
            "loop",
            glued=("best_a",),
        ),
    ]
    return nb


ENTRY = {
    "runs": [
        {
            "function": "chapter_code.lm.char_lm.train",
            "key": "k" * 20,
            "outcome": "reused",
            "cell": 2,
        },
        {
            "function": "chapter_code.lm.char_lm.train",
            "key": "j" * 20,
            "outcome": "computed",
            "cell": 4,
        },
    ],
    "sweeps": [
        {
            "sweep": "grid",
            "config": "cpu",
            "records": 3,
            "total": 3,
            "commits": ["abc"],
            "cell": 3,
        }
    ],
}
LISTINGS = [
    ("../chapter_code/lm/char_lm.py", "train"),
    ("../chapter_code/lm/char_lm.py", "evaluate"),
    ("../chapter_code/lm/char_lm.py", None),
]


def test_a_glue_names_the_runs_of_the_cells_its_value_reads_from_and_only_those() -> (
    None
):
    found = provenance.glue_provenance(_book(), ENTRY, LISTINGS)
    assert set(found) == {"loss", "size", "best_a"}  # checks are the claims' business
    loss = found["loss"]
    assert loss["cell"] == "report"
    assert loss["number"] == 5
    assert loss["statement"] == "glue('loss', loss)"
    # ``model`` came from cell 2; cell 4 is not read
    assert [r["key"] for r in loss["runs"]] == ["k" * 12]
    assert loss["runs"][0]["outcome"] == "reused"
    assert loss["sweeps"] == []
    assert [item["name"] for item in loss["listings"]] == ["evaluate", "train"]
    assert loss["listings"][0]["id"] == "listing-evaluate"


def test_a_constant_names_the_cell_that_set_it() -> None:
    size = provenance.glue_provenance(_book(), ENTRY, LISTINGS)["size"]
    # not the run behind ``model``, read elsewhere in the same cell; the cell that set
    # SIZE also trained, and beyond the glue's own cell the search is by cell: listed
    assert [r["key"] for r in size["runs"]] == ["j" * 12]


def test_a_name_made_at_run_time_falls_back_to_the_whole_cell() -> None:
    best = provenance.glue_provenance(_book(), ENTRY, LISTINGS)["best_a"]
    assert best["statement"] == ""
    assert best["sweeps"][0]["sweep"] == "grid"
    assert best["runs"] == []


def test_listings_are_found_in_page_order() -> None:
    page = (
        "text\n```{literalinclude} ../chapter_code/a.py\n:language: "
        "python\n:pyobject: Model.step\n```\n"
        "more\n```{literalinclude} ../chapter_code/b.py\n```\n"
    )
    assert provenance.listings_in(page) == [
        ("../chapter_code/a.py", "Model.step"),
        ("../chapter_code/b.py", None),
    ]
    assert provenance.listing_id("Model.step") == "listing-model-step"


def test_figure_data_in_the_reader_s_columns_and_the_data_s_own_values() -> None:
    """Issue 53: columns named by the axes' labels (their units), series by the legend,
    numbers as the data held them; an error bar's caps, a line across the axes and a
    category's offset are not data."""
    f32 = float(np.float32(0.6525))  # 0.6524999737739563 as a float64
    summary = {
        "text": [
            "axes 1 x label: step $t$ (steps)",
            "axes 1 y label: loss $\\ell_t$ (nats)",
            "axes 1 x ticks: 0 | 5 | 10",
            "axes 1 y ticks: 0.0 | 0.5",
            "axes 1 legend: LSTM | chance",
            "axes 2 x label: share solved",
            "axes 2 y label: ",
            "axes 2 x ticks: 0.0 | 0.5 | 1.0",
            "axes 2 y ticks: vanilla RNN | GRU",
        ],
        "data": [
            {"axes": 1, "xlim": [0, 10], "ylim": [0, 1]},
            {"axes": 1, "line": "LSTM", "xy": [[0.0, f32], [5.0, 0.6000000000000001]]},
            {"axes": 1, "line": "chance", "xy": [[0.0, 0.25], [1.0, 0.25]]},
            {"axes": 1, "line": "_nolegend_", "xy": [[4.9, 0.5]]},
            {"axes": 2, "line": "_child0", "xy": [[0.75, 0.08], [0.5, 1.0]]},
        ],
    }
    rows = list(csv.reader(io.StringIO(provenance.figure_csv(summary))))
    assert rows[0] == [
        "panel",
        "series",
        "step t (steps)",
        "loss ℓₜ (nats)",
        "share solved",
        "category",
    ]
    assert rows[1] == ["panel 1", "LSTM", "0", "0.6525", "", ""]
    assert rows[2] == ["panel 1", "LSTM", "5", "0.6", "", ""]
    # axhline: its value, across every step
    assert rows[3] == ["panel 1", "chance", "", "0.25", "", ""]
    assert rows[4:] == [
        ["panel 2", "", "", "", "0.75", "vanilla RNN"],
        ["panel 2", "", "", "", "0.5", "GRU"],
    ]
    records = json.loads(provenance.figure_json(summary))
    assert records[0] == {
        "panel": "panel 1",
        "series": "LSTM",
        "step t (steps)": 0,
        "loss ℓₜ (nats)": 0.6525,
    }


def test_grouped_bars_are_named_by_their_group_and_series() -> None:
    summary = {
        "text": [
            "axes 1 x label: token",
            "axes 1 y label: probability",
            "axes 1 x ticks: a | b",
            "axes 1 legend: $\\tau$ = 0.5 | $\\tau$ = 2",
        ],
        "data": [
            {
                "axes": 1,
                "bars": [
                    [-0.4, 0, 0.4, 0.9],
                    [0.6, 0, 0.4, 0.1],
                    [0.0, 0, 0.4, 0.6],
                    [1.0, 0, 0.4, 0.4],
                ],
            }
        ],
    }
    rows = list(csv.reader(io.StringIO(provenance.figure_csv(summary))))
    assert rows == [
        ["series", "token", "probability"],
        ["τ = 0.5", "a", "0.9"],
        ["τ = 0.5", "b", "0.1"],
        ["τ = 2", "a", "0.6"],
        ["τ = 2", "b", "0.4"],
    ]


def test_a_diagram_offers_no_plotted_data() -> None:
    """Axes switched off (a schematic's boxes and arrows) plot no data: no table, so no
    CSV or JSON link."""
    summary = {
        "text": ["axes 1 title: the loop"],
        "data": [
            {"axes": 1, "xlim": [0, 1], "ylim": [0, 1]},
            {"axes": 1, "line": "_child0", "xy": [[0.4, 1.0], [9.6, 1.0]]},
        ],
    }
    assert provenance.figure_table(summary) is None
    assert provenance.figure_csv(summary) == ""


def test_figure_summaries_are_keyed_by_label() -> None:
    nb = _book()
    nb.cells[2].outputs = [
        nbformat.v4.new_output(
            "display_data", data={kernel_hooks.FIGURE_MIME: {"data": [1]}}
        )
    ]
    assert provenance.figure_summaries(nb) == {"train": ("train", {"data": [1]})}


def test_the_kernel_notes_each_run_with_the_cell_that_called_it(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from bookbuild.execute import events

    monkeypatch.setitem(events._state, "runs", [])
    monkeypatch.setattr(events, "cell", lambda: 7)
    events.note_run("f", "key", "computed", 1.0, 1.0)
    # the hooks hand the engine the sink's record
    assert kernel_hooks._state["runs"][0]["cell"] == 7


def test_a_number_glued_from_another_page_is_set_as_a_power_of_ten() -> None:
    from docutils import nodes

    from bookbuild.site.provenance import scientific_pasted_text

    doc = nodes.document(None, None)
    paragraph = nodes.paragraph(
        "",
        "below ",
        nodes.inline("1e-6", "1e-6", classes=["pasted-text"]),
        nodes.Text(" and 2.5e-3 in plain text"),
    )
    doc += paragraph
    scientific_pasted_text(None, doc, "book/checked")
    pasted = paragraph.children[1]
    assert [type(c).__name__ for c in pasted.children] == ["Text", "superscript"]
    assert pasted.astext() == "10\u22126"
    # only glued numbers change
    assert paragraph.astext().endswith("2.5e-3 in plain text")


def test_the_code_named_is_what_computed_the_number_not_every_cell_upstream() -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        _cell("config = make_config()\nnet = build_net(config)", 1, "setup"),
        _cell(
            "run = runtime.run_once(train, config=config, seed=2)\nepoch = "
            "first_epoch(run)",
            2,
            "train",
        ),
        _cell("glue('epoch', epoch)", 3, "glue", glued=("epoch",)),
    ]
    entry = {
        "runs": [
            {
                "function": "chapter_code.x.train",
                "key": "k" * 20,
                "outcome": "computed",
                "cell": 2,
                "seed": 2,
            }
        ]
    }
    listings = [
        ("../chapter_code/x.py", name)
        for name in ("make_config", "build_net", "train", "first_epoch")
    ]
    found = provenance.glue_provenance(nb, entry, listings)["epoch"]
    # not the set-up cell's
    assert [item["name"] for item in found["listings"]] == ["first_epoch", "train"]
    # the training upstream is still named, with its seed and its report row
    (run,) = found["runs"]
    assert run["seed"] == 2
    assert run["anchor"] == "run-" + "k" * 20


def test_a_text_a_check_cites_names_what_its_expression_reads() -> None:
    nb = _book()
    nb.cells.append(
        _cell(
            "claims.check('c-loss', loss < 9, because='x', "
            "cite={'loss_text': f'{loss:.2f}'})",
            7,
            "cited",
            glued=("check:c-loss", "loss_text"),
        )
    )
    cited = provenance.glue_provenance(nb, ENTRY, LISTINGS)["loss_text"]
    assert cited["cell"] == "cited"
    assert cited["statement"] == "f'{loss:.2f}'"
    assert {r["key"] for r in cited["runs"]} == {
        "k" * 12,
        "j" * 12,
    }  # loss: cell 5, which read cells 2 and 4
