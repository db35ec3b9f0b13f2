"""The device, the seeds and the thread count: what a chapter or a lab calls first.

Every chapter calls :func:`setup` in its first code cell, and every test that needs a
seeded generator calls :func:`seed_everything`. Nothing else in the book sets a seed, a
thread count or a device, so two builds on the same machine print the same numbers.
Importing this module first pins the CPU's kernels (:mod:`chapter_code.core.numerics`,
the machine's side of a build).

Environment variables (read once, by :func:`setup`, and checked by :func:`settings`,
which the build also calls before any chapter starts; case and surrounding spaces do not
matter):

``BOOK_DEVICE``
    ``cpu``, ``cuda`` or ``cuda:N``; unset means CUDA when available, else CPU.
``BOOK_THREADS``
    CPU threads for PyTorch's intra-op pool; unset means 1. The book's models
    are small, so one thread per chapter is as fast as two, avoids threads
    spinning against each other when several kernels share the cores, and lets
    the engine run one chapter per core. The CPU baselines assume 1.
``BOOK_SEED``
    The base seed; unset means 0.

:func:`run_once` and :func:`load_sweep` are how a page reads a long training: inside the
book's build they are served by the build (:func:`use_backend`); anywhere else
:func:`run_once` simply calls the function.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

# isort: off
# numerics first: importing it pins the CPU's kernels, before torch loads
from chapter_code.core import numerics
import numpy as np
import torch
# isort: on

from chapter_code.core.device import pick_device

# SettingError and Settings are also read as runtime.<name>
from chapter_code.core.machine import (  # noqa: F401
    DEFAULT_SEED,
    DEFAULT_THREADS,
    SettingError,
    Settings,
    _int_from_env,
)

T = TypeVar("T")


def settings(environ: Mapping[str, str] | None = None) -> Settings:
    """``BOOK_DEVICE``, ``BOOK_THREADS`` and ``BOOK_SEED`` (of ``environ``, else this
    process), checked.

    Case and surrounding spaces are ignored, and an unset variable is its default (the
    device is the one
    :func:`pick_device` picks), so every harmless spelling of one choice is one
    :class:`Settings`. A value this machine cannot use raises :class:`SettingError`,
    before anything runs.
    """
    env = os.environ if environ is None else environ
    device = pick_device(env.get("BOOK_DEVICE", ""))
    return Settings(
        device="cpu" if device.type == "cpu" else f"cuda:{device.index or 0}",
        threads=_int_from_env("BOOK_THREADS", DEFAULT_THREADS, 1, env),
        seed=_int_from_env("BOOK_SEED", DEFAULT_SEED, 0, env),
    )


def seed_everything(seed: int) -> None:
    """Seed Python's, NumPy's and PyTorch's generators (CPU and every CUDA device)."""
    if not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative int; got {seed!r}")
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # seeds CUDA generators too


_STATE: dict[str, object] = {}


def setup(seed: int | None = None) -> torch.device:
    """Fix threads, seeds and determinism for this process and return the device.

    Call once at the top of a chapter. Calling it again re-seeds and returns the
    same device, so a cell can restart a seeded experiment.
    """
    checked = settings()
    base_seed = checked.seed if seed is None else seed
    device = pick_device()
    numerics.check_pins()
    torch.set_num_threads(checked.threads)
    numerics.make_deterministic(device)
    seed_everything(base_seed)
    _STATE.update(device=device, threads=checked.threads, seed=base_seed)
    return device


def fingerprint() -> numerics.Fingerprint:
    """What this build runs on (device, kernels, versions, threads, seed).

    Call :func:`setup` first.
    """
    if "device" not in _STATE:
        raise RuntimeError(
            "call chapter_code.core.runtime.setup() before fingerprint()"
        )
    device = _STATE["device"]
    assert isinstance(device, torch.device)
    return numerics.fingerprint(device, int(_STATE["threads"]), int(_STATE["seed"]))  # type: ignore[arg-type]


#: What the book's build installs when it starts a chapter's kernel
#: (:func:`use_backend`); empty elsewhere.
_BACKEND: dict[str, Callable[..., Any]] = {}


def use_backend(
    *,
    run_once: Callable[..., Any] | None = None,
    load_sweep: Callable[..., Any] | None = None,
) -> None:
    """Hand :func:`run_once` and :func:`load_sweep` to the book's build: the one entry
    point between the two.

    The build (``bookbuild.execute.kernel_hooks.install``) calls this in every chapter's
    kernel before the first cell, with its memoizer and its checked sweep
    loader. Taught code never imports the build: a lab, a shell or a test that
    never calls this computes directly. ``None`` removes an entry.
    """
    for name, fn in (("run_once", run_once), ("load_sweep", load_sweep)):
        if fn is None:
            _BACKEND.pop(name, None)
        elif not callable(fn):
            raise TypeError(f"{name} must be callable or None; got {fn!r}")
        else:
            _BACKEND[name] = fn


def run_once(fn: Callable[..., T], /, *, data: Sequence[str] = (), **kwargs: Any) -> T:
    """Return ``fn(**kwargs)``, computing it only once per content of its code,
    arguments and data.

    Inside the book's build the result is memoized (the build's memoizer,
    installed by :func:`use_backend`): a later call with the same function
    source (and the sources of the ``chapter_code`` modules it imports), the
    same arguments, the same ``data`` files, packages and device profile reads
    the stored result back bit for bit. Outside the build (a lab, a student's
    notebook, a shell, a test) it simply calls ``fn``.
    """
    memoized = _BACKEND.get("run_once")
    if memoized is None:
        return fn(**kwargs)
    return memoized(fn, data=tuple(data), **kwargs)


class SweepRecordsUnavailable(RuntimeError):
    """:func:`load_sweep` was called outside the book's build, which alone checks
    records against the code.
    """


def load_sweep(
    name: str,
    config: str = "cpu",
    allow_partial: bool = False,
    none_if_unrun: bool = False,
    edition: str | None = None,
) -> Any:
    """The stored records of experiment sweep ``name`` (defined in
    :mod:`bookbuild.runs.registry`), checked.

    Inside the book's build every record is checked against the current code,
    parameters and data: a stale, damaged or missing record raises the build's
    ``SweepNotReady``, which names the sweep and the ``make experiments``
    command that refreshes it. ``allow_partial=True`` returns a partial sweep
    marked as such (``.complete`` false, ``.missing`` listed, ``.describe()``
    says PARTIAL), never silently averaged. ``none_if_unrun=True`` returns ``None``
    when the configuration has no record at all (a page that says the study has
    not run there yet). ``edition``: for a configuration re-run on each device,
    ``"cpu"`` or ``"gpu"`` reads that edition's records whatever this build's
    device (a page that sets the two side by side); by default, this build's.
    Outside the build there is no
    checked copy to fall back on, so this raises
    :class:`SweepRecordsUnavailable` saying how to read them.
    """
    loader = _BACKEND.get("load_sweep")
    if loader is None:
        raise SweepRecordsUnavailable(
            f"the records of sweep {name!r} are read and checked by the book's build; "
            f"outside it, run `python -m bookbuild experiments status {name}` in the "
            "repository, or the sweep's job function (bookbuild.runs.registry) "
            "directly"
        )
    return loader(
        name,
        config=config,
        allow_partial=allow_partial,
        none_if_unrun=none_if_unrun,
        edition=edition,
    )
