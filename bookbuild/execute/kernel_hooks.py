"""What the engine installs inside a chapter's kernel before its first cell, and
collects after its last.

Four things, none of them visible on the page:

- **A trace of what the chapter read.** An audit hook sees every ``open``
  (``io.open_code`` of an import too) and every directory listing
  (``os.listdir``, ``os.scandir``) of a path inside the repository, and hashes
  the file's bytes (the folder's names) *at that moment*, as the engine's
  snapshot hashes them: the engine compares these hashes with its snapshot from
  before the run, so a file edited and reverted while the chapter ran is caught
  even though it reads the same before and after. At the end, the
  ``chapter_code`` modules in ``sys.modules`` are added, with the installed
  distributions the kernel imported (by name; the engine keys their versions
  and ``RECORD`` files). Files the chapter *wrote* are reported separately:
  they are its outputs, not its inputs; so are the Python sources it read as
  text rather than imported (:func:`_by_import`), which the engine keys on
  their bytes, comments included.
- **A summary of every figure.** A display formatter for matplotlib figures
  adds, beside the PNG, a JSON summary of what the figure says (titles, axis
  labels, tick labels, legend entries, annotations: compared exactly by the
  gate) and what it plots (line and marker coordinates, bar extents, axis
  limits: compared within tolerance). A wrong subscript in a label then fails
  the gate even where its pixels hardly change.
- **Diagnostics for the build log.** What the build's own machinery has to
  say inside a kernel (a damaged memoized run, recomputed; JAX's warning about
  a damaged entry of its compilation cache, compiled again) is collected by
  :func:`report` and handed to the engine with the trace, which prints it and
  puts it in the build report. Printed, it would become part of a cell's output,
  differ from the baseline and be stored by ``make accept``.
- **A watchdog.** If the process that started the kernel disappears (the build
  was killed), the kernel exits instead of running on as an orphan.

The engine removes the cells that call :func:`install` and :func:`finish`
before anything is stored or rendered.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import stat
import sys
import threading
import time
import warnings
from typing import Any

# What the chapter did is kept by the event sink, which the runs report to as well: no
# import circle
from bookbuild.execute.events import _state, note_run, report  # noqa: F401 - the engine reads them from here
from bookbuild.execute.events import cell as _cell

FIGURE_MIME = "application/vnd.bookbuild.figure+json"
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC

#: as :data:`bookbuild.files.LAB_MARKER` (not imported: the kernel would then depend on
#: bookbuild/files.py)
_LAB_MARKER = re.compile(rb"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\r?\n", re.MULTILINE)

_hashing = threading.local()  # the hook's own reads raise audit events too
# path -> (stat signature, hash): a file opened again
_known: dict[str, tuple[tuple[int, ...], str]] = {}


def _signature(st: os.stat_result) -> tuple[int, ...]:
    # ctime changes on every write and cannot be set back, so an edit that restores size
    # and mtime still shows
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _hash_file(path: str) -> str | None:
    """The file's bytes as the engine's snapshot hashes them (``files.code_bytes``), or
    None if unreadable."""
    try:
        # a FIFO must not block the hook
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        known = _known.get(path)
        if known is not None and known[0] == _signature(st):
            return known[1]
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        data = b"".join(chunks)
        if path.endswith(".py"):
            data = _LAB_MARKER.sub(b"", data)
        digest = hashlib.sha256(data).hexdigest()
        if _signature(os.fstat(fd)) == _signature(st):  # not written while it was read
            _known[path] = (_signature(st), digest)
        return digest
    finally:
        os.close(fd)


def _hash_listing(path: str) -> str | None:
    try:
        names = [
            n for n in os.listdir(path) if n != "__pycache__" and not n.startswith(".")
        ]
    except OSError:
        return None
    return hashlib.sha256("\n".join(sorted(names)).encode()).hexdigest()


def _seen(key: str, digest: str | None) -> None:
    if digest is not None:
        _state["seen"].setdefault(key, set()).add(digest)


def _inside(path: str) -> str | None:
    root = _state["root"]
    if not path.startswith(root):
        return None
    rel = path[len(root) :]
    first = rel.split(os.sep, 1)[0]
    if first in _state["excluded"] or "__pycache__" in rel:
        return None
    return rel


def _by_import(frame: Any) -> bool:
    """Whether an ``open`` was the import system reading a module's source to compile
    it.

    A source opened any other way (``inspect.getsource``, ``linecache`` for a traceback
    or a warning, a plain ``open``) was read as text: its comments may be in what the
    chapter shows, so the engine keys it on its bytes rather than its tokens
    (``keys.source_form``)."""
    caller = frame.f_back
    return (
        frame.f_code.co_filename.startswith("<frozen importlib")
        and frame.f_code.co_name == "get_data"
        and caller is not None
        and caller.f_code.co_name == "get_code"
    )


def _audit(event: str, args: tuple) -> None:
    if event == "open":
        if not args or not isinstance(args[0], (str, bytes, os.PathLike)):
            return
        path = os.path.abspath(os.fsdecode(args[0]))
        rel = _inside(path)
        if rel is None:
            return
        mode, flags = (
            (args[1] if len(args) > 1 else None),
            (args[2] if len(args) > 2 else 0),
        )
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            mode is None and isinstance(flags, int) and flags & _WRITE_FLAGS
        )
        (_state["written"] if writes else _state["read"]).add(rel)
        if not writes and not getattr(
            _hashing, "busy", False
        ):  # (the hook's own read is no reader's)
            if rel.endswith(".py") and not _by_import(sys._getframe(1)):
                _state.setdefault("text_read", set()).add(rel)
            _hashing.busy = True
            try:
                _seen(rel, _hash_file(path))
            finally:
                _hashing.busy = False
    elif event in ("os.listdir", "os.scandir"):
        caller = sys._getframe(1).f_code.co_filename
        # the import system's own lookups
        if caller.startswith("<frozen importlib") or "importlib" in caller:
            return
        target = args[0] if args and args[0] is not None else "."
        if isinstance(target, int):  # a file descriptor: nothing to name
            return
        path = os.path.abspath(os.fsdecode(target))
        rel = _inside(path)
        if rel is not None:
            _state["listed"].add(rel)
            if not getattr(_hashing, "busy", False):
                _hashing.busy = True
                try:
                    _seen(
                        rel.rstrip(os.sep) + "/" if rel else "./", _hash_listing(path)
                    )
                finally:
                    _hashing.busy = False


def _number(value: Any) -> Any:
    value = float(value)
    return value if math.isfinite(value) else str(value)


def _xy(data: Any) -> list:
    import numpy as np

    array = np.ma.filled(np.ma.asarray(data, dtype=float), np.nan)
    return (
        [[_number(v) for v in row] for row in np.atleast_2d(array).reshape(-1, 2)]
        if array.size
        else []
    )


def _texts(artists: Any) -> list[str]:
    return [t.get_text() for t in artists if t.get_visible() and t.get_text()]


def summarise_figure(fig: Any) -> dict[str, Any]:
    """What a matplotlib figure says (``text``: exact strings) and plots (``data``:
    numbers)."""
    import numpy as np
    from matplotlib.collections import PathCollection
    from matplotlib.image import AxesImage
    from matplotlib.patches import Rectangle

    fig.canvas.draw()  # tick labels exist only once the figure is drawn
    text: list[str] = []
    data: list[Any] = []
    if fig._suptitle is not None and fig._suptitle.get_text():
        text.append(f"suptitle: {fig._suptitle.get_text()}")
    text += [f"figure text: {t}" for t in _texts(fig.texts)]
    for n, ax in enumerate(fig.axes, start=1):
        if not ax.get_visible():
            continue
        where = f"axes {n}"
        for loc in ("left", "center", "right"):
            if ax.get_title(loc):
                text.append(f"{where} title: {ax.get_title(loc)}")
        if ax.axison:  # an axes switched off (a diagram) draws no labels or ticks
            text.append(f"{where} x label: {ax.get_xlabel()}")
            text.append(f"{where} y label: {ax.get_ylabel()}")
            text.append(f"{where} scales: {ax.get_xscale()}, {ax.get_yscale()}")
            text.append(f"{where} x ticks: " + " | ".join(_texts(ax.get_xticklabels())))
            text.append(f"{where} y ticks: " + " | ".join(_texts(ax.get_yticklabels())))
        legend = ax.get_legend()
        if legend is not None:
            text.append(f"{where} legend: " + " | ".join(_texts(legend.get_texts())))
        text += [f"{where} text: {t}" for t in _texts(ax.texts)]
        data.append(
            {
                "axes": n,
                "xlim": [_number(v) for v in ax.get_xlim()],
                "ylim": [_number(v) for v in ax.get_ylim()],
            }
        )
        for line in ax.get_lines():
            data.append(
                {
                    "axes": n,
                    "line": line.get_label(),
                    "xy": _xy(np.column_stack(line.get_data())),
                }
            )
        for coll in ax.collections:
            if isinstance(coll, PathCollection):
                data.append(
                    {
                        "axes": n,
                        "points": coll.get_label(),
                        "xy": _xy(coll.get_offsets()),
                    }
                )
        bars = [p for p in ax.patches if isinstance(p, Rectangle)]
        if bars:
            data.append(
                {
                    "axes": n,
                    "bars": [
                        [
                            _number(v)
                            for v in (
                                b.get_x(),
                                b.get_y(),
                                b.get_width(),
                                b.get_height(),
                            )
                        ]
                        for b in bars
                    ],
                }
            )
        for image in ax.images:
            if isinstance(image, AxesImage):
                array = np.ma.filled(
                    np.ma.asarray(image.get_array(), dtype=float), np.nan
                )
                data.append(
                    {
                        "axes": n,
                        "image": [
                            [_number(v) for v in row] for row in np.atleast_2d(array)
                        ],
                    }
                )
    summary: dict[str, Any] = {"text": text, "data": data}
    from bookbuild.lint.figure_layout import overlapping_texts

    overlaps = overlapping_texts(fig)
    if overlaps:  # only then: a clean figure's summary is what it always was
        summary["overlaps"] = overlaps
    return summary


def _install_figure_formatter() -> None:
    try:
        from IPython import get_ipython
        from IPython.core.formatters import BaseFormatter
        from traitlets import ObjectName, Unicode
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return

    class FigureSummaryFormatter(BaseFormatter):
        format_type = Unicode(FIGURE_MIME)
        print_method = ObjectName("_bookbuild_summary_")
        _return_type = (dict,)

        def pop(self, typ: Any, default: Any = None) -> Any:
            # matplotlib-inline removes every formatter's Figure printer when it picks
            # its image formats (on the first pyplot import, possibly mid-cell); this
            # formatter keeps its own.
            if (
                getattr(typ, "__name__", None) == "Figure"
                or typ == "matplotlib.figure.Figure"
            ):
                return default
            return super().pop(typ, default)

    formatter = FigureSummaryFormatter(parent=shell.display_formatter)
    shell.display_formatter.formatters[FIGURE_MIME] = formatter
    # only active types are computed on display
    if FIGURE_MIME not in shell.display_formatter.active_types:
        shell.display_formatter.active_types.append(FIGURE_MIME)
    formatter.for_type_by_name("matplotlib.figure", "Figure", summarise_figure)


def _watchdog() -> None:
    parent = os.getppid()
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:  # the process that started this kernel is gone
            os._exit(3)


#: JAX's warnings about its persistent compilation cache (which the engine turns on for
#: its kernels, :func:`bookbuild.execute.engine.reuse_jax_compilations`): a damaged
#: entry is compiled again, an entry that cannot be written is not kept; either way the
#: cell computes the same, so it is said in the build log, never in the cell.
_JAX_CACHE_WARNING = re.compile(
    r"^Error (reading|writing) persistent compilation cache entry "
)


def _route_jax_cache_warnings() -> None:
    shown = warnings.showwarning

    def show(
        message: Any,
        category: Any,
        filename: str,
        lineno: int,
        file: Any = None,
        line: Any = None,
    ) -> None:
        if _JAX_CACHE_WARNING.match(str(message)):
            report(
                f"JAX's compilation cache: {message} (compiled again, the same program)"
            )
            return
        shown(message, category, filename, lineno, file, line)

    warnings.showwarning = show


def install(root: str, excluded: list[str]) -> None:
    """Start tracing reads under ``root`` (except the top-level folders in ``excluded``)
    and summarising figures."""
    _state.update(root=root.rstrip(os.sep) + os.sep, excluded=set(excluded))
    sys.addaudithook(_audit)
    _install_figure_formatter()
    _route_jax_cache_warnings()
    _install_backend(root)
    threading.Thread(target=_watchdog, name="bookbuild-watchdog", daemon=True).start()


def _install_backend(root: str) -> None:
    """Hand the build's memoizer and sweep loader to the taught code
    (``runtime.use_backend``).

    A book without ``chapter_code/core/runtime.py`` under its root (the engine's own
    fixture books) has nothing to install into; then nothing is imported, not even
    another checkout's runtime that the environment's editable install would find (it
    imports PyTorch: about 2 s in every kernel of the engine's tests).
    """
    if not os.path.isfile(os.path.join(root, "chapter_code", "core", "runtime.py")):
        return
    try:
        from chapter_code.core import runtime
    except ImportError:
        return
    runtime.use_backend(run_once=_run_once, load_sweep=_load_sweep)


def _run_once(fn: Any, /, **kwargs: Any) -> Any:
    # Imported on first use, as before the entry point existed: a chapter that memoizes
    # nothing does not read bookbuild.runs, so an edit there re-executes only the
    # chapters that memoize.
    from bookbuild.runs import calls
    from bookbuild.runs.memo import run_once

    # the records read, and the call as a run made ahead
    def note(loaded: Any, record: dict) -> None:
        _note_sweep(loaded)
        note_run(
            f"{fn.__module__}.{fn.__qualname__}",
            f"{loaded.name}/{loaded.config}/{record['job']}",
            "made ahead",
            0.0,
            float(record.get("wall_s") or 0.0),
            seed=kwargs.get("seed"),
        )

    served = calls.serve(
        fn, {k: v for k, v in kwargs.items() if k != "data"}, note=note
    )
    # a call a sweep made ahead of the build: its record, checked
    if served is not calls.NOT_STORED:
        return served
    return run_once(fn, **kwargs)


def _note_sweep(loaded: Any) -> None:
    commits = sorted({str(r.get("git_commit", "")) for r in loaded.records} - {""})
    _state["sweeps"].append(
        {
            "sweep": loaded.name,
            "config": loaded.config,
            "records": len(loaded.records),
            "total": loaded.total,
            "commits": commits,
            "cell": _cell(),
        }
    )


def _load_sweep(name: str, **kwargs: Any) -> Any:
    from bookbuild.runs.sweeps import load
    from chapter_code.core.device import pick_device

    # the build's device picks the record set: a GPU build reads its own records of a
    # per-device configuration
    loaded = load(name, device=str(pick_device()), **kwargs)
    if loaded is None:  # none_if_unrun and no record yet
        _state["sweeps"].append(
            {
                "sweep": name,
                "config": kwargs.get("config", "cpu"),
                "records": 0,
                "total": None,
                "commits": [],
                "cell": _cell(),
            }
        )
        return None
    _note_sweep(loaded)
    return loaded


def imported_distributions() -> list[str]:
    """The installed distributions whose top-level modules this process imported (not
    the standard library's)."""
    from importlib import metadata

    tops = set()
    for name in {name.partition(".")[0] for name in list(sys.modules)} - set(
        sys.stdlib_module_names
    ):
        file = getattr(sys.modules.get(name), "__file__", None)
        # The repository's own modules are keyed by their files. An environment inside
        # the checkout (`make book`'s .venv) is not the repository's own: its folder is
        # one the trace leaves out, so its packages count here.
        if not file or "root" not in _state or _inside(os.path.abspath(file)) is None:
            tops.add(name)
    owners = metadata.packages_distributions()
    return sorted({dist for top in tops for dist in owners.get(top, [])})


def finish(out: str) -> None:
    """Write what the chapter read, listed and wrote, its modules and its runtime
    fingerprint to ``out``."""
    modules = set()
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        rel = _inside(os.path.abspath(file)) if file else None
        if rel is not None and rel.endswith(".py"):
            modules.add(rel)
    fingerprint = None
    runtime = sys.modules.get("chapter_code.core.runtime")
    if runtime is not None:
        try:
            fingerprint = runtime.fingerprint().__dict__
        except RuntimeError:  # the chapter never called runtime.setup()
            pass
    root = _state["root"]
    # An open that failed (a library probing for a file that is not there) read nothing,
    # and a module whose __file__ is a bare relative name (some compiled extensions'
    # helpers) is not a file of the repository.
    read = {rel for rel in _state["read"] | modules if os.path.isfile(root + rel)}
    trace = {
        "read": sorted(read - _state["written"]),
        "seen": {rel: sorted(digests) for rel, digests in _state["seen"].items()},
        "distributions": imported_distributions(),
        "written": sorted(_state["written"]),
        "read_as_text": sorted(_state.get("text_read", set()) - _state["written"]),
        "listed": sorted(_state["listed"]),
        "fingerprint": fingerprint,
        "runs": _state["runs"],
        "sweeps": _state["sweeps"],
        "notes": _state["notes"],
    }
    # outside the repository's traced folders (under _build)
    with open(out, "w") as handle:
        json.dump(trace, handle)
