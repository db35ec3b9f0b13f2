"""``make gpu-run OUT=folder``: the GPU build in one command, everything that must come
back in one folder.

On a fresh machine with an NVIDIA GPU whose Python has a CUDA build of torch,
``python3 bookbuild/tools/gpu_run.py OUT`` (standard library only until the
environment exists; also ``python -m bookbuild gpu-run OUT``) runs, each step
as a process of its own with its own timeout, inside one budget of 475 s:

1. ``env``: ``bookbuild/tools/venv.py .venv``, which reuses the host's CUDA torch
   (``--system-site-packages``); if it fails (no network), the host's Python
   is used when it can import the book's packages, and the log says so;
2. side by side: ``probe``: what the machine is (``OUT/device.json``: GPU,
   capability, CUDA, cuDNN, torch, output profile, CPU, ``nvidia-smi``);
   ``book-sweeps``: every configuration the chapters read that is re-run per
   device (``book-runs``, ``book-grid``: ``PER_DEVICE_CONFIGS`` in
   :mod:`bookbuild.runs.registry`) with ``--device cuda``, into the GPU's own
   record sets (``records/<sweep>/<config>@<profile>/``), which a GPU build
   reads; six sweeps at once, three jobs at once in each;
   then, side by side: ``chapters``: every chapter executed with
   ``BOOK_DEVICE=cuda`` by the engine (all at once: one chapter per core at one
   thread; every model and batch on the GPU), then the build report
   (``OUT/build-report.md``: verdicts against the baselines committed for this
   GPU kind and software, if any; device, GPU kind, CUDA, cuDNN and the
   determinism settings per chapter) and the comparison of the outputs with the
   committed ``cpu-avx2`` baselines (``OUT/cpu-comparison.md``); ``sweep``:
   ``python -m bookbuild experiments run word-lm-scale --config gpu --workers
   10`` (the scale study's configuration for this machine);
3. ``baselines``: ``accept --only`` the chapters that executed (cache hits):
   their outputs recorded into ``baselines/<profile>/`` (``cuda-sm90`` on an
   H200) with the GPU software they hold for (``software.json``); where
   baselines of the same software were committed, the log lists every
   difference from them first. They come back for a person to review and
   commit, so ``CI`` is cleared for this step (``accept`` refuses under CI).
   If the chapters step ran out of time before its reports, they are written
   here, for the chapters that finished;
4. ``collect`` (in this process): baselines, records, the timing table
   (``OUT/timing.json`` and ``OUT/timing.md``: each step, each chapter against
   its estimate below, each sweep job), the kernels', the engine's and the
   sweep jobs' logs.

A step that fails or runs out of time is logged (``OUT/logs/<step>.log``) and
the rest still runs; a step that runs out of time is interrupted (the engine
and the sweep stop their kernels and jobs on Ctrl-C), then killed with every
process it started. ``OUT/summary.json`` and ``OUT/summary.md`` are rewritten
when each step starts and ends, so the folder always says how far the run got.

``--dry-run`` walks the same steps at toy size on the CPU, in a temporary copy
of the book's code holding one tiny page: the environment is only checked, the
page executes with ``BOOK_DEVICE=cpu``, ``word-lm-scale`` runs its ``smoke``
configuration (one job; it needs the corpora in ``data/``, which the first
``make book`` builds), and the dry run checks that every file the real run
promises is in ``OUT`` (``tests/bookbuild/test_gpu_run.py``).

The budget (wall seconds on one H100 or H200 with 16 cores). The chapters and
every job put their models and batches on the GPU (``runtime.setup()``'s device,
or the job's ``BOOK_DEVICE``); random draws stay on the CPU. No GPU has run the
book yet, so every GPU figure below is an estimate, not a measurement. The
chapters' own runs (``book-sweeps``) are about 1,400 s of jobs on one CPU core
(BENCHMARKS.md: the records' ``wall_s``, the largest 75-150 s); small recurrent
models on a GPU are bound by kernel launches, not arithmetic, so the estimate
assumes each job takes about its CPU time and 18 run at once: about 150-200 s.
The larger studies (``cpu``, ``full-size``: about 12 CPU-hours) are read from
their CPU records by both editions. The scale study's estimate is arithmetic:
per training word, forward and backward cost about three times the forward's
``16 h^2`` floating-point operations per LSTM layer plus ``2 h V`` for the
read-out, which summed over the six sizes and 1.57 million training positions
per job is about 1.5 PFLOP for the 18 jobs; at an assumed 15 TFLOP/s sustained
in FP32 (TF32 off) that is about 100 s of GPU time, plus about 15 s per job to
start, in two waves of ten:

====================  =========================================  ==========  ==========
chapter or step       measured on the 2-core machine (s)         estimate    timeout
====================  =========================================  ==========  ==========
env                   venv and pip, wheels cached: 65            60          100
probe                 import torch: 3-6                          5           30
book-sweeps (before   about 1,400 s of jobs on one CPU core;     180         the budget
the chapters)         18 at once, each assumed its CPU time                  left
building (its table)  8-12 (measured as the front page's)        10          all side
1. recurrence         47.6 with JAX (the unrolled jit: 13.8)     45          by side:
2. gradients          66.6 with JAX (16 scan compiles: 36)       60          the budget
3. gated              72 cold (2026-12-04): its one memoized     80          left after
                      run 46 s; grid, trace and learned-h0                   env, less
                      runs read from records                                 50 s
4. language models    46-59 cold, its three models read from     60          (at least
                      the char-lm-book records (281 s training)
5. generating         11-35: reads the same records              35          325 s)
6. depth              23 cold: every training read from the      30
                      depth-book-runs records (179 s of jobs)
7. beyond             24 cold: every training read from the      30
                      beyond-book-runs records (108 s of jobs)
reports               engine results in hand, two comparisons    10
sweep (18 jobs on     not measured: the arithmetic above, ~100 s  150
the GPU, 10 at a      of GPU time and two waves of job starts
time)
baselines             a no-change build: 7-12                    15          40
collect               copies                                     2           -
total (env, then book-sweeps, then the longer of        ~410        475
chapters and sweep, then baselines and collect)
====================  =========================================  ==========  ==========

If the estimates are short, the scale study's ``gpu`` sweep is cut first (its
finished jobs keep their records). The first real run will replace these
estimates with measurements (issue 55).

Since Chapters 3, 4, 6 and 7 read their trainings from sweep records, no chapter
is much longer than the others: the chapters take about 80 s side by side (Chapter
3's one memoized run the longest item). If the machine's cores are
slower than assumed, the chapters step runs out of time first; the chapters
that finished still get their baselines and reports, and the sweep's finished
jobs their records.

Pages: none (the build's machinery); README "Building on a GPU".
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# 8 minutes, less a few seconds for the machine's own start and the copy back
BUDGET_S = 475.0
RESERVED_AFTER_RUN_S = 50.0  # baselines and collect, after the side-by-side steps
# from the interrupt of a step that ran out of time to the kill of what is left of it
GRACE_S = 10.0
SWEEP = "word-lm-scale"
SWEEP_CONFIG = "gpu"
DRY_BUDGET_S = 150.0
SWEEP_WORKERS = 10  # of 16 cores: the chapters keep about six busy
# sweeps of the chapters' own runs at once, before the chapters
BOOK_SWEEP_PROCESSES = 6
BOOK_SWEEP_WORKERS = 3  # jobs at once in each: at most 18 jobs on 16 cores and the GPU
# the dry run walks the step with one sweep's smoke configuration
DRY_BOOK_SWEEPS = ("gated-book-runs",)
CORPORA = ("data/shakespeare.txt", "data/milton.txt")
#: What the steps import, checked without importing torch (which takes seconds): the
#: engine's and the sweeps' stack.
PACKAGES = (
    "bookbuild",
    "nbclient",
    "jupyter_cache",
    "myst_nb",
    "yaml",
    "submitit",
    "filelock",
    "psutil",
)
#: Estimated wall seconds per chapter on the GPU machine (the budget table above),
#: printed beside the measured ones.
CHAPTER_ESTIMATES: dict[str, float] = {
    "book/intro": 10,
    "book/building": 10,
    "book/recurrence": 45,
    "book/gradients": 60,
    "book/gated": 80,
    "book/language-models": 60,
    "book/generating": 35,
    "book/depth": 30,
    "book/beyond": 30,
}
#: Files every run leaves in OUT, whatever happened (the dry run checks them).
ALWAYS = ("summary.json", "summary.md", "timing.json", "timing.md", "logs")


@dataclass
class Step:
    """One step: a command, its timeout, and what happened when it ran."""

    name: str
    argv: list[str]
    timeout_s: float
    env: dict[str, str] = field(default_factory=dict)
    status: str = "waiting"  # waiting, running, ok, failed, timed out, skipped
    rc: int | None = None
    wall_s: float = 0.0
    note: str = ""
    log: str = ""

    def row(self) -> dict[str, Any]:
        out = asdict(self)
        out["argv"] = " ".join(self.argv)
        out.pop("env")
        return out


# ------------------------------------------------------------------------ running steps


def _descendants(pid: int) -> list[tuple[int, str]]:
    """Every live descendant of ``pid`` and its start time (``/proc``; kernels start in
    sessions of their own)."""
    children: dict[int, list[tuple[int, str]]] = {}
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # ppid; starttime
        children.setdefault(int(fields[1]), []).append((int(entry.name), fields[19]))
    out, queue = [], [pid]
    while queue:
        for child in children.get(queue.pop(), []):
            out.append(child)
            queue.append(child[0])
    return out


def _kill(pid: int, started: str) -> None:
    """SIGKILL ``pid`` if it is still the process that started at ``started`` (never a
    reused pid)."""
    try:
        if (
            Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
            == started
        ):
            os.kill(pid, signal.SIGKILL)
    except (OSError, IndexError):
        pass


def _interruptible() -> None:
    """In a step's process before it starts: Ctrl-C (SIGINT) interrupts it, as in a
    terminal.

    A process started in the background by a non-interactive shell (``cmd &``, some CI
    runners and schedulers) inherits SIGINT ignored, and an ignored signal stays ignored
    across ``exec``: its steps would then sit out the interrupt that stops a step past
    its timeout, and be killed only after :data:`GRACE_S`, their kernels and jobs left
    unstopped.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _stop(proc: subprocess.Popen, grace_s: float = GRACE_S) -> None:
    """Interrupt a step (Ctrl-C: the engine and the sweep stop their kernels and jobs),
    then kill what is left.

    Only the step's own processes are signalled: its process group, and the
    descendants found under it (each checked by its start time before the kill).
    """
    family = _descendants(proc.pid)
    try:
        os.killpg(proc.pid, signal.SIGINT)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
    for pid, started in {*family, *_descendants(proc.pid)}:
        _kill(pid, started)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        pass


