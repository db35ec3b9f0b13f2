"""Search results that show the text around the match, also in a site opened from disk.

Part of :mod:`bookbuild.site` (which calls :func:`connect`).

Sphinx's search page can put a summary under each result
(``html_show_search_summary``), but it makes one by fetching the page found,
which a browser refuses for a site opened from disk (``file://``: a console
error and no summary), so the book had switched it off and its results showed
titles only. Here each page's searchable text is written when the page is
written, as a small script ``_static/book-search/<page>.js`` (:func:`page_text`:
the text Sphinx's indexer reads, from the same doctree, with the offset at
which each section starts). The search page alone loads ``book-search.js``
(``assets/``), which loads those scripts for the pages in its results (a
script tag works from disk too) and puts under each result, as Sphinx's own
summary would, the text around the first word of the query it finds in the
page, or in the section the result names, with the query's words marked.

A formula is text there as a reader reads it, not its TeX (:func:`readable_math`:
``\\tanh(c_t)`` as ``tanh(cₜ)``), both in those texts and in Sphinx's own index,
which is fed a copy of each page whose formulas are that text
(:func:`readable_doctree`), so search no longer finds pages by ``odot``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx

FOLDER = "book-search"  # under the output's _static/
SCRIPT = "book-search.js"
#: what Sphinx's indexer skips too: comments, raw markup (the provenance and claim
#: data), error messages
_SKIP = (nodes.comment, nodes.raw, nodes.system_message, nodes.substitution_definition)
_SPACE = re.compile(r"\s+")


def page_text(doctree: nodes.document) -> tuple[str, dict[str, int]]:
    """The page's searchable text, whitespace collapsed, and {id: where the element of
    that id starts in it}.

    The ids are those a search result can name after ``#``: sections, glossary terms and
    other targets.
    """
    parts: list[str] = []
    length = 0
    sections: dict[str, int] = {}

    def add(chunk: str) -> None:
        nonlocal length
        chunk = _SPACE.sub(" ", chunk)
        if parts and parts[-1].endswith(" ") and chunk.startswith(" "):
            chunk = chunk[1:]
        if not parts and chunk.startswith(" "):
            chunk = chunk[1:]
        if chunk:
            parts.append(chunk)
            length += len(chunk)

    def walk(node: nodes.Node) -> None:
        # a formula as a reader reads it, not its TeX
        if isinstance(node, (nodes.math, nodes.math_block)):
            said = readable_math(node.astext())
            add(f" {said} " if isinstance(node, nodes.math_block) else said)
            return
        if isinstance(node, _SKIP) or (
            isinstance(node, nodes.Element) and "no-search" in node["classes"]
        ):
            return
        if isinstance(node, nodes.Text):
            add(node.astext())
            return
        # sections, and glossary terms, equations, figures...
        if isinstance(node, nodes.Element):
            for target_id in node["ids"]:
                sections.setdefault(target_id, length)
        block = isinstance(node, nodes.Element) and not isinstance(node, nodes.Inline)
        if block:
            add(" ")
        for child in node.children:
            walk(child)
        if block:
            add(" ")

    walk(doctree)
    return "".join(parts).rstrip(), sections


# ------------------------------------------------------------------------- math as text

#: symbols and names for TeX control words (what a reader sees in the typeset formula)
_SYMBOLS = {
    "alpha": "α",
    "beta": "β",
    "gamma": "γ",
    "delta": "δ",
    "epsilon": "ε",
    "varepsilon": "ε",
    "zeta": "ζ",
    "eta": "η",
    "theta": "θ",
    "iota": "ι",
    "kappa": "κ",
    "lambda": "λ",
    "mu": "μ",
    "nu": "ν",
    "xi": "ξ",
    "pi": "π",
    "rho": "ρ",
    "sigma": "σ",
    "tau": "τ",
    "upsilon": "υ",
    "phi": "φ",
    "varphi": "φ",
    "chi": "χ",
    "psi": "ψ",
    "omega": "ω",
    "Gamma": "Γ",
    "Delta": "Δ",
    "Theta": "Θ",
    "Lambda": "Λ",
    "Xi": "Ξ",
    "Pi": "Π",
    "Sigma": "Σ",
    "Phi": "Φ",
    "Psi": "Ψ",
    "Omega": "Ω",
    "odot": "⊙",
    "otimes": "⊗",
    "oplus": "⊕",
    "partial": "∂",
    "nabla": "∇",
    "approx": "≈",
    "sim": "~",
    "le": "≤",
    "leq": "≤",
    "ge": "≥",
    "geq": "≥",
    "ne": "≠",
    "neq": "≠",
    "ll": "≪",
    "gg": "≫",
    "equiv": "≡",
    "cdot": "·",
    "times": "×",
    "pm": "±",
    "in": "∈",
    "notin": "∉",
    "mid": "|",
    "to": "→",
    "rightarrow": "→",
    "leftarrow": "←",
    "Rightarrow": "⇒",
    "mapsto": "↦",
    "infty": "∞",
    "ell": "ℓ",
    "imath": "ı",
    "sum": "Σ",
    "prod": "Π",
    "int": "∫",
    "dots": "…",
    "ldots": "…",
    "cdots": "⋯",
    "bullet": "•",
    "lVert": "‖",
    "rVert": "‖",
    "Vert": "‖",
    "lvert": "|",
    "rvert": "|",
    "vert": "|",
    "lceil": "⌈",
    "rceil": "⌉",
    "lfloor": "⌊",
    "rfloor": "⌋",
    "langle": "⟨",
    "rangle": "⟩",
    "top": "ᵀ",
    "prime": "′",
    "forall": "∀",
    "exists": "∃",
    "emptyset": "∅",
    "{": "{",
    "}": "}",
    "%": "%",
    "_": "_",
    "&": "&",
    "#": "#",
    "$": "$",
}
#: operators set upright in a formula, read as their names
_NAMES = {
    "tanh",
    "sinh",
    "cosh",
    "sin",
    "cos",
    "tan",
    "log",
    "ln",
    "exp",
    "max",
    "min",
    "arg",
    "argmax",
    "argmin",
    "sup",
    "inf",
    "lim",
    "det",
    "softmax",
    "Pr",
}
#: control words that only space or size what follows
_SPACING = {
    ",": " ",
    ";": " ",
    ":": " ",
    "!": "",
    " ": " ",
    "quad": " ",
    "qquad": " ",
    "left": "",
    "right": "",
    "big": "",
    "bigl": "",
    "bigr": "",
    "Big": "",
    "Bigl": "",
    "Bigr": "",
    "bigg": "",
    "biggl": "",
    "biggr": "",
    "displaystyle": "",
    "textstyle": "",
    "nonumber": "",
    "notag": "",
}
#: control words whose argument is shown as it is (a word, a roman or bold letter)
_AS_IS = {
    "text",
    "textrm",
    "textit",
    "textbf",
    "mathrm",
    "mathit",
    "mathbf",
    "mathsf",
    "mathtt",
    "boldsymbol",
    "bm",
    "operatorname",
    "mathcal",
    "mathscr",
    "mathfrak",
}
#: accents over their argument (combining characters)
_ACCENTS = {
    "tilde": "\u0303",
    "hat": "\u0302",
    "bar": "\u0304",
    "vec": "\u20d7",
    "dot": "\u0307",
    "overrightarrow": "\u20d7",
    "overleftarrow": "\u20d6",
    "widetilde": "\u0303",
    "widehat": "\u0302",
    "overline": "\u0305",
}
_BLACKBOARD = {"R": "ℝ", "N": "ℕ", "Z": "ℤ", "Q": "ℚ", "C": "ℂ", "E": "𝔼", "P": "ℙ"}
_SUB = dict(
    zip(
        "0123456789+-=()aehijklmnoprstuvx",
        "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ",
        strict=True,
    )
)
_SUP = dict(
    zip(
        "0123456789+-=()abcdefghijklmnoprstuvwxyzT",
        "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᵀ",
        strict=True,
    )
)
_TOKEN = re.compile(r"\\([A-Za-z]+|.)|([{}^_&~])|(\s+)|([^\\{}^_&~\s])", re.S)


class _TeX:
    """A small reader of the TeX the book's formulas use: enough to say a formula in
    plain characters."""

    def __init__(self, tex: str) -> None:
        self.tokens = [(m[1], m[2], m[3], m[4]) for m in _TOKEN.finditer(tex)]
        self.pos = 0

    def group(self) -> str:
        """The next argument: a braced group, one control word, or one character."""
        while self.pos < len(self.tokens) and self.tokens[self.pos][2]:
            self.pos += 1
        if self.pos >= len(self.tokens):
            return ""
        command, special, _, text = self.tokens[self.pos]
        if special == "{":
            self.pos += 1
            return self.read(until="}")
        if text:
            self.pos += 1
            return text
        self.pos += 1
        return self.word(command) if command else ""

    def word(self, command: str) -> str:
        if command in _SPACING:
            return _SPACING[command]
        if command in _SYMBOLS:
            return _SYMBOLS[command]
        if command in _NAMES:
            return command
        if command in _AS_IS:
            return self.group()
        if command == "mathbb":
            arg = self.group()
            return "".join(_BLACKBOARD.get(c, c) for c in arg)
        if command in _ACCENTS:
            return "".join(
                c + _ACCENTS[command] if c.isalnum() else c for c in self.group()
            )
        if command in ("frac", "tfrac", "dfrac"):
            top, bottom = self.group(), self.group()
            wrap = lambda s: s if len(s) <= 1 or s.isalnum() else f"({s})"  # noqa: E731
            return f"{wrap(top)}/{wrap(bottom)}"
        if command == "sqrt":
            arg = self.group()
            return f"√{arg}" if len(arg) <= 1 else f"√({arg})"
        if command in ("begin", "end"):
            self.group()
            return " "
        if command == "\\":
            return "; "
        return command  # an unknown word: its name reads better than its backslash

    @staticmethod
    def script(arg: str, table: dict[str, str], mark: str) -> str:
        arg = arg.strip()
        if arg and all(c in table for c in arg):
            return "".join(table[c] for c in arg)
        if arg in ("ᵀ", "′", "*", "∗"):
            return arg
        return mark + (arg if len(arg) <= 1 else f"({arg})")

    def read(self, until: str | None = None) -> str:
        out: list[str] = []
        while self.pos < len(self.tokens):
            command, special, space, text = self.tokens[self.pos]
            self.pos += 1
            if special == until == "}":
                break
            if command is not None:
                out.append(self.word(command))
            elif special == "_":
                out.append(self.script(self.group(), _SUB, "_"))
            elif special == "^":
                out.append(self.script(self.group(), _SUP, "^"))
            elif special in ("{", "}"):
                out.append(self.read(until="}") if special == "{" else "")
            elif special == "~":
                out.append(" ")
            elif special == "&":
                continue
            elif space:
                out.append(" ")
            else:
                out.append(text)
        return "".join(out)


def readable_math(tex: str) -> str:
    """A formula in plain characters, as a reader would type it: ``\\tanh(c_t)`` as
    ``tanh(cₜ)``, ``h_{t-1}`` as ``hₜ₋₁``, ``\\frac{\\partial L}{\\partial h}`` as
    ``(∂L)/(∂h)``; no backslash or brace is left."""
    text = _TeX(tex).read()
    text = re.sub(r"\s*;\s*(;\s*)*", "; ", _SPACE.sub(" ", text))
    text = re.sub(r"([(∂√]) | ([)])", r"\1\2", text)
    return text.strip(" ;")


def readable_doctree(doctree: nodes.document) -> nodes.document:
    """A copy of a page's doctree whose formulas are :func:`readable_math` text, for
    Sphinx's search index."""
    copy = doctree.deepcopy()
    for node in list(
        copy.findall(lambda n: isinstance(n, (nodes.math, nodes.math_block)))
    ):
        text = nodes.Text(readable_math(node.astext()))
        node.replace_self(
            nodes.paragraph("", "", text)
            if isinstance(node, nodes.math_block)
            else text
        )
    return copy


