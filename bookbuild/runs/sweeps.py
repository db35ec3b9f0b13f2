"""Experiment sweeps as batch jobs, their stored records, and the loader that refuses
stale ones.

A sweep (defined in :mod:`bookbuild.runs.registry`) is a grid of named jobs times
seeds. ``python -m bookbuild experiments run NAME`` (``make experiments
SWEEP=NAME``) runs the jobs whose record is missing or stale through
**submitit**: its local executor by default (as many jobs at once as the
machine has cores, or GPUs when the jobs ask for GPUs and the machine has
them), its Slurm executor with ``--cluster slurm`` (partition, time, GPUs and
CPUs from the sweep's definition), or one after another in this process with
``--cluster debug``. While it runs it prints jobs done / running / failed /
waiting and an estimate of the time left; a failed job's error is printed
with its parameters, and the command exits non-zero.

Each job writes one small JSON record, atomically, to
``records/<sweep>/<config>/<job>.seed<N>.json`` (committed; weights are never stored):
parameters, seed, metrics, the **code hash** (SHA-256 of the job function's
name and of every definition it reaches, keyed as :mod:`bookbuild.runs.keys`
keys them, with each definition's own hash beside it), the **params hash**, hashes of
the declared data files, torch/CUDA versions, device, output profile and pinned CPU
numerics, git commit, host, Slurm job id, start time and wall time.

:func:`load` (the book's entry point is ``chapter_code.core.runtime.load_sweep``)
checks every record of a configuration against the current code and
parameters. A stale record (code or parameters changed), a damaged one, or a
missing one raises :class:`SweepNotReady`, naming the sweep and the command
that refreshes it; ``allow_partial=True`` returns a partial sweep marked as
such (``complete`` is False and ``missing`` lists the absent jobs), never a
silently smaller one. :func:`spot_check` re-runs one record and compares its
metrics with the stored ones, at the precision the sweep declares.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
import math
import os
import re
import socket
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from filelock import FileLock, Timeout

from bookbuild import files
from bookbuild.files import UserError
from bookbuild.runs import codec, keys, memo

ROOT = memo.ROOT
REGISTRY = "bookbuild.runs.registry"
CLUSTERS = ("local", "slurm", "debug")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


class SweepNotReady(UserError):
    """A sweep's records are missing, stale or damaged; the message names the command
    that refreshes them."""


# ---------------------------------------------------------------- definitions


def registry(module: str = REGISTRY) -> dict[str, Any]:
    """The sweeps defined in ``module`` (its ``SWEEPS`` dict), each checked."""
    sweeps = importlib.import_module(module).SWEEPS
    for sweep in sweeps.values():
        validate(sweep)
    return sweeps


def get(name: str, module: str = REGISTRY) -> Any:
    """The sweep called ``name``; an error listing the defined ones otherwise."""
    sweeps = registry(module)
    if name not in sweeps:
        raise UserError(
            f"no sweep named {name!r}; defined in {module}: "
            f"{', '.join(sorted(sweeps)) or 'none'}"
        )
    return sweeps[name]


def validate(sweep: Any) -> None:
    """Check a sweep's names, seeds and parameters; the error names the offending
    field."""
    if not isinstance(sweep.name, str) or not _NAME.match(sweep.name):
        raise ValueError(
            "sweep name must be lower-case letters, digits, '-' or '_'; got "
            f"{sweep.name!r}"
        )
    if not sweep.configs:
        raise ValueError(
            f"sweep {sweep.name!r}: configs must hold at least one configuration"
        )
    calls = {f.__name__: f for f in getattr(sweep, "calls", ())}
    if (sweep.job is None) == (not calls):
        raise ValueError(
            f"sweep {sweep.name!r}: give either a job function or the calls its jobs "
            "make, not both"
        )
    for cname, grid in sweep.configs.items():
        where = f"sweep {sweep.name!r}, config {cname!r}"
        if not grid.jobs or not grid.seeds:
            raise ValueError(
                f"{where}: jobs and seeds must each hold at least one entry"
            )
        for job_name, params in grid.jobs.items():
            if not isinstance(job_name, str) or not _NAME.match(job_name):
                raise ValueError(
                    f"{where}: job name must be lower-case letters, digits, '-' or "
                    f"'_'; got {job_name!r}"
                )
            if calls and (
                set(params) != {"function", "kwargs"} or params["function"] not in calls
            ):
                raise ValueError(
                    f"{where}, job {job_name!r}: a call sweep's job is codec.job(f, "
                    f"...) of one of its calls ({', '.join(calls)}); got {params!r}"
                )
            if "seed" in params:
                raise ValueError(
                    f"{where}, job {job_name!r}: 'seed' is given by the grid's seeds, "
                    "not in params"
                )
            memo.canonical(params, f"{where}, job {job_name!r}")
        if len(set(grid.seeds)) != len(grid.seeds) or not all(
            isinstance(s, int) and s >= 0 for s in grid.seeds
        ):
            raise ValueError(
                f"{where}: seeds must be distinct ints >= 0; got {grid.seeds!r}"
            )
        if (
            grid.resources.minutes < 1
            or grid.resources.gpus < 0
            or grid.resources.cpus < 1
        ):
            raise ValueError(
                f"{where}: resources need minutes >= 1, gpus >= 0, cpus >= 1; got "
                f"{grid.resources}"
            )


def grid_of(sweep: Any, config: str) -> Any:
    if config not in sweep.configs:
        raise UserError(
            f"sweep {sweep.name!r} has no config {config!r}; it has "
            f"{', '.join(sweep.configs)}"
        )
    return sweep.configs[config]


@dataclasses.dataclass(frozen=True)
class Job:
    """One job of a sweep: a named parameter set and a seed."""

    name: str
    seed: int
    params: dict[str, Any]

    @property
    def id(self) -> str:
        return f"{self.name}.seed{self.seed}"


def jobs(sweep: Any, config: str) -> list[Job]:
    grid = grid_of(sweep, config)
    return [
        Job(name, seed, memo.canonical(params))
        for name, params in grid.jobs.items()
        for seed in grid.seeds
    ]


def function_path(fn: Callable[..., Any]) -> str:
    module = getattr(fn, "__module__", None)
    if not module or "<" in fn.__qualname__ or module == "__main__":
        raise TypeError(
            "a sweep's job must be a module-level function of an importable module; "
            f"got {fn!r}"
        )
    return f"{module}:{fn.__qualname__}"


def job_function(sweep: Any, job: Job) -> str:
    """The function a job runs, ``module:qualname``: the sweep's job function, or the
    taught function a call sweep's job calls (whose definitions then key the record)."""
    calls = getattr(sweep, "calls", ())
    if not calls:
        return function_path(sweep.job)
    by_name = {f.__name__: f for f in calls}
    return function_path(by_name[job.params["function"]])