class Runner:
    """Runs steps one by one or side by side, each with its own timeout, inside one
    deadline; logs everything."""

    def __init__(self, out: Path, root: Path, dry_run: bool, budget_s: float) -> None:
        self.out, self.root, self.dry_run = out, root, dry_run
        self.started = time.monotonic()
        self.started_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.deadline = self.started + budget_s
        self.budget_s = budget_s
        self.steps: list[Step] = []
        self.facts: dict[str, Any] = {}
        (out / "logs").mkdir(parents=True, exist_ok=True)

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def run(self, *steps: Step, until: float | None = None) -> None:
        """Run ``steps`` side by side; each ends by itself, at its timeout, or at
        ``until`` (monotonic)."""
        live: list[tuple[Step, subprocess.Popen, float, Any]] = []
        # Everything from the first start on is inside the try: a signal that lands
        # while the steps start or while the summary is written still stops what was
        # started and marks it interrupted.
        try:
            for step in steps:
                self.steps.append(step)
                limit = min(
                    step.timeout_s,
                    max(1.0, (until or self.deadline) - time.monotonic()),
                )
                step.timeout_s = round(limit, 1)
                log_path = self.out / "logs" / f"{step.name}.log"
                step.log = str(log_path.relative_to(self.out))
                log = log_path.open("w")
                log.write(
                    f"$ {' '.join(step.argv)}\n(timeout {limit:.0f} s; cwd "
                    f"{self.root})\n\n"
                )
                log.flush()
                env = {**os.environ, **step.env}
                try:
                    proc = subprocess.Popen(
                        step.argv,
                        cwd=self.root,
                        env=env,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        stdin=subprocess.DEVNULL,
                        start_new_session=True,
                        preexec_fn=_interruptible,
                    )
                except OSError as exc:
                    step.status, step.note = "failed", f"could not start: {exc}"
                    log.close()
                    continue
                step.status = "running"
                live.append((step, proc, time.monotonic(), log))
                print(
                    f"gpu-run: {step.name}: started (timeout {limit:.0f} s)", flush=True
                )
            self.write_summary()
            self._wait(live)
        # Ctrl-C or SIGTERM (an outer timeout): stop what runs, then let run() collect
        except BaseException:
            for step, proc, began, log in live:
                # an outer timeout leaves little time: collect comes first
                _stop(proc, grace_s=2.0)
                step.status, step.rc = "interrupted", proc.returncode
                step.wall_s = round(time.monotonic() - began, 1)
                step.note = "the run itself was interrupted"
                log.close()
            self.write_summary()
            raise

    def _wait(self, live: list[tuple[Step, subprocess.Popen, float, Any]]) -> None:
        while live:
            time.sleep(0.2)
            for entry in list(live):
                step, proc, began, log = entry
                overdue = time.monotonic() - began > step.timeout_s
                if proc.poll() is None and not overdue:
                    continue
                if proc.poll() is None:
                    _stop(proc)
                    step.status = "timed out"
                    step.note = f"stopped after its timeout of {step.timeout_s:.0f} s"
                else:
                    step.status = "ok" if proc.returncode == 0 else "failed"
                step.rc = proc.returncode
                step.wall_s = round(time.monotonic() - began, 1)
                log.write(
                    f"\n[gpu-run: {step.status}, exit {step.rc}, {step.wall_s:.1f} s]\n"
                )
                log.close()
                live.remove(entry)
                print(
                    f"gpu-run: {step.name}: {step.status} in {step.wall_s:.1f} s (exit "
                    f"{step.rc})",
                    flush=True,
                )
                self.write_summary()

    def skip(self, name: str, why: str) -> None:
        self.steps.append(Step(name, [], 0.0, status="skipped", note=why))
        print(f"gpu-run: {name}: skipped ({why})", flush=True)
        self.write_summary()

    def write_summary(self, finished: bool = False) -> None:
        """``summary.json`` and ``summary.md``: every step so far, its outcome, its log;
        the files in OUT."""
        wall = round(time.monotonic() - self.started, 1)
        data = {
            "command": "make gpu-run" + (" (dry run)" if self.dry_run else ""),
            "dry_run": self.dry_run,
            "finished": finished,
            "started_at": self.started_at,
            "wall_s": wall,
            "budget_s": self.budget_s,
            "within_budget": wall <= self.budget_s,
            "steps": [s.row() for s in self.steps],
            **self.facts,
            "files": sorted(
                str(p.relative_to(self.out)) for p in self.out.rglob("*") if p.is_file()
            ),
        }
        _write_json(self.out / "summary.json", data)
        lines = [
            f"# {data['command']}: "
            f"{'finished' if finished else 'RUNNING (or stopped before the end)'}",
            "",
            f"Started {self.started_at}; {wall:.0f} s of the {self.budget_s:.0f} s "
            f"budget ({'within' if data['within_budget'] else 'OVER'} it).",
            "",
        ]
        lines += [
            f"- {k}: `{v}`"
            for k, v in self.facts.items()
            if not isinstance(v, (dict, list))
        ]
        lines += [
            "",
            "| step | outcome | exit | wall (s) | timeout (s) | log | note |",
            "|---|---|---:|---:|---:|---|---|",
        ]
        for s in self.steps:
            lines.append(
                f"| {s.name} | {s.status} | {'' if s.rc is None else s.rc} | "
                f"{s.wall_s:.1f} | {s.timeout_s:.0f} | {s.log} | "
                f"{s.note.replace('|', '/')} |"
            )
        lines += ["", "Files: see `summary.json` (`files`); timings: `timing.md`.", ""]
        _write_text(self.out / "summary.md", "\n".join(lines))


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _write_json(path: Path, value: Any) -> None:
    _write_text(path, json.dumps(value, indent=1, sort_keys=True) + "\n")


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


