"""``make watch`` (bookbuild/tools/watch.py): each rebuild is ``make book``'s own
command, so the two share one Sphinx configuration and one doctree environment; one save
is one rebuild, whatever the rebuild writes into the checkout; the port is checked
before anything is built; the tools stay out of the book's environment."""

from __future__ import annotations

import fnmatch
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bookbuild import files
from bookbuild.execute import bytecode
from bookbuild.tools import watch

#: What a real rebuild wrote outside ``_build/`` after one save of a page with code
#: (``book/building.md``), read from ``SPHINX_AUTOBUILD_DEBUG=1 make watch``
#: (sphinx-autobuild prints every path that changed; the random part of a temporary name
#: replaced by RANDOM): the engine touches the page it executed (so that Sphinx re-reads
#: it), and the build report is rewritten through a temporary file beside it. Each
#: started a further rebuild (three per save) before the watch compared contents.
OBSERVED = [
    "book/building.md",
    "book/.build-report.md.RANDOM.tmp",
    "book/build-report.md",
]


def book(root: Path) -> Path:
    """A small checkout: a page, the build report, a listing with its bytecode."""
    (root / "book").mkdir(parents=True)
    (root / "book" / "building.md").write_text(
        "# A page\n\n```{code-cell} ipython3\nprint(1)\n```\n"
    )
    (root / "book" / "build-report.md").write_text("# Build report\n\nbuilt at 10:00\n")
    (root / "chapter_code" / "rnn").mkdir(parents=True)
    listing = root / "chapter_code" / "rnn" / "recurrence.py"
    listing.write_text("STEPS = 1\n")
    bytecode.pin(listing, bytecode.pyc_path(listing))
    return root


def settled(root: Path) -> watch.SettledFilter:
    """The filter ``make watch`` gives sphinx-autobuild, for the checkout ``root``:
    sphinx-autobuild's ``main`` makes it from its own ignores, ``--ignore`` arguments,
    output and doctree folders."""
    args = watch.arguments(port=8000, root=root)
    regular = [
        root / ".git",
        root / ".venv",
        *(args[i + 1] for i, a in enumerate(args) if a == "--ignore"),
        args[1],
        args[args.index("-d") + 1],
    ]
    return watch.SettledFilter(regular, [], root=root)


def what_a_rebuild_writes(root: Path) -> list[Path]:
    """Replay, with the build's own writers, what a rebuild writes into the checkout
    after a save of the page and of the listing; the paths that changed, temporary ones
    included, in the order they changed."""
    page, report = root / "book" / "building.md", root / "book" / "build-report.md"
    listing = root / "chapter_code" / "rnn" / "recurrence.py"
    changed = []
    # bookbuild/execute/engine.py, after executing the page: Sphinx must re-read it
    os.utime(page)
    changed.append(page)
    real_replace = os.replace

    def replace(src, dst):  # type: ignore[no-untyped-def]
        changed.extend([Path(src), Path(dst)])
        return real_replace(src, dst)

    # bookbuild.files writes through a temporary file, then replaces
    os.replace = replace
    try:
        # gate.write_report
        files.write_text(report, "# Build report\n\nbuilt at 10:01\n")
    finally:
        os.replace = real_replace
    pyc = bytecode.pyc_path(listing)
    # bytecode.prepare, before the kernels start: through NAME.pyc.<number>
    bytecode.pin(listing, pyc)
    changed += [pyc.with_name(f"{pyc.name}.{id(pyc)}"), pyc]
    return changed