def _index_readable(builder: Any) -> None:
    """Make the HTML builder index each page's formulas as :func:`readable_math` text.

    Sphinx's indexer reads a formula's TeX as words, so the index held ``odot``,
    ``mathrm`` and ``frac`` and search found pages by them. Its ``index_page`` runs
    before the page is written and from the same doctree, so it is handed a copy
    (:func:`readable_doctree`); the page itself keeps its TeX for the typesetting.
    """
    index_page = builder.index_page

    def index_readable(pagename: str, doctree: nodes.document, title: str) -> None:
        index_page(pagename, readable_doctree(doctree), title)

    builder.index_page = index_readable


def _on_builder_inited(app: Sphinx) -> None:
    if app.builder.format == "html":
        _index_readable(app.builder)


def text_script(pagename: str, doctree: nodes.document) -> str:
    """The script that hands the page's text to the search page: ``bookSearchText(page,
    {text, sections})``."""
    text, sections = page_text(doctree)
    data = json.dumps(
        {"text": text, "sections": sections}, ensure_ascii=False, separators=(",", ":")
    )
    return (
        f"window.bookSearchText && window.bookSearchText({json.dumps(pagename)}, "
        f"{data});\n"
    )


def _on_page(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any
) -> None:
    if app.builder.format != "html":
        return
    if pagename == "search":
        app.add_js_file(SCRIPT, loading_method="defer")
    elif doctree is not None:
        target = Path(app.outdir) / "_static" / FOLDER / f"{pagename}.js"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text_script(pagename, doctree), encoding="utf-8")


def connect(app: Sphinx) -> None:
    """Register the per-page texts and the search page's script (called from
    :func:`bookbuild.site.setup`)."""
    app.connect("builder-inited", _on_builder_inited)
    app.connect("html-page-context", _on_page)
