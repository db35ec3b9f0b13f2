"""The execution engine: run each chapter when, and only when, something it depends on
changed.

Jupyter Book's own cache keys a chapter on its code cells alone, so an edit to
an imported module would leave stale numbers on the page. This engine keys a
chapter on

- its code cells (source and options, hashed as jupyter-cache hashes them);
- every file inside the repository that the chapter read or whose folder it
  listed during its last execution (``chapter_code`` modules, the style file,
  ``data/`` files...), traced in the kernel (:mod:`bookbuild.execute.kernel_hooks`);
- the settings that change outputs: ``BOOK_SEED``, ``BOOK_THREADS``,
  ``BOOK_DEVICE`` (checked and in one spelling each, :func:`book_settings`),
  the pinned CPU numerics, the output profile, Python's version;
- the locked dependency versions and the installed torch (on a GPU, also its CUDA and
  cuDNN versions);
- the installed distributions its kernel imported: version, a digest of ``RECORD`` and
  the size and time of each installed file (:func:`distribution_digests`; memoized runs
  and sweep records keep their own keys).

The key is taken **before** a chapter executes: every repository file is
hashed first, and the chapter's dependencies are looked up in that snapshot.
In the kernel, each repository file is hashed again the moment the chapter
opens or imports it (:mod:`bookbuild.execute.kernel_hooks`), and after the run each
dependency once more. A file that was read in another version than the
snapshot's, or changed by the end, makes the result *stale*: it is discarded,
and the build says which file and asks for another run, so outputs never pass
for a version of the code that did not produce them, not even after an edit
reverted mid-run. An earlier execution whose key is the key now (an edit
reverted) is reused from a short history when its outputs are still cached.

A chapter whose key is unchanged is a cache hit and does not run. A chapter
that runs is executed with nbclient in its own kernel; chapters run in
parallel, as many at a time as the cores allow at the configured thread count, the
longest (by its last execution here and :data:`COLD_SECONDS`) first.
The executed notebook goes into the jupyter-cache database that myst-nb reads,
so Sphinx renders exactly these outputs, and the gate reads them back from the
same place (:func:`rendered_notebook`), with a digest that catches a cached
notebook edited or damaged behind the engine's back.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import sys
import threading
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat
import yaml

from bookbuild import files
from bookbuild.execute import machine_facts
from bookbuild.files import UserError

if TYPE_CHECKING:
    from chapter_code.core.machine import Settings

ROOT = Path(__file__).resolve().parents[2]
LOCK_FILES = ["requirements/lock.txt", "requirements/torch.txt", "requirements/jax.txt"]
# seconds; the book's longest cells, memoized trainings, take one to two minutes cold
DEFAULT_CELL_TIMEOUT = 1800
# seconds at least, for the build's own first and last cells of a chapter
BUILD_CELL_TIMEOUT = 300
# seconds between "still running" lines (BOOKBUILD_PROGRESS_EVERY overrides, for tests)
PROGRESS_EVERY = 30.0
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
#: Top-level folders whose files are never dependencies (build outputs, tools' caches,
#: version control).
UNTRACKED = [
    ".git",
    "_build",
    ".venv",
    ".pytest_cache",
    ".hypothesis",
    ".ruff_cache",
    "node_modules",
    "baselines",
    "benchmarks",
    "tests",
    ".ci",
]
#: Cold execution times (s) of the chapters (every training computed), for the order in
#: which they start (:func:`execution_order`), in a fresh clone (CI) above all, where
#: there is no history. Measured 2026-12-04 on the 2-core AVX2 machine, two chapters at
#: a time, after Chapters 3, 4, 6 and 7 moved their trainings to sweep records: the
#: gated chapter is the one that still trains a run itself (46 s of its 72). Only their
#: order matters: a chapter missing here counts as 0 s, and a stale number only costs
#: some idle time at the end.
COLD_SECONDS = {
    "book/gated": 72,
    "book/language-models": 59,
    "book/gradients": 46,
    "book/generating": 35,
    "book/recurrence": 27,
    "book/beyond": 24,
    "book/depth": 23,
    "book/building": 4,
}


@dataclass
class ChapterResult:
    """What happened to one chapter in one engine run (one row of the build report)."""

    chapter: str
    status: str  # "hit", "executed", "failed" or "stale"
    reason: str
    wall_s: float
    key: str
    dependencies: dict[str, str] = field(default_factory=dict)
    error: str = ""
    executed_at: str = ""
    # what the chapter's own kernel ran on (runtime.fingerprint)
    fingerprint: dict[str, Any] | None = None
    # memoized runs of its last execution
    runs: list[dict[str, Any]] = field(default_factory=list)
    # the build's diagnostics from inside this execution's kernel
    notes: list[str] = field(default_factory=list)


# -------------------------------------------------------------------- where state lives


def build_dir(root: Path) -> Path:
    """``_build`` in the checkout, or ``$BOOK_BUILD_DIR`` (for a read-only checkout)."""
    override = os.environ.get("BOOK_BUILD_DIR", "").strip()
    return Path(override).resolve() if override else root / "_build"


def engine_dir(root: Path) -> Path:
    return build_dir(root) / "engine"


def jupyter_cache_dir(root: Path) -> Path:
    return build_dir(root) / ".jupyter_cache"


def manifest_path(root: Path) -> Path:
    return engine_dir(root) / "manifest.json"


# --------------------------------------------------------------------- reading chapters


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def chapters(root: Path = ROOT) -> list[str]:
    """Docnames (e.g. ``book/recurrence``) of the table of contents that are executable
    notebooks."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    names = [toc["root"]]
    for part in toc.get("parts", []):
        for entry in part.get("chapters", []):
            names.append(entry["file"])
    return [
        n
        for n in names
        if (root / f"{n}.md").exists() and is_notebook(root / f"{n}.md")
    ]


def is_notebook(path: Path) -> bool:
    head = path.read_text().split("---", 2)
    return len(head) == 3 and "kernelspec" in head[1]


#: Parsed notebooks of this process, (path, text) -> notebook: one build reads each page
#: five times (the staleness pass, the gate, the claims, the figure check, the
#: provenance), and parsing is most of a no-change build's cost.
_PARSED: dict[tuple[str, str], nbformat.NotebookNode] = {}


def read_notebook(path: Path) -> nbformat.NotebookNode:
    """Read a MyST notebook exactly as myst-nb reads it (so the code-cell hashes agree);
    a fresh copy per call.

    A cell whose options myst-nb cannot read (bad YAML) is a :class:`UserError` of one
    line naming the file, the line of the cell and the cell, not myst-nb's traceback. A
    text read before in this process is not parsed again (the key is the whole text, so
    an edit is always seen).
    """
    import copy

    text = path.read_text()
    key = (str(path), text)
    if key not in _PARSED:
        # a long-lived process (make watch) keeps only recent texts
        if len(_PARSED) > 64:
            _PARSED.clear()
        _PARSED[key] = _parse_notebook(path, text)
    return copy.deepcopy(_PARSED[key])


