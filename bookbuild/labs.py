"""Student labs, generated from the tested listings: one source, two editions, checkpoints that catch mistakes.

A lab is described by a module in ``labs/`` (one per chapter) holding a
:class:`Lab`: its exercises name a function of ``chapter_code`` whose body
holds a *solution region* between nbgrader's marker comments::

    ### BEGIN SOLUTION
    ...the tested code...
    ### END SOLUTION

The markers are the only thing a lab adds to a listing. They are hidden from
the pages' listings (:func:`hide_markers`) and from the build's keys
(:func:`bookbuild.files.code_bytes`), so adding one re-executes and retrains
nothing. From each :class:`Lab` this module writes two notebooks into
``_build/labs/``:

- ``<slug>-student.ipynb``: each region replaced by a stub that raises
  ``NotImplementedError`` with the exercise's instruction;
- ``<slug>-solution.ipynb``: the tested code itself, markers kept, for
  instructors (nbgrader's ``### BEGIN SOLUTION`` convention).

Each exercise is followed by its checkpoint: a function of the lab module
whose assertions name what is wrong ("perplexity of equal logits should be 65,
got 64.0"), copied into the notebook and called on the reader's function; and
by a hint in a folded block. The notebooks import nothing from this
repository; they name their requirements (``pip install``) in their first
cell. As a Sphinx extension this module writes the notebooks when a build
starts, so the pages link to them with ``{download}``.

``python -m bookbuild.labs [OUT]`` writes the notebooks (default ``_build/labs``).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

ROOT = Path(__file__).resolve().parent.parent
LABS = ROOT / "labs"
OUT = ROOT / "_build" / "labs"
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
_MARKER_LINE = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*$")


@dataclass(frozen=True)
class Exercise:
    """One function to write: ``target`` is ``"chapter_code.module:function"``."""

    target: str
    task: str  # what to write (Markdown), shown above the code
    hint: str  # folded under the code (Markdown)
    checkpoint: Callable[..., None]  # called with the reader's function; its source goes into the notebook
    context: tuple[str, ...] = ()  # other objects ("module:name") whose whole source precedes the target


@dataclass(frozen=True)
class Lab:
    """A lab: the notebooks of one chapter."""

    slug: str
    chapter: str  # the page it belongs to, e.g. "book/recurrence"
    title: str
    intro: str  # Markdown
    setup: str  # the imports every cell needs
    requirements: tuple[str, ...] = ("torch",)
    exercises: list[Exercise] = field(default_factory=list)


class LabError(ValueError):
    """A lab refers to a function that does not exist or has no solution region."""


def _object_source(ref: str) -> tuple[str, str]:
    """(source text with markers, name) of the top-level function or class ``module:name``, read from its file."""
    module_name, _, name = ref.partition(":")
    if not name:
        raise LabError(f"a lab target must be 'module:name'; got {ref!r}")
    path = ROOT / (module_name.replace(".", "/") + ".py")  # read, not imported: the build need not load torch
    if not path.is_file():
        raise LabError(f"{ref}: no module file {path.relative_to(ROOT)}")
    text = path.read_text(encoding="utf-8")
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == name:
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            every = text.splitlines()
            end = node.end_lineno
            while end < len(every) and every[end].strip() == END:  # a region can end after the last statement
                end += 1
            lines = every[start - 1 : end]
            return "\n".join(lines) + "\n", name
    raise LabError(f"{ref}: no top-level function or class {name!r} in {path.relative_to(ROOT)}")


def solution_source(ref: str) -> str:
    """The target's source as tested, with its solution region marked; an error if it has none."""
    source, _ = _object_source(ref)
    lines = source.splitlines()
    begins = [i for i, line in enumerate(lines) if line.strip() == BEGIN]
    ends = [i for i, line in enumerate(lines) if line.strip() == END]
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise LabError(f"{ref}: expected one '{BEGIN}' line and, after it, one '{END}' line in its body; "
                       f"found {len(begins)} and {len(ends)}")
    return source


def student_source(ref: str, message: str) -> str:
    """The target's source with its solution region replaced by a stub raising ``NotImplementedError(message)``."""
    lines = solution_source(ref).splitlines()
    begin = next(i for i, line in enumerate(lines) if line.strip() == BEGIN)
    end = next(i for i, line in enumerate(lines) if line.strip() == END)
    indent = lines[begin][: len(lines[begin]) - len(lines[begin].lstrip())]
    stub = [f"{indent}# YOUR CODE HERE", f"{indent}raise NotImplementedError({message!r})"]
    return "\n".join(lines[:begin] + stub + lines[end + 1 :]) + "\n"


