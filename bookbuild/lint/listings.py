"""Every taught function and class a visible cell calls is shown on its page, as a
listing.

A chapter's promise is that its cells run tested code the reader can see. A visible code
cell (any not tagged ``remove-cell`` or ``remove-input``; a ``hide-input`` cell counts
as visible, since the reader can unfold its code) that imports a function or class
from ``chapter_code`` and uses it must find, somewhere on the same page, a
``{literalinclude}`` of that object (``:pyobject: NAME``). Helpers that draw, print,
time or check rather than teach are exempt: the ``figures``, ``plotting``, ``tables``,
``claims``, ``checks`` and ``diagrams`` modules, ``core.runtime``, ``core.timing``
(measuring wall time) and ``sampling.explorer`` (the interactive panel's data), and any
function whose name starts with ``plot_`` (drawing). Their output is on the page, and
what they compute is not the chapter's subject. Everything is read statically, so the
lint imports nothing.

``python -m bookbuild.lint.listings`` lists what is missing, page by page, with the line
of the first cell that uses it and the file that defines it; ``make check`` fails on
any.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: modules (by their last name) whose helpers present results rather than teach a
#: method: they draw, print, check, run a cell once, measure wall time (``timing``) or
#: build the interactive panel's data (``explorer``); their output is on the page, and
#: what they compute is not the chapter's subject
PRESENTATION = frozenset(
    {
        "figures",
        "plotting",
        "tables",
        "claims",
        "checks",
        "diagrams",
        "runtime",
        "timing",
        "explorer",
    }
)
#: functions named ``plot_...`` draw a figure, wherever they are defined: exempt too
DRAWING_PREFIX = "plot_"
_CELL = re.compile(r"^(`{3,})\{code-cell\}[^\n]*\n(.*?)^\1\s*$", re.S | re.M)
#: the tags that keep a cell's code from the reader; ``hide-input`` only folds it, so a
#: folded cell is visible
_HIDDEN = ("remove-cell", "remove-input")


@dataclass(frozen=True)
class Unshown:
    page: str
    line: int  # of the first visible cell that uses it
    name: str
    module: str  # where the page imports it from

    @property
    def file(self) -> str:
        return self.module.replace(".", "/") + ".py"

    def __str__(self) -> str:
        return (
            f"{self.page}:{self.line}: the cell uses {self.name} ({self.file}), which "
            "the page never shows; add a listing (```{literalinclude} "
            f"../{self.file}``` with :pyobject: {self.name})"
        )


def _defines(module: str, name: str, root: Path) -> str | None:
    """The module that defines ``name`` as a function or class, following one re-export;
    ``None`` otherwise."""
    path = root / (module.replace(".", "/") + ".py")
    if not path.is_file():
        return None
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and node.name == name
        ):
            return module
        if (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.startswith("chapter_code")
        ):
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    return _defines(node.module, alias.name, root)
    return None


def _visible_cells(text: str) -> list[tuple[int, str]]:
    """(line, code) of each code cell whose source the reader sees."""
    out = []
    for match in _CELL.finditer(text):
        body = match.group(2)
        options = [line for line in body.split("\n") if line.startswith(":")]
        if any(tag in line for line in options for tag in _HIDDEN):
            continue
        code = "\n".join(
            line
            for line in body.split("\n")
            if not line.startswith(":") and line.strip() != "---"
        )
        out.append((text.count("\n", 0, match.start()) + 1, code))
    return out


def unshown(page: Path, root: Path = ROOT) -> list[Unshown]:
    """The taught functions and classes the page's visible cells use and the page never
    shows."""
    text = page.read_text()
    shown = set(re.findall(r":pyobject:\s*([\w.]+)", text))
    shown |= {name.split(".")[0] for name in shown}
    found: dict[str, Unshown] = {}
    # local name -> (module, name), across the page's cells
    imported: dict[str, tuple[str, str]] = {}
    for line, code in _visible_cells(text):
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.startswith("chapter_code.")
            ):
                for alias in node.names:
                    imported[alias.asname or alias.name] = (node.module, alias.name)
        used = {
            n.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        }
        for local in sorted(used & set(imported)):
            module, name = imported[local]
            if (
                name in shown
                or name in found
                or name.startswith(DRAWING_PREFIX)
                or module.rsplit(".", 1)[-1] in PRESENTATION
            ):
                continue
            defined = _defines(module, name, root)
            if defined is None or defined.rsplit(".", 1)[-1] in PRESENTATION:
                continue  # a constant, or a presentation helper re-exported
            found[name] = Unshown(
                page.relative_to(root).as_posix(), line, name, defined
            )
    return sorted(found.values(), key=lambda u: (u.line, u.name))


def chapters(root: Path = ROOT) -> list[Path]:
    """The pages whose cells teach: the numbered chapters of the table of contents."""
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text())
    parts = [part for part in toc.get("parts", []) if part.get("numbered")]
    return [
        root / f"{c['file']}.md" for part in parts for c in part.get("chapters", [])
    ]


def main(argv: list[str] | None = None) -> int:
    problems = [u for page in chapters() for u in unshown(page)]
    for problem in problems:
        print(problem)
    if problems:
        print(
            f"listings: {len(problems)} taught function(s) or class(es) used by a "
            "visible cell and never shown",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
