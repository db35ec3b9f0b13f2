"""The chapters' kernels keep JAX's compiled programs in the build folder (bookbuild.engine.reuse_jax_compilations)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bookbuild import engine

PROGRAM = "import jax, jax.numpy as jnp; print(jax.jit(lambda x: jnp.tanh(x) * 2.5)(jnp.arange(4.0)).tolist())"


def test_a_second_kernel_loads_the_programs_the_first_compiled_and_computes_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ["JAX_COMPILATION_CACHE_DIR", "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "BOOK_BUILD_DIR"]:
        monkeypatch.delenv(name, raising=False)
    engine.reuse_jax_compilations(tmp_path)
    cache = tmp_path / "_build" / "jax-cache"
    assert os.environ["JAX_COMPILATION_CACHE_DIR"] == str(cache)

    def kernel() -> str:  # a process started as the engine starts a chapter's kernel: with its environment
        proc = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc.stdout

    first = kernel()
    kept = sorted(p.name for p in cache.iterdir())
    assert kept, "JAX wrote nothing to the cache: does it still read JAX_COMPILATION_CACHE_DIR?"
    assert kernel() == first
    assert sorted(p.name for p in cache.iterdir()) == kept  # nothing compiled anew


def test_a_cache_folder_the_user_set_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "2")
    engine.reuse_jax_compilations(tmp_path)
    assert os.environ["JAX_COMPILATION_CACHE_DIR"] == str(tmp_path / "mine")
    assert os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] == "2"
