"""Measure the authors' loop: cold build, no-change rebuild, prose-only edit, one-listing edit.

``python -m bookbuild bench`` copies the repository into a temporary folder
(the author's own ``_build`` is never touched), then times four builds in a row:

1. cold: no ``_build`` at all, every chapter executes;
2. no change: nothing edited;
3. prose-only edit: one sentence appended to Chapter 1's prose;
4. one-listing edit: a comment added to ``chapter_code/rnn/recurrence.py``.

For each it records the wall time, which chapters executed, and each chapter's
execution time, writes ``benchmarks/results.json`` and prints the table that
``BENCHMARKS.md`` quotes (``python -m bookbuild bench --show`` prints the stored one).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bookbuild.build import ROOT, copy_sources

RESULTS = ROOT / "benchmarks" / "results.json"


def _build(work: Path) -> dict:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "bookbuild", "build"], cwd=work, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"build failed in {work}:\n{(proc.stdout + proc.stderr)[-3000:]}")
    manifest = json.loads((work / "_build" / "engine" / "manifest.json").read_text())
    executed = [line.split(":")[1].strip() for line in proc.stdout.splitlines() if ": executed in " in line]
    return {
        "wall_s": round(wall, 1),
        "executed": executed,
        "chapter_s": {c: round(m["wall_s"], 1) for c, m in manifest.items() if c in executed},
    }


def measure() -> dict:
    with tempfile.TemporaryDirectory(prefix="book-bench-") as tmp:
        work = Path(tmp)
        copy_sources(work)
        steps = {"cold build": _build(work), "no-change rebuild": _build(work)}
        page = work / "book" / "recurrence.md"
        page.write_text(page.read_text().replace("## Summary\n", "## Summary\n\nOne more sentence of prose.\n", 1))
        steps["prose-only edit"] = _build(work)
        module = work / "chapter_code" / "rnn" / "recurrence.py"
        module.write_text(module.read_text() + "\n# a comment: the listing changed\n")
        steps["one-listing edit"] = _build(work)
    return {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "date": time.strftime("%Y-%m-%d"),
        "steps": steps,
    }


def table(results: dict) -> str:
    lines = [
        f"Measured {results['date']} on {results['machine']}.",
        "",
        "| step | wall time (s) | chapters executed | their execution times (s) |",
        "|---|---:|---|---|",
    ]
    for step, r in results["steps"].items():
        ran = ", ".join(r["executed"]) or "none"
        times = ", ".join(f"{Path(c).name} {s}" for c, s in r["chapter_s"].items()) or "-"
        lines.append(f"| {step} | {r['wall_s']} | {ran} | {times} |")
    return "\n".join(lines)


def main(show: bool = False) -> int:
    if show:
        if not RESULTS.exists():
            print("No stored measurements; run `make bench`.")
            return 1
        print(table(json.loads(RESULTS.read_text())))
        return 0
    results = measure()
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(table(results))
    print(f"\nwritten to {RESULTS.relative_to(ROOT)}; copy the table into BENCHMARKS.md when it changes")
    return 0