# --------------------------------------------------------------------------- the run


def _python_for(root: Path, runner: Runner) -> str:
    """The environment's Python after ``env``: ``.venv`` when it works, else this Python
    if it has the packages."""
    venv = root / ".venv" / "bin" / "python"
    probe = (
        f"import importlib.util, {', '.join(PACKAGES)}; assert "
        "importlib.util.find_spec('torch')"
    )
    env = {**os.environ, "PYTHONPATH": str(root)}
    fallback = (
        "this Python" if runner.dry_run else "this Python (the .venv set-up failed)"
    )
    for python, what in ((str(venv), ".venv"), (sys.executable, fallback)):
        if not Path(python).exists():
            continue
        done = subprocess.run(
            [python, "-c", probe], cwd=root, env=env, capture_output=True, timeout=120
        )
        if done.returncode == 0:
            runner.facts["python"] = f"{python} ({what})"
            return python
    runner.facts["python"] = (
        f"{sys.executable} (no Python here imports the book's packages; later steps "
        "fail)"
    )
    return sys.executable


def run(
    out: Path,
    dry_run: bool = False,
    root: Path = ROOT,
    budget_s: float = BUDGET_S,
    sweep: str | None = None,
) -> int:
    """Run every step into ``out``; 0 when every step succeeded (``summary.json`` says
    what happened either way)."""
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    tmp: tempfile.TemporaryDirectory | None = None
    if dry_run:
        absent = [rel for rel in CORPORA if not (root / rel).is_file()]
        if absent:
            print(
                f"gpu-run --dry-run: needs {' and '.join(absent)} (the corpora the "
                "first `make book` builds; the dry run works offline)",
                file=sys.stderr,
            )
            return 2
        tmp = tempfile.TemporaryDirectory(prefix="gpu-run-dry-")
        root = _dry_book(root, Path(tmp.name))
    runner = Runner(
        out, root, dry_run, budget_s if not dry_run else min(budget_s, DRY_BUDGET_S)
    )
    device = "cpu" if dry_run else "cuda"
    sweep = sweep or SWEEP
    config = "smoke" if dry_run else SWEEP_CONFIG
    runner.facts.update(
        device=device, sweep=f"{sweep} --config {config}", root=str(root)
    )

    # an outer timeout's SIGTERM: collect what there is
    def terminated(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, terminated)
    base_env = {
        "PYTHONPATH": str(root),
        "BOOK_DEVICE": device,
        "XLA_PYTHON_CLIENT_PREALLOCATE": "false",
        "PYTHONUNBUFFERED": "1",
        "BOOKBUILD_PROGRESS_EVERY": "30",
    }
    try:
        if dry_run:
            runner.run(
                Step(
                    "env",
                    [
                        sys.executable,
                        "-c",
                        f"import {', '.join(PACKAGES)}; print('dry run: the running "
                        "environment has the book installed')",
                    ],
                    60,
                    base_env,
                    note="dry run: checks this environment, creates no .venv",
                )
            )
        else:
            venv_script = str(root / "bookbuild" / "tools" / "venv.py")
            runner.run(
                Step("env", [sys.executable, venv_script, ".venv"], 100, base_env)
            )
        python = _python_for(root, runner)
        me = [python, "-m", "bookbuild.tools.gpu_run"]
        until = runner.deadline - RESERVED_AFTER_RUN_S
        workers = "1" if dry_run else str(SWEEP_WORKERS)
        # first the chapters' own runs on this device (a GPU build reads its own record
        # set of them), then the chapters beside the scale study's GPU configuration
        book_sweeps = DRY_BOOK_SWEEPS if dry_run else ()
        runner.run(
            Step("probe", [*me, "_probe", str(out / "device.json")], 30, base_env),
            Step(
                "book-sweeps",
                [*me, "_book_sweeps", device, *book_sweeps],
                BUDGET_S,
                base_env,
            ),
            until=until,
        )
        runner.run(
            Step("chapters", [*me, "_execute", str(out)], BUDGET_S, base_env),
            Step(
                "sweep",
                [
                    python,
                    "-m",
                    "bookbuild",
                    "experiments",
                    "run",
                    sweep,
                    "--config",
                    config,
                    "--workers",
                    workers,
                ],
                BUDGET_S,
                base_env,
            ),
            until=until,
        )
        finished = _executed_chapters(root)
        if finished:
            runner.run(
                Step(
                    "baselines",
                    [*me, "_record", str(out), *finished],
                    40,
                    {**base_env, "CI": ""},
                    note=f"{len(finished)} chapter(s)",
                )
            )
        else:
            runner.skip("baselines", "no chapter executed")
    except KeyboardInterrupt as exc:
        runner.facts["interrupted"] = (
            f"the run was interrupted ({exc or 'Ctrl-C'}); what finished was collected"
        )
        print(
            f"gpu-run: interrupted ({exc or 'Ctrl-C'}); collecting what finished",
            file=sys.stderr,
            flush=True,
        )
    finally:
        problems: list[str] = []
        try:
            _collect(runner, root, out, sweep, config)
        finally:
            runner.write_summary(finished=True)
            if dry_run:
                problems = _check_folder(out)
                runner.facts["dry_run_check"] = (
                    "; ".join(problems) or "ok: every promised file is in OUT"
                )
                runner.write_summary(finished=True)
                for problem in problems:
                    print(f"gpu-run --dry-run: {problem}", file=sys.stderr)
            if tmp is not None:
                tmp.cleanup()
            signal.signal(signal.SIGTERM, previous)
    failed = [s.name for s in runner.steps if s.status != "ok"]
    print(
        f"gpu-run: {'all steps ok' if not failed else 'not ok: ' + ', '.join(failed)}; "
        f"{time.monotonic() - runner.started:.0f} s; everything is in {out} "
        "(summary.md)",
        flush=True,
    )
    if "interrupted" in runner.facts:
        return 130
    return 0 if not failed and not problems else 1


