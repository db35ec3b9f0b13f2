"""Tests for bookbuild.build: which pages a one-chapter build needs, and the command
line's errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from bookbuild import __main__ as cli
from bookbuild import build


def write_pages(root: Path) -> None:
    (root / "book").mkdir()
    (root / "_toc.yml").write_text(
        "format: jb-book\nroot: book/intro\nparts:\n  - caption: "
        "Chapters\n    chapters:\n"
        "      - file: book/one\n      - file: book/two\n      - file: book/three\n"
        "  - caption: Reference\n    chapters:\n      - file: book/glossary\n"
    )
    (root / "book" / "intro.md").write_text("(intro)=\n# Intro\nSee {ref}`chap-one`.\n")
    (root / "book" / "one.md").write_text(
        "(chap-one)=\n# One\n```{math}\n:label: eq-one\nx\n```\n"
    )
    (root / "book" / "two.md").write_text(
        "# Two\nAs in {eq}`eq-one` and {numref}`Figure {number} <fig-three>`.\n"
    )
    (root / "book" / "three.md").write_text(
        "# Three\n```{figure} x.png\n:name: fig-three\n```\n"
    )
    (root / "book" / "glossary.md").write_text("# Glossary\n")


def test_only_build_includes_every_page_its_references_need(tmp_path: Path) -> None:
    write_pages(tmp_path)
    assert build.pages_needed(tmp_path, ["book/two"]) == [
        "book/intro",
        "book/one",
        "book/two",
        "book/three",
        "book/glossary",
    ]
    assert build.pages_needed(tmp_path, ["book/three"]) == [
        "book/intro",
        "book/one",
        "book/three",
        "book/glossary",
    ]


def test_only_build_of_an_unknown_page_is_a_named_error(
    capsys: pytest.CaptureFixture,
) -> None:
    assert cli.main(["build", "--only", "book/nonesuch"]) == 2
    assert "--only: no such page book/nonesuch.md" in capsys.readouterr().err


def test_a_build_with_book_build_dir_builds_a_copy_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []
    monkeypatch.setattr(
        build,
        "build_elsewhere",
        lambda builder, check: calls.append((builder, check)) or 0,
    )
    monkeypatch.setenv("BOOK_BUILD_DIR", str(tmp_path))
    assert cli.main(["build", "--check"]) == 0
    # the copy's build: tests/bookbuild/test_build_only.py
    assert calls == [("html", True)]


# --- the PDF beside the HTML (`bookbuild build --pdf-after CMD`, what make test runs)
# ---------------------------

#: A stand-in for `jupyter-book build ... --path-output OUT`: writes
#: OUT/_build/latex/book.{pdf,tex,log}, then exits with the code in $FAKE_JB_EXIT (after
#: $FAKE_JB_SLEEP seconds); with FAKE_JB_NO_PDF set it writes no PDF.
FAKE_JUPYTER_BOOK = r"""
import os, sys, time
from pathlib import Path
out = Path(sys.argv[sys.argv.index("--path-output") + 1]) / "_build" / "latex"
if os.environ.get("FAKE_JB_CHILD"):  # a child of its own, as Sphinx starts latexmk and xelatex
    import subprocess
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    Path(os.environ["FAKE_JB_CHILD"]).write_text(str(child.pid))
time.sleep(float(os.environ.get("FAKE_JB_SLEEP", "0")))
out.mkdir(parents=True, exist_ok=True)
for suffix in ("tex", "log") if os.environ.get("FAKE_JB_NO_PDF") else ("pdf", "tex", "log"):
    (out / f"book.{suffix}").write_text(f"fake {suffix}")
