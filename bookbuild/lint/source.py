"""What a page's source alone shows wrong, found before any chapter executes (``make check``, ``make book``).

The checks that read executed outputs (:mod:`bookbuild.lint.references`, :mod:`bookbuild.lint.claims`) are
exact, but they come after execution, which takes minutes when code changed. Most of what they catch can be read
from the page itself, so this lint runs first and stops the command in about a second, one line per mistake
naming file and line:

- a ``{glue:text}`` name that no ``glue(...)`` call of the page can produce (with the name probably meant);
- a ``{claim}`` naming a check no ``claims.check(...)`` of the page declares (at the claim's line), a check
  that no sentence claims (at the check's line), a check that cannot fail, and a result sentence with neither a
  claim nor ``{nonresult}`` (:mod:`bookbuild.lint.claims` reads them again after execution);
- a figure cell (``:mystnb: figure:``) shown without ``image: alt:``, or ending in a drawing call whose value
  would be shown beside the figure (``ax.legend()``);
- a cell that draws through pyplot before any cell of the page calls ``use_book_style()`` (the check after
  execution reads every figure's PNG for the book's mark);
- two cells or figures of a page with one name (Sphinx: "Duplicate explicit target name").

Names are read where they are written: as strings, as the loop variable of a ``for`` over a written-out list
(``for name, value in [("param_vocab", V), ...]: glue(name, value)``), and as f-strings, read as patterns
(``f"d_sc_{size}"`` glues every ``d_sc_...``). Where a page computes a name any other way the lint cannot know
it and leaves that page's names to the checks after execution; a name the page's last execution glued (through
a helper, say) counts as glued while the page's code is unchanged, and so does a check it declared.
"""

from __future__ import annotations

import ast
import difflib
import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from bookbuild.lint import claims as claims_lint
from bookbuild.lint.references import GLUE_ROLE, HIDDEN

#: a ``{code-cell}``: the fence's line and the cell's body (options and code)
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.S | re.M)
#: a cell's option line without nesting
OPTION = re.compile(r"^:([\w-]+):(.*)$")
#: pages the build writes itself
GENERATED = frozenset({"build-report.md", "checked.md"})


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
        """Its Python, parsed (None where it does not parse: executing it will say why)."""
        try:
            return ast.parse(self.code)
        except SyntaxError:
            return None

    def source_line(self, lineno: int) -> int:
        """The page's line of line ``lineno`` of :attr:`code`."""
        return self.line + lineno


@dataclass
class Names:
    """Names a page's cells give values: exact ones, patterns (f-strings), and whether any is unknowable."""

    exact: dict[str, int] = field(default_factory=dict)  # name -> the page's line of its call
    patterns: list[re.Pattern[str]] = field(default_factory=list)
    dynamic: bool = False

    def has(self, name: str) -> bool:
        return self.dynamic or name in self.exact or any(p.fullmatch(name) for p in self.patterns)


def cells(source: str) -> list[Cell]:
    """Every code cell of a MyST page, with its options read as myst-nb reads them (YAML after the colons)."""
    found = []
    for match in CELL.finditer(source):
        body = match[1].split("\n")
        count = 0
        while count < len(body) and body[count].startswith(":"):
            count += 1
        options: object = {}
        if any(line.startswith(":mystnb:") for line in body[:count]):  # nested options: YAML (slower)
            try:
                options = yaml.safe_load("\n".join(line[1:] for line in body[:count])) or {}
            except yaml.YAMLError:
                pass
        else:  # ``:key: value`` lines
            options = {m[1]: m[2].strip() for line in body[:count] if (m := OPTION.match(line))}
        code = "\n".join([""] * count + body[count:])
        found.append(Cell(source.count("\n", 0, match.start()) + 1, options if isinstance(options, dict) else {},
                          code))
    return found


