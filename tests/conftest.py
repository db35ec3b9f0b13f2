"""Shared test set-up: pin the CPU numerics before any test module imports torch.

Importing :mod:`chapter_code.core.runtime` sets the pins (see its docstring) in this
process's environment, so each pytest-xdist worker, and every process a test
starts, computes on the same kernels as the book's chapters.
"""

import json  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import chapter_code.core.runtime  # noqa: F401  (imported for its side effect: the CPU pins)

#: Where every run of the suite leaves its test times (issue 31: what the suite spends,
#: by file, by test function and by test; after `benchmarks/ci_time.sh --keep`, in the
#: clone's `_build/`). `BOOK_TEST_TIMES=` (empty) writes nothing.
TIMES_FILE = os.environ.get("BOOK_TEST_TIMES", "_build/test-times.json")
_times: dict[str, float] = {}
_started = time.time()


def pytest_configure(config) -> None:  # type: ignore[no-untyped-def]
    # One intra-op thread per test process, as the book's chapters compute
    # (runtime.setup(): BOOK_THREADS unset is 1). PyTorch's default is one per core: two
    # xdist workers on two cores then run four threads beside Chromium and Java, and a
    # small model's every step waits at a barrier for a thread that is not scheduled
    # (issue 31: the seq2seq reversal test took 77 s in the suite, 1.9 s alone). Tests
    # that set threads restore this value.
    import torch  # after the pins (runtime, imported above)

    torch.set_num_threads(1)
    # pytest-xdist registers `xdist_group`; a run without it (mutmut runs the tests with
    # `-p no:xdist`) must still accept the marker under --strict-markers
    # (tests/test_suite_groups.py checks that the groups hold under xdist).
    config.addinivalue_line(
        "markers", "xdist_group(name): tests that one xdist worker runs, in one process"
    )


def pytest_runtest_logreport(report) -> None:  # type: ignore[no-untyped-def]
    """Sum each test's set-up, call and tear-down time (in the controller, which sees
    every worker's reports)."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        _times[report.nodeid] = _times.get(report.nodeid, 0.0) + report.duration


def pytest_sessionfinish(session) -> None:  # type: ignore[no-untyped-def]
    if (
        not TIMES_FILE
        or os.environ.get("PYTEST_XDIST_WORKER") is not None
        or not _times
    ):
        return
    by_file: dict[str, float] = {}
    by_function: dict[str, float] = {}
    for nodeid, seconds in _times.items():
        by_file[nodeid.split("::")[0]] = (
            by_file.get(nodeid.split("::")[0], 0.0) + seconds
        )
        # every parametrisation of one test function together
        function = nodeid.split("[")[0]
        by_function[function] = by_function.get(function, 0.0) + seconds
    out = Path(TIMES_FILE)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "wall_s": round(time.time() - _started, 1),
                "test_seconds": round(sum(_times.values()), 1),
                "by_file": {
                    k: round(v, 2)
                    for k, v in sorted(by_file.items(), key=lambda kv: -kv[1])
                },
                "by_function": {
                    k: round(v, 2)
                    for k, v in sorted(by_function.items(), key=lambda kv: -kv[1])
                },
                "tests": {
                    k: round(v, 3)
                    for k, v in sorted(_times.items(), key=lambda kv: -kv[1])
                },
            },
            indent=1,
        )
        + "\n"
    )
