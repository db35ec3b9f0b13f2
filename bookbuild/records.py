"""Output records: what every labelled cell of an executed chapter printed, displayed, glued or drew.

A chapter's records are a dict ``{cell label: [output, ...]}``. Each output is
one of

- ``{"kind": "text", "lines": [...]}``: printed text (stdout/stderr, merged);
- ``{"kind": "value", "mime": "text/plain" | "text/markdown" | "text/html", "lines": [...]}``;
- ``{"kind": "glue", "name": ..., "lines": [...]}``: a value bound into the prose;
- ``{"kind": "image", "file": "<label>-<n>.png"}``: a figure, stored next to the records.

Records are keyed by the cell's ``label`` option, never by its position, so
inserting a cell shifts nothing. Baselines are these records written to
``baselines/<profile>/<chapter>.json`` plus the figures as PNG files in
``baselines/<profile>/<chapter>/``.

Comparison (:func:`compare`): text is normalised for what is volatile (timings,
memory addresses, temporary paths) and must then match exactly, except that
numbers may differ within a cell's tolerance (``tolerance: {rtol: .., atol: ..}``
in the cell's options; zero by default). Figures are compared by pixels with
matplotlib's RMS image comparison, so antialiasing noise passes and a moved
curve fails (``image_tolerance`` in the cell's options; 2.0 by default). A cell
marked ``volatile: true`` is recorded but not compared, and a glued value whose
name ends in ``_seconds`` is a wall time, recorded as ``<duration>``.
"""

from __future__ import annotations

import base64
import json
import math
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_IMAGE_TOLERANCE = 2.0
DURATION_GLUE_SUFFIX = "_seconds"  # a glued value named like this is a wall time: recorded as <duration>
VALUE_MIMES = ["text/markdown", "text/html", "text/plain"]

_VOLATILE = [
    (re.compile(r"0x[0-9a-fA-F]{6,}"), "<address>"),
    (re.compile(r"(/tmp|/var/folders)/[^\s'\",;)]+"), "<tmp-path>"),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds|min|minutes)\b(?=\W|$)"), "<duration>"),
]
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?%?")


class RecordError(ValueError):
    """A chapter's cells cannot be recorded (a missing or repeated label)."""


@dataclass(frozen=True)
class Difference:
    chapter: str
    cell: str
    old: str
    new: str

    def __str__(self) -> str:
        return f"{self.chapter} [{self.cell}]: {self.old} -> {self.new}"


def normalise(text: str) -> str:
    """Replace volatile substrings (durations, addresses, temporary paths) by placeholders."""
    for pattern, placeholder in _VOLATILE:
        text = pattern.sub(placeholder, text)
    return text


def _lines(text: str | list[str]) -> list[str]:
    if isinstance(text, list):
        text = "".join(text)
    return text.rstrip("\n").split("\n")


def extract(nb: Any, chapter: str) -> tuple[dict[str, list[dict[str, Any]]], dict[str, bytes], dict[str, dict]]:
    """Return (records, images by file name, per-cell comparison options) for an executed notebook."""
    records: dict[str, list[dict[str, Any]]] = {}
    images: dict[str, bytes] = {}
    options: dict[str, dict] = {}
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        label = cell.metadata.get("label")
        if not label:
            raise RecordError(f"{chapter}: code cell #{index + 1} has no ':label:' option; every code cell needs one")
        if label in records:
            raise RecordError(f"{chapter}: the label {label!r} is used by more than one code cell")
        options[label] = {
            k: cell.metadata[k] for k in ("tolerance", "image_tolerance", "volatile") if k in cell.metadata
        }
        outs: list[dict[str, Any]] = []
        for output in cell.get("outputs", []):
            kind = output.get("output_type")
            if kind == "stream":
                if outs and outs[-1]["kind"] == "text":
                    outs[-1]["lines"] = _lines("\n".join(outs[-1]["lines"]) + "\n" + "".join(output["text"]))
                else:
                    outs.append({"kind": "text", "lines": _lines(output["text"])})
            elif kind in ("display_data", "execute_result"):
                data = output.get("data", {})
                glue_name = output.get("metadata", {}).get("scrapbook", {}).get("name")
                if glue_name:
                    plain = next((v for k, v in data.items() if k.endswith("text/plain")), "")
                    lines = ["<duration>"] if glue_name.endswith(DURATION_GLUE_SUFFIX) else _lines(plain)
                    outs.append({"kind": "glue", "name": glue_name, "lines": lines})
                elif "image/png" in data:
                    name = f"{label}-{len([o for o in outs if o['kind'] == 'image']) + 1}.png"
                    images[name] = base64.b64decode(data["image/png"])
                    outs.append({"kind": "image", "file": name})
                else:
                    mime = next((m for m in VALUE_MIMES if m in data), None)
                    if mime is not None:
                        outs.append({"kind": "value", "mime": mime, "lines": _lines(data[mime])})
            elif kind == "error":
                outs.append({"kind": "error", "lines": [f"{output.get('ename')}: {output.get('evalue')}"]})
        records[label] = outs
    return records, images, options


def write_baseline(directory: Path, chapter: str, records: dict, images: dict[str, bytes]) -> None:
    """Write ``<chapter>.json`` and the chapter's figures under ``directory``, replacing older ones."""
    name = Path(chapter).name
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{name}.json").write_text(dumps(records))
    figures = directory / name
    if figures.exists():
        for old in figures.glob("*.png"):
            old.unlink()
    if images:
        figures.mkdir(exist_ok=True)
        for file, data in images.items():
            (figures / file).write_bytes(data)


