"""What the chapters' markup costs an author: roles, glue calls, checks, hidden lines.

``python -m bookbuild.tools.markup [ROOT]`` prints one row per chapter and the total:
the roles written in the prose (``{glue:text}``, ``{claim}``, ``{lit}``,
``{lit-math}``, ``{nonresult}``), the literals declared in the front matter
(``book: literals``), the one-line ``glue(...)`` calls, the ``claims.check(...)``
calls and the texts they ``cite``, and the non-blank code lines of hidden cells
(tagged ``remove-cell`` or ``remove-output``) against those of shown cells.
BENCHMARKS.md records it before and after issue 51's one call per fact.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

from bookbuild.lint.cells import cells
from bookbuild.lint.prose import page_literals
from bookbuild.lint.references import HIDDEN

ROLES = ("glue:text", "claim", "lit", "lit-math", "nonresult")
COLUMNS = (*ROLES, "roles", "declared", "glue()", "check()", "cited", "hidden", "shown")
_GLUE_CALL = re.compile(r"^\s*glue\(")
_CITE_KEY = re.compile(r"""^\s*cite=\{|^\s*["'][\w]+["']\s*:""")


def count(text: str) -> dict[str, int]:
    """The columns of :data:`COLUMNS` for one page's MyST source."""
    out = {
        role: len(re.findall(r"\{" + re.escape(role) + r"\}`", text)) for role in ROLES
    }
    out["roles"] = sum(out[role] for role in ROLES)
    out["declared"] = len(page_literals(text)[0])
    out["glue()"] = out["check()"] = out["cited"] = out["hidden"] = out["shown"] = 0
    for cell in cells(text):
        code = [line for line in cell.code.split("\n") if line.strip()]
        tags = cell.options.get("tags") or []
        if isinstance(tags, str):  # a ``:tags: [remove-cell]`` line, read as text
            tags = yaml.safe_load(tags) or []
        hidden = bool(set(tags if isinstance(tags, list) else [tags]) & HIDDEN)
        out["hidden" if hidden else "shown"] += len(code)
        out["glue()"] += sum(bool(_GLUE_CALL.match(line)) for line in code)
        out["check()"] += cell.code.count("claims.check(")
        out["cited"] += _cited(cell.code)
    return out


def _cited(code: str) -> int:
    """The texts the cell's checks cite (``cite={"name": text, ...}``), read from the
    source."""
    import ast

    try:
        tree = ast.parse(code)
    except SyntaxError:
        return 0
    return sum(
        len(k.value.keys)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        for k in node.keywords
        if k.arg == "cite" and isinstance(k.value, ast.Dict)
    )


def table(root: Path) -> str:
    """The Markdown table: one row per chapter of the table of contents, and the
    total."""
    from bookbuild.execute.engine import chapters

    rows, total = [], dict.fromkeys(COLUMNS, 0)
    for chapter in chapters(root):
        page = root / f"{chapter}.md"
        counts = count(page.read_text(encoding="utf-8"))
        if not counts["check()"]:
            # the front page and "How this book is built": no checks, no results
            continue
        rows.append(
            f"| {Path(chapter).name} | "
            + " | ".join(str(counts[c]) for c in COLUMNS)
            + " |"
        )
        total = {c: total[c] + counts[c] for c in COLUMNS}
    head = "| chapter | " + " | ".join(f"`{c}`" for c in COLUMNS) + " |"
    rule = "|---" * (len(COLUMNS) + 1) + "|"
    last = "| all | " + " | ".join(str(total[c]) for c in COLUMNS) + " |"
    return "\n".join([head, rule, *rows, last])


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    root = Path(args[0]) if args else Path(__file__).resolve().parents[2]
    print(table(root))
    return 0


if __name__ == "__main__":
    sys.exit(main())
