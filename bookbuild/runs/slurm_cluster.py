"""A throwaway single-node Slurm cluster on this machine, for trying the sweeps' Slurm
path.

``python -m bookbuild.runs.slurm_cluster up`` (as root) installs Debian's
``slurm-wlm`` and ``munge`` with apt-get if they are absent, then starts
``munged``, ``slurmctld`` and ``slurmd`` in a private folder (default
``/tmp/book-slurm``) with a configuration of their own: no cgroups
(``proctrack/linuxproc``, ``task/none``), no job accounting, one partition
``debug`` holding this machine. Nothing outside that folder is configured: the
daemons talk through a private munge socket and private ports, and the Slurm
commands find the cluster through ``SLURM_CONF``, which ``up`` prints::

    sudo python -m bookbuild.runs.slurm_cluster up
    export SLURM_CONF=/tmp/book-slurm/slurm.conf
    python -m bookbuild experiments run NAME --cluster slurm
    sudo python -m bookbuild.runs.slurm_cluster down

``down`` stops the three daemons by the pids ``up`` recorded (TERM, then KILL
after a few seconds) and removes the folder. The test ``tests/test_slurm.py``
uses :func:`cluster` to do the same around one tiny sweep.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from bookbuild.files import UserError

DEFAULT_DIR = Path("/tmp/book-slurm")
PACKAGES = ["slurm-wlm", "munge"]
DAEMONS = ["munged", "slurmctld", "slurmd"]
PARTITION = "debug"


class SlurmUnavailable(Exception):
    """Slurm is not installed and apt-get cannot install it here (not root, no apt, no
    package index)."""


def _which(name: str) -> str | None:
    return shutil.which(name) or next(
        (p for p in (f"/usr/sbin/{name}", f"/usr/bin/{name}") if os.access(p, os.X_OK)),
        None,
    )


def installed() -> bool:
    return all(_which(n) for n in ["munged", "slurmctld", "slurmd", "sbatch"])


def install() -> None:
    """Install ``slurm-wlm`` and ``munge`` with apt-get if absent;
    :class:`SlurmUnavailable` if it cannot."""
    if installed():
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        raise SlurmUnavailable(
            "Slurm is not installed, and installing it needs apt-get as root"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    cmd = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *PACKAGES]
    # a fresh machine has no package lists yet
    if subprocess.run(cmd, env=env, capture_output=True).returncode != 0:
        subprocess.run(["apt-get", "update", "-qq"], env=env, capture_output=True)
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SlurmUnavailable(
                f"apt-get could not install {' '.join(PACKAGES)}: "
                f"{done.stderr.strip()[-500:]}"
            )
    if not installed():
        raise SlurmUnavailable(
            f"apt-get installed {' '.join(PACKAGES)} but "
            "munged/slurmctld/slurmd/sbatch are missing"
        )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _memory_mb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024
    return 1024


def slurm_conf(
    folder: Path, host: str, cpus: int, memory_mb: int, ports: tuple[int, int]
) -> str:
    """The cluster's ``slurm.conf``: this host as the only node, root as Slurm's user,
    no cgroups or accounting."""
    return "\n".join(
        [
            "ClusterName=book",
            f"SlurmctldHost={host}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={folder}/munge.socket",
            f"SlurmctldPort={ports[0]}",
            f"SlurmdPort={ports[1]}",
            f"StateSaveLocation={folder}/ctld",
            f"SlurmdSpoolDir={folder}/spool",
            f"SlurmctldPidFile={folder}/slurmctld.pid",
            f"SlurmdPidFile={folder}/slurmd.pid",
            f"SlurmctldLogFile={folder}/slurmctld.log",
            f"SlurmdLogFile={folder}/slurmd.log",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "MpiDefault=none",
            "SchedulerType=sched/builtin",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "ReturnToService=2",
            "SlurmdTimeout=30",
            "InactiveLimit=0",
            "KillWait=5",
            f"NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory_mb} "
            "State=UNKNOWN",
            f"PartitionName={PARTITION} Nodes={host} Default=YES MaxTime=INFINITE "
            "State=UP",
            "",
        ]
    )


def _env(folder: Path) -> dict[str, str]:
    return {**os.environ, "SLURM_CONF": str(folder / "slurm.conf")}


def _wait(check, seconds: float, what: str, folder: Path) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    logs = "".join(
        f"\n--- {p.name} ---\n" + p.read_text()[-1500:]
        for p in sorted(folder.glob("*.log"))
    )
    raise UserError(
        f"the test cluster did not come up: {what} (within {seconds:.0f} s){logs}"
    )


def up(folder: Path = DEFAULT_DIR) -> dict[str, str]:
    """Start munged, slurmctld and slurmd in ``folder``; return the environment
    (``SLURM_CONF``) to reach them."""
    if os.geteuid() != 0:
        raise UserError(
            "the test cluster runs its daemons as root; run `sudo python -m "
            "bookbuild.runs.slurm_cluster up`"
        )
    install()
    if (folder / "pids.json").exists():
        raise UserError(
            f"a test cluster already runs from {folder}; stop it with `python -m "
            f"bookbuild.runs.slurm_cluster down --dir {folder}`"
        )
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True, mode=0o700)
    folder.chmod(0o700)
    for sub in ("ctld", "spool"):
        (folder / sub).mkdir(mode=0o700)
    key = folder / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    host = socket.gethostname().split(".")[0]
    cpus = len(os.sched_getaffinity(0))
    (folder / "slurm.conf").write_text(
        slurm_conf(
            folder, host, cpus, int(_memory_mb() * 0.8), (_free_port(), _free_port())
        )
    )
    pids: dict[str, int] = {}
    try:
        munged = subprocess.Popen(
            [
                _which("munged"),
                "--foreground",
                "--force",
                f"--socket={folder}/munge.socket",
                f"--key-file={key}",
                f"--pid-file={folder}/munged.pid",
                f"--log-file={folder}/munged.log",
                f"--seed-file={folder}/munged.seed",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        pids["munged"] = munged.pid
        _write_pids(folder, pids)
        _wait(
            lambda: (folder / "munge.socket").exists() or munged.poll() is not None,
            15,
            "munged's socket",
            folder,
        )
        if munged.poll() is not None:
            raise UserError(
                f"munged exited with status {munged.returncode}: "
                + (folder / "munged.log").read_text()[-1500:]
                if (folder / "munged.log").exists()
                else ""
            )
        for daemon in ("slurmctld", "slurmd"):
            proc = subprocess.Popen(
                [_which(daemon), "-D", "-f", str(folder / "slurm.conf")],
                env=_env(folder),
                stdout=open(folder / f"{daemon}.out", "wb"),
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            pids[daemon] = proc.pid
            _write_pids(folder, pids)
        _wait(
            lambda: _node_idle(folder),
            60,
            "the node did not become idle in `sinfo`",
            folder,
        )
    except BaseException:
        down(folder)
        raise
    return {"SLURM_CONF": str(folder / "slurm.conf")}


def _write_pids(folder: Path, pids: dict[str, int]) -> None:
    (folder / "pids.json").write_text(json.dumps(pids))


def _node_idle(folder: Path) -> bool:
    out = subprocess.run(
        [_which("sinfo"), "-h", "-o", "%t"],
        env=_env(folder),
        capture_output=True,
        text=True,
    )
    return out.returncode == 0 and out.stdout.strip() in ("idle", "mix", "alloc")


def _steps(folder: Path) -> list[int]:
    """Pids of the job steps (``slurmstepd`` and what they run) of this cluster, found
    by its ``SLURM_CONF``."""
    conf = f"SLURM_CONF={folder / 'slurm.conf'}".encode()
    parents: dict[int, int] = {}
    roots = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
            parents[int(proc.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            if stat.split("(", 1)[1].startswith("slurmstepd") and conf in (
                proc / "environ"
            ).read_bytes().split(b"\0"):
                roots.append(int(proc.name))
        except (OSError, ValueError, IndexError):
            continue
    found = set(roots)
    grew = True
    while grew:  # and their descendants
        new = {pid for pid, parent in parents.items() if parent in found} - found
        found |= new
        grew = bool(new)
    return sorted(found)


def _drain(folder: Path, pids: dict[str, int], seconds: float = 20) -> None:
    """Cancel the cluster's jobs and wait for their steps to end; kill steps that
    outlive the wait."""
    if pids.get("slurmctld") and _alive(pids["slurmctld"]):
        env = _env(folder)
        jobs = subprocess.run(
            [_which("squeue"), "-h", "-o", "%i"],
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.split()
        if jobs:
            subprocess.run(
                [_which("scancel"), *jobs], env=env, capture_output=True, timeout=30
            )
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            queue = subprocess.run(
                [_which("squeue"), "-h", "-o", "%i"],
                env=env,
                capture_output=True,
                text=True,
                timeout=30,
            )
            if not queue.stdout.strip() and not _steps(folder):
                return
            time.sleep(0.2)
    for pid in _steps(folder):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def down(folder: Path = DEFAULT_DIR) -> list[str]:
    """Cancel the cluster's jobs, stop the daemons ``up`` started by their recorded
    pids, remove ``folder``.

    Returns the daemons stopped.
    """
    pid_file = folder / "pids.json"
    pids: dict[str, int] = json.loads(pid_file.read_text()) if pid_file.exists() else {}
    _drain(folder, pids)
    leftovers = _descendants([pid for pid in pids.values() if _alive(pid)])
    stopped = []
    for name in reversed(DAEMONS):  # slurmd, slurmctld, then munged
        pid = pids.get(name)
        if pid is None or not _alive(pid):
            continue
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if _alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            while _alive(pid):
                time.sleep(0.05)
        stopped.append(name)
    # job steps (srun and the like) orphaned by the daemons' exit
    for process in leftovers:
        with contextlib.suppress(Exception):
            process.kill()
    shutil.rmtree(folder, ignore_errors=True)
    return stopped


def _descendants(pids: list[int]) -> list:
    """Every process below ``pids`` (psutil handles), collected while their parents
    still run."""
    import psutil

    found = []
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            found += psutil.Process(pid).children(recursive=True)
    return found


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a child of ours that exited is reaped here, so it stops
    counting)."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    except ChildProcessError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie that is not our child still answers kill(0)
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return True


@contextlib.contextmanager
def cluster(folder: Path) -> Iterator[dict[str, str]]:
    """Run a test cluster for the duration of the ``with`` block; yields its environment
    (``SLURM_CONF``)."""
    env = up(folder)
    try:
        yield env
    finally:
        down(folder)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bookbuild.runs.slurm_cluster",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("action", choices=["up", "down"])
    parser.add_argument(
        "--dir",
        type=Path,
        default=DEFAULT_DIR,
        help=f"the cluster's folder (default {DEFAULT_DIR})",
    )
    args = parser.parse_args(argv)
    try:
        if args.action == "up":
            env = up(args.dir.resolve())
            print(
                f"single-node Slurm cluster up (partition {PARTITION!r}); to use it:\n"
                f"  export SLURM_CONF={env['SLURM_CONF']}\nstop it with: "
                "python -m bookbuild.runs.slurm_cluster down"
                + (f" --dir {args.dir}" if args.dir != DEFAULT_DIR else "")
            )
        else:
            stopped = down(args.dir.resolve())
            print(f"stopped: {', '.join(stopped) or 'nothing was running'}")
    except (UserError, SlurmUnavailable) as exc:
        print(f"{parser.prog} {args.action}: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
