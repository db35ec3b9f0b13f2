"""Tests for bookbuild.runs.sweeps: records, the staleness-checking loader, progress,
the local executor, spot checks.

Each test writes a tiny package (a job function and nothing else) into a
temporary folder used as the repository root; jobs take milliseconds, so
what is timed is process start-up.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bookbuild.files import UserError
from bookbuild.runs import sweeps
from bookbuild.runs.registry import SWEEPS, Grid, Resources, Sweep

JOBS = """
def square(seed, x, fail=False):
    if fail:
        raise ValueError(f"no square for x={x}")
    return {"value": x * x + seed, "history": [x, 2 * x + seed]}
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    pkg = tmp_path / "tinysweep"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "jobs.py").write_text(JOBS)
    (pkg / "unrelated.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # for the job processes
    monkeypatch.setenv("BOOK_BUILD_DIR", str(tmp_path / "_build"))
    for name in [m for m in sys.modules if m.startswith("tinysweep")]:
        del sys.modules[name]
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("tinysweep")]:
        del sys.modules[name]


def tiny(
    xs: tuple[int, ...] = (2, 3), seeds: tuple[int, ...] = (0, 1), fail: bool = False
) -> Sweep:
    from tinysweep.jobs import square

    jobs = {
        f"x{x}": {"x": x, **({"fail": True} if fail and i == len(xs) - 1 else {})}
        for i, x in enumerate(xs)
    }
    return Sweep(
        "tiny", job=square, configs={"cpu": Grid(jobs, seeds, Resources(minutes=2))}
    )


def run(sweep: Sweep, root: Path, cluster: str = "debug", **kw) -> tuple[int, str]:
    out = io.StringIO()
    code = sweeps.run(sweep, "cpu", cluster, root=root, out=out, **kw)
    return code, out.getvalue()


