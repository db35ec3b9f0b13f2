"""Tests for bookbuild.execute.engine: a chapter re-executes exactly when something it
depends on changed.

Each test builds a one-chapter fixture book in a temporary folder with its own
tiny ``chapter_code`` package and data file, and runs the real engine on it
(real kernels, so each execution costs a couple of seconds).
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from bookbuild.execute import engine

#: One worker (make test: --dist loadgroup): the executed fixture book (a session
#: fixture) is made once.
pytestmark = pytest.mark.xdist_group("engine")

CHAPTER = """\
---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A fixture chapter

{prose}

```{{code-cell}} ipython3
:label: compute
from pathlib import Path

from chapter_code.tiny import double

print(double(int(Path("../data/number.txt").read_text())))
```
"""


def write_book(root: Path, prose: str = "Some prose.") -> None:
    (root / "book").mkdir(exist_ok=True)
    (root / "chapter_code").mkdir(exist_ok=True)
    (root / "data").mkdir(exist_ok=True)
    (root / "requirements").mkdir(exist_ok=True)
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/ch\n")
    (root / "book" / "ch.md").write_text(CHAPTER.format(prose=prose))
    (root / "chapter_code" / "__init__.py").write_text("")
    (root / "chapter_code" / "tiny.py").write_text("def double(x):\n    return 2 * x\n")
    (root / "data" / "number.txt").write_text("21\n")
    (root / "requirements" / "lock.txt").write_text("somepackage==1.0\n")


def printed(root: Path) -> str:
    nb = engine.rendered_notebook(root, "book/ch")
    code = next(c for c in nb.cells if c.cell_type == "code")
    return "".join(o.get("text", "") for o in code.outputs)


@pytest.fixture(scope="session")
def executed_book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture book, executed once per test process (one kernel, a few seconds):
    :func:`book` copies it."""
    root = tmp_path_factory.mktemp("executed-book")
    write_book(root)
    (first,) = engine.run(root)
    assert first.status == "executed", first.error
    assert printed(root) == "42\n"
    return root


@pytest.fixture
def book(tmp_path: Path, executed_book: Path) -> Path:
    """A fresh copy of the executed fixture book (sources, execution cache and manifest,
    times kept): the copy is a cache hit as it stands, which the test checks before
    handing it over."""
    shutil.copytree(executed_book, tmp_path, dirs_exist_ok=True)
    (again,) = engine.run(tmp_path)
    assert again.status == "hit", (
        f"the copied book is not a cache hit: {again.status} ({again.reason})"
    )
    assert printed(tmp_path) == "42\n"
    return tmp_path


def test_a_page_read_again_is_an_equal_fresh_copy_and_an_edit_is_always_seen(
    tmp_path: Path,
) -> None:
    page = tmp_path / "ch.md"
    head = "---\nkernelspec:\n  name: python3\n  display_name: Python 3\n---\n\n"
    page.write_text(head + "```{code-cell} ipython3\nx = 1\n```\n")
    first = engine.read_notebook(page)
    first.cells[0].source = "changed by a caller"
    second = engine.read_notebook(page)
    # the memo handed out a copy, not its own notebook
    assert second.cells[0].source == "x = 1"
    page.write_text(head + "```{code-cell} ipython3\nx = 2\n```\n")
    assert engine.read_notebook(page).cells[0].source == "x = 2"


def test_first_run_traces_module_and_data_dependencies(book: Path) -> None:
    entry = engine.load_manifest(book)["book/ch"]
    # the fixture chapter never calls runtime.setup()
    assert entry["fingerprint"] is None
    deps = entry["dependencies"]
    assert "chapter_code/tiny.py" in deps
    assert "data/number.txt" in deps


def test_nothing_changed_executes_nothing(book: Path) -> None:
    (again,) = engine.run(book)
    assert again.status == "hit"


def test_prose_only_edit_executes_nothing_and_outputs_stay_available_to_myst_nb(
    book: Path,
) -> None:
    write_book(book, prose="Rewritten prose, and a second sentence.")
    (again,) = engine.run(book)
    assert again.status == "hit"
    assert "Rewritten prose" in str(
        engine.rendered_notebook(book, "book/ch").cells[0].source
    )
    assert printed(book) == "42\n"


def test_code_cell_edit_reexecutes(book: Path) -> None:
    path = book / "book" / "ch.md"
    path.write_text(path.read_text().replace("print(double(", "print(1 + double("))
    (again,) = engine.run(book)
    assert (again.status, again.reason) == ("executed", "code cells changed")
    assert printed(book) == "43\n"


def test_caption_alt_and_label_edits_execute_nothing_but_a_tag_does(book: Path) -> None:
    """A figure's caption, its alt text and a cell's label are read as the page renders
    (bookbuild.execute.cachekey)."""
    path = book / "book" / "ch.md"
    original = path.read_text()
    path.write_text(
        original.replace(
            ":label: compute\n",
            ":label: compute-renamed\n:mystnb:\n:  figure:\n"
            ":    caption: a caption\n:  image:\n:    alt: an alt text\n",
        )
    )
    (again,) = engine.run(book)
    assert again.status == "hit"
    # myst-nb finds the stored outputs for the edited page
    assert printed(book) == "42\n"
    nb = engine.rendered_notebook(book, "book/ch")
    code = next(c for c in nb.cells if c.cell_type == "code")
    # the page's metadata, not the stored one
    assert code.metadata["mystnb"]["figure"]["caption"] == "a caption"
    path.write_text(
        original.replace(
            ":label: compute\n", ":label: compute\n:tags: [raises-exception]\n"
        )
    )
    (tagged,) = engine.run(book)
    assert (tagged.status, tagged.reason) == ("executed", "code cells changed")


