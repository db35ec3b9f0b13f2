"""Command line: ``python -m bookbuild {build,check,accept,run,clean,serve}``."""

from __future__ import annotations

import argparse
import sys

from bookbuild import build


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bookbuild", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="execute every chapter and build the HTML book (warnings are errors)")
    b.add_argument("--builder", default="html", choices=["html", "pdflatex", "latex"])
    b.add_argument(
        "--only", nargs="+", metavar="PAGE", help="build only these pages (e.g. book/gradients) in a private copy"
    )
    sub.add_parser("check", help="execute what is stale and compare every output with its baseline")
    a = sub.add_parser("accept", help="record the current outputs as the new baselines (never under CI)")
    a.add_argument("--only", nargs="+", metavar="PAGE", help="accept only these pages (e.g. book/gradients)")
    bench = sub.add_parser("bench", help="time cold build, no-change rebuild, prose-only and one-listing edits")
    bench.add_argument("--show", action="store_true", help="print the stored measurements instead")
    sub.add_parser("clean", help="remove _build/, including the execution cache")
    s = sub.add_parser("serve", help="serve the built book on 127.0.0.1")
    s.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    if args.command == "build":
        return build.build_only(args.only) if args.only else build.build(args.builder)
    if args.command == "check":
        from bookbuild import gate

        return gate.check()
    if args.command == "accept":
        from bookbuild import gate

        return gate.accept(only=args.only)
    if args.command == "bench":
        from bookbuild import bench as bench_mod

        return bench_mod.main(show=args.show)
    if args.command == "clean":
        return build.clean()
    return build.serve(args.port)


if __name__ == "__main__":
    sys.exit(main())
