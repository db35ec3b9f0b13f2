"""Reproducibility checks of the committed sweep records
(``records/<sweep>/<config>/``).

In ``make test`` (seconds):

- every committed record is fresh: a record whose code, parameters or data
  changed since it ran fails here, naming the command that refreshes it;
- for every sweep, the cheapest job of its ``smoke`` configuration (a few
  training steps) is re-run in a fresh process through the same path that
  makes every record (:func:`bookbuild.runs.sweeps.rerun`, which calls
  :func:`bookbuild.runs.sweeps.run_job`), and its metrics must equal those of the
  committed smoke record, ``records/<sweep>/smoke/``, exactly. The smoke job
  calls the sweep's own job function, so a change that breaks reproducibility
  on the way from a job to its record shows here in seconds.

Slow (``@pytest.mark.book``, run by ``make test-clean``): the cheapest record
of each sweep's real configurations is trained again in full.

A record made under another output profile (a GPU's records, checked on a
CPU) is not comparable bit for bit and is skipped, saying so.
"""

from __future__ import annotations

import pytest

from bookbuild.runs import sweeps
from chapter_code.core import numerics, runtime

SMOKE = "smoke"


def committed(configs: str = "all") -> list[tuple[str, list[dict]]]:
    """(sweep, its committed fresh records) for each sweep with any; ``configs``: "all",
    "smoke" or "full"."""
    found = []
    for name, sweep in sweeps.registry().items():
        records = []
        for config in sweep.configs:
            if (configs == "smoke" and config != SMOKE) or (
                configs == "full" and config == SMOKE
            ):
                continue
            if any(sweeps.records_dir(name, config).glob("*.json")):
                records += sweeps.load(
                    name, config, allow_partial=True, sweep=sweep
                ).records
        if records:
            found.append((name, records))
    return found


def this_profile() -> str:
    return numerics.output_profile(runtime.pick_device())


def test_every_committed_record_is_fresh() -> None:
    # a stale or damaged record raises SweepNotReady, naming the command that refreshes
    # it
    found = committed()
    assert all(records for _, records in found)


@pytest.mark.parametrize("name", sorted(sweeps.registry()))
def test_the_cheapest_smoke_job_of_each_sweep_reproduces_its_committed_record(
    name: str,
) -> None:
    sweep = sweeps.registry()[name]
    assert SMOKE in sweep.configs, (
        f"sweep {name} defines no {SMOKE!r} configuration (a few cheap jobs)"
    )
    # every smoke record committed and fresh
    records = sweeps.load(name, SMOKE, sweep=sweep).records
    profile = this_profile()
    same = [r for r in records if r["environment"]["profile"] == profile]
    if not same:
        pytest.skip(
            f"{name}: its smoke records were made under another output profile than "
            f"{profile}"
        )
    ok, text = sweeps.spot_check(sweeps.cheapest(same))
    # bit for bit, or which metrics within their declared precision
    print(f"sweep {name}: {text}")
    assert ok, f"sweep {name}: {text}"


# Slow: trains one full record of each sweep again (about 210 s on 2 cores in all, the
# scoreboard's and the memory test's records the longest), so it runs in `make
# test-clean`, not `make test`. The smoke test above checks the same job-to-record path
# for every sweep in seconds; this one checks the committed records themselves.
@pytest.mark.book
def test_cheapest_record_of_each_committed_sweep_reproduces() -> None:
    found = committed("full")
    if not found:
        pytest.skip(
            "no sweep has committed records yet (records/ holds none): nothing to "
            "re-run"
        )
    profile = this_profile()
    checked = []
    for name, records in found:
        same = [r for r in records if r["environment"]["profile"] == profile]
        if not same:
            print(
                f"{name}: no record was made under this machine's profile {profile}; "
                "not re-run"
            )
            continue
        ok, text = sweeps.spot_check(sweeps.cheapest(same))
        assert ok, f"sweep {name}: {text}"
        checked.append(name)
    if not checked:
        pytest.skip(
            "no committed record was made under this machine's output profile "
            f"({profile})"
        )
