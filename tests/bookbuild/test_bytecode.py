"""Tests for bookbuild.execute.bytecode: no process the build starts can run bytecode
older than its source."""

from __future__ import annotations

import importlib.util
import os
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest

from bookbuild.execute import bytecode


def package(root: Path, body: str = "VALUE = 1\n") -> Path:
    (root / "pkg").mkdir(parents=True, exist_ok=True)
    (root / "pkg" / "__init__.py").write_text("")
    module = root / "pkg" / "mod.py"
    module.write_text(body)
    return module


def stale_edit(module: Path, new: str) -> None:
    """A timestamp .pyc of the current source, then an edit of the same size with the
    mtime put back."""
    py_compile.compile(
        str(module),
        cfile=str(bytecode.pyc_path(module)),
        doraise=True,
        invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP,
    )
    stat = module.stat()
    module.write_text(new)
    os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def value_in_a_fresh_process(root: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-c", "import pkg.mod; print(pkg.mod.VALUE)"],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root), **(env or {})},
    )
    return done.stdout.strip()


def test_python_alone_runs_the_stale_bytecode_and_a_prepared_tree_does_not(
    tmp_path: Path,
) -> None:
    module = package(tmp_path)
    stale_edit(module, "VALUE = 2\n")
    # the defect: mtime and size match, the old code runs
    assert value_in_a_fresh_process(tmp_path) == "1"
    assert bytecode.prepare(tmp_path, tmp_path / "_build" / "pycache") == {}
    assert bytecode.is_checked(bytecode.pyc_path(module), module.read_bytes())
    assert value_in_a_fresh_process(tmp_path) == "2"


def test_a_source_that_no_longer_compiles_loses_its_bytecode(tmp_path: Path) -> None:
    module = package(tmp_path)
    stale_edit(module, "VALUE = (\n")
    bytecode.prepare(tmp_path, tmp_path / "_build" / "pycache")
    assert not bytecode.pyc_path(module).exists()


def test_with_bytecode_off_only_existing_pycs_are_rewritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    module = package(tmp_path)
    bytecode.prepare(tmp_path, tmp_path / "_build" / "pycache")
    assert not bytecode.pyc_path(module).exists()
    stale_edit(module, "VALUE = 2\n")
    bytecode.prepare(tmp_path, tmp_path / "_build" / "pycache")
    assert bytecode.is_checked(bytecode.pyc_path(module), module.read_bytes())


def test_skipped_and_hidden_folders_are_left_alone(tmp_path: Path) -> None:
    package(tmp_path)
    for folder in ("tests", ".venv", "deep/.hidden"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "x.py").write_text("X = 1\n")
    (tmp_path / "deep" / "y.py").write_text("Y = 1\n")
    found = {
        p.relative_to(tmp_path).as_posix()
        for p in bytecode.sources(tmp_path, ["tests"])
    }
    assert found == {"pkg/__init__.py", "pkg/mod.py", "deep/y.py"}


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_checkout_gets_its_bytecode_under_the_build_folder(
    tmp_path: Path,
) -> None:
    module = package(tmp_path / "checkout")
    stale_edit(module, "VALUE = 2\n")
    cache = bytecode.pyc_path(module).parent
    cache.chmod(0o555)
    try:
        env = bytecode.prepare(tmp_path / "checkout", tmp_path / "build" / "pycache")
        assert env == {"PYTHONPYCACHEPREFIX": str(tmp_path / "build" / "pycache")}
        assert bytecode.is_checked(
            bytecode.pyc_path(module, tmp_path / "build" / "pycache"),
            module.read_bytes(),
        )
        assert value_in_a_fresh_process(tmp_path / "checkout", env) == "2"
    finally:
        cache.chmod(0o755)


def test_the_pyc_path_agrees_with_the_interpreter_s_own_under_a_prefix(
    tmp_path: Path,
) -> None:
    module = package(tmp_path)
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import importlib.util; "
            f"print(importlib.util.cache_from_source({str(module)!r}))",
        ],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPYCACHEPREFIX": str(tmp_path / "prefix")},
    )
    assert done.stdout.strip() == str(bytecode.pyc_path(module, tmp_path / "prefix"))
    assert importlib.util.cache_from_source(str(module)) == str(
        bytecode.pyc_path(module)
    )


def test_where_the_tree_s_pycache_cannot_be_written_the_build_folder_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = package(tmp_path / "checkout")
    stale_edit(module, "VALUE = 2\n")
    compile_ = py_compile.compile

    def read_only_tree(source: str, cfile: str, **kwargs: object) -> str:
        if "__pycache__" in cfile:
            raise PermissionError(13, "Permission denied", cfile)
        return compile_(source, cfile=cfile, **kwargs)

    monkeypatch.setattr(py_compile, "compile", read_only_tree)
    # bytecode on (whatever PYTHONDONTWRITEBYTECODE says)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    prefix = tmp_path / "build" / "pycache"
    assert bytecode.prepare(tmp_path / "checkout", prefix) == {
        "PYTHONPYCACHEPREFIX": str(prefix)
    }
    assert bytecode.is_checked(bytecode.pyc_path(module, prefix), module.read_bytes())
    assert (
        value_in_a_fresh_process(
            tmp_path / "checkout", {"PYTHONPYCACHEPREFIX": str(prefix)}
        )
        == "2"
    )
