"""The execution engine: run each chapter when, and only when, something it depends on changed.

Jupyter Book's own cache keys a chapter on its code cells alone, so an edit to
an imported module would leave stale numbers on the page. This engine keys a
chapter on

- its code cells (source and options, hashed as jupyter-cache hashes them),
- every ``chapter_code`` module the chapter imported, traced in the kernel
  during its last execution, and every file under ``data/`` it opened (an
  audit hook in the kernel sees each ``open``),
- the locked dependency versions and the installed torch,
- the device profile (``cpu`` or ``cuda``).

A chapter whose key is unchanged is a cache hit and does not run. A chapter
that runs is executed with nbclient in its own kernel; independent chapters
run in parallel, as many at a time as the cores allow at the configured thread
count. The executed notebook goes into the jupyter-cache database that myst-nb
reads, so Sphinx renders exactly these outputs and never executes anything
itself. The executed notebook and a manifest entry (key, dependencies, wall
time, outcome) are kept under ``_build/engine``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import nbformat
import yaml

ROOT = Path(__file__).resolve().parent.parent
ENGINE_DIR = Path("_build") / "engine"
JUPYTER_CACHE = Path("_build") / ".jupyter_cache"
LOCK_FILES = ["requirements/lock.txt", "requirements/torch.txt"]
DEFAULT_CELL_TIMEOUT = 1800  # the memory-test grid alone takes about 10 minutes on 2 CPU cores
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")

TRACE_START = """\
import os as _bk_os, sys as _bk_sys
_bk_opened = set()
_bk_data = {data!r}
def _bk_audit(event, args):
    if event == "open" and args and isinstance(args[0], (str, bytes, _bk_os.PathLike)):
        _p = _bk_os.path.abspath(_bk_os.fsdecode(args[0]))
        if _p.startswith(_bk_data):
            _bk_opened.add(_p)
_bk_sys.addaudithook(_bk_audit)
"""

TRACE_END = """\
import json as _bk_json
_bk_modules = sorted(
    _m.__file__ for _m in list(_bk_sys.modules.values())
    if getattr(_m, "__file__", None) and _bk_os.path.abspath(_m.__file__).startswith({code!r})
)
_bk_fp = None
if "chapter_code.runtime" in _bk_sys.modules:
    try:
        _bk_fp = _bk_sys.modules["chapter_code.runtime"].fingerprint().__dict__
    except RuntimeError:  # the chapter never called runtime.setup()
        pass
with open({out!r}, "w") as _bk_f:
    _bk_json.dump({{"modules": _bk_modules, "data": sorted(_bk_opened), "fingerprint": _bk_fp}}, _bk_f)
"""


@dataclass
class ChapterResult:
    """What happened to one chapter in one engine run (one row of the build report)."""

    chapter: str
    status: str  # "hit", "executed" or "failed"
    reason: str
    wall_s: float
    key: str
    dependencies: dict[str, str] = field(default_factory=dict)
    error: str = ""
    executed_at: str = ""
    fingerprint: dict[str, Any] | None = None  # what the chapter's own kernel ran on (runtime.fingerprint)


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def chapters(root: Path = ROOT) -> list[str]:
    """Docnames (e.g. ``book/recurrence``) of the table of contents that are executable notebooks."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    names = [toc["root"]]
    for part in toc.get("parts", []):
        for entry in part.get("chapters", []):
            names.append(entry["file"])
    return [n for n in names if (root / f"{n}.md").exists() and is_notebook(root / f"{n}.md")]


def is_notebook(path: Path) -> bool:
    head = path.read_text().split("---", 2)
    return len(head) == 3 and "kernelspec" in head[1]


def read_notebook(path: Path) -> nbformat.NotebookNode:
    """Read a MyST notebook exactly as myst-nb reads it (so the code-cell hashes agree)."""
    from myst_nb.core.read import read_myst_markdown_notebook
    from myst_parser.config.main import MdParserConfig

    return read_myst_markdown_notebook(path.read_text(), MdParserConfig(), path=path)


def code_hash(nb: nbformat.NotebookNode, root: Path) -> str:
    from jupyter_cache import get_cache

    return get_cache(str(root / JUPYTER_CACHE)).create_hashed_notebook(nb)[1]


