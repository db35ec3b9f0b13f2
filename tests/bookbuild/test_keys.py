"""Tests for bookbuild.runs.keys: a job's key covers the definitions it reaches, and
nothing about where they are written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bookbuild.runs import keys

ROOT = Path(__file__).resolve().parents[2]

MODEL = '''"""A model."""
import math

from chapter_code.util import helpers
from chapter_code.util.helpers import clip

SCALE = 2.0  # a constant the job reads
UNUSED = 7


def step(x):
    """One step."""
    return clip(x * SCALE) + helpers.shift(x)


def train(n):
    return [step(i) for i in range(n)] + [math.pi]


def unrelated():
    return UNUSED
'''
HELPERS = '''"""Helpers."""
OFFSET = 1


def clip(x):
    return min(x, 10)


def shift(x):
    return x + OFFSET
'''


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def package(root: Path, model: str = MODEL, helpers: str = HELPERS) -> Path:
    return write(
        root,
        {
            "chapter_code/__init__.py": "",
            "chapter_code/util/__init__.py": "",
            "chapter_code/model.py": model,
            "chapter_code/util/helpers.py": helpers,
        },
    )


def key(root: Path, function: str = "chapter_code.model:train") -> keys.Reached:
    return keys.reached(function, root)


def test_the_key_covers_what_the_job_reaches_and_nothing_else(tmp_path: Path) -> None:
    found = key(package(tmp_path))
    assert sorted(found.definitions) == [
        "OFFSET",
        "SCALE",
        "clip",
        "shift",
        "step",
        "train",
    ]
    assert found.modules == ("chapter_code.model", "chapter_code.util.helpers")


@pytest.mark.parametrize(
    "edit",
    [
        lambda m: m.replace(
            '"""One step."""', '"""One step, now described at more length."""'
        ),  # a docstring
        lambda m: m.replace("# a constant the job reads", "# reworded"),  # a comment
        lambda m: m.replace(
            "return clip(x * SCALE) + helpers.shift(x)",
            "return clip(\n        x * SCALE\n    ) + helpers.shift(x)",
        ),  # a reformat
        lambda m: m + "\n\ndef another():\n    return 3\n",  # an unrelated new function
        lambda m: m.replace(
            "return UNUSED", "return UNUSED + 1"
        ),  # a definition the job does not reach
    ],
)
def test_edits_that_change_nothing_the_job_computes_keep_its_key(
    tmp_path: Path, edit
) -> None:
    before = key(package(tmp_path / "a")).digest
    assert key(package(tmp_path / "b", model=edit(MODEL))).digest == before


@pytest.mark.parametrize(
    ("edit", "names"),
    [
        (
            lambda m, h: (m.replace("SCALE = 2.0", "SCALE = 3.0"), h),
            ["SCALE"],
        ),  # a constant it reads
        (
            lambda m, h: (m, h.replace("OFFSET = 1", "OFFSET = 2")),
            ["OFFSET"],
        ),  # through an import, two deep
        (
            lambda m, h: (m, h.replace("min(x, 10)", "min(x, 11)")),
            ["clip"],
        ),  # a body in another module
        (
            lambda m, h: (m.replace("def step(x):", "def step(x=0):"), h),
            ["step"],
        ),  # a default
    ],
)
def test_a_change_inside_a_reached_definition_changes_the_key_and_is_named(
    tmp_path: Path, edit, names
) -> None:
    before = key(package(tmp_path / "a"))
    after = key(package(tmp_path / "b", *edit(MODEL, HELPERS)))
    assert after.digest != before.digest
    assert keys.changed(before.definitions, after.definitions) == names


def test_a_module_moved_or_split_keeps_the_key(tmp_path: Path) -> None:
    before = key(package(tmp_path / "a")).digest
    moved = write(
        tmp_path / "b",
        {
            "chapter_code/__init__.py": "",
            "chapter_code/topic/__init__.py": "",
            "chapter_code/core/__init__.py": "",
            "chapter_code/core/clipping.py": "def clip(x):\n    return min(x, 10)\n",
            "chapter_code/core/shifting.py": (
                "OFFSET = 1\n\n\ndef shift(x):\n    return x + OFFSET\n"
            ),
            "chapter_code/topic/model.py": MODEL.replace(
                "from chapter_code.util import helpers\nfrom chapter_code.util.helpers "
                "import clip",
                "from chapter_code.core import shifting as helpers\nfrom "
                "..core.clipping import clip",
            ),
        },
    )
    assert key(moved, "chapter_code.topic.model:train").digest == before


def test_an_undefined_job_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(
        LookupError, match="'nothing' is not defined at the top of chapter_code.model"
    ):
        key(package(tmp_path), "chapter_code.model:nothing")


def test_a_docstring_sentence_in_the_memory_task_keeps_every_memory_robustness_record_fresh(  # noqa: E501  (the test's name)
    tmp_path: Path,
) -> None:
    """The issue's measurement: one sentence added to memory_task.py's docstring staled
    96 records."""
    from bookbuild.runs import sweeps

    shutil.copytree(ROOT / "chapter_code", tmp_path / "chapter_code")
    job = sweeps.function_path(sweeps.registry()["memory-robustness"].job)
    before = sweeps.code_hash(job, tmp_path)[0]
    path = tmp_path / "chapter_code" / "gated" / "memory_task.py"
    text = path.read_text()
    path.write_text(text.replace('"""', '"""One more sentence for the reader. ', 1))
    assert sweeps.code_hash(job, tmp_path)[0] == before
    path.write_text(
        text.replace("def train_recall(", "def train_recall_renamed(", 1).replace(
            "train_recall(", "train_recall_renamed("
        )
    )
    assert sweeps.code_hash(job, tmp_path)[0] != before  # a change the job reaches


def test_a_definition_bound_inside_a_top_level_try_or_if_is_reached_too(
    tmp_path: Path,
) -> None:
    guarded = MODEL.replace(
        "SCALE = 2.0  # a constant the job reads",
        "try:\n    SCALE = 2.0\nexcept ImportError:\n    SCALE = 1.0",
    )
    before = key(package(tmp_path / "a", model=guarded))
    assert "SCALE" in before.definitions
    after = key(
        package(tmp_path / "b", model=guarded.replace("SCALE = 1.0", "SCALE = 0.5"))
    )
    assert after.digest != before.digest


SOURCE = (
    b'"""A module."""\n\n\ndef g(x):\n    """Twice x."""\n'
    b"    return 2 * x  # the factor\n"
)


@pytest.mark.parametrize(
    "edit",
    [
        lambda s: s + b"\n# a comment at the end of the file\n",
        lambda s: s.replace(b"# the factor", b"# the factor of two"),
        lambda s: s.replace(b"  # the factor", b""),
        lambda s: s.replace(b"\n\ndef", b"\n# a comment on a blank line\ndef"),
    ],
)
def test_a_module_whose_comments_alone_changed_keeps_its_source_form(edit) -> None:
    assert keys.source_form(edit(SOURCE)) == keys.source_form(SOURCE) is not None


@pytest.mark.parametrize(
    "edit",
    [
        lambda s: s.replace(b"2 * x", b"3 * x"),
        lambda s: s.replace(
            b"Twice x.", b"Two times x."
        ),  # a docstring is a value a chapter may print
        lambda s: s.replace(
            b"def g", b"# a new line above the code\ndef g"
        ),  # moves the line numbers of what follows
        lambda s: s.replace(
            b"2 * x", b"2*x"
        ),  # formatting: kept, the columns of a traceback would move
    ],
)
def test_a_module_whose_code_docstrings_or_places_changed_has_another_source_form(
    edit,
) -> None:
    assert keys.source_form(edit(SOURCE)) != keys.source_form(SOURCE)


def test_a_cells_form_ignores_comment_lines_anywhere_but_not_its_code_and_not_magics() -> (  # noqa: E501 (a test name)
    None
):
    cell = "x = 1\nprint(x)"
    form = keys.source_form(cell, places=False)
    assert keys.source_form("# a comment above\n" + cell, places=False) == form
    assert keys.source_form(cell.replace("x = 1", "x = 1  # one"), places=False) == form
    assert keys.source_form(cell.replace("1", "2"), places=False) != form
    assert keys.source_form("s = 'a # b'", places=False) != keys.source_form(
        "s = 'a # c'", places=False
    )
    assert keys.source_form("%timeit x\n" + cell, places=False) is None
    assert keys.source_form("!ls\n" + cell, places=False) is None
    assert (
        keys.source_form("x = (1,\n", places=False) is None
    )  # not Python: keyed on its text
