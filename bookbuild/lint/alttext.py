"""The alt-text check: every number in a figure's alt text is one the figure shows.

Alt text is plain text (no roles, so nothing can be glued into it), yet it is
what a screen-reader user reads instead of the figure, so a number in it must
stay true when the figure changes. This check reads each code cell's
``image: alt:`` option and requires every number in it to be found in what that
figure's recorded output shows, in every baseline profile that records it
(``baselines/<profile>/``; the gate keeps those equal to the current outputs):

- the figure's text: titles, axis labels, tick labels (``10^{-30}`` counts as
  ``1e-30``), legend entries and annotations;
- the numbers it plots: every coordinate of its lines, points and bars, and
  the axis limits (of axes with ticks: a diagram's coordinates show nothing);
- how many lines, point sets and legend entries an axes draws ("five lines");
- a value glued on the same page, written in digits exactly as the page shows it.

A number matches when a shown value rounds to it at the precision the alt text
writes (``0.76`` matches ``0.7614``; ``4e-5`` matches ``4.4e-05``); signs are
ignored, since alt text spells them ("minus 2"). Index arithmetic in names
(``h_(t-1)``) is not a number. A figure with no record (a new cell not yet
accepted) is reported too, so alt text never escapes the check.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

_WORDS = {
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "thousand": 1000,
}
# t-1, T+1: index arithmetic inside a name
_INDEX = re.compile(r"(?<![\d.])[A-Za-z]\s?[-+]\s?\d+")
_ALT_NUMBER = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?[eE][-+−]?\d+)(?!\w)"  # 4e-5
    r"|(?<![\w.])(\d+(?:,\d{3})*(?:\.\d+)?)(?![\w])%?"  # 0.76, 1,000, 95%
    r"|\b(" + "|".join(_WORDS) + r")\b",
    re.IGNORECASE,
)
_SHOWN_NUMBER = re.compile(r"[-+−]?\d+(?:\.\d+)?(?:[eE][-+−]?\d+)?")
_POWER = re.compile(r"10\^\{?([-−]?\d+)\}?")
_CELL = re.compile(r"^```\{code-cell\}")
_LABEL = re.compile(r"^:label:\s*(\S+)")
_ALT = re.compile(r"^:\s+alt:\s*(.*)$")


def alt_numbers(alt: str) -> list[tuple[str, float, float]]:
    """The numbers an alt text states: (as written, value, half the last written digit's
    unit)."""
    alt = _INDEX.sub(lambda m: " " * len(m.group(0)), alt)
    found = []
    for match in _ALT_NUMBER.finditer(alt):
        sci, plain, word = match.groups()
        if word:
            found.append((word, float(_WORDS[word.lower()]), 0.5))
        elif sci:
            mantissa, exponent = re.split(r"[eE]", sci.replace("−", "-"))
            decimals = len(mantissa.partition(".")[2])
            found.append(
                (
                    sci,
                    float(mantissa + "e" + exponent),
                    0.5 * 10.0 ** (int(exponent) - decimals),
                )
            )
        else:
            decimals = len(plain.partition(".")[2])
            found.append(
                (match.group(0), float(plain.replace(",", "")), 0.5 * 10.0**-decimals)
            )
    return found


def shown_values(text: list[str], data: list[Any]) -> list[float]:
    """Every number a figure shows: in its recorded text, its plotted data, and its
    counts of lines."""
    values: list[float] = []
    for line in text:
        line = line.partition(": ")[2] or line  # "axes 1 x ticks: 0 | 10" -> "0 | 10"
        values += [10.0 ** int(p.replace("−", "-")) for p in _POWER.findall(line)]
        line = _POWER.sub(" ", line)
        values += [float(n.replace("−", "-")) for n in _SHOWN_NUMBER.findall(line)]
    legends = [line for line in text if " legend: " in line]
    values += [
        float(len(line.partition(" legend: ")[2].split(" | "))) for line in legends
    ]
    plotted = {
        int(m.group(1))
        for m in map(re.compile(r"axes (\d+) x ticks: ").match, text)
        if m
    }
    per_axes: dict[Any, int] = {}
    for item in data:
        if item.get("axes") not in plotted:
            # an axes drawn without ticks is a diagram: its coordinates are not shown
            # values
            continue
        if "line" in item or "points" in item:
            per_axes[item.get("axes")] = per_axes.get(item.get("axes"), 0) + 1
        values += [
            float(v)
            for v in _flatten(item)
            if isinstance(v, (int, float)) and math.isfinite(v)
        ]
    values += [float(n) for n in per_axes.values()]
    return [abs(v) for v in values]


def _flatten(item: Any) -> list[Any]:
    if isinstance(item, dict):
        return [
            v for key, value in item.items() if key != "axes" for v in _flatten(value)
        ]
    if isinstance(item, list):
        return [v for value in item for v in _flatten(value)]
    return [item]


def _matches(value: float, half_unit: float, shown: list[float]) -> bool:
    return any(abs(s - value) <= half_unit * (1 + 1e-9) for s in shown)


def page_alts(text: str) -> list[tuple[int, str, str]]:
    """(line, label, alt text) for every code cell of a MyST page that sets ``image:
    alt:``."""
    import yaml

    out = []
    label = None
    for n, line in enumerate(text.splitlines(), start=1):
        if _CELL.match(line):
            label = None
        elif _LABEL.match(line):
            label = _LABEL.match(line).group(1)
        elif _ALT.match(line):
            raw = _ALT.match(line).group(1)
            try:
                alt = yaml.safe_load(raw)
            except yaml.YAMLError:
                alt = raw
            out.append((n, label or "(a cell without a label)", str(alt)))
    return out


def _records(root: Path, chapter: str) -> list[tuple[str, dict, Path]]:
    found = []
    for directory in sorted((root / "baselines").glob("*/")):
        path = directory / f"{chapter}.json"
        if path.is_file():
            found.append(
                (
                    directory.name,
                    json.loads(path.read_text(encoding="utf-8")),
                    directory / chapter,
                )
            )
    return found


def check_page(root: Path, page: Path) -> list[str]:
    """One message per number in an alt text of ``page`` that its figure does not
    show."""
    alts = page_alts(page.read_text(encoding="utf-8"))
    if not alts:
        return []
    where = str(page.relative_to(root))
    problems = []
    profiles = _records(root, page.stem)
    if not profiles:
        return [
            f"{where}: no recorded outputs in baselines/*/{page.stem}.json, so its alt "
            "texts cannot be checked; build and accept the chapter first (make "
            "accept)"
        ]
    for profile, records, figures in profiles:
        glued = {
            line.strip().strip("'\"")
            for outs in records.values()
            for out in outs
            if out.get("kind") == "glue"
            for line in out["lines"]
        }
        for lineno, label, alt in alts:
            numbers = alt_numbers(alt)
            if not numbers:
                continue
            images = [
                out for out in records.get(label, []) if out.get("kind") == "image"
            ]
            if not images:
                problems.append(
                    f"{where}:{lineno}: the alt text of {label!r} states numbers, but "
                    f"baselines/{profile}/ records no figure for that cell; build and "
                    "accept it (make accept)"
                )
                continue
            shown: list[float] = []
            for image in images:
                sidecar = figures / (image["file"].removesuffix(".png") + ".json")
                data = (
                    json.loads(sidecar.read_text(encoding="utf-8"))
                    if sidecar.is_file()
                    else []
                )
                shown += shown_values(image.get("text", []), data)
            for written, value, half_unit in numbers:
                if not (
                    _matches(value, half_unit, shown) or written.rstrip("%") in glued
                ):
                    problems.append(
                        f"{where}:{lineno}: the alt text of {label!r} says "
                        f"{written!r}, which its figure in baselines/{profile}/ does "
                        "not show (not in its text, plotted data or line counts, nor "
                        "glued on the page); describe what the figure shows, or drop "
                        "the number"
                    )
    return problems


def check_pages(root: Path) -> list[str]:
    """Check the alt texts of every page under ``root/book``."""
    problems: list[str] = []
    for page in sorted((Path(root) / "book").glob("*.md")):
        problems += check_page(Path(root), page)
    return problems
