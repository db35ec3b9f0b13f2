"""Tests for bookbuild.files: atomic writes, the checkout lock, corrupt state files."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bookbuild import files


def test_write_is_atomic_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "manifest.json"
    files.write_json(target, {"a": 1})
    files.write_json(target, {"a": 2})
    assert files.read_json(target, "manifest") == {"a": 2}
    assert [p.name for p in target.parent.iterdir()] == ["manifest.json"]


def test_corrupt_json_is_named_removed_and_treated_as_absent(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    target = tmp_path / "manifest.json"
    target.write_text("{not json")
    assert files.read_json(target, "the engine's manifest") is None
    assert "the engine's manifest" in capsys.readouterr().err
    assert not target.exists()


def test_a_second_build_waits_for_the_first(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from bookbuild.files "
            "import checkout_lock\n"
            "with checkout_lock(Path(sys.argv[1]), 'make book'):\n    "
            "print('held', flush=True); time.sleep(3)",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "held"
    started = time.monotonic()
    with files.checkout_lock(tmp_path, "make check"):
        waited = time.monotonic() - started
    holder.wait(timeout=10)
    assert waited > 1.0
    err = capsys.readouterr().err
    assert "another build of this checkout is running" in err
    assert "`make book`" in err


def test_read_only_folder_gets_a_message_that_says_what_to_do(tmp_path: Path) -> None:
    if os.getuid() == 0:
        target = Path("/proc/book-build")  # root can write anywhere else
    else:
        tmp_path.chmod(0o500)
        target = tmp_path / "state"
    with pytest.raises(files.UserError, match="BOOK_BUILD_DIR"):
        files.ensure_writable(target)


def test_atomic_writes_get_ordinary_permissions(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        files.write_text(tmp_path / "page.md", "text")
    finally:
        os.umask(umask)
    assert (tmp_path / "page.md").stat().st_mode & 0o777 == 0o644