print("fake jupyter-book ran")
sys.exit(int(os.environ.get("FAKE_JB_EXIT", "0")))
"""  # noqa: E501  (a script's source)


@pytest.fixture
def side(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """build.SidePdf with its folders under tmp_path and a fake Jupyter Book; call it
    with the ready command."""
    import sys

    script = tmp_path / "fake_jb.py"
    script.write_text(FAKE_JUPYTER_BOOK)
    monkeypatch.setattr(
        build,
        "jupyter_book_command",
        lambda builder: [sys.executable, str(script), builder],
    )
    monkeypatch.setattr(build.SidePdf, "LOG", tmp_path / "pdf.log")
    monkeypatch.setattr(build.SidePdf, "OUTPUT", tmp_path / "pdf-side")
    monkeypatch.setattr(build.SidePdf, "PDF", tmp_path / "latex" / "book.pdf")

    def make(ready: str, **env: str) -> build.SidePdf:
        return build.SidePdf(ready, {**__import__("os").environ, **env})

    return make


def test_the_side_pdf_builds_after_its_ready_command_and_lands_where_make_pdf_puts_it(
    side, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    pdf = side("echo ready-said-this")
    pdf.start()
    assert pdf.finish() == 0
    pdf.stop()
    assert (tmp_path / "latex" / "book.pdf").read_text() == "fake pdf"
    # the PDF tests read the log and the .tex
    assert (tmp_path / "latex" / "book.log").read_text() == "fake log"
    assert (tmp_path / "latex" / "book.tex").is_file()
    log = (tmp_path / "pdf.log").read_text()
    assert "ready-said-this" in log
    assert "fake jupyter-book ran" in log


def test_no_tex_live_is_a_note_and_no_pdf(
    side, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    pdf = side(f"exit {build.SidePdf.NO_TEX}")
    pdf.start()
    assert pdf.finish() == 0
    assert "no TeX Live here" in capsys.readouterr().out
    assert not (tmp_path / "latex").exists()
    assert not (tmp_path / "pdf-side").exists()


@pytest.mark.parametrize(
    ("ready", "env", "message"),
    [
        ("exit 1", {}, "`exit 1` exited 1"),
        ("true", {"FAKE_JB_EXIT": "2"}, "fake jupyter-book ran"),
        ("true", {"FAKE_JB_NO_PDF": "1"}, "exited 0 but wrote no"),
    ],
    ids=["ready-failed", "jupyter-book-failed", "no-pdf-written"],
)
def test_a_failed_side_pdf_fails_with_its_log(
    side,
    tmp_path: Path,
    capsys: pytest.CaptureFixture,
    ready: str,  # type: ignore[no-untyped-def]
    env: dict[str, str],
    message: str,
) -> None:
    pdf = side(ready, **env)
    pdf.start()
    assert pdf.finish() != 0
    assert message in capsys.readouterr().err
    assert not (tmp_path / "latex" / "book.pdf").exists()


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (ended, not yet reaped by its parent) has ended too
    status = Path(f"/proc/{pid}/status")
    return not (status.is_file() and "\nState:\tZ" in status.read_text())


def _wait_for(condition, seconds: float = 20.0) -> bool:  # type: ignore[no-untyped-def]
    import time

    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return bool(condition())


def test_a_failed_html_build_ends_the_pdf_build_left_running_with_its_children(
    side, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    import time

    child_pid = tmp_path / "child.pid"
    pdf = side("true", FAKE_JB_SLEEP="60", FAKE_JB_CHILD=str(child_pid))
    pdf.start()
    assert _wait_for(lambda: child_pid.is_file() and child_pid.read_text()), (
        "the fake Jupyter Book never started"
    )
    started = time.monotonic()
    pdf.stop()
    assert time.monotonic() - started < 10
    assert pdf.proc.poll() is not None
    assert _wait_for(lambda: not _alive(int(child_pid.read_text())), 5), (
        "Jupyter Book's child outlived stop()"
    )
    assert not (tmp_path / "latex" / "book.pdf").exists()


def test_a_failed_html_build_ends_the_wait_for_the_set_up(side, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import time

    waiting = tmp_path / "waiting.pid"
    pdf = side(f"sleep 60 & echo $! > {waiting}; wait")
    pdf.start()
    assert _wait_for(lambda: waiting.is_file() and waiting.read_text().strip()), (
        "the ready command never started"
    )
    started = time.monotonic()
    pdf.stop()
    assert time.monotonic() - started < 10
    assert not pdf.thread.is_alive()
    assert _wait_for(lambda: not _alive(int(waiting.read_text())), 5), (
        "the ready command's child outlived stop()"
    )
    assert pdf.proc is None  # Jupyter Book never started
    assert not (tmp_path / "pdf-side").exists()


def test_pdf_after_is_refused_where_it_cannot_build_beside_the_html(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    assert cli.main(["build", "--pdf-after", "true", "--builder", "pdflatex"]) == 2
    assert cli.main(["build", "--pdf-after", "true", "--only", "book/gradients"]) == 2
    err = capsys.readouterr().err
    assert "got --builder pdflatex" in err
    assert "got --only" in err
    monkeypatch.setenv("BOOK_BUILD_DIR", str(tmp_path))
    assert cli.main(["build", "--pdf-after", "true"]) == 2
    assert "BOOK_BUILD_DIR" in capsys.readouterr().err


@pytest.mark.parametrize("pdf_code", [0, 2], ids=["pdf-built", "pdf-failed"])
def test_a_failed_side_pdf_fails_the_build_after_its_checks_and_is_never_published(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, pdf_code: int
) -> None:
    from bookbuild import gate

    monkeypatch.delenv("BOOK_BUILD_DIR", raising=False)
    monkeypatch.setattr(gate, "run_and_check", lambda root: ([], "cpu-test"))
    monkeypatch.setattr(gate, "claim_pages", lambda root, checks: [])
    monkeypatch.setattr(gate, "write_report", lambda *args: None)
    monkeypatch.setattr(gate, "failures_text", lambda checks: "")
    monkeypatch.setattr(gate, "figure_overlaps", lambda root, checks: [])
    monkeypatch.setattr(build, "_render", lambda builder, env: 0)
    published = []

    class FakeSide:
        LOG = build.SidePdf.LOG

        def __init__(self, ready: str, env: dict) -> None:
            pass

        def start(self) -> None:
            pass

        def finish(self) -> int:
            return pdf_code

        def stop(self) -> None:
            pass

        def publish(self) -> None:
            published.append(True)

    monkeypatch.setattr(build, "SidePdf", FakeSide)
    assert build.build("html", pdf_after="true") == pdf_code
    captured = capsys.readouterr()
    if pdf_code:
        assert "the PDF beside it did not build" in captured.err
        assert "Build succeeded" not in captured.out
        assert published == []
    else:
        assert "Build succeeded" in captured.out
        assert published == [True]


def test_a_pdf_build_that_did_not_finish_leaves_no_cut_latex_file_to_the_next(
    side, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    latex = tmp_path / "pdf-side" / "_build" / "latex"
    child_pid = tmp_path / "child.pid"
    stopped = side("true", FAKE_JB_SLEEP="60", FAKE_JB_CHILD=str(child_pid))
    stopped.start()
    assert _wait_for(lambda: child_pid.is_file() and child_pid.read_text()), (
        "the fake Jupyter Book never started"
    )
    stopped.stop()  # the HTML failed: the PDF build is ended part-way
    latex.mkdir(parents=True, exist_ok=True)
    # cut short, as xelatex leaves it when killed
    (latex / "book.aux").write_text("\\newlabel{sec-one}{{1}")
    again = side("true")
    again.start()
    assert again.finish() == 0
    assert not (latex / "book.aux").exists()  # the LaTeX folder began afresh
    assert (latex / "book.pdf").is_file()
    assert not (tmp_path / "pdf-side" / "_build" / "latex.unfinished").exists()


def test_a_finished_pdf_build_keeps_its_latex_folder_for_the_next(
    side, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    latex = tmp_path / "pdf-side" / "_build" / "latex"
    first = side("true")
    first.start()
    assert first.finish() == 0
    # what the next xelatex run starts from
    (latex / "book.aux").write_text("\\newlabel{sec-one}{{1}{1}}\n")
    second = side("true")
    second.start()
    assert second.finish() == 0
    assert (latex / "book.aux").is_file()


def test_a_failed_pdf_build_is_started_afresh_next_time(side, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    latex = tmp_path / "pdf-side" / "_build" / "latex"
    failed = side("true", FAKE_JB_EXIT="1")
    failed.start()
    assert failed.finish() != 0
    assert (tmp_path / "pdf-side" / "_build" / "latex.unfinished").exists()
    (latex / "book.aux").write_text("\\newlabel{sec-one}{{1}")
    again = side("true")
    again.start()
    assert again.finish() == 0
    assert not (latex / "book.aux").exists()


def test_make_pdf_starts_its_latex_folder_afresh_after_a_build_that_did_not_finish(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bookbuild import gate

    monkeypatch.delenv("BOOK_BUILD_DIR", raising=False)
    monkeypatch.setattr(build, "BUILD_DIR", tmp_path)
    monkeypatch.setattr(gate, "run_and_check", lambda root: ([], "cpu-test"))
    monkeypatch.setattr(gate, "claim_pages", lambda root, checks: [])
    monkeypatch.setattr(gate, "write_report", lambda *args: None)
    monkeypatch.setattr(gate, "failures_text", lambda checks: "")
    monkeypatch.setattr(build, "_verdicts", lambda *args, **kwargs: 0)
    latex = tmp_path / "latex"
    codes = iter([1, 0, 0])  # an xelatex that failed, then two that succeeded

    def render(builder: str, env: dict) -> int:
        latex.mkdir(exist_ok=True)
        seen.append(sorted(p.name for p in latex.iterdir()))
        (latex / "book.aux").write_text("\\newlabel{sec-one}{{1}")
        return next(codes)

    seen: list[list[str]] = []
    monkeypatch.setattr(build, "_render", render)
    build.build("pdflatex")  # fails, leaving its cut book.aux and the mark
    assert (tmp_path / "latex.unfinished").exists()
    build.build("pdflatex")  # starts afresh, succeeds
    assert not (tmp_path / "latex.unfinished").exists()
    build.build("pdflatex")  # keeps what the last successful build left
    assert seen == [[], [], ["book.aux"]]


def test_make_book_notes_the_typed_numbers_that_make_check_will_refuse(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """`make book` (no --check) still publishes, but names each typed number at once, as
    `make check` would."""
    from bookbuild import gate
    from bookbuild.lint import prose

    monkeypatch.setattr(gate, "figure_overlaps", lambda root, checks: [])
    monkeypatch.setattr(
        prose,
        "check_pages",
        lambda root: ["book/a.md:7: the number '12' is typed into the prose"],
    )
    monkeypatch.setattr(build, "HTML_DIR", build.ROOT / "_build" / "no-such-html")
    build._verdicts("html", False, [], "cpu-test", 0, 1.0)
    out = capsys.readouterr().out
    assert "Note: 1 number(s) typed by hand" in out
    assert "book/a.md:7: the number '12' is typed into the prose" in out
    monkeypatch.setattr(prose, "check_pages", lambda root: [])
    build._verdicts("html", False, [], "cpu-test", 0, 1.0)
    assert "typed by hand" not in capsys.readouterr().out