def _executed_chapters(root: Path) -> list[str]:
    """Chapters whose outputs the engine stored in this run's build folder (its
    manifest), in toc order."""
    manifest = _read_json(root / "_build" / "engine" / "manifest.json") or {}
    return [
        c
        for c, e in manifest.items()
        if isinstance(e, dict) and e.get("status") == "executed"
    ]


def _collect(runner: Runner, root: Path, out: Path, sweep: str, config: str) -> None:
    """Copy what must come back into OUT and write the timing table."""
    device = _read_json(out / "device.json") or {}
    manifest = _read_json(root / "_build" / "engine" / "manifest.json") or {}
    profiles = {
        e.get("profile")
        for e in manifest.values()
        if isinstance(e, dict) and e.get("profile")
    }
    # the engine's, if no probe
    profile = device.get("profile") or (profiles.pop() if len(profiles) == 1 else None)
    runner.facts["profile"] = (
        profile or "unknown (neither the probe nor the engine reported one)"
    )
    if profile and (root / "baselines" / profile).is_dir():
        _copy_tree(root / "baselines" / profile, out / "baselines" / profile)
    records = root / "records" / sweep / config
    if records.is_dir():
        _copy_tree(records, out / "records" / sweep / config)
    # the GPU's own record sets
    for made in sorted((root / "records").glob(f"*/*@{profile}")) if profile else []:
        _copy_tree(made, out / "records" / made.parent.name / made.name)
    state = root / "_build" / "engine"
    if (state / "kernels").is_dir():
        _copy_tree(state / "kernels", out / "logs" / "kernels")
    if (state / "manifest.json").is_file():
        shutil.copy2(state / "manifest.json", out / "logs" / "engine-manifest.json")
    sweep_logs = sorted((root / "_build" / "sweeps" / sweep).glob("2*"))
    # submitit's stdout and stderr of each job of the latest run (not its pickles)
    if sweep_logs:
        for path in sweep_logs[-1].rglob("*"):
            if path.is_file() and path.suffix in (".out", ".err", ".log"):
                target = out / "logs" / "sweep-jobs" / path.relative_to(sweep_logs[-1])
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)
    _write_timing(runner, out, records)