def test_imported_module_edit_reexecutes(book: Path) -> None:
    (book / "chapter_code" / "tiny.py").write_text(
        "def double(x):\n    return x + x + 1\n"
    )
    (again,) = engine.run(book)
    assert again.status == "executed"
    assert "chapter_code/tiny.py" in again.reason
    assert printed(book) == "43\n"


def test_data_file_edit_reexecutes(book: Path) -> None:
    (book / "data" / "number.txt").write_text("5\n")
    (again,) = engine.run(book)
    assert again.status == "executed"
    assert "data/number.txt" in again.reason
    assert printed(book) == "10\n"


def test_lock_file_edit_reexecutes(book: Path) -> None:
    (book / "requirements" / "lock.txt").write_text("somepackage==1.1\n")
    (again,) = engine.run(book)
    assert (again.status, again.reason) == ("executed", "locked dependencies changed")


def test_device_profile_change_reexecutes(
    book: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = engine.device_profile()
    monkeypatch.setattr(engine, "device_profile", lambda: "cuda")
    (again,) = engine.run(book)
    assert (again.status, again.reason) == (
        "executed",
        f"device profile {before} -> cuda",
    )


def test_failing_cell_is_named_and_not_cached(tmp_path: Path) -> None:
    write_book(tmp_path)
    path = tmp_path / "book" / "ch.md"
    path.write_text(path.read_text().replace("print(double(", "print(1 / 0, double("))
    (result,) = engine.run(tmp_path)
    assert result.status == "failed"
    assert "book/ch.md: cell 'compute' failed" in result.error
    assert "ZeroDivisionError" in result.error
    with pytest.raises(KeyError):
        engine.rendered_notebook(tmp_path, "book/ch")
    (again,) = engine.run(tmp_path)
    assert (again.status, again.reason) == ("failed", "failed last time")


def test_cell_timeout_names_chapter_and_cell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_book(tmp_path)
    path = tmp_path / "book" / "ch.md"
    slow = textwrap.dedent(
        """
        ```{code-cell} ipython3
        :label: slow-cell
        import time
        time.sleep(120)
        ```
        """
    )
    path.write_text(path.read_text() + slow)
    # The chapter's cells are held to 3 s; the build's own first cell (the kernel's
    # hooks, seconds of imports on a loaded machine) to engine.BUILD_CELL_TIMEOUT, so
    # only the slow cell can time out.
    monkeypatch.setenv("BOOK_CELL_TIMEOUT", "3")
    began = time.monotonic()
    (result,) = engine.run(tmp_path)
    assert result.status == "failed"
    assert (
        "book/ch.md: cell 'slow-cell' ran longer than the 3 s cell timeout"
        in result.error
    )
    # stopped at its timeout, not after its two minutes
    assert time.monotonic() - began < 60


def test_workers_are_bounded_by_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine.os, "cpu_count", lambda: 16)
    assert engine.workers(2) == 8
    assert engine.workers(32) == 1
    monkeypatch.setattr(engine.os, "cpu_count", lambda: 2)
    assert engine.workers(2) == 1


def test_chapters_start_longest_first_by_the_larger_of_their_last_execution_and_the_cold_table() -> (  # noqa: E501  (the test's name)
    None
):
    names = ["book/a", "book/b", "book/c", "book/d", "book/e", "book/f"]
    manifest = {
        "book/b": {"wall_s": 12.5},
        "book/d": {"wall_s": 300.0},
        "book/e": {"status": "failed"},
        "book/f": {"wall_s": 75.0},
    }
    # b last ran in 12.5 s with its trainings reused, but retrains in 999: the table
    # places it; f outgrew its entry
    cold = {"book/a": 50, "book/b": 999, "book/c": 100, "book/f": 20}
    order = engine.execution_order(names, manifest, cold)
    assert order == ["book/b", "book/d", "book/c", "book/f", "book/a", "book/e"]


def test_with_no_history_the_cold_table_orders_and_ties_keep_the_toc_order() -> None:
    names = ["book/intro", "book/x", "book/y", "book/gated", "book/z"]
    order = engine.execution_order(names, {}, {"book/gated": 445, "book/intro": 7})
    assert order == ["book/gated", "book/intro", "book/x", "book/y", "book/z"]
    assert engine.execution_order([], {}, {}) == []
    assert engine.execution_order(
        ["book/q"], {"book/q": {"wall_s": "n/a"}}, {"book/q": 3}
    ) == ["book/q"]


def test_a_fresh_clone_starts_the_longest_cold_chapters_first_and_the_table_covers_every_chapter() -> (  # noqa: E501  (the test's name)
    None
):
    names = engine.chapters(engine.ROOT)
    assert set(names) <= set(engine.COLD_SECONDS), (
        "give a new chapter its cold time in engine.COLD_SECONDS"
    )
    order = engine.execution_order(names, {})
    # Since Chapters 4, 6 and 7 read every training from sweep records (2026-12-03 and
    # 12-04), Chapter 3, with the one run a build trains itself, and Chapter 4, with its
    # measurements of the recorded models, are the longest.
    assert order[:2] == ["book/gated", "book/language-models"]
    assert order == sorted(names, key=lambda c: -engine.COLD_SECONDS[c])


def test_run_submits_the_stale_chapters_longest_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_book(tmp_path)
    source = (tmp_path / "book" / "ch.md").read_text()
    for name in ("short", "long"):
        (tmp_path / "book" / f"{name}.md").write_text(source)
    toc = (
        "format: jb-book\nroot: book/ch\nparts:\n  - chapters:\n      - file: "
        "book/short\n      - file: book/long\n"
    )
    (tmp_path / "_toc.yml").write_text(toc)
    submitted: list[str] = []

    def record(root, to_run, *args):  # noqa: ANN001, ANN202 - stands in for _execute_all: no kernels
        submitted.extend(c for c, _, _ in to_run)
        raise KeyboardInterrupt

    monkeypatch.setattr(engine, "_execute_all", record)
    monkeypatch.setattr(
        engine, "COLD_SECONDS", {"book/long": 60, "book/short": 1, "book/ch": 5}
    )
    with pytest.raises(KeyboardInterrupt):
        engine.run(tmp_path)
    assert submitted == ["book/long", "book/ch", "book/short"]


