"""Student labs, generated from the tested listings: one source, two editions,
checkpoints that catch mistakes.

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

Each exercise is followed by graded hints, each in its own folded block (a
first nudge, then the shape of the answer; never the whole answer), and by its
checkpoint: a function of the lab module, copied into the notebook and called
on the reader's function, whose assertions name what is wrong ("a padded step
changed the state: apply the mask"). A checkpoint never holds the answer. It
compares with something the reader cannot copy from: a PyTorch module with the
same weights (``nn.RNNCell``), autograd, or numbers computed once by the
book's own function. Those numbers come from the exercise's ``reference``, a
function of the lab module that runs the tested code on fixed inputs when the
notebook is written; only its output (inputs and results, as plain numbers)
goes into the notebook, never its source (so writing the notebooks imports
torch and the taught code; the references run on one thread in seconds,
once per process). The checkpoint cell runs through
:func:`run_checkpoint`, which raises a failure as a :class:`CheckpointError`
(an ``AssertionError`` that Jupyter shows as its one sentence, not a
traceback), so Run All stops at the first exercise not yet done and an
error-based grader scores the notebook. The notebooks import nothing from this
repository; they name their requirements (``pip install``) in their first
cell. The listings' numbered markers (``# [1]``), explained under each
listing on the pages, are dropped from the notebooks' code. As a Sphinx
extension this module writes the notebooks, and one zip per edition
(``labs-student.zip``, ``labs-solution.zip``, and ``labs-instructor.zip``: the
solution edition with nbgrader's grading metadata), when a build starts, so the
pages link to them with ``{download}``.

``python -m bookbuild.tools.labs [OUT]`` writes the notebooks (default ``_build/labs``);
``python -m bookbuild.tools.labs --time`` runs every solution edition and stores its
cells' run times in ``labs/timings.json``, which each notebook's time budget states
beside the estimated writing time.

After the exercises each notebook asks for a prediction (:class:`Prediction`: write a
guess, measure it with your own functions, compare), offers an optional stretch section
with no checkpoint and no answers, and ends with a small results table printed by the
student's own functions. As a Sphinx extension this module also puts a launch link for a
hosted notebook service (:data:`LAUNCH_URL`) beside each page's student download.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import math
import re
import subprocess
import sys
import textwrap
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

ROOT = Path(__file__).resolve().parents[2]
LABS = ROOT / "labs"
OUT = ROOT / "_build" / "labs"
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
_MARKER_LINE = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*$")
# a listing's "# [2]" at the end of a line
_NUMBERED_ALONE = re.compile(r"[ \t]*# \[\d+\][ \t]*$")
# "# [1] fold the initial state ..." keeps its words
_NUMBERED_LEAD = re.compile(r"# \[\d+\] ")


@dataclass(frozen=True)
class Exercise:
    """One function to write: ``target`` is ``"chapter_code.module:function"``.

    ``hints`` are graded: the first is a nudge, the last the shape of the
    answer; none is the answer. ``checkpoint(fn)``, or ``checkpoint(fn,
    expected)`` when ``reference`` is given, raises ``AssertionError`` naming
    the mistake. ``reference()`` runs the book's function on fixed inputs and
    returns a dict of plain numbers (lists, floats, ints, strings): it is
    called when the notebook is written and only its value is embedded.
    """

    target: str
    task: str  # what to write (Markdown), shown above the code
    hints: tuple[str, ...]  # folded under the code, one block each (Markdown)
    checkpoint: Callable[..., None]  # its source goes into the notebook
    # other objects ("module:name") whose whole source precedes the target
    context: tuple[str, ...] = ()
    # its value, not its source, goes into the notebook
    reference: Callable[[], dict[str, Any]] | None = None
    # the book's estimate of a student's writing time (the run time is measured:
    # TIMINGS)
    minutes: int = 15
    # (context ref, code): in the student edition, the solution region of a context
    # object that is another exercise's answer (Lab 6 scores with Lab 4's
    # lm_loss_and_ppl) is replaced by this equivalent stand-in
    stand_ins: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if not self.hints or isinstance(self.hints, str):
            raise LabError(
                f"{self.target}: hints must be a non-empty tuple of strings, a nudge "
                "first"
            )
        if not isinstance(self.minutes, int) or self.minutes < 1:
            raise LabError(
                f"{self.target}: minutes must be a positive whole number; got "
                f"{self.minutes!r}"
            )


@dataclass(frozen=True)
class Prediction:
    """The lab's prediction: write a guess down, then measure it with your own
    functions, then compare.

    ``question`` (Markdown) asks for the guess; ``guess`` is the code cell the student
    fills in (a variable set to ``None``); ``measure`` computes the measured value with
    the student's functions; ``compare`` prints the guess beside the measurement and
    says what to look at.
    """

    question: str
    guess: str
    measure: str
    compare: str


@dataclass(frozen=True)
class Lab:
    """A lab: the notebooks of one chapter."""

    slug: str
    chapter: str  # the page it belongs to, e.g. "book/recurrence"
    title: str
    intro: str  # Markdown
    setup: str  # the imports every cell needs
    # NumPy beside PyTorch: without it PyTorch warns "Failed to initialize NumPy" on
    # import
    requirements: tuple[str, ...] = ("torch", "numpy")
    exercises: list[Exercise] = field(default_factory=list)
    # after the last checkpoint: guess, measure, compare
    prediction: Prediction | None = None
    # optional harder extensions (Markdown), no checkpoint and no answer
    stretch: tuple[str, ...] = ()
    # the last cell: code that prints a small table made with the student's functions
    results: str = ""


class LabError(ValueError):
    """A lab refers to a function that does not exist or has no solution region."""


def _object_source(ref: str) -> tuple[str, str]:
    """(source text with markers, name) of the top-level function or class
    ``module:name``, read from its file."""
    module_name, _, name = ref.partition(":")
    if not name:
        raise LabError(f"a lab target must be 'module:name'; got {ref!r}")
    # read, not imported: the build need not load torch
    path = ROOT / (module_name.replace(".", "/") + ".py")
    if not path.is_file():
        raise LabError(f"{ref}: no module file {path.relative_to(ROOT)}")
    text = path.read_text(encoding="utf-8")
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == name:
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            every = text.splitlines()
            end = node.end_lineno
            # a region can end after the last statement
            while end < len(every) and every[end].strip() == END:
                end += 1
            lines = every[start - 1 : end]
            return "\n".join(lines) + "\n", name
    raise LabError(
        f"{ref}: no top-level function or class {name!r} in {path.relative_to(ROOT)}"
    )


def solution_source(ref: str) -> str:
    """The target's source as tested, with its solution region marked; an error if it
    has none."""
    source, _ = _object_source(ref)
    lines = source.splitlines()
    begins = [i for i, line in enumerate(lines) if line.strip() == BEGIN]
    ends = [i for i, line in enumerate(lines) if line.strip() == END]
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise LabError(
            f"{ref}: expected one '{BEGIN}' line and, after it, one '{END}' line in "
            f"its body; found {len(begins)} and {len(ends)}"
        )
    return source


def student_source(ref: str, message: str) -> str:
    """The target's source with its solution region replaced by a stub raising
    ``NotImplementedError(message)``."""
    lines = solution_source(ref).splitlines()
    begin = next(i for i, line in enumerate(lines) if line.strip() == BEGIN)
    end = next(i for i, line in enumerate(lines) if line.strip() == END)
    indent = lines[begin][: len(lines[begin]) - len(lines[begin].lstrip())]
    stub = [
        f"{indent}# YOUR CODE HERE",
        f"{indent}raise NotImplementedError({message!r})",
    ]
    return "\n".join(lines[:begin] + stub + lines[end + 1 :]) + "\n"


def stub_message(lab: Lab, number: int, exercise: Exercise) -> str:
    name = exercise.target.partition(":")[2]
    return (
        f"{lab.title}, exercise {number} is not written yet: write the missing part of "
        f"{name} (the task is above it)"
    )


class CheckpointError(AssertionError):
    """A checkpoint that did not pass. Jupyter shows its one sentence, not a
    traceback."""

    def _render_traceback_(self):
        return [f"{type(self).__name__}: {self}"]


def run_checkpoint(checkpoint, *args):
    """Run a checkpoint on the reader's function: say that it passed, or stop here with
    one sentence on what is wrong (an AssertionError, so Run All stops at the first
    unfinished exercise and a grader counts it)."""
    try:
        checkpoint(*args)
    except NotImplementedError as exc:
        raise CheckpointError(f"Checkpoint not passed yet. {exc}") from None
    except AssertionError as exc:
        raise CheckpointError(f"Checkpoint failed: {exc}") from None


def _rounded(value: Any) -> Any:
    """``value`` with every float kept to 7 significant digits (the notebooks compare at
    1e-4)."""
    if isinstance(value, float):
        if not math.isfinite(value):
            raise LabError(f"a reference value must be finite; got {value!r}")
        return float(f"{value:.7g}")
    if isinstance(value, bool) or value is None:
        raise LabError(
            f"a reference value must be a number, a string or a list; got {value!r}"
        )
    if isinstance(value, int | str):
        return value
    if isinstance(value, list | tuple):
        return [_rounded(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _rounded(v) for k, v in value.items()}
    raise LabError(
        "a reference value must be plain numbers, strings, lists and dicts; got "
        f"{type(value).__name__}"
    )


# per process: a lab module is imported once, so is its reference
_EXPECTED: dict[Exercise, dict[str, Any]] = {}


def expected_values(exercise: Exercise) -> dict[str, Any] | None:
    """The reference's numbers for ``exercise`` (rounded as the notebook holds them), or
    None if it has none."""
    if exercise.reference is None:
        return None
    if exercise not in _EXPECTED:
        _EXPECTED[exercise] = _run_reference(exercise)
    # a copy: a checkpoint may not change the cached numbers
    return json.loads(json.dumps(_EXPECTED[exercise]))


def _run_reference(exercise: Exercise) -> dict[str, Any]:
    # only a lab with a reference needs it, and then the lab's own code does
    import torch

    threads = torch.get_num_threads()
    # tiny tensors: one thread is fastest, and a busy machine stays usable
    torch.set_num_threads(1)
    try:
        return _rounded(exercise.reference())
    finally:
        torch.set_num_threads(threads)


def checkpoint_source(
    exercise: Exercise, expected: dict[str, Any] | None = None
) -> tuple[str, str]:
    """(the checkpoint function's source, the code that runs it on the reader's
    function)."""
    fn = exercise.checkpoint
    source = textwrap.dedent(inspect.getsource(fn))
    name = exercise.target.partition(":")[2]
    if expected is None:
        return source, f"run_checkpoint({fn.__name__}, {name})"
    # numbers, strings and lists: a Python literal too
    literal = json.dumps(expected, separators=(", ", ": "))
    numbers = f"expected = {literal}  # the book's function on these inputs"
    return source, f"{numbers}\n\nrun_checkpoint({fn.__name__}, {name}, expected)"


def drop_numbered_markers(text: str) -> str:
    """Code without the listings' ``# [n]`` markers: the lists that explain them are on
    the pages, not here."""
    return "\n".join(
        _NUMBERED_LEAD.sub("# ", _NUMBERED_ALONE.sub("", line))
        for line in text.split("\n")
    )


def _hint_cells(number: int, hints: tuple[str, ...]) -> str:
    names = ["a nudge"] + ["a closer look"] * max(0, len(hints) - 2)
    names += ["the shape of the answer"] if len(hints) > 1 else []
    blocks = [
        f"<details><summary>Hint {number}.{k} "
        f"({name})</summary>\n\n{hint.strip()}\n\n</details>"
        for k, (hint, name) in enumerate(zip(hints, names, strict=True), start=1)
    ]
    return "\n\n".join(blocks)


EDITIONS = ("student", "solution", "instructor")
#: nbgrader's cell-metadata schema (the format nbgrader, and otter's nbgrader import,
#: read)
NBGRADER_SCHEMA = 3


def _grading(
    cell: Any, grade_id: str, *, solution: bool = False, points: int = 0
) -> None:
    """Mark ``cell`` for nbgrader: a solution cell the student writes, or a locked test
    cell worth ``points``."""
    cell.metadata["nbgrader"] = {
        "grade": points > 0,
        "grade_id": grade_id,
        "locked": not solution,
        "schema_version": NBGRADER_SCHEMA,
        "solution": solution,
        "task": False,
        **({"points": points} if points else {}),
    }


#: The first lines of every lab's set-up cell: a missing package is named with the
#: command that installs it, before PyTorch's own warning about NumPy could appear.
REQUIREMENTS_CHECK = """\
try:
    import numpy  # noqa: F401  (imported first: PyTorch warns on import without it)
