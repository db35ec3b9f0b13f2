"""Output baselines: what every labelled cell of an executed chapter printed, displayed,
glued or drew.

A chapter's records are a dict ``{cell label: [output, ...]}``. Each output is
one of

- ``{"kind": "text", "lines": [...]}``: printed text (stdout/stderr, merged);
- ``{"kind": "value", "mime": "text/plain" | "text/markdown" | "text/html", "lines":
  [...]}``;
- ``{"kind": "glue", "name": ..., "lines": [...]}``: a value bound into the prose;
- ``{"kind": "image", "file": "<label>-<n>.png", "text": [...]}``: a figure, stored next
  to the records, with what it says (titles, labels, ticks, legend, annotations), when
  the kernel summarised it (:mod:`bookbuild.execute.kernel_hooks`); the numbers it plots
  go to ``<label>-<n>.json`` beside the PNG;
- ``{"kind": "volatile"}``: the whole output of a cell marked ``volatile: true`` (never
  compared, so not stored: accepting a build never rewrites a baseline for it).

Records are keyed by the cell's ``label`` option, never by its position, so
inserting a cell shifts nothing. Baselines are these records written to
``baselines/<profile>/<chapter>.json`` plus the figures as PNG files in
``baselines/<profile>/<chapter>/``.

Comparison (:func:`compare`): text is normalised for what is volatile (timings,
memory addresses, temporary paths) and must then match exactly, except that
numbers may differ within a cell's tolerance (``tolerance: {rtol: .., atol: ..}``
in the cell's options; zero by default). Figures are compared by pixels with
matplotlib's RMS image comparison, so antialiasing noise passes and a moved
curve fails (``image_tolerance`` in the cell's options; 2.0 by default). On top
of the pixels, a figure's text must match exactly and its plotted numbers within
the cell's tolerance (``rtol`` 1e-4 by default, :data:`DEFAULT_FIGURE_RTOL`), so a wrong
subscript in a label fails even where it moves few pixels. A cell marked ``volatile:
true`` is not compared, and a glued value whose name ends in ``_seconds`` is a wall
time, recorded as ``<duration>``.
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

from bookbuild.execute.cells import (  # noqa: F401
    CELL_OPTIONS,
    RecordError,
    cell_options,
    validate_cells,
)

DEFAULT_IMAGE_TOLERANCE = 2.0
#: Plotted numbers: float32 data computed through a chain of steps (a gradient 60 steps
#: back) carry relative rounding of 1e-5 that depends on the CPU's kernels (measured
#: under the fragility probe: up to 2e-5); a relative 1e-4 moves no point by a tenth of
#: a pixel on the book's axes, and a moved curve fails.
DEFAULT_FIGURE_RTOL = 1e-4
# written by bookbuild.execute.kernel_hooks
FIGURE_MIME = "application/vnd.bookbuild.figure+json"
# a glued value named like this is a wall time: recorded as <duration>
DURATION_GLUE_SUFFIX = "_seconds"
VALUE_MIMES = ["text/markdown", "text/html", "text/plain"]

_VOLATILE = [
    (re.compile(r"0x[0-9a-fA-F]{6,}"), "<address>"),
    (re.compile(r"(/tmp|/var/folders)/[^\s'\",;)]+"), "<tmp-path>"),
    (
        re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds|min|minutes)\b(?=\W|$)"),
        "<duration>",
    ),
]
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?%?")


@dataclass(frozen=True)
class Difference:
    chapter: str
    cell: str
    old: str
    new: str
    # for printed text: a unified diff of the cell's whole text, whitespace made visible
    detail: str = ""
    # for a figure's difference: the figure's file name (``<label>-<n>.png``)
    figure: str = ""
    # for a figure whose pixels differ: baseline, new and diff images to look at
    review: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.chapter} [{self.cell}]: {self.old} -> {self.new}"


def show_whitespace(line: str) -> str:
    """``line`` with its trailing spaces as ``·`` and tabs as ``→``, so a diff in them
    can be seen."""
    body = line.rstrip(" \t")
    return body + line[len(body) :].replace(" ", "·").replace("\t", "→")


def unified_diff(old: list[str], new: list[str]) -> str:
    """A unified diff of two texts (lists of lines), baseline first, with trailing
    whitespace made visible."""
    import difflib

    return "\n".join(
        difflib.unified_diff(
            [show_whitespace(s) for s in old],
            [show_whitespace(s) for s in new],
            "baseline",
            "this build",
            lineterm="",
        )
    )


def normalise(text: str) -> str:
    """Replace volatile substrings (durations, addresses, temporary paths) by
    placeholders."""
    for pattern, placeholder in _VOLATILE:
        text = pattern.sub(placeholder, text)
    return text


def _lines(text: str | list[str]) -> list[str]:
    if isinstance(text, list):
        text = "".join(text)
    return text.rstrip("\n").split("\n")


def extract(
    nb: Any, chapter: str
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, bytes], dict[str, dict]]:
    """Return (records, files by name, per-cell comparison options) for an executed
    notebook.

    The files are each figure's PNG and, where the kernel summarised the figure,
    the numbers it plots (``<label>-<n>.json``).
    """
    options = validate_cells(nb, chapter)
    records: dict[str, list[dict[str, Any]]] = {}
    images: dict[str, bytes] = {}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        label = cell.metadata["label"]
        if options[label].get("volatile"):
            records[label] = [{"kind": "volatile"}]
            continue
        outs: list[dict[str, Any]] = []
        # consecutive stream chunks are one text, joined exactly as printed
        stream = None
        for output in cell.get("outputs", []):
            kind = output.get("output_type")
            if kind == "stream":
                if stream is None:
                    stream = {"kind": "text", "raw": ""}
                    outs.append(stream)
                stream["raw"] += "".join(output["text"])
                continue
            stream = None
            if kind in ("display_data", "execute_result"):
                data = output.get("data", {})
                glue_name = output.get("metadata", {}).get("scrapbook", {}).get("name")
                if glue_name:
                    plain = next(
                        (v for k, v in data.items() if k.endswith("text/plain")), ""
                    )
                    lines = (
                        ["<duration>"]
                        if glue_name.endswith(DURATION_GLUE_SUFFIX)
                        else _lines(plain)
                    )
                    outs.append({"kind": "glue", "name": glue_name, "lines": lines})
                elif "image/png" in data:
                    name = (
                        f"{label}-"
                        f"{len([o for o in outs if o['kind'] == 'image']) + 1}.png"
                    )
                    images[name] = base64.b64decode(data["image/png"])
                    record: dict[str, Any] = {"kind": "image", "file": name}
                    summary = data.get(FIGURE_MIME)
                    if isinstance(summary, str):
                        summary = json.loads(summary)
                    if summary:
                        record["text"] = summary["text"]
                        images[name.removesuffix(".png") + ".json"] = json.dumps(
                            summary["data"], separators=(",", ":")
                        ).encode()
                    outs.append(record)
                else:
                    mime = next((m for m in VALUE_MIMES if m in data), None)
                    if mime is not None:
                        outs.append(
                            {"kind": "value", "mime": mime, "lines": _lines(data[mime])}
                        )
            elif kind == "error":
                outs.append(
                    {
                        "kind": "error",
                        "lines": [f"{output.get('ename')}: {output.get('evalue')}"],
                    }
                )
        for out in outs:
            if "raw" in out:
                out["lines"] = _lines(out.pop("raw"))
        records[label] = outs
    return records, images, options


def write_baseline(
    directory: Path, chapter: str, records: dict, images: dict[str, bytes]
) -> list[Path]:
    """Write ``<chapter>.json`` and the chapter's figures under ``directory``; return
    the files that changed.

    A file whose content is already the same is left untouched, and a figure no
    longer produced is removed, so ``git status`` shows exactly what changed.
    """
    from bookbuild import files

    name = Path(chapter).name
    changed: list[Path] = []
    target = directory / f"{name}.json"
    text = dumps(records)
    if not target.exists() or target.read_text() != text:
        files.write_text(target, text)
        changed.append(target)
    figures = directory / name
    if figures.exists():
        for old in sorted(figures.iterdir()):
            if old.suffix in (".png", ".json") and old.name not in images:
                old.unlink()
                changed.append(old)
    for file, data in images.items():
        path = figures / file
        if not path.exists() or path.read_bytes() != data:
            files.write_bytes(path, data)
            changed.append(path)
    return changed


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


def _text_difference(
    old: list[str], new: list[str], rtol: float, atol: float
) -> tuple[str, str, str] | None:
    """(first differing line before, after, unified diff of the whole text), or ``None``
    when they match.

    Lines that differ only in whitespace are quoted (``repr``), so the summary never
    shows two equal strings.
    """
    old_text, new_text = normalise("\n".join(old)), normalise("\n".join(new))
    if old_text == new_text:
        return None
    if (rtol or atol) and _numbers_close(old_text, new_text, rtol, atol):
        return None
    old_lines, new_lines = old_text.split("\n"), new_text.split("\n")
    detail = unified_diff(old_lines, new_lines)
    for a, b in zip(old_lines, new_lines, strict=False):
        if a != b:
            if a.strip() == b.strip():
                return repr(a), repr(b), detail
            return a.strip(), b.strip(), detail
    return f"{len(old_lines)} lines", f"{len(new_lines)} lines", detail


#: A float as a check's record shows it (``1.514``, ``2.312e-10``, ``64.00``: always a
#: decimal point). A number without one (an integer, a bound such as ``1e-6``) is
#: compared exactly.
_SHOWN_FLOAT = re.compile(r"^[-+]?(\d+\.\d*|\.\d+)([eE][-+]?\d+)?$")
# chapter_code.core.claims.GLUE_PREFIX (the build imports no taught code here)
CHECK_GLUE_PREFIX = "check:"


def last_digit_unit(text: str) -> float | None:
    """One unit in the last digit of a float as printed (``1.514`` -> 0.001, ``2.3e-10``
    -> 1e-11); ``None`` for anything else (an integer, a bound without a decimal point,
    a word), which is compared exactly."""
    match = _SHOWN_FLOAT.match(text.strip())
    if not match:
        return None
    mantissa, exponent = match[1], int(match[2][1:]) if match[2] else 0
    decimals = len(mantissa.split(".", 1)[1]) if "." in mantissa else 0
    return 10.0 ** (exponent - decimals)


def shown_equal(old: str, new: str) -> bool:
    """Two values as a check's record shows them are the same at the precision shown:
    equal text, or the same words with every float within one unit of its last shown
    digit (a rounding flip), every integer and word equal."""
    if old == new:
        return True
    if _NUMBER.sub("#", old) != _NUMBER.sub("#", new):
        return False
    for a, b in zip(_NUMBER.findall(old), _NUMBER.findall(new), strict=True):
        if a == b:
            continue
        units = [last_digit_unit(a), last_digit_unit(b)]
        if None in units or abs(float(a) - float(b)) > max(units) * (1 + 1e-9):
            return False
    return True


def _check_difference(old: list[str], new: list[str]) -> tuple[str, str, str] | None:
    """A check's record: name, verdict, condition and words exactly; its values at the
    precision shown (:func:`shown_equal`). ``None`` when they match."""
    try:
        a, b = json.loads("".join(old)), json.loads("".join(new))
    except json.JSONDecodeError:
        return _text_difference(old, new, 0.0, 0.0)
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return _text_difference(old, new, 0.0, 0.0)
    for key in sorted((set(a) | set(b)) - {"values"}):
        if a.get(key) != b.get(key):
            return f"{key} {a.get(key)!r}", repr(b.get(key)), unified_diff(old, new)
    va, vb = a.get("values") or {}, b.get("values") or {}
    for key in sorted(set(va) | set(vb)):
        if (
            key not in va
            or key not in vb
            or not shown_equal(normalise(str(va[key])), normalise(str(vb[key])))
        ):
            return (
                f"value {key!r} {va.get(key)}",
                str(vb.get(key)),
                unified_diff(old, new),
            )
    return None


def _image_difference(old_png: Path, new_png: bytes, tol: float) -> str | None:
    if not old_png.exists():
        return "missing baseline figure"
    # the same file: nothing to decode (most figures of most builds), nor to import
    if old_png.read_bytes() == new_png:
        return None
    from matplotlib.testing.compare import compare_images

    with tempfile.TemporaryDirectory() as tmp:
        actual = Path(tmp) / "actual.png"
        actual.write_bytes(new_png)
        try:
            result = compare_images(
                str(old_png), str(actual), tol=tol, in_decorator=True
            )
        except Exception as exc:  # size mismatch raises ImageComparisonFailure
            return str(exc).splitlines()[0]
    if result is None:
        return None
    return f"figure differs (RMS {result['rms']:.2f} > {tol})"


def _numbers_in(value: Any) -> list[Any]:
    """Flatten nested lists/dicts of a figure's data into a list of numbers and strings
    (keys included)."""
    if isinstance(value, dict):
        return [x for k in sorted(value) for x in [k, *_numbers_in(value[k])]]
    if isinstance(value, list):
        return [x for v in value for x in _numbers_in(v)]
    return [value]


def _data_difference(old: Any, new: Any, rtol: float, atol: float) -> str | None:
    a, b = _numbers_in(old), _numbers_in(new)
    if len(a) != len(b):
        return f"plotted data has {len(b)} entries instead of {len(a)}"
    worst = None
    for x, y in zip(a, b, strict=True):
        if isinstance(x, (int, float)) and isinstance(y, (int, float)):
            if not math.isclose(x, y, rel_tol=rtol, abs_tol=atol):
                gap = abs(x - y)
                if worst is None or gap > worst[0]:
                    worst = (gap, x, y)
        elif x != y:
            return f"plotted data: {x!r} -> {y!r}"
    if worst:
        return (
            f"plotted data moved (e.g. {worst[1]:.6g} -> {worst[2]:.6g}; rtol "
            f"{rtol:g}, atol {atol:g})"
        )
    return None


def _figure_differences(
    chapter: str,
    label: str,
    old: dict,
    new: dict,
    figures: Path,
    images: dict[str, bytes],
    opts: dict,
    rtol: float,
    atol: float,
) -> list[Difference]:
    """A figure must say the same words exactly, plot the same numbers within tolerance,
    and look the same."""
    diffs = []
    if "text" in old or "text" in new:
        old_text, new_text = old.get("text", []), new.get("text", [])
        for a, b in zip(old_text, new_text, strict=False):
            if a != b:
                shown = (
                    (repr, repr)
                    if a.strip() == b.strip()
                    else (lambda t: f"'{t}'", lambda t: f"'{t}'")
                )
                diffs.append(
                    Difference(
                        chapter,
                        label,
                        f"figure text {shown[0](a)}",
                        shown[1](b),
                        unified_diff(old_text, new_text),
                        figure=old["file"],
                    )
                )
                break
        else:
            if len(old_text) != len(new_text):
                diffs.append(
                    Difference(
                        chapter,
                        label,
                        f"{len(old_text)} figure texts",
                        f"{len(new_text)}",
                        figure=old["file"],
                    )
                )
    data_file = old["file"].removesuffix(".png") + ".json"
    new_data = images.get(new["file"].removesuffix(".png") + ".json")
    if (figures / data_file).exists() and new_data is not None:
        old_data, now_data = (
            json.loads((figures / data_file).read_text()),
            json.loads(new_data),
        )
        lines = dict((opts.get("tolerance") or {}).get("lines") or {})
        if lines and isinstance(old_data, list) and isinstance(now_data, list):
            # a named line has its own rtol, and the axes' limits (drawn around every
            # line) the largest of them; every other entry the cell's
            def own_rtol(entry: Any) -> float:
                if isinstance(entry, dict) and entry.get("line") in lines:
                    return float(lines[entry["line"]])
                if isinstance(entry, dict) and ("xlim" in entry or "ylim" in entry):
                    return max(float(v) for v in lines.values())
                return rtol

            problem = None
            if len(old_data) != len(now_data):
                problem = (
                    f"plotted data has {len(now_data)} entries instead of "
                    f"{len(old_data)}"
                )
            for a, b in zip(old_data, now_data, strict=False):
                problem = problem or _data_difference(
                    a, b, max(own_rtol(a), DEFAULT_FIGURE_RTOL), atol
                )
        else:
            problem = _data_difference(
                old_data, now_data, max(rtol, DEFAULT_FIGURE_RTOL), atol
            )
        if problem:
            diffs.append(
                Difference(chapter, label, old["file"], problem, figure=old["file"])
            )
    elif (figures / data_file).exists() != (new_data is not None):
        diffs.append(
            Difference(
                chapter,
                label,
                old["file"],
                "plotted data recorded on one side only",
                figure=old["file"],
            )
        )
    image_tol = float(opts.get("image_tolerance", DEFAULT_IMAGE_TOLERANCE))
    problem = _image_difference(figures / old["file"], images[new["file"]], image_tol)
    if problem:
        diffs.append(
            Difference(chapter, label, old["file"], problem, figure=old["file"])
        )
    return diffs


def _tolerances(opts: dict, old_opts: dict | None) -> tuple[float, float, dict]:
    """(rtol, atol, options) a cell is compared with: the stricter of its baseline's and
    its current options.

    So a tolerance loosened in the same edit as a changed output still shows the change
    (and the loosening itself is a difference, :func:`_weakened`).
    """
    tol = opts.get("tolerance") or {}
    rtol, atol = float(tol.get("rtol", 0.0)), float(tol.get("atol", 0.0))
    if old_opts is None:
        return rtol, atol, opts
    old_tol = old_opts.get("tolerance") or {}
    rtol, atol = (
        min(rtol, float(old_tol.get("rtol", 0.0))),
        min(atol, float(old_tol.get("atol", 0.0))),
    )
    image = min(
        float(opts.get("image_tolerance", DEFAULT_IMAGE_TOLERANCE)),
        float(old_opts.get("image_tolerance", DEFAULT_IMAGE_TOLERANCE)),
    )
    return rtol, atol, {**opts, "image_tolerance": image}


def _weakened(chapter: str, label: str, old_opts: dict, opts: dict) -> list[Difference]:
    """A cell option that now lets more through than its baseline's: a difference to
    accept on purpose."""
    diffs = []
    old_tol, tol = old_opts.get("tolerance") or {}, opts.get("tolerance") or {}
    for key in ("rtol", "atol"):
        before, after = float(old_tol.get(key, 0.0)), float(tol.get(key, 0.0))
        if after > before:
            diffs.append(
                Difference(
                    chapter,
                    label,
                    f":tolerance: {key} {before:g}",
                    f"{key} {after:g} (a looser tolerance; outputs compared with "
                    f"{before:g})",
                )
            )
    before = float(old_opts.get("image_tolerance", DEFAULT_IMAGE_TOLERANCE))
    after = float(opts.get("image_tolerance", DEFAULT_IMAGE_TOLERANCE))
    if after > before:
        diffs.append(
            Difference(
                chapter,
                label,
                f":image_tolerance: {before:g}",
                f"{after:g} (a looser tolerance; figures compared with {before:g})",
            )
        )
    return diffs


def _as_text(outs: list[dict[str, Any]]) -> list[str]:
    """A cell's outputs as the lines a reader sees: text as printed, a figure as its
    file and its words."""
    lines: list[str] = []
    for out in outs:
        if out["kind"] == "image":
            lines.append(
                f"[figure {out['file']}]"
                + (": " + " | ".join(out["text"]) if out.get("text") else "")
            )
        elif out["kind"] == "volatile":
            lines.append("[volatile: not recorded]")
        else:
            lines += out.get("lines", [])
    return lines


def _kinds_difference(
    chapter: str, label: str, old_rest: list[dict], new_rest: list[dict]
) -> Difference:
    """The outputs changed kind (text became a figure, output appeared): say so and show
    what it now prints."""
    old_kinds = ", ".join(o["kind"] for o in old_rest) or "no output"
    new_kinds = ", ".join(o["kind"] for o in new_rest) or "no output"
    old_lines, new_lines = _as_text(old_rest), _as_text(new_rest)
    first = next((line.strip() for line in new_lines if line.strip()), "")
    new = f"{new_kinds}: {first[:100]!r}" if first else new_kinds
    return Difference(
        chapter, label, old_kinds, new, unified_diff(old_lines, new_lines)
    )


def _cell_differences(
    chapter: str,
    label: str,
    old_outs: list[dict],
    new_outs: list[dict],
    figures: Path,
    images: dict[str, bytes],
    opts: dict,
    rtol: float,
    atol: float,
    kept: list[dict] | None = None,
) -> list[Difference]:
    """The differences of one cell; ``kept``, when given, receives the outputs to store
    (the baseline's where equal)."""
    diffs: list[Difference] = []
    # Glued values are matched by name, everything else by its order in the cell.
    old_glue = {o["name"]: o for o in old_outs if o["kind"] == "glue"}
    new_glue = {o["name"]: o for o in new_outs if o["kind"] == "glue"}
    equal: dict[int, dict] = {}  # id of a new output -> the baseline's output it equals
    for name in sorted(set(old_glue) | set(new_glue)):
        where = f"{label}: glue {name}"
        if name not in new_glue:
            diffs.append(Difference(chapter, where, "glued", "no longer glued"))
        elif name not in old_glue:
            diffs.append(
                Difference(
                    chapter, where, "not glued", " ".join(new_glue[name]["lines"])
                )
            )
        else:
            old_lines, new_lines = old_glue[name]["lines"], new_glue[name]["lines"]
            changed = (
                _check_difference(old_lines, new_lines)
                if name.startswith(CHECK_GLUE_PREFIX)
                else _text_difference(old_lines, new_lines, rtol, atol)
            )
            if changed:
                diffs.append(Difference(chapter, where, *changed))
            else:
                equal[id(new_glue[name])] = old_glue[name]
    old_rest = [o for o in old_outs if o["kind"] != "glue"]
    new_rest = [o for o in new_outs if o["kind"] != "glue"]
    if [o["kind"] for o in old_rest] != [o["kind"] for o in new_rest]:
        diffs.append(_kinds_difference(chapter, label, old_rest, new_rest))
    else:
        for old, new in zip(old_rest, new_rest, strict=True):
            if old["kind"] == "image":
                found = _figure_differences(
                    chapter, label, old, new, figures, images, opts, rtol, atol
                )
                if not found:
                    equal[id(new)] = old
                diffs += found
                continue
            if old["kind"] == "volatile":
                continue
            changed = _text_difference(
                old.get("lines", []), new.get("lines", []), rtol, atol
            )
            if changed:
                diffs.append(Difference(chapter, label, *changed))
            else:
                equal[id(new)] = old
    if kept is not None:
        kept += [equal.get(id(o), o) for o in new_outs]
    return diffs


def _page_differences(
    chapter: str, old_records: dict, records: dict
) -> list[Difference]:
    """The page's listings and panels against the baseline's (where the baseline records
    them)."""
    from bookbuild.gate import pagecontent

    diffs: list[Difference] = []
    if pagecontent.LISTINGS in old_records and pagecontent.LISTINGS in records:
        old = {pagecontent.listing_key(r): r for r in old_records[pagecontent.LISTINGS]}
        new = {pagecontent.listing_key(r): r for r in records[pagecontent.LISTINGS]}
        for key in old.keys() - new.keys():
            diffs.append(
                Difference(chapter, f"listing {key}", "shown", "no longer shown")
            )
        for key, rec in new.items():
            if key not in old:
                diffs.append(
                    Difference(
                        chapter,
                        f"listing {key}",
                        "not shown",
                        f"{len(rec['lines'])} lines",
                    )
                )
            elif old[key]["sha256"] != rec["sha256"]:
                changed = _text_difference(
                    old[key].get("lines", []), rec["lines"], 0.0, 0.0
                )
                old_line, new_line, detail = changed or (
                    "sha256 " + old[key]["sha256"][:12],
                    "sha256 " + rec["sha256"][:12],
                    "",
                )
                diffs.append(
                    Difference(
                        chapter,
                        f"listing {key}",
                        f"included source {old_line}",
                        new_line,
                        detail,
                    )
                )
    if pagecontent.PANELS in old_records and pagecontent.PANELS in records:
        old_panels = {r["panel"]: r for r in old_records[pagecontent.PANELS]}
        new_panels = {r["panel"]: r for r in records[pagecontent.PANELS]}
        for name in old_panels.keys() - new_panels.keys():
            diffs.append(
                Difference(
                    chapter, f"panel {name}", "on the page", "no longer on the page"
                )
            )
        for name, rec in new_panels.items():
            if name not in old_panels:
                diffs.append(
                    Difference(
                        chapter, f"panel {name}", "not on the page", "a new panel"
                    )
                )
                continue
            problem = _data_difference(
                old_panels[name]["data"], rec["data"], DEFAULT_FIGURE_RTOL, 0.0
            )
            if problem:
                diffs.append(
                    Difference(
                        chapter,
                        f"panel {name}",
                        "panel data",
                        problem.replace("plotted data", "data"),
                    )
                )
    return diffs


def compare(
    chapter: str,
    baseline: tuple[dict, Path] | None,
    records: dict[str, list[dict[str, Any]]],
    images: dict[str, bytes],
    options: dict[str, dict],
    page_problems: list[str] | None = None,
) -> list[Difference]:
    """Every difference between a chapter's baseline and its new records; an absent
    baseline is one.

    ``records`` may hold the page's sections
    (:data:`bookbuild.gate.pagecontent.PAGE_KEYS`); a baseline written before they were
    recorded is compared without them. ``page_problems`` (a listing that cannot be cut)
    are differences whatever the baseline says.
    """
    from bookbuild.gate import pagecontent

    problems = [Difference(chapter, "listing", "shown", p) for p in page_problems or []]
    cells = {k: v for k, v in records.items() if k not in pagecontent.PAGE_KEYS}
    if baseline is None:
        return [
            *problems,
            Difference(
                chapter,
                "*",
                "no baseline",
                f"{len(cells)} cells recorded (run `make accept`)",
            ),
        ]
    old_records, figures = baseline
    old_options = (
        {r["cell"]: r for r in old_records[pagecontent.OPTIONS]}
        if pagecontent.OPTIONS in old_records
        else None
    )
    diffs: list[Difference] = problems
    for label in sorted(set(old_records) - set(cells) - set(pagecontent.PAGE_KEYS)):
        diffs.append(Difference(chapter, label, "recorded cell", "cell removed"))
    for label, new_outs in cells.items():
        opts = options.get(label, {})
        old_outs = old_records.get(label)
        was_volatile = old_outs == [{"kind": "volatile"}]
        if opts.get("volatile"):
            if old_outs is not None and not was_volatile:
                diffs.append(
                    Difference(
                        chapter,
                        label,
                        "compared",
                        "marked ':volatile: true': its outputs would no longer be "
                        "compared",
                    )
                )
            continue
        if old_outs is None:
            diffs.append(
                Difference(chapter, label, "no baseline", f"{len(new_outs)} outputs")
            )
            continue
        old_opts = None if old_options is None else old_options.get(label, {})
        if old_opts is not None:
            diffs += _weakened(chapter, label, old_opts, opts)
        rtol, atol, opts = _tolerances(opts, old_opts)
        diffs += _cell_differences(
            chapter, label, old_outs, new_outs, figures, images, opts, rtol, atol
        )
    return diffs + _page_differences(chapter, old_records, records)


@dataclass
class Exactness:
    """How a chapter's outputs matched their baseline: bit for bit, or within their
    declared precision."""

    exact: int
    # "chapter [cell]" (or "[cell: glue name]") of each output equal only within its
    # precision
    within: list[str]


def _same_output(old: dict, new: dict, figures: Path, images: dict[str, bytes]) -> bool:
    if old.get("kind") != new.get("kind"):
        return False
    if new["kind"] == "image":
        data = old["file"].removesuffix(".png") + ".json"
        old_data = (figures / data).read_bytes() if (figures / data).exists() else None
        return (
            old.get("text") == new.get("text")
            and (figures / old["file"]).exists()
            and (figures / old["file"]).read_bytes() == images.get(new["file"])
            and old_data == images.get(new["file"].removesuffix(".png") + ".json")
        )
    return normalise("\n".join(old.get("lines", []))) == normalise(
        "\n".join(new.get("lines", []))
    )


def exactness(
    baseline: tuple[dict, Path] | None,
    records: dict[str, list[dict[str, Any]]],
    images: dict[str, bytes],
    diffs: list[Difference],
) -> Exactness:
    """Count the outputs that equal their baseline's bit for bit; name those equal only
    within their precision."""
    from bookbuild.gate import pagecontent

    if baseline is None:
        return Exactness(0, [])
    old_records, figures = baseline
    differing = {d.cell for d in diffs}
    exact, within = 0, []
    for label, new_outs in records.items():
        old_outs = old_records.get(label)
        if (
            label in pagecontent.PAGE_KEYS
            or old_outs is None
            or old_outs == [{"kind": "volatile"}]
        ):
            continue
        old_glue = {o["name"]: o for o in old_outs if o["kind"] == "glue"}
        old_rest = [o for o in old_outs if o["kind"] != "glue"]
        new_rest = [o for o in new_outs if o["kind"] != "glue"]
        pairs = [
            (old_glue.get(o["name"]), o, f"{label}: glue {o['name']}")
            for o in new_outs
            if o["kind"] == "glue"
        ]
        if len(old_rest) == len(new_rest):
            pairs += [(a, b, label) for a, b in zip(old_rest, new_rest, strict=True)]
        for old, new, where in pairs:
            if old is None or where in differing or label in differing:
                continue
            if _same_output(old, new, figures, images):
                exact += 1
            else:
                within.append(where)
    return Exactness(exact, within)


def settle(
    baseline: tuple[dict, Path] | None,
    records: dict[str, list[dict[str, Any]]],
    images: dict[str, bytes],
    options: dict[str, dict],
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, bytes]]:
    """What ``accept`` stores: the new records, except that an output equal to its
    baseline's keeps the baseline's.

    Equal means equal under the comparison (masked timings, a cell's tolerance, a figure
    within its tolerances), so accepting one intended change rewrites no raw timing or
    last digit beside it. The page's sections are stored as they are now.
    """
    from bookbuild.gate import pagecontent

    if baseline is None:
        return records, images
    old_records, figures = baseline
    kept_records: dict[str, list[dict[str, Any]]] = {}
    kept_images = dict(images)
    for label, new_outs in records.items():
        old_outs = old_records.get(label)
        opts = options.get(label, {})
        if label in pagecontent.PAGE_KEYS or old_outs is None or opts.get("volatile"):
            kept_records[label] = new_outs
            continue
        rtol, atol, _ = _tolerances(opts, None)
        kept: list[dict] = []
        _cell_differences(
            "", label, old_outs, new_outs, figures, images, opts, rtol, atol, kept
        )
        for old, new in zip(kept, new_outs, strict=True):
            # the baseline's figure (and its data) stay
            if old is not new and new["kind"] == "image":
                kept_images[new["file"]] = (figures / old["file"]).read_bytes()
                data = old["file"].removesuffix(".png") + ".json"
                if (figures / data).exists():
                    kept_images[data] = (figures / data).read_bytes()
        kept_records[label] = kept
    if pagecontent.PANELS in records and pagecontent.PANELS in old_records:
        old_panels = {r["panel"]: r for r in old_records[pagecontent.PANELS]}
        kept_records[pagecontent.PANELS] = [
            old_panels[r["panel"]]
            if r["panel"] in old_panels
            and not _data_difference(
                old_panels[r["panel"]]["data"], r["data"], DEFAULT_FIGURE_RTOL, 0.0
            )
            else r
            for r in records[pagecontent.PANELS]
        ]
    return kept_records, kept_images
