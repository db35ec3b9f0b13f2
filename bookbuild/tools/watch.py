"""``make watch``: rebuild on save and reload the browser, for authors (sphinx-autobuild).

sphinx-autobuild (installed on demand from ``requirements/watch.txt`` into
``_build/watch-tools``, outside the book's environment) serves
``_build/html`` on 127.0.0.1, watches the checkout and, on every save, runs
this module's :func:`prepare` (the engine executes what is stale, reusing every
memoized run; the build report and the claims appendix are written; a claim
without its check stops there) and then Sphinx with the same configuration,
doctrees and output folder as ``make book``, so the two share their work. The
browser reloads once the page is rebuilt.

The Sphinx configuration is jupyter-book's own, from ``_config.yml`` and
``_toc.yml``, written to ``_build/watch/conf.py`` (never into the checkout).
Files the build itself writes (the generated pages, ``_build/``) are not
watched, so a rebuild does not start another.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from pathlib import Path

from bookbuild.build import BUILD_DIR, HTML_DIR, ROOT

CONF_DIR = BUILD_DIR / "watch"
#: where ``make watch`` installs sphinx-autobuild (``pip --target``): outside the book's environment, so that
#: ``.venv`` holds exactly the locked packages
TOOLS_DIR = BUILD_DIR / "watch-tools"
#: configuration values that name files relative to the book
PATHS = ["bibtex_bibfiles", "html_static_path", "templates_path"]
#: written by the build itself: watching them would rebuild forever
GENERATED = ["book/checked.md", "book/build-report.md"]
#: what a rebuild cannot change: tests, records of measurements, tool folders
IGNORED = ["tests", "baselines", "benchmarks", "mutation", ".ci", "data", "*.lock", "*.partial", "*.pyc"]


def sphinx_config(root: Path = ROOT) -> dict:
    """The Sphinx configuration ``jupyter-book build`` uses for this book (nitpicky, the external toc)."""
    from jupyter_book.config import get_final_config

    config, _ = get_final_config(
        user_yaml=root / "_config.yml",
        sourcedir=root,
        cli_config={"external_toc_path": "_toc.yml", "latex_individualpages": False, "nitpicky": True},
    )
    return config


def write_conf(root: Path = ROOT, folder: Path = CONF_DIR) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["# Written by bookbuild.tools.watch from _config.yml and _toc.yml; rewritten by every `make watch`."]
    config = sphinx_config(root)
    # Sphinx reads some paths relative to the configuration's folder, which is not the book's here.
    for key in PATHS:
        value = config.get(key)
        if isinstance(value, str) and value:
            config[key] = str(root / value)
        elif isinstance(value, list):
            config[key] = [str(root / v) for v in value]
    lines += [f"{key} = {value!r}" for key, value in sorted(config.items())]
    conf = folder / "conf.py"
    conf.write_text("\n".join(lines) + "\n")
    return conf


def command(port: int = 8000, root: Path = ROOT) -> list[str]:
    """The sphinx-autobuild command line ``make watch`` runs."""
    python = sys.executable
    args = [python, "-m", "sphinx_autobuild", str(root), str(HTML_DIR), "-c", str(CONF_DIR),
            "-d", str(BUILD_DIR / ".doctrees"), "-b", "html", "-n", "--keep-going", "--port", str(port),
            "--host", "127.0.0.1", "--pre-build", shlex.join([python, "-m", "bookbuild.tools.watch", "prepare"])]
    for pattern in [*(str(root / g) for g in GENERATED), *(str(root / i) for i in IGNORED), str(BUILD_DIR)]:
        args += ["--ignore", pattern]
    return args


def prepare() -> int:
    """What ``make book`` does before Sphinx: execute what is stale, write the report and the appendix."""
    from bookbuild import gate
    from bookbuild.execute import engine
    from bookbuild.files import checkout_lock

    started = time.perf_counter()
    BUILD_DIR.mkdir(exist_ok=True)
    with checkout_lock(engine.engine_dir(engine.ROOT), "make watch"):
        checks, profile = gate.run_and_check(ROOT)
        pages = gate.claim_pages(ROOT, checks)
        gate.write_report(ROOT, checks, profile, pages)
    failed = gate.failures_text(checks)
    if failed:
        print(f"watch: a chapter did not produce usable outputs; the page keeps its last build.\n{failed}",
              file=sys.stderr)
        return 1
    if gate.claims_verdict(pages):
        print("watch: a claim and its check do not pair (above); fix it and save again", file=sys.stderr)
        return 1
    if gate.references_verdict(checks):
        print("watch: the text cites a value or lacks an alt text its cells do not provide (above); fix it and "
              "save again", file=sys.stderr)
        return 1
    diffs = sum(len(c.differences) for c in checks)
    note = f"; {diffs} output(s) differ from baselines/{profile}/ (see the build report)" if diffs else ""
    print(f"watch: chapters ready in {time.perf_counter() - started:.1f} s{note}")
    return 0


def use_tools(tools: Path = TOOLS_DIR) -> None:
    """Put the watch tools on this process's path and on its children's (the server and each rebuild)."""
    if tools.is_dir() and str(tools) not in sys.path:
        sys.path.append(str(tools))  # after .venv's own packages: the tools never shadow the book's
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(tools)) if p)


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something already listens on ``host:port`` (checked by binding it, as the server would)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


def main(argv: list[str]) -> int:
    if argv[:1] == ["prepare"]:
        return prepare()
    port = int(argv[0]) if argv else int(os.environ.get("PORT", "8000"))
    if port_in_use(port):  # before building anything: the server would die on it after the first build
        print(f"watch: port {port} on 127.0.0.1 is already in use (another `make watch` or `make serve`?); "
              f"stop it, or choose another: make watch PORT={port + 1}", file=sys.stderr)
        return 2
    use_tools()
    try:
        import sphinx_autobuild  # noqa: F401
    except ImportError:
        print(f"watch: sphinx-autobuild is not installed; run `make watch` (it installs requirements/watch.txt "
              f"into {TOOLS_DIR.relative_to(ROOT)}, outside .venv)", file=sys.stderr)
        return 2
    write_conf()
    print(f"watch: serving http://127.0.0.1:{port}/ ; save a page or a listing to rebuild; Ctrl-C stops")
    os.execv(sys.executable, command(port))
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
