"""What the PDF edition does differently from the HTML site (a Sphinx extension).

The PDF is built from the same pages and the same executed outputs as the
site (``make pdf``, LaTeX through xelatex). Three things differ, all here:

- **Listings carry line numbers.** A block included from ``chapter_code``
  (``literalinclude``) is numbered in the PDF, where a reader cannot hover or
  copy; code cells and their outputs are not.
- **Solutions are omitted.** An exercise's solution is folded away on the
  site; a printed page cannot fold, and an appendix of solutions would
  separate each from the cells it runs. The PDF keeps every exercise and
  drops its solution, and says so where the exercises begin
  (:data:`SOLUTIONS_NOTE`). The solutions are still executed, and checked, by
  the build.
- **Chapters are chapters.** Sphinx inlines each chapter where the root
  page's table of contents stands, which is inside the root page's last
  section, so the chapters would print as its subsections. Here the root
  page's own sections become unnumbered headings of a preface, the chapters
  become the numbered chapters (in the site's order and numbers), and the
  reference pages (glossary, bibliography, build report) become appendices.
- **Interactive panels are replaced by their static figures** by the pages
  themselves (``{only}`` blocks); nothing is needed here.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes

#: the sentence that replaces the first solution of a page in the PDF
SOLUTIONS_NOTE = (
    "The printed edition omits the solutions to the exercises; the HTML edition "
    "shows each one, folded, under its exercise."
)


def _is_listing(node: nodes.literal_block) -> bool:
    """A block included from a source file of the repository (``literalinclude``), not a cell or an output."""
    source = str(node.get("source", ""))
    return source.endswith(".py") and "chapter_code" in source


def _solution_nodes(doctree: nodes.document) -> list[nodes.Element]:
    from sphinx_exercise.nodes import solution_node

    return list(doctree.findall(solution_node))


#: the first page that prints as an appendix rather than a chapter
FIRST_APPENDIX = "book/glossary"


def chapters_as_chapters(doctree: nodes.document) -> None:
    """Lift the inlined chapters out of the root page's last section; the root's sections become a preface."""
    from sphinx import addnodes

    root = next(iter(doctree.findall(nodes.section)), None)
    if root is None:
        return
    included = [n for n in doctree.findall(addnodes.start_of_file)
                if not any(isinstance(a, addnodes.start_of_file) for a in _ancestors(n))]
    for chapter in included:
        chapter.parent.remove(chapter)
    for child in [c for c in root.children if isinstance(c, nodes.section)]:
        title = child.next_node(nodes.title)
        heading = nodes.rubric("", "", *title.children) if title is not None else None
        body = [c for c in child.children if c is not title]
        child.replace_self(([heading] if heading is not None else []) + body)
    for chapter in included:
        if chapter.get("docname") == FIRST_APPENDIX:
            root.append(nodes.raw("", "\\appendix\n", format="latex"))
        root.append(chapter)


def _ancestors(node: nodes.Node) -> list[nodes.Node]:
    found = []
    while node.parent is not None:
        node = node.parent
        found.append(node)
    return found


def for_print(app: Any, doctree: nodes.document, docname: str) -> None:
    """Number the listings, drop the solutions and make chapters chapters when the builder writes LaTeX."""
    if app.builder.format != "latex":
        return
    if docname == app.config.root_doc:  # the whole book, assembled into one tree
        chapters_as_chapters(doctree)
    for block in doctree.findall(nodes.literal_block):
        if _is_listing(block):
            block["linenos"] = True
    solutions = _solution_nodes(doctree)
    for n, solution in enumerate(solutions):
        if n == 0:
            note = nodes.paragraph(text=SOLUTIONS_NOTE)
            note["classes"].append("solutions-note")
            solution.replace_self(note)
        else:
            solution.parent.remove(solution)


def setup(app: Any) -> dict[str, Any]:
    app.connect("doctree-resolved", for_print)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