# ----------------------------------------------------------- the gate's trust (issue 8)


def add_cell(root: Path, label: str, source: str, options: str = "") -> None:
    path = root / "book" / "ch.md"
    cell = f"\n```{{code-cell}} ipython3\n:label: {label}\n{options}{source}\n```\n"
    path.write_text(path.read_text() + cell)


@pytest.mark.skipif(
    not __import__("chapter_code.core.runtime").core.numerics.cpu_supports_pins(),
    reason="this CPU cannot run the pinned AVX2 kernels",
)
def test_kernel_computes_on_the_pinned_cpu_kernels_even_if_torch_is_imported_first(
    tmp_path: Path,
) -> None:
    write_book(tmp_path)
    add_cell(
        tmp_path,
        "pins",
        "import os, torch\nprint(torch.backends.cpu.get_cpu_capability(), "
        "os.environ['ONEDNN_MAX_CPU_ISA'], os.environ['MKL_CBWR'])",
    )
    (result,) = engine.run(tmp_path)
    assert result.status == "executed", result.error
    outputs = [
        c
        for c in engine.rendered_notebook(tmp_path, "book/ch").cells
        if c.cell_type == "code"
    ][1].outputs
    assert outputs[0]["text"] == "AVX2 AVX2 AVX2,STRICT\n"


def test_a_file_the_chapter_writes_is_an_output_not_a_dependency(
    tmp_path: Path,
) -> None:
    write_book(tmp_path)
    add_cell(
        tmp_path,
        "writes",
        "open('../data/made.txt', 'w').write('made "
        "here')\nprint(open('../data/made.txt').read())",
    )
    (result,) = engine.run(tmp_path)
    assert result.status == "executed", result.error
    assert "data/made.txt" not in result.dependencies


def test_a_dependency_changed_by_another_process_during_execution_is_stale(
    tmp_path: Path,
) -> None:
    write_book(tmp_path)
    # A second process (standing in for the author's editor) edits the module while the
    # chapter runs.
    add_cell(
        tmp_path,
        "editor",
        "import subprocess, sys\n"
        "subprocess.run([sys.executable, '-c', \"import pathlib; p = "
        "pathlib.Path('../chapter_code/tiny.py'); "
        "p.write_text(p.read_text() + '# edited\\\\n')\"], check=True)",
    )
    (result,) = engine.run(tmp_path)
    assert result.status == "stale"
    assert (
        "chapter_code/tiny.py changed while the chapter was executing" in result.error
    )
    with pytest.raises(KeyError):
        engine.rendered_notebook(tmp_path, "book/ch")
    (again,) = engine.run(tmp_path)
    assert again.reason == "stale last time"


def test_seed_and_threads_are_part_of_the_key(
    book: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BOOK_SEED", "3")
    (again,) = engine.run(book)
    assert again.status == "executed"
    assert again.reason == "settings changed: BOOK_SEED '0' -> '3'"
    monkeypatch.setenv("BOOK_THREADS", "2")
    (again,) = engine.run(book)
    assert again.reason == "settings changed: BOOK_THREADS '1' -> '2'"
    (again,) = engine.run(book)
    assert again.status == "hit"


def test_harmless_spellings_of_the_settings_reuse_the_outputs(
    book: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chapter_code.core import runtime

    # a CPU machine, as the book was built
    monkeypatch.setattr(runtime.torch.cuda, "is_available", lambda: False)
    for name, value in [
        ("BOOK_DEVICE", " CPU "),
        ("BOOK_DEVICE", "cpu"),
        ("BOOK_SEED", "0"),
        ("BOOK_THREADS", " 1"),
    ]:
        monkeypatch.setenv(name, value)
        (again,) = engine.run(book)
        assert (again.status, again.reason) == ("hit", "unchanged"), f"{name}={value!r}"


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("BOOK_SEED", "abc", "BOOK_SEED must be an integer >= 0; got 'abc'"),
        ("BOOK_THREADS", "0", "BOOK_THREADS must be an integer >= 1; got 0"),
        ("BOOK_THREADS", "x", "BOOK_THREADS must be an integer >= 1; got 'x'"),
        (
            "BOOK_DEVICE",
            "gpu",
            "BOOK_DEVICE must be 'cpu', 'cuda' or 'cuda:N'; got 'gpu'",
        ),
        (
            "BOOK_DEVICE",
            "cuda",
            "BOOK_DEVICE='cuda' asks for CUDA, but this PyTorch build sees no CUDA "
            "device; unset BOOK_DEVICE or set it to 'cpu'",
        ),
    ],
)
def test_bad_settings_are_refused_before_any_kernel_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str, message: str
) -> None:
    import re

    from bookbuild.files import UserError
    from chapter_code.core import runtime

    write_book(tmp_path)
    monkeypatch.setattr(runtime.torch.cuda, "is_available", lambda: False)
    monkeypatch.setenv(name, value)
    with pytest.raises(UserError, match="^" + re.escape(message) + "$"):
        engine.run(tmp_path)
    # no kernel was started
    assert not (engine.engine_dir(tmp_path) / "kernels").exists()
    assert not engine.manifest_path(tmp_path).exists()