except ImportError:
    raise SystemExit("This lab needs NumPy beside PyTorch: pip install {packages}") from None"""  # noqa: E501  (a notebook's code)


def pinned_versions(root: Path | None = None) -> str:
    """The versions the book's tests run the notebooks with (its pinned torch and
    numpy), as a phrase."""
    root = root or ROOT
    pins = {}
    for name in ("torch.txt", "lock.txt"):
        path = root / "requirements" / name
        for line in path.read_text().splitlines() if path.is_file() else []:
            package, _, version = line.partition("==")
            if package.strip().lower() in ("torch", "numpy") and version:
                pins[package.strip().lower()] = version.split()[0].split(";")[0]
    return (
        " and ".join(f"{p} {pins[p]}" for p in ("torch", "numpy") if p in pins)
        or "the book's pinned packages"
    )


#: The measured run times of every lab's solution edition, written by ``python -m
#: bookbuild.tools.labs --time`` (:func:`measure_run_times`) and stated in each
#: notebook's time budget.
TIMINGS = LABS / "timings.json"
#: The stated run time is honest while a run of the solution edition takes at most this
#: factor times it, plus RUN_TIME_SLACK_S (a busy machine, a cold import);
#: ``tests/bookbuild/test_labs.py`` holds the notebooks to it.
RUN_TIME_FACTOR = 3.0
RUN_TIME_SLACK_S = 3.0
#: A hosted notebook service that opens an uploaded notebook (there is no public
#: repository to open it from).
LAUNCH_URL = "https://colab.research.google.com/"
LAUNCH_NAME = "Google Colab"


def load_timings(path: Path | None = None) -> dict[str, Any]:
    """The stored run times (:data:`TIMINGS`), or an empty dict where none were measured
    yet."""
    path = TIMINGS if path is None else path
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def cell_seconds(cell: Any) -> float:
    """How long an executed cell ran, from the timestamps nbclient records in its
    metadata."""
    from datetime import datetime

    stamps = cell.get("metadata", {}).get("execution", {})
    start, end = stamps.get("iopub.execute_input"), stamps.get("shell.execute_reply")
    if not start or not end:
        return 0.0
    return (
        datetime.fromisoformat(end.replace("Z", "+00:00"))
        - datetime.fromisoformat(start.replace("Z", "+00:00"))
    ).total_seconds()


def run_time_parts(nb: nbformat.NotebookNode, lab: Lab) -> dict[str, Any]:
    """An executed notebook's run time, split as its budget states it: the set-up cell,
    each exercise (its function and its checkpoint), and what follows the exercises (the
    prediction and the results table)."""
    parts = {"setup": 0.0, "exercises": [0.0] * len(lab.exercises), "after": 0.0}
    for n, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        seconds = cell_seconds(cell)
        if "exercise" in cell.metadata:
            parts["exercises"][int(cell.metadata["exercise"]) - 1] += seconds
        elif n == 1:
            parts["setup"] += seconds
        else:
            parts["after"] += seconds
    parts["total"] = parts["setup"] + sum(parts["exercises"]) + parts["after"]
    return parts


def _machine() -> str:
    import os
    import platform

    name = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{name}, {os.cpu_count()} cores, one thread used"


def measure_run_times(
    labs: list[Lab] | None = None, path: Path | None = None
) -> dict[str, Any]:
    """Run every lab's solution edition in a fresh kernel, as a student's Run All does,
    and store how long its cells took (seconds, to a thousandth) in ``path`` (default
    :data:`TIMINGS`); return what was stored."""
    import platform
    from importlib.metadata import version

    from nbclient import NotebookClient

    labs = load_labs() if labs is None else labs
    stored: dict[str, Any] = {
        "machine": _machine(),
        "python": platform.python_version(),
        "torch": version("torch"),
        "labs": {},
    }
    for lab in labs:
        nb = notebook(lab, "solution")
        NotebookClient(nb, timeout=600, kernel_name="python3").execute()
        parts = run_time_parts(nb, lab)
        stored["labs"][lab.slug] = {
            key: [round(v, 3) for v in value]
            if isinstance(value, list)
            else round(value, 3)
            for key, value in parts.items()
        }
    path = TIMINGS if path is None else path
    path.write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
    return stored


def _seconds(value: float) -> str:
    if value < 0.01:
        return "under 0.01 s"
    return f"{value:.2f} s" if value < 10 else f"{value:.0f} s"


def budget(lab: Lab, timings: dict[str, Any] | None = None) -> str:
    """The lab's time budget (Markdown): per exercise and in all, the estimated writing
    time beside the measured run time of the solution edition's cells (or "not measured
    yet" where :data:`TIMINGS` has no entry)."""
    timings = load_timings() if timings is None else timings
    measured = timings.get("labs", {}).get(lab.slug)
    if measured is not None and len(measured["exercises"]) != len(lab.exercises):
        # measured before an exercise was added or removed: stale, so not stated
        measured = None
    rows = ["| | writing (estimate) | running (measured) |", "|---|---|---|"]
    run = (lambda v: _seconds(v)) if measured else (lambda v: "not measured yet")
    rows.append(f"| set-up cell | - | {run(measured['setup'] if measured else 0)} |")
    for number, exercise in enumerate(lab.exercises, start=1):
        name = exercise.target.partition(":")[2]
        seconds = measured["exercises"][number - 1] if measured else 0
        rows.append(
            f"| exercise {number}, `{name}` | about {exercise.minutes} min | "
            f"{run(seconds)} |"
        )
    # the prediction and the results table
    extra = 10 if lab.prediction is not None or lab.results else 0
    if extra:
        rows.append(
            f"| prediction and results table | about {extra} min | "
            f"{run(measured['after'] if measured else 0)} |"
        )
    total = sum(e.minutes for e in lab.exercises) + extra
    rows.append(
        f"| **in all** | **about {total} min** | "
        f"**{run(measured['total'] if measured else 0)}** |"
    )
    where = (
        "the running times were measured by running the solution edition's cells on "
        f"the book's build machine ({timings['machine']}), with torch "
        f"{timings['torch']} and Python {timings['python']}"
        if measured
        else "the running times are not measured yet"
    )
    note = (
        "The writing times are the book's estimate for a student who has read the "
        f"chapter, not a measurement; {where}."
        + (" The stretch section is not in the budget." if lab.stretch else "")
    )
    return "**Time budget.**\n\n" + "\n".join(rows) + "\n\n" + note