def _parse_notebook(path: Path, text: str) -> nbformat.NotebookNode:
    from myst_nb.core.read import MystMetadataParsingError, read_myst_markdown_notebook
    from myst_parser.config.main import MdParserConfig

    try:
        return read_myst_markdown_notebook(text, MdParserConfig(), path=path)
    except MystMetadataParsingError as exc:
        text = str(exc)
        where = re.search(r"[Cc]ode cell (\d+) at line (\d+)", text)
        why = re.search(r"msg='([^']*)'", text)
        cell = f"code cell #{where.group(1)}" if where else "a code cell"
        line = f":{where.group(2)}" if where else ""
        reason = (
            why.group(1)
            if why
            else text.splitlines()[0]
            if text
            else type(exc).__name__
        )
        raise UserError(
            f"{path}{line}: the options of {cell} (the cell starting on that line) "
            f"cannot be read: {reason}"
        ) from None


def _cache(root: Path) -> Any:
    from jupyter_cache import get_cache

    from bookbuild.execute import cachekey

    # a caption or a label does not re-execute a page (bookbuild.execute.cachekey)
    cachekey.install()
    return get_cache(str(jupyter_cache_dir(root)))


def repair_jupyter_cache(root: Path) -> None:
    """Move a damaged execution cache aside (one message) so that the run rebuilds it; a
    sound one is left alone.

    jupyter-cache's ``global.db`` is an SQLite file: garbage in it, or a database cut
    short, would otherwise make every chapter re-execute and then fail to store its
    outputs, on every run.
    """
    import shutil
    import sqlite3

    folder = jupyter_cache_dir(root)
    db = folder / "global.db"
    if not db.exists():
        return
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
            verdict = connection.execute("PRAGMA quick_check").fetchone()[0]
        connection.close()
        if verdict != "ok":
            raise sqlite3.DatabaseError(verdict)
        _cache(root).list_cache_records()  # the tables jupyter-cache expects are there
    # sqlite3's and SQLAlchemy's errors alike: the file cannot serve as the cache
    except Exception as exc:
        aside = folder.with_name(folder.name + ".damaged")
        shutil.rmtree(aside, ignore_errors=True)
        folder.rename(aside)
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(
            f"engine: the execution cache {db} is damaged ({reason}); moved it to "
            f"{aside} and rebuilding it (every chapter executes again)",
            file=sys.stderr,
            flush=True,
        )


def code_hash(nb: nbformat.NotebookNode, root: Path) -> str:
    return _cache(root).create_hashed_notebook(nb)[1]


# --------------------------------------------------------------------------- the key


def int_setting(name: str, default: int, minimum: int) -> int:
    """An integer environment variable, or a :class:`UserError` naming it and the
    accepted range."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise UserError(
            f"{name} must be a whole number >= {minimum}; got {raw!r}"
        ) from None
    if value < minimum:
        raise UserError(f"{name} must be a whole number >= {minimum}; got {value}")
    return value


def environment_key(root: Path) -> str:
    """The locked packages, the installed torch and the Python version, as one short
    hash."""
    digest = hashlib.sha256()
    for name in LOCK_FILES:
        path = root / name
        digest.update(path.read_bytes() if path.exists() else b"")
    digest.update(metadata.version("torch").encode())
    digest.update(sys.version.encode())
    # A host's GPU build of JAX (bookbuild/tools/venv.py) need not be jax.txt's version:
    # count it when it differs.
    jax = installed_version("jax")
    jax_lock = root / "requirements" / "jax.txt"
    if (
        jax is not None
        and jax_lock.exists()
        and f"jax=={jax}\n" not in jax_lock.read_text()
    ):
        digest.update(f"jax=={jax}".encode())
    # A GPU build's outputs depend on its CUDA and cuDNN too; a CPU build's key is
    # unchanged (nothing is added).
    gpu = gpu_software()
    if gpu:
        digest.update(json.dumps(gpu, sort_keys=True).encode())
    return digest.hexdigest()[:16]


def distribution_digests(
    names: list[str], cache: dict[str, str] | None = None
) -> dict[str, str]:
    """Per installed distribution: its version, a digest of its ``RECORD`` and one of
    its installed files.

    The chapter key counts the distributions a chapter's kernel imported
    (``kernel_hooks.imported_distributions``), so upgrading, downgrading or reinstalling
    one of them (a new ``RECORD``), or editing a file of it in place (a file's size or
    modification time, :func:`installed_files_digest`), re-executes the chapters that
    import it; one no longer installed is ``missing``. Memoized runs and sweep records
    keep their own keys (the lock files, torch, Python). ``cache`` (name -> digest)
    spares stating a distribution's files twice in one engine run.
    """
    out = {}
    for name in names:
        if cache is not None and name in cache:
            out[name] = cache[name]
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            out[name] = "missing"
            continue
        record = dist.read_text("RECORD")
        if record is None:
            out[name] = f"{dist.version} no-RECORD"
        else:
            out[name] = (
                f"{dist.version} {sha256_bytes(record.encode())[:16]} files "
                f"{installed_files_digest(Path(str(dist.locate_file(''))), record)}"
            )
        if cache is not None:
            cache[name] = out[name]
    return out


def installed_files_digest(base: Path, record: str) -> str:
    """A digest of the path, size and modification time of every file ``record`` (a
    ``RECORD``) lists under ``base``.

    Stat only, no reading (torch installs thousands of files): an edit in place changes
    the size or the modification time, which ``RECORD``, written at install time, does
    not show. Bytecode (``__pycache__``) is left out: the interpreter may rewrite it,
    and it follows its source.
    """
    digest = hashlib.sha256()
    for line in record.splitlines():
        rel = line.rsplit(",", 2)[0]
        if not rel or "__pycache__" in rel or rel.endswith(".pyc"):
            continue
        try:
            st = os.stat(base / rel)
        except OSError:
            digest.update(f"{rel}\0missing\n".encode())
            continue
        digest.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def gpu_software() -> dict[str, str]:
    """PyTorch, CUDA and cuDNN versions when the build runs on a GPU
    (``numerics.gpu_software``); ``{}`` on a CPU."""
    book_settings()  # a bad setting: its own one-line error
    return dict(machine_facts.fact(build_dir(ROOT), "gpu"))


def installed_version(package: str) -> str | None:
    """The installed version of ``package``, or ``None`` when it is not installed."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def book_settings() -> Settings:
    """``BOOK_DEVICE``, ``BOOK_THREADS`` and ``BOOK_SEED``, checked
    (``runtime.settings``, as the chapters do; kept by :mod:`machine_facts`).

    A value this machine cannot use is a :class:`UserError` (one line naming the setting
    and what it accepts), raised before any chapter starts.
    """
    from chapter_code.core.machine import SettingError

    try:
        return machine_facts.settings(build_dir(ROOT))
    except SettingError as exc:
        raise UserError(str(exc)) from None