def test_any_file_read_inside_the_repository_and_listed_folders_are_tracked(
    tmp_path: Path,
) -> None:
    write_book(tmp_path)
    (tmp_path / "chapter_code" / "style.txt").write_text("blue\n")
    add_cell(
        tmp_path,
        "style",
        "import os\nprint(open('../chapter_code/style.txt').read().strip(), "
        "sorted(os.listdir('../data')))",
    )
    (first,) = engine.run(tmp_path)
    assert first.status == "executed", first.error
    assert {"chapter_code/style.txt", "data/"} <= set(first.dependencies)
    # the import system's own lookups are not the chapter's
    assert "chapter_code/" not in first.dependencies
    (tmp_path / "chapter_code" / "style.txt").write_text("red\n")
    (again,) = engine.run(tmp_path)
    assert again.reason == "changed: chapter_code/style.txt"
    (tmp_path / "data" / "another.txt").write_text("x\n")
    (again,) = engine.run(tmp_path)
    assert again.reason == "changed: data/"
    (tmp_path / "chapter_code" / "unrelated.py").write_text("x = 1\n")
    (again,) = engine.run(tmp_path)
    assert again.status == "hit"


def test_cached_outputs_edited_or_deleted_behind_the_engine_are_recomputed(
    book: Path,
) -> None:
    cache = engine.jupyter_cache_dir(book)
    (cached,) = list(cache.glob("executed/*/base.ipynb"))
    cached.write_text(cached.read_text().replace('"42\\n"', '"41\\n"'))
    (again,) = engine.run(book)
    assert (again.status, again.reason) == (
        "executed",
        "cached outputs were modified after execution",
    )
    assert printed(book) == "42\n"
    for path in cache.glob("executed/*/base.ipynb"):
        path.unlink()
    (again,) = engine.run(book)
    assert again.status == "executed"
    assert printed(book) == "42\n"


def test_corrupt_manifest_is_reported_and_everything_reexecutes(
    book: Path, capsys: pytest.CaptureFixture
) -> None:
    engine.manifest_path(book).write_text('{"book/ch": {"code": ')
    (again,) = engine.run(book)
    assert (again.status, again.reason) == ("executed", "never executed")
    assert "manifest" in capsys.readouterr().err


def test_missing_label_fails_before_any_execution(tmp_path: Path) -> None:
    write_book(tmp_path)
    path = tmp_path / "book" / "ch.md"
    path.write_text(
        path.read_text().replace(":label: compute\n", "") + "\nMore prose.\n"
    )
    (result,) = engine.run(tmp_path)
    assert result.status == "failed"
    assert result.wall_s == 0.0
    assert (
        "book/ch.md: code cell #1 (starting `from pathlib import Path`) has "
        "no ':label:'" in result.error
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (":tolerance: 1e-3\n", "':tolerance:' must be a mapping"),
        (
            ":tolerance: {rtoll: 1e-3}\n",
            "accepts the keys rtol, atol, image, lines and reason; got 'rtoll'",
        ),
        (":tolerance: {rtol: -1}\n", "rtol must be a number >= 0"),
        (
            ":tolerence: {rtol: 1e-3}\n",
            "unknown option ':tolerence:'; did you mean ':tolerance:'?",
        ),
        (":volatile: maybe\n", "':volatile:' must be true or false"),
    ],
)
def test_bad_cell_options_are_named_before_execution(
    tmp_path: Path, options: str, message: str
) -> None:
    write_book(tmp_path)
    add_cell(tmp_path, "opts", "print(1)", options)
    (result,) = engine.run(tmp_path)
    assert result.status == "failed"
    assert "cell 'opts'" in result.error
    assert message in result.error


def test_bad_timeout_setting_is_a_named_user_error(
    book: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bookbuild.files import UserError

    monkeypatch.setenv("BOOK_CELL_TIMEOUT", "abc")
    with pytest.raises(
        UserError, match=r"BOOK_CELL_TIMEOUT must be a whole number >= 1; got 'abc'"
    ):
        engine.run(book)


def test_long_cells_report_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture
) -> None:
    write_book(tmp_path)
    add_cell(tmp_path, "slow-cell", "import time\ntime.sleep(2.5)")
    monkeypatch.setenv("BOOKBUILD_PROGRESS_EVERY", "1")
    (result,) = engine.run(tmp_path)
    assert result.status == "executed"
    out = capfd.readouterr().out
    assert "engine: book/ch: cell 'slow-cell' running for" in out
    assert "engine: book/ch: cell 'slow-cell' finished in" in out
    assert "IPKernelApp" not in out