def test_what_a_rebuild_writes_starts_no_second_rebuild(tmp_path) -> None:  # type: ignore[no-untyped-def]
    root = book(tmp_path / "book")
    ignore = settled(root)
    # the author saves the page and the listing: each counts
    (root / "book" / "building.md").write_text(
        "# A page\n\n```{code-cell} ipython3\nprint(2)\n```\n"
    )
    (root / "chapter_code" / "rnn" / "recurrence.py").write_text("STEPS = 2\n")
    assert not ignore(str(root / "book" / "building.md"))
    assert not ignore(str(root / "chapter_code" / "rnn" / "recurrence.py"))
    # what the rebuild then writes, and what a real rebuild was seen to write: none
    # counts
    written = what_a_rebuild_writes(root)
    for name in OBSERVED:
        written.append(root / name.replace("RANDOM", "k2v0x9aq"))
    counted = [p.relative_to(root).as_posix() for p in written if not ignore(str(p))]
    assert counted == [], (
        f"a rebuild's own writes would start another rebuild: {counted}"
    )
    # while sphinx-autobuild's own rule (its IgnoreFilter: the same patterns, no
    # contents) counts them
    plain = [
        p.relative_to(root).as_posix()
        for p in written
        if not any(
            str(p).startswith(f"{r}/") or fnmatch.fnmatch(str(p), r)
            for r in ignore.regular
        )
    ]
    assert {"book/building.md", "book/.build-report.md.k2v0x9aq.tmp"} <= set(plain)


def test_what_counts_is_a_change_of_content(tmp_path) -> None:  # type: ignore[no-untyped-def]
    root = book(tmp_path / "book")
    ignore = settled(root)
    page = root / "book" / "building.md"
    page.write_text(page.read_text())  # saved without an edit
    assert ignore(str(page))
    page.write_text(page.read_text() + "\nA new sentence.\n")
    assert not ignore(str(page))
    # the same change seen twice (two events of one save) is one rebuild
    assert ignore(str(page))
    new = root / "book" / "new.md"
    new.write_text("# New\n")
    assert not ignore(str(new))
    new.unlink()
    assert not ignore(str(new))  # a page removed
    # a file that came and went between two rebuilds
    gone = root / "book" / "scratch.md"
    assert ignore(str(gone))
    for kept_out in [
        "_build/html/index.html",
        "tests/test_x.py",
        "book/checked.md",
        ".git/index",
    ]:
        assert ignore(str(root / kept_out)), kept_out


