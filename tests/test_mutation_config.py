"""The mutation runner's configuration (mutation/config.toml) against the tree: every
module it configures exists, every test file it lists exists, and the runner refuses a
section naming one that does not. mutmut itself is not needed (mutation.txt, outside
the lock)."""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def run():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "mutation_run", ROOT / "mutation" / "run.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def config() -> dict:
    return tomllib.loads((ROOT / "mutation" / "config.toml").read_text())


def test_every_configured_module_and_test_file_exists(run) -> None:  # type: ignore[no-untyped-def]
    cfg = config()
    for module in cfg["modules"]:
        assert (ROOT / run.module_path(module)).is_file(), module
        run.scratch_config(module, cfg)  # raises on a missing test file


def test_a_section_naming_a_missing_test_file_is_refused_by_name(run) -> None:  # type: ignore[no-untyped-def]
    cfg = config()
    section = cfg["modules"]["lm.char_models"]
    section["only_tests"] = [*section["only_tests"], "tests/test_experiments.py"]
    with pytest.raises(
        SystemExit,
        match=(
            r'\[modules\."lm\.char_models"\] names test files that do not exist: '
            r"tests/test_experiments\.py"
        ),
    ):
        run.scratch_config("lm.char_models", cfg)