def _engine_process(root: Path) -> subprocess.Popen:
    code = (
        "import sys; from pathlib import Path; from bookbuild.execute import engine; "
        "engine.run(Path(sys.argv[1]))"
    )
    # As from a terminal: SIGINT at its default (a shell starting this test in the
    # background ignores it, and Python then never turns Ctrl-C into KeyboardInterrupt).
    return subprocess.Popen(
        [sys.executable, "-c", code, str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _wait_for(path: Path, seconds: float = 60) -> int:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.2)
    raise AssertionError(f"{path} never appeared")


def _gone(pid: int, seconds: float = 15) -> bool:
    import psutil

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if (
            not psutil.pid_exists(pid)
            or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
        ):
            return True
        time.sleep(0.2)
    return False


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_interrupt_or_kill_leaves_no_kernel_behind(
    tmp_path: Path, sig: signal.Signals
) -> None:
    write_book(tmp_path)
    pid_file = tmp_path / "kernel.pid"
    add_cell(
        tmp_path,
        "hang",
        f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
        "time.sleep(600)",
    )
    proc = _engine_process(tmp_path)
    kernel = _wait_for(pid_file)
    started = time.monotonic()
    proc.send_signal(sig)
    proc.wait(timeout=30)
    assert time.monotonic() - started < 15
    assert _gone(kernel), "the chapter's kernel outlived the engine"
    if sig == signal.SIGINT:
        assert "engine: interrupted; stopped book/ch" in proc.stdout.read()


def test_a_figure_drawn_in_the_kernel_is_recorded_with_its_text_and_data(
    tmp_path: Path,
) -> None:
    from bookbuild.gate import baselines

    write_book(tmp_path)
    add_cell(
        tmp_path,
        "fig",
        "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\n"
        "ax.plot([1, 2, 3], "
        "label='$h_{t-1}$')\nax.set_xlabel('step')\nax.legend()\nplt.show()",
    )
    (result,) = engine.run(tmp_path)
    assert result.status == "executed", result.error
    recs, files_, _ = baselines.extract(
        engine.rendered_notebook(tmp_path, "book/ch"), "book/ch"
    )
    (figure,) = recs["fig"]
    assert "axes 1 legend: $h_{t-1}$" in figure["text"]
    assert "axes 1 x label: step" in figure["text"]
    assert b"[[0.0,1.0],[1.0,2.0],[2.0,3.0]]" in files_["fig-1.json"]


def test_a_host_jax_of_another_version_than_the_lock_changes_the_environment_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "requirements").mkdir()
    pinned = engine.installed_version("jax")
    assert pinned is not None  # the JAX edition is installed with the book
    (tmp_path / "requirements" / "jax.txt").write_text(
        f"jax=={pinned}\njaxlib=={pinned}\n"
    )
    locked = engine.environment_key(tmp_path)
    real = engine.installed_version
    monkeypatch.setattr(
        engine,
        "installed_version",
        lambda name: "9.9.9" if name == "jax" else real(name),
    )
    assert engine.environment_key(tmp_path) != locked
    monkeypatch.setattr(
        engine, "installed_version", lambda name: None if name == "jax" else real(name)
    )
    # no JAX installed: the lock alone counts
    assert engine.environment_key(tmp_path) == locked
    assert engine.installed_version("no-such-package-for-the-book") is None


@pytest.mark.parametrize("damage", [b"garbage " * 64, b""])
def test_a_damaged_execution_cache_is_moved_aside_with_one_message_and_rebuilt(
    book: Path, capsys: pytest.CaptureFixture, damage: bytes
) -> None:
    db = engine.jupyter_cache_dir(book) / "global.db"
    # garbage, or a database cut short
    db.write_bytes(damage if damage else db.read_bytes()[:1024])
    capsys.readouterr()
    (again,) = engine.run(book)
    assert again.status == "executed", again.error
    assert printed(book) == "42\n"
    out = capsys.readouterr()
    messages = [ln for ln in (out.out + out.err).splitlines() if "damaged" in ln]
    assert len(messages) == 1, out
    assert "execution cache" in messages[0]
    assert ".jupyter_cache.damaged" in messages[0]
    assert (engine.jupyter_cache_dir(book).parent / ".jupyter_cache.damaged").is_dir()
    (again,) = engine.run(book)
    assert again.status == "hit"
    assert "damaged" not in capsys.readouterr().out


def with_runtime(root: Path) -> None:
    """Give the fixture book the real ``chapter_code.core.runtime`` (its ``run_once`` is
    the build's memoizer)."""
    import shutil

    from chapter_code.core import runtime

    (root / "chapter_code" / "core").mkdir()
    (root / "chapter_code" / "core" / "__init__.py").write_text("")
    shutil.copy(runtime.__file__, root / "chapter_code" / "core" / "runtime.py")
    # and the chapter_code modules runtime imports: the pins (numerics, machine) and the
    # device setting (BOOK_DEVICE)
    for name in ("numerics.py", "machine.py", "device.py"):
        shutil.copy(
            Path(runtime.__file__).with_name(name),
            root / "chapter_code" / "core" / name,
        )


def cell_text(root: Path, label: str) -> str:
    nb = engine.rendered_notebook(root, "book/ch")
    cell = next(
        c
        for c in nb.cells
        if c.cell_type == "code" and c.metadata.get("label") == label
    )
    return "".join(o.get("text", "") for o in cell.outputs)


def test_a_damaged_memoized_run_is_reported_in_the_build_log_never_in_the_cell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    write_book(tmp_path)
    with_runtime(tmp_path)
    # the memoized runs go there too
    monkeypatch.setenv("BOOK_BUILD_DIR", str(tmp_path / "_build"))
    add_cell(
        tmp_path,
        "memo",
        "from chapter_code.core import runtime\nprint(runtime.run_once(double, x=21))",
    )
    (first,) = engine.run(tmp_path)
    assert first.status == "executed", first.error
    assert [r["outcome"] for r in first.runs] == ["computed"]
    assert cell_text(tmp_path, "memo") == "42\n"
    (stored,) = (tmp_path / "_build" / "runs").glob("*/result.pt")
    stored.write_bytes(b"not a tensor")
    capsys.readouterr()
    (again,) = engine.run(tmp_path, force=True)
    assert again.status == "executed", again.error
    # what the page shows, and the gate compares, is unchanged
    assert cell_text(tmp_path, "memo") == "42\n"
    (note,) = again.notes
    assert note.startswith(f"run_once: the stored run {stored.parent.name} is damaged")
    assert f"engine: book/ch: {note}" in capsys.readouterr().out


def edit_keeping_size_and_mtime(path: Path, old: str, new: str) -> None:
    """Write a stale timestamp ``.pyc`` of ``path``, then edit it as ``cp -p`` / ``touch
    -r`` would leave it."""
    import importlib.util
    import os
    import py_compile

    assert len(old) == len(new)
    py_compile.compile(
        str(path),
        cfile=importlib.util.cache_from_source(str(path)),
        doraise=True,
        invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP,
    )
    stat = path.stat()
    path.write_text(path.read_text().replace(old, new))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (
        stat.st_size,
        stat.st_mtime_ns,
    )


