"""Mutation testing of chapter_code and bookbuild, one module at a time (mutmut 3).

Usage (from the repository root; `make mutation [MODULE=name]` calls this)::

    .venv/bin/python mutation/run.py recurrence gates   # these modules
    .venv/bin/python mutation/run.py bookbuild.runs.codec   # a build module, by its full name
    .venv/bin/python mutation/run.py                    # every chapter_code module
    .venv/bin/python mutation/run.py --table            # the stored scores as a Markdown table
    .venv/bin/python mutation/run.py --rescore gates    # score the last run again after editing the config

For each module it builds a scratch copy of the repository under
``_build/mutation/work/<module>/`` whose ``pyproject.toml`` tells mutmut to
mutate that one module (every mutant of it: the full set) and to run the test
files that import it (plus any named in ``mutation/config.toml``, or only the
files its ``only_tests`` names, with the reason, where the importing files are too
slow for a full run), less the tests its ``deselect`` names (with the reason: tests
that cannot run under mutmut) and, for a module without a fork server, the JAX
twins' tests (they hang in a forked child, which would count as a kill). mutmut then
runs, with one worker, only the tests that call each mutated function.

It writes, per module:

- ``_build/mutation/<module>.md``: the score, the time taken, the counts by
  status, the exclusions applied and the diff of every surviving mutant;
- ``_build/mutation/summary.json``: score, counts and seconds of every module run so far.

Score = mutants detected (killed, timed out, crashed) / mutants scored, where
the mutants scored are all mutants made, less the equivalent mutants listed
with their reasons in ``mutation/config.toml``. A mutant no test reaches
("no tests") counts as surviving. Exit status 1 if a module scores below the
bar (90%).
"""

from __future__ import annotations

import argparse
import ast
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "mutation" / "config.toml"
OUT = ROOT / "_build" / "mutation"
BAR = 0.90
DETECTED = {"killed", "timeout", "segfault"}
#: Paths the tests read (as files of the repository) that are not copied by mutmut itself.
LINKED = ["bookbuild", "book", "labs", "data", "records", "baselines", "benchmarks", "_config.yml", "_toc.yml",
          "requirements"]


def modules() -> list[str]:
    """Every module of chapter_code, named with dots relative to it (``gated.gates``); no ``__init__``."""
    base = ROOT / "chapter_code"
    return sorted(".".join(p.relative_to(base).with_suffix("").parts) for p in base.rglob("*.py")
                  if p.stem != "__init__")


def build_modules() -> list[str]:
    """Every module of bookbuild, by its full dotted name (``bookbuild.runs.codec``); no ``__init__``."""
    return sorted(".".join(p.relative_to(ROOT).with_suffix("").parts) for p in (ROOT / "bookbuild").rglob("*.py")
                  if p.stem not in ("__init__", "__main__"))


def package_of(module: str) -> str:
    """The top package a module name lives in: ``bookbuild`` for ``bookbuild.x``, else ``chapter_code``."""
    return "bookbuild" if module.startswith("bookbuild.") else "chapter_code"


def full_name(module: str) -> str:
    """``gated.gates`` -> ``chapter_code.gated.gates``; a bookbuild name is already full."""
    return module if package_of(module) == "bookbuild" else f"chapter_code.{module}"


def module_path(module: str) -> str:
    """``gated.gates`` -> ``chapter_code/gated/gates.py``; ``bookbuild.runs.codec`` -> ``bookbuild/runs/codec.py``."""
    return full_name(module).replace(".", "/") + ".py"


def tests_importing(module: str) -> list[str]:
    """The test files that import the module (``chapter_code.<module>``, or a bookbuild module by name)."""
    package, _, name = full_name(module).rpartition(".")
    dotted = re.escape(full_name(module))
    from_package = re.escape(package)
    pattern = re.compile(
        rf"({dotted}\b)|(from {from_package} import [^\n]*\b{name}\b)", re.MULTILINE
    )
    return sorted(
        str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("test_*.py") if pattern.search(p.read_text())
    )


