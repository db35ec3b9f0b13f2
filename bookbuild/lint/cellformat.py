"""The chapters' code cells, formatted as the listings are: ``ruff format`` at 88
columns.

Command: ``python -m bookbuild.lint.cellformat [--check] [FILES]`` (by default every
``book/*.md`` except the generated pages). Each ```` ```{code-cell} ```` block
keeps its leading option lines (``:label:``, ``:tags:``, ``:mystnb:`` ... and
their continuation lines, ``:  figure:`` or indented) and the blank lines after them
untouched; the Python below them goes through ``ruff format --line-length 88 -`` (the
ruff of this interpreter's environment) and is written back. A semicolon that ends a
cell (it keeps the cell's value from being displayed) stays: ruff would drop it.
Every formatted cell must parse to the same syntax tree as before.

With ``--check`` nothing is written: every cell that would change, and every
code line over 88 columns that the formatter cannot shorten (a long string or
comment, to wrap by hand), is listed as ``file:line`` and the exit status is 1.
A cell that ruff cannot parse (an IPython magic) is left alone and reported, in
both modes, without failing the check.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WIDTH = 88
#: pages the build writes, not authored: never formatted
GENERATED = ("checked.md", "build-report.md")
_FENCE = re.compile(r"^(`{3,})\{code-cell\}")
#: an option line (``:tags: [...]``) or the continuation of one in MyST's short form
#: (``:  figure:``)
_OPTION = re.compile(r"^:([\w-]+:|\s)")
#: a line whose width ruff does not count beyond the code (E501 ignores it too)
_PRAGMA = re.compile(r"#\s*(noqa|type:|pyright:|pylint:)[^#]*$")


@dataclass
class Cell:
    """The code of one cell: ``lines[start:end]`` of its page (0-based), below its
    options."""

    fence: int  # the index of the ```{code-cell} line
    start: int
    end: int
    code: str


def cells(lines: list[str]) -> list[Cell]:
    """Every code cell of a page given as lines (no line ends); a cell without a closing
    fence ends the page."""
    found = []
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence = match.group(1)
        end = i + 1
        while end < len(lines) and lines[end].rstrip() != fence:
            end += 1
        start = i + 1
        if start < end and lines[start] == "---":  # options as a YAML block
            close = next((k for k in range(start + 1, end) if lines[k] == "---"), None)
            start = start if close is None else close + 1
        while start < end and _OPTION.match(lines[start]):
            start += 1
            while (
                start < end and lines[start][:1] in (" ", "\t") and lines[start].strip()
            ):
                start += 1  # an option's continuation (``:mystnb:`` with indented keys)
        while start < end and not lines[start].strip():
            start += 1
        found.append(Cell(i, start, end, "\n".join(lines[start:end])))
        i = end + 1
    return found


def _ruff() -> str:
    beside = Path(sys.executable).parent / "ruff"
    found = str(beside) if beside.exists() else shutil.which("ruff")
    if found is None:
        raise SystemExit("cellformat: no ruff beside this Python nor on PATH")
    return found


def format_code(code: str, ruff: str | None = None) -> tuple[str | None, str]:
    """``(formatted, "")``, or ``(None, why)`` when ruff cannot parse the code; no line
    end at the end."""
    done = subprocess.run(
        [ruff or _ruff(), "format", "--line-length", str(WIDTH), "-"],
        input=code,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    if done.returncode != 0:
        return None, (done.stderr.strip().splitlines() or ["ruff failed"])[0]
    out = done.stdout.rstrip("\n")
    if code.rstrip().endswith(";") and not out.endswith(";"):
        out += ";"  # the cell's value stays hidden
    if ast.dump(ast.parse(code)) != ast.dump(ast.parse(out)):
        raise RuntimeError(
            f"cellformat: formatting changed the syntax tree of:\n{code}"
        )
    return out, ""


@dataclass
class Report:
    """What one page's cells would need: changed cells, long lines left, unparsed cells
    (1-based lines)."""

    text: str  # the page with its cells formatted
    changed: list[int]
    long: list[tuple[int, int]]  # (line, width)
    unparsed: list[tuple[int, str]]


def format_page(text: str, ruff: str | None = None) -> Report:
    lines = text.split("\n")
    changed, long, unparsed = [], [], []
    for cell in reversed(cells(lines)):
        if not cell.code.strip():
            continue
        out, why = format_code(cell.code, ruff)
        if out is None:
            unparsed.append((cell.fence + 1, why))
            new = lines[cell.start : cell.end]
        else:
            new = out.split("\n")
            if new != lines[cell.start : cell.end]:
                changed.append(cell.fence + 1)
                lines[cell.start : cell.end] = new
        long += [
            (cell.start + k + 1, len(line))
            for k, line in enumerate(new)
            if len(line) > WIDTH and not _PRAGMA.search(line)
        ]
    return Report("\n".join(lines), sorted(changed), sorted(long), sorted(unparsed))


def pages(root: Path = ROOT) -> list[Path]:
    return [p for p in sorted((root / "book").glob("*.md")) if p.name not in GENERATED]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    check = "--check" in args
    paths = [Path(a) for a in args if a != "--check"] or pages()
    ruff = _ruff()
    failed = 0
    for path in paths:
        text = path.read_text(encoding="utf-8")
        report = format_page(text, ruff)
        for line, why in report.unparsed:
            print(
                f"{path}:{line}: left alone: ruff cannot parse this cell ({why})",
                file=sys.stderr,
            )
        if check:
            for line in report.changed:
                print(f"{path}:{line}: this cell would be reformatted")
            for line, width in report.long:
                print(
                    f"{path}:{line}: {width} columns, over {WIDTH}: wrap the string or "
                    "comment by hand"
                )
            failed += len(report.changed) + len(report.long)
        else:
            if report.text != text:
                path.write_text(report.text, encoding="utf-8")
                print(f"{path}: {len(report.changed)} cell(s) reformatted")
            for line, width in report.long:
                print(
                    f"{path}:{line}: {width} columns, over {WIDTH}: wrap the string or "
                    "comment by hand"
                )
    if check and failed:
        print(
            f"cellformat: {failed} problem(s); `python -m bookbuild.lint.cellformat` "
            "formats the cells",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
