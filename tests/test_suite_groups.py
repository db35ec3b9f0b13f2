"""The suite's worker groups hold: tests marked ``xdist_group`` run on one worker under
``make test``.

Module fixtures that open many browser pages or run a dry run
(``tests/browser/test_panels.py``, ``test_reading.py``,
``tests/bookbuild/test_gpu_run.py``) are made once per worker; the group keeps each such
file on one worker so that the work is done once. pytest 9.2.0 with pytest-xdist 3.8.0
dropped the groups without a word (the structured node ids no longer carry xdist's
``@group`` suffix), which is why ``requirements/lock.txt`` holds pytest at 9.1.1; this
test fails when an upgrade loses them again.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_make_test_distributes_by_group() -> None:
    recipe = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"-m pytest -n auto --dist loadgroup", recipe)


def test_a_group_runs_on_one_worker(tmp_path: Path) -> None:
    (tmp_path / "test_grouped.py").write_text(
        "import pytest\n\npytestmark = pytest.mark.xdist_group('one')\n\n\n"
        "@pytest.mark.parametrize('i', range(8))\ndef test_x(i):\n    pass\n",
        encoding="utf-8",
    )
    (tmp_path / "test_free.py").write_text(
        "import pytest\n\n\n@pytest.mark.parametrize('i', range(8))\ndef "
        "test_y(i):\n    pass\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-v",
            "-n",
            "2",
            "--dist",
            "loadgroup",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            "-c",
            "/dev/null",
            str(tmp_path),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    workers = re.findall(r"\[(gw\d+)\].*PASSED .*test_grouped\.py::test_x", done.stdout)
    assert len(workers) == 8, done.stdout
    assert len(set(workers)) == 1, (
        f"the group ran on {sorted(set(workers))}: xdist_group is not honoured"
    )
