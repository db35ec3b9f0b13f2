"""``make watch``: rebuild on save and reload the browser, for authors
(sphinx-autobuild).

sphinx-autobuild (installed on demand from ``requirements/watch.txt`` into
``_build/watch-tools``, outside the book's environment) serves
``_build/html`` on 127.0.0.1 and watches the checkout. Two of its parts are
replaced here, through the names its ``main`` looks up:

- its builder (:class:`Rebuild`): every rebuild runs ``make book``'s own
  command, ``python -m bookbuild build`` (the pages' source is read first and a
  mistake there stops it in about a second, :mod:`bookbuild.lint.source`; the
  engine executes what is stale, reusing every memoized run; the build report
  and the claims appendix are written; then Jupyter Book). The watch and ``make book``
  share one Sphinx configuration, one doctree environment and one output folder by
  construction, so after a watch session ``make book`` has nothing to redo;
- its ignore filter (:class:`SettledFilter`): a change counts only where a
  file's content differs from the content last seen. A rebuild writes into the
  checkout (the engine touches the page it executed so that Sphinx re-reads
  it; the build report is written through a temporary file in ``book/``;
  bytecode is recompiled into ``__pycache__``); none of that changes what an
  author wrote, so one save is one rebuild.

The browser reloads once the rebuild is done.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from bookbuild.build import BUILD_DIR, HTML_DIR, ROOT

#: where ``make watch`` installs sphinx-autobuild (``pip --target``): outside the book's
#: environment, so that ``.venv`` holds exactly the locked packages
TOOLS_DIR = BUILD_DIR / "watch-tools"
#: written by the build itself: watching them would rebuild forever
GENERATED = ["book/checked.md", "book/build-report.md"]
#: what a rebuild cannot change: tests, records of measurements, tool folders
IGNORED = [
    "tests",
    "baselines",
    "benchmarks",
    "mutation",
    ".ci",
    "data",
    "*.lock",
    "*.partial",
    "*.pyc",
]
#: what every build writes beside the sources (regular expressions on the absolute
#: path): bytecode, which Python writes through a temporary ``NAME.pyc.<number>``;
#: bookbuild.files' atomic writes (``.NAME.<random>.tmp``)
BUILD_WRITES = [r"/__pycache__(/|$)", r"/\.[^/]+\.tmp$"]


def book_command() -> list[str]:
    """What each rebuild runs: ``make book``'s recipe (``$(PY) -m bookbuild build``),
    with this interpreter."""
    return [sys.executable, "-m", "bookbuild", "build"]


def book_env(
    environ: dict[str, str] | None = None, tools: Path = TOOLS_DIR
) -> dict[str, str]:
    """The environment of a rebuild: this one without the watch tools on ``PYTHONPATH``
    (as ``make book``'s)."""
    env = dict(os.environ if environ is None else environ)
    kept = [
        p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and Path(p) != tools
    ]
    if kept:
        env["PYTHONPATH"] = os.pathsep.join(kept)
    else:
        env.pop("PYTHONPATH", None)
    return env


class Rebuild:
    """sphinx-autobuild's ``Builder``, replaced: a rebuild is ``make book``
    (:func:`book_command`).

    Built by sphinx-autobuild's ``main`` with its Sphinx arguments, which only tell the
    server what to serve and what to ignore: the build reads its configuration as ``make
    book`` does.
    """

    def __init__(
        self,
        sphinx_args: Sequence[str],
        *,
        url_host: str,
        pre_build_commands: Sequence[Sequence[str]],
        post_build_commands: Sequence[Sequence[str]],
    ) -> None:
        self.uri = f"http://{url_host}"

    def __call__(self, *, changed_paths: Sequence[Path]) -> int:
        if changed_paths:
            names = [
                p.relative_to(ROOT).as_posix() if p.is_relative_to(ROOT) else str(p)
                for p in changed_paths
            ]
            _say(
                "Detected changes "
                f"({', '.join(names[:5])}{', ...' if len(names) > 5 else ''})"
            )
        _say("Rebuilding: " + " ".join(["python", *book_command()[1:]]))
        code = subprocess.run(book_command(), cwd=ROOT, env=book_env()).returncode
        if code:
            print(
                f"watch: the rebuild failed (exit {code}, above); the browser keeps "
                "the last pages that built. Fix it and save again.",
                file=sys.stderr,
            )
        _say(f"Serving on {self.uri}")
        return code


def _say(text: str) -> None:
    """One line in sphinx-autobuild's own style (plain where it is not installed)."""
    try:
        from sphinx_autobuild.utils import show_message
    except ImportError:
        print(f"[sphinx-autobuild] {text}", flush=True)
    else:
        show_message(text)


def _digest(path: str) -> bytes | None:
    """The content's digest of the file at ``path``; None where there is none (gone, or
    a folder)."""
    try:
        with open(path, "rb") as handle:
            return hashlib.file_digest(handle, "blake2b").digest()
    except OSError:  # gone, a folder, unreadable
        return None


class SettledFilter:
    """sphinx-autobuild's ``IgnoreFilter`` (same arguments, same matching), plus: a
    change counts only where the file's content differs from the content last seen, so
    that a touch, a rewrite of the same bytes, or a file that came and went between two
    rebuilds count for nothing. What it has seen starts as the content of every watched
    file under ``root``, read when the filter is made (before the first build)."""

    def __init__(
        self,
        regular: Iterable[str | os.PathLike[str]],
        regex_based: Iterable[str],
        root: Path = ROOT,
    ) -> None:
        self.regular = list(
            dict.fromkeys(Path(p).resolve().as_posix() for p in regular)
        )
        self.regexes = [
            re.compile(r) for r in dict.fromkeys([*regex_based, *BUILD_WRITES])
        ]
        self.seen: dict[str, bytes | None] = {}
        for folder, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if not self.ignored(os.path.join(folder, d))]
            for name in names:
                path = Path(folder, name).resolve().as_posix()
                if not self.ignored(path):
                    self.seen[path] = _digest(path)

    def __repr__(self) -> str:
        return (
            f"SettledFilter(regular={self.regular!r}, regex_based={self.regexes!r}, "
            f"{len(self.seen)} files seen)"
        )

    def ignored(self, filename: str) -> bool:
        """Whether ``filename`` is never watched: sphinx-autobuild's own rule (a path
        under or matching a pattern of ``regular``, or one a regular expression
        finds)."""
        path = Path(filename).resolve().as_posix()
        return any(
            path.startswith(f"{p}/") or fnmatch.fnmatch(path, p) for p in self.regular
        ) or any(r.search(path) for r in self.regexes)

    def __call__(self, filename: str, /) -> bool:
        """Whether the change to ``filename`` is ignored (sphinx-autobuild rebuilds for
        any it does not ignore)."""
        if self.ignored(filename):
            return True
        path = Path(filename).resolve().as_posix()
        now = _digest(path)
        if self.seen.get(path) == now:
            return True
        self.seen[path] = now
        return False