def error_message_lines(source: str) -> set[int]:
    """Line numbers of ``raise X("...")`` statements whose arguments are message strings."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Raise) or not isinstance(node.exc, ast.Call):
            continue
        args = node.exc.args
        if args and all(isinstance(a, ast.Constant | ast.JoinedStr | ast.BinOp) for a in args):
            lines.update(range(node.lineno, node.end_lineno + 1))
    return lines


def scratch_config(module: str, cfg: dict) -> tuple[dict, list[str]]:
    """The [tool.mutmut] table for one module and the exclusion notes for the report."""
    mod_cfg = cfg.get("modules", {}).get(module, {})
    if "only_tests" in mod_cfg:  # a focused set instead of every importing file (the reason goes in the report)
        if not mod_cfg.get("only_tests_reason"):
            raise SystemExit(f"mutation: [modules.{module}] only_tests needs an only_tests_reason")
        tests = sorted(set(mod_cfg["only_tests"]) | set(mod_cfg.get("tests", [])))
    else:
        tests = sorted(set(tests_importing(module)) | set(mod_cfg.get("tests", [])))
    if not tests:
        raise SystemExit(f"mutation: no test file imports {full_name(module)}")
    # a moved or deleted test file would otherwise run nothing, silently
    missing = [t for t in tests if not t.startswith("-") and not (ROOT / t.split("::")[0]).is_file()]
    if missing:
        raise SystemExit(f"mutation/config.toml: [modules.\"{module}\"] names test files that do not "
                         f"exist: {', '.join(missing)}; point it at where they are now")
    source = (ROOT / module_path(module)).read_text()
    src_lines = source.splitlines()
    patterns: list[str] = []
    notes: list[str] = []
    forkserver = mod_cfg.get("mutmut", {}).get("process_isolation") == "forkserver"
    jax_tests = [t for t in tests if t.endswith("_jax.py")]
    if jax_tests and not forkserver:
        # A JAX test in a child forked from the process that ran JAX waits forever (see the JAX modules in
        # config.toml): every mutant that survived the other tests would reach it and be counted a timeout,
        # that is, detected. The JAX twins' own runs (with a fork server) use these files.
        tests = [t for t in tests if t not in jax_tests]
        notes.append(f"JAX tests left out ({', '.join(jax_tests)}): in a forked child they hang, and a mutant "
                     "that reached them would be counted a timeout (detected)")
    if cfg["exclude"].get("error_messages", False):
        msg_lines = sorted(error_message_lines(source))
        # mutmut takes regular expressions searched in each line: match these lines exactly.
        patterns += [rf"^{re.escape(src_lines[i - 1])}$" for i in msg_lines]
        notes.append(f"{len(msg_lines)} lines of error messages (lines {_ranges(msg_lines)})")
    for item in cfg["exclude"].get("lines", []) + mod_cfg.get("lines", []):
        patterns.append(item["pattern"])
        notes.append(f"lines matching `{item['pattern']}`: {item['reason']}")
    deselect = mod_cfg.get("deselect", [])
    if deselect:  # tests that cannot run against mutmut's trampolines (each with its reason in the report)
        if not mod_cfg.get("deselect_reason"):
            raise SystemExit(f"mutation: [modules.{module}] deselect needs a deselect_reason")
        notes.append(f"tests not run: {', '.join(deselect)}: {mod_cfg['deselect_reason']}")
    table = {
        "source_paths": [package_of(module)],
        "only_mutate": [module_path(module)],
        "pytest_add_cli_args_test_selection": tests,
        "pytest_add_cli_args": ["-p", "no:xdist", "-p", "no:cacheprovider", "-W", "ignore::DeprecationWarning",
                                *(f"--deselect={t}" for t in deselect)],
        "do_not_mutate_patterns": patterns,
        "use_git_change_detection": False,
    }
    # mutmut settings for one module, each with its reason in the config (e.g. a fork server for JAX)
    settings = mod_cfg.get("mutmut", {})
    table.update({k: v for k, v in settings.items() if k != "reason"})
    if settings:
        notes.append("mutmut settings " + ", ".join(f"{k} = {v}" for k, v in settings.items() if k != "reason")
                     + f": {settings.get('reason', '')}")
    return table, notes


def _ranges(numbers: list[int]) -> str:
    out: list[str] = []
    for n in numbers:
        if out and out[-1].split("-")[-1] == str(n - 1):
            out[-1] = f"{out[-1].split('-')[0]}-{n}"
        else:
            out.append(str(n))
    return ", ".join(out) or "none"


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return json.dumps(v)  # a JSON string is a valid TOML basic string


def run_module(module: str, cfg: dict, rescore: bool = False) -> dict:
    work = OUT / "work" / module
    table, notes = scratch_config(module, cfg)
    # one thread per process (chapter_code.core.runtime already defaults BOOK_THREADS to 1; tests set it themselves)
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
    if rescore:  # score the last run again, with the equivalent mutants listed now; keep its time
        seconds = json.loads((OUT / "summary.json").read_text())[module]["seconds"]
        return _report(module, cfg, work, table, notes, env, seconds)
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    mutated = package_of(module)
    shutil.copytree(ROOT / mutated, work / mutated, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tests", work / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    (work / "mutants").mkdir()
    # the package mutmut copies and mutates is its own; the other is read as it is
    for name in [n for n in LINKED if n != mutated] + (["chapter_code"] if mutated == "bookbuild" else []):
        if (ROOT / name).exists():
            (work / "mutants" / name).symlink_to(ROOT / name)
    pyproject = (ROOT / "pyproject.toml").read_text()
    pyproject += "\n[tool.mutmut]\n" + "".join(f"{k} = {_toml_value(v)}\n" for k, v in table.items())
    (work / "pyproject.toml").write_text(pyproject)

    max_children = str(cfg["run"].get("max_children", 1))
    print(f"== {module}: tests {' '.join(table['pytest_add_cli_args_test_selection'])}", flush=True)
    start = time.monotonic()
    with open(OUT / f"{module}.log", "w") as log:
        proc = subprocess.run(
            [sys.executable, "-m", "mutmut", "run", "--max-children", max_children],
            cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT,
        )
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        raise SystemExit(f"mutation: mutmut failed on {module} (exit {proc.returncode}); see {OUT / (module + '.log')}")
    return _report(module, cfg, work, table, notes, env, seconds)


def _report(module: str, cfg: dict, work: Path, table: dict, notes: list[str], env: dict, seconds: float) -> dict:
    """Score the mutants of the run in ``work`` and write the module's report and summary entry."""
    meta = json.loads((work / "mutants" / (module_path(module) + ".meta")).read_text())
    sys.path.insert(0, str(work))
    from mutmut.stats import status_by_exit_code  # noqa: E402  (after the scratch path is set)

    status = {name: status_by_exit_code[code] for name, code in meta["exit_code_by_key"].items()}
    equivalent = {e["mutant"]: e["reason"] for e in cfg.get("modules", {}).get(module, {}).get("equivalent", [])}
    unknown = sorted(set(equivalent) - set(status))
    not_equivalent = sorted(m for m in equivalent if status.get(m) in DETECTED)
    scored = {m: s for m, s in status.items() if m not in equivalent}
    detected = sum(s in DETECTED for s in scored.values())
    survivors = sorted((m for m, s in scored.items() if s not in DETECTED), key=_mutant_order)
    score = detected / len(scored) if scored else 1.0
    counts: dict[str, int] = {}
    for s in status.values():
        counts[s] = counts.get(s, 0) + 1

    diffs = _diffs(work, survivors, env)
    result = {
        "module": module, "score": round(score, 4), "mutants": len(status), "scored": len(scored),
        "detected": detected, "survived": len(survivors), "equivalent": len(equivalent),
        "seconds": round(seconds, 1), "counts": counts,
        "tests": table["pytest_add_cli_args_test_selection"],
    }
    lines = [
        f"# Mutation testing: {module_path(module)}", "",
        f"- score: **{score:.1%}** ({detected} of {len(scored)} scored mutants detected; bar {BAR:.0%})",
        f"- time: {seconds:.0f} s wall, one worker",
        f"- mutants made: {len(status)}; by status: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())),
        f"- tests: {', '.join(result['tests'])}",
    ]
    timeouts = sorted(m for m, st in status.items() if st == "timeout")
    if timeouts:  # counted as detected; a hang (not a mutant that loops) would make that a false kill
        lines.append(f"- WARNING: timeouts, counted as detected (check that none is a hang): {', '.join(timeouts)}")
    reason = cfg.get("modules", {}).get(module, {}).get("only_tests_reason")
    if reason:
        lines.append(f"  - only these, not every test file that imports the module: {reason}")
    lines += [
        "- lines excluded: " + ("; ".join(notes) or "none"),
        f"- equivalent mutants left out of the score: {len(equivalent)}",
    ]
    lines += [f"  - `{m}`: {r}" for m, r in equivalent.items()]
    if unknown:
        lines.append(f"- WARNING: equivalent mutants listed but not made (stale names?): {', '.join(unknown)}")
    if not_equivalent:
        lines.append(f"- WARNING: listed as equivalent but killed by a test: {', '.join(not_equivalent)}")
    lines += ["", f"## Surviving mutants ({len(survivors)})", ""]
    for m in survivors:
        lines += [f"### {m} ({scored[m]})", "", "```diff", diffs.get(m, "(no diff)"), "```", ""]
    (OUT / f"{module}.md").write_text("\n".join(lines) + "\n")

    summary_path = OUT / "summary.json"
    # Two runs of different modules may finish together (`make mutation` in two shells): the read, update
    # and write of the shared summary hold a lock, so neither loses the other's entry.
    with open(OUT / "summary.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
        summary[module] = result
        summary_path.write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    print(f"   {module}: {score:.1%} ({detected}/{len(scored)}), {len(survivors)} surviving, {seconds:.0f} s"
          f" -> {OUT / (module + '.md')}", flush=True)
    return result


def _mutant_order(name: str) -> tuple[str, int]:
    head, _, n = name.rpartition("__mutmut_")
    return head, int(n) if n.isdigit() else 0


def _diffs(work: Path, names: list[str], env: dict) -> dict[str, str]:
    if not names:
        return {}
    script = (
        "import json, sys\n"
        "from mutmut.mutation.diff_apply import get_diff_for_mutant\n"
        "names = json.load(sys.stdin)\n"
        "out = {}\n"
        "for n in names:\n"
        "    try:\n"
        "        out[n] = get_diff_for_mutant(n)\n"
        "    except Exception as e:\n"
        "        out[n] = f'(diff failed: {e})'\n"
        "print(json.dumps(out))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=work, env=env, input=json.dumps(names),
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def table() -> str:
    summary = json.loads((OUT / "summary.json").read_text())
    rows = ["| module | score | detected / scored | surviving | equivalent | time (s) |", "|---|---|---|---|---|---|"]
    for m in sorted(summary):
        r = summary[m]
        rows.append(f"| `{m}.py` | {r['score']:.1%} | {r['detected']} / {r['scored']} | {r['survived']} "
                    f"| {r['equivalent']} | {r['seconds']:.0f} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*",
                        help="chapter_code module names, or bookbuild modules by full name (default: every "
                        "chapter_code module)")
    parser.add_argument("--table", action="store_true", help="print the stored scores as a Markdown table")
    parser.add_argument("--rescore", action="store_true",
                        help="re-score the last run of each module with the current config (no mutmut run)")
    args = parser.parse_args(argv)
    if args.table:
        print(table())
        return 0
    names = args.modules or modules()
    known = modules() + build_modules()
    unknown = [m for m in names if m not in known]
    if unknown:
        parser.error(f"unknown module(s) {', '.join(unknown)}; choose from: {', '.join(known)}")
    cfg = tomllib.loads(CONFIG.read_text())
    OUT.mkdir(parents=True, exist_ok=True)
    results, failed = [], []
    for m in names:
        try:
            results.append(run_module(m, cfg, rescore=args.rescore))
        except SystemExit as e:  # one module's failure does not stop the others
            print(e, flush=True)
            failed.append(m)
    below = [r["module"] for r in results if r["score"] < BAR]
    if below:
        print(f"below {BAR:.0%}: {', '.join(below)}")
    if failed:
        print(f"not measured (mutmut failed): {', '.join(failed)}")
    return 1 if below or failed else 0


if __name__ == "__main__":
    sys.exit(main())
