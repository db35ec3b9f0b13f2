"""Tests for ``.ci/setup-system``: `make test`'s background install of chromium, TeX
Live, npm and Java.

Each test runs the real script in a temporary folder with a PATH that holds
only stand-ins (``apt-get``, ``id``, ``npm``) and the few ordinary tools the
script calls, so nothing is installed and the machine's own TeX, npm or
chromium are never seen. The stand-in ``apt-get`` fails if two of it ever run at
once (apt's lock) and logs each call.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / ".ci" / "setup-system"
TOOLS = [
    "bash",
    "cat",
    "date",
    "grep",
    "mkdir",
    "mv",
    "nice",
    "nohup",
    "rm",
    "rmdir",
    "sed",
    "sleep",
    "tail",
    "touch",
    "tr",
]
TEX = "texlive-xetex latexmk"

APT_GET = """#!/bin/bash
# a stand-in apt-get: one at a time, each call logged; an install that names $FAKE_APT_FAIL fails
if ! mkdir "$FAKE/apt.lock" 2>/dev/null; then echo "two apt-get at once" >>"$FAKE/calls"; exit 99; fi
echo "apt-get $*" >>"$FAKE/calls"
sleep "${FAKE_APT_SECONDS:-0.3}"
rmdir "$FAKE/apt.lock"
if [ "$1" != update ] && [ -n "${FAKE_APT_FAIL:-}" ] && [[ " $* " == *" $FAKE_APT_FAIL "* ]]; then
  echo "E: Unable to locate package $FAKE_APT_FAIL" >&2; exit 100
