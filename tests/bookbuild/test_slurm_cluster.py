"""A real Slurm round trip: a single-node cluster on this machine runs a tiny sweep
through submitit.

Installs Debian's ``slurm-wlm`` and ``munge`` with apt-get when they are
absent (skipped, saying why, only where apt-get cannot install them: not root,
no apt-get, no reachable package index), starts ``munged``, ``slurmctld`` and
``slurmd`` with :mod:`bookbuild.runs.slurm_cluster`, submits the sweep with
``--cluster slurm``, checks its records, and stops the daemons by their pids.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
from pathlib import Path

import pytest

from bookbuild.runs import slurm_cluster, sweeps
from tests.bookbuild.test_sweeps import repo, tiny  # noqa: F401  (the fixture and the tiny sweep)


def test_a_tiny_sweep_runs_on_a_real_single_node_slurm_cluster(
    repo: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if os.geteuid() != 0:
        pytest.skip(
            "the test cluster's daemons run as root, and installing Slurm needs root; "
            "this is not root"
        )
    try:
        slurm_cluster.install()
    except slurm_cluster.SlurmUnavailable as exc:
        pytest.skip(f"Slurm cannot be installed here: {exc}")
    folder = Path(tempfile.mkdtemp(prefix="book-slurm-test-"))
    with slurm_cluster.cluster(folder) as env:
        pids = json.loads((folder / "pids.json").read_text())
        monkeypatch.setenv("SLURM_CONF", env["SLURM_CONF"])
        out = io.StringIO()
        code = sweeps.run(
            tiny(), "cpu", "slurm", root=repo, out=out, poll_s=0.5, give_up_s=240
        )
        assert code == 0, out.getvalue()
    assert not folder.exists()
    assert set(pids) == {"munged", "slurmctld", "slurmd"}
    # nothing left running: no daemon, no job step
    assert not any(slurm_cluster._alive(pid) for pid in pids.values())
    assert not slurm_cluster._steps(folder)
    import psutil

    orphans = [
        p.info["cmdline"]
        for p in psutil.process_iter(["cmdline", "status"])
        if p.info["status"] != psutil.STATUS_ZOMBIE
        and str(repo) in " ".join(p.info["cmdline"] or [])
    ]
    assert orphans == []  # no srun or job process of this test outlives the cluster
    loaded = sweeps.load("tiny", "cpu", root=repo, sweep=tiny())
    assert loaded.complete
    assert [r["metrics"]["value"] for r in loaded.records] == [4, 5, 9, 10]
    job_ids = {r["slurm_job_id"] for r in loaded.records}
    assert None not in job_ids
    assert len(job_ids) == 4
    assert "4/4 done, 0 running, 0 failed" in out.getvalue()