def exercise_budget(
    lab: Lab, number: int, timings: dict[str, Any] | None = None
) -> str:
    timings = load_timings() if timings is None else timings
    measured = timings.get("labs", {}).get(lab.slug)
    exercise = lab.exercises[number - 1]
    text = f"*Budget: about {exercise.minutes} minutes of writing (estimate)"
    if measured is not None and len(measured["exercises"]) == len(lab.exercises):
        text += (
            f"; its cells ran in {_seconds(measured['exercises'][number - 1])} "
            "(measured)"
        )
    return text + ".*"


def notebook(lab: Lab, edition: str) -> nbformat.NotebookNode:
    """The ``edition`` of ``lab`` as a notebook: "student", "solution", or "instructor"
    (the solution edition with nbgrader's grading metadata: each exercise's function a
    solution cell, its checkpoint a locked test cell worth one point; the student and
    solution editions carry the same cell ids, so a grader matches them)."""
    if edition not in EDITIONS:
        raise ValueError(
            f"edition must be one of {', '.join(EDITIONS)}; got {edition!r}"
        )
    if edition == "instructor":
        nb = notebook(lab, "solution")
        nb.cells[0].source = nb.cells[0].source.replace(
            "*Solution edition, for instructors;",
            "*Instructor edition, with nbgrader's grading metadata;",
            1,
        )
        _grading(nb.cells[1], f"{lab.slug}-setup")
        for cell in nb.cells[2:]:
            if cell.cell_type != "code" or "exercise" not in cell.metadata:
                # the prediction and the results table are the student's own, not graded
                continue
            number = int(cell.metadata["exercise"])
            if "run_checkpoint(" in cell.source:
                _grading(cell, f"{lab.slug}-ex{number}-checkpoint", points=1)
            else:
                _grading(cell, f"{lab.slug}-ex{number}-function", solution=True)
        return nb
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    timings = load_timings()
    which = (
        "solution edition, for instructors"
        if edition == "solution"
        else "student edition"
    )
    helper = "\n\n\n".join(
        textwrap.dedent(inspect.getsource(obj)).rstrip()
        for obj in (CheckpointError, run_checkpoint)
    )
    cells = [
        md(
            f"# {lab.title}\n\n*{which.capitalize()}; generated from the "
            f"book's tested code.*\n\n{lab.intro}\n\n"
            "**Requirements:** Python 3.10 or newer and `pip install "
            f"{' '.join(lab.requirements)}` "
            "(in Colab they are already installed; the book tests this "
            f"notebook with {pinned_versions()}). "
            "Nothing else: this notebook does not need the book's repository "
            "or a network connection, and runs on a laptop's CPU in a minute "
            "or two.\n\n"
            "Fill in each function where it says `YOUR CODE HERE`, then run "
            "the checkpoint cell under it. "
            "A checkpoint that fails stops the notebook there and says in one "
            "sentence what is wrong; the hints "
            "under each function open one at a time, a nudge first. After the "
            "last checkpoint you write down "
            "a prediction and measure it, an optional stretch section "
            "follows, and the lab ends with a small "
            f"table of results your own functions produce.\n\n{budget(lab, timings)}"
        ),
        code(
            f"{REQUIREMENTS_CHECK.format(packages=' '.join(lab.requirements))}\n\n"
            f"{lab.setup.strip()}\n\n"
            "torch.set_num_threads(1)  # the lab's tensors are tiny: "
            "one thread is fastest"
            f"\n\n\n{helper}"
        ),
    ]
    for number, exercise in enumerate(lab.exercises, start=1):
        name = exercise.target.partition(":")[2]
        cells.append(
            md(
                f"## Exercise {number}: "
                f"`{name}`\n\n{exercise_budget(lab, number, timings)}\n\n"
                f"{exercise.task.strip()}"
            )
        )
        parts = [
            _context_source(ref, exercise, edition).rstrip("\n")
            for ref in exercise.context
        ]
        if edition == "solution":
            parts.append(solution_source(exercise.target).rstrip("\n"))
        else:
            parts.append(
                student_source(
                    exercise.target, stub_message(lab, number, exercise)
                ).rstrip("\n")
            )
        cells.append(
            code(
                drop_numbered_markers("\n\n\n".join(parts)),
                metadata={"exercise": number},
            )
        )
        cells.append(
            md(
                f"{_hint_cells(number, exercise.hints)}\n\n**Checkpoint.** Run the "
                "next cell; it checks your function."
            )
        )
        check, call = checkpoint_source(exercise, expected_values(exercise))
        cells.append(
            code(f"{check.rstrip()}\n\n\n{call}", metadata={"exercise": number})
        )
    cells.append(
        md(
            "Every checkpoint passed? Then each function of this lab agrees with the "
            "book's tested code on the checks above."
        )
    )
    if lab.prediction is not None:
        cells += [
            md(
                "## Predict, then "
                f"measure\n\n{lab.prediction.question.strip()}\n\nWrite your guess in "
                "the next cell **before** you run the cells below it; nothing checks "
                "it, and a wrong guess is the interesting case."
            ),
            code(lab.prediction.guess.strip(), metadata={"lab_part": "prediction"}),
            code(lab.prediction.measure.strip(), metadata={"lab_part": "measure"}),
            md("Now compare: the next cell prints your guess beside the measurement."),
            code(lab.prediction.compare.strip(), metadata={"lab_part": "compare"}),
        ]
    if lab.stretch:
        items = "\n".join(
            f"{k}. {item.strip()}" for k, item in enumerate(lab.stretch, start=1)
        )
        cells.append(
            md(
                "## Stretch (optional)\n\nHarder extensions for when the lab is done. "
                "No checkpoint checks them and no answer is given: test your code "
                "against PyTorch, autograd or a case you can work out by "
                f"hand.\n\n{items}"
            )
        )
    if lab.results:
        cells += [
            md(
                "## Your results\n\nThe last cell prints a small table, every number "
                "in it computed by the functions you wrote above. Keep it with your "
                "notebook: it is what your lab produced."
            ),
            code(lab.results.strip(), metadata={"lab_part": "results"}),
        ]
    nb = nbformat.v4.new_notebook(cells=cells)
    for n, cell in enumerate(nb.cells):
        # stable ids: the same lab writes the same notebook
        cell["id"] = f"{lab.slug}-{n:02d}"
    nb.metadata = {
        "kernelspec": {
            "name": "python3",
            "display_name": "Python 3",
            "language": "python",
        },
        "language_info": {"name": "python"},
    }
    return nb


