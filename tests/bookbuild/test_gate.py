"""Tests for bookbuild.gate: accept refuses under CI, the report shows outcomes and
failures."""

from __future__ import annotations

from pathlib import Path

import pytest

from bookbuild import files, gate
from bookbuild.execute import engine
from bookbuild.gate import baselines


def test_accept_refuses_under_ci(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.setattr(
        engine,
        "run",
        lambda *a, **k: pytest.fail("accept must not execute anything under CI"),
    )
    assert gate.accept(tmp_path) == 2


def test_report_lists_outcomes_differences_and_failures(tmp_path: Path) -> None:
    (tmp_path / "book").mkdir()
    fp = {
        "device_name": "AMD EPYC",
        "cpu_kernels": "AVX2 (pinned)",
        "torch_version": "2.13.0",
        "threads": 1,
        "seed": 0,
    }
    ok = engine.ChapterResult(
        "book/a", "hit", "unchanged", 1.5, "k1", {"chapter_code/x.py": "h"}, "", "t", fp
    )
    bad = engine.ChapterResult(
        "book/b",
        "failed",
        "code cells changed",
        2.0,
        "k2",
        {},
        "book/b.md: cell 'c' failed",
    )
    diff = baselines.Difference("book/a", "cell-1", "loss = 1", "loss = 2")
    checks = [gate.ChapterCheck(ok, [diff], None), gate.ChapterCheck(bad, [], None)]
    page = gate.write_report(tmp_path, checks, "cpu-avx2").read_text()
    verdict = "**1 difference(s)**: `make check` fails until reviewed"
    assert f"| {{doc}}`/book/a` | {verdict} | cache hit | unchanged | 1.5 |" in page
    assert "| {doc}`/book/a` | AMD EPYC | AVX2 (pinned) | 2.13.0 | 1 | 0 |" in page
    assert "**FAILED to execute**" in page
    assert "- `book/a` cell `cell-1`: `loss = 1` → `loss = 2`" in page
    assert "book/b.md: cell 'c' failed" in page
    assert "`chapter_code/x.py`" in page


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("true", True),
        ("1", True),
        ("on", True),
        ("yes", True),
        ("", False),
        ("0", False),
        ("false", False),
        ("off", False),
    ],
)
def test_ci_is_recognised_in_every_common_spelling(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: bool
) -> None:
    monkeypatch.setenv("CI", value)
    assert gate.ci_environment() is expected


def test_report_states_the_verdict_first_and_the_rules(tmp_path: Path) -> None:
    ok = engine.ChapterResult(
        "book/a", "hit", "unchanged", 1.5, "k1", {}, "", "t", None
    )
    diff = baselines.Difference("book/a", "cell-1", "loss = 1", "loss = 2")
    page = gate.report_text([gate.ChapterCheck(ok, [diff], None)], "cpu-avx2")
    header = next(line for line in page.splitlines() if line.startswith("| chapter |"))
    assert header.split("|")[2].strip() == "verdict"
    assert "`make check` fails until reviewed" in page
    assert "must match exactly" in page
    assert "| |" not in page  # no empty table header


def test_report_prints_a_summary_with_the_counts_and_where_the_full_report_is() -> None:
    ok = engine.ChapterResult(
        "book/a", "hit", "unchanged", 1.5, "k1", {}, "", "t", None
    )
    other = engine.ChapterResult(
        "book/b", "hit", "unchanged", 1.0, "k2", {}, "", "t", None
    )
    diff = baselines.Difference("book/a", "cell-1", "loss = 1", "loss = 2")
    checks = [
        gate.ChapterCheck(
            ok, [diff], None, exactness=baselines.Exactness(5, ["cell-2"])
        ),
        gate.ChapterCheck(other, [], None, exactness=baselines.Exactness(3, [])),
    ]
    page = gate.report_text(checks, "cpu-avx2")
    summary = page.split("```{only} latex", 1)[1].split("\n```\n", 1)[0]
    assert (
        "This build compared {lit}`10` outputs of {lit}`2` pages: {lit}`8` equal bit "
        "for bit, {lit}`1` equal within their declared precision, {lit}`1` different."
    ) in summary
    assert "| {doc}`/book/a` | {lit}`7` | **1 difference(s)**" in summary
    assert "| {doc}`/book/b` | {lit}`3` | matches the baseline |" in summary
    assert "`book/build-report.html`" in summary
    assert "## " not in summary, (
        "the summary holds no section: the PDF drops the report's sections"
    )
    html = page.split("```{only} html", 1)[1]
    assert html.index("must match exactly") < html.index("```")