def test_record_round_trip(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BOOK_DEVICE", raising=False)
    code, _ = run(tiny(), repo)
    assert code == 0
    # a job run in this process leaves its environment alone
    assert "BOOK_DEVICE" not in os.environ
    loaded = sweeps.load("tiny", "cpu", root=repo, sweep=tiny())
    assert loaded.complete
    assert [(r["job"], r["seed"], r["metrics"]["value"]) for r in loaded.records] == [
        ("x2", 0, 4),
        ("x2", 1, 5),
        ("x3", 0, 9),
        ("x3", 1, 10),
    ]
    record = json.loads((repo / "records/tiny/cpu/x3.seed1.json").read_text())
    assert record["params"] == {"x": 3}
    assert record["metrics"]["history"] == [3, 7]
    assert record["function"] == "tinysweep.jobs:square"
    # the definitions the job reaches, keyed by name
    assert set(record["definitions"]) == {"square"}
    for key in (
        "code_hash",
        "params_hash",
        "git_commit",
        "host",
        "started_at",
        "wall_s",
        "slurm_job_id",
    ):
        assert key in record
    # no GPU asked for: CPU, even on a GPU machine
    assert record["environment"]["device"] == "cpu"
    for key in ("torch", "cuda", "device_name", "profile", "cpu_kernels"):
        assert record["environment"][key]
    # a second run finds every record fresh and runs nothing
    code, out = run(tiny(), repo)
    assert code == 0
    assert "4 fresh; running 0" in out


def test_missing_records_fail_with_the_refresh_command(repo: Path) -> None:
    with pytest.raises(sweeps.SweepNotReady, match="has no records yet") as err:
        sweeps.load("tiny", "cpu", root=repo, sweep=tiny())
    assert "make experiments SWEEP=tiny CONFIG=cpu" in str(err.value)


def test_an_unrun_configuration_can_be_asked_for_as_none(repo: Path) -> None:
    assert (
        sweeps.load("tiny", "cpu", root=repo, sweep=tiny(), none_if_unrun=True) is None
    )
    run(tiny(), repo)
    (repo / "records/tiny/cpu/x2.seed1.json").unlink()
    partial = sweeps.load(
        "tiny", "cpu", root=repo, sweep=tiny(), allow_partial=True, none_if_unrun=True
    )
    assert partial is not None and partial.missing == ["x2.seed1"]  # noqa: PT018 - some records: loaded
    jobs = repo / "tinysweep" / "jobs.py"
    jobs.write_text(jobs.read_text().replace("x * x + seed", "x * x + seed + 0"))
    # stale records are never "unrun"
    with pytest.raises(sweeps.SweepNotReady, match="stale"):
        sweeps.load("tiny", "cpu", root=repo, sweep=tiny(), none_if_unrun=True)


def test_changed_code_makes_records_stale_but_an_unrelated_module_or_a_comment_does_not(
    repo: Path,
) -> None:
    run(tiny(), repo)
    (repo / "tinysweep" / "unrelated.py").write_text("X = 2\n")
    jobs = repo / "tinysweep" / "jobs.py"
    jobs.write_text(
        '"""The jobs, with a docstring now."""\n# and a comment\n' + jobs.read_text()
    )
    assert sweeps.load("tiny", "cpu", root=repo, sweep=tiny()).complete
    jobs.write_text(jobs.read_text().replace("x * x + seed", "x * x + seed + 0"))
    with pytest.raises(sweeps.SweepNotReady, match="4 stale") as err:
        sweeps.load("tiny", "cpu", root=repo, sweep=tiny())
    message = str(err.value)
    assert "stale-code" in message
    assert "a definition it reaches changed since it ran: square" in message
    assert "sweep 'tiny'" in message
    assert "make experiments SWEEP=tiny CONFIG=cpu" in message


def test_changed_params_make_that_job_stale(repo: Path) -> None:
    run(tiny(), repo)
    changed = tiny()
    changed.configs["cpu"].jobs["x3"]["x"] = 4  # same job name, other parameters
    with pytest.raises(sweeps.SweepNotReady, match="2 stale") as err:
        sweeps.load("tiny", "cpu", root=repo, sweep=changed)
    assert "x3.seed0: stale-params" in str(err.value)
    assert "x2.seed0" not in str(err.value)


def test_partial_sweep_is_an_error_or_marked_partial_never_silently_smaller(
    repo: Path,
) -> None:
    run(tiny(), repo)
    (repo / "records/tiny/cpu/x2.seed1.json").unlink()
    with pytest.raises(
        sweeps.SweepNotReady, match=r"is partial: 3 of 4 jobs done, missing x2.seed1"
    ):
        sweeps.load("tiny", "cpu", root=repo, sweep=tiny())
    partial = sweeps.load("tiny", "cpu", root=repo, sweep=tiny(), allow_partial=True)
    assert not partial.complete
    assert partial.missing == ["x2.seed1"]
    assert "PARTIAL" in partial.describe()
    assert "3 of 4" in partial.describe()
    text, ok = sweeps.status_text(tiny(), "cpu", root=repo)
    assert not ok
    assert "x2.seed1: missing" in text


def test_damaged_record_is_reported(repo: Path) -> None:
    run(tiny(), repo)
    (repo / "records/tiny/cpu/x3.seed0.json").write_text("{not json")
    with pytest.raises(sweeps.SweepNotReady, match="x3.seed0: damaged"):
        sweeps.load("tiny", "cpu", root=repo, sweep=tiny(), allow_partial=True)


def test_a_record_edited_by_hand_is_not_fresh(repo: Path) -> None:
    run(tiny(), repo)
    path = repo / "records/tiny/cpu/x3.seed0.json"
    record = json.loads(path.read_text())
    assert record[sweeps.SEAL] == sweeps.seal(record)
    record["metrics"]["value"] = 8  # a better number, typed in
    path.write_text(json.dumps(record, indent=2))
    text, ok = sweeps.status_text(tiny(), "cpu", repo)
    assert not ok
    assert (
        "x3.seed0: damaged (edited since it was written (its record_sha256 "
        "does not match" in text
    )
    # a record written before records were sealed is read as before
    del record[sweeps.SEAL]
    path.write_text(json.dumps(record, indent=2))
    assert sweeps.status_text(tiny(), "cpu", repo)[1]


def _unsealed_and_committed(repo: Path) -> Path:
    """The tiny sweep's records as records were written before the seal, committed; the
    path of one."""
    run(tiny(), repo)
    for path in (repo / "records/tiny/cpu").glob("*.json"):
        record = json.loads(path.read_text())
        del record[sweeps.SEAL]
        path.write_text(json.dumps(record, indent=1))
    _git(repo, "init", "-q")
    _git(repo, "add", "tinysweep", "records")
    _git(repo, "commit", "-q", "-m", "records before the seal")
    return repo / "records/tiny/cpu/x3.seed0.json"


def test_an_unsealed_record_edited_since_its_commit_is_not_fresh(repo: Path) -> None:
    # issue 30, item 11 (probe status-hand-edited-record): every committed record
    # predates the seal
    path = _unsealed_and_committed(repo)
    text, ok = sweeps.status_text(tiny(), "cpu", repo)
    assert ok
    assert "4 fresh record(s) carry no record_sha256" in text
    record = json.loads(path.read_text())
    record["metrics"]["value"] = 8  # a better number, typed in
    path.write_text(json.dumps(record, indent=1))
    text, ok = sweeps.status_text(tiny(), "cpu", repo)
    assert not ok
    assert (
        "x3.seed0: damaged (edited since it was committed (it carries no record_sha256"
        in text
    )
    with pytest.raises(sweeps.SweepNotReady, match="x3.seed0: damaged"):
        sweeps.load("tiny", "cpu", root=repo, sweep=tiny())


def test_seal_seals_the_committed_records_and_refuses_an_edited_one(repo: Path) -> None:
    path = _unsealed_and_committed(repo)
    record = json.loads(path.read_text())
    record["metrics"]["value"] = 8
    path.write_text(json.dumps(record, indent=1))
    lines, ok = sweeps.seal_records(tiny(), "cpu", repo)
    assert not ok
    assert lines[0] == "sweep tiny (config cpu): 3 record(s) sealed"
    assert (
        "  records/tiny/cpu/x3.seed0.json: not sealed: it differs from the last commit"
        in "\n".join(lines)
    )
    assert sweeps.SEAL not in json.loads(path.read_text())
    _git(repo, "checkout", "--", "records/tiny/cpu/x3.seed0.json")  # the edit undone
    lines, ok = sweeps.seal_records(tiny(), "cpu", repo)
    assert ok
    assert lines[0] == "sweep tiny (config cpu): 1 record(s) sealed"
    for sealed in (repo / "records/tiny/cpu").glob("*.json"):
        record = json.loads(sealed.read_text())
        assert record[sweeps.SEAL] == sweeps.seal(record)
    text, ok = sweeps.status_text(tiny(), "cpu", repo)
    assert ok
    assert "carry no record_sha256" not in text


def test_failed_job_reports_its_params_and_error_and_fails_the_run(repo: Path) -> None:
    code, out = run(tiny(fail=True), repo)
    assert code == 1
    assert "job x3.seed0 FAILED" in out
    assert '"fail": true' in out
    assert '"x": 3' in out
    assert "ValueError: no square for x=3" in out
    assert "2/4 done, 0 running, 2 failed" in out
    assert not (repo / "records/tiny/cpu/x3.seed0.json").exists()
    assert (repo / "records/tiny/cpu/x2.seed0.json").exists()


def test_progress_estimates_the_time_left() -> None:
    progress = sweeps.Progress("tiny", total=6, slots=2, out=io.StringIO())
    assert "time left unknown" in progress.line(running=2, waiting=4)
    progress.walls += [10.0, 20.0]
    assert progress.line(running=2, waiting=2) == (
        "experiments tiny: 2/6 done, 2 running, 0 failed, 2 waiting; about 30 s left"
    )


def test_local_executor_runs_a_grid_in_parallel_processes(repo: Path) -> None:
    code, out = run(tiny(), repo, cluster="local", workers=2)
    assert code == 0, out
    assert "4/4 done, 0 running, 0 failed, 0 waiting" in out
    assert sweeps.load("tiny", "cpu", root=repo, sweep=tiny()).complete
    # submitit's logs stay under _build
    assert list((repo / "_build" / "sweeps" / "tiny").iterdir())


def test_local_executor_reports_a_failed_job(repo: Path) -> None:
    code, out = run(tiny(xs=(3,), seeds=(0,), fail=True), repo, cluster="local")
    assert code == 1
    assert "job x3.seed0 FAILED" in out
    assert "no square for x=3" in out


def test_spot_check_reruns_a_record_and_catches_a_changed_metric(repo: Path) -> None:
    run(tiny(), repo)
    records = sweeps.load("tiny", "cpu", root=repo, sweep=tiny()).records
    record = sweeps.cheapest(records)
    # the choice does not depend on order
    assert record == sweeps.cheapest(list(reversed(records)))
    again = sweeps.rerun(record, root=repo)
    ok, text = sweeps.compare(record, again)
    assert ok, text
    ok, text = sweeps.compare(
        {**record, "metrics": {**record["metrics"], "value": -1}}, again
    )
    assert not ok
    assert (
        "value (compared exactly: the sweep declares no precision for it): "
        "stored -1, now" in text
    )
    ok, text = sweeps.compare({**record, "code_hash": "0" * 64}, again)
    assert not ok
    assert "stale" in text


def test_a_second_run_of_the_same_sweep_waits_for_none_and_says_why(repo: Path) -> None:
    from filelock import FileLock

    logs = repo / "_build" / "sweeps" / "tiny"
    logs.mkdir(parents=True)
    with (
        FileLock(str(logs / "cpu.lock")),
        pytest.raises(UserError, match="another `experiments run tiny"),
    ):
        run(tiny(), repo)


def test_bad_definitions_and_arguments_are_named(repo: Path) -> None:
    from tinysweep.jobs import square

    with pytest.raises(ValueError, match="seeds must be distinct ints >= 0"):
        sweeps.validate(
            Sweep("tiny", job=square, configs={"cpu": Grid({"a": {"x": 1}}, (1, 1))})
        )
    with pytest.raises(ValueError, match="'seed' is given by the grid"):
        sweeps.validate(
            Sweep(
                "tiny",
                job=square,
                configs={"cpu": Grid({"a": {"x": 1, "seed": 2}}, (1,))},
            )
        )
    with pytest.raises(ValueError, match="job name must be"):
        sweeps.validate(
            Sweep("tiny", job=square, configs={"cpu": Grid({"A b": {"x": 1}}, (1,))})
        )
    with pytest.raises(
        ValueError, match="either a job function or the calls its jobs make, not both"
    ):
        sweeps.validate(
            Sweep(
                "tiny",
                job=square,
                calls=(square,),
                configs={"cpu": Grid({"a": {"x": 1}}, (0,))},
            )
        )
    with pytest.raises(ValueError, match="either a job function or the calls"):
        sweeps.validate(Sweep("tiny", configs={"cpu": Grid({"a": {"x": 1}}, (0,))}))
    with pytest.raises(
        ValueError,
        match=r"a call sweep's job is codec.job\(f, ...\) of one of its calls "
        r"\(square\)",
    ):
        sweeps.validate(
            Sweep("tiny", calls=(square,), configs={"cpu": Grid({"a": {"x": 1}}, (0,))})
        )
    with pytest.raises(UserError, match="--cluster must be one of"):
        sweeps.run(tiny(), "cpu", "kubernetes", root=repo)
    with pytest.raises(UserError, match="--limit must be an int >= 1"):
        sweeps.run(tiny(), "cpu", "debug", root=repo, limit=0)
    with pytest.raises(UserError, match="has no config 'huge'"):
        sweeps.run(tiny(), "huge", "debug", root=repo)
    with pytest.raises(UserError, match="no sweep named 'nope'"):
        sweeps.get("nope")


def test_the_books_sweeps_are_valid_and_their_job_names_are_stable() -> None:
    sweep = SWEEPS["memory-robustness"]
    sweeps.validate(sweep)
    assert list(sweep.configs["cpu"].jobs) == [
        "vanilla-rnn",
        "lstm-default",
        "lstm-forget-bias-1",
        "gru-default",
        "gru-keep-bias-1",
        "gru-keep-bias-2",
    ]
    assert len(sweep.configs["cpu"].seeds) >= 16
    assert len(sweep.configs["cluster"].seeds) > len(sweep.configs["cpu"].seeds)


def test_compare_skips_measured_times_but_not_their_absence() -> None:
    stored = {
        "job": "a",
        "seed": 0,
        "code_hash": "h",
        "metrics": {"loss": 1.0, "seconds_per_step": 0.2},
    }
    slower = {
        **stored,
        "wall_s": 3.0,
        "metrics": {"loss": 1.0, "seconds_per_step": 0.5},
    }
    assert sweeps.compare(stored, slower)[0]
    assert not sweeps.compare(
        stored, {**slower, "metrics": {"loss": 1.5, "seconds_per_step": 0.2}}
    )[0]
    ok, text = sweeps.compare(stored, {**slower, "metrics": {"loss": 1.0}})
    assert not ok
    assert "seconds_per_step" in text
    assert sweeps.is_timing("train_seconds")
    assert not sweeps.is_timing("seconds")


def test_a_missing_record_is_looked_up_by_opening_it_so_the_build_trace_sees_it(
    tmp_path: Path,
) -> None:
    import sys as _sys

    opened: list[str] = []

    def spy(event: str, args: tuple) -> None:
        if event == "open" and args and str(args[0]).startswith(str(tmp_path)):
            opened.append(str(args[0]))

    # audit hooks cannot be removed; this one only records paths under tmp_path
    _sys.addaudithook(spy)
    assert sweeps._read_record(tmp_path / "job.seed0.json") == (None, "")
    assert opened == [str(tmp_path / "job.seed0.json")]


def test_a_rerun_runs_the_job_s_current_source_not_bytecode_of_the_same_size_and_mtime(
    repo: Path,
) -> None:
    from tests.bookbuild.test_engine import edit_keeping_size_and_mtime

    run(tiny(), repo)
    (record,) = [
        r
        for r in sweeps.load("tiny", "cpu", root=repo, sweep=tiny()).records
        if (r["job"], r["seed"]) == ("x2", 1)
    ]  # a seed > 0: the edit changes its value
    edit_keeping_size_and_mtime(
        repo / "tinysweep" / "jobs.py", "x * x + seed", "x * x - seed"
    )
    again = sweeps.rerun(record, root=repo)
    x, seed = record["params"]["x"], record["seed"]
    assert again["metrics"]["value"] == x * x - seed


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
        },
    )


