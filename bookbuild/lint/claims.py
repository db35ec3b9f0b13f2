"""Claims: result sentences tied to the checks that hold them, on the page, in the PDF
and in an appendix.

An author marks a result sentence with one role and names a check::

    The padded sequence {claim}`ends in the state it reaches alone <c-pad-state>`.

(use double backticks, ``{claim}``text with {glue:text}`x` <name>``, when the
sentence holds roles of its own) and declares the check in a hidden cell of
the same page with :func:`chapter_code.core.claims.check`. This module

- **renders the role** (Sphinx): the sentence as normal text followed by a
  small mark; in HTML the mark is a button whose hover or focus (keyboard,
  touch) shows the condition's source, the values this build saw and whether
  it held; in the PDF it is a superscript reference to the appendix entry;
- **checks the pairing** before Sphinx runs (:func:`problems`): a claim that
  names a check no cell declared, a check no sentence claims, or a name used
  on two pages each fails the build with one line naming page and label (a
  failing check already failed its cell);
- **writes the appendix** ``book/checked.md``, "What this build checked":
  per chapter every claim, its check's condition, values and status.

The checks travel as glued values (``check:<name>``), so the regression gate
compares them with the baseline like any other output.
"""

from __future__ import annotations

import ast
import copy
import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from docutils import nodes

GLUE_PREFIX = "check:"
APPENDIX_PAGE = Path("book") / "checked.md"
#: ``{claim}`text <name>``` or with double backticks; the text may not hold the closing
#: delimiter.
CLAIM = re.compile(r"\{claim\}(?P<ticks>`+)(?P<body>.+?)(?P=ticks)", re.S)
TARGET = re.compile(r"^(?P<text>.*?)\s*<(?P<name>[a-z0-9]+(?:-[a-z0-9]+)*)>\s*$", re.S)


@dataclass
class PageClaims:
    """The claims written in one page's prose and the checks its cells declared."""

    chapter: str
    # (name, sentence, line)
    claims: list[tuple[str, str, int]] = field(default_factory=list)
    # name -> the check's record
    checks: dict[str, dict[str, Any]] = field(default_factory=dict)
    # result sentences without a claim
    unclaimed: list[tuple[int, str]] = field(default_factory=list)
    # (line, check, why) of checks that cannot fail
    trivial: list[tuple[int, str, str]] = field(default_factory=list)
    # check -> the line of its claims.check call
    declared_at: dict[str, int] = field(default_factory=dict)

    @property
    def held(self) -> int:
        return sum(1 for c in self.checks.values() if c.get("held"))


def split_target(body: str) -> tuple[str, str] | None:
    """``"text <name>"`` -> ``("text", "name")``; ``None`` when the role names no
    check."""
    match = TARGET.match(body)
    return (match["text"], match["name"]) if match else None


def claims_in(source: str) -> list[tuple[str, str, int]]:
    """Every ``{claim}`` role of a MyST page's prose: (name, sentence, line), code cells
    left out."""
    out = []
    in_fence = False
    prose = []
    for line in source.splitlines(keepends=True):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence and line.lstrip().startswith("```{code-cell")
        body = line.rstrip("\r\n")
        # code blanked, its lines kept
        prose.append(" " * len(body) + line[len(body) :] if in_fence else line)
    text = "".join(prose)
    for match in CLAIM.finditer(text):
        target = split_target(match["body"])
        line = text.count("\n", 0, match.start()) + 1
        if target is None:
            out.append(("", match["body"], line))
        else:
            out.append((target[1], " ".join(target[0].split()), line))
    return out


def _plain(data: dict[str, Any]) -> str:
    """The plain-text form of a glued value (stored as
    ``application/papermill.record/text/plain``)."""
    plain = next((v for k, v in data.items() if k.endswith("text/plain")), "")
    return "".join(plain) if isinstance(plain, list) else plain


def checks_in(nb: Any) -> dict[str, dict[str, Any]]:
    """The check records glued by an executed notebook's cells, by name."""
    found: dict[str, dict[str, Any]] = {}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name", "")
            if name.startswith(GLUE_PREFIX):
                record = json.loads(_plain(output.get("data", {})))
                record["cell"] = cell.metadata.get("label", "?")
                found[record["name"]] = record
    return found


