r"""A Sphinx role for numbers written into the prose on purpose: ``{lit}`17```.

The prose-number check (:mod:`bookbuild.lint.prose`) refuses any number in a page's
prose that is not glued from the computation. A number that is deliberately a
literal (an illustrative position, a fact of the method, a figure quoted from a
cited source) is wrapped in this role; it renders as the plain text, inside a
``<span class="lit">``, so the reader sees an ordinary number; one in E notation
(a source's ``1.2e-07``, a setting's ``2e-3``) is set as a power of ten, as the
glued numbers are (:mod:`bookbuild.site.notation`).

Inline math whose numbers are such literals (a definition, an illustrative
value, a worked identity: ``{lit-math}`\sigma(0) = 0.5```) is written with
``lit-math``, which renders exactly as ``$...$`` does; numbers in plain ``$...$``
are refused like numbers in prose. A measured number never goes into either:
it is glued, beside the math.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes


def lit_role(
    name: str,
    rawtext: str,
    text: str,
    lineno: int,
    inliner: Any,
    options: dict | None = None,
    content: Any = None,
) -> tuple[list[nodes.Node], list[nodes.system_message]]:
    """Render ``text`` as plain inline text marked with the class ``lit`` (E notation as
    a power of ten)."""
    from bookbuild.site.notation import set_scientific

    node = nodes.inline(rawtext, text, classes=["lit"])
    set_scientific(node)
    return [node], []


def lit_math_role(
    name: str,
    rawtext: str,
    text: str,
    lineno: int,
    inliner: Any,
    options: dict | None = None,
    content: Any = None,
) -> tuple[list[nodes.Node], list[nodes.system_message]]:
    """Render ``text`` as inline math (as ``$text$`` would be), its numbers declared
    literal."""
    return [nodes.math(rawtext, text)], []


#: The modules that render the prose's numbers and claims into a page: literals, the
#: notation of E numbers, claims and their previews, glued numbers (bookbuild/*.py).
# under bookbuild/
RENDERING = ("site/lit.py", "site/notation.py", "lint/claims.py", "site/provenance.py")


def rendering_key() -> str:
    """A hash of the code that renders literals, numbers and claims
    (:data:`RENDERING`)."""
    import hashlib
    from pathlib import Path

    package = Path(__file__).resolve().parents[1]
    return hashlib.sha256(
        b"".join((package / n).read_bytes() for n in RENDERING)
    ).hexdigest()[:16]


def pages_to_reread(
    app: Any, env: Any, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    """Every page, once, when the code that renders its numbers has changed since the
    environment was saved.

    Sphinx re-reads a page when its source changes, not when a role's code does, so a
    page that never changes (the appendix of checks, rewritten with the same text) would
    keep the old rendering.
    """
    key = rendering_key()
    if getattr(env, "book_lit_rendering", None) == key:
        return []
    env.book_lit_rendering = key
    return sorted(set(env.found_docs) - added - removed)


def setup(app: Any) -> dict[str, Any]:
    """Register the ``lit`` and ``lit-math`` roles."""
    app.add_role("lit", lit_role)
    app.add_role("lit-math", lit_math_role)
    app.connect("env-get-outdated", pages_to_reread)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