def environment_key(root: Path) -> str:
    digest = hashlib.sha256()
    for name in LOCK_FILES:
        path = root / name
        digest.update(path.read_bytes() if path.exists() else b"")
    digest.update(metadata.version("torch").encode())
    return digest.hexdigest()[:16]


def device_profile() -> str:
    from chapter_code.runtime import pick_device

    return pick_device().type


def dependency_hashes(root: Path, files: list[str]) -> dict[str, str]:
    """Content hashes of recorded dependencies; a vanished file hashes as 'missing'."""
    out = {}
    for rel in files:
        path = root / rel
        out[rel] = sha256_file(path) if path.exists() else "missing"
    return out


def chapter_key(code: str, deps: dict[str, str], env: str, profile: str) -> str:
    blob = json.dumps({"code": code, "deps": deps, "env": env, "profile": profile}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def load_manifest(root: Path) -> dict[str, Any]:
    path = root / ENGINE_DIR / "manifest.json"
    return json.loads(path.read_text()) if path.exists() else {}


def save_manifest(root: Path, manifest: dict[str, Any]) -> None:
    path = root / ENGINE_DIR / "manifest.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


def executed_path(root: Path, chapter: str) -> Path:
    return root / ENGINE_DIR / "executed" / f"{Path(chapter).name}.ipynb"


def _label_of(nb: nbformat.NotebookNode, index: int) -> str:
    cell = nb.cells[index]
    return str(cell.metadata.get("label", f"cell #{index + 1}"))


def execute_chapter(root_s: str, chapter: str, timeout: int) -> dict[str, Any]:
    """Execute one chapter in a fresh kernel (runs in a worker process); return a plain dict."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError

    root = Path(root_s)
    path = root / f"{chapter}.md"
    nb = read_notebook(path)
    trace_file = root / ENGINE_DIR / "trace" / f"{Path(chapter).name}.json"
    trace_file.parent.mkdir(parents=True, exist_ok=True)
    start = nbformat.v4.new_code_cell(TRACE_START.format(data=str(root / "data") + os.sep))
    end = nbformat.v4.new_code_cell(TRACE_END.format(code=str(root / "chapter_code") + os.sep, out=str(trace_file)))
    traced = nbformat.from_dict(json.loads(json.dumps(nb)))
    traced.cells = [start, *traced.cells, end]
    current = {"index": 0}

    def on_cell_execute(cell: Any, cell_index: int) -> None:
        current["index"] = cell_index

    client = NotebookClient(
        traced,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        record_timing=False,
        on_cell_execute=on_cell_execute,
    )
    started = time.perf_counter()
    error = ""
    try:
        client.execute()
    except CellTimeoutError:
        error = (
            f"{chapter}.md: cell '{_label_of(traced, current['index'])}' ran longer than the "
            f"{timeout} s cell timeout (BOOK_CELL_TIMEOUT)"
        )
    except CellExecutionError as exc:
        error = f"{chapter}.md: cell '{_label_of(traced, current['index'])}' failed:\n{exc}"
    except Exception:  # kernel death and the like
        error = f"{chapter}.md: execution failed:\n{traceback.format_exc()}"
    wall = time.perf_counter() - started
    error = ANSI_ESCAPE.sub("", error)
    traced.cells = traced.cells[1:-1]
    trace = {"modules": [], "data": [], "fingerprint": None}
    if trace_file.exists() and not error:
        trace = json.loads(trace_file.read_text())
    deps = [os.path.relpath(p, root) for p in trace["modules"] + trace["data"]]
    return {
        "nb": traced,
        "wall_s": wall,
        "error": error,
        "deps": sorted(set(deps)),
        "fingerprint": trace["fingerprint"],
    }


def store_for_myst_nb(root: Path, chapter: str, nb: nbformat.NotebookNode, seconds: float) -> None:
    """Put an executed notebook where myst-nb's cache mode finds it (jupyter-cache, keyed by code cells)."""
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    cache = get_cache(str(root / JUPYTER_CACHE))
    cache.cache_notebook_bundle(
        CacheBundleIn(nb, str(root / f"{chapter}.md"), data={"execution_seconds": seconds}),
        check_validity=False,
        overwrite=True,
    )


def in_myst_nb_cache(root: Path, nb: nbformat.NotebookNode) -> bool:
    from jupyter_cache import get_cache

    try:
        get_cache(str(root / JUPYTER_CACHE)).match_cache_notebook(nb)
    except KeyError:
        return False
    return True


def workers(threads: int) -> int:
    """Chapters run side by side: as many as the cores allow at ``threads`` threads each."""
    return max(1, (os.cpu_count() or 1) // max(1, threads))


def run(root: Path = ROOT, only: list[str] | None = None, force: bool = False) -> list[ChapterResult]:
    """Bring every chapter's executed notebook up to date; return one result per chapter."""
    from chapter_code.runtime import DEFAULT_THREADS

    threads = int(os.environ.get("BOOK_THREADS", DEFAULT_THREADS))
    timeout = int(os.environ.get("BOOK_CELL_TIMEOUT", DEFAULT_CELL_TIMEOUT))
    os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")  # grow, never preallocate
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    # Kernels import this tree's chapter_code (not another checkout's editable install).
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in [str(root), os.environ.get("PYTHONPATH", "")] if p)
    env, profile = environment_key(root), device_profile()
    manifest = load_manifest(root)
    names = only or chapters(root)
    results: dict[str, ChapterResult] = {}
    to_run: list[tuple[str, str, str]] = []
    for chapter in names:
        nb = read_notebook(root / f"{chapter}.md")
        code = code_hash(nb, root)
        old = manifest.get(chapter, {})
        deps = dependency_hashes(root, sorted(old.get("dependencies", {})))
        key = chapter_key(code, deps, env, profile)
        reason = ""
        if force:
            reason = "forced"
        elif not old:
            reason = "never executed"
        elif old.get("status") == "failed":
            reason = "failed last time"
        elif old.get("code") != code:
            reason = "code cells changed"
        elif old.get("dependencies") != deps:
            changed = [d for d in deps if old["dependencies"].get(d) != deps[d]]
            reason = "changed: " + ", ".join(changed)
        elif old.get("env") != env:
            reason = "locked dependencies changed"
        elif old.get("profile") != profile:
            reason = f"device profile {old.get('profile')} -> {profile}"
        elif not executed_path(root, chapter).exists() or not in_myst_nb_cache(root, nb):
            reason = "executed outputs missing"
        if reason:
            to_run.append((chapter, code, reason))
        else:
            results[chapter] = ChapterResult(
                chapter,
                "hit",
                "unchanged",
                old.get("wall_s", 0.0),
                key,
                deps,
                "",
                old.get("executed_at", ""),
                old.get("fingerprint"),
            )
    if to_run:
        n = min(workers(threads), len(to_run))
        print(f"engine: executing {len(to_run)} chapter(s), {n} at a time: " + ", ".join(c for c, _, _ in to_run))
        with ProcessPoolExecutor(max_workers=n) as pool:
            futures = {c: pool.submit(execute_chapter, str(root), c, timeout) for c, _, _ in to_run}
            for chapter, code, reason in to_run:
                out = futures[chapter].result()
                deps = dependency_hashes(root, out["deps"])
                key = chapter_key(code, deps, env, profile)
                stamp = time.strftime("%Y-%m-%d %H:%M:%S")
                status = "failed" if out["error"] else "executed"
                results[chapter] = ChapterResult(
                    chapter, status, reason, out["wall_s"], key, deps, out["error"], stamp, out["fingerprint"]
                )
                print(f"engine: {chapter}: {status} in {out['wall_s']:.1f} s ({reason})")
                if not out["error"]:
                    path = executed_path(root, chapter)
                    path.parent.mkdir(parents=True, exist_ok=True)
                    nbformat.write(out["nb"], path)
                    store_for_myst_nb(root, chapter, out["nb"], out["wall_s"])
                    os.utime(root / f"{chapter}.md")  # make Sphinx re-read the page and pick up the new outputs
                manifest[chapter] = {
                    "code": code,
                    "dependencies": deps,
                    "env": env,
                    "profile": profile,
                    "status": status,
                    "wall_s": out["wall_s"],
                    "executed_at": stamp,
                    "fingerprint": out["fingerprint"],
                }
        save_manifest(root, manifest)
    return [results[c] for c in names]