def test_a_sweep_refuses_to_start_on_uncommitted_changes(repo: Path) -> None:
    _git(repo, "init", "-q")
    _git(repo, "add", "tinysweep")
    _git(repo, "commit", "-q", "-m", "jobs")
    assert sweeps.uncommitted_changes(repo) == []
    (repo / "tinysweep" / "unrelated.py").write_text("X = 2\n")
    assert sweeps.uncommitted_changes(repo) == ["tinysweep/unrelated.py"]
    with pytest.raises(
        UserError,
        match=r"^experiments run tiny: the checkout has uncommitted changes "
        r"\(tinysweep/unrelated\.py\); a record must come from a committed state",
    ):
        sweeps.run(tiny(), "cpu", "debug", root=repo, out=io.StringIO())
    assert not (repo / "records").exists()  # nothing ran


def test_records_being_written_and_a_copy_outside_git_do_not_count_as_changes(
    repo: Path, tmp_path: Path
) -> None:
    # not a git checkout: a copy of the tree
    assert sweeps.uncommitted_changes(repo) == []
    _git(repo, "init", "-q")
    (repo / "records").mkdir()
    (repo / "records" / "r.json").write_text("{}")
    _git(repo, "add", "tinysweep", "records")
    _git(repo, "commit", "-q", "-m", "jobs and a record")
    (repo / "records" / "r.json").write_text('{"x": 1}')
    assert sweeps.uncommitted_changes(repo) == []


