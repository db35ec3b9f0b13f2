"""The two editions side by side (bookbuild.gate.editions): a GPU edition's glued
values, claims and training runs beside the CPU edition's, judged against the seed
spread where one was measured."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from bookbuild.gate import editions


def _glue(name: str, *lines: str) -> dict:
    return {"kind": "glue", "name": name, "lines": list(lines)}


def _check(name: str, held: bool) -> dict:
    return _glue(f"check:{name}", json.dumps({"held": held, "name": name}))


def _baseline(root: Path, profile: str, chapter: str, outputs: dict) -> None:
    folder = root / "baselines" / profile
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{chapter}.json").write_text(json.dumps(outputs))


def _record(
    root: Path, sweep: str, config: str, job: str, seed: int, **metrics: object
) -> None:
    folder = root / "records" / sweep / config
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{job}.seed{seed}.json").write_text(
        json.dumps({"job": job, "seed": seed, "metrics": metrics})
    )


def test_without_a_gpu_edition_the_section_says_what_make_gpu_run_adds(
    tmp_path: Path,
) -> None:
    _baseline(tmp_path, "cpu-avx2", "gated", {"a": [_glue("x", "'1.5'")]})
    text = "\n".join(editions.section(tmp_path))
    assert "## The two editions" in text
    assert "No GPU edition has been recorded yet. `make gpu-run`" in text
    assert editions.gpu_profiles(tmp_path) == []


def test_values_and_claims_of_both_editions_side_by_side(tmp_path: Path) -> None:
    _baseline(
        tmp_path,
        "cpu-avx2",
        "gated",
        {
            "a": [
                _glue("same", "'0.25'"),
                _glue("rounded", "'1.514'"),
                _glue("moved", "'0.91'"),
                _glue("cpu-only", "'3'"),
                _check("holds", True),
                _check("gpu-fails", True),
            ]
        },
    )
    _baseline(
        tmp_path,
        "cuda-sm90",
        "gated",
        {
            "a": [
                _glue("same", "'0.25'"),
                _glue("rounded", "'1.515'"),
                _glue("moved", "'0.72'"),
                _check("holds", True),
                _check("gpu-fails", False),
            ]
        },
    )
    values, claims = editions.compare_baselines(tmp_path, "cuda-sm90")
    assert {v.name: v.verdict for v in values} == {
        "same": "same bits",
        "rounded": "same at the digits shown",
        "moved": "differs",
    }
    assert {c.name: (c.cpu, c.gpu) for c in claims} == {
        "holds": (True, True),
        "gpu-fails": (True, False),
    }
    text = "\n".join(editions.section(tmp_path))
    assert "### `cpu-avx2` beside `cuda-sm90`" in text
    assert (
        "3 glued values in both editions: 1 differs, 1 same at the digits "
        "shown, 1 same bits" in text
    )
    assert "2 claims checked in both, 1 holding in both." in text
    assert "- {doc}`/book/gated` `gpu-fails`: CPU holds, GPU fails" in text
    assert "| {doc}`/book/gated` | `moved` | `'0.91'` | `'0.72'` |" in text


def test_training_runs_are_judged_against_the_seed_spread(tmp_path: Path) -> None:
    seeds = [0.90, 0.94, 0.98, 1.0]
    for s, acc in enumerate(seeds):
        _record(tmp_path, "memory", "cpu", "lstm", s, final_accuracy=acc)
    _record(
        tmp_path,
        "memory",
        "book-grid",
        "lstm",
        0,
        final_accuracy=0.95,
        seconds_per_step=3.0,
        epochs=40,
    )
    _record(
        tmp_path,
        "memory",
        "book-grid@cuda-sm90",
        "lstm",
        0,
        final_accuracy=0.93,
        seconds_per_step=1.0,
        epochs=40,
    )
    _record(tmp_path, "memory", "book-grid", "gru", 0, final_accuracy=0.95)
    _record(tmp_path, "memory", "book-grid@cuda-sm90", "gru", 0, final_accuracy=0.50)
    _record(tmp_path, "lm", "book-runs", "prose", 0, valid_nats=1.40)
    _record(tmp_path, "lm", "book-runs@cuda-sm90", "prose", 0, valid_nats=1.41)
    metrics = editions.compare_records(
        tmp_path, "cuda-sm90", spread_of={"memory": "cpu"}
    )
    by = {(m.sweep, m.job, m.metric): m for m in metrics}
    # timings are never compared
    assert ("memory", "lstm", "seconds_per_step") not in by
    assert by[("memory", "lstm", "epochs")].verdict == "same bits"
    lstm = by[("memory", "lstm", "final_accuracy")]
    assert lstm.spread == statistics.stdev(seeds)
    assert lstm.seeds == 4
    assert lstm.verdict == "within 2 seed spreads"
    assert (
        by[("memory", "gru", "final_accuracy")].verdict
        == "no seed sweep of this job: not judged"
    )
    assert (
        by[("lm", "prose", "valid_nats")].verdict
        == "no seed sweep of this job: not judged"
    )
    far = editions.Metric(
        "memory", "book-grid", "lstm", 0, "final_accuracy", 0.95, 0.5, 0.01, 16
    )
    assert far.verdict == "outside 2 seed spreads"


def test_the_memory_test_declares_its_seed_sweep() -> None:
    from bookbuild.runs import registry as experiments

    assert experiments.MEMORY_ROBUSTNESS.spread == "cpu"
    grid = experiments.MEMORY_ROBUSTNESS.configs
    # the same jobs, so a spread per job
    assert set(grid["book-grid"].jobs) == set(grid["cpu"].jobs)
    assert len(grid["cpu"].seeds) == 16
