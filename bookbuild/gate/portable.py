"""The fragility probe (``make check-portable``): the book once more on another CPU's
last bits.

Intel and AMD processors run different matrix and vector-maths kernels for some
shapes, so the last bits of some results differ between them, and a diverging
training run magnifies those bits. Every developer and CI machine has one CPU;
this probe shows it another one. It executes every chapter again with
``BOOK_NUMERICS=probe`` (``chapter_code.core.numerics.PROBE_PINS``: MKL's
compatible branch, ATen's scalar kernels, oneDNN's SSE4.1 kernels), in a build
folder of its own (``_build/portable``, so the book's own build is untouched),
and compares every output with the same baselines at its declared precision;
then it re-runs the cheapest smoke job of every sweep under the same kernels and
compares its metrics at the precision its sweep declares. An output that moves
beyond its precision fails here, with the page, cell and both values, long before
a machine of the other vendor finds it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Under the checkout's build folder: the probe's own execution state.
FOLDER = "portable"
ADVICE = (
    "An output that moved under the probe depends on the CPU's last bits, and a "
    "machine of the other vendor would fail it too. Show it at the precision it has: a "
    "difference between two implementations as its bound (`within(diff, 1e-6)` in "
    "printed text and glue; a check records `x < 1e-6` as the bound by itself), a "
    "diverging or chaotic run by what is robust (`claims.above`, a claim instead of "
    "the draw), and only where a number must be shown, a `:tolerance:` in the cell's "
    "options with its reason."
)


def probe_environment(
    environ: dict[str, str] | None = None, root: Path = ROOT
) -> dict[str, str]:
    """The environment of the probe's processes: ``BOOK_NUMERICS=probe`` and a build
    folder of its own."""
    env = dict(os.environ if environ is None else environ)
    base = (
        Path(env["BOOK_BUILD_DIR"])
        if env.get("BOOK_BUILD_DIR", "").strip()
        else root / "_build"
    )
    env["BOOK_BUILD_DIR"] = str(base / FOLDER)
    env["BOOK_NUMERICS"] = "probe"
    return env


def spot_checks() -> int:
    """Re-run the cheapest smoke job of every sweep (in this process's numerics) and
    compare; 0 when all hold."""
    from bookbuild.runs import sweeps
    from chapter_code.core import numerics, runtime

    profile = numerics.output_profile(runtime.pick_device())
    failed = 0
    for name, sweep in sorted(sweeps.registry().items()):
        try:
            records = [
                r
                for r in sweeps.load(name, "smoke", sweep=sweep).records
                if r["environment"]["profile"] == profile
            ]
        # stale or damaged: said in its own words, no traceback
        except sweeps.SweepNotReady as exc:
            print(f"portable: sweep {name} FAILED: {exc}", flush=True)
            failed += 1
            continue
        if not records:
            print(
                f"portable: sweep {name}: no smoke record of profile {profile}; not "
                "re-run"
            )
            continue
        ok, text = sweeps.spot_check(sweeps.cheapest(records))
        print(
            f"portable: sweep {name}: {text}"
            if ok
            else f"portable: sweep {name} FAILED: {text}",
            flush=True,
        )
        failed += not ok
    return 1 if failed else 0


def main(root: Path = ROOT) -> int:
    """Run the probe: the chapters, then the sweeps' spot checks; 0 when every output
    holds at its precision."""
    env = probe_environment(root=root)
    started = time.perf_counter()
    print(
        "portable: executing the chapters on the probe's kernels "
        f"(BOOK_NUMERICS=probe) in {env['BOOK_BUILD_DIR']}",
        flush=True,
    )
    chapters = subprocess.run(
        [sys.executable, "-m", "bookbuild", "check"], cwd=root, env=env
    ).returncode
    print(
        "portable: re-running each sweep's cheapest smoke job on the probe's kernels",
        flush=True,
    )
    call = (
        "import sys; from bookbuild.gate import portable; "
        "sys.exit(portable.spot_checks())"
    )
    records = subprocess.run([sys.executable, "-c", call], cwd=root, env=env).returncode
    elapsed = time.perf_counter() - started
    if chapters or records:
        what = " and ".join(
            w
            for w, rc in (("chapter outputs", chapters), ("sweep records", records))
            if rc
        )
        print(
            f"\ncheck-portable FAILED ({elapsed:.0f} s): {what} moved beyond their "
            f"declared precision on the probe's kernels.\n{ADVICE}",
            file=sys.stderr,
        )
        return 1
    print(
        "check-portable: every chapter output and sweep spot check holds on the "
        f"probe's kernels ({elapsed:.0f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
