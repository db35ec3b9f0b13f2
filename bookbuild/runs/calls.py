"""Stored calls served to a page: ``runtime.run_once(f, **kwargs)`` read from a sweep
record when one holds the call.

A call sweep (``Sweep.calls`` in :mod:`bookbuild.runs.registry`) runs, ahead of the
build, the calls of taught functions that take too long for it, and keeps each whole
result in a record (:mod:`bookbuild.runs.codec`). A page makes the same call as any
other: ``runtime.run_once(train_recall, contender=..., seed=0, config=...,
device=device)``. :func:`serve` finds the record whose job is that very call (the
device aside: each device has its own record set), checks it as every record is
checked (:func:`bookbuild.runs.sweeps.load`: a stale, damaged or missing record
stops the build with the command that refreshes it), and gives back what the call
returned, its modules on the call's device. A call no sweep holds is computed and
memoized (:mod:`bookbuild.runs.memo`).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

#: the module that defines the sweeps (``bookbuild.runs.sweeps.REGISTRY``)
REGISTRY = "bookbuild.runs.registry"
#: what :func:`serve` returns for a call that no sweep holds
NOT_STORED = object()


@functools.lru_cache(maxsize=1)
def call_names() -> frozenset[str]:
    """The names of the functions the registry's call sweeps hold, read from its source
    without importing it.

    Importing the registry imports every taught module, which would make every page that
    memoizes a run depend on all of them; so a call whose function is not named here is
    not looked up at all.
    """
    spec = importlib.util.find_spec(REGISTRY)
    if spec is None or not spec.origin:
        return frozenset()
    tree = ast.parse(Path(spec.origin).read_text())
    names = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.keyword)
            and node.arg == "calls"
            and isinstance(node.value, (ast.Tuple, ast.List))
        ):
            names |= {e.id for e in node.value.elts if isinstance(e, ast.Name)}
    return frozenset(names)


@functools.lru_cache(maxsize=1)
def _index() -> dict[str, list[tuple[Any, str, str, Any]]]:
    """Function name -> (sweep, config, job name, canonical parameters) of every stored
    call."""
    from bookbuild.runs import memo, sweeps

    out: dict[str, list[tuple[Any, str, str, Any]]] = {}
    for sweep in sweeps.registry().values():
        for config, grid in (
            sweep.configs.items() if sweeps.is_call_sweep(sweep) else ()
        ):
            for name, params in grid.jobs.items():
                out.setdefault(params["function"], []).append(
                    (sweep, config, name, memo.canonical(params))
                )
    return out


def find(
    fn: Callable[..., Any], kwargs: Mapping[str, Any]
) -> tuple[Any, str, str] | None:
    """The (sweep, config, job name) whose job is the call ``fn(**kwargs)``, or
    ``None``."""
    if fn.__name__ not in call_names():
        return None
    candidates = [c for c in _index().get(fn.__name__, ()) if fn in c[0].calls]
    if not candidates:
        return None
    from bookbuild.runs import codec, memo

    try:
        wanted = memo.canonical(codec.job(fn, **kwargs))
    except (TypeError, ValueError):  # an argument no record can hold: not a stored call
        return None
    for sweep, config, name, params in candidates:
        if params == wanted:
            return sweep, config, name
    return None


def _to_device(value: Any, device: Any) -> Any:
    import torch

    if isinstance(value, torch.nn.Module):
        return value.to(device)
    if isinstance(value, tuple):
        return tuple(_to_device(v, device) for v in value)
    if isinstance(value, list):
        return [_to_device(v, device) for v in value]
    if isinstance(value, dict):
        return {k: _to_device(v, device) for k, v in value.items()}
    return value


def serve(
    fn: Callable[..., Any],
    kwargs: Mapping[str, Any],
    note: Callable[[Any, dict], None] | None = None,
) -> Any:
    """What ``fn(**kwargs)`` returned, from the record of a call sweep that holds this
    call; :data:`NOT_STORED` when none holds it. ``note`` receives the loaded records
    and the call's own record (what the build report lists as read by the page, and the
    call as a run made ahead)."""
    from bookbuild.runs import codec, sweeps
    from chapter_code.core.device import pick_device, resolve_device

    found = find(fn, kwargs)
    if found is None:
        return NOT_STORED
    sweep, config, name = found
    loaded = sweeps.load(
        sweep.name, config=config, sweep=sweep, device=str(pick_device())
    )
    record = next(r for r in loaded.records if r["job"] == name)
    if note is not None:
        note(loaded, record)
    result = codec.stored_result(record, sweeps.function_path(fn))
    return _to_device(result, resolve_device(kwargs.get("device")))