#: a ``{code-cell}`` of a page: its first line's number and its source (options
#: included)
_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.S | re.M)


def _cell_code(body: str) -> tuple[str, int]:
    """A cell's Python, its option lines (``:label: ...``) blanked so that line numbers
    stay."""
    lines = body.split("\n")
    options = 0
    while options < len(lines) and lines[options].startswith(":"):
        options += 1
    return "\n".join([""] * options + lines[options:]), options


#: words with which a check's ``because`` says that a sign is all its bare comparison
#: with zero asserts
SIGN_WORDS = (
    "nonzero",
    "non-zero",
    "not zero",
    "positive",
    "above zero",
    "greater than zero",
    "non-negative",
    "not negative",
    "at least one",
)


def _bare_zero(condition: ast.AST) -> ast.Compare | None:
    """``condition`` as one comparison of an expression with zero (``x > 0``, ``x >=
    0``, ``x != 0``, ``0 < x``), seen through ``bool(...)``, ``all(...)``, ``any(...)``
    (of a generator too), ``.all()`` and ``.any()``; else ``None``."""
    node = condition
    while True:
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("bool", "all", "any")
            and len(node.args) == 1
            and not node.keywords
        ):
            node = node.args[0]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("all", "any")
            and not node.args
            and not node.keywords
        ):
            node = node.func.value
        elif (
            isinstance(node, ast.GeneratorExp | ast.ListComp)
            and len(node.generators) == 1
        ):
            node = node.elt  # all(g > 0 for g in grads)
        else:
            break
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
        return None

    def zero(side: ast.AST) -> bool:
        return (
            isinstance(side, ast.Constant)
            and type(side.value) in (int, float)
            and side.value == 0
        )

    op, left, right = node.ops[0], node.left, node.comparators[0]
    if (zero(right) and isinstance(op, (ast.Gt, ast.GtE, ast.NotEq))) or (
        zero(left) and isinstance(op, (ast.Lt, ast.LtE, ast.NotEq))
    ):
        return node
    return None


def _why_trivial(
    condition: ast.AST, assigned: dict[str, str], because: str = ""
) -> str | None:
    """Why ``condition`` cannot fail or asserts less than a result sentence says, or
    ``None``: a constant, a value compared with itself, a variable compared with the
    very expression that computed it, or a bare comparison with zero whose ``because``
    does not say that the sign is all it asserts (:data:`SIGN_WORDS`)."""
    if isinstance(condition, ast.Constant):
        return f"its condition is the constant {condition.value!r}"
    bare = _bare_zero(condition)
    if bare is not None and not any(word in because.lower() for word in SIGN_WORDS):
        return (
            f"its condition is the bare `{ast.unparse(bare)}`, which asserts only a "
            "sign"
        )
    for node in ast.walk(condition):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        for a, b in zip(sides, sides[1:], strict=False):
            if ast.dump(a) == ast.dump(b):
                return f"it compares `{ast.unparse(a)}` with itself"
            for name, other in ((a, b), (b, a)):
                if isinstance(name, ast.Name) and assigned.get(name.id) == ast.dump(
                    other
                ):
                    return (
                        f"it compares `{name.id}` with `{ast.unparse(other)}`, the "
                        "very expression that computed it"
                    )
    return None


def trivial_problem(where: str, line: int, name: str, why: str) -> str:
    """The one line naming a check from :func:`trivial_checks` at its file and line,
    with what to do."""
    if why.startswith("its condition is the bare"):
        return (
            f"{where}:{line}: check {name!r} asserts only a sign: {why}; assert the "
            "bound the sentence states, or say in `because` that a sign is all it "
            "claims (nonzero, positive)"
        )
    return (
        f"{where}:{line}: check {name!r} cannot fail: {why}; compare with a value "
        "computed another way (PyTorch, autograd, a stored result) or with the bound "
        "the sentence states"
    )


T = TypeVar("T")


def _once_per_text(function: Callable[[str], T]) -> Callable[[str], T]:
    """``function`` of a page's text, computed once per text and process (the source
    lint and the claims' pairing read the same pages); each caller gets its own copy of
    the list or dict."""
    cached = functools.lru_cache(maxsize=64)(function)

    @functools.wraps(function)
    def once(source: str) -> T:
        return copy.copy(cached(source))

    return once


