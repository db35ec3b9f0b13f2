"""Command line: ``python -m bookbuild
{build,check,portable,accept,bench,clean,serve,experiments,gpu-run}``.

Commands that execute chapters hold the checkout's build lock, so two of them
started in one checkout run one after the other. A problem the user can fix
(a bad setting, a read-only checkout) ends in one message and exit status 2;
Ctrl-C stops the running chapters and exits with 130.
"""

from __future__ import annotations

import argparse
import sys

from bookbuild import build
from bookbuild.files import UserError, checkout_lock


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bookbuild", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser(
        "build",
        help="execute every chapter and build the HTML book (warnings are errors)",
    )
    b.add_argument("--builder", default="html", choices=["html", "pdflatex", "latex"])
    b.add_argument(
        "--only",
        nargs="+",
        metavar="PAGE",
        help="build only these pages (e.g. book/gradients) in a private copy",
    )
    b.add_argument(
        "--check",
        action="store_true",
        help="also fail when an output differs from its baseline",
    )
    b.add_argument(
        "--pdf-after",
        metavar="CMD",
        help="also build the PDF beside the HTML, once every chapter has executed "
        "and CMD has exited 0 "
        "(exit 3: no TeX Live here, no PDF); what make test runs",
    )
    sub.add_parser(
        "check", help="execute what is stale and compare every output with its baseline"
    )
    sub.add_parser(
        "portable",
        help="the fragility probe: the chapters and the sweeps' spot checks once "
        "more on "
        "another CPU's kernels, compared at each output's declared precision "
        "(bookbuild.gate.portable)",
    )
    a = sub.add_parser(
        "accept",
        help="record the current outputs as the new baselines (never under CI)",
    )
    a.add_argument(
        "--only",
        nargs="+",
        metavar="PAGE",
        help="accept only these pages (e.g. book/gradients)",
    )
    bench = sub.add_parser(
        "bench",
        help="time the authors' loop (no change, prose, a figure cell, a listing) side "
        "by side with a plain Jupyter Book build of the same pages",
    )
    bench.add_argument(
        "--show", action="store_true", help="print the stored measurements instead"
    )
    bench.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="readings of each step (medians; default 3)",
    )
    sub.add_parser("clean", help="remove _build/, including the execution cache")
    s = sub.add_parser("serve", help="serve the built book on 127.0.0.1")
    s.add_argument("--port", type=int, default=8000)
    g = sub.add_parser(
        "gpu-run",
        help="the GPU build in one command: environment, every chapter on CUDA, "
        "baselines, the scale study's gpu sweep; everything into OUT "
        "(bookbuild.tools.gpu_run)",
    )
    g.add_argument(
        "out", help="the folder that receives everything that must come back"
    )
    g.add_argument(
        "--dry-run", action="store_true", help="the same steps at toy size on the CPU"
    )
    _add_experiments(sub)
    args = parser.parse_args(argv)
    try:
        return _dispatch(args)
    except UserError as exc:
        print(f"{parser.prog} {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{parser.prog} {args.command}: interrupted", file=sys.stderr)
        return 130


def _add_experiments(sub: argparse._SubParsersAction) -> None:
    """``experiments {list,status,run,check,seal}``: sweeps as jobs with stored records
    (bookbuild.runs.sweeps)."""
    e = sub.add_parser(
        "experiments",
        help="run experiment sweeps as jobs and check their records (records/)",
    )
    actions = e.add_subparsers(dest="action", required=True)
    actions.add_parser("list", help="the defined sweeps and their configurations")
    for action, text in [
        ("status", "which records are fresh, stale or missing"),
        ("run", "run the jobs whose record is missing or stale"),
        (
            "check",
            "re-run the cheapest record and compare its metrics with the stored ones",
        ),
        (
            "seal",
            "add its record_sha256 to every committed record written before records "
            "carried one",
        ),
    ]:
        p = actions.add_parser(action, help=text)
        p.add_argument("name", help="the sweep (see `experiments list`)")
        p.add_argument(
            "--config",
            default="cpu",
            help="the sweep's configuration: cpu (default), cluster, smoke...",
        )
        if action in ("status", "run", "check"):
            p.add_argument(
                "--device",
                choices=["cpu", "cuda"],
                default=None,
                help="cuda: the GPU's own record set of a configuration re-run per "
                "device (book-runs, "
                "book-grid, smoke); default: where the configuration's resources say",
            )
        if action == "run":
            p.add_argument(
                "--cluster",
                default="local",
                choices=["local", "slurm", "debug"],
                help="local: submitit's local executor, one job per core (or GPU); "
                "slurm: submitit's "
                "Slurm executor; debug: one job after another in this process",
            )
            p.add_argument(
                "--force", action="store_true", help="re-run fresh records too"
            )
            p.add_argument("--limit", type=int, help="run at most this many jobs")
            p.add_argument(
                "--workers",
                type=int,
                help="jobs at once on the local executor (default: cores or GPUs)",
            )
            p.add_argument(
                "--partition",
                help="Slurm partition (default: the sweep's, else the cluster's "
                "default)",
            )


def _dispatch(args: argparse.Namespace) -> int:
    from bookbuild.execute import engine

    if args.command == "experiments":
        from bookbuild.runs import sweeps

        return sweeps.cli(args)

    if args.command in ("build", "check", "accept"):
        # a bad BOOK_* setting: one line and exit 2, before any lock, kernel or build
        engine.book_settings()
    if args.command == "build":
        if args.pdf_after and (args.builder != "html" or args.only):
            given = "--only" if args.only else f"--builder {args.builder}"
            raise UserError(
                "--pdf-after builds the PDF beside the whole HTML book (--builder "
                f"html, no --only); got {given}"
            )
        if args.pdf_after:
            build.refuse_pdf_after_elsewhere()
        if args.only:
            return build.build_only(args.only)
        with checkout_lock(engine.engine_dir(engine.ROOT), "make book"):
            return build.build(args.builder, check=args.check, pdf_after=args.pdf_after)
    if args.command in ("check", "accept"):
        from bookbuild import gate

        # before waiting for any lock
        if args.command == "accept" and gate.ci_environment():
            return gate.accept()
        with checkout_lock(engine.engine_dir(engine.ROOT), f"make {args.command}"):
            return (
                gate.check() if args.command == "check" else gate.accept(only=args.only)
            )
    if args.command == "portable":
        from bookbuild.gate import portable

        return portable.main()
    if args.command == "bench":
        from bookbuild.tools import bench as bench_mod

        if args.repeats < 1:
            raise UserError(f"--repeats must be at least 1; got {args.repeats}")
        return bench_mod.main(show=args.show, repeats=args.repeats)
    if args.command == "clean":
        return build.clean()
    if args.command == "gpu-run":
        from bookbuild.tools import gpu_run

        return gpu_run.main([args.out, *(["--dry-run"] if args.dry_run else [])])
    return build.serve(args.port)


if __name__ == "__main__":
    from bookbuild.execute import machine_facts

    # The command keeps what torch tells of the machine; main() called in a process of
    # its own caller (a test that fakes a GPU in PyTorch) measures it each time.
    with machine_facts.kept():
        sys.exit(main())