def test_jobs_share_gpus_evenly_when_workers_outnumber_them() -> None:
    load = dict.fromkeys([0, 1], 0)
    taken = []
    for _ in range(5):  # five one-GPU jobs on two GPUs: 0, 1, 0, 1, 0
        (gpu,) = sweeps.least_loaded(load, 1)
        load[gpu] += 1
        taken.append(gpu)
    assert taken == [0, 1, 0, 1, 0]
    load[0] -= 2  # two jobs on GPU 0 end: the next job goes there
    assert sweeps.least_loaded(load, 1) == [0]
    assert sweeps.least_loaded(load, 2) == [0, 1]
    with pytest.raises(ValueError, match="n must be between 1 and the 2 GPU"):
        sweeps.least_loaded(load, 3)


def test_uncommitted_records_do_not_make_a_record_dirty(tmp_path: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.invalid")
    git("config", "user.name", "t")
    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "a.json").write_text("{}")
    (tmp_path / "code.py").write_text("X = 1\n")
    git("add", "-A")
    git("commit", "-q", "-m", "one")
    # an earlier sweep's fresh record
    (tmp_path / "records" / "a.json").write_text('{"new": 1}')
    assert sweeps.record_commit(tmp_path, "abc+dirty") == "abc"
    (tmp_path / "code.py").write_text("X = 2\n")  # code changed: dirty it is
    assert sweeps.record_commit(tmp_path, "abc+dirty") == "abc+dirty"
    assert sweeps.record_commit(tmp_path, "abc") == "abc"