@_once_per_text
def trivial_checks(source: str) -> list[tuple[int, str, str]]:
    """(line, check name, why) for every ``claims.check`` on a page whose condition
    cannot fail, or is a bare comparison with zero whose ``because`` does not say that
    a sign is all it asserts."""
    found = []
    for match in _CELL.finditer(source):
        if "check(" not in match[1]:  # no check here: nothing to parse
            continue
        first = source.count("\n", 0, match.start(1)) + 1
        code, _ = _cell_code(match[1])
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue
        assigned = {}
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                assigned[node.targets[0].id] = ast.dump(node.value)
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and ast.unparse(node.func) in ("claims.check", "check")
            ):
                continue
            condition = (
                node.args[1]
                if len(node.args) > 1
                else next(
                    (k.value for k in node.keywords if k.arg == "condition"), None
                )
            )
            name = (
                node.args[0].value
                if node.args and isinstance(node.args[0], ast.Constant)
                else "?"
            )
            because = next((k.value for k in node.keywords if k.arg == "because"), None)
            if isinstance(because, ast.Constant) and isinstance(because.value, str):
                because_text = because.value
            elif because is not None:
                because_text = " ".join(
                    str(part.value)
                    for part in ast.walk(because)
                    if isinstance(part, ast.Constant)
                )
            else:
                because_text = ""
            why = (
                None
                if condition is None
                else _why_trivial(condition, assigned, because_text)
            )
            if why:
                found.append((first + node.lineno - 1, str(name), why))
    return found


def collect(root: Path, chapters: list[str]) -> list[PageClaims]:
    """Claims and checks of every page (its cached outputs as myst-nb renders them)."""
    from bookbuild.execute import engine

    pages = []
    for chapter in chapters:
        if not (root / f"{chapter}.md").is_file():  # a chapter removed since it ran
            continue
        source = (root / f"{chapter}.md").read_text()
        page = PageClaims(
            chapter,
            claims_in(source),
            unclaimed=unclaimed_results(source),
            trivial=trivial_checks(source),
            declared_at=declared_lines(source),
        )
        try:
            page.checks = checks_in(engine.rendered_notebook(root, chapter))
        except KeyError:  # no executed outputs (a page without code cells)
            page.checks = {}
        pages.append(page)
    return pages


@_once_per_text
def declared_lines(source: str) -> dict[str, int]:
    """The line of each check's ``claims.check("name", ...)`` call on a page (names
    written as literals)."""
    from bookbuild.lint.cells import cells, names_given

    return names_given(cells(source), ("claims.check", "check")).exact


def problems(pages: list[PageClaims]) -> list[str]:
    """One line per broken pairing of claims and checks, naming page and label."""
    out = []
    first_page: dict[str, str] = {}
    for page in pages:
        where = f"{page.chapter}.md"
        claimed = {}
        for name, _sentence, line in page.claims:
            if not name:
                out.append(
                    f"{where}:{line}: a claim names no check: write {{claim}}`sentence "
                    "<check-name>`"
                )
                continue
            claimed.setdefault(name, line)  # a summary may claim a check again
            if name not in page.checks:
                out.append(
                    f"{where}:{line}: the claim names check {name!r}, which no cell of "
                    "this page declared"
                )
        for name, record in page.checks.items():
            at = (
                f"{where}:{page.declared_at[name]}"
                if name in page.declared_at
                else where
            )
            if name not in claimed:
                out.append(
                    f"{at}: check {name!r} (cell {record.get('cell', '?')!r}) is "
                    "declared but no sentence claims it"
                )
            if name in first_page and first_page[name] != page.chapter:
                out.append(
                    f"{at}: check {name!r} is also declared by {first_page[name]}.md; "
                    "names are unique in the book"
                )
            first_page.setdefault(name, page.chapter)
            if not record.get("held"):
                out.append(f"{at}: check {name!r} did not hold")
        for line, name, why in page.trivial:
            out.append(trivial_problem(where, line, name, why))
        if page.chapter in COMPLETE:
            for line, sentence in page.unclaimed:
                shown = sentence if len(sentence) < 90 else sentence[:87] + "..."
                out.append(
                    f"{where}:{line}: a result sentence without a claim: {shown!r}; "
                    "claim it ({claim}`... <check-name>`) or mark it "
                    "{nonresult}`...` if it states no result"
                )
    return out


