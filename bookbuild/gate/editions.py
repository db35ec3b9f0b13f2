"""The two editions side by side (issue 55, item 3): the CPU edition's values beside a
GPU edition's.

A GPU edition is what ``make gpu-run`` brings back: baselines under
``baselines/cuda-<kind>/`` (every glued value and every claim's check, as that machine
computed them) and the chapters' own training runs re-run there, under
``records/<sweep>/<config>@cuda-<kind>/``. This module compares them with the CPU
edition's (``baselines/cpu-avx2/``, ``records/<sweep>/<config>/``):

- every glued value both editions hold: the same bits, the same at the digits the page
  shows, or different;
- every claim's check: whether it held on each edition (a claim that holds on one only
  is listed by name);
- every numeric metric of a record both editions hold: the two values, and whether their
  difference lies within the spread the book's own seed sweep measured for that job (the
  sample standard deviation over the seeds of the sweep's ``spread`` configuration, e.g.
  the memory test's 16 seeds), or is shown without a verdict where no seed sweep of that
  job exists.

The build report renders :func:`section`; without a GPU edition it says what ``make
gpu-run`` would add.

Pages: the build report ("The two editions").
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bookbuild.gate import baselines

CPU_PROFILE = "cpu-avx2"
GPU_PREFIX = "cuda-"
#: how many seed spreads apart two editions' values may lie and still "agree within the
#: seed spread"
SPREADS = 2.0


@dataclass(frozen=True)
class Value:
    """One glued value both editions hold."""

    chapter: str
    name: str
    cpu: str
    gpu: str

    @property
    def verdict(self) -> str:
        if self.cpu == self.gpu:
            return "same bits"
        if baselines.shown_equal(self.cpu, self.gpu):
            return "same at the digits shown"
        return "differs"


@dataclass(frozen=True)
class Claim:
    chapter: str
    name: str
    cpu: bool
    gpu: bool


@dataclass(frozen=True)
class Metric:
    """One numeric metric of one record both editions hold, with the job's seed spread
    where one was measured."""

    sweep: str
    config: str
    job: str
    seed: int
    metric: str
    cpu: float
    gpu: float
    # sample standard deviation over the seeds of the sweep's spread configuration
    spread: float | None
    seeds: int  # how many seeds measured it

    @property
    def verdict(self) -> str:
        if self.cpu == self.gpu:
            return "same bits"
        if self.spread is None:
            return "no seed sweep of this job: not judged"
        within = abs(self.gpu - self.cpu) <= SPREADS * self.spread
        return (
            f"within {SPREADS:g} seed spreads"
            if within
            else f"outside {SPREADS:g} seed spreads"
        )


def gpu_profiles(root: Path) -> list[str]:
    """The GPU editions whose baselines are committed."""
    folder = root / "baselines"
    return (
        sorted(p.name for p in folder.glob(f"{GPU_PREFIX}*") if p.is_dir())
        if folder.is_dir()
        else []
    )


def _glued(directory: Path) -> dict[str, dict[str, list[str]]]:
    """chapter -> glue name -> its shown lines, for every chapter baseline in
    ``directory``."""
    out: dict[str, dict[str, list[str]]] = {}
    for path in sorted(directory.glob("*.json")):
        records = json.loads(path.read_text())
        for outputs in records.values():
            if not isinstance(outputs, list):
                continue
            for o in outputs:
                if isinstance(o, dict) and o.get("kind") == "glue" and "name" in o:
                    out.setdefault(path.stem, {})[o["name"]] = list(o.get("lines", []))
    return out


def _held(lines: list[str]) -> bool | None:
    try:
        return bool(json.loads(lines[0])["held"])
    except (IndexError, KeyError, TypeError, json.JSONDecodeError):
        return None


def compare_baselines(
    root: Path, gpu: str, cpu: str = CPU_PROFILE
) -> tuple[list[Value], list[Claim]]:
    """Every glued value and every claim's check that both editions recorded."""
    mine, theirs = _glued(root / "baselines" / cpu), _glued(root / "baselines" / gpu)
    values, claims = [], []
    for chapter in sorted(set(mine) & set(theirs)):
        for name in sorted(set(mine[chapter]) & set(theirs[chapter])):
            a, b = mine[chapter][name], theirs[chapter][name]
            if name.startswith("check:"):
                held = (_held(a), _held(b))
                if None not in held:
                    claims.append(
                        Claim(
                            chapter,
                            name.removeprefix("check:"),
                            bool(held[0]),
                            bool(held[1]),
                        )
                    )
                continue
            values.append(Value(chapter, name, "\n".join(a), "\n".join(b)))
    return values, claims


def _numbers(metrics: dict[str, Any]) -> dict[str, float]:
    return {
        k: float(v)
        for k, v in metrics.items()
        if isinstance(v, int | float)
        and not isinstance(v, bool)
        and math.isfinite(float(v))
    }


def _records(folder: Path) -> dict[tuple[str, int], dict[str, Any]]:
    out = {}
    for path in sorted(folder.glob("*.json")):
        record = json.loads(path.read_text())
        out[(record["job"], int(record["seed"]))] = record
    return out


