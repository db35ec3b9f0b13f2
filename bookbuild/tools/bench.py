"""Measure the authors' loop, side by side with a plain Jupyter Book build of the same
pages.

``python -m bookbuild bench`` copies the repository into a temporary folder twice
(the author's own ``_build`` is never written):

- **ours**: the book's build (``python -m bookbuild build``: the engine decides what
  is stale and executes it, then Jupyter Book renders). It starts from a copy of the
  author's execution cache, memoized runs and engine manifest when there is one (so
  the first build only renders), else from nothing (a cold build: every chapter
  executes);
- **plain**: ``jupyter-book build`` of the same pages with execution off and none of
  the book's own Sphinx extensions (:func:`plain_config`): what Sphinx and Jupyter Book
  cost whatever the book does on top.

After one first build of each, every step below is made in both copies and both are
built, one after the other, ``repeats`` times (a new edit each time):

1. no change: nothing edited;
2. prose-only edit: one sentence added to Chapter 1's summary;
3. figure-cell edit: a comment added to a figure cell of Chapter 3 (the chapter
   re-executes, reusing its memoized trainings);
4. listing edit: a comment added to ``chapter_code/rnn/recurrence.py`` (the chapters
   that import it re-execute).

It writes the medians, every reading, the ratio ours/plain and which chapters executed
to ``benchmarks/results.json`` and prints the table that ``BENCHMARKS.md`` quotes
(``python -m bookbuild bench --show`` prints the stored one). Targets (issue 31): the
no-change and prose-only rebuilds at most :data:`RATIO_TARGET` times the plain build,
the figure-cell edit at most :data:`FIGURE_CELL_TARGET_S` seconds; issue 56 tightened
them and added the listing edit's :data:`LISTING_TARGET_S`. A comment changes nothing a
chapter computes, so both edits re-execute nothing (the engine reuses the outputs:
``reused`` in a reading); the gate compares every output as ever."""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from bookbuild.build import ROOT, copy_sources

RESULTS = ROOT / "benchmarks" / "results.json"
#: No-change and prose-only rebuilds: at most this many times the plain build (issue 56;
#: 2.0 in issue 31).
RATIO_TARGET = 1.5
#: A figure-cell edit in Chapter 3: at most this many seconds (issue 56; 30 s in issue
#: 31).
FIGURE_CELL_TARGET_S = 20.0
#: A listing edit: at most this many seconds (issue 56).
LISTING_TARGET_S = 30.0
#: The config keys of the book that name its own extensions' settings (left out of the
#: plain build).
PLAIN_DROP = {
    "bibtex_reference_style",
    "bibtex_default_style",
    "latex_additional_files",
    "mathjax_path",
}
#: What the first build may reuse from the author's build folder: executed outputs, the
#: engine's state, memoized
#: runs, and what an author's earlier builds compiled and drew (JAX's programs, the
#: panels' data and figures).
REUSED = [".jupyter_cache", "engine", "runs", "jax-cache", "panel-cache"]
STEPS = [
    "no-change rebuild",
    "prose-only edit",
    "figure-cell edit (Chapter 3)",
    "listing edit (recurrence.py)",
]


def plain_config(text: str) -> str:
    """The book's ``_config.yml`` for a plain Jupyter Book build: execution off, only
    third-party extensions."""
    config = yaml.safe_load(text)
    config.setdefault("execute", {})["execute_notebooks"] = "off"
    sphinx = config.setdefault("sphinx", {})
    sphinx["extra_extensions"] = [
        e for e in sphinx.get("extra_extensions") or [] if not e.startswith("bookbuild")
    ]
    sphinx["config"] = {
        k: v for k, v in (sphinx.get("config") or {}).items() if k not in PLAIN_DROP
    }
    return yaml.safe_dump(config, sort_keys=False)


def add_sentence(work: Path, n: int) -> None:
    """A prose-only edit: one sentence added to Chapter 1's summary."""
    page = work / "book" / "recurrence.md"
    text = page.read_text()
    if "## Summary\n" not in text:
        raise RuntimeError(
            f"{page} has no '## Summary' heading to add a sentence under"
        )
    page.write_text(
        text.replace(
            "## Summary\n",
            f"## Summary\n\nOne more sentence of prose, number {n}.\n",
            1,
        )
    )


def comment_figure_cell(work: Path, n: int) -> None:
    """A figure-cell edit: a comment added at the top of Chapter 3's first figure cell
    (after its options)."""
    page = work / "book" / "gated.md"
    text = page.read_text()
    cell = re.search(
        r"```\{code-cell\} ipython3\n:label: fig-[^\n]*\n(?::[^\n]*\n)*", text
    )
    if cell is None:
        raise RuntimeError(f"{page} has no code cell labelled fig-...")
    page.write_text(text[: cell.end()] + f"# bench edit {n}\n" + text[cell.end() :])


def comment_listing(work: Path, n: int) -> None:
    """A listing edit: a comment added at the end of
    ``chapter_code/rnn/recurrence.py``."""
    module = work / "chapter_code" / "rnn" / "recurrence.py"
    module.write_text(module.read_text() + f"\n# bench edit {n}: the listing changed\n")


EDITS: dict[str, Callable[[Path, int], None] | None] = dict(
    zip(STEPS, [None, add_sentence, comment_figure_cell, comment_listing], strict=True)
)


