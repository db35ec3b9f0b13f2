"""Tests for bookbuild.execute.machine_facts: what torch tells of the machine, kept
under the build folder so that a build's own process need not import torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bookbuild.execute import machine_facts
from chapter_code.core import machine

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def kept(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """Keeping on, nothing kept in this process yet, and a log of every fact measured
    through torch."""
    monkeypatch.setattr(machine_facts, "_KEEP", True)
    monkeypatch.setattr(machine_facts, "_MEMO", {})
    for name in ("BOOK_SEED", "BOOK_THREADS", "BOOK_NUMERICS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BOOK_DEVICE", "cpu")  # on a GPU machine too
    measured: list[str] = []
    real = machine_facts.measure_one

    def logged(name: str) -> object:
        measured.append(name)
        return real(name)

    monkeypatch.setattr(machine_facts, "measure_one", logged)
    return measured


def test_kept_facts_are_what_torch_tells_and_are_measured_once(
    kept: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chapter_code.core import numerics, runtime

    for name in machine_facts.NAMES:
        got = machine_facts.fact(tmp_path, name)
        assert got == machine_facts.measure_one(name)
    assert machine_facts.fact(tmp_path, "profile") == numerics.output_profile(
        runtime.pick_device("cpu")
    )
    assert machine_facts.settings(tmp_path) == runtime.settings()
    kept.clear()
    # another process (nothing in memory): read from the file, nothing measured
    monkeypatch.setattr(machine_facts, "_MEMO", {})
    assert machine_facts.fact(tmp_path, "settings")["seed"] == 0
    assert kept == []
    stored = json.loads((tmp_path / "engine" / "machine.json").read_text())
    assert len(stored["entries"]) == 1


def test_a_changed_setting_is_measured_again_and_both_are_kept(
    kept: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert machine_facts.settings(tmp_path).seed == 0
    monkeypatch.setenv("BOOK_SEED", "7")
    kept.clear()
    assert machine_facts.settings(tmp_path).seed == 7
    assert sorted(kept) == sorted(machine_facts.NAMES)
    monkeypatch.delenv("BOOK_SEED")
    monkeypatch.setattr(machine_facts, "_MEMO", {})
    kept.clear()
    assert machine_facts.settings(tmp_path).seed == 0
    assert kept == []  # still in the file


def test_only_the_last_few_keys_are_kept(
    kept: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for seed in range(machine_facts.KEEP + 2):
        monkeypatch.setenv("BOOK_SEED", str(seed))
        assert machine_facts.settings(tmp_path).seed == seed
    entries = json.loads((tmp_path / "engine" / "machine.json").read_text())["entries"]
    assert [e[1]["settings"]["seed"] for e in entries] == list(
        range(2, machine_facts.KEEP + 2)
    )


def test_a_bad_setting_raises_and_is_never_kept(
    kept: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BOOK_THREADS", "0")
    with pytest.raises(machine.SettingError, match="BOOK_THREADS must be an integer"):
        machine_facts.settings(tmp_path)
    assert not (tmp_path / "engine" / "machine.json").exists()
    monkeypatch.setenv("BOOK_THREADS", "2")
    assert machine_facts.settings(tmp_path).threads == 2


def test_a_damaged_file_is_measured_again_and_rewritten(
    kept: list[str], tmp_path: Path
) -> None:
    (tmp_path / "engine").mkdir()
    path = tmp_path / "engine" / "machine.json"
    for damaged in ("{broken", '{"entries": 3}', "[]", '{"entries": [["k"]]}'):
        path.write_text(damaged)
        machine_facts._MEMO.clear()
        kept.clear()
        assert machine_facts.fact(tmp_path, "gpu") == {}  # a CPU machine here
        assert sorted(kept) == sorted(machine_facts.NAMES)
        assert len(json.loads(path.read_text())["entries"]) == 1


def test_an_entry_missing_a_fact_is_measured_again(
    kept: list[str], tmp_path: Path
) -> None:
    machine_facts.fact(tmp_path, "profile")
    path = tmp_path / "engine" / "machine.json"
    stored = json.loads(path.read_text())
    del stored["entries"][0][1]["fingerprint"]
    path.write_text(json.dumps(stored))
    machine_facts._MEMO.clear()
    kept.clear()
    assert machine_facts.fingerprint(tmp_path).threads == 1
    assert sorted(kept) == sorted(machine_facts.NAMES)


def test_an_unwritable_build_folder_still_gives_the_facts(
    kept: list[str], tmp_path: Path
) -> None:
    (tmp_path / "engine").write_text("a file where the folder should be")
    assert machine_facts.fact(tmp_path, "settings")["device"] == "cpu"


def test_the_key_is_the_same_before_and_after_the_process_pins_its_kernels(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in {*machine.CPU_PINS, *machine.PROBE_PINS, *machine.CUDA_PINS}:
        monkeypatch.delenv(name, raising=False)
    before = machine_facts.facts_key()
    machine.pin_cpu_numerics()
    machine.pin_cuda_numerics()
    assert machine_facts.facts_key() == before
    # a setting the facts depend on, or a pin the process would not set, moves it
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":16:8")
    assert machine_facts.facts_key() != before
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert machine_facts.facts_key() != before


def test_the_key_follows_the_source_that_computes_the_facts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    before = machine_facts.facts_key()
    for name in machine_facts.SOURCES:
        (tmp_path / f"{name}.py").write_text(
            (machine_facts._source_dir() / f"{name}.py").read_text()
        )
    monkeypatch.setattr(machine_facts, "_source_dir", lambda: tmp_path)
    assert machine_facts.facts_key() == before
    with (tmp_path / "device.py").open("a") as handle:
        handle.write("\n# an edit\n")
    assert machine_facts.facts_key() != before


def test_an_unknown_fact_is_refused() -> None:
    with pytest.raises(ValueError, match="name must be one of"):
        machine_facts.fact(Path("."), "colour")


def test_a_second_build_process_names_the_profile_without_importing_torch(
    tmp_path: Path,
) -> None:
    probe = (
        "import sys\n"
        "from bookbuild.execute import engine, machine_facts\n"
        "with machine_facts.kept():\n"
        "    s = engine.book_settings()\n"
        "    print(engine.device_profile(), s.device, s.threads, s.seed,"
        " engine.gpu_software(), 'torch' in sys.modules)\n"
    )
    env = {
        **os.environ,
        "BOOK_BUILD_DIR": str(tmp_path),
        "PYTHONPATH": str(REPO),
        "BOOK_DEVICE": "cpu",
    }
    for name in ("BOOK_SEED", "BOOK_THREADS", "BOOK_NUMERICS"):
        env.pop(name, None)

    def run() -> str:
        done = subprocess.run(
            [sys.executable, "-c", probe],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    from chapter_code.core import numerics, runtime

    facts = f"{numerics.output_profile(runtime.pick_device('cpu'))} cpu 1 0 {{}}"
    assert run() == f"{facts} True"  # measured through torch
    assert run() == f"{facts} False"  # read back


def test_keeping_ends_with_the_command_that_asked_for_it() -> None:
    assert machine_facts._KEEP is False  # a library call measures
    with machine_facts.kept():
        assert machine_facts._KEEP is True
        with machine_facts.kept():
            pass
        assert machine_facts._KEEP is True
    assert machine_facts._KEEP is False
    with pytest.raises(RuntimeError), machine_facts.kept():
        raise RuntimeError("a command that fails")
    assert machine_facts._KEEP is False