def test_one_save_is_one_rebuild_under_a_real_watcher(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The same, through watchfiles itself (sphinx-autobuild's watcher), where ``make
    watch`` installed it."""
    watch.use_tools()
    watchfiles = pytest.importorskip(
        "watchfiles", reason="make watch installs watchfiles into _build/watch-tools"
    )
    root = book(tmp_path / "book")
    ignore = settled(root)
    batches: list[set[str]] = []
    stop = threading.Event()

    def watcher() -> None:
        for changes in watchfiles.watch(
            root,
            watch_filter=lambda _, p: not ignore(p),
            stop_event=stop,
            debounce=300,
            step=20,
            rust_timeout=100,
            yield_on_timeout=False,
        ):
            batches.append({Path(p).relative_to(root).as_posix() for _, p in changes})

    thread = threading.Thread(target=watcher, daemon=True)
    thread.start()
    time.sleep(0.5)
    (root / "book" / "building.md").write_text(
        "# A page\n\n```{code-cell} ipython3\nprint(3)\n```\n"
    )
    deadline = time.monotonic() + 10
    while not batches and time.monotonic() < deadline:
        time.sleep(0.05)
    assert batches == [{"book/building.md"}]  # the save: one rebuild starts
    what_a_rebuild_writes(root)  # which writes this into the checkout
    time.sleep(1.5)
    stop.set()
    thread.join(timeout=5)
    assert batches == [{"book/building.md"}], (
        f"a rebuild's own writes started another: {batches[1:]}"
    )


#: ``make watch``'s server (:func:`watch.serve`) on a small checkout, each rebuild
#: replaced by a stub that counts itself and then writes what a real rebuild writes
#: (:func:`what_a_rebuild_writes`)
SERVER = """
import sys
from pathlib import Path
from bookbuild.tools import watch
root, port, count = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
stub = ("import sys; from pathlib import Path; from tests.bookbuild.test_watch import what_a_rebuild_writes; "
        "open(sys.argv[2], 'a').write('rebuild' + chr(10)); what_a_rebuild_writes(Path(sys.argv[1]))")
watch.book_command = lambda: [sys.executable, "-c", stub, str(root), count]
watch.use_tools()
sys.exit(watch.serve(port, root))
"""  # noqa: E501  (a script's source)


def test_one_save_is_one_rebuild_of_make_watch_s_own_server(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """sphinx-autobuild itself, with the builder and filter make watch puts in its
    place: a save, then the writes of the rebuild it starts, must make one rebuild
    (before, each save made three). About 10 s."""
    watch.use_tools()
    pytest.importorskip(
        "sphinx_autobuild",
        reason="make watch installs sphinx-autobuild into _build/watch-tools",
    )
    import socket
    import urllib.request

    root = book(tmp_path / "book")
    (root / "_build" / "html").mkdir(parents=True)
    (root / "_build" / "html" / "index.html").write_text(
        "<html><body>book</body></html>"
    )
    count = tmp_path / "rebuilds.txt"
    count.write_text("")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(watch.ROOT)}
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(root), str(port), str(count)],
        cwd=watch.ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )

    def rebuilds(at_least: int, within: float) -> int:
        deadline = time.monotonic() + within
        while (
            len(count.read_text().splitlines()) < at_least
            and time.monotonic() < deadline
        ):
            time.sleep(0.1)
        return len(count.read_text().splitlines())

    try:
        assert rebuilds(1, 30) == 1  # the initial build
        deadline = time.monotonic() + 30
        while True:  # the server is up once it answers (its watcher starts with it)
            try:
                urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/index.html", timeout=1
                ).close()
                break
            except OSError:
                assert server.poll() is None, "the server stopped"
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.2)
        time.sleep(1)
        (root / "book" / "building.md").write_text(
            "# A page\n\n```{code-cell} ipython3\nprint(4)\n```\n"
        )
        assert rebuilds(2, 30) == 2  # the save
        # the rebuild's own writes reach the watcher after it (debounced 1.6 s)
        time.sleep(6)
        assert rebuilds(3, 0) == 2, "the rebuild's own writes started another rebuild"
    finally:
        server.terminate()
        try:
            out = server.communicate(timeout=10)[0]
        except subprocess.TimeoutExpired:
            server.kill()
            out = server.communicate()[0]
    assert "Rebuilding" in out


def test_a_rebuild_is_make_book_s_own_command(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """So the watch and ``make book`` share their Sphinx configuration and doctree
    environment by construction: a watch session used to leave an environment whose
    ``external_toc_path`` (a relative path, against jupyter-book's absolute one) made
    the next ``make book`` re-read all 13 pages (95 s)."""
    makefile = (watch.ROOT / "Makefile").read_text()
    recipe = re.search(r"\nbook: .*\n\t(.*)\n", makefile)
    assert recipe is not None
    assert recipe.group(1) == "$(PY) -m bookbuild build"
    assert watch.book_command() == [sys.executable, "-m", "bookbuild", "build"]
    ran = []

    def run(cmd, **kwargs):  # type: ignore[no-untyped-def]
        ran.append((cmd, kwargs))
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(subprocess, "run", run)
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(["/elsewhere", str(watch.TOOLS_DIR)])
    )
    # whatever Sphinx arguments sphinx-autobuild hands its builder, the rebuild is make
    # book's command
    rebuild = watch.Rebuild(
        ["-c", "_build/watch", "-D", "nitpicky=0"],
        url_host="127.0.0.1:8000",
        pre_build_commands=[],
        post_build_commands=[],
    )
    assert rebuild(changed_paths=[watch.ROOT / "book" / "intro.md"]) == 0
    [(cmd, kwargs)] = ran
    assert cmd == watch.book_command()
    assert kwargs["cwd"] == watch.ROOT
    # the watch tools stay out of the build
    assert kwargs["env"]["PYTHONPATH"] == "/elsewhere"


def test_sphinx_autobuild_is_given_what_to_serve_and_ignore() -> None:
    args = watch.arguments(port=8123)
    ignored = {args[i + 1] for i, a in enumerate(args) if a == "--ignore"}
    for generated in watch.GENERATED:
        assert str(watch.ROOT / generated) in ignored
    assert str(watch.BUILD_DIR) in ignored
    assert args[:2] == [str(watch.ROOT), str(watch.HTML_DIR)]
    assert args[args.index("--port") + 1] == "8123"
    assert args[args.index("--host") + 1] == "127.0.0.1"
    # make book's (ignored)
    assert args[args.index("-d") + 1] == str(watch.BUILD_DIR / ".doctrees")


def test_the_replaced_parts_are_where_sphinx_autobuild_looks_them_up() -> None:
    watch.use_tools()
    autobuild = pytest.importorskip(
        "sphinx_autobuild.__main__", reason="make watch installs sphinx-autobuild"
    )
    import inspect

    source = inspect.getsource(autobuild.main)
    assert "Builder(" in source
    assert "IgnoreFilter(" in source
    assert re.search(
        r"Builder\(\s*build_args,\s*url_host=url_host,\s*pre_build_commands=", source
    )


def test_without_sphinx_autobuild_it_says_how_to_get_it(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    import builtins

    real = builtins.__import__

    def no_autobuild(name, *args, **kwargs):  # type: ignore[no-untyped-def]
        if name == "sphinx_autobuild":
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_autobuild)
    monkeypatch.setattr(watch, "port_in_use", lambda port: False)
    assert watch.main(["8000"]) == 2
    assert "make watch" in capsys.readouterr().err


def test_a_port_in_use_stops_make_watch_before_it_builds_anything(
    capsys, monkeypatch
) -> None:
    import socket

    monkeypatch.setattr(
        watch, "serve", lambda port: pytest.fail("nothing is built or served first")
    )
    monkeypatch.setattr(
        watch, "use_tools", lambda: pytest.fail("nothing is set up first")
    )
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert watch.port_in_use(port)
        assert watch.main([str(port)]) == 2
    err = capsys.readouterr().err
    assert f"watch: port {port} on 127.0.0.1 is already in use" in err
    assert f"make watch PORT={port + 1}" in err


def test_the_watch_tools_stay_out_of_the_book_s_environment(
    tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    makefile = (watch.ROOT / "Makefile").read_text()
    recipe = makefile[makefile.index("\nwatch:") : makefile.index("\nMODULE ?=")]
    assert "--target $(WATCH_TOOLS)" in recipe  # never into .venv
    assert "--no-deps" in recipe  # requirements/watch.txt pins every dependency itself
    assert "WATCH_TOOLS := _build/watch-tools" in makefile
    assert watch.TOOLS_DIR == watch.BUILD_DIR / "watch-tools"
    # a tools folder is put on the path after the environment's own packages, for this
    # process and its children
    tools = tmp_path / "watch-tools"
    (tools / "only_in_tools").mkdir(parents=True)
    (tools / "only_in_tools" / "__init__.py").write_text("WHERE = 'tools'\n")
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("PYTHONPATH", "")
    watch.use_tools(tools)
    assert sys.path[-1] == str(tools)
    child = subprocess.run(
        [sys.executable, "-c", "import only_in_tools; print(only_in_tools.WHERE)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert child.stdout.strip() == "tools"
    # and not on the rebuild's (make book's) path
    assert "PYTHONPATH" not in watch.book_env(tools=tools)
    # and the book's environment itself holds no sphinx-autobuild (it is no locked
    # package)
    lock = (watch.ROOT / "requirements" / "lock.txt").read_text().lower()
    assert "sphinx-autobuild" not in lock