def _copy_tree(src: Path, dst: Path) -> None:
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.tmp"))


def _write_timing(runner: Runner, out: Path, records: Path) -> None:
    """``timing.json`` and ``timing.md``: each step; each chapter against its estimate;
    each sweep job."""
    manifest = _read_json(out / "logs" / "engine-manifest.json") or {}
    chapters = []
    for chapter, entry in manifest.items():
        if not isinstance(entry, dict):
            continue
        runs = entry.get("runs") or []
        chapters.append(
            {
                "chapter": chapter,
                "status": entry.get("status"),
                "wall_s": entry.get("wall_s"),
                "estimate_s": CHAPTER_ESTIMATES.get(chapter),
                "executed_at": entry.get("executed_at"),
                "computed_runs": sum(1 for r in runs if r.get("outcome") == "computed"),
                "compute_s": round(sum(float(r.get("compute_s", 0)) for r in runs), 1),
            }
        )
    jobs = []
    for path in sorted(records.glob("*.json")) if records.is_dir() else []:
        record = _read_json(path) or {}
        metrics = record.get("metrics", {})
        jobs.append(
            {
                "job": f"{record.get('job')}.seed{record.get('seed')}",
                "wall_s": record.get("wall_s"),
                "parameters": metrics.get("parameters"),
                "test_perplexity": metrics.get("test_perplexity"),
                "best_step": metrics.get("best_step"),
                "device": record.get("environment", {}).get("device"),
            }
        )
    steps = [
        {
            "step": s.name,
            "status": s.status,
            "wall_s": s.wall_s,
            "timeout_s": s.timeout_s,
        }
        for s in runner.steps
    ]
    _write_json(
        out / "timing.json",
        {
            "steps": steps,
            "chapters": chapters,
            "sweep_jobs": jobs,
            "budget_s": runner.budget_s,
        },
    )

    def num(value: Any, digits: int = 1) -> str:
        return "-" if value is None else f"{float(value):.{digits}f}"

    lines = [
        "# Timing",
        "",
        "| step | outcome | wall (s) | timeout (s) |",
        "|---|---|---:|---:|",
    ]
    lines += [
        f"| {s['step']} | {s['status']} | {num(s['wall_s'])} | "
        f"{num(s['timeout_s'], 0)} |"
        for s in steps
    ]
    lines += [
        "",
        "| chapter | outcome | wall (s) | estimate (s) | memoized runs computed | "
        "their time (s) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {c['chapter']} | {c['status']} | {num(c['wall_s'])} | "
        f"{num(c['estimate_s'], 0)} | {c['computed_runs']} | {num(c['compute_s'])} |"
        for c in chapters
    ]
    lines += [
        "",
        "| sweep job | wall (s) | parameters | test perplexity | best step | device |",
        "|---|---:|---:|---:|---:|---|",
    ]
    lines += [
        f"| {j['job']} | {num(j['wall_s'])} | {j['parameters'] or '-'} | "
        f"{num(j['test_perplexity'], 2)} | {j['best_step'] or '-'} | "
        f"{j['device'] or '-'} |"
        for j in jobs
    ]
    _write_text(out / "timing.md", "\n".join(lines) + "\n")