def compare_records(
    root: Path, gpu: str, spread_of: dict[str, str] | None = None
) -> list[Metric]:
    """Every numeric metric of the records both editions made of a per-device
    configuration.

    ``spread_of``: sweep -> the configuration whose seeds measure each job's spread
    (``Sweep.spread``).
    """
    from bookbuild.runs import sweeps

    if spread_of is None:
        spread_of = {
            name: s.spread
            for name, s in sweeps.registry().items()
            if getattr(s, "spread", None)
        }
    out = []
    for made in sorted((root / "records").glob(f"*/*@{gpu}")):
        sweep, config = made.parent.name, made.name.partition("@")[0]
        cpu_records, gpu_records = _records(made.parent / config), _records(made)
        study = spread_of.get(sweep)
        by_job: dict[str, list[dict[str, float]]] = {}
        if study and (made.parent / study).is_dir():
            for (job, _), record in _records(made.parent / study).items():
                by_job.setdefault(job, []).append(_numbers(record["metrics"]))
        for key in sorted(set(cpu_records) & set(gpu_records)):
            a, b = (
                _numbers(cpu_records[key]["metrics"]),
                _numbers(gpu_records[key]["metrics"]),
            )
            for metric in sorted(set(a) & set(b)):
                if sweeps.is_timing(metric):
                    continue
                seen = [m[metric] for m in by_job.get(key[0], []) if metric in m]
                spread = statistics.stdev(seen) if len(seen) >= 2 else None
                out.append(
                    Metric(
                        sweep,
                        config,
                        key[0],
                        key[1],
                        metric,
                        a[metric],
                        b[metric],
                        spread,
                        len(seen),
                    )
                )
    return out


def section(root: Path, cpu: str = CPU_PROFILE) -> list[str]:
    """The build report's section "The two editions" (MyST lines)."""
    lines = ["", "## The two editions", ""]
    profiles = gpu_profiles(root)
    if not profiles:
        return lines + [
            "No GPU edition has been recorded yet. `make gpu-run` on a machine with an "
            "NVIDIA GPU executes every chapter there (every model and batch on the "
            "GPU), re-runs the chapters' own training runs there into record sets of "
            "their own (`records/<sweep>/<config>@cuda-<kind>/`) and records its "
            "baselines (`baselines/cuda-<kind>/`); this section then sets each glued "
            "value and each record's metrics beside this edition's, says whether every "
            "claim holds on both, and judges each trained metric against the spread "
            "the book's own seed sweeps measured. Both editions read the other larger "
            "studies (the memory test's 16 seeds, the scoreboard, the workshop's "
            "models) from their CPU records."
        ]
    for gpu in profiles:
        values, claims = compare_baselines(root, gpu, cpu)
        metrics = compare_records(root, gpu)
        tally: dict[str, int] = {}
        for v in values:
            tally[v.verdict] = tally.get(v.verdict, 0) + 1
        both = sum(c.cpu and c.gpu for c in claims)
        lines += [
            f"### `{cpu}` beside `{gpu}`",
            "",
            f"{len(values)} glued values in both editions: "
            + (", ".join(f"{n} {what}" for what, n in sorted(tally.items())) or "none")
            + "; "
            f"{len(claims)} claims checked in both, {both} holding in both.",
            "",
        ]
        one_sided = [c for c in claims if c.cpu != c.gpu]
        if one_sided:
            lines += ["Claims that hold on one edition only:", ""]
            lines += [
                f"- {{doc}}`/book/{c.chapter}` `{c.name}`: CPU "
                f"{'holds' if c.cpu else 'fails'}, GPU {'holds' if c.gpu else 'fails'}"
                for c in one_sided
            ]
            lines.append("")
        differing = [v for v in values if v.verdict == "differs"]
        if differing:
            lines += ["| chapter | value | CPU | GPU |", "|---|---|---|---|"]
            lines += [
                f"| {{doc}}`/book/{v.chapter}` | `{v.name}` | {_cell(v.cpu)} | "
                f"{_cell(v.gpu)} |"
                for v in differing
            ]
            lines.append("")
        if metrics:
            lines += [
                "The chapters' own runs, trained on each edition (the spread: the "
                "sample standard deviation of the metric over the seeds of the job's "
                "seed sweep, where one exists):",
                "",
                "| run | metric | CPU | GPU | seed spread | verdict |",
                "|---|---|---:|---:|---:|---|",
            ]
            for m in metrics:
                spread = (
                    "-" if m.spread is None else f"{m.spread:.3g} ({m.seeds} seeds)"
                )
                lines.append(
                    f"| {m.sweep}/{m.config} {m.job}.seed{m.seed} | {m.metric} | "
                    f"{m.cpu:.6g} | {m.gpu:.6g} | {spread} | {m.verdict} |"
                )
    return lines


def _cell(text: str) -> str:
    text = text.replace("|", "/").replace("\n", " ")
    return f"`{text[:80]}`" + (" ..." if len(text) > 80 else "")
