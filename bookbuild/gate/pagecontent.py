"""What a page shows that no code cell prints: its listings and its interactive panels'
data.

The gate (:mod:`bookbuild.gate`) records both in the chapter's baseline beside
the cells' outputs (reserved keys :data:`LISTINGS` and :data:`PANELS` of
``baselines/<profile>/<chapter>.json``) and compares them like outputs:

- a *listing* is a ``{literalinclude}`` fence of a ``chapter_code`` file; its
  record is the file, the ``:pyobject:`` and the included text (with its
  SHA-256), cut exactly as Sphinx cuts it (``sphinx.pycode.ModuleAnalyzer``).
  A ``:pyobject:`` the file no longer defines is a failure of one line.
- a *panel* is a ``{book-panel} name`` fence; its record is the JSON the
  page embeds (:func:`chapter_code.panels.data.panel`), beats, transcript and
  controls (a slider's range included).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from importlib import metadata
from pathlib import Path
from typing import Any

LISTINGS = "@listings"
PANELS = "@panels"
OPTIONS = "@options"
#: Baseline keys that are the page's, not a cell's.
PAGE_KEYS = (OPTIONS, LISTINGS, PANELS)

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*\{(literalinclude|book-panel)\}\s*(\S*)")
_OPTION = re.compile(r"^\s*:([\w-]+):\s*(.*)$")


class ListingError(ValueError):
    """A listing cannot be cut from its file (a missing file, or a ``:pyobject:`` it no
    longer defines)."""


def _fences(text: str) -> list[tuple[int, str, str, dict[str, str]]]:
    """(line, directive, argument, options) of every literalinclude and book-panel fence
    of a page."""
    lines = text.splitlines()
    out = []
    for n, line in enumerate(lines):
        found = _FENCE.match(line)
        if not found:
            continue
        options = {}
        for follow in lines[n + 1 :]:
            option = _OPTION.match(follow)
            if not option:
                break
            options[option.group(1)] = option.group(2).strip()
        out.append((n + 1, found.group(2), found.group(3), options))
    return out


#: Sphinx's objects of each module text already parsed, kept between builds (a build
#: that changed no listing parses none), in the build folder's ``engine/``.
TAGS_FILE = "pycode-tags.json"
#: how many module texts the file keeps (the newest)
TAGS_KEPT = 256


def _tags_path() -> Path:
    from bookbuild.execute.engine import engine_dir

    return engine_dir(Path(__file__).resolve().parents[2]) / TAGS_FILE


@functools.lru_cache(maxsize=1)
def _stored_tags() -> dict[str, dict[str, list[Any]]]:
    try:
        stored = json.loads(_tags_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return stored if isinstance(stored, dict) else {}


@functools.lru_cache(maxsize=128)
def _tags(source: str, modname: str, filename: str) -> dict[str, tuple[str, int, int]]:
    """Sphinx's objects of a module's source, name -> (kind, first line, last line);
    parsed once per text (keyed by the text, the module's name and Sphinx's version)."""
    key = hashlib.sha256(
        f"{metadata.version('sphinx')}\0{modname}\0{source}".encode()
    ).hexdigest()
    stored = _stored_tags()
    if key in stored:
        return {
            name: (kind, start, end) for name, (kind, start, end) in stored[key].items()
        }
    from sphinx.pycode import ModuleAnalyzer

    tags = ModuleAnalyzer.for_string(source, modname, filename).find_tags()
    stored[key] = {name: list(value) for name, value in tags.items()}
    for old in list(stored)[: max(0, len(stored) - TAGS_KEPT)]:
        del stored[old]
    path = _tags_path()
    try:  # a read-only build folder only parses again next time
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(stored), encoding="utf-8")
        os.replace(partial, path)
    except OSError:
        pass
    return tags


def listing_text(path: Path, pyobject: str | None) -> str:
    """The text Sphinx's ``literalinclude`` shows of ``path`` (only the object
    ``pyobject``, if given)."""
    try:
        source = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ListingError(f"the file {path} does not exist") from None
    if not pyobject:
        return source
    tags = _tags(source, path.stem, str(path))
    if pyobject not in tags:
        raise ListingError(f"{path.name} defines no object {pyobject!r} (:pyobject:)")
    _, start, end = tags[pyobject]
    return "".join(source.splitlines(keepends=True)[start - 1 : end])


def listings(root: Path, chapter: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The listings of page ``chapter`` (records in page order) and one line per listing
    that cannot be cut."""
    page = root / f"{chapter}.md"
    out: list[dict[str, Any]] = []
    problems: list[str] = []
    for line, directive, argument, options in _fences(page.read_text(encoding="utf-8")):
        if directive != "literalinclude":
            continue
        path = (page.parent / argument).resolve()
        try:
            name = path.relative_to(root.resolve()).as_posix()
        except ValueError:
            name = argument
        pyobject = options.get("pyobject")
        try:
            text = listing_text(path, pyobject)
        except ListingError as exc:
            problems.append(
                f"{chapter}.md:{line}: the listing of {name} cannot be shown: {exc}"
            )
            continue
        out.append(
            {
                "file": name,
                "pyobject": pyobject or "",
                "sha256": hashlib.sha256(text.encode()).hexdigest(),
                "lines": text.rstrip("\n").split("\n"),
            }
        )
    return out, problems


def panels(root: Path, chapter: str) -> list[dict[str, Any]]:
    """The data every ``{book-panel}`` of page ``chapter`` embeds, in page order.

    A panel whose entry in the panels' cache is still valid (``PanelCache.get``:
    nothing it was computed from changed) is read from there, as the page will be, and
    PyTorch is not imported; any other panel is computed (none: nothing imported)."""
    from bookbuild.execute.engine import build_dir
    from bookbuild.site.panels import PanelCache

    names = [
        argument
        for _, directive, argument, _ in _fences(
            (root / f"{chapter}.md").read_text(encoding="utf-8")
        )
        if directive == "book-panel"
    ]
    cache = PanelCache(build_dir(root) / "panel-cache", root)
    out = []
    for name in names:
        kept = cache.get(name)
        if kept is not None:
            out.append({"panel": name, "data": json.loads(kept[1])})
            continue
        from chapter_code.panels.data import PANELS as KNOWN
        from chapter_code.panels.data import panel_json

        data = json.loads(panel_json(name)) if name in KNOWN else None
        out.append({"panel": name, "data": data})
    return out


def listing_key(record: dict[str, Any]) -> str:
    return (
        f"{record['file']}:{record['pyobject']}"
        if record.get("pyobject")
        else record["file"]
    )