fi
exit 0
"""  # noqa: E501  (a shell script)
NPM = """#!/bin/bash
echo "npm $* in ${PWD##*/}" >>"$FAKE/calls"
mkdir -p node_modules
"""


def setup_folder(tmp_path: Path, uid: int = 0) -> tuple[Path, dict[str, str]]:
    work, fake = tmp_path / "checkout", tmp_path / "fake"
    (work / "tests" / "browser" / "node").mkdir(parents=True)
    for name in ("package.json", "package-lock.json"):
        (work / "tests" / "browser" / "node" / name).write_text("{}\n")
    bin_dir = fake / "bin"
    bin_dir.mkdir(parents=True)
    for tool in TOOLS:
        found = shutil.which(tool)
        if found is None:
            pytest.skip(f"{tool} is not installed here")
        (bin_dir / tool).symlink_to(found)
    for name, text in {
        "apt-get": APT_GET,
        "npm": NPM,
        "id": f"#!/bin/bash\necho {uid}\n",
    }.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    env = {
        "PATH": str(bin_dir),
        "FAKE": str(fake),
        "HOME": str(tmp_path),
        "TEX_PACKAGES": TEX,
        "SLURM_PACKAGES": "slurm-wlm munge",
        "SLURM_DIRS": str(tmp_path / "no-sbin"),
        "CHROMIUM": str(tmp_path / "no-chromium"),
    }
    return work, env


def setup(
    work: Path, env: dict[str, str], action: str, **extra: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), action],
        cwd=work,
        env={**env, **extra},
        capture_output=True,
        text=True,
        timeout=60,
    )


def calls(env: dict[str, str]) -> list[str]:
    path = Path(env["FAKE"]) / "calls"
    return path.read_text().splitlines() if path.exists() else []


def test_start_returns_at_once_and_one_sequential_job_installs_everything(
    tmp_path: Path,
) -> None:
    work, env = setup_folder(tmp_path)
    began = time.monotonic()
    started = setup(work, env, "start", FAKE_APT_SECONDS="1")
    assert time.monotonic() - began < 0.9, "start must not wait for apt-get"
    assert started.returncode == 0, started.stderr
    assert (
        "installing chromium, TeX Live, Slurm, npm and Java, the browser "
        "tests' npm tools in the background" in started.stdout
    )
    # make test run a second time meanwhile: no second apt-get
    again = setup(work, env, "start")
    assert "still running" in again.stdout
    waited = setup(work, env, "wait")
    assert waited.returncode == 0, waited.stderr
    assert "set-up: waiting for the background install" in waited.stdout
    assert "set-up: ready" in waited.stdout
    assert calls(env) == [
        "apt-get update -qq -o DPkg::Lock::Timeout=300",
        "apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=300 "
        "chromium texlive-xetex latexmk slurm-wlm munge npm default-jre-headless",
        "npm ci --ignore-scripts --no-audit --no-fund --loglevel=error in node",
    ]
    assert (
        work / "tests" / "browser" / "node" / "node_modules" / ".book-installed"
    ).exists()
    log = (work / "_build" / "setup.log").read_text()
    assert "started: apt packages: chromium" in log
    assert "exit 0" in log.splitlines()[-1]
    # waiting again after it finished returns at once
    assert setup(work, env, "wait").returncode == 0


def test_a_failed_install_fails_the_wait_under_ci_and_is_a_note_elsewhere(
    tmp_path: Path,
) -> None:
    work, env = setup_folder(tmp_path)
    # the npm that apt-get fails to install
    (Path(env["FAKE"]) / "bin" / "npm").unlink()
    assert (
        setup(work, env, "start", FAKE_APT_FAIL="default-jre-headless").returncode == 0
    )
    strict = setup(work, env, "wait", BOOK_SETUP_STRICT="1")
    assert strict.returncode == 1
    assert "the background set-up FAILED (exit 100)" in strict.stderr
    # the end of the log
    assert "E: Unable to locate package default-jre-headless" in strict.stderr
    assert (
        "apt-get install FAILED (exit 100) for: npm default-jre-headless"
        in strict.stderr
    )
    assert "npm ci skipped: npm was not installed" in strict.stderr
    installs = [
        c.split("Timeout=300 ")[1]
        for c in calls(env)
        if c.startswith("apt-get install")
    ]
    assert installs == [
        # all at once,
        "chromium texlive-xetex latexmk slurm-wlm munge npm default-jre-headless",
        # then each
        "chromium",
        "texlive-xetex latexmk",
        "slurm-wlm munge",
        "npm default-jre-headless",
    ]
    lenient = setup(work, env, "wait")
    assert lenient.returncode == 0
    assert (
        "NOTE: the tests that need what was not installed (PDF, browser, "
        "audit) will be skipped" in lenient.stdout
    )


def test_without_apt_get_as_root_it_installs_nothing_and_says_what_is_skipped(
    tmp_path: Path,
) -> None:
    work, env = setup_folder(tmp_path, uid=1000)
    (Path(env["FAKE"]) / "bin" / "npm").unlink()
    started = setup(work, env, "start")
    assert started.returncode == 0
    assert started.stdout.splitlines() == [
        "NOTE: no chromium and no apt-get as root here; the browser tests will be "
        "skipped",
        "NOTE: no TeX Live and no apt-get as root here; the PDF tests will be skipped",
        "NOTE: no npm here; the browser tests' audit (axe-core, Nu validator) will be "
        "skipped",
    ]
    waited = setup(work, env, "wait", BOOK_SETUP_STRICT="1")
    assert waited.returncode == 0
    assert "set-up: ready" in waited.stdout
    assert calls(env) == []


def test_a_job_that_died_without_a_result_fails_the_wait_clearly(
    tmp_path: Path,
) -> None:
    work, env = setup_folder(tmp_path)
    (work / "_build").mkdir()
    # no such process
    (work / "_build" / "setup.pid").write_text(f"{os.getpid() + 10_000_000}\n")
    (work / "_build" / "setup.log").write_text("set-up: started\n")
    waited = setup(work, env, "wait", BOOK_SETUP_STRICT="1")
    assert waited.returncode == 1
    assert "ended without an exit status" in waited.stderr
    nothing = setup_folder(tmp_path / "other")
    assert (
        "no set-up was started" in setup(*nothing, "wait", BOOK_SETUP_STRICT="1").stderr
    )


def test_what_is_already_installed_is_not_installed_again(tmp_path: Path) -> None:
    work, env = setup_folder(tmp_path)
    bin_dir = Path(env["FAKE"]) / "bin"
    for name in (
        "munged",
        "slurmctld",
        "slurmd",
        "sbatch",
        "java",
        "xelatex",
        "latexmk",
        "pdftotext",
        "kpsewhich",
    ):
        (bin_dir / name).write_text("#!/bin/bash\nexit 0\n")
        (bin_dir / name).chmod(0o755)
    # the DejaVu fonts the PDF is set in, as fontconfig lists them
    (bin_dir / "fc-list").write_text(
        '#!/bin/bash\necho "/usr/share/fonts/truetype/dejavu/DejaVu.ttf: DejaVu"\n'
    )
    (bin_dir / "fc-list").chmod(0o755)
    started = setup(work, env, "start")
    assert (
        "installing chromium, the browser tests' npm tools in the background"
        in started.stdout
    )
    assert setup(work, env, "wait").returncode == 0
    assert calls(env)[:2] == [
        "apt-get update -qq -o DPkg::Lock::Timeout=300",
        "apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=300 "
        "chromium",
    ]


def test_the_makefile_installs_the_slurm_packages_that_the_slurm_cluster_would() -> (
    None
):
    from bookbuild.runs import slurm_cluster

    found = re.search(
        r"^SLURM_PACKAGES := (.*)$", (ROOT / "Makefile").read_text(), re.MULTILINE
    )
    assert found, "the Makefile defines SLURM_PACKAGES"
    assert found.group(1).split() == slurm_cluster.PACKAGES