def is_call_sweep(sweep: Any) -> bool:
    return bool(getattr(sweep, "calls", ()))


def code_hash(function: str, root: Path | None = None) -> tuple[str, dict[str, str]]:
    """The job's key on definitions (:mod:`bookbuild.runs.keys`): SHA-256 of its name
    and of every definition it reaches, and those definitions' own hashes by name
    (stored in the record, to say which changed)."""
    found = keys.reached(function, root or ROOT)
    qualname = function.partition(":")[2]
    blob = json.dumps(
        {"job": qualname, "definitions": found.definitions}, sort_keys=True
    ).encode()
    return hashlib.sha256(blob).hexdigest(), found.definitions


def params_hash(params: dict[str, Any], seed: int) -> str:
    blob = json.dumps(
        {"params": memo.canonical(params), "seed": seed}, sort_keys=True
    ).encode()
    return hashlib.sha256(blob).hexdigest()


def data_hashes(
    paths: tuple[str, ...] | list[str], root: Path | None = None
) -> dict[str, str]:
    return memo.data_hashes(paths, root or ROOT, "sweep data file")


def records_dir(
    name: str, config: str, root: Path | None = None, profile: str | None = None
) -> Path:
    """``records/<sweep>/<config>/``: a configuration's records (job names may repeat
    across configurations); ``records/<sweep>/<config>@<profile>/`` for those a GPU made
    of a configuration re-run per device."""
    return (
        (root or ROOT)
        / "records"
        / name
        / (config if profile is None else f"{config}@{profile}")
    )


def gpu_record_profiles(name: str, config: str, root: Path | None = None) -> list[str]:
    """The GPU profiles whose record sets of ``config`` are here
    (``records/<sweep>/<config>@cuda-*/``)."""
    folder = (root or ROOT) / "records" / name
    return sorted(
        p.name.partition("@")[2] for p in folder.glob(f"{config}@cuda-*") if p.is_dir()
    )


def per_device(config: str, sweep: str | None = None, module: str = REGISTRY) -> bool:
    """Whether ``config`` (of ``sweep``) is re-run on each edition's device: named in
    the registry's ``PER_DEVICE_CONFIGS`` alone (every sweep's) or as
    ``sweep:config``."""
    names = getattr(importlib.import_module(module), "PER_DEVICE_CONFIGS", ())
    return config in names or (sweep is not None and f"{sweep}:{config}" in names)


def record_profile(sweep: Any, config: str, device: str | None) -> str | None:
    """The record set a build or a run on ``device`` uses for ``config``: ``None`` (the
    CPU set, or a configuration that asks for GPUs itself) or a GPU's output profile,
    for a configuration re-run per device."""
    if (
        device is None
        or not device.startswith("cuda")
        or grid_of(sweep, config).resources.gpus
    ):
        return None
    if not per_device(config, sweep.name):
        return None
    import torch

    from chapter_code.core import numerics

    return numerics.output_profile(torch.device(device))


def refresh_command(name: str, config: str, device: str | None = None) -> str:
    on = f" DEVICE={device}" if device and device != "cpu" else ""
    flag = f" --device {device}" if device and device != "cpu" else ""
    return (
        f"make experiments SWEEP={name} CONFIG={config}{on}  (or: python -m bookbuild "
        f"experiments run {name} --config {config}{flag})"
    )


# -------------------------------------------------- one job (runs in the job's process)


def run_job(
    function: str,
    sweep: str,
    job: str,
    seed: int,
    params: dict[str, Any],
    data: list[str],
    records: str,
    root: str,
    device: str = "cpu",
    call: bool = False,
) -> dict[str, Any]:
    """Run one job and write its record; returns ``{"id", "wall_s", "path"}``. Executed
    by submitit's workers.

    ``device`` (``cpu`` unless the sweep's resources ask for GPUs) becomes
    ``BOOK_DEVICE`` for the job, so a CPU job run on a GPU machine is recorded,
    and re-checked, under the CPU's output profile. ``call``: a call sweep's job
    (:func:`codec.run_call`), whose ``function`` is the taught function called.
    """
    before = os.environ.get("BOOK_DEVICE")
    os.environ["BOOK_DEVICE"] = device
    try:
        return _run_job(function, sweep, job, seed, params, data, records, root, call)
    # `--cluster debug` runs jobs in the caller's process: leave its environment as it
    # was
    finally:
        if before is None:
            os.environ.pop("BOOK_DEVICE", None)
        else:
            os.environ["BOOK_DEVICE"] = before