def test_an_edit_that_keeps_size_and_mtime_runs_the_new_code_not_the_old_bytecode(
    book: Path,
) -> None:
    edit_keeping_size_and_mtime(book / "chapter_code" / "tiny.py", "2 * x", "3 * x")
    (again,) = engine.run(book)
    assert again.status == "executed", again.error
    assert printed(book) == "63\n"


def test_progress_names_hidden_cells_by_label_and_the_builds_own_cells_by_what_they_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture
) -> None:
    write_book(tmp_path)
    add_cell(
        tmp_path,
        "hidden-slow",
        "import time\ntime.sleep(2.5)",
        ":tags: [remove-cell]\n",
    )
    monkeypatch.setenv("BOOKBUILD_PROGRESS_EVERY", "1")
    (result,) = engine.run(tmp_path)
    assert result.status == "executed"
    out = capfd.readouterr().out
    assert "engine: book/ch: cell 'hidden-slow' running for" in out
    assert "cell #" not in out


def _by_another_process(code: str) -> str:
    """A cell that runs ``code`` in a second process (an editor): the kernel's trace
    does not see its writes."""
    return (
        f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {code!r}], "
        "check=True)"
    )


def _edit(path: str, old: str, new: str) -> str:
    return _by_another_process(
        f"import pathlib; p = pathlib.Path({path!r}); "
        f"p.write_text(p.read_text().replace({old!r}, {new!r}))"
    )


@pytest.mark.parametrize("target", ["data", "module"])
def test_a_dependency_edited_and_reverted_while_the_chapter_ran_is_stale_not_passed(
    tmp_path: Path, target: str
) -> None:
    write_book(tmp_path)
    path = tmp_path / "book" / "ch.md"
    # edited before the chapter reads it, restored after: same bytes before and after
    # the run
    if target == "data":
        text = path.read_text().replace(
            "```{code-cell} ipython3\n:label: compute\n",
            "```{code-cell} ipython3\n:label: edit\n"
            + _edit("../data/number.txt", "21", "22")
            + "\n```\n\n"
            "```{code-cell} ipython3\n:label: compute\n",
        )
        path.write_text(text)
        add_cell(tmp_path, "revert", _edit("../data/number.txt", "22", "21"))
        dependency = "data/number.txt"
    else:
        (tmp_path / "chapter_code" / "other.py").write_text("VALUE = 1\n")
        add_cell(tmp_path, "edit", _edit("../chapter_code/other.py", "1", "2"))
        add_cell(tmp_path, "use", "from chapter_code.other import VALUE\nprint(VALUE)")
        add_cell(tmp_path, "revert", _edit("../chapter_code/other.py", "2", "1"))
        dependency = "chapter_code/other.py"
    (result,) = engine.run(tmp_path)
    assert result.status == "stale", result.error
    assert f"{dependency} changed while the chapter was executing" in result.error
    assert len(result.error.splitlines()) == 1
    with pytest.raises(KeyError):  # nothing stored for myst-nb or the gate
        engine.rendered_notebook(tmp_path, "book/ch")
    (again,) = engine.run(tmp_path)
    assert again.reason == "stale last time"


def test_a_dependency_edited_and_reverted_after_the_chapter_read_it_is_sound(
    tmp_path: Path,
) -> None:
    # the mirror case: the kernel read exactly the snapshot's version
    write_book(tmp_path)
    add_cell(tmp_path, "edit", _edit("../data/number.txt", "21", "22"))
    add_cell(tmp_path, "revert", _edit("../data/number.txt", "22", "21"))
    (result,) = engine.run(tmp_path)
    assert result.status == "executed", result.error
    assert printed(tmp_path) == "42\n"


def test_a_changed_installed_distribution_that_the_chapter_imports_makes_it_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, site = tmp_path / "repo", tmp_path / "site"
    root.mkdir()
    (site / "fakedist_pkg").mkdir(parents=True)
    (site / "fakedist_pkg" / "__init__.py").write_text("X = 1\n")
    info = site / "fakedist-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: fakedist\nVersion: 1.0\n"
    )
    (info / "top_level.txt").write_text("fakedist_pkg\n")
    (info / "RECORD").write_text("fakedist_pkg/__init__.py,sha256=one,6\n")
    # the engine finds it as the kernel does (PYTHONPATH)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", str(site))
    write_book(root)
    add_cell(root, "uses", "import fakedist_pkg\nprint(fakedist_pkg.X)")
    (first,) = engine.run(root)
    assert first.status == "executed", first.error
    assert engine.load_manifest(root)["book/ch"]["distributions"][
        "fakedist"
    ].startswith("1.0 ")
    # reinstalled with other files
    (info / "RECORD").write_text("fakedist_pkg/__init__.py,sha256=two,6\n")
    (again,) = engine.run(root)
    assert again.status == "executed"
    assert again.reason.startswith("installed package changed: fakedist 1.0 ")
    (again,) = engine.run(root)
    assert again.status == "hit"


def _fake_site(site: Path) -> Path:
    """An installed distribution ``fakedist`` (package ``fakedist_pkg``) in the folder
    ``site``; its dist-info."""
    (site / "fakedist_pkg").mkdir(parents=True)
    (site / "fakedist_pkg" / "__init__.py").write_text("X = 1\n")
    info = site / "fakedist-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: fakedist\nVersion: 1.0\n"
    )
    (info / "top_level.txt").write_text("fakedist_pkg\n")
    (info / "RECORD").write_text(
        "fakedist_pkg/__init__.py,sha256=one,6\nfakedist-1.0.dist-info/RECORD,,\n"
    )
    return info


