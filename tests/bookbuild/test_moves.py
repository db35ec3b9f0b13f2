"""Tests for bookbuild.moves: a record is re-keyed across a move only when no definition it runs changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from bookbuild import moves, sweeps

HELPER = 'SCALE = 2\n\n\ndef twice(x):\n    """Docstrings may change."""\n    return SCALE * x\n'
JOB = 'from chapter_code.{helper} import twice\n\n\ndef job(x):\n    return {{"y": twice(x)}}\n'


def make_tree(root: Path, job_module: str, helper_module: str, helper: str = HELPER, job: str = JOB) -> Path:
    for module, text in ((job_module, job.format(helper=helper_module)), (helper_module, helper)):
        path = root / "chapter_code" / Path(*module.split("."))
        path = path.with_suffix(".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        for folder in [path.parent, *path.parent.parents]:
            if folder == root:
                break
            (folder / "__init__.py").touch()
        path.write_text(text)
    return root


def record_for(root: Path, function: str) -> dict:
    digest, sources = sweeps.code_hash(function, root)
    return {"function": function, "code_hash": digest, "sources": sources, "sweep": "s", "job": "a", "seed": 0,
            "metrics": {"y": 4}}


@pytest.fixture
def old(tmp_path: Path) -> Path:
    return make_tree(tmp_path / "old", "flat_job", "flat_helper")


def test_a_pure_move_is_re_keyed_and_says_from_what(old: Path, tmp_path: Path) -> None:
    new = make_tree(tmp_path / "new", "topic.job", "topic.helper",
                    helper=HELPER.replace("Docstrings may change.", "A new docstring."))
    record = record_for(old, "chapter_code.flat_job:job")
    moved = moves.check_move(record, "chapter_code.topic.job:job", old, new)
    assert moved["function"] == "chapter_code.topic.job:job"
    assert moved["code_hash"] == sweeps.code_hash("chapter_code.topic.job:job", new)[0] != record["code_hash"]
    assert set(moved["sources"]) == {"chapter_code.topic.job", "chapter_code.topic.helper"}
    assert moved["moved"] == {"from_commit": None, "function": "chapter_code.flat_job:job",
                              "code_hash": record["code_hash"], "differs": {}}
    assert moved["metrics"] == {"y": 4}


def test_a_changed_body_is_refused_by_name(old: Path, tmp_path: Path) -> None:
    new = make_tree(tmp_path / "new", "topic.job", "topic.helper", helper=HELPER.replace("SCALE * x", "SCALE * x + 1"))
    with pytest.raises(moves.MoveError, match=r"^s: definitions differ from the old commit's: twice$"):
        moves.check_move(record_for(old, "chapter_code.flat_job:job"), "chapter_code.topic.job:job", old, new)


def test_a_changed_constant_passes_only_when_named_with_its_reason(old: Path, tmp_path: Path) -> None:
    new = make_tree(tmp_path / "new", "topic.job", "topic.helper", helper=HELPER.replace("SCALE = 2", "SCALE = 1 + 1"))
    record = record_for(old, "chapter_code.flat_job:job")
    with pytest.raises(moves.MoveError, match="SCALE"):
        moves.check_move(record, "chapter_code.topic.job:job", old, new)
    moved = moves.check_move(record, "chapter_code.topic.job:job", old, new, {"SCALE": "1 + 1 is 2"})
    assert moved["moved"]["differs"] == {"SCALE": "1 + 1 is 2"}
    with pytest.raises(moves.MoveError, match=r"^only a constant defined before and after may differ; twice"):
        moves.check_move(record, "chapter_code.topic.job:job", old, new, {"twice": "trust me"})


def test_a_record_already_stale_at_the_old_commit_is_refused(old: Path, tmp_path: Path) -> None:
    new = make_tree(tmp_path / "new", "topic.job", "topic.helper")
    record = record_for(old, "chapter_code.flat_job:job") | {"code_hash": "0" * 64}
    with pytest.raises(moves.MoveError, match="already stale there"):
        moves.check_move(record, "chapter_code.topic.job:job", old, new)


def test_a_renamed_job_is_refused(old: Path, tmp_path: Path) -> None:
    new = make_tree(tmp_path / "new", "topic.job", "topic.helper", job=JOB.replace("def job", "def job2"))
    with pytest.raises(moves.MoveError, match="renamed"):
        moves.check_move(record_for(old, "chapter_code.flat_job:job"), "chapter_code.topic.job:job2", old, new)


def test_a_name_defined_twice_in_a_closure_is_refused(old: Path, tmp_path: Path) -> None:
    new = make_tree(tmp_path / "new", "topic.job", "topic.helper", job=JOB + "\n\ndef twice(x):\n    return x\n")
    with pytest.raises(moves.MoveError, match="twice is defined twice"):
        moves.check_move(record_for(old, "chapter_code.flat_job:job"), "chapter_code.topic.job:job", old, new)


def test_the_committed_records_carry_their_move() -> None:
    # The records moved with the layout of chapter_code keep the function they ran under, and the reason for
    # the one constant whose text changed.
    for name, sweep in sweeps.registry().items():
        for config in sweep.configs:
            folder = sweeps.records_dir(name, config)
            for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
                record = sweeps.json.loads(path.read_text())
                if "moved" in record:
                    assert record["function"] == sweeps.function_path(sweep.job)
                    assert record["moved"]["function"].startswith("chapter_code.")
                    assert set(record["moved"]["differs"]) <= {"DATA_DIR"}
