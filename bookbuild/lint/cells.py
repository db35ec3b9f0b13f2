"""A page's code cells read statically: their options, code and lines, and the names
their calls give.

Shared by the lints that read a page before it executes (:mod:`bookbuild.lint.source`)
and the pairing of claims with checks (:mod:`bookbuild.lint.claims`), so that neither
imports the other.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, field

import yaml

#: a ``{code-cell}``: the fence's line and the cell's body (options and code)
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.S | re.M)
#: a cell's option line without nesting
OPTION = re.compile(r"^:([\w-]+):(.*)$")


@dataclass
class Cell:
    line: int  # the line of its fence
    options: dict
    code: str  # its Python, the option lines blanked (line numbers kept)

    @property
    def label(self) -> str:
        return str(self.options.get("label", "?"))

    @functools.cached_property
    def tree(self) -> ast.AST | None:
        """Its Python, parsed (None where it does not parse: executing it will say
        why)."""
        try:
            return ast.parse(self.code)
        except SyntaxError:
            return None

    def source_line(self, lineno: int) -> int:
        """The page's line of line ``lineno`` of :attr:`code`."""
        return self.line + lineno


@dataclass
class Names:
    """Names a page's cells give values: exact ones, patterns (f-strings), and whether
    any is unknowable."""

    # name -> the page's line of its call
    exact: dict[str, int] = field(default_factory=dict)
    patterns: list[re.Pattern[str]] = field(default_factory=list)
    dynamic: bool = False

    def has(self, name: str) -> bool:
        return (
            self.dynamic
            or name in self.exact
            or any(p.fullmatch(name) for p in self.patterns)
        )


def cells(source: str) -> list[Cell]:
    """Every code cell of a MyST page, with its options read as myst-nb reads them (YAML
    after the colons).

    One build reads a page through several lints; the cells of one text are read, and
    their Python parsed (:attr:`Cell.tree`), once per process. The cells are shared
    between callers: read them, do not change them.
    """
    return list(_cells(source))


@functools.lru_cache(maxsize=64)
def _cells(source: str) -> tuple[Cell, ...]:
    found = []
    for match in CELL.finditer(source):
        body = match[1].split("\n")
        count = 0
        while count < len(body) and body[count].startswith(":"):
            count += 1
        options: object = {}
        # nested options: YAML (slower)
        if any(line.startswith(":mystnb:") for line in body[:count]):
            try:
                options = (
                    yaml.safe_load("\n".join(line[1:] for line in body[:count])) or {}
                )
            except yaml.YAMLError:
                pass
        else:  # ``:key: value`` lines
            options = {
                m[1]: m[2].strip() for line in body[:count] if (m := OPTION.match(line))
            }
        code = "\n".join([""] * count + body[count:])
        found.append(
            Cell(
                source.count("\n", 0, match.start()) + 1,
                options if isinstance(options, dict) else {},
                code,
            )
        )
    return tuple(found)


def _pattern(node: ast.AST) -> re.Pattern[str] | None:
    """A name an expression can evaluate to, as a pattern: an f-string (possibly
    ``.replace``d), else None."""
    while (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "replace"
    ):
        node = node.func.value
    if not isinstance(node, ast.JoinedStr):
        return None
    parts = [
        re.escape(v.value) if isinstance(v, ast.Constant) else ".+" for v in node.values
    ]
    return re.compile("".join(parts))


def _loop_values(tree: ast.AST) -> dict[int, list[ast.AST]]:
    """For every name bound by a ``for`` over a written-out list (``for name, value in
    [("a", 1), ...]:``): the expressions it takes, by the ``id`` of each use of it
    inside the loop."""
    found: dict[int, list[ast.AST]] = {}
    for loop in ast.walk(tree):
        if not (
            isinstance(loop, ast.For) and isinstance(loop.iter, (ast.List, ast.Tuple))
        ):
            continue
        items = loop.iter.elts
        if isinstance(loop.target, ast.Name):
            bound = {loop.target.id: items}
        elif isinstance(loop.target, ast.Tuple) and all(
            isinstance(t, ast.Name) for t in loop.target.elts
        ):
            width = len(loop.target.elts)
            if not all(
                isinstance(i, (ast.Tuple, ast.List)) and len(i.elts) == width
                for i in items
            ):
                continue
            bound = {
                t.id: [i.elts[k] for i in items] for k, t in enumerate(loop.target.elts)
            }
        else:
            continue
        for node in ast.walk(loop):
            if isinstance(node, ast.Name) and node.id in bound:
                found[id(node)] = bound[node.id]
    return found


def names_given(page_cells: list[Cell], functions: tuple[str, ...]) -> Names:
    """The first arguments of every call of one of ``functions`` (``"glue"``,
    ``"claims.check"``) in the cells: written as strings, as f-strings, or as the loop
    variable of a ``for`` over a written-out list."""
    names = Names()
    for cell in page_cells:
        tree = (
            cell.tree
            if any(f"{f.rsplit('.', 1)[-1]}(" in cell.code for f in functions)
            else None
        )
        if tree is None:
            continue
        loops = _loop_values(tree)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and ast.unparse(node.func) in functions):
                continue
            first = (
                node.args[0]
                if node.args
                else next((k.value for k in node.keywords if k.arg == "name"), None)
            )
            for value in loops.get(id(first), [first]):
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    # the call's, or the list entry's
                    where = node.lineno if value is first else value.lineno
                    names.exact.setdefault(value.value, cell.source_line(where))
                elif value is not None and (pattern := _pattern(value)) is not None:
                    names.patterns.append(pattern)
                else:
                    names.dynamic = True
    return names


def names_cited(
    page_cells: list[Cell], functions: tuple[str, ...] = ("claims.check", "check")
) -> Names:
    """The glue names of every ``cite={...}`` of a call of one of ``functions``
    (``claims.check``): the written-out dict's keys, as strings or f-strings; a
    ``cite`` given any other way makes the names unknowable."""
    names = Names()
    for cell in page_cells:
        tree = cell.tree if "cite=" in cell.code else None
        if tree is None:
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and ast.unparse(node.func) in functions):
                continue
            cite = next((k.value for k in node.keywords if k.arg == "cite"), None)
            if cite is None:
                continue
            if not isinstance(cite, ast.Dict) or any(
                key is None for key in cite.keys
            ):  # a variable, **spread
                names.dynamic = True
                continue
            for key in cite.keys:
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    names.exact.setdefault(key.value, cell.source_line(key.lineno))
                elif key is not None and (pattern := _pattern(key)) is not None:
                    names.patterns.append(pattern)
                else:
                    names.dynamic = True
    return names
