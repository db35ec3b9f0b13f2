"""Tests for bookbuild.runs.memo (memoized runs) and its entry point
chapter_code.core.runtime.run_once.

Each test writes a tiny package into a temporary folder, imports it, and runs
the real memoization against that folder as the repository root.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from bookbuild.build import ROOT
from bookbuild.execute import events, kernel_hooks
from bookbuild.runs import memo

TRAIN = """
import torch
from tinypkg.helpers import scale

CALLS = []

def train(steps, width=3, note=None):
    CALLS.append(steps)
    g = torch.Generator().manual_seed(steps)
    return {"weights": scale(torch.randn(width, width, generator=g)), "history": [0.5, 0.25]}
"""  # noqa: E501  (a script's source)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    pkg = tmp_path / "tinypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "train.py").write_text(TRAIN)
    (pkg / "helpers.py").write_text("def scale(x):\n    return 2 * x\n")
    (pkg / "unrelated.py").write_text("X = 1\n")
    monkeypatch.setattr(memo, "ROOT", tmp_path)
    monkeypatch.delenv("BOOK_BUILD_DIR", raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m.startswith("tinypkg")]:
        del sys.modules[name]
    monkeypatch.setattr(events, "_state", {**events._state, "runs": []})
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("tinypkg")]:
        del sys.modules[name]


def load(name: str = "tinypkg.train"):
    module = importlib.import_module(name)
    return importlib.reload(module)


def test_second_call_is_read_back_bit_for_bit_without_computing(repo: Path) -> None:
    train = load()
    first = memo.run_once(train.train, steps=3)
    again = memo.run_once(train.train, steps=3)
    assert train.CALLS == [3]
    assert torch.equal(first["weights"], again["weights"])
    assert first["history"] == again["history"]
    assert [r["outcome"] for r in events._state["runs"]] == ["computed", "reused"]


def test_other_arguments_are_another_run(repo: Path) -> None:
    train = load()
    memo.run_once(train.train, steps=3)
    memo.run_once(train.train, steps=3, width=4)
    memo.run_once(train.train, steps=4)
    assert train.CALLS == [3, 3, 4]


def test_editing_what_the_function_reaches_recomputes_but_an_unrelated_module_or_a_comment_does_not(  # noqa: E501  (the test's name)
    repo: Path,
) -> None:
    train = load()
    memo.run_once(train.train, steps=3)
    (repo / "tinypkg" / "unrelated.py").write_text("X = 2\n")
    memo.run_once(train.train, steps=3)
    assert train.CALLS == [3]
    (repo / "tinypkg" / "helpers.py").write_text("def scale(x):\n    return 3 * x\n")
    importlib.reload(importlib.import_module("tinypkg.helpers"))
    train = load()
    changed = memo.run_once(train.train, steps=3)
    assert train.CALLS == [3]  # the reloaded module's list: it computed again
    g = torch.Generator().manual_seed(3)
    assert torch.equal(changed["weights"], 3 * torch.randn(3, 3, generator=g))
    (repo / "tinypkg" / "train.py").write_text(
        TRAIN + "\n# a comment changes nothing the run computes\n"
    )
    train = load()
    memo.run_once(train.train, steps=3)
    # reused: the key is on definitions, not on the file's bytes
    assert train.CALLS == []


def test_declared_data_is_part_of_the_key(repo: Path) -> None:
    train = load()
    (repo / "corpus.txt").write_text("abc")
    memo.run_once(train.train, data=["corpus.txt"], steps=3)
    memo.run_once(train.train, data=["corpus.txt"], steps=3)
    (repo / "corpus.txt").write_text("abd")
    memo.run_once(train.train, data=["corpus.txt"], steps=3)
    assert train.CALLS == [3, 3]
    with pytest.raises(
        FileNotFoundError, match="declared data file missing.txt does not exist"
    ):
        memo.run_once(train.train, data=["missing.txt"], steps=3)


def test_seed_setting_is_part_of_the_key(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    train = load()
    memo.run_once(train.train, steps=3)
    monkeypatch.setenv("BOOK_SEED", "5")
    memo.run_once(train.train, steps=3)
    assert train.CALLS == [3, 3]


def test_harmless_spellings_of_the_settings_are_one_key(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chapter_code.core import runtime

    monkeypatch.setattr(runtime.torch.cuda, "is_available", lambda: False)
    for name in ("BOOK_DEVICE", "BOOK_SEED", "BOOK_THREADS"):
        monkeypatch.delenv(name, raising=False)
    train = load()
    memo.run_once(train.train, steps=3)
    for name, value in [
        ("BOOK_DEVICE", " CPU "),
        ("BOOK_DEVICE", "cpu"),
        ("BOOK_SEED", "0"),
        ("BOOK_THREADS", "1"),
    ]:
        monkeypatch.setenv(name, value)
        memo.run_once(train.train, steps=3)
    assert train.CALLS == [3]  # computed once, read back four times


def test_a_damaged_entry_is_reported_and_recomputed(
    repo: Path, capsys: pytest.CaptureFixture
) -> None:
    train = load()
    first = memo.run_once(train.train, steps=3)
    (result,) = list(memo.runs_dir(repo).glob("*/result.pt"))
    blob = bytearray(result.read_bytes())
    blob[len(blob) // 2] ^= 0xFF
    result.write_bytes(bytes(blob))
    again = memo.run_once(train.train, steps=3)
    assert train.CALLS == [3, 3]
    assert torch.equal(first["weights"], again["weights"])
    assert (
        "is damaged (its result file does not match the hash" in capsys.readouterr().err
    )


@dataclass(frozen=True)
class Recipe:
    lr: float
    epochs: int


def test_dataclass_arguments_are_canonical_and_tensors_are_refused() -> None:
    assert memo.canonical({"b": Recipe(0.1, 3), "a": (1, 2)}) == {
        "a": [1, 2],
        "b": {"__dataclass__": "Recipe", "lr": 0.1, "epochs": 3},
    }
    with pytest.raises(
        TypeError, match=r"note: a memoized run takes numbers.*got Tensor"
    ):
        memo.canonical(torch.zeros(2), "note")


def test_two_processes_asking_at_once_compute_once(repo: Path) -> None:
    slow = repo / "tinypkg" / "slow.py"
    slow.write_text(
        textwrap.dedent(f"""
        import time
        def compute(n):
            with open({str(repo / "calls.log")!r}, "a") as log:
                log.write("called\\n")
            time.sleep(2)
            return [n] * 3
    """)
    )
    code = (
        f"import sys; sys.path.insert(0, {str(repo)!r}); from pathlib import Path; "
        f"from bookbuild.runs import memo; memo.ROOT = Path({str(repo)!r}); import "
        "tinypkg.slow as s; print(memo.run_once(s.compute, n=7))"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert outs == ["[7, 7, 7]", "[7, 7, 7]"]
    assert (repo / "calls.log").read_text() == "called\n"


def test_runtime_entry_point_memoizes_through_the_build(repo: Path) -> None:
    # The kernel hook installs the build's memoizer as runtime's backend, as in every
    # chapter's kernel.
    from chapter_code.core import runtime

    saved = dict(runtime._BACKEND)
    try:
        kernel_hooks._install_backend(str(ROOT))
        train = load()
        runtime.run_once(train.train, steps=2)
        runtime.run_once(train.train, steps=2)
        assert train.CALLS == [2]
    finally:
        runtime._BACKEND.clear()
        runtime._BACKEND.update(saved)


def test_a_book_without_its_own_runtime_gets_no_backend_and_imports_nothing(
    tmp_path: Path,
) -> None:
    # Not this checkout's runtime either, which the editable install would find (and
    # which imports PyTorch). A book that has one gets the backend:
    # test_the_kernel_hook_installs_the_build_as_backend (tests/core).
    code = (
        "import sys\nfrom bookbuild.execute import kernel_hooks\n"
        f"kernel_hooks._install_backend({str(tmp_path)!r})\n"
        "print('chapter_code.core.runtime' in sys.modules, 'torch' in sys.modules)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "False"]


def test_without_the_build_the_entry_point_computes_every_time(repo: Path) -> None:
    from chapter_code.core import runtime

    saved = dict(runtime._BACKEND)
    runtime._BACKEND.clear()
    try:
        train = load()
        runtime.run_once(train.train, steps=2)
        runtime.run_once(train.train, steps=2)
        assert train.CALLS == [2, 2]
    finally:
        runtime._BACKEND.update(saved)


def test_an_optional_stack_s_lock_keys_only_the_runs_that_import_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "lock.txt").write_text("torch-stack==1\n")
    pkg = tmp_path / "jaxpkg"
    pkg.mkdir()
    (pkg / "uses.py").write_text("import jax.numpy as jnp\n")
    (pkg / "plain.py").write_text("import torch\n")
    plain = memo.environment(["jaxpkg.plain"], tmp_path)["locks"]
    uses = memo.environment(["jaxpkg.uses"], tmp_path)["locks"]
    assert plain == uses  # no JAX lock yet: nothing to add
    (tmp_path / "requirements" / "jax.txt").write_text("jax==0.10.2\n")
    assert memo.environment(["jaxpkg.plain"], tmp_path)["locks"] == plain
    assert memo.environment(["jaxpkg.uses"], tmp_path)["locks"] != plain


def test_an_optional_stack_s_installed_version_keys_only_the_runs_that_import_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "jax.txt").write_text("jax==0.10.2\n")
    pkg = tmp_path / "jaxpkg"
    pkg.mkdir()
    (pkg / "uses.py").write_text("from jax import lax\n")
    (pkg / "plain.py").write_text("import torch\n")
    assert "jax" not in memo.environment(["jaxpkg.plain"], tmp_path)
    assert memo.environment(["jaxpkg.uses"], tmp_path)["jax"] == memo.metadata.version(
        "jax"
    )
    real = memo.metadata.version
    monkeypatch.setattr(
        memo.metadata, "version", lambda name: "9.9.9" if name == "jax" else real(name)
    )
    # a host's GPU JAX of another version
    assert memo.environment(["jaxpkg.uses"], tmp_path)["jax"] == "9.9.9"