def _context_source(ref: str, exercise: Exercise, edition: str) -> str:
    """A context object's source as the notebook shows it. One with a solution region is
    another exercise's answer: the solution edition shows it as tested, the student
    edition with the exercise's stand-in (an equivalent written differently) in place of
    the region; without a stand-in that is an error."""
    source = _object_source(ref)[0]
    if (
        not any(line.strip() == BEGIN for line in source.splitlines())
        or edition == "solution"
    ):
        return hide_markers(source)
    stand_in = dict(exercise.stand_ins).get(ref)
    if stand_in is None:
        raise LabError(
            f"{exercise.target}: its context {ref} is another exercise's answer; give "
            "a stand-in (Exercise.stand_ins) so that the student edition does not "
            "print it"
        )
    lines = solution_source(ref).splitlines()
    begin = next(i for i, line in enumerate(lines) if line.strip() == BEGIN)
    end = next(i for i, line in enumerate(lines) if line.strip() == END)
    indent = lines[begin][: len(lines[begin]) - len(lines[begin].lstrip())]
    given = [
        f"{indent}{line}" if line else ""
        for line in textwrap.dedent(stand_in).strip("\n").splitlines()
    ]
    return "\n".join(lines[:begin] + given + lines[end + 1 :]) + "\n"


def load_labs(folder: Path = LABS) -> list[Lab]:
    """Every :class:`Lab` defined in ``folder`` (modules ``labs/lab*.py``, in name
    order)."""
    if str(folder.parent) not in sys.path:
        sys.path.insert(0, str(folder.parent))
    labs = []
    for path in sorted(folder.glob("lab*.py")):
        module = importlib.import_module(f"{folder.name}.{path.stem}")
        lab = getattr(module, "LAB", None)
        if not isinstance(lab, Lab):
            raise LabError(
                f"{path.relative_to(folder.parent)} must define LAB = Lab(...)"
            )
        labs.append(lab)
    return labs


