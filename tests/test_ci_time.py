"""benchmarks/ci_time.sh's breakdown (issue 31): each phase of `make test` named and
timed from its phase lines."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "ci_time.sh"


def phase(at: int, name: str) -> str:
    return f"make test: [{at} 00:00:00] {name}"


def parse(tmp_path: Path, *lines: str, times: dict | None = None) -> str:
    log = tmp_path / "ci-run.log"
    log.write_text("\n".join(lines) + "\n")
    args = ["bash", str(SCRIPT), "--parse", str(log)]
    if times is not None:
        (tmp_path / "times.json").write_text(json.dumps(times))
        args += [str(tmp_path / "missing-setup.log"), str(tmp_path / "times.json")]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def seconds(out: str, label: str) -> int:
    found = re.search(rf"^\s+{re.escape(label)}\s+(\d+) s", out, re.MULTILINE)
    assert found, f"no line {label!r} in:\n{out}"
    return int(found[1])


def test_the_pdf_beside_the_html_is_timed_as_its_own_phases(tmp_path: Path) -> None:
    out = parse(
        tmp_path,
        phase(100, "set-up started"),
        phase(123, "environment ready; lint"),
        phase(125, "build (the HTML and the PDF beside it)"),
        "engine: executing 8 chapter(s)",
        phase(199, "PDF beside the HTML: waiting for the set-up"),
        phase(204, "PDF beside the HTML"),
        phase(248, "tests"),
        phase(690, "done"),
        "CI finished in 590 s",
    )
    assert (
        seconds(out, "environment (.venv; the set-up starts in the background)") == 23
    )
    assert seconds(out, "book build: chapters executed, output check") == 74
    assert seconds(out, "HTML rendering; beside it, the wait for the set-up") == 5
    assert seconds(out, "HTML and PDF at once, until both are built") == 44
    assert seconds(out, "test suite (pytest -n auto)") == 442


def test_a_log_from_before_the_side_pdf_still_reads(tmp_path: Path) -> None:
    out = parse(
        tmp_path,
        phase(0, "set-up started"),
        phase(46, "environment ready; lint"),
        phase(48, "build"),
        phase(171, "waiting for the set-up"),
        phase(171, "PDF"),
        phase(211, "tests"),
        phase(664, "done"),
    )
    assert seconds(out, "book build (chapters executed, output check, HTML)") == 123
    assert seconds(out, "PDF (after the HTML, before issue 31 put it beside)") == 40
    assert seconds(out, "test suite (pytest -n auto)") == 453


def test_the_suite_s_longest_files_are_listed_longest_first(tmp_path: Path) -> None:
    times = {
        "wall_s": 443.4,
        "test_seconds": 857.0,
        "by_file": {f"tests/test_{i}.py": float(i) for i in range(12)},
    }
    out = parse(
        tmp_path,
        phase(0, "set-up started"),
        phase(10, "tests"),
        phase(20, "done"),
        times=times,
    )
    assert "443 s wall, 857 test-seconds" in out
    listed = re.findall(r"tests/test_(\d+)\.py", out)
    assert listed == ["11", "10", "9", "8", "7", "6", "5", "4"]


def test_each_phase_gets_the_busy_share_of_the_cpu_samples_inside_it(
    tmp_path: Path,
) -> None:
    log = tmp_path / "ci-run.log"
    log.write_text(
        "\n".join(
            [phase(100, "set-up started"), phase(110, "tests"), phase(130, "done")]
        )
        + "\n"
    )
    samples = tmp_path / "cpu.txt"
    # 2 cores: 200 jiffies a second in all; fully busy from 100 to 110 s, then half busy
    # to 130 s
    rows, busy = [], 0
    for t in range(100, 131, 2):
        rows.append(f"{t} {busy} {(t - 100) * 200}")
        busy += 400 if t < 110 else 200
    samples.write_text("\n".join(rows) + "\n")
    done = subprocess.run(
        [
            "bash",
            str(SCRIPT),
            "--parse",
            str(log),
            str(tmp_path / "no-setup.log"),
            str(tmp_path / "no-times.json"),
            str(samples),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    shares = dict(
        re.findall(
            r"^\s{4}(set-up started|tests)\s+\d+ s\s+([\d.]+)%",
            done.stdout,
            re.MULTILINE,
        )
    )
    assert shares == {"set-up started": "100.0", "tests": "50.0"}, done.stdout