def _ours(work: Path) -> dict:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "bookbuild", "build"],
        cwd=work,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(
            f"build failed in {work}:\n{(proc.stdout + proc.stderr)[-3000:]}"
        )
    manifest = json.loads((work / "_build" / "engine" / "manifest.json").read_text())
    executed = [
        line.split(":")[1].strip()
        for line in proc.stdout.splitlines()
        if ": executed in " in line
    ]
    reused = [
        line.split(":")[1].strip()
        for line in proc.stdout.splitlines()
        if ": only comments changed (" in line
    ]
    return {
        "wall_s": round(wall, 2),
        "executed": executed,
        "reused": reused,
        "chapter_s": {
            c: round(m["wall_s"], 1) for c, m in manifest.items() if c in executed
        },
    }


def _plain(work: Path) -> float:
    started = time.perf_counter()
    command = [
        str(Path(sys.executable).with_name("jupyter-book")),
        "build",
        str(work),
        "--builder",
        "html",
    ]
    # warnings allowed: the book's roles
    proc = subprocess.run(command, cwd=work, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if proc.returncode != 0 or not (work / "_build" / "html" / "index.html").exists():
        raise RuntimeError(
            "the plain Jupyter Book build failed in "
            f"{work}:\n{(proc.stdout + proc.stderr)[-3000:]}"
        )
    return round(wall, 2)


def measure(repeats: int = 3, root: Path = ROOT) -> dict:
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be an int >= 1; got {repeats!r}")
    with tempfile.TemporaryDirectory(prefix="book-bench-") as tmp:
        ours, plain = Path(tmp) / "ours", Path(tmp) / "plain"
        for work in (ours, plain):
            work.mkdir()
            copy_sources(work, root=root)
        reused = [name for name in REUSED if (root / "_build" / name).is_dir()]
        for name in reused:
            shutil.copytree(root / "_build" / name, ours / "_build" / name)
        (plain / "_config.yml").write_text(
            plain_config((plain / "_config.yml").read_text())
        )
        first = {"ours": _ours(ours), "plain_s": _plain(plain)}
        readings: dict[str, list[dict]] = {step: [] for step in STEPS}
        for n in range(repeats):
            for step in STEPS:
                edit = EDITS[step]
                for work in (ours, plain):
                    if edit is not None:
                        edit(work, n)
                readings[step].append({**_ours(ours), "plain_s": _plain(plain)})
    steps = {}
    for step, rows in readings.items():
        ours_s = statistics.median(r["wall_s"] for r in rows)
        plain_s = statistics.median(r["plain_s"] for r in rows)
        steps[step] = {
            "ours_s": round(ours_s, 1),
            "plain_s": round(plain_s, 1),
            "ratio": round(ours_s / plain_s, 2),
            "readings": rows,
        }
    return {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}",
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "repeats": repeats,
        "first build": {**first, "reused": reused},
        "steps": steps,
    }


def verdicts(results: dict) -> list[str]:
    """One line per target: met or not, with the numbers."""
    out = []
    for step in STEPS[:2]:
        s = results["steps"][step]
        ok = s["ratio"] <= RATIO_TARGET
        out.append(
            f"{step}: {s['ratio']}x the plain build (target <= {RATIO_TARGET}x): "
            f"{'met' if ok else 'NOT met'}"
        )
    for step, target in (
        (STEPS[2], FIGURE_CELL_TARGET_S),
        (STEPS[3], LISTING_TARGET_S),
    ):
        s = results["steps"][step]
        ok = s["ours_s"] <= target
        out.append(
            f"{step}: {s['ours_s']} s, {s['ratio']}x the plain build (target <= "
            f"{target:g} s): "
            f"{'met' if ok else 'NOT met'}"
        )
    return out


def table(results: dict) -> str:
    first = results["first build"]
    lines = [
        f"Measured {results['date']} on {results['machine']}; medians of "
        f"{results['repeats']} readings, each step made in both copies and both built "
        "one after the other.",
        "",
        "| step | ours (s) | plain Jupyter Book (s) | ours / plain | chapters executed "
        "| every reading, ours / plain (s) |",
        "|---|---:|---:|---:|---|---|",
    ]
    for step, s in results["steps"].items():
        ran = sorted({c for r in s["readings"] for c in r["executed"]})
        each = ", ".join(f"{r['wall_s']:g} / {r['plain_s']:g}" for r in s["readings"])
        reused = sorted({c for r in s["readings"] for c in r.get("reused", [])})
        ran_text = ", ".join(ran) or "none"
        if reused:
            ran_text += f" (outputs reused: {', '.join(reused)})"
        lines.append(
            f"| {step} | {s['ours_s']} | {s['plain_s']} | {s['ratio']} | {ran_text} "
            f"| {each} |"
        )
    reused = ", ".join(first["reused"]) or "nothing (cold: every chapter executed)"
    lines += [
        "",
        f"First build (not in the medians): ours {first['ours']['wall_s']} s, reusing "
        f"{reused}; plain {first['plain_s']} s.",
        "",
    ]
    lines += [f"- {v}" for v in verdicts(results)]
    return "\n".join(lines)


def main(show: bool = False, repeats: int = 3) -> int:
    if show:
        if not RESULTS.exists():
            print("No stored measurements; run `make bench`.")
            return 1
        results = json.loads(RESULTS.read_text())
        if "repeats" not in results:
            print(
                "The stored measurements predate the side-by-side bench; run `make "
                "bench`."
            )
            return 1
        print(table(results))
        return 0
    results = measure(repeats)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(table(results))
    print(
        f"\nwritten to {RESULTS.relative_to(ROOT)}; copy the table into BENCHMARKS.md "
        "when it changes"
    )
    return 0
