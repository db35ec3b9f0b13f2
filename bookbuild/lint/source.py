"""What a page's source alone shows wrong, found before any chapter executes (``make
check``, ``make book``).

The checks that read executed outputs (:mod:`bookbuild.lint.references`,
:mod:`bookbuild.lint.claims`) are exact, but they come after execution, which takes
minutes when code changed. Most of what they catch can be read from the page itself, so
this lint runs first and stops the command in about a second, one line per mistake
naming file and line:

- a ``{glue:text}`` name that no ``glue(...)`` call of the page, nor a check's
  ``cite={...}``, can produce (with the name probably meant);
- a ``{claim}`` naming a check no ``claims.check(...)`` of the page declares (at the
  claim's line), a check that no sentence claims (at the check's line), a check that
  cannot fail or asserts only a sign, and a result sentence with neither a claim nor
  ``{nonresult}`` (:mod:`bookbuild.lint.claims` reads them again after execution);
- a figure cell (``:mystnb: figure:``) shown without ``image: alt:``, or ending in a
  drawing call whose value would be shown beside the figure (``ax.legend()``);
- a cell that draws through pyplot before any cell of the page calls
  ``use_book_style()`` (the check after execution reads every figure's PNG for the
  book's mark);
- two cells or figures of a page with one name (Sphinx: "Duplicate explicit target
  name").

Names are read where they are written: as strings, as the loop variable of a ``for``
over a written-out list (``for name, value in [("param_vocab", V), ...]: glue(name,
value)``), and as f-strings, read as patterns (``f"d_sc_{size}"`` glues every
``d_sc_...``). Where a page computes a name any other way the lint cannot know it and
leaves that page's names to the checks after execution; a name the page's last execution
glued (through a helper, say) counts as glued while the page's code is unchanged, and so
does a check it declared.
"""

from __future__ import annotations

import ast
import difflib
import re
from pathlib import Path

from bookbuild.lint import claims as claims_lint
from bookbuild.lint.cells import (
    Cell,
    cells,
    names_cited,
    names_given,
)  # noqa: F401
from bookbuild.lint.references import GLUE_ROLE, HIDDEN

#: pages the build writes itself
GENERATED = frozenset({"build-report.md", "checked.md"})


#: the names a figure cell draws through: a method of these returns an artist (a legend,
#: a label, lines), shown as a value when it ends the cell
DRAWING = re.compile(r"^(ax\w*|axes|axs|plt)$")
#: methods of those that return nothing
RETURN_NONE = frozenset({"show", "close", "tight_layout", "savefig"})


#: matplotlib drawn directly in a page's cell (through pyplot)
DRAWS = re.compile(
    r"\bplt\.(subplots|subplot|subplot_mosaic|figure|plot|imshow|bar|hist|scatter)\("
)


def _last_value(cell: Cell) -> str | None:
    """The last line of a cell when it is a drawing call whose value would be shown
    (``ax.legend()``), else None. Only the plain cases: whatever else ends a figure cell
    is read from its outputs after execution (:mod:`bookbuild.lint.references`)."""
    tree = cell.tree
    if (
        not isinstance(tree, ast.Module)
        or not tree.body
        or not isinstance(tree.body[-1], ast.Expr)
    ):
        return None
    last = tree.body[-1]
    call = last.value
    if (
        not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute))
        or call.func.attr in RETURN_NONE
    ):
        return None
    owner = call.func.value
    # ax[0].legend, ax.xaxis.set_label_text: ax
    while isinstance(owner, (ast.Subscript, ast.Attribute)):
        owner = owner.value
    name = owner.id if isinstance(owner, ast.Name) else None
    if name is None or not DRAWING.match(name):
        return None
    end = cell.code.split("\n")[(last.end_lineno or last.lineno) - 1][
        last.end_col_offset or 0 :
    ]
    if end.lstrip().startswith(";"):
        return None
    text = ast.unparse(call)
    return text if len(text) <= 40 else text[:37] + "..."