def _escape_md(text: str) -> str:
    return text.replace("|", "\\|")


_GLUE = re.compile(r"\{glue(?P<kind>:[a-z]+)?\}`(?P<key>[^`]+)`")


def _from_page(sentence: str, chapter: str) -> str:
    """A sentence's glued values, read from its own page (``recurrence.md::key``) when
    quoted elsewhere."""
    page = Path(chapter).name + ".md"

    def quoted(m: re.Match[str]) -> str:
        key = m["key"]
        if "::" in key:
            return m[0]
        if m["kind"] == ":text" and ":" not in key:
            # myst-nb reads the last ':' of page::key as the start of a format spec
            key += ":s"
        return f"{{glue{m['kind'] or ''}}}`{page}::{key}`"

    return _GLUE.sub(quoted, sentence)


def appendix_text(pages: list[PageClaims], titles: dict[str, str]) -> str:
    """The appendix page: per chapter, each claim with its check's condition, values and
    status."""
    total_claims = sum(len(p.claims) for p in pages)
    total_checks = sum(len(p.checks) for p in pages)
    lines = [
        "(checked)=",
        "# What this build checked",
        "",
        "```{only} html",
        "Generated by the build that produced these pages. A sentence marked with a "
        "small check mark is a",
        "*claim*: a cell of its page computed a condition that makes the sentence "
        "true, and the build fails",
        "when the condition is false. Below, for every claim, is the condition as "
        "written in the cell, the",
        "values it compared in this build, and whether it held.",
        "```",
        "",
        *print_summary(pages, titles),
        f"This build checked {{lit}}`{total_checks}` conditions behind "
        f"{{lit}}`{total_claims}` claims.",
        "",
    ]
    for page in pages:
        if not page.claims and not page.checks:
            continue
        lines += [
            f"## {titles.get(page.chapter, page.chapter)}",
            "",
            f"{{doc}}`/{page.chapter}`: {{lit}}`{len(page.claims)}` claims, "
            f"{{lit}}`{page.held}` of {{lit}}`{len(page.checks)}` checks held.",
            "",
        ]
        labelled: set[str] = set()
        for name, sentence, _line in page.claims:
            record = page.checks.get(name, {})
            sentence = _from_page(sentence, page.chapter)
            if name in labelled:
                lines += [f"**{name}**, again: *{_literal_numbers(sentence)}*", ""]
                continue
            labelled.add(name)
            status = "held" if record.get("held") else "NOT HELD"
            values = (
                "; ".join(f"{k} = {v}" for k, v in record.get("values", {}).items())
                or "none named"
            )
            lines += [
                f"(check-{name})=",
                f"**{name}**: *{_literal_numbers(sentence)}*",
                "",
                f"- because: {_literal_numbers(record.get('because', '-'))}",
                f"- condition: `{record.get('condition', '-')}`",
                f"- values: {_literal_numbers(values)}",
                f"- status: {status}",
                "",
            ]
    return "\n".join(lines) + "\n"


def print_summary(pages: list[PageClaims], titles: dict[str, str]) -> list[str]:
    """What the PDF prints of this page (``{only} latex``; ``bookbuild.site.pdf`` leaves
    the per-claim sections to the site): what a claim is, where each one's check is
    listed, and the counts per chapter."""
    lines = [
        "```{only} latex",
        "Generated by the build that printed this book. A sentence marked with a "
        "dagger (\u2020) is a *claim*: a",
        "cell of its page computed a condition that makes the sentence true, and the "
        "build fails when the",
        "condition is false; each mark links to this page. The HTML edition lists, for "
        "every claim, the",
        "condition as written in the cell, the values it compared in this build and "
        "whether it held (page",
        "`book/checked.html`, one entry per claim), and shows them beside the sentence "
        "at its mark.",
        "",
        "| chapter | claims | checks | checks held |",
        "|---|---:|---:|---:|",
    ]
    for page in pages:
        if page.claims or page.checks:
            lines.append(
                f"| {titles.get(page.chapter, page.chapter)} | "
                f"{{lit}}`{len(page.claims)}` | {{lit}}`{len(page.checks)}` | "
                f"{{lit}}`{page.held}` |"
            )
    return [*lines, "```", ""]


