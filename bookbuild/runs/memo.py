"""Memoized runs: an expensive, deterministic computation inside a chapter is done once
per content.

A chapter wraps a training run or a grid of runs with
:func:`chapter_code.core.runtime.run_once` (the one entry point taught code uses),
which comes here. The run's **key** covers everything that can change its
result:

- the function's qualified name and every definition it reaches, in the normal
  form of :mod:`bookbuild.runs.keys` (docstrings, comments, formatting and module paths
  left out, so a reformat or a move keeps the key, and an edit to a definition the
  run does not reach too);
- its keyword arguments (numbers, strings, lists, dicts and dataclasses,
  written as canonical JSON);
- the content of the ``data`` files it declares;
- the locked packages, torch's and Python's versions, the output profile, the
  pinned CPU numerics and the settings that change outputs (``BOOK_SEED``,
  ``BOOK_THREADS``, ``BOOK_DEVICE``, in one spelling each: ``runtime.settings``).

A hit returns the stored result bit for bit (``torch.save``/``torch.load``); a
miss computes and stores it. Results live under ``_build/runs/<key>/`` (never
committed; ``make clean`` or a fresh clone computes everything again), written
atomically, each with the SHA-256 of its file, so a damaged entry is reported
and recomputed, never loaded. Two chapters asking for the same key at the same
time compute it once: the second waits on the entry's lock and then reads it.
Every call is noted for the build report (:func:`bookbuild.execute.events.note_run`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import io
import json
import os
import re
import shutil
import sys
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

from filelock import FileLock

from bookbuild import files
from bookbuild.runs import keys

ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")


def runs_dir(root: Path | None = None) -> Path:
    root = root or ROOT
    override = os.environ.get("BOOK_BUILD_DIR", "").strip()
    return (Path(override).resolve() if override else root / "_build") / "runs"


def data_hashes(
    paths: tuple[str, ...] | list[str], root: Path, what: str
) -> dict[str, str]:
    """SHA-256 of each declared data file (paths relative to ``root``); a missing one is
    an error naming it."""
    out = {}
    for rel in paths:
        path = root / rel
        if not path.is_file():
            raise FileNotFoundError(f"{what} {rel} does not exist under {root}")
        out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def canonical(value: Any, where: str = "argument") -> Any:
    """A JSON-ready form of a run's argument; anything whose value JSON cannot pin down
    is an error."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            "__dataclass__": type(value).__qualname__,
            **{
                f.name: canonical(getattr(value, f.name), f"{where}.{f.name}")
                for f in dataclasses.fields(value)
            },
        }
    if isinstance(value, (list, tuple)):
        return [canonical(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError(f"{where}: a run's dict arguments need string keys")
        return {k: canonical(v, f"{where}[{k!r}]") for k, v in sorted(value.items())}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if type(value).__module__ == "torch" and type(value).__name__ == "device":
        # where the run computes (also in the environment's key)
        return {"__device__": str(value)}
    raise TypeError(
        f"{where}: a memoized run takes numbers, strings, lists, dicts and "
        f"dataclasses; got {type(value).__name__} (pass what builds it instead)"
    )


#: locks of optional stacks: part of a run's key only when the run's sources import the
#: package
OPTIONAL_LOCKS = {"jax": "requirements/jax.txt"}


def _imports(package: str, modules: list[str], root: Path) -> bool:
    pattern = re.compile(rf"^\s*(import|from)\s+{package}\b", re.MULTILINE)
    return any(
        path is not None and pattern.search(path.read_text(encoding="utf-8"))
        for path in (keys.module_file(name, root) for name in modules)
    )


def environment(
    modules: list[str] | None = None, root: Path | None = None
) -> dict[str, Any]:
    """Everything outside the repository's sources that changes a run's result.

    The book's lock files always count; an optional stack's lock
    (:data:`OPTIONAL_LOCKS`, the JAX edition's) counts only for a run whose
    ``modules`` import that package, so adding JAX to the book retrains no
    PyTorch run and stales no PyTorch sweep.
    """
    from chapter_code.core import numerics, runtime

    root = root or ROOT
    locks = hashlib.sha256()
    names = ["requirements/lock.txt", "requirements/torch.txt"]
    optional = [
        package
        for package in OPTIONAL_LOCKS
        if modules and _imports(package, modules, root)
    ]
    names += [OPTIONAL_LOCKS[package] for package in optional]
    for name in names:
        path = root / name
        locks.update(path.read_bytes() if path.exists() else b"")
    # one spelling each: " CPU ", "cpu" and unset on a CPU machine are "cpu"
    checked = runtime.settings()
    settings = {
        **checked.as_env(),
        **{k: os.environ.get(k, "") for k in numerics.CPU_PINS},
    }
    device = runtime.pick_device(checked.device)
    out = {
        "locks": locks.hexdigest(),
        "torch": metadata.version("torch"),
        "python": sys.version.split()[0],
        "profile": numerics.output_profile(device),
        "settings": settings,
        # the installed optional stacks too (a host's GPU JAX need not be the locked
        # one); only for their runs
        **{package: metadata.version(package) for package in optional},
    }
    # a GPU's CUDA and cuDNN versions; nothing on a CPU: its keys stay as they were
    gpu = numerics.gpu_software(device)
    if gpu:
        out["gpu_software"] = gpu
    return out


def run_key(
    fn: Callable[..., Any],
    kwargs: dict[str, Any],
    data: list[str] | tuple[str, ...] = (),
    root: Path | None = None,
) -> tuple[str, dict[str, Any]]:
    """The run's key and the description it hashes (stored beside the result, for the
    curious)."""
    root = root or ROOT
    module = inspect.getmodule(fn)
    if module is None or not getattr(module, "__file__", None):
        raise TypeError(f"run_once needs a function defined in a module, not {fn!r}")
    hashes = data_hashes(data, root, "run_once: declared data file")
    # the definitions are read where the function's package lives (a book's
    # chapter_code, wherever it is)
    found = keys.reached(
        f"{module.__name__}:{fn.__qualname__}", keys.package_root(module) or root
    )
    what = {
        # no module path in the key: a module moved keeps its runs
        "function": fn.__qualname__,
        "definitions": found.definitions,
        "arguments": canonical(kwargs),
        "data": hashes,
        "environment": environment(list(found.modules), root),
    }
    blob = json.dumps(what, sort_keys=True).encode()
    # where it is defined now, for the report and the page's provenance (after hashing:
    # no part of the key)
    return hashlib.sha256(blob).hexdigest()[:20], {
        **what,
        "function": f"{module.__name__}.{fn.__qualname__}",
    }


def _load(entry: Path) -> tuple[Any, dict[str, Any]] | None:
    """The stored result, or ``None`` when the entry is absent or damaged (reported,
    then removed)."""
    import torch

    from bookbuild.execute import events

    meta_file, result_file = entry / "meta.json", entry / "result.pt"
    if not meta_file.exists():
        return None
    try:
        meta = json.loads(meta_file.read_text())
        blob = result_file.read_bytes()
        if hashlib.sha256(blob).hexdigest() != meta["sha256"]:
            raise ValueError(
                "its result file does not match the hash recorded when it was stored"
            )
        return torch.load(io.BytesIO(blob), weights_only=False), meta
    except (
        OSError,
        ValueError,
        KeyError,
        RuntimeError,
        EOFError,
        json.JSONDecodeError,
    ) as exc:
        # to the build log, not the cell's output (where the gate would see it as a
        # changed output)
        events.report(
            f"run_once: the stored run {entry.name} is damaged ({exc}); computing it "
            "again"
        )
        shutil.rmtree(entry, ignore_errors=True)
        return None


def _store(entry: Path, result: Any, meta: dict[str, Any]) -> None:
    import torch

    buffer = io.BytesIO()
    torch.save(result, buffer)
    blob = buffer.getvalue()
    staging = entry.with_name(f".{entry.name}.{os.getpid()}.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    (staging / "result.pt").write_bytes(blob)
    files.write_json(
        staging / "meta.json", {**meta, "sha256": hashlib.sha256(blob).hexdigest()}
    )
    shutil.rmtree(entry, ignore_errors=True)
    os.replace(staging, entry)


def run_once(
    fn: Callable[..., T], /, *, data: list[str] | tuple[str, ...] = (), **kwargs: Any
) -> T:
    """``fn(**kwargs)``, computed once per key and read back bit for bit afterwards."""
    from bookbuild.execute import events

    key, what = run_key(fn, kwargs, data)
    store = runs_dir()
    files.ensure_writable(store)
    entry = store / key
    started = time.perf_counter()
    with FileLock(str(store / f"{key}.lock")):
        loaded = _load(entry)
        if loaded is not None:
            result, meta = loaded
            events.note_run(
                what["function"],
                key,
                "reused",
                time.perf_counter() - started,
                meta["wall_s"],
                seed=kwargs.get("seed"),
            )
            return result
        result = fn(**kwargs)
        wall = time.perf_counter() - started
        _store(
            entry,
            result,
            {
                "key": key,
                "wall_s": wall,
                "stored_at": time.strftime("%Y-%m-%d %H:%M:%S"),
                **what,
            },
        )
    events.note_run(
        what["function"], key, "computed", wall, wall, seed=kwargs.get("seed")
    )
    return result
