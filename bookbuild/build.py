"""Build the book: execute every chapter and render HTML, failing on any warning or cell error.

``python -m bookbuild build`` runs ``jupyter-book build`` on the repository root
with warnings as errors (``-W -n --keep-going``). Chapters execute through
myst-nb with ``nb_execution_raise_on_error`` set, so a failing cell fails the
build; the captured log is scanned once more for execution failures so the
command never reports success over a broken page.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD_DIR = ROOT / "_build"
HTML_DIR = BUILD_DIR / "html"
LOG_FILE = BUILD_DIR / "build.log"

# Lines in a Sphinx/myst-nb log that mean a chapter did not execute cleanly.
FAILURE_PATTERNS = [
    re.compile(r"Executing notebook failed"),
    re.compile(r"CellExecutionError"),
    re.compile(r"An error occurred while executing"),
    re.compile(r"Notebook exception traceback saved in"),
]


def jupyter_book_command(builder: str = "html") -> list[str]:
    exe = Path(sys.executable).with_name("jupyter-book")
    return [str(exe), "build", str(ROOT), "--builder", builder, "-W", "-n", "--keep-going"]


def failures_in(log_text: str) -> list[str]:
    """Lines of a build log that report a cell or notebook failure."""
    return [line for line in log_text.splitlines() if any(p.search(line) for p in FAILURE_PATTERNS)]


def build(builder: str = "html") -> int:
    """Run the build, stream its log, and return a process exit code."""
    BUILD_DIR.mkdir(exist_ok=True)
    env = dict(os.environ)
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # silences a debugger notice in kernels
    started = time.perf_counter()
    with LOG_FILE.open("w") as log:
        proc = subprocess.Popen(
            jupyter_book_command(builder),
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stdout.write(line)
            log.write(line)
        code = proc.wait()
    elapsed = time.perf_counter() - started
    problems = failures_in(LOG_FILE.read_text())
    if problems:
        print("\nA chapter failed to execute:", *problems, sep="\n  ", file=sys.stderr)
        code = code or 1
    if code != 0:
        print(f"\nBuild FAILED after {elapsed:.0f} s (exit {code}); full log in {LOG_FILE}", file=sys.stderr)
        return code
    index = HTML_DIR / "index.html"
    print(f"\nBuild succeeded in {elapsed:.0f} s. Open the book at:\n  file://{index}")
    return 0


def clean() -> int:
    """Remove every build output, including the execution cache."""
    if BUILD_DIR.exists():
        shutil.rmtree(BUILD_DIR)
    print(f"removed {BUILD_DIR}")
    return 0


def serve(port: int = 8000) -> int:
    """Serve the built HTML on localhost only."""
    if not (HTML_DIR / "index.html").exists():
        print("No built book found; run `make book` first.", file=sys.stderr)
        return 1
    print(f"Serving {HTML_DIR} at http://127.0.0.1:{port}/ (Ctrl-C to stop)")
    return subprocess.call(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(HTML_DIR)]
    )