def _run_job(
    function: str,
    sweep: str,
    job: str,
    seed: int,
    params: dict[str, Any],
    data: list[str],
    records: str,
    root: str,
    call: bool = False,
) -> dict[str, Any]:
    # first: pins the CPU numerics before torch loads
    from chapter_code.core import runtime

    runtime.setup()
    root_path = Path(root)
    digest, sources = code_hash(function, root_path)
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    if call:
        metrics = codec.run_call(function, seed, params)
    else:  # the one converter: dataclass parameters built again by the codec
        metrics = codec.resolve(function)(
            seed=seed, **codec.from_canonical(params, codec.classes(function))
        )
    wall = time.perf_counter() - t0
    if not isinstance(metrics, dict):
        raise TypeError(
            f"job {function} must return a dict of metrics; got "
            f"{type(metrics).__name__}"
        )
    metrics = memo.canonical(metrics, "metrics")
    after, _ = code_hash(function, root_path)
    if after != digest:
        raise RuntimeError(
            f"the code of {function} changed while the job ran; its result is not "
            "recorded"
        )
    print_ = runtime.fingerprint()
    slurm = {
        k: os.environ[k]
        for k in ("SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID")
        if k in os.environ
    }
    record = {
        "sweep": sweep,
        "job": job,
        "seed": seed,
        "params": params,
        "params_hash": params_hash(params, seed),
        "function": function,
        "code_hash": digest,
        "definitions": sources,
        "data": data_hashes(data, root_path),
        "metrics": metrics,
        "environment": {
            "torch": print_.torch_version,
            "cuda": print_.cuda_version,
            "python": print_.python_version,
            "device": print_.device,
            "device_name": print_.device_name,
            "profile": print_.profile,
            "cpu_kernels": print_.cpu_kernels,
            "threads": print_.threads,
            "locks": memo.environment()["locks"],
        },
        "git_commit": record_commit(root_path, print_.git_commit),
        "host": socket.gethostname(),
        "slurm_job_id": slurm.get("SLURM_JOB_ID"),
        "slurm": slurm,
        "started_at": started.isoformat(timespec="seconds"),
        "wall_s": round(wall, 3),
    }
    record[SEAL] = seal(record)
    path = Path(records) / f"{job}.seed{seed}.json"
    files.write_json(path, record)
    return {"id": f"{job}.seed{seed}", "wall_s": wall, "path": str(path)}


# ------------------------------------------------------------- records: survey and load

#: A record's own SHA-256 (of its other keys, canonical JSON): a record edited by hand
#: no longer matches it.
SEAL = "record_sha256"


def seal(record: dict[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != SEAL}
    return hashlib.sha256(
        json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()


@dataclasses.dataclass
class JobStatus:
    job: Job
    # "fresh", "missing", "stale-code", "stale-params", "stale-data", "damaged"
    state: str
    record: dict[str, Any] | None = None
    detail: str = ""


def _read_record(path: Path) -> tuple[dict[str, Any] | None, str]:
    # an open, even a failed one, is what the build's trace sees: a record that appears
    # later re-executes the chapter that found it missing (a mere exists() would go
    # unseen)
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None, ""
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"unreadable ({type(exc).__name__}: {exc})"
    try:
        record = json.loads(text)
        for key in ("params_hash", "code_hash", "metrics", "seed", "job", "wall_s"):
            if key not in record:
                raise KeyError(key)
        # records written before the seal carry none
        if SEAL in record and record[SEAL] != seal(record):
            return (
                None,
                "edited since it was written (its record_sha256 does not match its "
                "content)",
            )
        return record, ""
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError) as exc:
        return None, f"unreadable ({type(exc).__name__}: {exc})"


def changed_since_commit(folder: Path, root: Path) -> set[str] | None:
    """Names of the files in ``folder`` that differ from the last commit or were never
    committed.

    ``None`` where there is no commit to compare with (a copy of the tree outside git,
    no git).
    """
    try:
        rel = folder.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None
    names: set[str] = set()
    for argv in (
        ["git", "diff", "--name-only", "HEAD", "--", rel],
        ["git", "ls-files", "--others", "--exclude-standard", "--", rel],
    ):
        try:
            done = subprocess.run(
                argv, cwd=root, capture_output=True, text=True, timeout=30
            )
        except (OSError, subprocess.SubprocessError):
            return None
        if done.returncode != 0:
            return None
        names |= {
            Path(line.strip()).name for line in done.stdout.splitlines() if line.strip()
        }
    return names


#: What a record without a seal (written before records carried one) says when it
#: differs from its commit.
UNSEALED_EDIT = (
    "edited since it was committed (it carries no record_sha256, being older than the "
    "seal; `python -m bookbuild experiments seal {name} --config {config}` seals "
    "committed records)"
)


def survey(
    sweep: Any, config: str, root: Path | None = None, profile: str | None = None
) -> list[JobStatus]:
    """The state of every job of ``config``, read from ``records/<sweep>/``.

    A sealed record (``record_sha256``) edited by hand is damaged; an unsealed one
    (older than the seal) is damaged when it differs from the last commit
    (:func:`changed_since_commit`).
    """
    root = root or ROOT
    hashes: dict[str, tuple[str, dict[str, str]]] = {}
    data = data_hashes(sweep.data, root)
    folder = records_dir(sweep.name, config, root, profile)
    out = []
    changed: set[str] | None = None
    for job in jobs(sweep, config):
        record, problem = _read_record(folder / f"{job.id}.json")
        if record is not None and SEAL not in record:
            changed = changed_since_commit(folder, root) if changed is None else changed
            if changed is not None and f"{job.id}.json" in changed:
                record, problem = (
                    None,
                    UNSEALED_EDIT.format(name=sweep.name, config=config),
                )
        if problem:
            out.append(JobStatus(job, "damaged", None, problem))
        elif record is None:
            out.append(JobStatus(job, "missing"))
        elif record["params_hash"] != params_hash(job.params, job.seed):
            out.append(
                JobStatus(
                    job,
                    "stale-params",
                    record,
                    "its parameters differ from the sweep's definition",
                )
            )
        elif record["code_hash"] != _hashed(hashes, job_function(sweep, job), root)[0]:
            changed = keys.changed(
                record.get("definitions", {}),
                _hashed(hashes, job_function(sweep, job), root)[1],
            )
            out.append(
                JobStatus(
                    job,
                    "stale-code",
                    record,
                    "a definition it reaches changed since it ran: "
                    + ", ".join(changed),
                )
            )
        elif record.get("data", {}) != data:
            out.append(
                JobStatus(job, "stale-data", record, "a data file changed since it ran")
            )
        else:
            out.append(JobStatus(job, "fresh", record))
    return out


def _hashed(
    cache: dict[str, tuple[str, dict[str, str]]], function: str, root: Path
) -> tuple[str, dict[str, str]]:
    if function not in cache:
        cache[function] = code_hash(function, root)
    return cache[function]


def summarize(statuses: list[JobStatus]) -> str:
    counts: dict[str, int] = {}
    for s in statuses:
        counts[s.state] = counts.get(s.state, 0) + 1
    return ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))