def output_settings() -> dict[str, str]:
    """Every setting outside the repository's files that changes what a chapter prints,
    each in one spelling."""
    from chapter_code.core.machine import CPU_PINS

    # " CPU ", "cpu" and unset on a CPU machine are all "cpu"
    settings = book_settings().as_env()
    settings.update({name: os.environ.get(name, "") for name in CPU_PINS})
    return settings


def device_profile() -> str:
    """The output profile of this machine: ``cpu-avx2``, a GPU kind (``cuda-sm90``), or
    an unpinned CPU profile."""
    book_settings()  # a bad setting: its own one-line error
    return str(machine_facts.fact(build_dir(ROOT), "profile"))


def pin_bytecode(root: Path) -> None:
    """Before any process imports the repository's code: no ``.pyc`` of it can be older
    than its source.

    See :mod:`bookbuild.execute.bytecode`; a read-only checkout's processes get their
    bytecode under the build folder.
    """
    from bookbuild.execute import bytecode

    os.environ.update(bytecode.prepare(root, build_dir(root) / "pycache", UNTRACKED))


def snapshot(root: Path) -> dict[str, str]:
    """Hash every file (and every folder's listing) a chapter could read, before
    anything runs.

    Keys are paths relative to ``root``; a folder's key ends in ``/`` and its
    hash covers the sorted names it contains.
    """
    out: dict[str, str] = {}
    for folder, dirs, names in os.walk(root):
        rel_folder = os.path.relpath(folder, root)
        if rel_folder == ".":
            dirs[:] = sorted(d for d in dirs if d not in UNTRACKED)
        dirs[:] = sorted(
            d for d in dirs if d != "__pycache__" and not d.startswith(".")
        )
        prefix = "" if rel_folder == "." else rel_folder + "/"
        out[prefix or "./"] = sha256_bytes("\n".join(sorted(dirs + names)).encode())
        for name in names:
            try:
                out[prefix + name] = sha256_bytes(files.code_bytes(Path(folder) / name))
            except OSError:
                out[prefix + name] = "unreadable"
    return out


def current_hashes(root: Path, deps: list[str]) -> dict[str, str]:
    """Hash ``deps`` now (files, and folders ending in ``/``); a vanished one hashes as
    ``missing``."""
    out = {}
    for rel in deps:
        path = root / rel
        if rel.endswith("/"):
            if path.is_dir():
                names = [
                    p.name
                    for p in path.iterdir()
                    if p.name != "__pycache__" and not p.name.startswith(".")
                ]
                out[rel] = sha256_bytes("\n".join(sorted(names)).encode())
            else:
                out[rel] = "missing"
        else:
            out[rel] = (
                sha256_bytes(files.code_bytes(path)) if path.is_file() else "missing"
            )
    return out