def stub_message(lab: Lab, number: int, exercise: Exercise) -> str:
    name = exercise.target.partition(":")[2]
    return f"{lab.title}, exercise {number}: write the body of {name} (the task is above this cell)"


def checkpoint_source(exercise: Exercise) -> tuple[str, str]:
    """(the checkpoint function's source, the call that runs it on the reader's function)."""
    fn = exercise.checkpoint
    source = textwrap.dedent(inspect.getsource(fn))
    return source, f"{fn.__name__}({exercise.target.partition(':')[2]})"


def notebook(lab: Lab, edition: str) -> nbformat.NotebookNode:
    """The ``edition`` ("student" or "solution") of ``lab`` as a notebook."""
    if edition not in ("student", "solution"):
        raise ValueError(f"edition must be 'student' or 'solution'; got {edition!r}")
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    which = "solution edition, for instructors" if edition == "solution" else "student edition"
    cells = [
        md(f"# {lab.title}\n\n*{which.capitalize()}; generated from the book's tested code.*\n\n{lab.intro}\n\n"
           f"**Requirements:** Python 3.10 or newer and `pip install {' '.join(lab.requirements)}`. "
           "Nothing else: this notebook does not need the book's repository or a network connection.\n\n"
           "Fill in each function where it says `YOUR CODE HERE`, then run the checkpoint cell under it. "
           "A checkpoint that fails says what is wrong."),
        code(lab.setup.strip()),
    ]
    for number, exercise in enumerate(lab.exercises, start=1):
        name = exercise.target.partition(":")[2]
        cells.append(md(f"## Exercise {number}: `{name}`\n\n{exercise.task.strip()}"))
        parts = [hide_markers(_object_source(ref)[0]).rstrip("\n") for ref in exercise.context]
        if edition == "solution":
            parts.append(solution_source(exercise.target).rstrip("\n"))
        else:
            parts.append(student_source(exercise.target, stub_message(lab, number, exercise)).rstrip("\n"))
        cells.append(code("\n\n\n".join(parts)))
        cells.append(md(f"<details><summary>Hint for exercise {number}</summary>\n\n{exercise.hint.strip()}\n\n"
                        "</details>\n\n**Checkpoint.** Run the next cell; it checks your function."))
        check, call = checkpoint_source(exercise)
        cells.append(code(f"{check.rstrip()}\n\n\n{call}"))
    cells.append(md("All checkpoints passed? Then every function of this lab agrees with the book's tested "
                    "code on the checks above."))
    nb = nbformat.v4.new_notebook(cells=cells)
    for n, cell in enumerate(nb.cells):
        cell["id"] = f"{lab.slug}-{n:02d}"  # stable ids: the same lab writes the same notebook
    nb.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                   "language_info": {"name": "python"}}
    return nb


def load_labs(folder: Path = LABS) -> list[Lab]:
    """Every :class:`Lab` defined in ``folder`` (modules ``labs/lab*.py``, in name order)."""
    if str(folder.parent) not in sys.path:
        sys.path.insert(0, str(folder.parent))
    labs = []
    for path in sorted(folder.glob("lab*.py")):
        module = importlib.import_module(f"{folder.name}.{path.stem}")
        lab = getattr(module, "LAB", None)
        if not isinstance(lab, Lab):
            raise LabError(f"{path.relative_to(folder.parent)} must define LAB = Lab(...)")
        labs.append(lab)
    return labs


def write_labs(out: Path = OUT, labs: list[Lab] | None = None) -> list[Path]:
    """Write both editions of every lab into ``out``; return the paths written (unchanged files are left alone)."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for lab in load_labs() if labs is None else labs:
        for edition in ("student", "solution"):
            path = out / f"{lab.slug}-{edition}.ipynb"
            text = nbformat.writes(notebook(lab, edition))
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


def hide_markers(text: str) -> str:
    """A listing's text without its lab marker lines (the pages show the code, not the lab's scaffolding)."""
    return "\n".join(line for line in text.split("\n") if not _MARKER_LINE.match(line))


# --------------------------------------------------------------------------- Sphinx


def _on_builder_inited(app: Any) -> None:
    write_labs()


def _hide_markers_in_listings(app: Any, doctree: Any) -> None:
    from docutils import nodes

    for block in doctree.findall(nodes.literal_block):
        text = block.astext()
        if any(_MARKER_LINE.match(line) for line in text.split("\n")):
            shown = hide_markers(text)
            block.children = [nodes.Text(shown)]
            block.rawsource = shown


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _on_builder_inited)
    app.connect("doctree-read", _hide_markers_in_listings)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]) if args else OUT
    for path in write_labs(out):
        print(path)
    return 0


if __name__ == "__main__":
    from bookbuild import labs as _labs  # the labs import bookbuild.labs, not __main__: one Lab class

    sys.exit(_labs.main())