@dataclasses.dataclass
class SweepRecords:
    """A sweep's fresh records for one configuration; ``complete`` is False for a
    partial sweep."""

    name: str
    config: str
    records: list[dict[str, Any]]
    missing: list[str]
    total: int

    @property
    def complete(self) -> bool:
        return not self.missing

    def describe(self) -> str:
        """One line for a page: how many records, and whether the sweep is partial."""
        state = (
            "complete"
            if self.complete
            else f"PARTIAL: {len(self.missing)} jobs not run yet"
        )
        return (
            f"sweep {self.name} ({self.config}): {len(self.records)} of {self.total} "
            f"records, {state}"
        )

    def by_job(self) -> dict[str, list[dict[str, Any]]]:
        """Records grouped by job name, in the definition's order, each list in seed
        order."""
        out: dict[str, list[dict[str, Any]]] = {}
        for record in self.records:
            out.setdefault(record["job"], []).append(record)
        return out


def load(
    name: str,
    config: str = "cpu",
    allow_partial: bool = False,
    root: Path | None = None,
    sweep: Any = None,
    none_if_unrun: bool = False,
    device: str | None = None,
    edition: str | None = None,
) -> SweepRecords | None:
    """Every record of sweep ``name``'s ``config``, checked against the current code,
    parameters and data.

    Raises :class:`SweepNotReady` when any record is stale or damaged, or when
    records are missing (unless ``allow_partial``: then a partial sweep comes
    back with ``complete == False`` and the missing jobs listed).
    ``none_if_unrun``: ``None`` when the configuration has no record at all (a
    chapter that says so; every job's path was still read, so the chapter
    re-executes when records appear); stale or damaged records still raise.
    """
    sweep = sweep or get(name)
    # a GPU build reads its own set of a per-device configuration
    profile = record_profile(sweep, config, device)
    if edition is not None:  # a page that sets the two editions side by side
        if edition not in ("cpu", "gpu"):
            raise ValueError(f"edition must be 'cpu' or 'gpu'; got {edition!r}")
        if not per_device(config, sweep.name):
            raise ValueError(
                f"sweep {sweep.name!r} config {config!r} is not re-run per device: it "
                "has one edition"
            )
        made = gpu_record_profiles(sweep.name, config, root)
        profile = None if edition == "cpu" else (made[0] if made else None)
        if edition == "gpu" and profile is None:
            if none_if_unrun:
                return None
            raise SweepNotReady(
                f"sweep {sweep.name!r} (config {config}) has no GPU records yet.\n"
                "Make them on a GPU with: "
                f"{refresh_command(sweep.name, config, 'cuda')}"
            )
    statuses = survey(sweep, config, root, profile)
    bad = [s for s in statuses if s.state not in ("fresh", "missing")]
    missing = [s.job.id for s in statuses if s.state == "missing"]
    fix = (
        "Refresh with: "
        f"{refresh_command(sweep.name, config, device if profile else None)}"
    )
    if profile:
        config = f"{config}@{profile}"
    if bad:
        lines = [f"  {s.job.id}: {s.state} ({s.detail})" for s in bad[:8]]
        more = [f"  ... and {len(bad) - 8} more"] if len(bad) > 8 else []
        raise SweepNotReady(
            f"sweep {sweep.name!r} (config {config}) has {len(bad)} stale or "
            "damaged record(s) of "
            f"{len(statuses)}:\n" + "\n".join(lines + more) + f"\n{fix}"
        )
    if none_if_unrun and len(missing) == len(statuses):
        return None
    if missing and (not allow_partial or len(missing) == len(statuses)):
        what = (
            "has no records yet"
            if len(missing) == len(statuses)
            else f"is partial: {len(statuses) - len(missing)} of {len(statuses)} "
            "jobs done, "
            f"missing {', '.join(missing[:6])}{' ...' if len(missing) > 6 else ''}"
        )
        raise SweepNotReady(f"sweep {sweep.name!r} (config {config}) {what}.\n{fix}")
    return SweepRecords(
        sweep.name,
        config,
        [s.record for s in statuses if s.record is not None],
        missing,
        len(statuses),
    )


# ---------------------------------------------------------------- running


