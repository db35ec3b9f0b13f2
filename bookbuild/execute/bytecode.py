"""Bytecode that cannot be older than its source: the repository's modules get
checked-hash ``.pyc`` files.

Python trusts an ordinary ``.pyc`` when the modification time and size of the
source match the ones recorded in it. An edit that keeps the size, with the
time put back (``cp -p``, ``touch -r``, a tool that restores times), would then
run the old code while the engine keys the new source. A *checked-hash*
``.pyc`` (PEP 552) records a hash of the source instead; Python compares it with
the source at every import, recompiles when they differ, and writes the new
``.pyc`` checked-hash again.

Before chapters' kernels (:mod:`bookbuild.execute.engine`) or a sweep's job processes
(:mod:`bookbuild.runs.sweeps`) start, :func:`prepare` makes the ``.pyc`` of every
Python source of the repository a checked-hash one (only those that exist, when
the user turned bytecode writing off: Python still reads the ones there).
Where a ``__pycache__`` folder cannot be written (a read-only checkout), the
processes are pointed at a bytecode folder under the build folder instead
(``PYTHONPYCACHEPREFIX``), prepared the same way.
"""

from __future__ import annotations

import importlib.util
import os
import py_compile
import sys
from collections.abc import Iterable
from pathlib import Path

from bookbuild.files import UserError

_CHECKED_HASH = 0b11  # the flags word of a checked-hash .pyc (PEP 552)


def sources(root: Path, skip: Iterable[str] = ()) -> list[Path]:
    """Every ``.py`` file under ``root``, except in the top-level folders ``skip`` and
    in hidden folders."""
    skipped = set(skip)
    found = []
    for folder, dirs, names in os.walk(root):
        top = os.path.relpath(folder, root) == "."
        dirs[:] = [
            d
            for d in dirs
            if d != "__pycache__"
            and not d.startswith(".")
            and not (top and d in skipped)
        ]
        found += [Path(folder) / name for name in names if name.endswith(".py")]
    return sorted(found)


def pyc_path(source: Path, prefix: Path | None = None) -> Path:
    """Where the kernels' interpreter looks for ``source``'s bytecode (under ``prefix``
    when one is set)."""
    if prefix is None:
        return Path(importlib.util.cache_from_source(str(source), optimization=""))
    folder = Path(os.path.abspath(source.parent))
    return Path(
        prefix, *folder.parts[1:], f"{source.stem}.{sys.implementation.cache_tag}.pyc"
    )


def is_checked(pyc: Path, source_bytes: bytes) -> bool:
    """Whether ``pyc`` is a checked-hash ``.pyc`` of exactly these source bytes, for
    this interpreter."""
    try:
        with pyc.open("rb") as handle:
            head = handle.read(16)
    except OSError:
        return False
    return (
        len(head) == 16
        and head[:4] == importlib.util.MAGIC_NUMBER
        and int.from_bytes(head[4:8], "little") == _CHECKED_HASH
        and head[8:] == importlib.util.source_hash(source_bytes)
    )


def pin(source: Path, pyc: Path, create: bool = True) -> bool:
    """Make ``pyc`` a checked-hash ``.pyc`` of ``source`` (or remove it); False where it
    cannot be written.

    A source that does not compile gets no ``.pyc`` at all, so its import reports the
    error instead of running an older version. With ``create`` false, a missing ``.pyc``
    stays missing.
    """
    if is_checked(pyc, source.read_bytes()) or (not create and not pyc.exists()):
        return True
    try:
        try:
            py_compile.compile(
                str(source),
                cfile=str(pyc),
                doraise=True,
                optimize=0,
                invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
            )
        except py_compile.PyCompileError:
            pyc.unlink(missing_ok=True)
    except OSError:
        return False
    return True


def prepare(root: Path, fallback: Path, skip: Iterable[str] = ()) -> dict[str, str]:
    """Pin the bytecode of every source under ``root``; return what the processes'
    environment needs.

    That is ``{}`` when every ``__pycache__`` could be written (or bytecode is off and
    nothing stale is left), else ``{"PYTHONPYCACHEPREFIX": <fallback>}``, with the
    bytecode pinned there.
    """
    create = not sys.dont_write_bytecode
    files = sources(root, skip)
    if all(pin(source, pyc_path(source), create) for source in files):
        return {}
    for source in files:
        if not pin(source, pyc_path(source, fallback), create):
            raise UserError(
                f"cannot write the bytecode of {source} under {fallback}; make that "
                "folder writable"
            )
    return {"PYTHONPYCACHEPREFIX": str(fallback)}
