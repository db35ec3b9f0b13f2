"""Tests for bookbuild/venv.py: an environment made with another Python is replaced, not reused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bookbuild"))
import venv as book_venv  # noqa: E402  (bookbuild/venv.py runs before the package can be imported)


def test_version_of_a_working_environment_is_read(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "env")], check=True)
    assert book_venv.venv_python_version(tmp_path / "env") == "{}.{}".format(*sys.version_info[:2])


def test_an_environment_whose_python_is_gone_or_different_reads_as_none(tmp_path: Path) -> None:
    assert book_venv.venv_python_version(tmp_path / "absent") is None
    broken = tmp_path / "broken" / "bin"
    broken.mkdir(parents=True)
    (broken / "python").write_text("#!/bin/sh\nexit 1\n")
    (broken / "python").chmod(0o755)
    assert book_venv.venv_python_version(tmp_path / "broken") is None


def test_the_jax_lock_is_hashed_into_the_stamp_and_moves_nothing_in_lock_txt() -> None:
    assert book_venv.JAX_LOCK in book_venv.LOCK_FILES

    def pins(path: Path) -> dict[str, str]:
        lines = [ln.strip() for ln in path.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
        return {ln.split("==")[0].lower().replace("_", "-"): ln.split("==")[1] for ln in lines}

    jax_pins = pins(book_venv.JAX_LOCK)
    assert {"jax", "jaxlib"} <= set(jax_pins)
    assert jax_pins["jax"] == jax_pins["jaxlib"]
    assert not set(jax_pins) & set(pins(book_venv.ROOT / "requirements" / "lock.txt"))
