"""Tests for bookbuild.gate.baselines: what the regression gate records, normalises and
compares."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from bookbuild.gate import baselines  # noqa: E402

WHY = "float32 rounding in another order"


def png_of_curve(ys: list[float]) -> str:
    # Matplotlib's defaults, whatever style another test in this worker applied (bbox
    # "tight" changes the size).
    with plt.style.context("default"):
        fig, ax = plt.subplots(figsize=(4, 3), dpi=80)
        ax.plot(ys)
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def notebook(
    printed: str,
    curve: list[float],
    prose: str = "Some prose.",
    options: dict | None = None,
):
    nb = nbformat.v4.new_notebook()
    md = nbformat.v4.new_markdown_cell(prose)
    printing = nbformat.v4.new_code_cell(
        "print(x)", metadata={"label": "result", **(options or {})}
    )
    printing.outputs = [nbformat.v4.new_output("stream", name="stdout", text=printed)]
    glued = nbformat.v4.new_code_cell(
        "glue('acc', 0.9)", metadata={"label": "glue-cell"}
    )
    glued.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={"application/papermill.record/text/plain": "0.9"},
            metadata={
                "scrapbook": {
                    "name": "acc",
                    "mime_prefix": "application/papermill.record/",
                }
            },
        )
    ]
    figure = nbformat.v4.new_code_cell("plot()", metadata={"label": "figure"})
    figure.outputs = [
        nbformat.v4.new_output("display_data", data={"image/png": png_of_curve(curve)})
    ]
    nb.cells = [md, printing, glued, figure]
    return nb


@pytest.fixture
def baseline(tmp_path: Path) -> Path:
    recs, images, _ = baselines.extract(
        notebook("loss = 0.1234\n", [1, 2, 3, 2]), "book/ch"
    )
    baselines.write_baseline(tmp_path, "book/ch", recs, images)
    return tmp_path


def diffs_against(baseline: Path, nb) -> list[baselines.Difference]:
    recs, images, options = baselines.extract(nb, "book/ch")
    return baselines.compare(
        "book/ch", baselines.read_baseline(baseline, "book/ch"), recs, images, options
    )


def test_identical_outputs_pass(baseline: Path) -> None:
    assert diffs_against(baseline, notebook("loss = 0.1234\n", [1, 2, 3, 2])) == []


def test_prose_only_change_passes(baseline: Path) -> None:
    assert (
        diffs_against(
            baseline,
            notebook("loss = 0.1234\n", [1, 2, 3, 2], prose="Rewritten prose."),
        )
        == []
    )


def test_changed_printed_number_fails_and_names_cell(baseline: Path) -> None:
    diffs = diffs_against(baseline, notebook("loss = 0.1235\n", [1, 2, 3, 2]))
    assert [(d.chapter, d.cell, d.old, d.new) for d in diffs] == [
        ("book/ch", "result", "loss = 0.1234", "loss = 0.1235")
    ]


def test_cell_tolerance_widens_the_number_comparison(baseline: Path) -> None:
    loose = {"tolerance": {"rtol": 1e-3, "reason": WHY}}
    assert (
        diffs_against(
            baseline, notebook("loss = 0.1235\n", [1, 2, 3, 2], options=loose)
        )
        == []
    )
    assert (
        len(
            diffs_against(
                baseline, notebook("loss = 0.1300\n", [1, 2, 3, 2], options=loose)
            )
        )
        == 1
    )
    assert (
        len(
            diffs_against(
                baseline, notebook("gain = 0.1235\n", [1, 2, 3, 2], options=loose)
            )
        )
        == 1
    )


def test_volatile_cell_is_not_compared(tmp_path: Path) -> None:
    accept_into(
        tmp_path, notebook("loss = 0.1234\n", [1, 2, 3, 2], options={"volatile": True})
    )
    assert (
        diffs_against(
            tmp_path, notebook("loss = 9\n", [1, 2, 3, 2], options={"volatile": True})
        )
        == []
    )


# ---- weakening a check is itself a difference (issue 30, item 5)
# ----------------------------------------


def accept_into(folder: Path, nb) -> None:
    """What ``accept`` writes for ``nb``: its records, its cell options (as the gate
    records them), its figures."""
    from bookbuild.gate import pagecontent

    recs, images, options = baselines.extract(nb, "book/ch")
    recs[pagecontent.OPTIONS] = [
        {"cell": label, **opts} for label, opts in options.items() if opts
    ]
    baselines.write_baseline(folder, "book/ch", recs, images)


def test_marking_a_compared_cell_volatile_is_a_difference(baseline: Path) -> None:
    (diff,) = diffs_against(
        baseline, notebook("loss = 9\n", [1, 2, 3, 2], options={"volatile": True})
    )
    assert (diff.cell, diff.old) == ("result", "compared")
    assert "marked ':volatile: true'" in diff.new


def test_a_loosened_tolerance_is_a_difference_and_the_output_is_compared_with_the_old_one(  # noqa: E501  (the test's name)
    tmp_path: Path,
) -> None:
    strict = {"tolerance": {"rtol": 1e-6, "reason": WHY}}
    accept_into(tmp_path, notebook("loss = 0.1234\n", [1, 2, 3, 2], options=strict))
    loose = {"tolerance": {"rtol": 0.1, "reason": WHY}}
    diffs = diffs_against(
        tmp_path, notebook("loss = 0.1300\n", [1, 2, 3, 2], options=loose)
    )
    assert [(d.cell, d.old, d.new) for d in diffs] == [
        (
            "result",
            ":tolerance: rtol 1e-06",
            "rtol 0.1 (a looser tolerance; outputs compared with 1e-06)",
        ),
        ("result", "loss = 0.1234", "loss = 0.1300"),
    ]
    tighter = {"tolerance": {"rtol": 1e-9, "reason": WHY}}
    assert (
        diffs_against(
            tmp_path, notebook("loss = 0.1234\n", [1, 2, 3, 2], options=tighter)
        )
        == []
    )


def test_a_figure_is_compared_by_its_pixels_only_when_its_bytes_differ(
    tmp_path: Path,
) -> None:
    old = tmp_path / "old.png"
    Image.new("RGB", (20, 20), "white").save(old)
    # the same file
    assert baselines._image_difference(old, old.read_bytes(), 2) is None
    changed = io.BytesIO()
    Image.new("RGB", (20, 20), "black").save(changed, format="PNG")
    assert "figure differs" in baselines._image_difference(old, changed.getvalue(), 2)
    recompressed = io.BytesIO()
    Image.new("RGB", (20, 20), "white").save(
        recompressed, format="PNG", compress_level=0
    )
    assert recompressed.getvalue() != old.read_bytes()
    # other bytes, the same pixels
    assert baselines._image_difference(old, recompressed.getvalue(), 2) is None


def test_a_loosened_image_tolerance_is_a_difference(tmp_path: Path) -> None:
    accept_into(tmp_path, notebook("loss = 0.1234\n", [1, 2, 3, 2]))
    nb = notebook("loss = 0.1234\n", [1, 2, 3, 2])
    nb.cells[3].metadata["tolerance"] = {"image": 50, "reason": WHY}
    (diff,) = diffs_against(tmp_path, nb)
    assert (diff.cell, diff.old) == ("figure", ":image_tolerance: 2")


# ---- accept rewrites only what differs (issue 30, item 9)
# ------------------------------------------------


def test_accept_keeps_the_baselines_text_for_outputs_equal_under_masks_and_tolerance(
    tmp_path: Path,
) -> None:
    nb = notebook(
        "took 1.25 s\nloss = 0.1234\n",
        [1, 2, 3, 2],
        options={"tolerance": {"rtol": 1e-3, "reason": WHY}},
    )
    accept_into(tmp_path, nb)
    before = (tmp_path / "ch.json").read_text()
    png = (tmp_path / "ch" / "figure-1.png").read_bytes()
    loose = {"tolerance": {"rtol": 1e-3, "reason": WHY}}
    again = notebook("took 9.75 s\nloss = 0.12345\n", [1, 2, 3, 2], options=loose)
    # the intended change
    again.cells[2].outputs[0]["data"]["application/papermill.record/text/plain"] = "0.8"
    recs, images, options = baselines.extract(again, "book/ch")
    base = baselines.read_baseline(tmp_path, "book/ch")
    kept, kept_images = baselines.settle(base, recs, images, options)
    # raw timing and last digit as accepted before
    assert kept["result"] == base[0]["result"]
    assert kept["glue-cell"][0]["lines"] == ["0.8"]
    assert kept_images["figure-1.png"] == png
    baselines.write_baseline(tmp_path, "book/ch", kept, kept_images)
    after = (tmp_path / "ch.json").read_text()
    changed = [line for line in after.splitlines() if line not in before.splitlines()]
    assert len(changed) == 1
    assert '"0.8"' in changed[0]


# ---- messages: a change of output kind shows the new text (issue 30, item 11)
# ----------------------------


def test_output_appearing_or_changing_kind_shows_its_text(tmp_path: Path) -> None:
    nb = notebook("x\n", [1, 2])
    nb.cells[1].outputs = []
    accept_into(tmp_path, nb)
    (diff,) = diffs_against(tmp_path, notebook("NaN loss at step 3\n", [1, 2]))
    assert (diff.old, diff.new) == ("no output", "text: 'NaN loss at step 3'")
    assert "+NaN loss at step 3" in diff.detail.splitlines()
    accept_into(tmp_path, notebook("x\n", [1, 2]))
    nb = notebook("x\n", [1, 2])
    nb.cells[3].outputs.insert(
        0, nbformat.v4.new_output("stream", name="stdout", text="warning: clipped\n")
    )
    (diff,) = diffs_against(tmp_path, nb)
    assert (diff.old, diff.new) == ("image", "text, image: 'warning: clipped'")


def test_changed_curve_fails(baseline: Path) -> None:
    diffs = diffs_against(baseline, notebook("loss = 0.1234\n", [1, 2, 2.5, 2]))
    assert len(diffs) == 1
    assert diffs[0].cell == "figure"
    assert "figure differs" in diffs[0].new


def test_antialiasing_noise_passes(baseline: Path) -> None:
    nb = notebook("loss = 0.1234\n", [1, 2, 3, 2])
    png = base64.b64decode(nb.cells[3].outputs[0]["data"]["image/png"])
    pixels = np.array(Image.open(io.BytesIO(png)).convert("RGBA")).astype(int)
    rng = np.random.default_rng(0)
    rows, cols = (
        rng.integers(0, pixels.shape[0], 200),
        rng.integers(0, pixels.shape[1], 200),
    )
    pixels[rows, cols, :3] = np.clip(
        pixels[rows, cols, :3] + rng.integers(-3, 4, (200, 3)), 0, 255
    )
    buf = io.BytesIO()
    Image.fromarray(pixels.astype(np.uint8)).save(buf, format="png")
    nb.cells[3].outputs[0]["data"]["image/png"] = base64.b64encode(
        buf.getvalue()
    ).decode()
    assert diffs_against(baseline, nb) == []


def test_changed_glue_value_fails(baseline: Path) -> None:
    nb = notebook("loss = 0.1234\n", [1, 2, 3, 2])
    nb.cells[2].outputs[0]["data"]["application/papermill.record/text/plain"] = "0.8"
    diffs = diffs_against(baseline, nb)
    assert [(d.cell, d.old, d.new) for d in diffs] == [
        ("glue-cell: glue acc", "0.9", "0.8")
    ]


def test_missing_baseline_fails(tmp_path: Path) -> None:
    recs, images, options = baselines.extract(notebook("x\n", [1, 2]), "book/ch")
    diffs = baselines.compare(
        "book/ch", baselines.read_baseline(tmp_path, "book/ch"), recs, images, options
    )
    assert len(diffs) == 1
    assert diffs[0].old == "no baseline"


def test_new_and_removed_cells_are_reported(baseline: Path) -> None:
    nb = notebook("loss = 0.1234\n", [1, 2, 3, 2])
    nb.cells[1].metadata["label"] = "renamed"
    cells = {(d.cell, d.old, d.new) for d in diffs_against(baseline, nb)}
    assert ("result", "recorded cell", "cell removed") in cells
    assert ("renamed", "no baseline", "1 outputs") in cells


def test_volatile_substrings_are_normalised() -> None:
    text = (
        "trained in 12.5 s at 0x7f3a2b4c5d6e, wrote /tmp/abc123/x.pt, 300 ms per step"
    )
    assert (
        baselines.normalise(text)
        == "trained in <duration> at <address>, wrote <tmp-path>, <duration> per step"
    )
    assert baselines.normalise("loss 0.5 at step 3") == "loss 0.5 at step 3"


def test_cells_need_unique_labels() -> None:
    nb = notebook("x\n", [1, 2])
    del nb.cells[1].metadata["label"]
    expected = r"book/ch.md: code cell #1 \(starting `print\(x\)`\) has no ':label:'"
    with pytest.raises(baselines.RecordError, match=expected):
        baselines.extract(nb, "book/ch")
    nb = notebook("x\n", [1, 2])
    nb.cells[2].metadata["label"] = "result"
    with pytest.raises(
        baselines.RecordError, match="'result' is used by more than one code cell"
    ):
        baselines.extract(nb, "book/ch")


def test_baseline_file_is_valid_json_with_one_output_per_line(baseline: Path) -> None:
    text = (baseline / "ch.json").read_text()
    assert '  {"kind": "text", "lines": ["loss = 0.1234"]}' in text.splitlines()
    assert (baseline / "ch" / "figure-1.png").exists()


def test_glued_wall_times_are_recorded_as_durations() -> None:
    nb = notebook("x\n", [1, 2])
    out = nb.cells[2].outputs[0]
    out["metadata"]["scrapbook"]["name"] = "grid_seconds"
    recs, _, _ = baselines.extract(nb, "book/ch")
    assert recs["glue-cell"] == [
        {"kind": "glue", "name": "grid_seconds", "lines": ["<duration>"]}
    ]


def test_glue_is_matched_by_name_not_position(baseline: Path) -> None:
    nb = notebook("loss = 0.1234\n", [1, 2, 3, 2])
    extra = nbformat.v4.new_output(
        "display_data",
        data={"application/papermill.record/text/plain": "7"},
        metadata={
            "scrapbook": {
                "name": "new_value",
                "mime_prefix": "application/papermill.record/",
            }
        },
    )
    nb.cells[2].outputs.insert(0, extra)
    diffs = diffs_against(baseline, nb)
    assert [(d.cell, d.old, d.new) for d in diffs] == [
        ("glue-cell: glue new_value", "not glued", "7")
    ]


def test_stream_chunks_split_mid_line_are_joined_exactly_as_printed() -> None:
    nb = notebook("x\n", [1, 2])
    nb.cells[1].outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="reach count: 1"),
        nbformat.v4.new_output("stream", name="stdout", text="2 of 60\nnext line\n"),
    ]
    recs, _, _ = baselines.extract(nb, "book/ch")
    assert recs["result"] == [
        {"kind": "text", "lines": ["reach count: 12 of 60", "next line"]}
    ]


def figure_output(xlabel: str, ys: list[float]) -> dict:
    """A display output as the engine's kernel writes it: the PNG plus the figure's
    summary."""
    from bookbuild.execute.kernel_hooks import FIGURE_MIME, summarise_figure

    with plt.style.context("default"):
        fig, ax = plt.subplots(figsize=(4, 3), dpi=80)
        ax.plot(ys, label="state")
        ax.set_xlabel(xlabel)
        ax.legend()
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        summary = summarise_figure(fig)
        plt.close(fig)
    data = {
        "image/png": base64.b64encode(buf.getvalue()).decode(),
        FIGURE_MIME: summary,
    }
    return nbformat.v4.new_output("display_data", data=data)


def with_figure(xlabel: str, ys: list[float]):
    nb = notebook("loss = 0.1234\n", [1, 2, 3, 2])
    nb.cells[3].outputs = [figure_output(xlabel, ys)]
    return nb


def test_a_wrong_subscript_in_a_figure_label_fails_though_its_pixels_hardly_move(
    tmp_path: Path,
) -> None:
    recs, images, _ = baselines.extract(with_figure("$h_{t-1}$", [1, 2, 3]), "book/ch")
    baselines.write_baseline(tmp_path, "book/ch", recs, images)
    assert "axes 1 x label: $h_{t-1}$" in recs["figure"][0]["text"]
    diffs = diffs_against(tmp_path, with_figure("$h_{t+1}$", [1, 2, 3]))
    assert [(d.cell, d.old, d.new) for d in diffs] == [
        (
            "figure",
            "figure text 'axes 1 x label: $h_{t-1}$'",
            "'axes 1 x label: $h_{t+1}$'",
        )
    ]


def test_figure_data_is_compared_within_tolerance(tmp_path: Path) -> None:
    recs, images, _ = baselines.extract(with_figure("step", [1, 2, 3]), "book/ch")
    baselines.write_baseline(tmp_path, "book/ch", recs, images)
    assert diffs_against(tmp_path, with_figure("step", [1, 2, 3 + 1e-9])) == []
    moved = diffs_against(tmp_path, with_figure("step", [1, 2, 3.001]))
    assert len(moved) == 1
    assert moved[0].new.startswith("plotted data moved (e.g. ")


def test_volatile_cells_are_not_stored_so_accepting_twice_writes_nothing(
    tmp_path: Path,
) -> None:
    nb = notebook("built at 22:31 on commit abc\n", [1, 2], options={"volatile": True})
    recs, images, _ = baselines.extract(nb, "book/ch")
    assert recs["result"] == [{"kind": "volatile"}]
    # first time: files written
    assert baselines.write_baseline(tmp_path, "book/ch", recs, images)
    nb = notebook("built at 22:40 on commit def\n", [1, 2], options={"volatile": True})
    recs, images, _ = baselines.extract(nb, "book/ch")
    assert baselines.write_baseline(tmp_path, "book/ch", recs, images) == []


def test_a_figure_no_longer_drawn_is_removed_from_the_baseline(tmp_path: Path) -> None:
    recs, images, _ = baselines.extract(notebook("x\n", [1, 2]), "book/ch")
    baselines.write_baseline(tmp_path, "book/ch", recs, images)
    nb = notebook("x\n", [1, 2])
    nb.cells[3].outputs = []
    recs, images, _ = baselines.extract(nb, "book/ch")
    changed = baselines.write_baseline(tmp_path, "book/ch", recs, images)
    assert tmp_path / "ch" / "figure-1.png" in changed
    assert not (tmp_path / "ch" / "figure-1.png").exists()


def test_a_diagram_drawn_without_axes_reports_only_the_text_it_shows() -> None:
    from bookbuild.execute.kernel_hooks import summarise_figure

    with plt.style.context("default"):
        fig, ax = plt.subplots()
        ax.text(0.5, 0.5, "$c_{t-1}$")
        ax.set_axis_off()
        summary = summarise_figure(fig)
        plt.close(fig)
    assert summary["text"] == ["axes 1 text: $c_{t-1}$"]


def test_a_difference_in_trailing_whitespace_is_shown_visibly(baseline: Path) -> None:
    (diff,) = diffs_against(baseline, notebook("loss = 0.1234  \n", [1, 2, 3, 2]))
    assert diff.cell == "result"
    # quoted, so the spaces show
    assert (diff.old, diff.new) == ("'loss = 0.1234'", "'loss = 0.1234  '")
    assert "+loss = 0.1234··" in diff.detail.splitlines()  # and marked in the diff


def test_a_text_difference_comes_with_a_unified_diff_of_the_whole_cell(
    tmp_path: Path,
) -> None:
    recs, images, _ = baselines.extract(
        notebook("epoch 1\nepoch 2\nloss 0.5\n", [1, 2]), "book/ch"
    )
    baselines.write_baseline(tmp_path, "book/ch", recs, images)
    (diff,) = diffs_against(
        tmp_path, notebook("epoch 1\nepoch 2\nloss 0.6\ndone\n", [1, 2])
    )
    # the first differing line, as before
    assert (diff.old, diff.new) == ("loss 0.5", "loss 0.6")
    lines = diff.detail.splitlines()
    assert lines[:2] == ["--- baseline", "+++ this build"]
    assert [ln for ln in lines[2:] if ln[:1] in "-+ "] == [
        " epoch 1",
        " epoch 2",
        "-loss 0.5",
        "+loss 0.6",
        "+done",
    ]


def test_a_figure_text_differing_in_whitespace_is_shown_visibly(tmp_path: Path) -> None:
    recs, images, _ = baselines.extract(with_figure("step", [1, 2, 3]), "book/ch")
    baselines.write_baseline(tmp_path, "book/ch", recs, images)
    # (its pixels may move too)
    diff = diffs_against(tmp_path, with_figure("step ", [1, 2, 3]))[0]
    assert (diff.old, diff.new) == (
        "figure text 'axes 1 x label: step'",
        "'axes 1 x label: step '",
    )
    assert "+axes 1 x label: step·" in diff.detail.splitlines()


# ---- every output at the precision it has (issue 57)
# ----------------------------------------------------------


def test_a_shown_float_may_move_by_one_unit_of_its_last_digit_and_no_more() -> None:
    assert baselines.last_digit_unit("1.514") == pytest.approx(1e-3)
    assert baselines.last_digit_unit("2.312e-10") == pytest.approx(1e-13)
    assert [baselines.last_digit_unit(t) for t in ("64", "1e-6", "below", "nan")] == [
        None
    ] * 4
    assert baselines.shown_equal("1.514", "1.515")
    assert baselines.shown_equal("9.999", "10.00")
    assert not baselines.shown_equal("1.514", "1.516")
    assert not baselines.shown_equal("64", "65")  # an integer (a count) is exact
    assert not baselines.shown_equal("below 1e-6", "below 1e-5")  # a bound is exact
    assert baselines.shown_equal("[1.000, 2]", "[1.001, 2]")
    assert not baselines.shown_equal("[1.000, 2]", "[1.000, 3]")


def _check_nb(record: dict):
    import json

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("claims.check(...)", metadata={"label": "c-check"})
    cell.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={"application/papermill.record/text/plain": json.dumps(record)},
            metadata={
                "scrapbook": {
                    "name": "check:c-x",
                    "mime_prefix": "application/papermill.record/",
                }
            },
        )
    ]
    nb.cells = [cell]
    return nb


def test_a_checks_record_is_compared_exactly_except_its_values_at_their_shown_precision(
    tmp_path: Path,
) -> None:
    record = {
        "because": "b",
        "condition": "x < 1e-6",
        "held": True,
        "name": "c-x",
        "values": {"gap": "below 1e-6", "loss": "0.6321", "n": "64", "took": "0.26 s"},
    }
    accept_into(tmp_path, _check_nb(record))
    same = {
        **record,
        "values": {**record["values"], "loss": "0.6322", "took": "0.02 s"},
    }
    assert diffs_against(tmp_path, _check_nb(same)) == []
    for changed in ({"loss": "0.6324"}, {"n": "65"}, {"gap": "below 1e-5"}):
        (diff,) = diffs_against(
            tmp_path, _check_nb({**record, "values": {**record["values"], **changed}})
        )
        assert diff.old.startswith(f"value '{next(iter(changed))}'")
    (diff,) = diffs_against(tmp_path, _check_nb({**record, "held": False}))
    assert diff.old == "held True"


def test_a_tolerance_needs_a_reason_and_lines_name_labels() -> None:
    for tolerance, message in [
        ({"rtol": 0.1}, "needs a reason"),
        ({"rtol": 0.1, "reason": "why"}, "needs a reason"),
        ({"rtol": 0.1, "lines": ["x"], "reason": WHY}, "lines must map labels"),
        ({"rtol": -1, "reason": WHY}, "must be a number >= 0"),
    ]:
        nb = notebook("loss = 0.1\n", [1, 2], options={"tolerance": tolerance})
        with pytest.raises(baselines.RecordError, match=message):
            baselines.extract(nb, "book/ch")
    nb = notebook("loss = 0.1\n", [1, 2], options={"image_tolerance": 9})
    with pytest.raises(
        baselines.RecordError,
        match="is now written inside ':tolerance:' with its reason",
    ):
        baselines.extract(nb, "book/ch")


def test_a_tolerance_for_named_lines_leaves_the_other_lines_at_the_default(
    tmp_path: Path,
) -> None:
    import json

    old = [
        {"axes": 1, "ylim": [0, 60]},
        {"axes": 1, "line": "no clipping", "xy": [[0, 1.0], [1, 50.0]]},
        {"axes": 1, "line": "clipped", "xy": [[0, 1.0], [1, 0.6]]},
    ]
    (tmp_path / "f-1.json").write_text(json.dumps(old))
    (tmp_path / "f-1.png").write_bytes(b"png")
    opts = {
        "tolerance": {"rtol": 0.02, "lines": {"no clipping": 10}, "reason": WHY},
        "image_tolerance": 60,
    }

    def moved(unclipped: float, clipped: float, top: float) -> list[str]:
        new = [
            {"axes": 1, "ylim": [0, top]},
            {"axes": 1, "line": "no clipping", "xy": [[0, 1.0], [1, unclipped]]},
            {"axes": 1, "line": "clipped", "xy": [[0, 1.0], [1, clipped]]},
        ]
        images = {"f-1.png": b"png", "f-1.json": json.dumps(new).encode()}
        entry = {"kind": "image", "file": "f-1.png"}
        return [
            d.new
            for d in baselines._figure_differences(
                "ch", "fig", entry, entry, tmp_path, images, opts, 0.02, 0.0
            )
        ]

    # the chaotic line and the limits around it moved: declared
    assert moved(20.0, 0.6, 25) == []
    assert moved(20.0, 0.605, 25) == []  # the other line within the cell's rtol
    assert moved(20.0, 0.7, 25) == [
        "plotted data moved (e.g. 0.6 -> 0.7; rtol 0.02, atol 0)"
    ]