def _check_folder(out: Path) -> list[str]:
    """What the dry run checks in OUT: every promised file, readable, with the facts it
    must state."""
    problems = [
        f"missing {name}"
        for name in ALWAYS + ("device.json", "build-report.md")
        if not (out / name).exists()
    ]
    summary = _read_json(out / "summary.json") or {}
    names = [s["name"] for s in summary.get("steps", [])]
    # the real run's, in order
    if names != ["env", "probe", "book-sweeps", "chapters", "sweep", "baselines"]:
        problems.append(f"steps {names}")
    problems += [
        f"step {s['name']}: {s['status']} (see {s['log']})"
        for s in summary.get("steps", [])
        if s["status"] != "ok"
    ]
    if not list((out / "baselines").glob("*/*.json")):
        problems.append("no baselines")
    if not list((out / "records").glob("*/*/*.json")):
        problems.append("no sweep records")
    return problems


# ------------------------------------------------------------------- the dry run's book


DRY_PAGE = """\
---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# The GPU run, dry

```{code-cell} ipython3
:label: dry-setup
from chapter_code.core import numerics, runtime

device = runtime.setup()
print(f"device {device.type}, profile {numerics.output_profile(device)}")
```

```{code-cell} ipython3
:label: dry-compute
import torch

print(torch.arange(6.0).sum().item())
```
"""