_NUMBER = re.compile(r"(?<![\w`.])[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?%?(?![\w`])")
#: a role (``{lit-math}`...``` included) or inline math: numbers inside either are left
#: as they are
_ROLE = re.compile(r"\{[a-z:-]+\}`[^`]*`|\$[^$\n]+\$")


def _literal_numbers(text: str) -> str:
    """Numbers in generated prose marked as ``{lit}`` (they are copied from a check, not
    typed by hand)."""
    parts = []
    last = 0
    for role in _ROLE.finditer(text):
        parts.append(
            _NUMBER.sub(lambda m: f"{{lit}}`{m[0]}`", text[last : role.start()])
        )
        parts.append(role[0])
        last = role.end()
    parts.append(_NUMBER.sub(lambda m: f"{{lit}}`{m[0]}`", text[last:]))
    return "".join(parts)


def write_appendix(root: Path, pages: list[PageClaims], titles: dict[str, str]) -> Path:
    from bookbuild import files

    page = root / APPENDIX_PAGE
    text = appendix_text(pages, titles)
    if not page.exists() or page.read_text() != text:
        files.write_text(page, text)
    return page


# ----------------------------------------------------- result sentences without a claim

#: Words that state a measured result; a sentence with one is claimed, or marked
#: ``{nonresult}`` (a definition, a property of the method, a question) to say it states
#: none. "every" that only describes the recurrence's structure ("at every step", "every
#: layer") states no result.
RESULT_WORDS = re.compile(
    r"\b(solves?|solved|beats?|faster|slower|lower|higher|never|always|none|narrows?|narrowed|grows?|"
    r"grew|matches|matched|agrees?|agreed|every(?! (?:time "
    r")?(?:steps?|layers?|listing|build|batch|position|page|"
    r"chapter|cell|token|entry|element|later|padded|new|other|one|so often)\b))\b",
    re.IGNORECASE,
)
NONRESULT = re.compile(r"\{nonresult\}(?P<ticks>`+)(?P<body>.+?)(?P=ticks)", re.S)
#: Pages whose every result sentence is claimed or marked: the build fails on a new
#: unclaimed one there. A page joins when its sentences have been gone through; the
#: build report counts the rest.
COMPLETE = frozenset(
    {
        "book/intro",
        "book/recurrence",
        "book/gradients",
        "book/gated",
        "book/language-models",
        "book/generating",
        "book/depth",
        "book/beyond",
        "book/building",
    }
)


