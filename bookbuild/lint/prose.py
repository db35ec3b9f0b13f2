"""The prose-number check: no number typed by hand into a page's prose.

A number in a sentence must come from the computation (a ``{glue:text}`` role,
or ``{glue}`` / ``{glue:}`` and the glue directives) or be marked on purpose as
a literal with the ``{lit}`` role (:mod:`bookbuild.site.lit`): an
illustrative number ("position {lit}`17`"), a fact of the method, or a number
quoted from a cited source, which the sentence must then cite. Everything else
is reported, one message per number, with the page, the line and what to do.

What is *not* prose, and so never checked: the front matter; fenced blocks
(code cells, ``{math}``, ``{literalinclude}``, any fence whose directive is in
:data:`OPAQUE_DIRECTIVES`); option lines of a directive (``:label: ...``);
display math (``$$ ... $$``) and inline math (``$...$``); inline code; the
content of every role (``{eq}``, ``{ref}``, ``{numref}``, ``{cite:t}``,
``{term}``, ``{glue:text}``, ``{lit}`` ...); target labels (``(name)=``); link
targets; HTML comments and MyST comment lines (``% ...``); the section number at the
start of a heading and the item number of an ordered list.

Checked: every other line, including the figure captions of code cells (the
``caption:`` option, which myst-nb renders as MyST, so roles work there), the
prose inside ``{exercise}``, ``{admonition}``, ``{glossary}`` and other prose
directives and their titles, and markdown tables. Alt texts are checked by
:mod:`bookbuild.lint.alttext`. A number is a run of digits not glued to a letter or an
underscore (``float64`` and ``W_2`` are names, ``80th`` and ``3x`` are numbers),
or one of :data:`NUMBER_WORDS` ("eighteen", "a fifth").

Numbers hidden in markup (:func:`markup_numbers`): a decimal or a number of two
or more digits typed into inline math (``$0.135$``; subscripts and
superscripts are notation), a number in the visible text of a ``{ref}``,
``{numref}``, ``{doc}`` or ``{term}`` role, and a code span that is only a
number or a ``name=number`` setting (`` `26` ``, `` `hidden=64` ``). The rule is
*report-only* while :data:`MARKUP_RULE_ENFORCED` is false: ``python -m
bookbuild.lint.prose --markup [ROOT]`` lists the spans per page and the check does not
fail on them; set it true to make each one a problem like any typed number.

A page may instead declare its deliberate literals once, in its front matter
(:func:`page_literals`)::

    book:
      literals: ["0.5", "four", "nine tenths"]

and each declared text is then accepted wherever the page's prose writes it, with
no ``{lit}``. Each must be a string holding a number the check would refuse, not in
E notation (only ``{lit}`` sets ``1e-6`` as a power of ten, so those keep the role),
and each must appear in the prose: a declaration the page no longer uses is a
problem, so declarations cannot go stale. Numbers in inline math keep
``{lit-math}``.

``python -m bookbuild.lint.prose [ROOT]`` prints the problems and exits 1 if any.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

#: fenced directives whose whole body is code, math or data, never prose
OPAQUE_DIRECTIVES = frozenset(
    {
        "code-cell",
        "code",
        "code-block",
        "math",
        "literalinclude",
        "glue:figure",
        "glue:math",
        "raw",
        "bibliography",
    }
)
#: pages that the build generates; they print measured values by construction
GENERATED = frozenset({"build-report.md", "checked.md"})

#: spelled-out numbers that read as measurements or recipe values; "one", "two",
#: "three", "half", "first", "second" and "third" stay ordinary words
NUMBER_WORDS = (
    r"four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|"
    r"eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundreds?|thousands?|"
    r"millions?|billions?|quarters?|fifths?|sixths?|sevenths?|eighths?|ninths?|tenths?|"
    r"twofold|threefold|fourfold|fivefold|tenfold|hundredfold|a\s+third|two\s+thirds"
)

_FENCE = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})\s*(\{([^}]+)\})?")
_OPTION = re.compile(r"^\s*:[\w-]+:")
_LABEL = re.compile(r"^\s*\([\w.:-]+\)=\s*$")
_HEADING = re.compile(r"^(#{1,6}\s+)(\d+(\.\d+)*\.?\s+)?")
_LIST_NUMBER = re.compile(r"^(\s*)\d+[.)]\s")
_ROLE = re.compile(r"\{[\w:.-]+\}(`+)(.*?)\1")
# a claim's sentence is prose: only its markup and target are blanked
_CLAIM = re.compile(r"\{claim\}(`+)(.*?)\1")
_CLAIM_TARGET = re.compile(r"<[a-z0-9-]+>\s*$")
_CODE = re.compile(r"(`+)(.*?)\1")
_INLINE_MATH = re.compile(r"\$\$.*?\$\$|\$[^$]+\$")
_LINK_TARGET = re.compile(r"\]\([^)]*\)|<https?://[^>]*>")
_COMMENT = re.compile(r"<!--.*?-->")
_SUBSTITUTION = re.compile(r"\{\{.*?\}\}")
# mystnb figure caption, an option line of a code cell
_CAPTION = re.compile(r"^:\s+caption:\s*(.*)$")
_NUMBER = re.compile(
    r"(?<![\w.])[-+−]?\d+(?:\.\d+)?[eE][-+−]?\d+(?!\w)"  # 1e-30
    r"|(?<![\w.])[-+−]?\d+(?:,\d{3})*(?:\.\d+)?(?!\w)%?"  # 5, 0.38, 23,000, 25%, -1
    r"|(?<![\w.])\d+(st|nd|rd|th|x)\b"  # 80th, 3x
    r"|\b(" + NUMBER_WORDS + r")\b",
    re.IGNORECASE,
)

#: Whether numbers typed into markup (inline math, a reference's text, a bare-number
#: code span) fail the check; report-only (``python -m bookbuild.lint.prose --markup``)
#: until the chapters are cleared of them.
MARKUP_RULE_ENFORCED = True

_MATH_SPAN = re.compile(r"(?<!\$)\$([^$\n]+)\$(?!\$)")
# h_{t-1}, W_2, 10^{-3}: notation, not a typed value
_MATH_SCRIPT = re.compile(r"[_^](\{[^{}]*\}|\\?\w)")
_MATH_NUMBER = re.compile(r"(?<![\w.\\])(\d+\.\d+|\.\d+|\d{2,})(?![\w.])")
_TEXT_ROLE = re.compile(r"\{(ref|numref|doc|term)\}(`+)(.*?)\2")
_CODE_NUMBER = re.compile(
    r"^\s*(?:[A-Za-z_][\w.]*\s*[=:]\s*)?[-+]?(?:\d[\d_,]*(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?%?"
    r"(?:-[a-z]+)?\s*$"
)

ADVICE = (
    "glue it from the computation ({glue:text}`name`, recipe values from the config "
    "object the code uses), "
    "or mark a deliberate literal as {lit}`...` or declare it once in the page's "
    "front matter "
    '(book: literals: ["0.5"]) (inline math whose numbers are literals: '
    "{lit-math}`...`) "
    "(with a {cite} role in the sentence if the number is quoted from a source)"
)


def prose_lines(text: str) -> list[tuple[int, str]]:
    """The (line number, text) pairs of a MyST page that are prose, with non-prose spans
    blanked."""
    lines = text.splitlines()
    out: list[tuple[int, str]] = []
    i = 0
    if lines and lines[0].strip() == "---":  # front matter
        i = (
            next(
                (j for j in range(1, len(lines)) if lines[j].strip() == "---"),
                len(lines) - 1,
            )
            + 1
        )
    # open fences: (marker, opaque?, directive name)
    fences: list[tuple[str, bool, str]] = []
    in_display_math = False
    # a $...$ span that began on an earlier line of the paragraph
    in_inline_math = False
    for n in range(i, len(lines)):
        line = lines[n]
        fence = _FENCE.match(line)
        if fence:
            marker = fence.group(1)
            bare, opened = line.strip(), fences[-1][0] if fences else ""
            if opened and bare == opened[0] * len(bare) and len(bare) >= len(opened):
                fences.pop()  # a closing fence
                continue
            opaque = (
                any(f[1] for f in fences) or fence.group(2) is None and marker[0] != ":"
            )
            name = (fence.group(3) or "").strip()
            opaque = opaque or name in OPAQUE_DIRECTIVES
            fences.append((marker, opaque, name))
            if not opaque:  # the title of a prose directive is prose
                title = line[fence.end() :]
                out.append((n + 1, _strip_inline(title)))
            continue
        if fences and fences[-1][1]:
            caption = _CAPTION.match(line) if fences[-1][2] == "code-cell" else None
            # a figure caption in a code cell's options is prose, rendered like any
            # sentence
            if caption:
                out.append((n + 1, _strip_inline(_yaml_scalar(caption.group(1)))))
            continue
        if line.strip().startswith("$$"):
            if (
                line.strip() != "$$"
                and line.strip().endswith("$$")
                and len(line.strip()) > 2
            ):
                continue  # $$ ... $$ on one line
            in_display_math = not in_display_math
            continue
        if in_display_math:
            continue
        if (
            _LABEL.match(line)
            or (fences and _OPTION.match(line))
            or line.startswith("%")
        ):
            continue  # a target label, a directive option, a MyST comment
        if not line.strip():
            in_inline_math = False  # inline math never spans paragraphs
        # blank up to the closing $ of a span opened on an earlier line
        if in_inline_math:
            close = line.find("$")
            if close < 0:
                continue
            line = " " * (close + 1) + line[close + 1 :]
            in_inline_math = False
        # a heading's section number, an ordered list's item number
        for structure in (_HEADING, _LIST_NUMBER):
            found = structure.match(line)
            if found:
                line = " " * found.end() + line[found.end() :]
        line = _strip_inline(line)
        if "$" in line:  # an inline math span that continues on the next line
            line, in_inline_math = line[: line.index("$")], True
        out.append((n + 1, line))
    return out


def _yaml_scalar(raw: str) -> str:
    """The text of a one-line YAML scalar (a quoted caption keeps its escapes as YAML
    reads them)."""
    import yaml

    try:
        value = yaml.safe_load(raw)
    except yaml.YAMLError:
        return raw
    return value if isinstance(value, str) else raw


def _blank(match: re.Match[str]) -> str:
    return " " * len(match.group(0))


def _strip_inline(line: str) -> str:
    """Blank roles, inline code, inline math, link targets, comments and substitutions,
    keeping columns."""
    line = _COMMENT.sub(_blank, line)
    line = _CLAIM.sub(_unwrap_claim, line)
    for pattern in (_ROLE, _CODE, _INLINE_MATH, _LINK_TARGET, _SUBSTITUTION):
        line = pattern.sub(_blank, line)
    return line


def _unwrap_claim(match: re.Match[str]) -> str:
    """``{claim}`text <name>``` -> its text, same columns: the sentence stays prose, to
    be checked as such."""
    ticks, body = match.group(1), match.group(2)
    body = _CLAIM_TARGET.sub(_blank, body)
    return " " * (len("{claim}") + len(ticks)) + body + " " * len(ticks)


#: a number in E notation, which ``{lit}`` sets as a power of ten
#: (:mod:`bookbuild.site.lit`)
_E_NOTATION = re.compile(r"\d[eE][-+−]?\d")


def page_literals(text: str) -> tuple[list[object], int]:
    """The literals a page declares in its front matter (``book: literals: [...]``)
    and the line of the key (0 where it declares none)."""
    import yaml

    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return [], 0
    end = next((j for j in range(1, len(lines)) if lines[j].strip() == "---"), None)
    if end is None:
        return [], 0
    try:
        matter = yaml.safe_load("\n".join(lines[1:end])) or {}
    except yaml.YAMLError:
        return [], 0
    book = matter.get("book") if isinstance(matter, dict) else None
    declared = book.get("literals") if isinstance(book, dict) else None
    if declared is None:
        return [], 0
    line = next(
        (j + 1 for j in range(1, end) if lines[j].strip().startswith("literals:")), 1
    )
    return (list(declared) if isinstance(declared, list) else [declared]), line


def _literal_pattern(literal: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w.])" + re.escape(literal) + r"(?!\w)", re.IGNORECASE)


def _declaration_problems(page: str, declared: list[object], line: int) -> list[str]:
    """Declared literals that are not numbers the check would refuse, or are in E
    notation."""
    problems = []
    where = f"{page}:{line}: the page's literals (front matter, book: literals)"
    for literal in declared:
        if not isinstance(literal, str):
            problems.append(
                f"{where} declare {literal!r}, which YAML read as a "
                f"{type(literal).__name__}: quote "
                'each literal, written as the prose prints it ("0.50", "four")'
            )
        elif _E_NOTATION.search(literal):
            problems.append(
                f"{where} declare {literal!r}, in E notation, which only {{lit}} "
                "sets as a power of "
                f"ten: keep {{lit}}`{literal}` where the prose writes it and remove "
                "it from the "
                "declaration"
            )
        elif not _NUMBER.search(literal):
            problems.append(
                f"{where} declare {literal!r}, which holds no number the check would "
                "refuse: remove "
                "it from the declaration"
            )
    return problems


def check_text(text: str, page: str = "<text>") -> list[str]:
    """One message per number typed into the prose of one page's MyST source (the
    page's declared literals accepted), and per declared literal that is malformed or
    that the prose never uses."""
    declared, declared_at = page_literals(text)
    problems = _declaration_problems(page, declared, declared_at)
    accepted = {
        lit: _literal_pattern(lit)
        for lit in declared
        if isinstance(lit, str) and not _E_NOTATION.search(lit)
    }
    used: set[str] = set()
    for lineno, line in prose_lines(text):
        for literal in sorted(
            accepted, key=len, reverse=True
        ):  # "nine tenths" before "nine"
            line, count = accepted[literal].subn(_blank, line)
            if count:
                used.add(literal)
        for match in _NUMBER.finditer(line):
            problems.append(
                f"{page}:{lineno}: the number {match.group(0).strip()!r} is typed "
                f"into the prose; {ADVICE}"
            )
    for literal in accepted:
        if literal not in used and _NUMBER.search(literal):
            problems.append(
                f"{page}:{declared_at}: the page declares the literal {literal!r} "
                "(front matter, book: "
                "literals), but its prose never writes it outside a role: remove it "
                "from the "
                "declaration"
            )
    return problems


def markup_numbers(text: str) -> list[tuple[int, str, str]]:
    """(line, where, span) for every number typed into markup on a prose line of one
    page.

    ``where`` is ``"inline math"``, ``"{ref} text"`` (the role's name) or ``"code
    span"``; the span is the markup as typed. Lines that are not prose (code cells,
    display math, options) are never looked at.
    """
    raw = text.splitlines()
    found: list[tuple[int, str, str]] = []
    for lineno, _ in prose_lines(text):
        line = _COMMENT.sub(_blank, raw[lineno - 1])
        for role in _TEXT_ROLE.finditer(line):
            shown = role.group(3)
            if role.group(1) != "term" and "<" in shown:
                shown = shown[: shown.rindex("<")]
            elif role.group(1) != "term":
                continue  # {ref}`target` shows the target's own title
            if _NUMBER.search(shown):
                found.append((lineno, f"{{{role.group(1)}}} text", role.group(0)))
        line = _ROLE.sub(_blank, _CLAIM.sub(_unwrap_claim, line))
        for code in _CODE.finditer(line):
            if _CODE_NUMBER.match(code.group(2)):
                found.append((lineno, "code span", code.group(0)))
        line = _CODE.sub(_blank, line)
        for math in _MATH_SPAN.finditer(line):
            if _MATH_NUMBER.search(_MATH_SCRIPT.sub(" ", math.group(1))):
                found.append((lineno, "inline math", math.group(0)))
    return found


def markup_report(root: Path) -> dict[str, list[str]]:
    """Per page of ``root/book`` (generated pages excepted): one line per number typed
    into markup."""
    out: dict[str, list[str]] = {}
    for page in sorted((Path(root) / "book").glob("*.md")):
        if page.name in GENERATED:
            continue
        spans = markup_numbers(page.read_text(encoding="utf-8"))
        if spans:
            out[str(page.relative_to(root))] = [
                f"{page.relative_to(root)}:{n}: {where}: {span}"
                for n, where, span in spans
            ]
    return out


def check_pages(root: Path) -> list[str]:
    """Check every page under ``root/book`` (generated pages excepted); return one
    message per problem.

    The prose and captions are checked here; alt texts, which cannot hold a
    glue role, by :mod:`bookbuild.lint.alttext` against the recorded figures.
    """
    from bookbuild.lint import alttext

    book = Path(root) / "book"
    if not book.is_dir():
        raise FileNotFoundError(
            f"root must hold the book's pages in root/book; {book} is not a directory"
        )
    problems: list[str] = []
    for page in sorted(book.glob("*.md")):
        if page.name not in GENERATED:
            problems += check_text(
                page.read_text(encoding="utf-8"), str(page.relative_to(root))
            )
            if MARKUP_RULE_ENFORCED:
                problems += [
                    f"{page.relative_to(root)}:{n}: a number is typed into {where} "
                    f"{span!r}; {ADVICE}"
                    for n, where, span in markup_numbers(
                        page.read_text(encoding="utf-8")
                    )
                ]
            problems += alttext.check_page(Path(root), page)
    return problems


def main(argv: list[str] | None = None) -> int:
    """``python -m bookbuild.lint.prose [ROOT]``: print every problem; exit 1 if there
    is any."""
    args = list(sys.argv[1:] if argv is None else argv)
    markup = "--markup" in args
    args = [a for a in args if a != "--markup"]
    root = Path(args[0]) if args else Path(__file__).resolve().parents[2]
    if markup:  # the report-only rule: numbers typed into markup, per page
        report = markup_report(root)
        for page, lines in report.items():
            print(f"{page}: {len(lines)}")
            print("\n".join(f"  {line}" for line in lines))
        print(
            f"{sum(map(len, report.values()))} number(s) typed into "
            # an f-string's field cannot break across lines (Python 3.11)
            f"markup{'' if MARKUP_RULE_ENFORCED else ' (report-only: MARKUP_RULE_ENFORCED is false)'}"  # noqa: E501
        )
        return 0
    problems = check_pages(root)
    for problem in problems:
        print(problem)
    if problems:
        print(
            f"{len(problems)} number(s) typed into prose or unsupported by a figure; "
            "see the messages above.",
            file=sys.stderr,
        )
        return 1
    print(
        "prose numbers: every number in the prose is glued, marked {lit} or declared "
        "by its page; alt texts state "
        "what their figures show"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