def _dry_book(source: Path, work: Path) -> Path:
    """A temporary book: this checkout's code and configuration, the corpora if present,
    one tiny page."""
    for name in ("bookbuild", "chapter_code"):
        shutil.copytree(
            source / name, work / name, ignore=shutil.ignore_patterns("__pycache__")
        )
    for name in ("requirements",):
        if (source / name).is_dir():
            shutil.copytree(source / name, work / name)
    for name in ("pyproject.toml", "_config.yml"):
        if (source / name).is_file():
            shutil.copy2(source / name, work / name)
    (work / "data").mkdir()
    for rel in CORPORA:
        if (source / rel).is_file():
            if _same_device(source, work):
                os.link(source / rel, work / rel)
            else:
                shutil.copy2(source / rel, work / rel)
    (work / "records").mkdir()
    (work / "book").mkdir()
    (work / "book" / "intro.md").write_text(DRY_PAGE)
    (work / "_toc.yml").write_text("format: jb-book\nroot: book/intro\n")
    return work


def _same_device(a: Path, b: Path) -> bool:
    return a.stat().st_dev == b.stat().st_dev


# -------------------------------------------------- the steps that need the environment


def _probe(path: Path) -> int:
    """Write what the machine is to ``path``; fails (exit 1) when the run asks for CUDA
    and there is none."""
    # first: the CPU and CUDA pins, before torch loads
    from chapter_code.core import numerics, runtime

    torch = runtime.torch
    info: dict[str, Any] = {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "cuda_build": torch.version.cuda,
        "cuda_available": torch.cuda.is_available(),
        "book_device": os.environ.get("BOOK_DEVICE", ""),
        "cpu_count": os.cpu_count(),
        "cpu_pins_supported": numerics.cpu_supports_pins(),
        "cublas_workspace_config": os.environ.get("CUBLAS_WORKSPACE_CONFIG"),
    }
    problem = ""
    try:
        device = runtime.pick_device()
        info.update(
            device=str(device),
            profile=numerics.output_profile(device),
            gpu_software=numerics.gpu_software(device),
            gpu_kind=numerics.gpu_kind(device),
        )
        if device.type == "cuda":
            info.update(
                device_name=torch.cuda.get_device_name(device),
                device_count=torch.cuda.device_count(),
                memory_gib=round(
                    torch.cuda.get_device_properties(device).total_memory / 2**30, 1
                ),
            )
    except (RuntimeError, ValueError) as exc:
        problem = str(exc)
        info["problem"] = problem
    try:
        smi = subprocess.run(["nvidia-smi"], capture_output=True, text=True, timeout=20)
        info["nvidia_smi"] = smi.stdout.splitlines()[:20]
    except (OSError, subprocess.SubprocessError):
        info["nvidia_smi"] = None
    _write_json(path, info)
    print(json.dumps({k: v for k, v in info.items() if k != "nvidia_smi"}, indent=1))
    return 1 if problem else 0


def _execute(root: Path, out: Path) -> int:
    """Execute every chapter (the engine; what is fresh in the build folder is reused),
    then write the reports.

    The build report compares with the baselines committed for this profile
    and software, before ``_record`` replaces them. Exit 1 if a chapter failed.
    """
    from bookbuild import gate
    from bookbuild.execute import engine
    from bookbuild.files import checkout_lock

    with checkout_lock(engine.engine_dir(root), "make gpu-run"):
        gate.prepare_data(root)
        results = engine.run(root)
    for r in results:
        print(
            f"gpu-run: {r.chapter}: {r.status} in {r.wall_s:.1f} s ({r.reason})"
            + (f"\n{r.error}" if r.error else ""),
            flush=True,
        )
    _write_reports(root, out, [r for r in results if r.status in ("executed", "hit")])
    return 1 if any(r.status in ("failed", "stale") for r in results) else 0


def _record(root: Path, out: Path, chapters: list[str]) -> int:
    """``accept --only chapters`` (all cache hits): their baselines; the reports too if
    ``_execute`` wrote none."""
    from bookbuild import gate
    from bookbuild.execute import engine
    from bookbuild.files import checkout_lock

    with checkout_lock(engine.engine_dir(root), "make gpu-run"):
        code = gate.accept(root, only=chapters)
        # the chapters step ran out of time before its reports
        if not (out / "build-report.md").exists():
            _write_reports(root, out, engine.run(root, only=chapters))
    return code


