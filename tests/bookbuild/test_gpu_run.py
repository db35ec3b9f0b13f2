"""Tests for bookbuild.tools.gpu_run: the dry run walks every step and leaves the
promised folder; steps time out cleanly.

The dry run is the real command at toy size (``make gpu-run DRY=1``): a
temporary copy of the book's code with one tiny page, executed by the engine on
the CPU, beside the ``word-lm-scale`` sweep's one-job ``smoke`` configuration,
then its baselines recorded; about 30 s on the 2-core machine. It needs the
corpora the first book build makes (the sweep's data files), as CI has them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bookbuild.tools import gpu_run

ROOT = gpu_run.ROOT
#: The dry run is a module fixture that takes about 15 s: on one worker (--dist
#: loadgroup) it runs once.
pytestmark = pytest.mark.xdist_group("gpu-run")


@pytest.fixture(scope="module")
def dry_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, subprocess.CompletedProcess]:
    """One dry run for the module's tests, started as ``make gpu-run DRY=1`` starts
    it."""
    if not all((ROOT / rel).is_file() for rel in gpu_run.CORPORA):
        pytest.skip(
            f"the dry run's sweep needs {', '.join(gpu_run.CORPORA)} (built by the "
            "first `make book`)"
        )
    out = tmp_path_factory.mktemp("gpu-run") / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before = _stored()
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bookbuild" / "tools" / "gpu_run.py"),
            str(out),
            "--dry-run",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    _BEFORE_AND_AFTER[:] = [before, _stored()]
    return out, done


_BEFORE_AND_AFTER: list[dict[str, str]] = []


def _stored() -> dict[str, str]:
    """Every committed record and baseline of the checkout, by path, with its
    SHA-256."""
    import hashlib

    return {
        str(p.relative_to(ROOT)): hashlib.sha256(p.read_bytes()).hexdigest()
        for folder in ("records", "baselines")
        for p in sorted((ROOT / folder).rglob("*"))
        if p.is_file()
    }


def test_dry_run_succeeds_and_its_summary_names_every_step(dry_run) -> None:
    out, done = dry_run
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["finished"] is True
    assert summary["dry_run"] is True
    assert [s["name"] for s in summary["steps"]] == [
        "env",
        "probe",
        "book-sweeps",
        "chapters",
        "sweep",
        "baselines",
    ]
    # the chapters' own runs, re-run on the run's device before the chapters (the dry
    # run: one smoke config)
    book_sweeps = (
        out / next(s["log"] for s in summary["steps"] if s["name"] == "book-sweeps")
    ).read_text()
    assert (
        "book-sweeps: experiments run gated-book-runs --config smoke --device "
        "cpu --workers 1" in book_sweeps
    )
    assert "experiments gated-book-runs (config smoke, 1 jobs)" in book_sweeps
    assert {s["status"] for s in summary["steps"]} == {"ok"}
    assert all((out / s["log"]).is_file() for s in summary["steps"])
    assert summary["device"] == "cpu"
    assert summary["profile"] == "cpu-avx2"
    assert summary["sweep"] == "word-lm-scale --config smoke"
    assert summary["dry_run_check"] == "ok: every promised file is in OUT"
    assert summary["within_budget"] is True
    assert "| chapters | ok | 0 |" in (out / "summary.md").read_text()


def test_dry_run_brings_back_baselines_records_device_and_reports(dry_run) -> None:
    out, _ = dry_run
    device = json.loads((out / "device.json").read_text())
    assert (device["device"], device["profile"], device["gpu_kind"]) == (
        "cpu",
        "cpu-avx2",
        "none",
    )
    assert device["cublas_workspace_config"] == ":4096:8"
    baseline = json.loads((out / "baselines" / "cpu-avx2" / "intro.json").read_text())
    assert baseline["dry-setup"] == [
        {"kind": "text", "lines": ["device cpu, profile cpu-avx2"]}
    ]
    assert baseline["dry-compute"] == [{"kind": "text", "lines": ["15.0"]}]
    record = json.loads(
        (out / "records" / "word-lm-scale" / "smoke" / "small.seed0.json").read_text()
    )
    assert (record["environment"]["device"], record["environment"]["profile"]) == (
        "cpu",
        "cpu-avx2",
    )
    assert record["metrics"]["test_perplexity"] > 1
    report = (out / "build-report.md").read_text()
    assert "Output profile `cpu-avx2`" in report
    assert "| GPU kind | CUDA | cuDNN | GPU numerics |" in report
    assert "{doc}`/book/intro`" in report


def test_dry_run_writes_the_timing_table_and_the_logs(dry_run) -> None:
    out, _ = dry_run
    timing = json.loads((out / "timing.json").read_text())
    assert [s["step"] for s in timing["steps"]] == [
        "env",
        "probe",
        "book-sweeps",
        "chapters",
        "sweep",
        "baselines",
    ]
    (chapter,) = timing["chapters"]
    assert (chapter["chapter"], chapter["status"], chapter["estimate_s"]) == (
        "book/intro",
        "executed",
        10,
    )
    assert chapter["wall_s"] > 0
    (job,) = timing["sweep_jobs"]
    assert (job["job"], job["device"], job["best_step"]) == ("small.seed0", "cpu", 4)
    table = (out / "timing.md").read_text()
    assert "| book/intro | executed |" in table
    assert "| small.seed0 |" in table
    assert "book/intro: executed" in (out / "logs" / "chapters.log").read_text()
    assert "1/1 done" in (out / "logs" / "sweep.log").read_text()
    assert (
        "wrote baselines/cpu-avx2/intro.json"
        in (out / "logs" / "baselines.log").read_text()
    )
    assert (out / "logs" / "kernels" / "intro.log").is_file()
    assert list((out / "logs" / "sweep-jobs").glob("*.out"))
    assert (out / "logs" / "engine-manifest.json").is_file()


def test_dry_run_leaves_the_checkout_alone(dry_run) -> None:
    before, after = _BEFORE_AND_AFTER
    # no record or baseline of the checkout written, changed or removed
    assert after == before
    # the dry run's page is a book/intro of its own; the checkout's front page executes
    # nothing (no baseline)
    intro = ROOT / "baselines" / "cpu-avx2" / "intro.json"
    assert not intro.exists() or "dry-setup" not in intro.read_text()


# ---- the runner, without the book
# ---------------------------------------------------------------------------


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_step_past_its_timeout_is_stopped_with_what_it_started_and_the_rest_runs(
    tmp_path: Path,
) -> None:
    runner = gpu_run.Runner(tmp_path / "out", tmp_path, dry_run=False, budget_s=60)
    pid_file = tmp_path / "grandchild.pid"
    slow = (
        "import subprocess, sys, time\n"
        # as a kernel starts: own session
        "child = subprocess.Popen(['sleep', '60'], start_new_session=True)\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "print('started', flush=True)\n"
        "time.sleep(60)\n"
    )
    started = time.monotonic()
    runner.run(
        gpu_run.Step("slow", [sys.executable, "-c", slow], 3),
        gpu_run.Step(
            "fails",
            [sys.executable, "-c", "import sys; print('oops'); sys.exit(3)"],
            30,
        ),
    )
    runner.run(gpu_run.Step("after", [sys.executable, "-c", "print('still runs')"], 30))
    assert time.monotonic() - started < 30
    steps = {s.name: s for s in runner.steps}
    assert (steps["slow"].status, steps["fails"].status, steps["after"].status) == (
        "timed out",
        "failed",
        "ok",
    )
    assert steps["fails"].rc == 3
    assert steps["slow"].note == "stopped after its timeout of 3 s"
    assert not alive(int(pid_file.read_text()))
    assert "started" in (tmp_path / "out" / "logs" / "slow.log").read_text()
    assert (
        "[gpu-run: failed, exit 3,"
        in (tmp_path / "out" / "logs" / "fails.log").read_text()
    )
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert [s["status"] for s in summary["steps"]] == ["timed out", "failed", "ok"]
    # written as each step ends; run() marks it finished
    assert summary["finished"] is False


def test_a_step_is_interrupted_at_its_timeout_even_when_the_runner_ignores_ctrl_c(
    tmp_path: Path,
) -> None:
    """Started from a background job, the runner inherits SIGINT ignored; its steps must
    not."""
    runner = gpu_run.Runner(tmp_path / "out", tmp_path, dry_run=False, budget_s=60)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        started = time.monotonic()
        runner.run(
            gpu_run.Step(
                "slow", [sys.executable, "-c", "import time; time.sleep(30)"], 2
            )
        )
        took = time.monotonic() - started
    finally:
        signal.signal(signal.SIGINT, previous)
    (step,) = runner.steps
    assert step.status == "timed out"
    assert step.rc != 0
    assert took < gpu_run.GRACE_S, (
        f"{took:.1f} s: the step sat out the interrupt and was killed after the grace"
    )


def test_steps_never_run_past_the_budget(tmp_path: Path) -> None:
    runner = gpu_run.Runner(tmp_path / "out", tmp_path, dry_run=False, budget_s=60)
    runner.deadline = time.monotonic() + 2  # the budget is almost spent
    runner.run(
        gpu_run.Step("long", [sys.executable, "-c", "import time; time.sleep(30)"], 300)
    )
    (step,) = runner.steps
    assert step.status == "timed out"
    assert step.timeout_s <= 2


def test_folder_check_names_what_is_missing(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    problems = gpu_run._check_folder(tmp_path)
    assert "missing summary.json" in problems
    assert "missing build-report.md" in problems
    assert "no baselines" in problems
    assert "no sweep records" in problems


def test_dry_run_without_the_corpora_says_what_it_needs(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    assert gpu_run.run(tmp_path / "out", dry_run=True, root=tmp_path) == 2
    assert "needs data/shakespeare.txt and data/milton.txt" in capsys.readouterr().err


def test_budget_must_leave_room_for_the_steps(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        gpu_run.main(["out", "--budget", "10"])
    assert "--budget must be at least 60 seconds; got 10" in capsys.readouterr().err


def test_an_outer_timeout_still_leaves_a_summary(tmp_path: Path) -> None:
    """SIGTERM (what a machine's time limit sends first) stops the steps and collects
    what finished."""
    if not all((ROOT / rel).is_file() for rel in gpu_run.CORPORA):
        pytest.skip(f"the dry run needs {', '.join(gpu_run.CORPORA)}")
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "bookbuild" / "tools" / "gpu_run.py"),
            str(out),
            "--dry-run",
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # until the side-by-side steps have started
        summary = (
            json.loads((out / "summary.json").read_text())
            if (out / "summary.json").exists()
            else {}
        )
        if any(s["name"] == "chapters" for s in summary.get("steps", [])):
            break
        time.sleep(0.2)
    proc.terminate()
    output = proc.communicate(timeout=60)[0]
    assert proc.returncode == 130, output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["finished"] is True
    assert summary["interrupted"].startswith("the run was interrupted (signal 15)")
    statuses = {s["name"]: s["status"] for s in summary["steps"]}
    assert statuses["env"] == "ok"
    assert statuses["chapters"] == "interrupted"
    assert (out / "timing.md").is_file()
