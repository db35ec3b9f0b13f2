"""``make watch``: the Sphinx configuration is jupyter-book's own, written outside the checkout, and the
watcher ignores what the build itself writes (bookbuild/tools/watch.py)."""

from __future__ import annotations

import runpy

from bookbuild.tools import watch


def test_the_configuration_is_the_one_jupyter_book_builds_with(tmp_path) -> None:  # type: ignore[no-untyped-def]
    conf = watch.write_conf(folder=tmp_path / "watch")
    assert conf.parent == tmp_path / "watch"
    values = runpy.run_path(str(conf))
    for extension in ("myst_nb", "bookbuild.lint.claims", "bookbuild.site.provenance", "bookbuild.site",
                      "sphinx_external_toc"):
        assert extension in values["extensions"], extension
    assert values["external_toc_path"] == "_toc.yml"
    assert values["nitpicky"] is True
    book = watch.ROOT / "book"
    # not under _build/watch
    assert values["bibtex_bibfiles"] == [str(book / "references.bib"), str(book / "sources.bib")]
    assert values["nb_execution_mode"] == watch.sphinx_config()["nb_execution_mode"]


def test_the_watcher_ignores_what_a_rebuild_writes() -> None:
    args = watch.command(port=8123)
    ignored = {args[i + 1] for i, a in enumerate(args) if a == "--ignore"}
    for generated in watch.GENERATED:
        assert str(watch.ROOT / generated) in ignored
    assert str(watch.BUILD_DIR) in ignored
    assert args[args.index("--port") + 1] == "8123"
    assert args[args.index("--host") + 1] == "127.0.0.1"
    assert args[args.index("-d") + 1] == str(watch.BUILD_DIR / ".doctrees")  # shared with `make book`
    assert args[args.index("--pre-build") + 1].endswith("-m bookbuild.tools.watch prepare")


def test_without_sphinx_autobuild_it_says_how_to_get_it(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    import builtins

    real = builtins.__import__

    def no_autobuild(name, *args, **kwargs):  # type: ignore[no-untyped-def]
        if name == "sphinx_autobuild":
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_autobuild)
    assert watch.main(["8000"]) == 2
    assert "make watch" in capsys.readouterr().err


def test_a_port_in_use_stops_make_watch_before_it_builds_anything(capsys, monkeypatch) -> None:
    import socket

    import pytest

    monkeypatch.setattr(watch, "write_conf", lambda: pytest.fail("nothing is built or written first"))
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert watch.port_in_use(port)
        assert watch.main([str(port)]) == 2
    err = capsys.readouterr().err
    assert f"watch: port {port} on 127.0.0.1 is already in use" in err
    assert f"make watch PORT={port + 1}" in err


def test_the_watch_tools_stay_out_of_the_book_s_environment(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import subprocess
    import sys

    makefile = (watch.ROOT / "Makefile").read_text()
    recipe = makefile[makefile.index("\nwatch:"):makefile.index("\nMODULE ?=")]
    assert "--target $(WATCH_TOOLS)" in recipe  # never into .venv
    assert "--no-deps" in recipe  # requirements/watch.txt pins every dependency itself
    assert "WATCH_TOOLS := _build/watch-tools" in makefile
    assert watch.TOOLS_DIR == watch.BUILD_DIR / "watch-tools"
    # a tools folder is put on the path after the environment's own packages, for this process and its children
    tools = tmp_path / "watch-tools"
    (tools / "only_in_tools").mkdir(parents=True)
    (tools / "only_in_tools" / "__init__.py").write_text("WHERE = 'tools'\n")
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("PYTHONPATH", "")
    watch.use_tools(tools)
    assert sys.path[-1] == str(tools)
    child = subprocess.run([sys.executable, "-c", "import only_in_tools; print(only_in_tools.WHERE)"],
                           capture_output=True, text=True, check=True)
    assert child.stdout.strip() == "tools"
    # and the book's environment itself holds no sphinx-autobuild (it is no locked package)
    lock = (watch.ROOT / "requirements" / "lock.txt").read_text().lower()
    assert "sphinx-autobuild" not in lock