def test_distributions_of_an_environment_inside_the_checkout_are_keyed_and_a_changed_file_re_executes(  # noqa: E501  (the test's name)
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 30, item 3 (probe installed-reinstalled / installed-hand-edit): `make book`
    # puts the environment in the checkout (.venv), an untracked folder; its packages
    # are not the repository's own and must be keyed
    site = tmp_path / ".venv" / "lib" / "site-packages"
    _fake_site(site)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", str(site))
    write_book(tmp_path)
    add_cell(tmp_path, "uses", "import fakedist_pkg\nprint(fakedist_pkg.X)")
    (first,) = engine.run(tmp_path)
    assert first.status == "executed", first.error
    assert engine.load_manifest(tmp_path)["book/ch"]["distributions"][
        "fakedist"
    ].startswith("1.0 ")
    (hit,) = engine.run(tmp_path)
    assert hit.status == "hit"
    module = site / "fakedist_pkg" / "__init__.py"
    # edited in place: its RECORD still says what was installed
    module.write_text("X = 2\n")
    (again,) = engine.run(tmp_path)
    assert again.status == "executed"
    assert again.reason.startswith("installed package changed: fakedist 1.0 ")
    # (a reinstall, a new RECORD: test_a_changed_installed_distribution_...)
    assert "2\n" in printed(tmp_path)


def test_bad_yaml_in_cell_options_is_one_line_naming_file_and_line_and_keeps_the_last_execution(  # noqa: E501  (the test's name)
    book: Path,
) -> None:
    path = book / "book" / "ch.md"
    good = path.read_text()
    path.write_text(
        good.replace(":label: compute\n", ":label: compute\n:tolerance: {rtol: [1\n")
    )
    (result,) = engine.run(book)
    assert result.status == "failed"
    line = good.splitlines().index("```{code-cell} ipython3") + 1
    assert result.error == (
        f"{path}:{line}: the options of code cell #1 (the cell starting on that line) "
        "cannot be read: Invalid options format (bad YAML)"
    )
    # its last execution is still known...
    assert "book/ch" in engine.load_manifest(book)
    path.write_text(good)
    (again,) = engine.run(book)
    # ...so the fix executes nothing
    assert (again.status, again.reason) == ("hit", "unchanged")


def test_reverting_an_edit_to_the_last_executed_state_executes_nothing(
    book: Path,
) -> None:
    path = book / "book" / "ch.md"
    good = path.read_text()
    path.write_text(good.replace("print(double(", "print(1 + double("))
    (edited,) = engine.run(book)
    assert edited.status == "executed", edited.error
    assert printed(book) == "43\n"
    path.write_text(good)
    (reverted,) = engine.run(book)
    assert (reverted.status, reverted.reason) == ("hit", "unchanged")
    assert printed(book) == "42\n"
    (again,) = engine.run(book)
    assert again.status == "hit"


def test_a_kernel_that_dies_is_one_line_naming_the_cell(tmp_path: Path) -> None:
    write_book(tmp_path)
    add_cell(tmp_path, "dies", "import os\nos._exit(1)")
    add_cell(tmp_path, "after", "print('never')")
    (result,) = engine.run(tmp_path)
    assert result.status == "failed"
    assert result.error.startswith(
        "book/ch.md: the kernel died while cell 'dies' was running"
    )
    assert len(result.error.splitlines()) == 1
    assert "Traceback" not in result.error


def test_a_kernel_that_exits_while_starting_is_one_line_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 30, item 10 (found by the probes: a kernel that lost its TCP port to another
    # process died at start)
    profile = tmp_path / "ipython" / "profile_default"
    profile.mkdir(parents=True)
    # dies before any socket
    (profile / "ipython_kernel_config.py").write_text("import os\nos._exit(7)\n")
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    root = tmp_path / "repo"
    root.mkdir()
    write_book(root)
    started = time.perf_counter()
    (result,) = engine.run(root)
    assert result.status == "failed"
    assert result.error.startswith(
        "book/ch.md: the kernel exited before it ran the first cell ("
    )
    assert len(result.error.splitlines()) == 1
    assert "Traceback" not in result.error
    assert time.perf_counter() - started < 60


def test_kernels_talk_over_sockets_in_a_private_folder_not_tcp_ports(
    tmp_path: Path,
) -> None:
    # a TCP port chosen free can be taken by another process before the kernel binds it
    # (a busy machine)
    write_book(tmp_path)
    add_cell(
        tmp_path,
        "transport",
        "import json\nfrom ipykernel.connect import get_connection_file\n"
        "print(json.loads(open(get_connection_file()).read())['transport'])",
    )
    (result,) = engine.run(tmp_path)
    assert result.status == "executed", result.error
    cells = engine.rendered_notebook(tmp_path, "book/ch").cells
    cell = next(c for c in cells if c.metadata.get("label") == "transport")
    assert "".join(o.get("text", "") for o in cell.outputs) == "ipc\n"


def test_a_sigint_to_the_process_group_of_an_engine_that_ignores_it_leaves_the_chapters_running(  # noqa: E501  (the test's name)
    tmp_path: Path,
) -> None:
    import os

    write_book(tmp_path)
    pid_file = tmp_path / "kernel.pid"
    add_cell(
        tmp_path,
        "wait",
        f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
        "time.sleep(4)\nprint('done')",
    )
    code = (
        "import sys; from pathlib import Path; from bookbuild.execute import engine; "
        "(r,) = engine.run(Path(sys.argv[1])); print('RESULT', r.status, r.error)"
    )
    # Started in the background by a shell (nohup, `make check &`): SIGINT ignored, so
    # Ctrl-C means nothing to it.
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    _wait_for(pid_file)
    os.killpg(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    assert "RESULT executed" in out, out
    assert "Traceback" not in out
    assert cell_text(tmp_path, "wait") == "done\n"


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_mtime_ns, p.stat().st_size)
        for p in sorted(root.rglob("*"))
    }


def test_a_read_only_checkout_with_the_build_dir_elsewhere_executes_and_writes_nothing_into_it(  # noqa: E501  (the test's name)
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import stat

    root = tmp_path / "checkout"
    root.mkdir()
    write_book(root)
    monkeypatch.setenv("BOOK_BUILD_DIR", str(tmp_path / "elsewhere"))
    before = _tree(root)
    for path in [root, *root.rglob("*")]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        (result,) = engine.run(root)
        assert result.status == "executed", result.error
        assert printed(root) == "42\n"
        # not a file added, written or touched (root could have written: see mtimes)
        assert _tree(root) == before
        (again,) = engine.run(root)
        assert again.status == "hit"
    finally:
        for path in [root, *root.rglob("*")]:
            os.chmod(path, path.stat().st_mode | stat.S_IWUSR)


def test_a_read_only_checkout_without_its_corpora_says_so_instead_of_writing_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bookbuild import gate
    from bookbuild.files import UserError

    (tmp_path / "chapter_code" / "corpora").mkdir(parents=True)
    (tmp_path / "chapter_code" / "corpora" / "texts.py").write_text("")
    monkeypatch.setenv(
        "BOOK_BUILD_DIR", str(tmp_path.parent / (tmp_path.name + "-build"))
    )
    with pytest.raises(
        UserError,
        match=r"^data/shakespeare.txt not built yet, and with BOOK_BUILD_DIR set",
    ):
        gate.prepare_data(tmp_path)
    assert not (tmp_path / "data").exists()


def test_a_comment_in_a_code_cell_executes_nothing_and_the_page_shows_the_cell_as_edited(  # noqa: E501 (a test name)
    book: Path,
) -> None:
    path = book / "book" / "ch.md"
    good = path.read_text()
    path.write_text(
        good.replace(
            "from pathlib import Path\n",
            "# a comment on a line of its own\n"
            "from pathlib import Path  # and one at the end of a line\n",
        )
    )
    (again,) = engine.run(book)
    assert (again.status, again.reason) == (
        "hit",
        "only comments changed (code cells): its outputs reused",
    )
    assert printed(book) == "42\n"
    nb = engine.rendered_notebook(
        book, "book/ch"
    )  # what myst-nb renders: the edited cell, the outputs reused
    assert (
        "# a comment on a line of its own"
        in next(c for c in nb.cells if c.cell_type == "code").source
    )
    assert engine.load_manifest(book)["book/ch"]["code"] == engine.code_hash(
        engine.read_notebook(path), book
    )
    (twice,) = engine.run(book)
    assert (twice.status, twice.reason) == ("hit", "unchanged")
    path.write_text(
        path.read_text().replace("print(double(", "print(1 + double(")
    )  # a real change, after it
    (changed,) = engine.run(book)
    assert (changed.status, changed.reason) == ("executed", "code cells changed")
    assert printed(book) == "43\n"


def test_a_comment_in_an_imported_module_executes_nothing_but_code_docstrings_and_moved_lines_do(  # noqa: E501 (a test name)
    book: Path,
) -> None:
    module = book / "chapter_code" / "tiny.py"
    module.write_text(
        "def double(x):\n    return 2 * x  # twice\n\n# a note at the end\n"
    )
    (again,) = engine.run(book)
    assert (again.status, again.reason) == (
        "hit",
        "only comments changed (chapter_code/tiny.py): its outputs reused",
    )
    (twice,) = engine.run(book)
    assert (twice.status, twice.reason) == ("hit", "unchanged")
    for text in (
        "# a new line above the code: its line numbers move\ndef double(x):\n    "
        "return 2 * x\n",
        'def double(x):\n    """Twice x."""\n    return 2 * x\n',
        "def double(x):\n    return x + x + 1\n",
    ):
        module.write_text(text)
        (edited,) = engine.run(book)
        assert edited.status == "executed", text
        assert "chapter_code/tiny.py" in edited.reason, text
    assert printed(book) == "43\n"


def test_a_module_the_chapter_reads_as_text_is_keyed_on_its_bytes_comments_included(
    tmp_path: Path,
) -> None:
    write_book(tmp_path)
    path = tmp_path / "book" / "ch.md"
    path.write_text(
        path.read_text().replace(
            "print(double(",
            "import inspect\n\nprint(inspect.getsource(double))\nprint(double(",
        )
    )
    (first,) = engine.run(tmp_path)
    assert first.status == "executed", first.error
    entry = engine.load_manifest(tmp_path)["book/ch"]
    assert (
        "chapter_code/tiny.py" not in entry["forms"]
    )  # read as text by inspect, not only imported
    (tmp_path / "chapter_code" / "tiny.py").write_text(
        "def double(x):\n    return 2 * x  # twice\n"
    )
    (again,) = engine.run(tmp_path)
    assert again.status == "executed"
    assert "chapter_code/tiny.py" in again.reason
    assert "# twice" in printed(tmp_path)


def test_a_comment_beside_a_real_change_elsewhere_executes(book: Path) -> None:
    path = book / "book" / "ch.md"
    path.write_text(
        path.read_text().replace(
            "from pathlib import Path\n", "from pathlib import Path  # note\n"
        )
    )
    (book / "data" / "number.txt").write_text("5\n")
    (again,) = engine.run(book)
    assert (
        again.status == "executed"
    )  # named by the first change found: "code cells changed"
    assert printed(book) == "10\n"