def write_labs(out: Path = OUT, labs: list[Lab] | None = None) -> list[Path]:
    """Write both editions of every lab into ``out``, and one zip per edition; return
    the paths written.

    Unchanged files are left alone; the zips hold fixed timestamps, so the same labs
    write the same bytes.
    """
    out.mkdir(parents=True, exist_ok=True)
    written = []
    texts: dict[str, dict[str, str]] = {edition: {} for edition in EDITIONS}
    for lab in load_labs() if labs is None else labs:
        for edition in EDITIONS:
            path = out / f"{lab.slug}-{edition}.ipynb"
            text = nbformat.writes(notebook(lab, edition))
            texts[edition][path.name] = text
            _write_if_changed(path, text.encode("utf-8"))
            written.append(path)
    for edition, members in texts.items():
        path = out / f"labs-{edition}.zip"
        _write_if_changed(path, _zip_bytes(members))
        written.append(path)
    return written


#: The stamp of the last write (in ``out``): the key of its inputs and the digest of
#: every file it wrote.
STAMP = ".inputs.json"


def inputs_key(root: Path = ROOT) -> str:
    """A digest of everything the notebooks are made from.

    The lab modules and their stored run times, all of ``chapter_code`` (the solutions,
    their context and the references' code), this module (the notebooks' helper and
    layout), and the versions of Python and PyTorch the references ran on.
    """
    import hashlib
    import platform
    from importlib.metadata import version

    digest = hashlib.sha256(
        f"{platform.python_version()} {platform.machine()} {version('torch')}".encode()
    )
    digest.update(Path(__file__).read_bytes())
    # the stored run times too
    lab_files = [*(root / "labs").rglob("*.py"), *(root / "labs").glob("*.json")]
    for path in [*sorted(lab_files), *sorted((root / "chapter_code").rglob("*.py"))]:
        digest.update(f"\0{path.relative_to(root).as_posix()}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def write_labs_if_stale(out: Path = OUT, root: Path = ROOT) -> list[Path] | None:
    """:func:`write_labs`, unless the files in ``out`` were written from the same inputs
    and are unchanged.

    Return the paths written, or None when nothing needed writing. Skipping saves a
    no-change build the import of torch and of the taught code, and the references' runs
    (about 3 s). A file deleted or edited in ``out`` is written again, and so is
    everything when any input changed (:func:`inputs_key`).
    """
    from filelock import FileLock

    out.parent.mkdir(parents=True, exist_ok=True)
    # two builds at once (HTML, PDF): one writes, one reads
    with FileLock(str(out.parent / f"{out.name}.lock")):
        return _write_labs_if_stale(out, root)


def start_writing_if_stale(
    out: Path = OUT, root: Path = ROOT
) -> subprocess.Popen | None:
    """Start :func:`write_labs_if_stale` in a process of its own when the labs' inputs
    changed since the last write (an edit to any ``chapter_code`` module, a comment
    included: the notebooks hold their text); else None.

    The build starts it first, so that writing the notebooks (importing torch and the
    taught code, running the references: 4-9 s) overlaps the engine's and the gate's
    work instead of following it in Sphinx's start; Sphinx's own call
    (:func:`_on_builder_inited`) then waits on the lock and finds them fresh, or writes
    them itself where this one failed (its error is said there, not here)."""
    try:
        recorded = json.loads((out / STAMP).read_text(encoding="utf-8"))
        if recorded["key"] == inputs_key(root):
            return None
    except (OSError, ValueError, KeyError, TypeError):
        pass
    out.parent.mkdir(parents=True, exist_ok=True)
    write = (
        "import sys; from pathlib import Path; from bookbuild.tools import labs; "
        "labs.write_labs_if_stale(Path(sys.argv[1]), Path(sys.argv[2]))"
    )
    return subprocess.Popen(
        [sys.executable, "-c", write, str(out), str(root)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _write_labs_if_stale(out: Path, root: Path) -> list[Path] | None:
    import hashlib

    key = inputs_key(root)
    stamp = out / STAMP
    try:
        recorded = json.loads(stamp.read_text(encoding="utf-8"))
        fresh = recorded["key"] == key and all(
            (out / name).is_file()
            and hashlib.sha256((out / name).read_bytes()).hexdigest() == sha
            for name, sha in recorded["files"].items()
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        fresh = False
    if fresh:
        return None
    written = write_labs(out)
    files = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in written}
    stamp.write_text(
        json.dumps({"key": key, "files": files}, indent=1, sort_keys=True) + "\n",
        encoding="utf-8",
    )
    return written


def _write_if_changed(path: Path, data: bytes) -> None:
    if not path.is_file() or path.read_bytes() != data:
        path.write_bytes(data)


def _zip_bytes(members: dict[str, str]) -> bytes:
    import io

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(members):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, members[name])
    return buffer.getvalue()


def hide_markers(text: str) -> str:
    """A listing's text without its lab marker lines (the pages show the code, not the
    lab's scaffolding)."""
    return "\n".join(line for line in text.split("\n") if not _MARKER_LINE.match(line))


# --------------------------------------------------------------------------- Sphinx


def _on_builder_inited(app: Any) -> None:
    write_labs_if_stale()


def _hide_markers_in_listings(app: Any, doctree: Any) -> None:
    from docutils import nodes

    for block in doctree.findall(nodes.literal_block):
        text = block.astext()
        if any(_MARKER_LINE.match(line) for line in text.split("\n")):
            shown = hide_markers(text)
            block.children = [nodes.Text(shown)]
            block.rawsource = shown


def launch_links(doctree: Any) -> None:
    """After each paragraph that offers a lab's student edition for download, a launch
    link: the hosted notebook service's page and one sentence on opening the downloaded
    notebook there (the book has no public repository a service could open it from)."""
    from docutils import nodes
    from sphinx import addnodes

    done: set[int] = set()
    for ref in list(doctree.findall(addnodes.download_reference)):
        target = str(ref.get("reftarget", ""))
        if not target.endswith("-student.ipynb"):
            continue
        paragraph = ref.parent
        while paragraph is not None and not isinstance(paragraph, nodes.paragraph):
            paragraph = paragraph.parent
        if paragraph is None or paragraph.parent is None or id(paragraph) in done:
            continue
        done.add(id(paragraph))
        after = paragraph.parent.index(paragraph) + 1
        if after < len(paragraph.parent) and "lab-launch" in paragraph.parent[
            after
        ].get("classes", []):
            continue  # already there
        name = target.rsplit("/", 1)[-1]
        launch = nodes.paragraph(classes=["lab-launch"])
        launch += nodes.Text(
            "To run it without installing anything, launch it in a hosted notebook: "
            "open "
        )
        launch += nodes.reference(
            "", LAUNCH_NAME, refuri=LAUNCH_URL, classes=["lab-launch-link"]
        )
        launch += nodes.Text(
            ", choose Upload in its Open notebook window (or File, then Upload "
            "notebook) and pick the downloaded "
        )
        launch += nodes.literal("", name)
        launch += nodes.Text("; PyTorch and NumPy are already installed there.")
        paragraph.parent.insert(paragraph.parent.index(paragraph) + 1, launch)


def _launch_links(app: Any, doctree: Any) -> None:
    launch_links(doctree)


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _on_builder_inited)
    app.connect("doctree-read", _hide_markers_in_listings)
    app.connect("doctree-read", _launch_links)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    # measure the solution editions' run times into labs/timings.json
    if args[:1] == ["--time"]:
        stored = measure_run_times()
        for slug, parts in stored["labs"].items():
            print(f"{slug}: {parts['total']} s")
        print(f"written {TIMINGS.relative_to(ROOT)} ({stored['machine']})")
        return 0
    out = Path(args[0]) if args else OUT
    for path in write_labs(out):
        print(path)
    return 0


if __name__ == "__main__":
    # the labs import bookbuild.tools.labs, not __main__: one Lab class
    from bookbuild.tools import labs as _labs

    sys.exit(_labs.main())
