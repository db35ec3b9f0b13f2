"""Tests for bookbuild/venv.py: an environment made with another Python is replaced, not reused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bookbuild"))
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


def install_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gpu_jax: bool) -> list[list[str]]:
    """The commands ``main`` runs to make a new environment on a CPU-torch host, with or without a GPU JAX."""
    commands: list[list[str]] = []
    monkeypatch.setattr(book_venv, "host_has_cuda_torch", lambda python: False)
    monkeypatch.setattr(book_venv, "host_has_gpu_jax", lambda python: gpu_jax)
    monkeypatch.setattr(book_venv, "venv_python_version", lambda venv: None)
    venv = tmp_path / "env"
    monkeypatch.setattr(book_venv, "run", lambda cmd: (commands.append(cmd), venv.mkdir(exist_ok=True)))
    monkeypatch.setattr(book_venv, "ROOT", tmp_path)
    assert book_venv.main(str(venv)) == 0
    assert (venv / ".book-installed").read_text().strip() == book_venv.lock_hash(False, gpu_jax)
    return commands


def test_a_host_gpu_jax_is_used_and_the_cpu_jax_not_installed(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    commands = install_commands(tmp_path, monkeypatch, gpu_jax=True)
    assert "--system-site-packages" in commands[0]
    assert not any(str(book_venv.JAX_LOCK) in cmd for cmd in commands)
    assert book_venv.lock_hash(False, True) != book_venv.lock_hash(False)


def test_without_a_host_gpu_jax_the_locked_cpu_jax_is_installed(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    commands = install_commands(tmp_path, monkeypatch, gpu_jax=False)
    assert "--system-site-packages" not in commands[0]
    installs = [cmd for cmd in commands if cmd[1:4] == ["-m", "pip", "install"]]
    assert installs[-1][-2:] == ["-r", str(book_venv.JAX_LOCK)]
    # pip compiles nothing; one compileall over the new site-packages, on every core, comes last
    assert all("--no-compile" in cmd for cmd in installs)
    assert len(installs) == 3
    assert commands[-1] == [str(tmp_path / "env" / "bin" / "python"), "-c", book_venv.COMPILE,
                            str(book_venv.site_packages(tmp_path / "env"))]
    assert book_venv.site_packages(tmp_path / "env") == tmp_path / "env" / "lib" / (
        "python{}.{}".format(*sys.version_info[:2])) / "site-packages"


def test_the_probe_finds_no_gpu_jax_here_and_none_in_a_python_without_jax(tmp_path: Path) -> None:
    assert book_venv.host_has_gpu_jax(sys.executable) is False  # this machine: the CPU build, or none
    assert book_venv.host_has_gpu_jax(str(tmp_path / "no-python")) is False