def _blank_keep_lines(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


@_once_per_text
def unclaimed_results(source: str) -> list[tuple[int, str]]:
    """(line, sentence) of every prose sentence with a result word outside any claim or
    ``{nonresult}``."""
    from bookbuild.lint.prose import prose_lines

    masked = NONRESULT.sub(_blank_keep_lines, CLAIM.sub(_blank_keep_lines, source))
    paragraphs: list[tuple[int, str]] = []
    current: list[str] = []
    start = 0
    for lineno, line in prose_lines(masked):
        if not line.strip() or (current and lineno != start + len(current)):
            if current:
                paragraphs.append((start, " ".join(current)))
            current = []
        if line.strip():
            if not current:
                start = lineno
            current.append(line.strip())
    if current:
        paragraphs.append((start, " ".join(current)))
    found = []
    for lineno, paragraph in paragraphs:
        for sentence in re.split(
            r"(?<=[.!?])\s+(?=[A-Z(])", " ".join(paragraph.split())
        ):
            if RESULT_WORDS.search(sentence):
                found.append((lineno, sentence))
    return found


def nonresult_role(
    name: str,
    rawtext: str,
    text: str,
    lineno: int,
    inliner: Any,
    options: dict | None = None,
    content: Any = None,
) -> tuple[list[nodes.Node], list[nodes.system_message]]:
    """``{nonresult}`text```: text that uses a result word but states no measured
    result; rendered as is."""
    span = nodes.inline(rawtext, "", classes=["nonresult"])
    parsed, messages = inliner.parse(text, lineno, None, span)
    span += parsed
    return [span], messages


# ---------------------------------------------------------------------- the Sphinx role


def _reader_html(text: str) -> str:
    """``text`` escaped for HTML, each number in E notation set as a power of ten
    (:mod:`bookbuild.site.notation`)."""
    import html

    from bookbuild.site.notation import split_scientific

    return "".join(
        html.escape(p)
        if isinstance(p, str)
        else f"{html.escape(p[0])}<sup>{html.escape(p[1])}</sup>"
        for p in split_scientific(text)
    )


def _tip_html(name: str, record: dict[str, Any], uid: str) -> str:
    import html

    values = "".join(
        f'<span class="claim-tip-value">{html.escape(k)} = '
        f"{_reader_html(str(v))}</span>"
        for k, v in record.get("values", {}).items()
    )
    status = "held in this build" if record.get("held") else "did NOT hold"
    return (
        '<span class="claim-anchor">'
        f'<button type="button" class="claim-mark" aria-describedby="claim-tip-{uid}" '
        f'aria-label="what this build checked">&#10003;</button>'
        f'<span class="claim-tip" role="tooltip" id="claim-tip-{uid}">'
        '<span class="claim-tip-head">Checked: '
        f"{_reader_html(record.get('because', ''))} ({status})</span>"
        + (
            f'<span class="claim-tip-values">Values in this build: {values}</span>'
            if values
            else ""
        )
        + '<a class="claim-tip-link" tabindex="-1" '
        f'href="checked.html#check-{name}">every check of this build</a>'
        "</span></span>"
    )


def claim_role(
    name: str,
    rawtext: str,
    text: str,
    lineno: int,
    inliner: Any,
    options: dict | None = None,
    content: Any = None,
) -> tuple[list[nodes.Node], list[nodes.system_message]]:
    """``{claim}`sentence <check-name>```: the sentence, then the mark that shows what
    was checked."""
    from sphinx import addnodes

    target = split_target(text)
    if target is None:
        msg = inliner.reporter.error(
            "a claim names no check: write {claim}`sentence <check-name>`; got "
            f"{text!r}",
            line=lineno,
        )
        return [inliner.problematic(rawtext, rawtext, msg)], [msg]
    sentence, check = target
    try:
        from myst_nb.ext.glue.utils import RetrievalError, retrieve_glue_data

        data = retrieve_glue_data(inliner.document, GLUE_PREFIX + check).data
        record = json.loads(_plain(data))
    except (RetrievalError, ValueError, KeyError):
        msg = inliner.reporter.error(
            f"the claim names check {check!r}, which no cell of this page declared",
            line=lineno,
        )
        return [inliner.problematic(rawtext, rawtext, msg)], [msg]
    seen = inliner.document.settings.env.temp_data.setdefault("claims_seen", {})
    seen[check] = seen.get(check, 0) + 1
    uid = check if seen[check] == 1 else f"{check}-{seen[check]}"
    span = nodes.inline(rawtext, "", classes=["claim"], ids=[f"claim-{uid}"])
    parsed, messages = inliner.parse(sentence, lineno, None, span)
    span += parsed
    html_only = addnodes.only(expr="html")
    html_only += nodes.raw("", _tip_html(check, record, uid), format="html")
    span += html_only
    latex_only = addnodes.only(expr="latex")
    ref = addnodes.pending_xref(
        "",
        refdomain="std",
        reftype="ref",
        reftarget=f"check-{check}",
        refexplicit=True,
        refwarn=True,
    )
    ref += nodes.inline("", "\u2020")  # a dagger: in every text font of the PDF
    mark = nodes.superscript("", "", classes=["claim-mark"])
    mark += ref
    latex_only += mark
    span += latex_only
    return [span], messages


#: a claim's end on the page (its tip, its anchor, the claim) and the punctuation that
#: follows it
_CLAIM_END = re.compile(
    r"(every check of this build</a></span>)(</span></span>)([.,;:!?)\]\u201d\u2019]+)"
)


def keep_punctuation_with_mark(body: str) -> str:
    """Move the punctuation right after a claim into its mark's box, so that no line
    starts with the full stop the mark was followed by (the box is one inline block:
    nothing breaks inside it)."""
    return _CLAIM_END.sub(r'\1<span class="claim-after">\3</span>\2', body)


def _on_html_page(
    app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    if "body" in context and "claim-anchor" in context["body"]:
        context["body"] = keep_punctuation_with_mark(context["body"])


def setup(app: Any) -> dict[str, Any]:
    """Register the ``claim`` role."""
    app.add_role("claim", claim_role)
    app.add_role("nonresult", nonresult_role)
    app.connect("html-page-context", _on_html_page)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
