"""The reading flow speaks to readers: no build vocabulary in a chapter's prose or
captions, no plumbing in its cells.

Where a result comes from (a run made ahead of the build, a memoized call, a commit)
belongs in the number's preview, the build report and the Building page. A chapter says
what a reader needs ("trained ahead of the page; see how the book is built"). Two rules,
both read statically:

- **Prose and figure captions** (the lines :func:`bookbuild.lint.prose.prose_lines`
  calls prose, read with their inline code and the words of their roles, but not the
  targets of ``{ref}``-like roles or glue names) must not use the words of
  :data:`PATTERNS`: the machinery's names (sweeps, records, ``make experiments``, Slurm,
  submitit, commits, memoized runs), the build as the source of a result ("this
  build's", "ahead of the build", "at every build") and the names of the registered
  sweeps (the folders of ``records/``). The patterns are narrow on purpose: "sweep it",
  "records the contribution" and "we build a memory" are English, "the sweep's
  records" is plumbing. A paragraph's lines are read joined, so a phrase broken across
  two lines is caught on the line where it starts.
- **Cells a reader can open** (every code cell but ``remove-cell`` and ``remove-input``
  ones; a ``hide-input`` cell opens with a click) must not load or describe records: no
  ``load_sweep``, ``.by_job()``, ``describe()``, and no import from ``bookbuild``. Load
  in a ``remove-cell`` cell and compute the taught part in a visible one.

The Building page, the generated report and appendix, and the front matter are not
checked. ``python -m bookbuild.lint.vocabulary`` prints one line per problem (page,
line, the word, what to do) and exits 1 if there is any; ``make lint`` runs it.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from bookbuild.lint.listings import _CELL, chapters
from bookbuild.lint.prose import prose_lines

ROOT = Path(__file__).resolve().parents[2]

#: (pattern, what it is): build vocabulary a chapter's reader should never meet
PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.I), why)
    for p, why in (
        (
            r"\bexperiment sweeps?\b|\bsweep's\b|\b(?:the|this|that|a|its) "
            r"sweep\b(?! (?:it|them|over|of your own)\b)",
            "a sweep is the build's word for runs made ahead of it",
        ),
        (r"\bsubmitit\b|\bslurm\b", "the job runner is the build's business"),
        (r"\bmake (?:experiments|gpu-run|accept|check|test|book)\b", "a build command"),
        (r"\bload_sweep\b|\bby_job\b", "the records' reader"),
        (r"\brecords/", "the records' folder"),
        (
            r"\b(?:the|its|their|these|those|our|a|one)(?: stored| sweep's| "
            r"grid's)? records?\b(?! (?:of|the)\b)|"
            r"'s records?\b",
            "a stored record (say 'the runs' or 'the results')",
        ),
        (r"\bmemoi[sz]\w*", "memoized runs are the build's business"),
        (
            r"\bcommit(?:s|ted)?\b(?! to\b)|\bcommit hash",
            "a commit is the build's business",
        ),
        (r"\bcache key\b|\bbuild folder\b", "the build's cache"),
        (
            r"\b(?:this|that|each|every|a GPU|a CPU|its own)(?: book's)? build\b(?:'s)?"
            r"|\bthe build\b(?!-|\s+of\b)(?:'s)?|'s build\b(?:'s)?"
            r"|\b(?:both|two|the two) builds\b(?:')?|\bbuild to build\b",
            "the build as the source of a result: say 'this page', 'here', or "
            "'trained before this page was computed'",
        ),
    )
)
#: roles whose text is a target or a name, not words the reader reads as written
_TARGET_ROLE = re.compile(
    r"\{(?:ref|numref|doc|eq|glue:text|glue|cite:t|cite:p|term|download)\}(`+).*?\1"
)
_LABEL_TARGET = re.compile(r"<[\w./:-]+>`")
_PLUMBING_CALL = re.compile(
    r"\bload_sweep\s*\(|\.by_job\s*\(|\.describe\s*\(|^\s*(?:from|import)\s+bookbuild\b",
    re.M,
)
_REMOVED = ("remove-cell", "remove-input")


@dataclass(frozen=True)
class Problem:
    page: str
    line: int
    text: str
    why: str

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: {self.text!r}: {self.why}"


def sweep_names(root: Path = ROOT) -> list[str]:
    """The registered sweeps' names, as the folders of ``records/``: those with a
    hyphen, since a one-word name ("scoreboard") is the English word it was named
    after."""
    folder = root / "records"
    return (
        sorted(p.name for p in folder.iterdir() if p.is_dir() and "-" in p.name)
        if folder.is_dir()
        else []
    )


def prose_problems(text: str, page: str, names: list[str] = ()) -> list[Problem]:
    """Build vocabulary in the prose and captions of one page's ``text``."""
    lines = text.splitlines()
    patterns = list(PATTERNS)
    if names:
        patterns.append(
            (
                re.compile(
                    r"(?<![\w-])(?:" + "|".join(map(re.escape, names)) + r")(?![\w-])"
                ),
                "the name of a sweep",
            )
        )
    # runs of a paragraph's consecutive lines, read joined so that a phrase broken
    # across two lines ("at every / build") is read whole; a caption or a directive's
    # title is read alone
    blocks: list[list[tuple[int, str]]] = []
    joinable = False
    for n, _ in prose_lines(text):
        raw = _TARGET_ROLE.sub(" ", _LABEL_TARGET.sub("`", lines[n - 1]))
        alone = raw.lstrip().startswith((":", "```"))
        if alone:  # a caption option: read the caption alone
            raw = raw.split("caption:", 1)[-1]
        if raw.strip() and joinable and not alone and blocks[-1][-1][0] == n - 1:
            blocks[-1].append((n, raw.strip()))
        elif raw.strip():
            blocks.append([(n, raw.strip())])
        joinable = bool(raw.strip()) and not alone
    out = []
    for block in blocks:
        joined, starts = "", []
        for n, raw in block:
            starts.append((len(joined), n))
            joined += raw + " "
        for pattern, why in patterns:
            for match in pattern.finditer(joined):
                line = max(s for s in starts if s[0] <= match.start())[1]
                out.append(
                    Problem(
                        page,
                        line,
                        match.group(0),
                        why + "; keep it for the Building page, the build "
                        "report and the number's preview",
                    )
                )
    return sorted(out, key=lambda p: p.line)


