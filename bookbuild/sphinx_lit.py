"""A Sphinx role for numbers written into the prose on purpose: ``{lit}`17```.

The prose-number check (:mod:`bookbuild.prose`) refuses any number in a page's
prose that is not glued from the computation. A number that is deliberately a
literal (an illustrative position, a fact of the method, a figure quoted from a
cited source) is wrapped in this role; it renders as the plain text, inside a
``<span class="lit">``, so the reader sees an ordinary number.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes


def lit_role(
    name: str, rawtext: str, text: str, lineno: int, inliner: Any, options: dict | None = None, content: Any = None
) -> tuple[list[nodes.Node], list[nodes.system_message]]:
    """Render ``text`` as plain inline text marked with the class ``lit``."""
    return [nodes.inline(rawtext, text, classes=["lit"])], []


def setup(app: Any) -> dict[str, Any]:
    """Register the ``lit`` role."""
    app.add_role("lit", lit_role)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