def dumps(records: dict[str, list[dict[str, Any]]]) -> str:
    """JSON with one output per line, so a changed output is a one-line diff."""
    blocks = []
    for label, outs in records.items():
        if outs:
            body = ",\n".join("  " + json.dumps(o, ensure_ascii=False) for o in outs)
            blocks.append(f"{json.dumps(label)}: [\n{body}\n ]")
        else:
            blocks.append(f"{json.dumps(label)}: []")
    return "{\n " + ",\n ".join(blocks) + "\n}\n"


def read_baseline(directory: Path, chapter: str) -> tuple[dict, Path] | None:
    path = directory / f"{Path(chapter).name}.json"
    if not path.exists():
        return None
    return json.loads(path.read_text()), directory / Path(chapter).name


def _numbers_close(old: str, new: str, rtol: float, atol: float) -> bool:
    if _NUMBER.sub("#", old) != _NUMBER.sub("#", new):
        return False
    for a, b in zip(_NUMBER.findall(old), _NUMBER.findall(new), strict=True):
        x, y = float(a.rstrip("%")), float(b.rstrip("%"))
        if not math.isclose(x, y, rel_tol=rtol, abs_tol=atol):
            return False
    return True


def _text_difference(old: list[str], new: list[str], rtol: float, atol: float) -> tuple[str, str] | None:
    old_text, new_text = normalise("\n".join(old)), normalise("\n".join(new))
    if old_text == new_text:
        return None
    if (rtol or atol) and _numbers_close(old_text, new_text, rtol, atol):
        return None
    old_lines, new_lines = old_text.split("\n"), new_text.split("\n")
    for a, b in zip(old_lines, new_lines, strict=False):
        if a != b:
            return a.strip(), b.strip()
    return f"{len(old_lines)} lines", f"{len(new_lines)} lines"


def _image_difference(old_png: Path, new_png: bytes, tol: float) -> str | None:
    from matplotlib.testing.compare import compare_images

    if not old_png.exists():
        return "missing baseline figure"
    with tempfile.TemporaryDirectory() as tmp:
        actual = Path(tmp) / "actual.png"
        actual.write_bytes(new_png)
        try:
            result = compare_images(str(old_png), str(actual), tol=tol, in_decorator=True)
        except Exception as exc:  # size mismatch raises ImageComparisonFailure
            return str(exc).splitlines()[0]
    if result is None:
        return None
    return f"figure differs (RMS {result['rms']:.2f} > {tol})"


def compare(
    chapter: str,
    baseline: tuple[dict, Path] | None,
    records: dict[str, list[dict[str, Any]]],
    images: dict[str, bytes],
    options: dict[str, dict],
) -> list[Difference]:
    """Every difference between a chapter's baseline and its new records; an absent baseline is one."""
    if baseline is None:
        return [Difference(chapter, "*", "no baseline", f"{len(records)} cells recorded (run `make accept`)")]
    old_records, figures = baseline
    diffs: list[Difference] = []
    for label in sorted(set(old_records) - set(records)):
        diffs.append(Difference(chapter, label, "recorded cell", "cell removed"))
    for label, new_outs in records.items():
        opts = options.get(label, {})
        if opts.get("volatile"):
            continue
        if label not in old_records:
            diffs.append(Difference(chapter, label, "no baseline", f"{len(new_outs)} outputs"))
            continue
        old_outs = old_records[label]
        tol = opts.get("tolerance") or {}
        rtol, atol = float(tol.get("rtol", 0.0)), float(tol.get("atol", 0.0))
        # Glued values are matched by name, everything else by its order in the cell.
        old_glue = {o["name"]: o for o in old_outs if o["kind"] == "glue"}
        new_glue = {o["name"]: o for o in new_outs if o["kind"] == "glue"}
        for name in sorted(set(old_glue) | set(new_glue)):
            where = f"{label}: glue {name}"
            if name not in new_glue:
                diffs.append(Difference(chapter, where, "glued", "no longer glued"))
            elif name not in old_glue:
                diffs.append(Difference(chapter, where, "not glued", " ".join(new_glue[name]["lines"])))
            else:
                changed = _text_difference(old_glue[name]["lines"], new_glue[name]["lines"], rtol, atol)
                if changed:
                    diffs.append(Difference(chapter, where, *changed))
        old_rest = [o for o in old_outs if o["kind"] != "glue"]
        new_rest = [o for o in new_outs if o["kind"] != "glue"]
        if [o["kind"] for o in old_rest] != [o["kind"] for o in new_rest]:
            old_kinds = ", ".join(o["kind"] for o in old_rest) or "no output"
            new_kinds = ", ".join(o["kind"] for o in new_rest) or "no output"
            diffs.append(Difference(chapter, label, old_kinds, new_kinds))
            continue
        for old, new in zip(old_rest, new_rest, strict=True):
            if old["kind"] == "image":
                image_tol = float(opts.get("image_tolerance", DEFAULT_IMAGE_TOLERANCE))
                problem = _image_difference(figures / old["file"], images[new["file"]], image_tol)
                if problem:
                    diffs.append(Difference(chapter, label, old["file"], problem))
                continue
            changed = _text_difference(old["lines"], new["lines"], rtol, atol)
            if changed:
                diffs.append(Difference(chapter, label, *changed))
    return diffs