def page_problems(
    page: Path, chapter: str | None = None, also_glued: frozenset[str] = frozenset()
) -> list[str]:
    """One line per mistake the page's source shows (see the module's docstring);
    ``also_glued``: names known to be glued all the same (by the page's last execution,
    through a helper the lint cannot read)."""
    chapter = chapter or f"book/{page.stem}"
    where = f"{chapter}.md"
    source = page.read_text(encoding="utf-8")
    lines = source.splitlines()
    page_cells = cells(source)
    problems = []

    glued = names_given(page_cells, ("glue",))
    cited = names_cited(page_cells)  # claims.check(..., cite={"name": text}) glues too
    glued.exact = {**cited.exact, **glued.exact}
    glued.patterns += cited.patterns
    glued.dynamic = glued.dynamic or cited.dynamic
    for number, line in enumerate(lines, start=1):
        for match in GLUE_ROLE.finditer(line):
            name = match[1].strip()
            if "::" in name or glued.has(name) or name in also_glued:
                continue
            close = difflib.get_close_matches(
                name, sorted(glued.exact), n=1, cutoff=0.7
            )
            hint = (
                f"; did you mean `{close[0]}`?"
                if close
                else "; glue it in a cell of this page"
            )
            problems.append(
                f"{where}:{number}: {{glue:text}}`{name}` names no value a cell of "
                f"this page glues{hint}"
            )

    declared = names_given(page_cells, ("claims.check", "check"))
    claimed: set[str] = set()
    for name, _sentence, line in claims_lint.claims_in(source):
        claimed.add(name)
        if (
            name
            and not declared.has(name)
            and claims_lint.GLUE_PREFIX + name not in also_glued
        ):
            close = difflib.get_close_matches(
                name, sorted(declared.exact), n=1, cutoff=0.7
            )
            hint = f"; did you mean {close[0]!r}?" if close else ""
            problems.append(
                f"{where}:{line}: the claim names check {name!r}, which no cell of "
                f"this page declares{hint}"
            )
    for name, line in declared.exact.items():
        if name not in claimed:
            problems.append(
                f"{where}:{line}: check {name!r} is declared but no sentence claims "
                f"it: write {{claim}}`the sentence it holds <{name}>`"
            )
    for line, name, why in claims_lint.trivial_checks(source):
        problems.append(claims_lint.trivial_problem(where, line, name, why))
    if chapter in claims_lint.COMPLETE:
        for line, sentence in claims_lint.unclaimed_results(source):
            shown = sentence if len(sentence) < 90 else sentence[:87] + "..."
            problems.append(
                f"{where}:{line}: a result sentence without a claim: {shown!r}; claim "
                "it ({claim}`... <check-name>`) or mark it {nonresult}`...` if it "
                "states no result"
            )

    seen: dict[str, int] = {}
    styled = False
    for cell in page_cells:
        styled = styled or "use_book_style(" in cell.code
        drawn = DRAWS.search(cell.code)
        if drawn and not styled and not set(cell.options.get("tags") or []) & HIDDEN:
            problems.append(
                f"{where}:{cell.line}: cell '{cell.label}' draws with `{drawn[0]}...)` "
                "before any cell of this page calls `use_book_style()`: call it first "
                "(chapter_code.core.plotting), or draw through a plotting function of "
                "chapter_code, so the figure has the book's fonts, sizes, colours and "
                "PNG"
            )
        mystnb = cell.options.get("mystnb") or {}
        figure = mystnb.get("figure") if isinstance(mystnb, dict) else None
        image = mystnb.get("image") if isinstance(mystnb, dict) else None
        tags = set(cell.options.get("tags") or [])
        if (
            isinstance(figure, dict)
            and not tags & HIDDEN
            and not str((image or {}).get("alt", "") or "").strip()
        ):
            problems.append(
                f"{where}:{cell.line}: the figure of cell '{cell.label}' has no alt "
                "text (the site would show its file path): add `image: alt:` under "
                "the cell's `:mystnb:` option, a sentence saying what the figure "
                "shows"
            )
        value = _last_value(cell) if isinstance(figure, dict) else None
        if value is not None:
            problems.append(
                f"{where}:{cell.line}: the figure cell '{cell.label}' ends in "
                f"`{value}`, whose value would show as a second output taking the "
                "figure's name (Sphinx would report 'Duplicate explicit target "
                "name'): end the cell with an assignment (`fig = ...`) or put `;` "
                "after its last expression"
            )
        targets = [cell.options.get("label")] + (
            [figure.get("name")] if isinstance(figure, dict) else []
        )
        for target in dict.fromkeys(t for t in targets if t):
            if target in seen:
                problems.append(
                    f"{where}:{cell.line}: cell '{cell.label}' reuses the name "
                    f"{target!r} of the cell at line {seen[target]} (Sphinx would "
                    "report 'Duplicate explicit target name'): give each cell and "
                    "figure its own"
                )
            else:
                seen[target] = cell.line
    return problems


def last_glued(root: Path, chapter: str) -> frozenset[str]:
    """The names the page's last execution glued, where its cached outputs match its
    code as it stands (a name glued by a helper from ``chapter_code``, which the lint
    cannot read); none otherwise."""
    from bookbuild.execute import engine
    from bookbuild.lint.references import glued_names

    try:
        return frozenset(glued_names(engine.rendered_notebook(root, chapter)))
    # no cache, no outputs for this code, an unreadable entry: the source is all there
    # is
    except Exception:
        return frozenset()


def check_pages(root: Path) -> list[str]:
    """:func:`page_problems` of every page of ``book/`` (the generated ones left
    out)."""
    problems = []
    for page in sorted((root / "book").glob("*.md")):
        if page.name in GENERATED:
            continue
        chapter = f"book/{page.stem}"
        found = page_problems(page, chapter)
        # rare: only then read the cache
        if any("{glue:text}" in p or "the claim names check" in p for p in found):
            found = page_problems(page, chapter, last_glued(root, chapter))
        problems += found
    return problems