# ---- each metric at the precision its sweep declares (issue 57)
# ---------------------------------------------


def _record(metrics: dict) -> dict:
    return {"job": "j", "seed": 0, "code_hash": "c", "wall_s": 1.0, "metrics": metrics}


def _tensor(values: list[float]) -> dict:
    import torch

    from bookbuild.runs.codec import encode_tensor

    return encode_tensor(torch.tensor(values, dtype=torch.float32))


def test_a_declared_precision_lets_the_last_bits_move_and_says_how_far_they_moved() -> (
    None
):
    from bookbuild.runs.registry import Precision

    close = {
        "loss": Precision(rtol=1e-3, atol=1e-6, reason="training on other kernels")
    }
    stored = _record(
        {"loss": [0.71381837, 0.70338213], "steps": 3, "w": _tensor([1.0, 2.0, 0.0])}
    )
    again = _record(
        {"loss": [0.71381837, 0.70338207], "steps": 3, "w": _tensor([1.0, 2.0, 0.0])}
    )
    ok, text = sweeps.compare(stored, again, close)
    assert ok, text
    assert (
        "loss within rtol 0.001, atol 1e-06 (largest relative deviation "
        "8.5e-08, at loss[1])" in text
    )
    ok, text = sweeps.compare(
        stored, _record({**again["metrics"], "loss": [0.71381837, 0.75]}), close
    )
    assert not ok
    assert (
        "beyond its declared rtol 0.001, atol 1e-06: training on other kernels" in text
    )
    # a count: exact
    ok, text = sweeps.compare(stored, _record({**again["metrics"], "steps": 4}), close)
    assert not ok
    assert "steps (compared exactly" in text
    ok, text = sweeps.compare(stored, again)  # no precision declared: bit for bit
    assert not ok
    assert "loss (compared exactly" in text


def test_stored_tensors_are_compared_value_by_value_at_the_declared_precision() -> None:
    from bookbuild.runs.registry import Precision

    weights = {"w": Precision(rtol=1e-3, atol=1e-6, reason="weights after training")}
    stored = _record({"w": {"embed": _tensor([1.0, -2.0, 0.0])}})
    assert sweeps.compare(
        stored, _record({"w": {"embed": _tensor([1.0005, -2.0, 5e-7])}}), weights
    )[0]
    assert not sweeps.compare(
        stored, _record({"w": {"embed": _tensor([1.01, -2.0, 0.0])}}), weights
    )[0]
    assert not sweeps.compare(
        stored, _record({"w": {"embed": _tensor([1.0, -2.0])}}), weights
    )[0]  # shape


def test_every_sweep_declares_the_precision_of_what_it_trains_with_a_reason() -> None:
    for name, sweep in sweeps.registry().items():
        for metric, precision in sweep.precision.items():
            assert precision.rtol <= 1e-3, (name, metric)
            assert precision.atol <= 1e-6, (name, metric)
            assert len(precision.reason.split()) > 10, (name, metric)