def test_a_cpu_without_a_profile_of_its_own_is_compared_with_the_pinned_baselines(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    ok = engine.ChapterResult(
        "book/a", "executed", "never executed", 1.0, "k", {}, "", "t", None
    )
    assert gate.profile_has_baselines(tmp_path, "cpu-aarch64-unpinned")
    assert gate.compared_profile("cpu-aarch64-unpinned") == "cpu-avx2"
    assert gate.compared_profile("cpu-avx2") == "cpu-avx2"
    assert gate.compared_profile("cuda-sm90") == "cuda-sm90"
    exact = baselines.Exactness(5, ["cell-2: glue check:c-x"])
    code = gate.verdict(
        [gate.ChapterCheck(ok, [], ({}, {}, {}), exactness=exact)],
        "cpu-aarch64-unpinned",
    )
    assert code == 0
    out = capsys.readouterr().out
    assert (
        "matches baselines/cpu-avx2/ (this machine's profile: cpu-aarch64-unpinned)"
        in out
    )
    assert (
        "5 output(s) bit for bit, 1 within their declared precision (cell-2: "
        "glue check:c-x)" in out
    )


def test_check_writes_nothing_into_the_book_and_honours_book_build_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.bookbuild.test_engine import write_book

    write_book(tmp_path)
    state = tmp_path / "elsewhere"
    monkeypatch.setenv("BOOK_BUILD_DIR", str(state))
    assert gate.check(tmp_path) == 1  # no baseline yet
    assert not (tmp_path / "book" / "build-report.md").exists()
    assert not (tmp_path / "_build").exists()
    assert (state / "engine" / "manifest.json").exists()


def test_stale_chapter_fails_the_gate(capsys: pytest.CaptureFixture) -> None:
    stale = engine.ChapterResult(
        "book/a", "stale", "code cells changed", 1.0, "k", {}, "book/a.md: x changed"
    )
    assert gate.verdict([gate.ChapterCheck(stale, [], None)], "cpu-avx2") == 1
    assert "book/a.md: x changed" in capsys.readouterr().err


def test_check_fails_on_a_number_typed_into_the_prose(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    from tests.bookbuild.test_engine import write_book

    write_book(tmp_path, prose="The model has 64 hidden units.")
    (tmp_path / "baselines").mkdir()
    assert gate.check(tmp_path) == 1
    err = capsys.readouterr().err
    assert "typed by hand into the prose" in err
    assert "64" in err


# ---- GPU profiles: baselines per GPU kind and software
# ---------------------------------------------------

H200_SOFTWARE = {"torch": "2.13.0+cu128", "cuda": "12.8", "cudnn": "91002"}


def test_a_gpu_kind_without_baselines_is_built_but_not_compared(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    reason = gate.not_compared_reason(tmp_path, "cuda-sm90", H200_SOFTWARE)
    assert reason == "no baselines are recorded for the GPU kind 'cuda-sm90'"
    ok = engine.ChapterResult(
        "book/a", "executed", "never executed", 1.0, "k", {}, "", "t", None
    )
    assert (
        not gate.profile_has_baselines(tmp_path, "cuda-sm90")
        or gate.engine.gpu_software()
    )  # CPU machine here
    checks = [gate.ChapterCheck(ok, [], ({}, {}, {}), compared=False)]
    assert gate.verdict(checks, "cuda-sm90") == 0
    assert "outputs were built but not compared" in capsys.readouterr().out


def test_a_gpu_kind_is_compared_only_with_baselines_of_its_own_software(
    tmp_path: Path,
) -> None:
    stamp = tmp_path / "baselines" / "cuda-sm90" / gate.SOFTWARE_FILE
    stamp.parent.mkdir(parents=True)
    stamp.write_text('{"torch": "2.13.0+cu128", "cuda": "12.8", "cudnn": "91002"}\n')
    assert gate.recorded_software(tmp_path, "cuda-sm90") == H200_SOFTWARE
    assert gate.not_compared_reason(tmp_path, "cuda-sm90", H200_SOFTWARE) == ""
    other = {**H200_SOFTWARE, "cudnn": "90100"}
    reason = gate.not_compared_reason(tmp_path, "cuda-sm90", other)
    assert reason == (
        "the baselines of 'cuda-sm90' were recorded with cuda 12.8, cudnn 91002, torch "
        "2.13.0+cu128, and this build runs cuda 12.8, cudnn 90100, torch 2.13.0+cu128"
    )
    assert gate.not_compared_reason(tmp_path, "cuda-sm80", H200_SOFTWARE).startswith(
        "no baselines are recorded"
    )
    stamp.write_text("{broken")
    assert gate.not_compared_reason(tmp_path, "cuda-sm90", H200_SOFTWARE).startswith(
        "the baselines of"
    )
    assert stamp.exists()  # a committed file is reported, never deleted


def test_which_profiles_accept_records(tmp_path: Path) -> None:
    assert gate.profile_is_recorded("cpu-avx2")
    assert gate.profile_is_recorded("cuda-sm90")
    assert not gate.profile_is_recorded("cpu-aarch64-unpinned")
    # missing CPU baselines are differences
    assert gate.profile_has_baselines(tmp_path, "cpu-avx2")
    # compared with cpu-avx2's
    assert gate.profile_has_baselines(tmp_path, "cpu-aarch64-unpinned")


def test_accept_records_a_new_gpu_kind_with_its_software(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    import json

    import torch

    from chapter_code.core import numerics, runtime

    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(
        runtime, "pick_device", lambda requested=None: torch.device("cuda")
    )
    monkeypatch.setattr(numerics, "gpu_software", lambda device: dict(H200_SOFTWARE))
    result = engine.ChapterResult(
        "book/a", "executed", "never executed", 1.0, "k", {}, "", "t", None
    )
    recs = {"cell-1": [{"kind": "stream", "text": "loss = 1"}]}

    def run_and_check(
        root: Path, only: list[str] | None = None
    ) -> tuple[list[gate.ChapterCheck], str]:
        compared = gate.profile_has_baselines(root, "cuda-sm90")
        return [gate.ChapterCheck(result, [], (recs, {}, {}), compared)], "cuda-sm90"

    monkeypatch.setattr(gate, "run_and_check", run_and_check)
    assert gate.accept(tmp_path) == 0
    out = capsys.readouterr().out
    assert "no baselines are recorded for the GPU kind 'cuda-sm90'; recording" in out
    folder = tmp_path / "baselines" / "cuda-sm90"
    assert json.loads((folder / gate.SOFTWARE_FILE).read_text()) == H200_SOFTWARE
    assert json.loads((folder / "a.json").read_text()) == recs
    # the next build of this GPU is compared
    assert gate.profile_has_baselines(tmp_path, "cuda-sm90")
    assert gate.accept(tmp_path) == 0
    # nothing changed, nothing rewritten
    assert "0 file(s) written" in capsys.readouterr().out


def test_report_shows_the_gpu_kind_and_its_settings(tmp_path: Path) -> None:
    fp = {
        "device_name": "NVIDIA H200",
        "cpu_kernels": "AVX2 (pinned)",
        "torch_version": "2.13.0+cu128",
        "threads": 1,
        "seed": 0,
        "gpu_kind": "sm90",
        "cuda_version": "12.8",
        "cudnn_version": "91002",
        "gpu_numerics": "deterministic algorithms, TF32 off",
    }
    ok = engine.ChapterResult(
        "book/a", "executed", "never executed", 1.0, "k", {}, "", "t", fp
    )
    page = gate.report_text(
        [gate.ChapterCheck(ok, [], None, compared=False)], "cuda-sm90"
    )
    assert (
        "| {doc}`/book/a` | NVIDIA H200 | AVX2 (pinned) | 2.13.0+cu128 | 1 | 0 | sm90 "
        "| 12.8 | 91002 | deterministic algorithms, TF32 off |"
    ) in page
    assert "Output profile `cuda-sm90`: NVIDIA GPUs of compute capability 9.0" in page
    assert "not compared (no baseline for this machine's profile and software)" in page
    assert "Nothing was compared with a baseline:" in page


def test_accept_for_new_gpu_software_keeps_no_baseline_of_the_old(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    import json

    import torch

    from chapter_code.core import numerics, runtime

    folder = tmp_path / "baselines" / "cuda-sm90"
    (folder / "b").mkdir(parents=True)
    (folder / gate.SOFTWARE_FILE).write_text(
        json.dumps({**H200_SOFTWARE, "cudnn": "90100"})
    )
    (folder / "a.json").write_text("{}")
    (folder / "b.json").write_text("{}")
    (folder / "b" / "fig.png").write_bytes(b"png")
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(
        runtime, "pick_device", lambda requested=None: torch.device("cuda")
    )
    monkeypatch.setattr(numerics, "gpu_software", lambda device: dict(H200_SOFTWARE))
    result = engine.ChapterResult(
        "book/a", "hit", "unchanged", 1.0, "k", {}, "", "t", None
    )
    recs = {"cell-1": [{"kind": "stream", "text": "loss = 1"}]}
    monkeypatch.setattr(
        gate,
        "run_and_check",
        lambda root, only=None: (
            [
                gate.ChapterCheck(
                    result,
                    [],
                    (recs, {}, {}),
                    gate.profile_has_baselines(root, "cuda-sm90"),
                )
            ],
            "cuda-sm90",
        ),
    )
    assert gate.accept(tmp_path, only=["book/a"]) == 0
    out = capsys.readouterr().out
    assert "were recorded with cuda 12.8, cudnn 90100" in out
    assert (
        "removing baselines/cuda-sm90/b.json: recorded with other GPU software" in out
    )
    assert not (folder / "b.json").exists()
    assert not (folder / "b").exists()
    assert json.loads((folder / "a.json").read_text()) == recs
    assert json.loads((folder / gate.SOFTWARE_FILE).read_text()) == H200_SOFTWARE


def test_the_verdict_prints_each_differing_cell_as_a_unified_diff(
    capsys: pytest.CaptureFixture,
) -> None:
    ok = engine.ChapterResult(
        "book/a", "executed", "never executed", 1.0, "k", {}, "", "t", None
    )
    diff = baselines.Difference(
        "book/a",
        "cell-1",
        "loss 0.5",
        "loss 0.6",
        "--- baseline\n+++ this build\n@@ -1,2 +1,2 @@\n epoch 1\n-loss 0.5\n+loss 0.6",
    )
    assert gate.verdict([gate.ChapterCheck(ok, [diff], ({}, {}, {}))], "cpu-avx2") == 1
    err = capsys.readouterr().err
    assert "  book/a [cell-1]: loss 0.5 -> loss 0.6\n" in err
    assert "\n      -loss 0.5\n      +loss 0.6\n" in err


def test_the_report_shows_each_differing_cell_as_a_unified_diff(tmp_path: Path) -> None:
    (tmp_path / "book").mkdir()
    ok = engine.ChapterResult(
        "book/a", "executed", "never executed", 1.0, "k", {}, "", "t", None
    )
    diff = baselines.Difference(
        "book/a",
        "cell-1",
        "'loss 0.5'",
        "'loss 0.5 '",
        "--- baseline\n+++ this build\n@@ -1 +1 @@\n-loss 0.5\n+loss 0.5·",
    )
    page = gate.write_report(
        tmp_path, [gate.ChapterCheck(ok, [diff], None)], "cpu-avx2"
    ).read_text()
    assert (
        "- `book/a` cell `cell-1`: `'loss 0.5'` → `'loss 0.5 '`\n\n  "
        "````text\n  --- baseline\n" in page
    )
    assert "  -loss 0.5\n  +loss 0.5·\n  ````\n" in page


def test_the_report_lists_the_build_notes_of_each_chapter(tmp_path: Path) -> None:
    (tmp_path / "book").mkdir()
    note = "run_once: the stored run abc is damaged (bad hash); computing it again"
    ok = engine.ChapterResult(
        "book/a", "executed", "forced", 1.0, "k", {}, "", "t", None, [], [note]
    )
    page = gate.write_report(
        tmp_path, [gate.ChapterCheck(ok, [], None)], "cpu-avx2"
    ).read_text()
    assert "## Notes from the build\n\nWhat the build's machinery reported" in page
    assert f"- {{doc}}`/book/a`: `{note}`\n" in page


# ---- what a page shows beyond its cells: listings and panel data (issue 30, item 4)
# ----------------------

PAGE = """# A page

```{{literalinclude}} ../chapter_code/tiny.py
:language: python
:pyobject: {pyobject}
```

{panel}
"""


def one_page(
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    nb=None,
    pyobject: str = "double",
    panel: str = "",
) -> list[gate.ChapterCheck]:
    """Check one page ``book/ch`` of ``root`` (its notebook ``nb``, no kernel) against
    ``root``'s baselines."""
    import nbformat

    (root / "book").mkdir(exist_ok=True)
    (root / "chapter_code").mkdir(exist_ok=True)
    if not (root / "chapter_code" / "tiny.py").exists():
        (root / "chapter_code" / "tiny.py").write_text(
            "def double(x):\n    return 2 * x\n"
        )
    (root / "book" / "ch.md").write_text(PAGE.format(pyobject=pyobject, panel=panel))
    nb = nb or nbformat.v4.new_notebook()
    monkeypatch.setattr(engine, "rendered_notebook", lambda r, chapter: nb)
    monkeypatch.delenv("BOOK_BUILD_DIR", raising=False)
    result = engine.ChapterResult(
        "book/ch", "hit", "unchanged", 1.0, "k", {}, "", "t", None
    )
    return gate.check_chapters(root, [result], "cpu-avx2", compared=True)


def accept_page(root: Path, monkeypatch: pytest.MonkeyPatch, **page) -> None:
    monkeypatch.delenv("CI", raising=False)
    checks = one_page(root, monkeypatch, **page)
    monkeypatch.setattr(
        gate, "run_and_check", lambda r, only=None: (checks, "cpu-avx2")
    )
    assert gate.accept(root) == 0


def test_a_changed_listing_is_a_difference_with_its_diff(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accept_page(tmp_path, monkeypatch)
    assert one_page(tmp_path, monkeypatch)[0].differences == []
    (tmp_path / "chapter_code" / "tiny.py").write_text(
        "def double(x):\n    return x + x\n"
    )
    (diff,) = one_page(tmp_path, monkeypatch)[0].differences
    assert diff.cell == "listing chapter_code/tiny.py:double"
    assert (diff.old, diff.new) == ("included source return 2 * x", "return x + x")
    assert "+    return x + x" in diff.detail.splitlines()


def test_a_listing_of_an_object_no_longer_defined_fails_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accept_page(tmp_path, monkeypatch)
    diffs = one_page(tmp_path, monkeypatch, pyobject="triple")[0].differences
    assert [d.new for d in diffs if d.cell == "listing"] == [
        "book/ch.md:3: the listing of chapter_code/tiny.py cannot be shown: tiny.py "
        "defines no object 'triple' (:pyobject:)"
    ]


def test_changed_panel_data_is_a_difference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chapter_code.panels import data

    slider = {
        "controls": [{"name": "bias", "min": -3, "max": 3}],
        "title": "Forget",
        "beats": [{"text": "One beat."}],
    }
    monkeypatch.setitem(data.PANELS, "probe", lambda: json_copy(slider))
    accept_page(tmp_path, monkeypatch, panel="```{book-panel} probe\n```")
    assert (
        one_page(tmp_path, monkeypatch, panel="```{book-panel} probe\n```")[
            0
        ].differences
        == []
    )
    slider["controls"][0]["max"] = 6
    (diff,) = one_page(tmp_path, monkeypatch, panel="```{book-panel} probe\n```")[
        0
    ].differences
    assert (diff.cell, diff.old) == ("panel probe", "panel data")
    assert diff.new.startswith("data moved (e.g. 3 -> 6")


def json_copy(value: dict) -> dict:
    import json

    return json.loads(json.dumps(value))


def test_old_baselines_without_page_records_are_read_without_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    folder = tmp_path / "baselines" / "cpu-avx2"
    folder.mkdir(parents=True)
    # written before listings, panels and options were recorded
    (folder / "ch.json").write_text("{\n}\n")
    checks = one_page(tmp_path, monkeypatch)
    assert checks[0].differences == []
    assert checks[0].unrecorded == ("@options", "@listings", "@panels")
    assert gate.verdict(checks, "cpu-avx2") == 0
    assert (
        "the baselines of ch predate the recording of cell options, listings"
        in capsys.readouterr().out
    )
    accept_page(tmp_path, monkeypatch)
    assert one_page(tmp_path, monkeypatch)[0].unrecorded == ()


# ---- a failing figure, to review (issue 30, item 12)
# -----------------------------------------------------


def figure_notebook(ys: list[float]):
    import nbformat

    from tests.bookbuild.test_records import png_of_curve

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("plot()", metadata={"label": "fig-g-lag"})
    cell.outputs = [
        nbformat.v4.new_output("display_data", data={"image/png": png_of_curve(ys)})
    ]
    nb.cells = [cell]
    return nb


def test_a_differing_figure_is_written_for_review_and_shown_in_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    accept_page(tmp_path, monkeypatch, nb=figure_notebook([1, 2, 3, 2]))
    checks = one_page(tmp_path, monkeypatch, nb=figure_notebook([1, 3, 1, 3]))
    (diff,) = checks[0].differences
    review = tmp_path / "_build" / "review" / "ch"
    assert diff.review == tuple(
        f"_build/review/ch/fig-g-lag-1-{part}.png"
        for part in ("baseline", "new", "diff")
    )
    assert all((tmp_path / path).stat().st_size > 0 for path in diff.review)
    assert (review / "fig-g-lag-1-baseline.png").read_bytes() == (
        tmp_path / "baselines" / "cpu-avx2" / "ch" / "fig-g-lag-1.png"
    ).read_bytes()
    assert gate.verdict(checks, "cpu-avx2") == 1
    err = capsys.readouterr().err
    assert (
        "Figures to review (baseline, this build, difference):\n  book/ch "
        "fig-g-lag-1.png:\n" in err
    )
    assert "      _build/review/ch/fig-g-lag-1-diff.png" in err
    page = gate.report_text(checks, "cpu-avx2")
    assert "## Figures to review" in page
    assert (
        "| ![baseline](/_build/review/ch/fig-g-lag-1-baseline.png) | ![this "
        "build](/_build/review/ch/fig-g-lag-1-new.png) | "
        "![difference](/_build/review/ch/fig-g-lag-1-diff.png) |"
    ) in page
    assert "- cell `fig-g-lag`: `fig-g-lag-1.png` → `figure differs (RMS" in page
    assert (
        one_page(tmp_path, monkeypatch, nb=figure_notebook([1, 2, 3, 2]))[0].differences
        == []
    )
    assert not review.exists()  # nothing left to review, no stale images


# ---- messages (issue 30, item 11)
# --------------------------------------------------------------------------


def test_a_prose_failure_says_what_failed_after_matching_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "ch.md").write_text(
        "# A page\n\nThe model has 64 hidden units.\n"
    )
    ok = engine.ChapterResult(
        "book/ch", "hit", "unchanged", 1.0, "k", {}, "", "t", None
    )
    monkeypatch.setattr(
        gate,
        "run_and_check",
        lambda root, only=None: ([gate.ChapterCheck(ok, [], ({}, {}, {}))], "cpu-avx2"),
    )
    monkeypatch.setattr(gate, "claim_pages", lambda root, checks: [])
    assert gate.check(tmp_path) == 1
    captured = capsys.readouterr()
    assert "every output of 1 chapter(s) matches" in captured.out
    assert captured.err.rstrip().splitlines()[-1] == (
        "check FAILED: numbers are typed into the prose (listed above)"
    )


def test_old_baselines_are_migrated_without_executing_or_rewriting_outputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    one_page(tmp_path, monkeypatch)  # writes the page and its listed module
    cell = (
        "\n```{code-cell} ipython3\n:label: c\n:tolerance: {rtol: 0.01, "
        "reason: float32 rounding here}\n"
        "print(1)\n```\n"
    )
    (tmp_path / "book" / "ch.md").write_text(
        (tmp_path / "book" / "ch.md").read_text() + cell
    )
    folder = tmp_path / "baselines" / "cpu-avx2"
    folder.mkdir(parents=True)
    (folder / "ch.json").write_text(
        '{\n "c": [\n  {"kind": "text", "lines": ["took 1.2 s"]}\n ]\n}\n'
    )
    monkeypatch.setattr(
        engine, "run", lambda *a, **k: pytest.fail("the migration executes nothing")
    )
    assert gate.add_page_records(tmp_path) == 0
    base = json.loads((folder / "ch.json").read_text())
    assert base["c"] == [{"kind": "text", "lines": ["took 1.2 s"]}]
    assert base["@options"] == [
        {"cell": "c", "tolerance": {"rtol": 0.01, "reason": "float32 rounding here"}}
    ]
    assert [r["pyobject"] for r in base["@listings"]] == ["double"]
    assert base["@panels"] == []


# ---- figures whose texts overlap (issue 28, item 4)
# --------------------------------------------------------


def test_overlapping_texts_fail_the_check_with_page_cell_and_texts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, tmp_path: Path
) -> None:
    import json

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import nbformat

    from bookbuild.execute.kernel_hooks import FIGURE_MIME, summarise_figure

    def summary_of(clash: bool) -> dict:
        fig, ax = plt.subplots(figsize=(3, 2))
        ax.text(0.4, 0.5, "first")
        ax.text(0.4 if clash else 0.05, 0.5 if clash else 0.1, "second")
        summary = summarise_figure(fig)
        plt.close(fig)
        return summary

    clean, clashing = summary_of(False), summary_of(True)
    # a clean figure's summary is unchanged: nothing new to accept
    assert "overlaps" not in clean
    assert clashing["overlaps"] == ['"first" and "second"']
    nb = nbformat.v4.new_notebook()
    cells = []
    for label, summary in (("fig-ok", clean), ("fig-bad", clashing)):
        cell = nbformat.v4.new_code_cell("plot()", metadata={"label": label})
        data = {"image/png": "", FIGURE_MIME: json.dumps(summary)}
        cell.outputs = [nbformat.v4.new_output("display_data", data=data)]
        cells.append(cell)
    nb.cells = cells
    monkeypatch.setattr(engine, "rendered_notebook", lambda root, chapter: nb)
    ok = engine.ChapterResult(
        "book/ch", "hit", "unchanged", 1.0, "k", {}, "", "t", None
    )
    checks = [gate.ChapterCheck(ok, [], ({}, {}, {}))]
    assert gate.figure_overlaps(tmp_path, checks) == [
        'book/ch [fig-bad] figure 1: texts overlap: "first" and "second"'
    ]
    assert gate.layout_verdict(tmp_path, checks) == 1
    assert (
        "1 pair(s) of texts overlap in the chapters' figures" in capsys.readouterr().err
    )
    nb.cells = cells[:1]
    assert gate.layout_verdict(tmp_path, checks) == 0


def test_a_page_edited_while_the_build_ran_is_a_clear_error_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seen in a session: a chapter's code cells edited while `make check` executed it;
    the gate's read of its rendered notebook found no cached outputs for the new cells
    and a KeyError escaped as a traceback."""

    def missing(root: Path, chapter: str):  # type: ignore[no-untyped-def]
        raise KeyError("Cache record not found for NB with hashkey: 3ebd")

    (tmp_path / "book").mkdir()
    monkeypatch.setattr(engine, "rendered_notebook", missing)
    result = engine.ChapterResult(
        "book/ch", "executed", "code cells changed", 1.0, "k", {}, "", "t", None
    )
    with pytest.raises(
        files.UserError,
        match=r"book/ch\.md changed while the build was running: .* run the "
        r"command again",
    ):
        gate.check_chapters(tmp_path, [result], "cpu-avx2", compared=True)


# ---- a machine without a profile of its own (issue 57, item 4)
# ------------------------------------------------


def _printing(text: str):
    import nbformat

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print(loss)", metadata={"label": "result"})
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
    nb.cells = [cell]
    return nb


def test_an_unpinned_cpu_is_checked_against_cpu_avx2_and_fails_beyond_precision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accept_page(tmp_path, monkeypatch, nb=_printing("loss = 0.1234\n"))
    result = engine.ChapterResult(
        "book/ch", "hit", "unchanged", 1.0, "k", {}, "", "t", None
    )
    for text, differs in [("loss = 0.1234\n", False), ("loss = 0.1235\n", True)]:
        nb = _printing(text)
        monkeypatch.setattr(engine, "rendered_notebook", lambda r, chapter, nb=nb: nb)
        # forced: another profile
        (check,) = gate.check_chapters(tmp_path, [result], "cpu-aarch64-unpinned")
        assert check.compared
        assert bool(check.differences) is differs
        if not differs:
            assert check.exactness.exact == 1
            assert check.exactness.within == []
    assert not (tmp_path / "baselines" / "cpu-aarch64-unpinned").exists()


def test_the_report_lists_each_declared_tolerance_with_its_reason(
    tmp_path: Path,
) -> None:
    (tmp_path / "book").mkdir()
    ok = engine.ChapterResult(
        "book/a", "executed", "forced", 1.0, "k", {}, "", "t", None
    )
    options = {
        "fig": {
            "tolerance": {"rtol": 0.05, "image": 8, "reason": "a chaotic run's path"}
        },
        "plain": {},
    }
    check = gate.ChapterCheck(
        ok, [], ({}, {}, options), exactness=baselines.Exactness(3, ["fig"])
    )
    page = gate.write_report(tmp_path, [check], "cpu-avx2").read_text()
    assert (
        "| {doc}`/book/a` | `fig` | rtol 0.05, image 8 | a chaotic run's path |" in page
    )
    assert (
        "This build: 3 output(s) bit for bit, 1 within their declared precision (fig)."
        in page
    )


def test_make_check_names_a_misspelt_glue_name_before_sphinx_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    from tests.bookbuild.test_references import PAGE, notebook

    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "ch.md").write_text(PAGE)
    monkeypatch.setattr(
        engine,
        "rendered_notebook",
        lambda r, chapter: notebook(["loss_finl", "n_steps"]),
    )
    monkeypatch.delenv("BOOK_BUILD_DIR", raising=False)
    result = engine.ChapterResult(
        "book/ch", "hit", "unchanged", 1.0, "k", {}, "", "t", None
    )
    checks = gate.check_chapters(tmp_path, [result], "cpu-avx2", compared=False)
    assert gate.references_verdict(checks) == 1
    err = capsys.readouterr().err
    assert "2 reference(s) from a page's text that its cells do not provide:" in err
    assert (
        "book/ch.md:3: {glue:text}`loss_final` names no value a cell of this "
        "page glues; did you mean" in err
    )
    assert "book/ch.md:6: the figure of cell 'fig-loss' has no alt text" in err
