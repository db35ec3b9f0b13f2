"""The chapters' kernels keep JAX's compiled programs in the build folder
(bookbuild.execute.engine.reuse_jax_compilations)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bookbuild.execute import engine


@pytest.fixture(autouse=True)
def no_cache_folder_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts as a process that has set no JAX cache folder, its environment
    restored afterwards."""
    for name in [
        "JAX_COMPILATION_CACHE_DIR",
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS",
        "BOOK_BUILD_DIR",
    ]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(engine, "_jax_cache_set", None)


PROGRAM = (
    "import jax, jax.numpy as jnp; print(jax.jit(lambda x: jnp.tanh(x) * "
    "2.5)(jnp.arange(4.0)).tolist())"
)


def test_a_second_kernel_loads_the_programs_the_first_compiled_and_computes_the_same(
    tmp_path: Path,
) -> None:
    engine.reuse_jax_compilations(tmp_path)
    cache = tmp_path / "_build" / "jax-cache"
    assert os.environ["JAX_COMPILATION_CACHE_DIR"] == str(cache)

    # a process started as the engine starts a chapter's kernel: with its environment
    def kernel() -> str:
        proc = subprocess.run(
            [sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc.stdout

    first = kernel()
    kept = sorted(p.name for p in cache.iterdir())
    assert kept, (
        "JAX wrote nothing to the cache: does it still read JAX_COMPILATION_CACHE_DIR?"
    )
    assert kernel() == first
    assert sorted(p.name for p in cache.iterdir()) == kept  # nothing compiled anew


def test_a_damaged_entry_is_compiled_again_and_said_in_the_build_log_never_in_the_cell(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    from tests.bookbuild.test_engine import add_cell, cell_text, write_book

    write_book(tmp_path)
    add_cell(tmp_path, "jit", PROGRAM.replace("; ", "\n"))
    (first,) = engine.run(tmp_path)
    assert first.status == "executed", first.error
    computed = cell_text(tmp_path, "jit")
    assert computed.startswith("[0.0, ")
    entries = [p for p in (tmp_path / "_build" / "jax-cache").iterdir() if p.is_file()]
    assert entries, "the chapter's kernel kept no compiled program"
    for entry in entries:
        entry.write_bytes(b"damaged")
    capsys.readouterr()
    (again,) = engine.run(tmp_path, force=True)
    assert again.status == "executed", again.error
    # what the page shows, and the gate compares, is unchanged
    assert cell_text(tmp_path, "jit") == computed
    assert again.notes, "the damaged entries went unreported"
    assert all(
        n.startswith(
            "JAX's compilation cache: Error reading persistent compilation cache entry "
            "for "
        )
        for n in again.notes
    ), again.notes
    assert f"engine: book/ch: {again.notes[0]}" in capsys.readouterr().out


def test_kernels_of_another_book_keep_their_programs_in_its_own_build_folder(
    tmp_path: Path,
) -> None:
    engine.reuse_jax_compilations(tmp_path / "one")
    # one process, two books (the engine's tests do this)
    engine.reuse_jax_compilations(tmp_path / "two")
    assert os.environ["JAX_COMPILATION_CACHE_DIR"] == str(
        tmp_path / "two" / "_build" / "jax-cache"
    )


def test_a_cache_folder_the_user_set_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "2")
    engine.reuse_jax_compilations(tmp_path)
    assert os.environ["JAX_COMPILATION_CACHE_DIR"] == str(tmp_path / "mine")
    assert os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] == "2"