def _pattern(node: ast.AST) -> re.Pattern[str] | None:
    """A name an expression can evaluate to, as a pattern: an f-string (possibly ``.replace``d), else None."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "replace":
        node = node.func.value
    if not isinstance(node, ast.JoinedStr):
        return None
    parts = [re.escape(v.value) if isinstance(v, ast.Constant) else ".+" for v in node.values]
    return re.compile("".join(parts))


def _loop_values(tree: ast.AST) -> dict[int, list[ast.AST]]:
    """For every name bound by a ``for`` over a written-out list (``for name, value in [("a", 1), ...]:``): the
    expressions it takes, by the ``id`` of each use of it inside the loop."""
    found: dict[int, list[ast.AST]] = {}
    for loop in ast.walk(tree):
        if not (isinstance(loop, ast.For) and isinstance(loop.iter, (ast.List, ast.Tuple))):
            continue
        items = loop.iter.elts
        if isinstance(loop.target, ast.Name):
            bound = {loop.target.id: items}
        elif isinstance(loop.target, ast.Tuple) and all(isinstance(t, ast.Name) for t in loop.target.elts):
            width = len(loop.target.elts)
            if not all(isinstance(i, (ast.Tuple, ast.List)) and len(i.elts) == width for i in items):
                continue
            bound = {t.id: [i.elts[k] for i in items] for k, t in enumerate(loop.target.elts)}
        else:
            continue
        for node in ast.walk(loop):
            if isinstance(node, ast.Name) and node.id in bound:
                found[id(node)] = bound[node.id]
    return found


def names_given(page_cells: list[Cell], functions: tuple[str, ...]) -> Names:
    """The first arguments of every call of one of ``functions`` (``"glue"``, ``"claims.check"``) in the cells:
    written as strings, as f-strings, or as the loop variable of a ``for`` over a written-out list."""
    names = Names()
    for cell in page_cells:
        tree = cell.tree if any(f"{f.rsplit('.', 1)[-1]}(" in cell.code for f in functions) else None
        if tree is None:
            continue
        loops = _loop_values(tree)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and ast.unparse(node.func) in functions):
                continue
            first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "name"), None)
            for value in loops.get(id(first), [first]):
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    where = node.lineno if value is first else value.lineno  # the call's, or the list entry's
                    names.exact.setdefault(value.value, cell.source_line(where))
                elif value is not None and (pattern := _pattern(value)) is not None:
                    names.patterns.append(pattern)
                else:
                    names.dynamic = True
    return names


#: the names a figure cell draws through: a method of these returns an artist (a legend, a label, lines), shown
#: as a value when it ends the cell
DRAWING = re.compile(r"^(ax\w*|axes|axs|plt)$")
#: methods of those that return nothing
RETURN_NONE = frozenset({"show", "close", "tight_layout", "savefig"})


#: matplotlib drawn directly in a page's cell (through pyplot)
DRAWS = re.compile(r"\bplt\.(subplots|subplot|subplot_mosaic|figure|plot|imshow|bar|hist|scatter)\(")


def _last_value(cell: Cell) -> str | None:
    """The last line of a cell when it is a drawing call whose value would be shown (``ax.legend()``), else None.
    Only the plain cases: whatever else ends a figure cell is read from its outputs after execution
    (:mod:`bookbuild.lint.references`)."""
    tree = cell.tree
    if not isinstance(tree, ast.Module) or not tree.body or not isinstance(tree.body[-1], ast.Expr):
        return None
    last = tree.body[-1]
    call = last.value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)) or call.func.attr in RETURN_NONE:
        return None
    owner = call.func.value
    while isinstance(owner, (ast.Subscript, ast.Attribute)):  # ax[0].legend, ax.xaxis.set_label_text: ax
        owner = owner.value
    name = owner.id if isinstance(owner, ast.Name) else None
    if name is None or not DRAWING.match(name):
        return None
    end = cell.code.split("\n")[(last.end_lineno or last.lineno) - 1][last.end_col_offset or 0:]
    if end.lstrip().startswith(";"):
        return None
    text = ast.unparse(call)
    return text if len(text) <= 40 else text[:37] + "..."


def page_problems(page: Path, chapter: str | None = None, also_glued: frozenset[str] = frozenset()) -> list[str]:
    """One line per mistake the page's source shows (see the module's docstring); ``also_glued``: names known to
    be glued all the same (by the page's last execution, through a helper the lint cannot read)."""
    chapter = chapter or f"book/{page.stem}"
    where = f"{chapter}.md"
    source = page.read_text(encoding="utf-8")
    lines = source.splitlines()
    page_cells = cells(source)
    problems = []

    glued = names_given(page_cells, ("glue",))
    for number, line in enumerate(lines, start=1):
        for match in GLUE_ROLE.finditer(line):
            name = match[1].strip()
            if "::" in name or glued.has(name) or name in also_glued:
                continue
            close = difflib.get_close_matches(name, sorted(glued.exact), n=1, cutoff=0.7)
            hint = f"; did you mean `{close[0]}`?" if close else "; glue it in a cell of this page"
            problems.append(f"{where}:{number}: {{glue:text}}`{name}` names no value a cell of this page glues{hint}")

    declared = names_given(page_cells, ("claims.check", "check"))
    claimed: set[str] = set()
    for name, _sentence, line in claims_lint.claims_in(source):
        claimed.add(name)
        if name and not declared.has(name) and claims_lint.GLUE_PREFIX + name not in also_glued:
            close = difflib.get_close_matches(name, sorted(declared.exact), n=1, cutoff=0.7)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            problems.append(f"{where}:{line}: the claim names check {name!r}, which no cell of this page "
                            f"declares{hint}")
    for name, line in declared.exact.items():
        if name not in claimed:
            problems.append(f"{where}:{line}: check {name!r} is declared but no sentence claims it: write "
                            f"{{claim}}`the sentence it holds <{name}>`")
    for line, name, why in claims_lint.trivial_checks(source):
        problems.append(f"{where}:{line}: check {name!r} cannot fail: {why}; compare with a value computed "
                        "another way (PyTorch, autograd, a stored result) or with the bound the sentence states")
    if chapter in claims_lint.COMPLETE:
        for line, sentence in claims_lint.unclaimed_results(source):
            shown = sentence if len(sentence) < 90 else sentence[:87] + "..."
            problems.append(f"{where}:{line}: a result sentence without a claim: {shown!r}; claim it "
                            "({claim}`... <check-name>`) or mark it {nonresult}`...` if it states no result")

    seen: dict[str, int] = {}
    styled = False
    for cell in page_cells:
        styled = styled or "use_book_style(" in cell.code
        drawn = DRAWS.search(cell.code)
        if drawn and not styled and not set(cell.options.get("tags") or []) & HIDDEN:
            problems.append(f"{where}:{cell.line}: cell '{cell.label}' draws with `{drawn[0]}...)` before any cell "
                            "of this page calls `use_book_style()`: call it first (chapter_code.core.plotting), or "
                            "draw through a plotting function of chapter_code, so the figure has the book's fonts, "
                            "sizes, colours and PNG")
        mystnb = cell.options.get("mystnb") or {}
        figure = mystnb.get("figure") if isinstance(mystnb, dict) else None
        image = mystnb.get("image") if isinstance(mystnb, dict) else None
        tags = set(cell.options.get("tags") or [])
        if isinstance(figure, dict) and not tags & HIDDEN and not str((image or {}).get("alt", "") or "").strip():
            problems.append(f"{where}:{cell.line}: the figure of cell '{cell.label}' has no alt text (the site "
                            "would show its file path): add `image: alt:` under the cell's `:mystnb:` option, a "
                            "sentence saying what the figure shows")
        value = _last_value(cell) if isinstance(figure, dict) else None
        if value is not None:
            problems.append(f"{where}:{cell.line}: the figure cell '{cell.label}' ends in `{value}`, whose value "
                            "would show as a second output taking the figure's name (Sphinx would report 'Duplicate "
                            "explicit target name'): end the cell with an assignment (`fig = ...`) or put `;` after "
                            "its last expression")
        targets = [cell.options.get("label")] + ([figure.get("name")] if isinstance(figure, dict) else [])
        for target in dict.fromkeys(t for t in targets if t):
            if target in seen:
                problems.append(f"{where}:{cell.line}: cell '{cell.label}' reuses the name {target!r} of the cell "
                                f"at line {seen[target]} (Sphinx would report 'Duplicate explicit target name'): "
                                "give each cell and figure its own")
            else:
                seen[target] = cell.line
    return problems


def last_glued(root: Path, chapter: str) -> frozenset[str]:
    """The names the page's last execution glued, where its cached outputs match its code as it stands (a name
    glued by a helper from ``chapter_code``, which the lint cannot read); none otherwise."""
    from bookbuild.execute import engine
    from bookbuild.lint.references import glued_names

    try:
        return frozenset(glued_names(engine.rendered_notebook(root, chapter)))
    except Exception:  # no cache, no outputs for this code, an unreadable entry: the source is all there is
        return frozenset()


def check_pages(root: Path) -> list[str]:
    """:func:`page_problems` of every page of ``book/`` (the generated ones left out)."""
    problems = []
    for page in sorted((root / "book").glob("*.md")):
        if page.name in GENERATED:
            continue
        chapter = f"book/{page.stem}"
        found = page_problems(page, chapter)
        if any("{glue:text}" in p or "the claim names check" in p for p in found):  # rare: only then read the cache
            found = page_problems(page, chapter, last_glued(root, chapter))
        problems += found
    return problems