def cell_problems(text: str, page: str) -> list[Problem]:
    """Cells a reader can open that load or describe records."""
    out = []
    for match in _CELL.finditer(text):
        body = match.group(2)
        options = [line for line in body.split("\n") if line.startswith(":")]
        if any(tag in line for line in options for tag in _REMOVED):
            continue
        start = text.count("\n", 0, match.start()) + 1
        for call in _PLUMBING_CALL.finditer(body):
            line = start + 1 + body.count("\n", 0, call.start())
            out.append(
                Problem(
                    page,
                    line,
                    call.group(0).strip(),
                    "a cell a reader can open loads or describes records; load them in "
                    "a `remove-cell` cell and compute the taught part here",
                )
            )
    return out


def problems(root: Path = ROOT) -> list[Problem]:
    names = sweep_names(root)
    pages = chapters(root) + [root / "book" / "intro.md"]
    out = []
    for page in pages:
        if not page.is_file():
            continue
        text, rel = page.read_text(), page.relative_to(root).as_posix()
        out += prose_problems(text, rel, names) + cell_problems(text, rel)
    return sorted(out, key=lambda p: (p.page, p.line))


def main(argv: list[str] | None = None) -> int:
    found = problems(Path(argv[0]) if argv else ROOT)
    for problem in found:
        print(problem)
    if found:
        print(
            f"vocabulary: {len(found)} place(s) where a chapter speaks the build's "
            "language",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