def _write_reports(root: Path, out: Path, results: list[Any]) -> None:
    """The build report of ``results``, and their comparison with the committed CPU
    baselines."""
    from bookbuild import gate
    from bookbuild.execute import engine
    from chapter_code.core import numerics

    if not results:
        _write_text(
            out / "build-report.md",
            "# Build report\n\nNo chapter executed in this run.\n",
        )
        return
    profile = engine.device_profile()
    checks = gate.check_chapters(root, results, profile)
    _write_text(out / "build-report.md", gate.report_text(checks, profile))
    if (
        profile == numerics.PINNED_PROFILE
        or not (root / gate.BASELINES / numerics.PINNED_PROFILE).is_dir()
    ):
        return
    cpu = gate.check_chapters(root, results, numerics.PINNED_PROFILE, compared=True)
    differences = {c.result.chapter: [str(d) for d in c.differences] for c in cpu}
    _write_json(out / "cpu-comparison.json", differences)
    lines = [
        f"# {profile} outputs against the committed {numerics.PINNED_PROFILE} "
        "baselines",
        "",
        "No chapter moves its work to runtime.setup()'s device, so outside JAX's cells "
        "and the build-information table the GPU build computes on the CPU, with the "
        "CPU pins in force where the host CPU has AVX2: its outputs are expected to "
        "equal the CPU baselines.",
        "",
        "| chapter | differences |",
        "|---|---:|",
    ]
    lines += [f"| {chapter} | {len(diffs)} |" for chapter, diffs in differences.items()]
    lines += ["", *[f"- {d}" for diffs in differences.values() for d in diffs[:40]]]
    _write_text(out / "cpu-comparison.md", "\n".join(lines) + "\n")


def _book_sweeps(root: Path, device: str, names: list[str]) -> int:
    """Run every per-device configuration the chapters read (the registry's
    ``PER_DEVICE_CONFIGS`` but ``smoke``: ``book-runs``, ``book-grid``, the scale
    study's ``cpu``) of every sweep, or of ``names``, on ``device``, into its own record
    set: one ``experiments run`` per sweep, :data:`BOOK_SWEEP_PROCESSES` at once, each
    with up to :data:`BOOK_SWEEP_WORKERS` jobs at once. In the dry run (``names``
    given), their ``smoke`` configurations.
    """
    from bookbuild.runs import sweeps

    registry = sweeps.registry()
    todo = [
        (name, config, len(sweeps.jobs(sweep, config)))
        for name, sweep in registry.items()
        if not names or name in names
        for config in sweep.configs
        if (config == "smoke") == bool(names) and sweeps.per_device(config, name)
    ]
    todo.sort(key=lambda t: -t[2])  # the largest first
    running: list[tuple[str, subprocess.Popen]] = []
    failed: list[str] = []
    while todo or running:
        while todo and len(running) < BOOK_SWEEP_PROCESSES:
            name, config, n = todo.pop(0)
            command = [
                sys.executable,
                "-m",
                "bookbuild",
                "experiments",
                "run",
                name,
                "--config",
                config,
                "--device",
                device,
                "--workers",
                str(min(n, BOOK_SWEEP_WORKERS)),
            ]
            print(f"book-sweeps: {' '.join(command[3:])}", flush=True)
            running.append(
                (f"{name} --config {config}", subprocess.Popen(command, cwd=root))
            )
        time.sleep(0.5)
        for item in list(running):
            if item[1].poll() is not None:
                running.remove(item)
                if item[1].returncode != 0:
                    failed.append(item[0])
    if failed:
        print(f"book-sweeps: failed: {', '.join(failed)}", file=sys.stderr, flush=True)
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    # steps, run with the env's Python
    if args and args[0] in ("_probe", "_execute", "_record", "_book_sweeps"):
        root = Path.cwd()
        if args[0] == "_book_sweeps":
            return _book_sweeps(root, args[1], args[2:])
        if args[0] == "_probe":
            return _probe(Path(args[1]))
        if args[0] == "_execute":
            return _execute(root, Path(args[1]))
        return _record(root, Path(args[1]), args[2:])
    parser = argparse.ArgumentParser(
        prog="make gpu-run OUT=folder  (python3 bookbuild/tools/gpu_run.py)",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument(
        "out", help="the folder that receives everything that must come back"
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="the same steps at toy size, on the CPU, in a "
        "temporary copy (no .venv, one tiny page, the sweep's smoke configuration)",
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=BUDGET_S,
        help=f"seconds for the whole run ({BUDGET_S:.0f})",
    )
    parsed = parser.parse_args(args)
    if parsed.budget < 60:
        parser.error(f"--budget must be at least 60 seconds; got {parsed.budget:g}")
    return run(Path(parsed.out), dry_run=parsed.dry_run, budget_s=parsed.budget)


if __name__ == "__main__":
    sys.exit(main())
