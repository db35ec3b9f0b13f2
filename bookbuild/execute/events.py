"""The event sink of a chapter's kernel: what the chapter read, the runs it memoized,
the sweeps it loaded, notes.

:mod:`bookbuild.execute.kernel_hooks` fills it while the chapter runs and hands it to
the engine at the end; the memoizer and the sweep loader report to it. It imports
nothing of the build, so neither the hooks nor the runs depend on each other through it.
"""

from __future__ import annotations

import sys
from typing import Any

_state: dict[str, Any] = {
    "read": set(),
    "written": set(),
    "listed": set(),
    "runs": [],
    "sweeps": [],
    "notes": [],
    "seen": {},
}


def cell() -> int | None:
    """The execution count of the cell running now (what the executed notebook stores as
    the cell's count)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    return None if shell is None else shell.execution_count


def note_run(
    function: str,
    key: str,
    outcome: str,
    wall_s: float,
    compute_s: float,
    seed: Any = None,
) -> None:
    """Record one run of ``runtime.run_once`` for the build report and the numbers'
    previews: ``outcome`` is "reused" or "computed" (memoized), or "made ahead" (served
    from a sweep's record, ``key`` its job); ``seed`` is the call's ``seed`` argument,
    when it has an integer one."""
    entry = {
        "function": function,
        "key": key,
        "outcome": outcome,
        "wall_s": round(wall_s, 3),
        "compute_s": round(compute_s, 3),
        "cell": cell(),
    }
    if isinstance(seed, int) and not isinstance(seed, bool):
        entry["seed"] = seed
    _state["runs"].append(entry)


def run_anchor(key: str) -> str:
    """The id of a run's row in the build report, from its key (a memo key, or a sweep's
    job path)."""
    return "run-" + "".join(c if c.isalnum() else "-" for c in key.lower())[:60]


def report(message: str) -> None:
    """A diagnostic of the build's machinery: for the build log and report, never for
    the cell's output.

    In a chapter's kernel (after the hooks are installed) it is kept for the engine;
    elsewhere (a test, a script, a sweep's job) it goes to stderr.
    """
    if "root" in _state:
        _state["notes"].append(message)
    else:
        print(message, file=sys.stderr)
