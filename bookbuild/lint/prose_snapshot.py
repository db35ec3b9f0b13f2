"""Write the frozen snapshot of the book's own prose that Chapter 4's language model reads.

``python -m bookbuild.lint.prose_snapshot`` reads the pages of Chapters 1-3
(:data:`PAGES`), keeps their prose and writes ``data/book_prose.txt``. Kept:
paragraphs, headings, list items, the bodies of prose directives (exercises,
solutions' text, admonitions) and math. Dropped: the front matter, every code
cell and every other fenced code or data block (``literalinclude``, ``code``,
``raw``...), directive fences and their option lines, target labels
(``(name)=``) and MyST comments. Roles keep their visible text
(``{term}`gate``` becomes ``gate``); a glued number, which the snapshot cannot
know, becomes ``#``. Runs of blank lines become one.

The snapshot is frozen: its SHA-256 is pinned in
:data:`chapter_code.corpora.texts.BOOK_PROSE_SHA256`, and this script refuses to
overwrite a snapshot whose content has that hash unless run with ``--force``
(after which the new hash it prints must be pinned by hand). Later edits to the
chapters therefore never change what Chapter 4 trains on.
"""  # noqa: E501  (its first line is the --help description)

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from pathlib import Path

# one reading of MyST's structure for both tools
from bookbuild.lint.prose import _FENCE, _LABEL, _OPTION

ROOT = Path(__file__).resolve().parents[2]
PAGES = ("book/recurrence.md", "book/gradients.md", "book/gated.md")
SNAPSHOT = ROOT / "data" / "book_prose.txt"

_GLUE = re.compile(r"\{glue(:text)?\}`[^`]*`")
_ROLE = re.compile(r"\{[\w:.-]+\}`([^`]*)`")
_REF_TEXT = re.compile(r"^(.*?)\s*<[^>]*>$")
#: prose directives whose argument is a label, not a title
LABEL_ARGUMENT = frozenset({"solution", "solution-start", "solution-end"})
#: fenced blocks whose content is code or data: dropped whole
CODE_BLOCKS = frozenset(
    {
        "code-cell",
        "code",
        "code-block",
        "literalinclude",
        "raw",
        "glue:figure",
        "bibliography",
    }
)


def _role_text(match: re.Match[str]) -> str:
    inner = match.group(1)
    shown = _REF_TEXT.match(inner)  # {term}`text <target>` shows "text"
    return shown.group(1) if shown else inner


def page_prose(markdown: str) -> str:
    """The prose of one MyST page, by the rules of this module's docstring."""
    lines = markdown.splitlines()
    if lines and lines[0].strip() == "---":  # front matter
        end = next(
            (i for i in range(1, len(lines)) if lines[i].strip() == "---"),
            len(lines) - 1,
        )
        lines = lines[end + 1 :]
    kept: list[str] = []
    skip_until: str | None = None  # the closing fence of a dropped block
    in_directive_head = False
    for line in lines:
        if skip_until is not None:
            if line.strip() == skip_until:
                skip_until = None
            continue
        fence = _FENCE.match(line)
        if fence:
            marker, _, name = fence.groups()
            rest = line[fence.end() :]
            if name is None and not rest.strip():  # a bare closing fence
                in_directive_head = False
                continue
            if name is None or name.strip() in CODE_BLOCKS:
                skip_until = marker
                continue
            # a prose directive: drop its fence and options, keep its body
            in_directive_head = True
            title = rest.strip()
            if title and name.strip() not in LABEL_ARGUMENT:
                kept.append(title)
            continue
        if in_directive_head and _OPTION.match(line):
            continue
        in_directive_head = False
        if (
            _LABEL.match(line)
            or line.lstrip().startswith("%")
            or line.strip().startswith("<!--")
        ):
            continue
        line = _GLUE.sub("#", line)
        line = _ROLE.sub(_role_text, line)
        kept.append(line.rstrip())
    text = "\n".join(kept)
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n") + "\n"


def snapshot_text(root: Path = ROOT, pages: tuple[str, ...] = PAGES) -> str:
    """The prose of ``pages``, in order, separated by a blank line."""
    return "\n".join(
        page_prose((root / page).read_text(encoding="utf-8")) for page in pages
    )


def write_snapshot(
    path: Path, text: str, pinned_sha256: str, force: bool = False
) -> str:
    """Write ``text`` to ``path`` unless ``path`` already holds the pinned snapshot;
    return the new SHA-256."""
    if (
        path.exists()
        and hashlib.sha256(path.read_bytes()).hexdigest() == pinned_sha256
        and not force
    ):
        raise FileExistsError(
            f"{path} is the pinned snapshot (SHA-256 {pinned_sha256}); it is frozen on "
            "purpose. Run with --force to replace it, then pin the printed hash in "
            "chapter_code/corpora/texts.py"
        )
    data = text.encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    partial.write_bytes(data)
    partial.replace(path)
    return hashlib.sha256(data).hexdigest()


def main(argv: list[str] | None = None) -> int:
    from chapter_code.corpora.texts import BOOK_PROSE_SHA256

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace a snapshot that has the pinned hash",
    )
    args = parser.parse_args(argv)
    try:
        digest = write_snapshot(
            SNAPSHOT, snapshot_text(), BOOK_PROSE_SHA256, force=args.force
        )
    except FileExistsError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(
        f"wrote {SNAPSHOT.relative_to(ROOT)} ({SNAPSHOT.stat().st_size:,} bytes), "
        f"SHA-256 {digest}"
    )
    if digest != BOOK_PROSE_SHA256:
        print(
            f'pin it: set BOOK_PROSE_SHA256 = "{digest}" in '
            "chapter_code/corpora/texts.py"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
