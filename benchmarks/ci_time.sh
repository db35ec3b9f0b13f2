#!/usr/bin/env bash
# Time CI (.ci/run) in a fresh clone of this checkout's HEAD, phase by phase (issue 31: at most 15 minutes on a
# fresh 2-core machine).
#
#   benchmarks/ci_time.sh                 clone HEAD into a temporary folder, run .ci/run there, print the breakdown
#   benchmarks/ci_time.sh --keep          the same, keeping the clone (its path is printed)
#   benchmarks/ci_time.sh --parse LOG [SETUP_LOG [TEST_TIMES [CPU_SAMPLES]]]
#                                         only print the breakdown of an earlier run's output (LOG) and, if given,
#                                         its _build/setup.log, the suite's _build/test-times.json and the CPU
#                                         samples taken beside it (_build/cpu-samples.txt)
#
# The breakdown comes from the timestamps that `make test` prints ("make test: [<epoch s> <UTC>] <phase>") and
# from the background set-up's log: before make test (installing make), the environment (.venv, in parallel with
# the set-up), lint, the book build (every chapter executed, with the output check), the wait for the set-up,
# the PDF (since issue 31 beside the HTML), the test suite; and, beside them, how long the background install itself took. A machine that
# already has chromium, TeX Live, npm and Java installs nothing, so only a fresh machine measures the set-up.
# The run's output is kept in the clone's _build/ci-run.log (and printed as it goes). Beside the run, the share of
# the machine's CPU time that was busy is sampled from /proc/stat every 2 s and given per phase (a phase well under
# 100% leaves a core idle for part of it), and a fixed pure-Python loop is timed before and after the run: this
# machine's speed varies from hour to hour, and the probe says how fast it was while the run was measured.
set -uo pipefail

breakdown() {  # $1: the output of a .ci/run; $2 (optional): its _build/setup.log; $3 (optional): start epoch
  local log=$1 setup_log=${2:-} begun=${3:-}
  awk -v begun="$begun" '
    /^make test: \[[0-9]+ [0-9:]+\] / {
      t = substr($3, 2) + 0; phase = $0; sub(/^make test: \[[0-9]+ [0-9:]+\] /, "", phase)
      n++; at[n] = t; name[n] = phase
    }
    /^CI finished in [0-9]+ s/ { ci = $4 }
    END {
      if (n == 0) { print "no \"make test: [...]\" timestamps in the log (did make test start?)"; exit 1 }
      label["set-up started"] = "environment (.venv; the set-up starts in the background)"
      label["environment ready; lint"] = "lint (ruff)"
      label["build"] = "book build (chapters executed, output check, HTML)"
      label["waiting for the set-up"] = "waiting for the background set-up"
      # since issue 31 the PDF builds beside the HTML: once the chapters have executed, one core renders the HTML
      # while the other waits for the set-up, then builds the PDF
      label["build (the HTML and the PDF beside it)"] = "book build: chapters executed, output check"
      label["PDF beside the HTML: waiting for the set-up"] = "HTML rendering; beside it, the wait for the set-up"
      label["PDF beside the HTML"] = "HTML and PDF at once, until both are built"
      label["PDF"] = "PDF (after the HTML, before issue 31 put it beside)"
      label["fragility probe"] = "fragility probe (chapters and spot checks on other kernels)"
      label["tests"] = "test suite (pytest -n auto)"
      if (begun != "") printf "  %-58s %5d s\n", "before make test (make itself, if absent)", at[1] - begun
      for (i = 1; i < n; i++) {
        l = (name[i] in label) ? label[name[i]] : name[i]
        printf "  %-58s %5d s\n", l, at[i + 1] - at[i]
      }
      if (name[n] != "done") printf "  %-58s   (make test stopped after \"%s\")\n", "", name[n]
      printf "  %-58s %5d s (%d min %02d s)\n", "make test in all", at[n] - at[1], (at[n] - at[1]) / 60, (at[n] - at[1]) % 60
      if (ci != "") printf "  %-58s %5d s (%d min %02d s)\n", "CI in all (.ci/run)", ci, ci / 60, ci % 60
    }' "$log" || return 1
  if [ -n "$setup_log" ] && [ -f "$setup_log" ]; then
    awk '
      /^set-up: \[[0-9]+ [0-9:]+\] / { t = substr($2, 2) + 0; if (!first) first = t; last = t; line = $0 }
      /^set-up: nothing to install/ { print "  background set-up: nothing to install (everything was already here)"; done = 1 }
      END {
        if (done) exit 0
        if (!first) { print "  background set-up: no timestamps in its log"; exit 0 }
        sub(/^set-up: \[[0-9]+ [0-9:]+\] /, "", line)
        printf "  %-58s %5d s (%s)\n", "background set-up (apt-get, npm ci; beside the above)", last - first, line
      }' "$setup_log"
    awk '/^set-up: \[[0-9]+ [0-9:]+\] (apt-get|npm|finished)/ {
        t = substr($2, 2) + 0; step = $0; sub(/^set-up: \[[0-9]+ [0-9:]+\] /, "", step)
        if (prev != "") printf "    %-56s %5d s\n", prev, t - pt
        prev = (step ~ /^finished/) ? "" : step; pt = t }' "$setup_log"
  fi
}