def _slots(grid: Any, cluster: str, workers: int | None) -> tuple[int, list[int]]:
    """How many jobs run at once here, and which GPUs they take (local executor)."""
    if workers is not None:
        if not isinstance(workers, int) or workers < 1:
            raise UserError(f"--workers must be an int >= 1; got {workers!r}")
    gpus: list[int] = []
    if grid.resources.gpus and cluster == "local":
        import torch

        gpus = list(range(torch.cuda.device_count()))
        if len(gpus) < grid.resources.gpus:
            raise UserError(
                f"each job asks for {grid.resources.gpus} GPU(s); this machine has "
                f"{len(gpus)}. Use a CPU config (--config cpu) or --cluster slurm"
            )
        return workers or len(gpus) // grid.resources.gpus, gpus
    cores = (
        len(os.sched_getaffinity(0))
        if hasattr(os, "sched_getaffinity")
        else (os.cpu_count() or 1)
    )
    return workers or max(1, cores // grid.resources.cpus), gpus


def _logs_dir(name: str, root: Path) -> Path:
    override = os.environ.get("BOOK_BUILD_DIR", "").strip()
    base = Path(override).resolve() if override else root / "_build"
    return base / "sweeps" / name / time.strftime("%Y%m%d-%H%M%S")


def _pinned_bytecode(root: Path) -> dict[str, str]:
    """No job process may run bytecode older than its source
    (:mod:`bookbuild.execute.bytecode`); the env it needs."""
    from bookbuild.execute import bytecode
    from bookbuild.execute.engine import UNTRACKED

    return bytecode.prepare(root, memo.runs_dir(root).parent / "pycache", UNTRACKED)


def _fmt_s(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


class Progress:
    """Prints ``done/running/failed/waiting`` and the time left, when something changes
    or every ``every_s``."""

    def __init__(
        self, name: str, total: int, slots: int, out: TextIO, every_s: float = 15.0
    ) -> None:
        self.name, self.total, self.slots, self.out, self.every_s = (
            name,
            total,
            slots,
            out,
            every_s,
        )
        self.walls: list[float] = []
        self.failed: list[str] = []
        self.started = time.monotonic()
        self._last: tuple[int, ...] = ()
        self._printed = 0.0

    def line(self, running: int, waiting: int) -> str:
        done = len(self.walls)
        text = (
            f"experiments {self.name}: {done}/{self.total} done, {running} running, "
            f"{len(self.failed)} failed, {waiting} waiting"
        )
        if self.walls and (running or waiting):
            mean = sum(self.walls) / len(self.walls)
            left = mean * math.ceil((running + waiting) / max(1, self.slots))
            text += f"; about {_fmt_s(left)} left"
        elif running or waiting:
            text += "; time left unknown until a job finishes"
        return text

    def update(self, running: int, waiting: int, force: bool = False) -> None:
        state = (len(self.walls), running, len(self.failed), waiting)
        now = time.monotonic()
        if force or state != self._last or now - self._printed >= self.every_s:
            print(self.line(running, waiting), file=self.out, flush=True)
            self._last, self._printed = state, now

    def fail(self, job: Job, error: str) -> None:
        self.failed.append(job.id)
        print(
            f"experiments {self.name}: job {job.id} FAILED\n  params: "
            f"{json.dumps(job.params, sort_keys=True)}\n"
            f"  seed: {job.seed}\n"
            + "\n".join("  | " + line for line in error.rstrip().splitlines()[-25:]),
            file=self.out,
            flush=True,
        )


def record_commit(root: Path, stamp: str) -> str:
    """The commit a record names: the build's stamp (``runtime.fingerprint``), less its
    ``+dirty`` when the only uncommitted changes are records.

    :func:`run` refuses to start on other changes, so the records an earlier
    sweep of the same session wrote (not yet committed) do not make the code
    that ran a "dirty" one.
    """
    if stamp.endswith("+dirty") and not uncommitted_changes(root):
        return stamp.removesuffix("+dirty")
    return stamp


def uncommitted_changes(root: Path) -> list[str]:
    """Tracked files changed since the last commit (records themselves aside); ``[]``
    outside a git checkout.

    A record names the commit it was made from; made from a tree with uncommitted
    changes, it would name code that never existed, so :func:`run` refuses to start.
    """
    try:
        done = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    # not a git checkout (a copy of the tree): nothing to compare with
    if done.returncode != 0:
        return []
    paths = [line[3:].strip() for line in done.stdout.splitlines() if line.strip()]
    return [p for p in paths if not p.startswith("records/")]


def run(
    sweep: Any,
    config: str = "cpu",
    cluster: str = "local",
    root: Path | None = None,
    force: bool = False,
    limit: int | None = None,
    workers: int | None = None,
    partition: str | None = None,
    out: TextIO | None = None,
    poll_s: float = 0.25,
    give_up_s: float | None = None,
    device: str | None = None,
) -> int:
    """Run the jobs of ``config`` whose record is not fresh (all with ``force``); 0 if
    every job succeeded.

    ``device``: ``cuda`` re-runs a per-device configuration (:func:`per_device`) on the
    GPU, into its own record set (:func:`records_dir`); by default the jobs run where
    the configuration's resources say.

    ``give_up_s``: cancel the jobs still unfinished after that many seconds and
    raise (for tests; a real cluster's queue may hold jobs for hours).
    """
    out = out or sys.stderr
    root = (root or ROOT).resolve()
    if cluster not in CLUSTERS:
        raise UserError(
            f"--cluster must be one of {', '.join(CLUSTERS)}; got {cluster!r}"
        )
    if limit is not None and (not isinstance(limit, int) or limit < 1):
        raise UserError(f"--limit must be an int >= 1; got {limit!r}")
    validate(sweep)
    grid = grid_of(sweep, config)
    if device not in (None, "cpu", "cuda"):
        raise UserError(f"--device must be cpu or cuda; got {device!r}")
    job_device = device or ("cuda" if grid.resources.gpus else "cpu")
    if (
        job_device == "cuda"
        and not grid.resources.gpus
        and not per_device(config, sweep.name)
    ):
        raise UserError(
            f"experiments run {sweep.name}: config {config!r} is read from its CPU "
            "records by both editions; --device cuda re-runs only "
            f"{', '.join(_per_device_names())}"
        )
    if job_device == "cpu" and grid.resources.gpus:
        raise UserError(
            f"experiments run {sweep.name}: config {config!r} asks for GPUs; drop "
            "--device cpu"
        )
    profile = record_profile(sweep, config, job_device)
    dirty = uncommitted_changes(root)
    if dirty:
        shown = ", ".join(dirty[:5]) + (
            f" and {len(dirty) - 5} more" if len(dirty) > 5 else ""
        )
        raise UserError(
            f"experiments run {sweep.name}: the checkout has uncommitted changes "
            f"({shown}); a record must come from a committed state, so commit or stash "
            "them first"
        )
    statuses = survey(sweep, config, root, profile)
    todo = [s.job for s in statuses if force or s.state != "fresh"][:limit]
    shown = config if profile is None else f"{config}@{profile}"
    print(
        f"experiments {sweep.name} (config {shown}, {len(statuses)} jobs): "
        f"{summarize(statuses)}; running {len(todo)} on {cluster}",
        file=out,
        flush=True,
    )
    if not todo:
        return 0
    folder = records_dir(sweep.name, config, root, profile)
    folder.mkdir(parents=True, exist_ok=True)
    slots, gpus = _slots(grid, cluster, workers)
    logs = _logs_dir(sweep.name, root)
    logs.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(logs.parent / f"{config}.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise UserError(
            f"another `experiments run {sweep.name} --config {config}` is running in "
            "this checkout; wait for it (its progress is in its terminal), or stop it"
        ) from None
    try:
        # for the job processes submitit starts
        os.environ.update(_pinned_bytecode(root))
        return _run_locked(
            sweep,
            todo,
            grid,
            cluster,
            slots,
            gpus,
            partition,
            logs,
            folder,
            root,
            out,
            poll_s,
            give_up_s,
            job_device,
        )
    finally:
        lock.release()


def _run_locked(
    sweep: Any,
    todo: list[Job],
    grid: Any,
    cluster: str,
    slots: int,
    gpus: list[int],
    partition: str | None,
    logs: Path,
    folder: Path,
    root: Path,
    out: TextIO,
    poll_s: float,
    give_up_s: float | None,
    device: str = "cpu",
) -> int:
    progress = Progress(
        sweep.name, len(todo), slots if cluster != "slurm" else len(todo), out
    )

    def args(job: Job) -> tuple[Any, ...]:
        return (
            job_function(sweep, job),
            sweep.name,
            job.name,
            job.seed,
            job.params,
            list(sweep.data),
            str(folder),
            str(root),
            device,
            is_call_sweep(sweep),
        )

    if cluster == "debug":
        for i, job in enumerate(todo):
            progress.update(1, len(todo) - i - 1)
            try:
                progress.walls.append(run_job(*args(job))["wall_s"])
            except Exception:
                progress.fail(job, traceback.format_exc())
    else:
        _run_submitit(
            todo,
            args,
            grid,
            cluster,
            slots,
            gpus,
            partition,
            logs,
            progress,
            poll_s,
            give_up_s,
        )
    progress.update(0, 0, force=True)
    if progress.failed:
        print(
            f"experiments {sweep.name}: {len(progress.failed)} job(s) failed: "
            f"{', '.join(progress.failed)}",
            file=out,
            flush=True,
        )
        return 1
    return 0


def least_loaded(load: dict[int, int], n: int) -> list[int]:
    """The ``n`` GPUs running the fewest jobs (ties: the lower index), for a local job.

    With more workers than GPUs (``--workers 10`` on one GPU) jobs share a GPU,
    spread evenly: each job's kernels are small beside what one large GPU holds.
    """
    if not 1 <= n <= len(load):
        raise ValueError(f"n must be between 1 and the {len(load)} GPU(s); got {n!r}")
    return sorted(sorted(load), key=lambda gpu: load[gpu])[:n]


def _run_submitit(
    todo: list[Job],
    args: Callable[[Job], tuple[Any, ...]],
    grid: Any,
    cluster: str,
    slots: int,
    gpus: list[int],
    partition: str | None,
    logs: Path,
    progress: Progress,
    poll_s: float,
    give_up_s: float | None,
) -> None:
    import submitit

    res = grid.resources
    if cluster == "slurm":
        executor: Any = submitit.SlurmExecutor(folder=logs, max_num_timeout=0)
        params: dict[str, Any] = {
            "time": res.minutes,
            "cpus_per_task": res.cpus,
            "job_name": progress.name,
        }
        if res.gpus:
            params["gpus_per_node"] = res.gpus
        if partition or res.partition:
            params["partition"] = partition or res.partition
        executor.update_parameters(**params)
    else:
        executor = submitit.LocalExecutor(folder=logs)
        executor.update_parameters(timeout_min=res.minutes)
    waiting = list(todo)
    active: list[tuple[Job, Any, list[int]]] = []  # (job, submitit job, GPUs it holds)
    gpu_load = dict.fromkeys(gpus, 0)  # jobs running on each GPU

    # a kill (SIGTERM) cancels the jobs, as Ctrl-C does
    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    import signal
    import threading

    previous = (
        signal.signal(signal.SIGTERM, stop)
        if threading.current_thread() is threading.main_thread()
        else None
    )
    try:
        while waiting or active:
            while waiting and (cluster == "slurm" or len(active) < slots):
                job = waiting.pop(0)
                held: list[int] = []
                if gpus:
                    held = least_loaded(gpu_load, res.gpus)
                    for gpu in held:
                        gpu_load[gpu] += 1
                    executor.update_parameters(
                        gpus_per_node=res.gpus, visible_gpus=held
                    )
                active.append((job, executor.submit(run_job, *args(job)), held))
            progress.update(len(active), len(waiting))
            if (
                give_up_s is not None
                and time.monotonic() - progress.started > give_up_s
            ):
                raise UserError(
                    f"experiments {progress.name}: gave up after {give_up_s:.0f} s "
                    f"with {len(active) + len(waiting)} job(s) unfinished: "
                    + ", ".join(j.id for j, _, _ in active)
                    + f" (logs under {logs})"
                )
            time.sleep(poll_s)
            for entry in [a for a in active if a[1].done()]:
                job, sjob, held = entry
                active.remove(entry)
                for gpu in held:
                    gpu_load[gpu] -= 1
                error = sjob.exception()
                if error is None:
                    progress.walls.append(sjob.result()["wall_s"])
                else:
                    progress.fail(
                        job,
                        f"{error}\n(logs: {sjob.paths.stdout} and {sjob.paths.stderr})",
                    )
    except BaseException:
        for _, sjob, _ in active:
            try:
                sjob.cancel(check=False)
            except Exception:  # noqa: BLE001, S110 - cancel what can be cancelled, then re-raise
                pass
        raise
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


# ---------------------------------------------------------------- reproducibility


def cheapest(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The record that is cheapest to re-run: least wall time, ties broken by job id."""
    if not records:
        raise ValueError("records must hold at least one record")
    return min(records, key=lambda r: (r["wall_s"], f"{r['job']}.seed{r['seed']}"))


def _job_environment(root: Path) -> dict[str, str]:
    """A job process's environment: this one's, with pinned bytecode, and this very
    build on its path (so a spot check runs the job through the same build that asked
    for it, whatever else is installed)."""
    here = str(Path(__file__).resolve().parents[2])
    path = os.environ.get("PYTHONPATH", "")
    return {
        **os.environ,
        **_pinned_bytecode(root),
        "PYTHONPATH": os.pathsep.join(p for p in (path, here) if p),
    }


def rerun(
    record: dict[str, Any], root: Path | None = None, timeout_s: float = 900
) -> dict[str, Any]:
    """Run ``record``'s job again in a fresh process (writing to a temporary folder);
    the new record."""
    import tempfile

    root = root or ROOT
    with tempfile.TemporaryDirectory(prefix="spot-check-") as tmp:
        call = (
            "from bookbuild.runs.sweeps import run_job; import json, sys; "
            "run_job(*json.loads(sys.argv[1]))"
        )
        payload = json.dumps(
            [
                record["function"],
                record["sweep"],
                record["job"],
                record["seed"],
                record["params"],
                sorted(record.get("data", {})),
                tmp,
                str(root),
                record["environment"]["device"].split(":")[0],
                is_call_sweep(registry().get(record["sweep"])),
            ]
        )
        done = subprocess.run(
            [sys.executable, "-c", call, payload],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            cwd=root,
            env=_job_environment(root),
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"re-running {record['job']}.seed{record['seed']} "
                f"failed:\n{done.stderr[-3000:]}"
            )
        return json.loads(
            (Path(tmp) / f"{record['job']}.seed{record['seed']}.json").read_text()
        )


def is_timing(key: str) -> bool:
    """Whether a metric is a measured time (``seconds_*`` or ``*_seconds``), which no
    re-run reproduces exactly."""
    return key.startswith("seconds_") or key.endswith("_seconds")


def _stored_array(node: Any, path: str) -> Any:
    """A tensor a record stores (dtype, shape, SHA-256, base64) as a float64 NumPy
    array, through the records' own codec (which refuses damaged bytes); ``None`` for
    anything else."""
    if isinstance(node, dict) and {"dtype", "shape", "sha256", "base64"} <= set(node):
        return codec.decode_tensor(node, path).double().numpy()
    return None


def _within(
    stored: Any,
    again: Any,
    rtol: float,
    atol: float,
    path: str,
    worst: list[tuple[float, str]],
) -> bool:
    """Whether ``again`` equals ``stored`` with every float (and tensor value) within
    rtol/atol; the largest relative deviation seen goes into ``worst``."""
    import numpy as np

    a, b = _stored_array(stored, path), _stored_array(again, path)
    if a is not None or b is not None:
        if a is None or b is None or a.shape != b.shape:
            return False
        gap = np.abs(a - b)
        worst.append(
            (
                float((gap / np.maximum(np.abs(a), atol or 1e-300)).max(initial=0.0)),
                path,
            )
        )
        return bool(np.all(gap <= atol + rtol * np.abs(a)))
    if isinstance(stored, float) and isinstance(again, float):
        worst.append((abs(stored - again) / max(abs(stored), atol or 1e-300), path))
        return math.isclose(stored, again, rel_tol=rtol, abs_tol=atol)
    if isinstance(stored, dict) and isinstance(again, dict):
        return stored.keys() == again.keys() and all(
            _within(stored[k], again[k], rtol, atol, f"{path}.{k}", worst)
            for k in stored
        )
    if isinstance(stored, list) and isinstance(again, list):
        return len(stored) == len(again) and all(
            _within(x, y, rtol, atol, f"{path}[{i}]", worst)
            for i, (x, y) in enumerate(zip(stored, again, strict=True))
        )
    return stored == again


def compare(
    stored: dict[str, Any],
    again: dict[str, Any],
    precision: dict[str, Any] | None = None,
) -> tuple[bool, str]:
    """Whether a re-run reproduced a stored record: same code, and every metric equal at
    the precision its sweep declares (``Sweep.precision``: a float or tensor within
    rtol/atol, with the reason; exactly where none is declared, and always exactly for
    counts and words); (equal, explanation).

    Measured times among the metrics (:func:`is_timing`) must be present in both
    but are not compared: they depend on the machine's load, not on the code.
    """
    name = f"{stored['job']}.seed{stored['seed']}"
    precision = precision or {}
    if again["code_hash"] != stored["code_hash"]:
        return False, f"{name}: the record is stale: its code changed since it ran"
    keys = sorted(set(stored["metrics"]) | set(again["metrics"]))
    diffs, within = [], []
    for k in keys:
        if k not in stored["metrics"] or k not in again["metrics"]:
            diffs.append(
                f"{k}: stored {stored['metrics'].get(k)!r}, now "
                f"{again['metrics'].get(k)!r}"
            )
            continue
        old, new = stored["metrics"][k], again["metrics"][k]
        if is_timing(k) or old == new:
            continue
        declared = precision.get(k)
        worst: list[tuple[float, str]] = []
        if declared is not None and _within(
            old, new, declared.rtol, declared.atol, k, worst
        ):
            gap, where = max(worst, default=(0.0, k))
            within.append(
                f"{k} within rtol {declared.rtol:g}, atol {declared.atol:g} (largest "
                f"relative deviation {gap:.1e}, at {where})"
            )
            continue
        how = (
            f" (beyond its declared rtol {declared.rtol:g}, atol {declared.atol:g}: "
            f"{declared.reason})"
            if declared is not None
            else " (compared exactly: the sweep declares no precision for it)"
        )
        diffs.append(f"{k}{how}: stored {old!r}, now {new!r}")
    if diffs:
        return False, f"{name}: metrics differ:\n  " + "\n  ".join(
            d[:400] for d in diffs
        )
    if within:
        return True, f"{name}: metrics equal, " + "; ".join(
            within
        ) + f" ({again['wall_s']:.1f} s to re-run)"
    return (
        True,
        f"{name}: metrics equal bit for bit ({again['wall_s']:.1f} s to re-run)",
    )


def spot_check(record: dict[str, Any], root: Path | None = None) -> tuple[bool, str]:
    """Re-run ``record``'s job in a fresh process and compare its metrics at its sweep's
    declared precision; (equal, explanation)."""
    try:
        sweep = registry().get(record["sweep"])
        return compare(record, rerun(record, root), getattr(sweep, "precision", None))
    except RuntimeError as exc:
        return False, str(exc)


# ---------------------------------------------------------------- command line


def _per_device_names() -> list[str]:
    return list(getattr(importlib.import_module(REGISTRY), "PER_DEVICE_CONFIGS", ()))


def status_text(
    sweep: Any, config: str, root: Path | None = None, device: str | None = None
) -> tuple[str, bool]:
    profile = record_profile(sweep, config, device)
    statuses = survey(sweep, config, root, profile)
    shown = config if profile is None else f"{config}@{profile}"
    lines = [
        f"sweep {sweep.name} (config {shown}): {len(statuses)} jobs: "
        f"{summarize(statuses)}"
    ]
    for s in statuses:
        if s.state != "fresh":
            lines.append(
                f"  {s.job.id}: {s.state}" + (f" ({s.detail})" if s.detail else "")
            )
    unsealed = [
        s
        for s in statuses
        if s.state == "fresh" and s.record is not None and SEAL not in s.record
    ]
    if unsealed:
        lines.append(
            f"  {len(unsealed)} fresh record(s) carry no record_sha256 (written before "
            "records were sealed): a hand edit shows only against the last commit; "
            f"seal them with `python -m bookbuild experiments seal {sweep.name} "
            f"--config {config}` and commit"
        )
    ok = all(s.state == "fresh" for s in statuses)
    if not ok:
        lines.append(
            "refresh with: "
            f"{refresh_command(sweep.name, config, device if profile else None)}"
        )
    return "\n".join(lines), ok


def seal_records(
    sweep: Any, config: str, root: Path | None = None
) -> tuple[list[str], bool]:
    """Seal (``record_sha256``) every record of ``config`` written before records were
    sealed.

    Only records as committed: one that differs from the last commit may have been
    edited by hand, and sealing it would bless the edit; it is named and left as it is.
    Returns the report's lines and whether nothing was refused. Outside git nothing can
    be vouched for, and nothing is sealed.
    """
    root = root or ROOT
    folder = records_dir(sweep.name, config, root)
    changed = changed_since_commit(folder, root)
    if changed is None:
        return [
            f"experiments seal: {folder} is not in a git checkout: no commit vouches "
            "for its records"
        ], False
    lines, ok = [], True
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        record, problem = _read_record(path)
        rel = path.relative_to(root).as_posix()
        if problem or record is None:
            lines.append(f"  {rel}: not sealed: {problem}")
            ok = False
        elif SEAL in record:
            continue
        elif path.name in changed:
            lines.append(
                f"  {rel}: not sealed: it differs from the last commit (commit or "
                "restore it first)"
            )
            ok = False
        else:
            record[SEAL] = seal(record)
            files.write_json(path, record)
            lines.append(f"  {rel}: sealed")
    sealed = sum(line.endswith(": sealed") for line in lines)
    return [
        f"sweep {sweep.name} (config {config}): {sealed} record(s) sealed",
        *lines,
    ], ok


def cli(args: Any) -> int:
    """``python -m bookbuild experiments {list,status,run,check,seal}`` (called from
    ``bookbuild.__main__``)."""
    if args.action == "list":
        for name, sweep in registry().items():
            configs = ", ".join(
                f"{c} ({len(g.jobs)} jobs x {len(g.seeds)} seeds)"
                for c, g in sweep.configs.items()
            )
            print(f"{name}: {configs}\n  {sweep.description}")
        return 0
    sweep = get(args.name)
    if args.action == "status":
        text, ok = status_text(sweep, args.config, device=args.device)
        print(text)
        return 0 if ok else 1
    if args.action == "seal":
        lines, ok = seal_records(sweep, args.config)
        print("\n".join(lines))
        return 0 if ok else 1
    if args.action == "check":
        loaded = load(
            sweep.name, args.config, allow_partial=True, sweep=sweep, device=args.device
        )
        if not loaded.records:
            raise SweepNotReady(f"sweep {sweep.name!r} has no records to re-run")
        ok, text = spot_check(cheapest(loaded.records))
        print(text)
        return 0 if ok else 1
    return run(
        sweep,
        args.config,
        args.cluster,
        force=args.force,
        limit=args.limit,
        workers=args.workers,
        partition=args.partition,
        out=sys.stdout,
        device=args.device,
    )