def arguments(port: int = 8000, root: Path = ROOT) -> list[str]:
    """sphinx-autobuild's command-line arguments for ``make watch``: what to watch,
    serve and ignore."""
    build_dir = root / BUILD_DIR.relative_to(ROOT)
    html = root / HTML_DIR.relative_to(ROOT)
    args = [
        str(root),
        str(html),
        "-d",
        str(build_dir / ".doctrees"),
        "--port",
        str(port),
        "--host",
        "127.0.0.1",
    ]
    for pattern in [
        *(str(root / g) for g in GENERATED),
        *(str(root / i) for i in IGNORED),
        str(build_dir),
    ]:
        args += ["--ignore", pattern]
    return args


def serve(port: int, root: Path = ROOT) -> int:
    """Run sphinx-autobuild's server with :class:`Rebuild` and :class:`SettledFilter` in
    place of its own."""
    from sphinx_autobuild import __main__ as autobuild

    autobuild.Builder = Rebuild
    autobuild.IgnoreFilter = functools.partial(SettledFilter, root=root)
    autobuild.main(arguments(port, root))
    return 0


def use_tools(tools: Path = TOOLS_DIR) -> None:
    """Put the watch tools on this process's path and on its children's (the server's
    workers)."""
    if tools.is_dir() and str(tools) not in sys.path:
        # after .venv's own packages: the tools never shadow the book's
        sys.path.append(str(tools))
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (os.environ.get("PYTHONPATH"), str(tools)) if p
        )


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something already listens on ``host:port`` (checked by binding it, as the
    server would)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


def main(argv: list[str]) -> int:
    port = int(argv[0]) if argv else int(os.environ.get("PORT", "8000"))
    # before building anything: the server would die on it after the first build
    if port_in_use(port):
        print(
            f"watch: port {port} on 127.0.0.1 is already in use (another `make watch` "
            "or `make serve`?); stop it, or choose another: make watch "
            f"PORT={port + 1}",
            file=sys.stderr,
        )
        return 2
    use_tools()
    try:
        import sphinx_autobuild  # noqa: F401
    except ImportError:
        print(
            "watch: sphinx-autobuild is not installed; run `make watch` (it installs "
            f"requirements/watch.txt into {TOOLS_DIR.relative_to(ROOT)}, outside "
            ".venv)",
            file=sys.stderr,
        )
        return 2
    print(
        f"watch: serving http://127.0.0.1:{port}/ ; save a page or a listing to "
        "rebuild (each rebuild is `make book`); Ctrl-C stops"
    )
    return serve(port)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
