"""Files the build writes and reads back: atomic writes, one lock per checkout, readable
errors.

Everything the engine and the gate keep between runs (the manifest, traces,
baselines, the build report) is written through :func:`write_text` /
:func:`write_bytes`, which write a temporary file beside the target and rename
it into place, so a reader never sees half a file and a crash never leaves
one. :func:`checkout_lock` serialises builds of one checkout: a second
``make book`` or ``make check`` in the same folder waits for the first instead
of racing it for the manifest and the execution cache.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

#: a lab marker line in a listing (nbgrader's convention): it marks where a lab's stub
#: goes, and is not code
LAB_MARKER = re.compile(rb"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\r?\n", re.MULTILINE)


def code_bytes(path: Path) -> bytes:
    """A file's bytes as the build keys them: a Python source without its lab marker
    lines.

    A marker is a comment that the labs (:mod:`bookbuild.tools.labs`) read and the
    listings hide; adding or moving one changes no computation, so it must not
    re-execute a chapter, retrain a memoized run or stale a sweep's records. A
    file without markers keys exactly as its raw bytes.
    """
    data = path.read_bytes()
    return LAB_MARKER.sub(b"", data) if path.suffix == ".py" else data


class UserError(Exception):
    """A problem the user can fix (bad setting, corrupt file, read-only checkout);
    printed without a traceback."""


def write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temporary file in the same folder, then
    rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    umask = os.umask(0)
    os.umask(umask)
    # mkstemp makes the file private; the result should read like any other file
    os.chmod(tmp, 0o666 & ~umask)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text(path: Path, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def write_json(path: Path, value: Any) -> None:
    write_text(path, json.dumps(value, indent=1, sort_keys=True) + "\n")


def read_json(path: Path, what: str) -> Any | None:
    """Parsed JSON of ``path``; ``None`` if absent. A corrupt file is reported, removed
    and treated as absent."""
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        print(
            f"engine: {what} ({path}) is unreadable ({exc}); discarding it and "
            "starting afresh",
            file=sys.stderr,
        )
        path.unlink(missing_ok=True)
        return None


def ensure_writable(folder: Path) -> None:
    """Create ``folder`` or fail with a message that says what to do about a read-only
    checkout."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".write-probe-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise UserError(
            f"cannot write the build's state to {folder} ({exc.strerror}). In a "
            "read-only checkout, set BOOK_BUILD_DIR to a writable folder, e.g. "
            "BOOK_BUILD_DIR=/tmp/book-build make check"
        ) from None


@contextmanager
def checkout_lock(state_dir: Path, command: str) -> Iterator[None]:
    """Hold the checkout's build lock for the duration; wait (saying so) while another
    build holds it."""
    ensure_writable(state_dir)
    lock = FileLock(str(state_dir / "build.lock"))
    owner = state_dir / "build.lock.owner"
    try:
        lock.acquire(timeout=0)
    except Timeout:
        holder = owner.read_text().strip() if owner.exists() else "another process"
        print(
            f"{command}: another build of this checkout is running ({holder}); waiting "
            "for it to finish...",
            file=sys.stderr,
            flush=True,
        )
        lock.acquire()
    try:
        owner.write_text(
            f"pid {os.getpid()}, `{command}`, since {time.strftime('%H:%M:%S')}\n"
        )
        yield
    finally:
        owner.unlink(missing_ok=True)
        lock.release()