def chapter_key(
    code: str,
    deps: dict[str, str],
    env: str,
    profile: str,
    settings: dict[str, str],
    dists: dict[str, str] | None = None,
) -> str:
    blob = json.dumps(
        {
            "code": code,
            "deps": deps,
            "env": env,
            "profile": profile,
            "settings": settings,
            "dists": dists or {},
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


_FORMS: dict[
    tuple[str, str], str | None
] = {}  # (path, hash of its bytes) -> its token form, in this process


def source_forms(root: Path, rels: list[str], before: dict[str, str]) -> dict[str, str]:
    """The token form (``keys.source_form``) of each Python source among ``rels`` still
    as the snapshot hashed it.

    A chapter's entry keeps the forms of the sources it imported (not those it read as
    text, which ``kernel_hooks`` names), so that a later edit of their comments alone
    re-executes nothing (:func:`_unchanged_computation`). A source changed since the
    snapshot, unreadable, or not plain Python has no form here and is keyed on its bytes
    alone."""
    from bookbuild.runs import keys

    out = {}
    for rel in rels:
        if not rel.endswith(".py") or rel not in before:
            continue
        if (rel, before[rel]) not in _FORMS:
            try:
                data = files.code_bytes(root / rel)
            except OSError:
                continue
            if (
                sha256_bytes(data) != before[rel]
            ):  # edited since the snapshot: no form for a version not keyed
                continue
            _FORMS[(rel, before[rel])] = keys.source_form(data)
        form = _FORMS[(rel, before[rel])]
        if form is not None:
            out[rel] = form
    return out


def _cell_forms(nb: nbformat.NotebookNode) -> list[tuple[str, Any]] | None:
    """Each code cell's token form without places, with its tags (what keys its
    execution); ``None`` where a cell is not plain Python or may show a traceback
    (``raises-exception``), whose lines would move."""
    from bookbuild.runs import keys

    out = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tags = list(cell.metadata.get("tags", []))
        form = keys.source_form(str(cell.source), places=False)
        if form is None or "raises-exception" in tags:
            return None
        out.append((form, tags))
    return out


def _cached_notebook(root: Path, code: str) -> nbformat.NotebookNode | None:
    """The executed notebook jupyter-cache keeps for the code-cell hash ``code``, or
    None."""
    from jupyter_cache.cache.db import NbCacheRecord

    cache = _cache(root)
    try:
        return cache.get_cache_bundle(
            NbCacheRecord.record_from_hashkey(code, cache.db).pk
        ).nb
    except Exception:  # not there, or unreadable: no reuse, the chapter executes
        return None


def _unchanged_computation(
    root: Path,
    chapter: str,
    old: dict[str, Any],
    nb: nbformat.NotebookNode,
    code: str,
    deps: dict[str, str],
    before: dict[str, str],
) -> tuple[dict[str, Any], str] | None:
    """``old`` brought up to the page's code cells and the dependencies now, where all
    that changed since it executed is comments; with what changed. ``None`` where
    anything else changed (the chapter executes).

    Code cells: the stored executed notebook of ``old`` has, cell for cell, the page's
    token forms and tags. A dependency: a Python source the chapter imported whose token
    form is the one recorded when it executed (:func:`source_forms`), so its code
    objects, line numbers included, are the ones the chapter ran. Its outputs are then
    what executing it again would print; the gate compares them with the baselines as
    ever."""
    entry, changed = dict(old), []
    if old.get("code") != code:
        cached = _cached_notebook(root, str(old.get("code")))
        forms = _cell_forms(nb)
        if cached is None or forms is None or _cell_forms(cached) != forms:
            return None
        if outputs_digest(cached) != old.get("outputs"):
            return None
        entry["code"] = code
        changed.append("code cells")
    if old.get("dependencies") != deps:
        moved = [d for d in deps if old["dependencies"].get(d) != deps[d]]
        recorded = old.get("forms") or {}
        now = source_forms(root, moved, before)
        if any(d not in recorded or now.get(d) != recorded[d] for d in moved):
            return None
        entry["dependencies"] = deps
        changed += moved
    return entry, "only comments changed (" + ", ".join(
        changed
    ) + "): its outputs reused"


def reuse_outputs(
    root: Path, chapter: str, old_code: str, nb: nbformat.NotebookNode
) -> str:
    """Store the page's code cells with the outputs executed for ``old_code`` (cells of
    the same token forms), where myst-nb and the gate find them; return their digest."""
    cached = _cached_notebook(root, old_code)
    if cached is None:
        raise KeyError(old_code)
    merged = nbformat.from_dict(json.loads(json.dumps(cached)))
    page_cells = [c for c in nb.cells if c.cell_type == "code"]
    for cell, page in zip(
        (c for c in merged.cells if c.cell_type == "code"), page_cells, strict=True
    ):
        cell.source, cell.metadata = page.source, page.metadata
    store_for_myst_nb(root, chapter, merged, 0.0)
    return outputs_digest(rendered_notebook(root, chapter))


def _reuse_if_comments_only(
    root: Path,
    chapter: str,
    old: dict[str, Any],
    nb: nbformat.NotebookNode,
    code: str,
    deps: dict[str, str],
    before: dict[str, str],
    keyed: tuple[dict[str, str], str, str, dict[str, str]],
) -> tuple[dict[str, Any], str] | None:
    """The manifest entry and the report's reason of a chapter whose edits since ``old``
    are comments alone (:func:`_unchanged_computation`) and which nothing else makes
    stale (``keyed``: the settings, environment, profile and distributions now, as
    :func:`_why_stale` takes them), with its outputs stored for the page's code cells as
    they are now; ``None`` when it must execute."""
    if old.get("status") != "executed":
        return None
    found = _unchanged_computation(root, chapter, old, nb, code, deps, before)
    settings, env, profile, dists = keyed
    if found is None or _why_stale(found[0], code, deps, settings, env, profile, dists):
        return None
    entry, reason = found
    try:
        if entry["code"] != old["code"]:
            entry["outputs"] = reuse_outputs(root, chapter, old["code"], nb)
    except (KeyError, ValueError) as exc:
        print(
            f"engine: {chapter}: the outputs to reuse could not be stored ({exc!r}); "
            "executing it",
            flush=True,
        )
        return None
    problem = cached_outputs_problem(root, chapter, entry.get("outputs"))
    if problem:
        print(f"engine: {chapter}: {problem}; executing it again", flush=True)
        return None
    print(f"engine: {chapter}: {reason}", flush=True)
    return entry, reason


# --------------------------------------------------------------------------- the
# manifest and the cache


def load_manifest(root: Path) -> dict[str, Any]:
    data = files.read_json(manifest_path(root), "the engine's manifest")
    if data is not None and not isinstance(data, dict):
        print(
            f"engine: the manifest {manifest_path(root)} has an unexpected shape; "
            "starting afresh",
            file=sys.stderr,
        )
        data = None
    return data or {}


def save_manifest(root: Path, manifest: dict[str, Any]) -> None:
    files.write_json(manifest_path(root), manifest)


#: executions remembered per chapter besides the manifest's last one, so that reverting
#: an edit reuses outputs
HISTORY = 8


def history_path(root: Path) -> Path:
    return engine_dir(root) / "history.json"


def load_history(root: Path) -> dict[str, list[dict[str, Any]]]:
    data = files.read_json(history_path(root), "the engine's execution history")
    return data if isinstance(data, dict) else {}


def remember(
    history: dict[str, list[dict[str, Any]]], chapter: str, entry: dict[str, Any]
) -> None:
    """Keep ``entry`` (an execution whose outputs were stored) among the chapter's last
    :data:`HISTORY`."""
    kept = [
        e
        for e in history.get(chapter, [])
        if isinstance(e, dict) and e.get("outputs") != entry.get("outputs")
    ]
    history[chapter] = [entry, *kept][:HISTORY]


def _from_history(
    root: Path,
    chapter: str,
    past: list[dict[str, Any]],
    code: str,
    before: dict[str, str],
    env: str,
    profile: str,
    settings: dict[str, str],
    dist_cache: dict[str, str] | None = None,
) -> dict[str, Any] | None:
    """An earlier execution whose key is the chapter's key now and whose outputs are
    still cached, or None.

    jupyter-cache keeps one executed notebook per state of the code cells, so an edit of
    a cell reverted finds the outputs of the reverted state; an edit of a module
    reverted does not (that state's outputs were replaced), and the outputs' digest says
    so.
    """
    for entry in past:
        if (
            not isinstance(entry, dict)
            or entry.get("status") != "executed"
            or entry.get("code") != code
        ):
            continue
        deps = {
            d: before.get(d, "missing") for d in sorted(entry.get("dependencies", {}))
        }
        dists = distribution_digests(
            sorted(entry.get("distributions") or {}), dist_cache
        )
        if _why_stale(entry, code, deps, settings, env, profile, dists):
            continue
        if not cached_outputs_problem(root, chapter, entry.get("outputs")):
            return entry
    return None


def outputs_digest(nb: nbformat.NotebookNode) -> str:
    """A hash of every code cell's outputs: what the page will show."""
    outs = [cell.get("outputs", []) for cell in nb.cells if cell.cell_type == "code"]
    return sha256_bytes(json.dumps(outs, sort_keys=True).encode())


#: Rendered notebooks of this process: one build renders each page four times (the
#: staleness pass, the gate, the claims, the figure check).
_RENDERED: dict[tuple[str, str, tuple], nbformat.NotebookNode] = {}


def _store_state(root: Path) -> tuple:
    """The name, size and modification time of every executed notebook jupyter-cache
    holds: storing, replacing or removing one changes it."""
    folder = jupyter_cache_dir(root) / "executed"
    try:
        entries = sorted(folder.glob("*/*.ipynb"))
    except OSError:
        return ()
    out = []
    for path in entries:
        try:
            st = path.stat()
        except OSError:
            continue
        out.append((path.parent.name, st.st_size, st.st_mtime_ns))
    return tuple(out)


def rendered_notebook(root: Path, chapter: str) -> nbformat.NotebookNode:
    """The chapter exactly as myst-nb renders it: the page's source merged with the
    cached outputs; a fresh copy per call.

    Raises :class:`KeyError` when the cache holds no outputs for the page's
    current code cells. A page whose text and whose store of executed notebooks are as
    they were earlier in this process is not merged again.
    """
    import copy

    path = root / f"{chapter}.md"
    key = (str(path), path.read_text(), _store_state(root))
    if key not in _RENDERED:
        if len(_RENDERED) > 64:  # a long-lived process (make watch)
            _RENDERED.clear()
        nb = read_notebook(path)
        _RENDERED[key] = _cache(root).merge_match_into_notebook(nb)[1]
    return copy.deepcopy(_RENDERED[key])


def cached_outputs_problem(root: Path, chapter: str, digest: str | None) -> str:
    """Why the cached outputs of ``chapter`` cannot be used ("" when they can)."""
    try:
        nb = rendered_notebook(root, chapter)
    except KeyError:
        return "executed outputs missing from the cache"
    except Exception as exc:  # a damaged cache entry: unreadable notebook, missing file
        return f"cached outputs unreadable ({type(exc).__name__})"
    if digest is not None and outputs_digest(nb) != digest:
        return "cached outputs were modified after execution"
    return ""


def store_for_myst_nb(
    root: Path, chapter: str, nb: nbformat.NotebookNode, seconds: float
) -> None:
    """Put an executed notebook where myst-nb's cache mode finds it (jupyter-cache,
    keyed by code cells)."""
    import shutil

    from jupyter_cache.base import CacheBundleIn

    cache = _cache(root)
    # A folder left without its notebook (deleted by hand) would stop jupyter-cache from
    # writing a new one.
    shutil.rmtree(
        jupyter_cache_dir(root) / "executed" / cache.create_hashed_notebook(nb)[1],
        ignore_errors=True,
    )
    cache.cache_notebook_bundle(
        CacheBundleIn(
            nb, str(root / f"{chapter}.md"), data={"execution_seconds": seconds}
        ),
        check_validity=False,
        overwrite=True,
    )


# ---------------------------------------------------------------- executing one chapter


def _worker_init() -> None:
    """Pool workers leave Ctrl-C to the engine, and exit if the engine disappears
    (killed).

    A worker leaves the engine's process group: a SIGINT sent to the group (Ctrl-C in a
    terminal, ``kill -INT -PGID``) reaches the engine alone, which stops the workers and
    their kernels itself, or, where the engine ignores SIGINT (started in the
    background), carries on; it never kills a kernel from under a cell.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        os.setpgid(0, 0)
    except OSError:  # not permitted here: the SIGINT stays ignored all the same
        pass
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                _kill_children(os.getpid())
                os._exit(3)

    threading.Thread(target=watch, name="bookbuild-watchdog", daemon=True).start()


def _kill_children(pid: int) -> int:
    """Kill every descendant of ``pid`` (kernels start in sessions of their own); return
    how many."""
    import psutil

    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return 0
    for child in children:
        try:
            child.kill()
        except psutil.NoSuchProcess:
            pass
    return len(children)


def _label_of(nb: nbformat.NotebookNode, index: int) -> str:
    """A cell as progress names it: its label; the build's own first and last cells by
    what they do."""
    if index == 0:
        return "(build: starting the kernel's hooks)"
    if index == len(nb.cells) - 1:
        return "(build: recording what the chapter read)"
    cell = nb.cells[index]
    first = next(
        (ln.strip() for ln in str(cell.source).splitlines() if ln.strip()), "(empty)"
    )
    return str(cell.metadata.get("label", f"unlabelled cell starting {first[:40]!r}"))


class KernelStartError(Exception):
    """The kernel exited while the client still waited for it to start (raised by
    :func:`_watch_kernel_start`)."""


def _kernel_socket_dir() -> Path:
    """A private folder for a kernel's sockets, with a path short enough for a Unix
    socket's name."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="bk-kernel-"))
    # a long TMPDIR: socket names are limited to 107 bytes
    if len(str(folder)) > 80 and Path("/tmp").is_dir():
        folder.rmdir()
        folder = Path(tempfile.mkdtemp(prefix="bk-kernel-", dir="/tmp"))
    return folder


def _kernel_config(sockets: Path) -> Any:
    """Kernels talk over Unix sockets in ``sockets``, not TCP ports.

    A TCP port is chosen free and then bound by the kernel a moment later, so on a busy
    machine another process can take it first: the kernel then dies at start ("Address
    already in use") and the client, sending to a port that answers nothing, can wait
    for ever. Socket files in a private folder cannot clash.
    """
    from traitlets.config import Config

    config = Config()
    config.KernelManager.transport = "ipc"
    config.KernelManager.connection_file = str(sockets / "kernel.json")
    return config


def _watch_kernel_start(
    client: Any, current: dict[str, Any], done: threading.Event
) -> None:
    """Stop a client that waits for a kernel which already exited before running its
    first cell.

    jupyter_client notices a dead kernel between its attempts to reach it, but a send to
    a kernel that never bound its sockets can block; then, 10 s after the kernel process
    ended, this raises :class:`KernelStartError` in the waiting (main) thread through
    SIGUSR1 (again every 10 s until it ends).
    """
    if threading.current_thread() is not threading.main_thread():
        return

    def stop(signum: int, frame: Any) -> None:
        if not current.get("started") and not done.is_set():
            raise KernelStartError("the kernel exited while starting")

    signal.signal(signal.SIGUSR1, stop)

    def watch() -> None:
        while not done.wait(1.0) and not current.get("started"):
            process = getattr(getattr(client.km, "provisioner", None), "process", None)
            if process is not None and process.poll() is not None:
                while not done.wait(10.0) and not current.get("started"):
                    os.kill(os.getpid(), signal.SIGUSR1)
                return

    threading.Thread(target=watch, name="bookbuild-kernel-start", daemon=True).start()


def execute_chapter(root_s: str, chapter: str, timeout: int) -> dict[str, Any]:
    """Execute one chapter in a fresh kernel (runs in a worker process); return a plain
    dict."""
    import subprocess

    from nbclient import NotebookClient
    from nbclient.exceptions import (
        CellExecutionError,
        CellTimeoutError,
        DeadKernelError,
    )

    root = Path(root_s)
    path = root / f"{chapter}.md"
    nb = read_notebook(path)
    state = engine_dir(root)
    trace_file = state / "trace" / f"{Path(chapter).name}.json"
    trace_file.parent.mkdir(parents=True, exist_ok=True)
    trace_file.unlink(missing_ok=True)
    start = nbformat.v4.new_code_cell(
        "import bookbuild.execute.kernel_hooks as _bk_hooks\n"
        f"_bk_hooks.install({str(root)!r}, {UNTRACKED!r})"
    )
    end = nbformat.v4.new_code_cell(f"_bk_hooks.finish({str(trace_file)!r})")
    traced = nbformat.from_dict(json.loads(json.dumps(nb)))
    traced.cells = [start, *traced.cells, end]
    current = {"index": 0, "since": time.perf_counter()}
    every = float(os.environ.get("BOOKBUILD_PROGRESS_EVERY", PROGRESS_EVERY))
    started = time.perf_counter()
    done = threading.Event()

    def on_cell_execute(cell: Any, cell_index: int) -> None:
        current.update(index=cell_index, since=time.perf_counter(), started=True)

    def on_cell_executed(cell: Any, cell_index: int, execute_reply: Any) -> None:
        took = time.perf_counter() - current["since"]
        if took >= every and 0 < cell_index < len(traced.cells) - 1:
            print(
                f"engine: {chapter}: cell '{_label_of(traced, cell_index)}' finished "
                f"in {took:.0f} s",
                flush=True,
            )

    def ticker() -> None:
        while not done.wait(every):
            label = _label_of(traced, current["index"])
            print(
                f"engine: {chapter}: cell '{label}' running for "
                f"{time.perf_counter() - current['since']:.0f} s (chapter "
                f"{time.perf_counter() - started:.0f} s)",
                flush=True,
            )

    kernel_log = state / "kernels" / f"{Path(chapter).name}.log"
    kernel_log.parent.mkdir(parents=True, exist_ok=True)
    sockets = _kernel_socket_dir()

    # The build's own first and last cells (starting the hooks, recording the reads) are
    # not the chapter's: on a loaded machine the first one imports the build for
    # seconds, so they are never held to a short BOOK_CELL_TIMEOUT meant for the
    # chapter's cells.
    def cell_timeout(cell: Any) -> int:
        return (
            max(timeout, BUILD_CELL_TIMEOUT)
            if cell is start or cell is end
            else timeout
        )

    client = NotebookClient(
        traced,
        timeout=timeout,
        timeout_func=cell_timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        record_timing=False,
        on_cell_execute=on_cell_execute,
        on_cell_executed=on_cell_executed,
        config=_kernel_config(sockets),
    )
    threading.Thread(target=ticker, daemon=True).start()
    _watch_kernel_start(client, current, done)
    error = ""
    try:
        # the kernel's own stderr (connection notices, crashes) goes here
        with kernel_log.open("w") as log:
            client.execute(stdout=subprocess.DEVNULL, stderr=log)
    except CellTimeoutError:
        error = (
            f"{chapter}.md: cell '{_label_of(traced, current['index'])}' ran longer "
            f"than the {timeout} s cell timeout (BOOK_CELL_TIMEOUT)"
        )
    except CellExecutionError as exc:
        error = (
            f"{chapter}.md: cell '{_label_of(traced, current['index'])}' failed:\n{exc}"
        )
    # the kernel died (nbclient's clean-up may raise over it), did not start...
    except Exception as exc:
        cause: BaseException | None = exc
        while cause is not None and not isinstance(cause, DeadKernelError):
            cause = cause.__cause__ or cause.__context__
        # it never ran a cell: it exited while starting, or never answered
        if not current.get("started"):
            last = [
                ln
                for ln in (
                    kernel_log.read_text() if kernel_log.exists() else ""
                ).splitlines()
                if ln.strip() and "WARNING" not in ln
            ]
            why = (
                last[-1].strip()[:200]
                if last
                else str(exc).splitlines()[0]
                if str(exc)
                else type(exc).__name__
            )
            error = (
                f"{chapter}.md: the kernel exited before it ran the first cell ({why}; "
                f"its log: {kernel_log})"
            )
        # the cell ended its kernel (os._exit, a crash in native code, killed for
        # memory)
        elif cause is not None:
            error = (
                f"{chapter}.md: the kernel died while cell "
                f"'{_label_of(traced, current['index'])}' was running (a crash, an "
                f"exit, a signal or the memory limit; its log: {kernel_log})"
            )
        else:
            tail = kernel_log.read_text()[-2000:] if kernel_log.exists() else ""
            error = (
                f"{chapter}.md: execution "
                f"failed:\n{traceback.format_exc()}\nkernel log "
                f"({kernel_log}):\n"
                f"{tail}"
            )
    finally:
        done.set()
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGUSR1, signal.SIG_DFL)
        import shutil

        shutil.rmtree(sockets, ignore_errors=True)
    wall = time.perf_counter() - started
    error = ANSI_ESCAPE.sub("", error)
    traced.cells = traced.cells[1:-1]
    trace: dict[str, Any] = {
        "read": [],
        "written": [],
        "listed": [],
        "fingerprint": None,
    }
    if not error:
        if trace_file.exists():
            trace = json.loads(trace_file.read_text())
        else:
            error = (
                f"{chapter}.md: the kernel ended before reporting what the chapter read"
            )
    return {"nb": traced, "wall_s": wall, "error": error, "trace": trace}


# ----------------------------------------------------------------- deciding and running


def _why_stale(
    old: dict[str, Any],
    code: str,
    deps: dict[str, str],
    settings: dict[str, str],
    env: str,
    profile: str,
    dists: dict[str, str] | None = None,
) -> str:
    if not old:
        return "never executed"
    if old.get("status") in ("failed", "stale"):
        return f"{old['status']} last time"
    if old.get("code") != code:
        return "code cells changed"
    if old.get("dependencies") != deps:
        changed = [d for d in deps if old["dependencies"].get(d) != deps[d]]
        # a sweep re-keyed changes hundreds of records: name a few and count
        shown = ", ".join(changed[:6])
        return (
            "changed: "
            + shown
            + (f" and {len(changed) - 6} more files" if len(changed) > 6 else "")
        )
    if old.get("settings") != settings:
        before = old.get("settings") or {}
        changed = [
            f"{k} {before.get(k, '')!r} -> {v!r}"
            for k, v in settings.items()
            if before.get(k) != v
        ]
        return "settings changed: " + ", ".join(changed)
    if old.get("env") != env:
        return "locked dependencies changed"
    if old.get("profile") != profile:
        return f"device profile {old.get('profile')} -> {profile}"
    if dists is not None:
        if not isinstance(old.get("distributions"), dict):
            return "installed packages not recorded yet"
        changed = [
            f"{name} {old['distributions'][name]} -> {dists.get(name)}"
            for name in sorted(old["distributions"])
            if old["distributions"][name] != dists.get(name)
        ]
        if changed:
            return "installed package changed: " + ", ".join(changed)
    return ""


def _deps_from_trace(trace: dict[str, Any]) -> list[str]:
    deps = set(trace["read"]) | {
        rel.rstrip("/") + "/" if rel else "./" for rel in trace["listed"]
    }
    return sorted(deps)


def _settle(
    root: Path,
    chapter: str,
    code: str,
    reason: str,
    out: dict[str, Any],
    before: dict[str, str],
    env: str,
    profile: str,
    settings: dict[str, str],
) -> tuple[ChapterResult, dict[str, Any]]:
    """Turn one execution into a result and a manifest entry; store its outputs if they
    are sound."""
    deps_list = _deps_from_trace(out["trace"])
    after = current_hashes(root, deps_list)
    # read before the run; created during it: as it is now
    deps = {d: before.get(d, after[d]) for d in deps_list}
    status = "failed" if out["error"] else "executed"
    error = out["error"]
    if not error:
        # What the kernel read, hashed as it opened each file (kernel_hooks), must be
        # the snapshot's version...
        seen = out["trace"].get("seen", {})
        read_other = [
            d
            for d in deps_list
            if d in before and any(h != before[d] for h in seen.get(d, []))
        ]
        # ...and no dependency may differ from it after the run either (one read before
        # the hooks were installed).
        moved = sorted(
            {d for d in deps_list if d in before and before[d] != after[d]}
            | set(read_other)
        )
        if moved:
            status = "stale"
            error = (
                f"{chapter}.md: {', '.join(moved)} changed while the chapter was "
                "executing (it read a version other than the one hashed when the "
                "build started), so its outputs belong to no single version of the "
                "sources; they were discarded. Run the build again."
            )
    dists = distribution_digests(out["trace"].get("distributions", []))
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    key = chapter_key(code, deps, env, profile, settings, dists)
    entry = {
        "code": code,
        "dependencies": deps,
        "settings": settings,
        "env": env,
        "profile": profile,
        "distributions": dists,
        "status": status,
        "wall_s": out["wall_s"],
        "executed_at": stamp,
        "fingerprint": out["trace"]["fingerprint"],
        "runs": out["trace"].get("runs", []),
        "sweeps": out["trace"].get("sweeps", []),
    }
    if (
        status == "executed" and "read_as_text" in out["trace"]
    ):  # the sources it imported, by their token forms
        text = set(out["trace"]["read_as_text"])
        entry["forms"] = source_forms(
            root,
            [d for d in deps_list if d not in text and before.get(d) == after[d]],
            before,
        )
    if status == "executed":
        store_for_myst_nb(root, chapter, out["nb"], out["wall_s"])
        try:
            entry["outputs"] = outputs_digest(rendered_notebook(root, chapter))
        except KeyError:
            # the page was edited while it executed: the digest of what executed (the
            # next build executes the edited page, its code hash changed)
            entry["outputs"] = outputs_digest(out["nb"])
        # a read-only checkout's (BOOK_BUILD_DIR) is left untouched
        if build_dir(root).is_relative_to(root):
            try:
                # make Sphinx re-read the page and pick up the new outputs
                os.utime(root / f"{chapter}.md")
            except OSError:
                pass
    result = ChapterResult(
        chapter,
        status,
        reason,
        out["wall_s"],
        key,
        deps,
        error,
        stamp,
        out["trace"]["fingerprint"],
        out["trace"].get("runs", []),
        out["trace"].get("notes", []),
    )
    return result, entry


def _validate(root: Path, chapter: str, nb: nbformat.NotebookNode) -> str:
    from bookbuild.execute import cells

    try:
        cells.validate_cells(nb, chapter)
    except cells.RecordError as exc:
        return str(exc)
    return ""


def execution_order(
    names: list[str], manifest: dict[str, Any], cold: dict[str, float] | None = None
) -> list[str]:
    """``names`` in the order they should start: the longest expected execution first.

    A chapter's expected time is the larger of its wall time at its last
    execution in this checkout (the manifest's ``wall_s``) and its entry in
    ``cold`` (:data:`COLD_SECONDS`, its time when it computes every training),
    0 for either where there is none; ties keep the order of ``names`` (the
    table of contents). The larger, because a chapter that last ran with its
    trainings reused (Chapter 3 in 10 s) runs for minutes once an edit to its
    training code makes it retrain, and its history alone would then start it
    last; and a chapter that grew slower than its table entry is still placed
    by its history. Starting the longest first keeps the other workers busy
    with the short chapters while it runs, instead of starting it late and
    waiting on it alone. A chapter that reuses another's memoized trainings
    may start first without losing work: ``run_once`` computes each training
    once and the other chapter waits on its lock.
    """
    cold = COLD_SECONDS if cold is None else cold

    def expected(chapter: str) -> float:
        wall = (manifest.get(chapter) or {}).get("wall_s")
        known = (
            float(wall)
            if isinstance(wall, int | float)
            and not isinstance(wall, bool)
            and wall >= 0
            else 0.0
        )
        return max(known, float(cold.get(chapter, 0.0)))

    position = {c: i for i, c in enumerate(names)}
    return sorted(names, key=lambda c: (-expected(c), position[c]))


# the cache folder reuse_jax_compilations set (a user's is left alone)
_jax_cache_set: str | None = None


def reuse_jax_compilations(root: Path) -> None:
    """Chapter kernels keep the XLA programs JAX compiles in ``<build>/jax-cache``
    (JAX's persistent compilation cache, every program however quick to compile), so a
    chapter re-executed after an edit loads them instead of compiling them again: the
    same programs, so the same numbers (the output check compares them). Chapter 3's
    three JAX cells took 3.3-3.6 s of its 11-12 s without the cache, 1.2-1.4 s with it.
    A value set by the user wins. A damaged entry is compiled again; JAX's warning about
    it goes to the build log, not the cell (:mod:`bookbuild.execute.kernel_hooks`)."""
    global _jax_cache_set
    # not the user's: this root's
    if os.environ.get("JAX_COMPILATION_CACHE_DIR") in (None, _jax_cache_set):
        _jax_cache_set = os.environ["JAX_COMPILATION_CACHE_DIR"] = str(
            build_dir(root) / "jax-cache"
        )
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")


def workers(threads: int) -> int:
    """Chapters run side by side: as many as the cores allow at ``threads`` threads
    each."""
    return max(1, (os.cpu_count() or 1) // max(1, threads))


def run(
    root: Path = ROOT, only: list[str] | None = None, force: bool = False
) -> list[ChapterResult]:
    """Bring every chapter's executed outputs up to date; return one result per
    chapter."""
    from chapter_code.core import machine

    # first: a bad setting stops the run before anything starts
    threads = book_settings().threads
    # kernels and their workers inherit the pins from this process
    machine.pin_cpu_numerics()
    timeout = int_setting("BOOK_CELL_TIMEOUT", DEFAULT_CELL_TIMEOUT, 1)
    # grow, never preallocate
    os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    reuse_jax_compilations(root)
    # Kernels import this tree's chapter_code and bookbuild (not another checkout's
    # editable install). And this engine's own bookbuild, whose kernel_hooks must report
    # what this engine reads (a fixture book in a test has no bookbuild of its own, and
    # an editable install may point at another checkout).
    path = [
        str(root),
        *([str(ROOT)] if ROOT != root else []),
        os.environ.get("PYTHONPATH", ""),
    ]
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in path if p)
    files.ensure_writable(engine_dir(root))
    repair_jupyter_cache(root)
    env, profile, settings = environment_key(root), device_profile(), output_settings()
    manifest = load_manifest(root)
    history = load_history(root)
    names = only or chapters(root)
    before = snapshot(root)
    # the installed distributions as they are now (after a run: stated again)
    dist_cache: dict[str, str] = {}
    # after the snapshot, so a source edited in between is still caught as stale
    pin_bytecode(root)
    results: dict[str, ChapterResult] = {}
    to_run: list[tuple[str, str, str]] = []
    for chapter in names:
        try:
            nb = read_notebook(root / f"{chapter}.md")
        except UserError as exc:
            nb, invalid = None, str(exc)
        else:
            invalid = _validate(root, chapter, nb)
        if nb is None or invalid:
            # Its manifest entry stays: the outputs of its last execution are still
            # right for its last state, so reverting the edit re-executes nothing (the
            # page cannot be built until it is fixed).
            results[chapter] = ChapterResult(
                chapter, "failed", "invalid cells", 0.0, "", {}, invalid
            )
            continue
        code = code_hash(nb, root)
        old = manifest.get(chapter, {})
        deps = {
            d: before.get(d, "missing") for d in sorted(old.get("dependencies", {}))
        }
        dists = distribution_digests(sorted(old.get("distributions") or {}), dist_cache)
        key = chapter_key(code, deps, env, profile, settings, dists)
        reason = (
            "forced"
            if force
            else _why_stale(old, code, deps, settings, env, profile, dists)
        )
        hit = "unchanged"
        if not reason:
            reason = cached_outputs_problem(root, chapter, old.get("outputs"))
            if reason:
                print(f"engine: {chapter}: {reason}; executing it again", flush=True)
        # an edit since its last execution (a damaged manifest rebuilds everything)
        elif not force and old:
            earlier = _from_history(
                root,
                chapter,
                history.get(chapter, []),
                code,
                before,
                env,
                profile,
                settings,
                dist_cache,
            )
            # a reverted edit: this state's outputs are still cached
            if earlier is not None:
                manifest[chapter] = old = earlier
                deps = {
                    d: before.get(d, "missing")
                    for d in sorted(old.get("dependencies", {}))
                }
                key = chapter_key(
                    code,
                    deps,
                    env,
                    profile,
                    settings,
                    distribution_digests(
                        sorted(old.get("distributions") or {}), dist_cache
                    ),
                )
                reason = ""
            else:
                reused = _reuse_if_comments_only(
                    root,
                    chapter,
                    old,
                    nb,
                    code,
                    deps,
                    before,
                    (settings, env, profile, dists),
                )
                if (
                    reused is not None
                ):  # only comments changed: the last execution's outputs serve
                    manifest[chapter] = old = reused[0]
                    hit, reason = reused[1], ""
        if reason:
            to_run.append((chapter, code, reason))
        else:
            results[chapter] = ChapterResult(
                chapter,
                "hit",
                hit,
                old.get("wall_s", 0.0),
                key,
                deps,
                "",
                old.get("executed_at", ""),
                old.get("fingerprint"),
                old.get("runs", []),
            )
    if to_run:
        order = execution_order([c for c, _, _ in to_run], manifest)
        to_run.sort(key=lambda job: order.index(job[0]))
        _execute_all(
            root,
            to_run,
            timeout,
            threads,
            before,
            env,
            profile,
            settings,
            manifest,
            results,
        )
    save_manifest(root, manifest)
    for chapter in names:
        entry = manifest.get(chapter)
        if results[chapter].status == "executed" and entry:
            remember(history, chapter, entry)
    files.write_json(history_path(root), history)
    return [results[c] for c in names]


def _execute_all(
    root: Path,
    to_run: list[tuple[str, str, str]],
    timeout: int,
    threads: int,
    before: dict[str, str],
    env: str,
    profile: str,
    settings: dict[str, str],
    manifest: dict[str, Any],
    results: dict[str, ChapterResult],
) -> None:
    n = min(workers(threads), len(to_run))
    print(
        f"engine: executing {len(to_run)} chapter(s), {n} at a time, the "
        "longest first: " + ", ".join(c for c, _, _ in to_run),
        flush=True,
    )
    pool = ProcessPoolExecutor(max_workers=n, initializer=_worker_init)
    pending: dict[Future, tuple[str, str, str]] = {}
    try:
        for job in to_run:
            pending[pool.submit(execute_chapter, str(root), job[0], timeout)] = job
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                chapter, code, reason = pending.pop(future)
                result, entry = _settle(
                    root,
                    chapter,
                    code,
                    reason,
                    future.result(),
                    before,
                    env,
                    profile,
                    settings,
                )
                results[chapter] = result
                manifest[chapter] = entry
                # keep what finished, whatever happens to the rest
                save_manifest(root, manifest)
                for note in result.notes:
                    print(f"engine: {chapter}: {note}", flush=True)
                print(
                    f"engine: {chapter}: {result.status} in {result.wall_s:.1f} s "
                    f"({reason})",
                    flush=True,
                )
    except KeyboardInterrupt:
        killed = 0
        # the pool has no public way to stop running work
        for pid in list(pool._processes or {}):
            killed += _kill_children(pid)
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        pool.shutdown(wait=False, cancel_futures=True)
        unfinished = ", ".join(c for c, _, _ in pending.values())
        print(
            f"\nengine: interrupted; stopped {unfinished} ({killed} process(es) "
            f"killed); kept {len(results)} finished chapter(s)",
            file=sys.stderr,
            flush=True,
        )
        raise
    pool.shutdown(wait=True)
