"""Reproducibility spot check of the committed sweep records (``records/<sweep>/<config>/``).

For each sweep with committed records, the cheapest fresh record (least wall
time, ties broken by job id) is re-run in a fresh process and its metrics must
equal the stored ones exactly. A record made under another output profile
(a GPU's records, checked on a CPU) is not comparable bit for bit and is
skipped, saying so; so is the whole test while no sweep has records yet.
"""

from __future__ import annotations

import pytest

from bookbuild import sweeps
from chapter_code.core import runtime


def committed() -> list[tuple[str, list[dict]]]:
    found = []
    for name, sweep in sweeps.registry().items():
        records = []
        for config in sweep.configs:
            if any(sweeps.records_dir(name, config).glob("*.json")):
                records += sweeps.load(name, config, allow_partial=True, sweep=sweep).records
        if records:
            found.append((name, records))
    return found


def test_cheapest_record_of_each_committed_sweep_reproduces() -> None:
    found = committed()  # a stale or damaged record fails here, naming the command that refreshes it
    if not found:
        pytest.skip("no sweep has committed records yet (records/ holds none): nothing to re-run")
    profile = runtime.output_profile(runtime.pick_device())
    checked = []
    for name, records in found:
        same = [r for r in records if r["environment"]["profile"] == profile]
        if not same:
            print(f"{name}: no record was made under this machine's profile {profile}; not re-run")
            continue
        ok, text = sweeps.spot_check(sweeps.cheapest(same))
        assert ok, f"sweep {name}: {text}"
        checked.append(name)
    if not checked:
        pytest.skip(f"no committed record was made under this machine's output profile ({profile})")