speed_probe() {  # the same pure-Python work every time (10^7 additions; the median of three timings), in seconds
  python3 - <<'PY'
import statistics
import time


def once():
    started, total = time.perf_counter(), 0
    for i in range(10_000_000):
        total += i
    return time.perf_counter() - started


print(f"{statistics.median(once() for _ in range(3)):.2f}")
PY
}

cpu_sampler() {  # $1: file to append "<epoch s> <busy jiffies> <all jiffies>" to every 2 s, until killed
  while :; do
    read -r _ user nice system idle iowait irq softirq steal _ </proc/stat
    echo "$(date +%s) $((user + nice + system + irq + softirq + steal)) $((user + nice + system + irq + softirq + steal + idle + iowait))" >>"$1"
    sleep 2
  done
}

phase_busy() {  # $1: the run's output, $2: the sampler's file: the busy share of all cores in each phase
  [ -s "$2" ] || return 0
  python3 - "$1" "$2" <<'PY'
import re
import sys

log, samples = open(sys.argv[1]).read(), [tuple(map(int, line.split())) for line in open(sys.argv[2])]
marks = [(int(t), name) for t, name in re.findall(r"^make test: \[(\d+) [0-9:]+\] (.*)$", log, re.MULTILINE)]
print("  CPU busy (the share of all cores' time, sampled every 2 s), by the phase lines of make test:")
for (start, name), (end, _) in zip(marks, marks[1:]):
    inside = [s for s in samples if start <= s[0] <= end]
    if len(inside) >= 2 and inside[-1][2] > inside[0][2]:
        busy = (inside[-1][1] - inside[0][1]) / (inside[-1][2] - inside[0][2])
        print(f"    {name:56} {end - start:5d} s  {busy:6.1%}")
PY
}

suite_files() {  # $1: the suite's _build/test-times.json (tests/conftest.py writes it): where the suite's time went
  [ -f "$1" ] || return 0
  python3 - "$1" <<'PY'
import json, sys
times = json.load(open(sys.argv[1]))
print(f"  test suite: {times['wall_s']:.0f} s wall, {times['test_seconds']:.0f} test-seconds; the longest files:")
for path, seconds in sorted(times["by_file"].items(), key=lambda item: -item[1])[:8]:
    print(f"    {path:56} {seconds:5.0f} s")
PY
}

if [ "${1:-}" = "--parse" ]; then
  [ -n "${2:-}" ] || { echo "usage: $0 --parse LOG [SETUP_LOG [TEST_TIMES [CPU_SAMPLES]]]" >&2; exit 2; }
  breakdown "$2" "${3:-}" || exit $?
  suite_files "${4:-}" || exit $?
  [ -z "${5:-}" ] || phase_busy "$2" "$5"
  exit $?
fi

keep=0
[ "${1:-}" = "--keep" ] && keep=1
source_repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ci-time-XXXXXX")
clone=$work/book
git clone --quiet "$source_repo" "$clone" || { echo "ci_time: git clone of $source_repo failed" >&2; exit 1; }
echo "ci_time: $(git -C "$clone" log -1 --format='%h %s' | cut -c1-100)"
echo "ci_time: running .ci/run in $clone ($(nproc 2>/dev/null || echo '?') cores)"
mkdir -p "$clone/_build"
probe_before=$(speed_probe)
echo "ci_time: speed probe before the run: $probe_before s"
cpu_sampler "$work/cpu.txt" &
sampler=$!
trap 'kill "$sampler" 2>/dev/null' EXIT  # killed (timeout's TERM), the script would leave the sampler running
begun=$(date +%s)
(cd "$clone" && bash .ci/run) 2>&1 | tee "$work/ci-run.log"
rc=${PIPESTATUS[0]}
cp "$work/ci-run.log" "$clone/_build/ci-run.log"
ended=$(date +%s)
kill "$sampler" 2>/dev/null
cp "$work/cpu.txt" "$clone/_build/cpu-samples.txt" 2>/dev/null
probe_after=$(speed_probe)
echo
echo "ci_time: .ci/run exited $rc after $(( ended - begun )) s; breakdown:"
breakdown "$work/ci-run.log" "$clone/_build/setup.log" "$begun"
suite_files "$clone/_build/test-times.json"
phase_busy "$work/ci-run.log" "$clone/_build/cpu-samples.txt"
echo "  machine speed probe (10^7 pure-Python additions, median of 3; lower is faster): $probe_before s before the run," \
  "$probe_after s after"
if [ "$keep" = 1 ]; then
  echo "ci_time: the clone is kept in $clone (the run's output: $clone/_build/ci-run.log)"
else
  rm -rf "$work"
fi
exit "$rc"
