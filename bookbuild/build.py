"""Build the book: execute every chapter and render HTML, failing on any warning or cell
error.

``python -m bookbuild build`` runs ``jupyter-book build`` on the repository root
with warnings as errors (``-W -n --keep-going``). Chapters execute through
myst-nb with ``nb_execution_raise_on_error`` set, so a failing cell fails the
build; the captured log is scanned once more for execution failures so the
command never reports success over a broken page.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import yaml

from bookbuild.files import UserError

ROOT = Path(__file__).resolve().parent.parent
BUILD_DIR = ROOT / "_build"
HTML_DIR = BUILD_DIR / "html"
LOG_FILE = BUILD_DIR / "build.log"

# Lines in a Sphinx/myst-nb log that mean a chapter did not execute cleanly.
FAILURE_PATTERNS = [
    re.compile(r"Executing notebook failed"),
    re.compile(r"CellExecutionError"),
    re.compile(r"An error occurred while executing"),
    re.compile(r"Notebook exception traceback saved in"),
]


def jupyter_book_command(builder: str = "html") -> list[str]:
    exe = Path(sys.executable).with_name("jupyter-book")
    return [
        str(exe),
        "build",
        str(ROOT),
        "--builder",
        builder,
        "-W",
        "-n",
        "--keep-going",
    ]


def failures_in(log_text: str) -> list[str]:
    """Lines of a build log that report a cell or notebook failure."""
    return [
        line
        for line in log_text.splitlines()
        if any(p.search(line) for p in FAILURE_PATTERNS)
    ]


def build(
    builder: str = "html", check: bool = False, pdf_after: str | None = None
) -> int:
    """Execute what is stale (engine), write the build report, render the book; return
    an exit code.

    With ``check``, the build also fails when an output differs from its
    baseline: one execution of each chapter serves both the gate and the HTML
    (what CI runs). With ``pdf_after`` (a shell command; HTML builds only), the
    PDF is built beside the HTML once every chapter has executed (:class:`SidePdf`).
    """
    from bookbuild.tools import labs

    if pdf_after:
        refuse_pdf_after_elsewhere()
    if os.environ.get("BOOK_BUILD_DIR", "").strip():
        return build_elsewhere(builder, check)
    BUILD_DIR.mkdir(exist_ok=True)
    started = time.perf_counter()
    labs_writer = (
        labs.start_writing_if_stale()
    )  # overlaps what follows; Sphinx's start then finds them written
    try:
        return _build(builder, check, pdf_after, started)
    finally:
        if labs_writer is not None:
            labs_writer.wait()


def _build(builder: str, check: bool, pdf_after: str | None, started: float) -> int:
    from bookbuild import gate

    if gate.source_verdict(ROOT):
        print(
            f"\nBuild FAILED after {time.perf_counter() - started:.0f} s, before "
            "executing anything: fix the lines above (bookbuild/lint/source.py)",
            file=sys.stderr,
        )
        return 1
    checks, profile = gate.run_and_check(ROOT)
    # read once: for the report, the appendix and the pairing check
    pages = gate.claim_pages(ROOT, checks)
    gate.write_report(ROOT, checks, profile, pages)
    failed = gate.failures_text(checks)
    if failed:
        print(
            "\nA chapter did not produce usable outputs; nothing was "
            f"published.\n{failed}",
            file=sys.stderr,
        )
        print(
            f"\nBuild FAILED after {time.perf_counter() - started:.0f} s",
            file=sys.stderr,
        )
        return 1
    if gate.claims_verdict(pages):
        print(
            f"\nBuild FAILED after {time.perf_counter() - started:.0f} s: every claim "
            "names a check its page declares, and every check is claimed (see "
            "bookbuild/lint/claims.py)",
            file=sys.stderr,
        )
        return 1
    if gate.references_verdict(checks):
        print(
            f"\nBuild FAILED after {time.perf_counter() - started:.0f} s: every glued "
            "name the text cites is glued by a cell of its page, and every figure has "
            "alt text (see bookbuild/lint/references.py)",
            file=sys.stderr,
        )
        return 1
    env = dict(os.environ)
    # silences a debugger notice in kernels
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    side = SidePdf(pdf_after, env) if pdf_after and builder == "html" else None
    if side is not None:
        side.start()
    # make pdf
    unfinished = begin_latex(BUILD_DIR / "latex") if builder == "pdflatex" else None
    try:
        code = _render(builder, env)
        if unfinished is not None and code == 0:
            unfinished.unlink()
        pdf_code = side.finish() if side is not None and code == 0 else 0
    finally:
        if side is not None:
            # nothing once it has finished; ends a PDF build left running by a failed
            # HTML build
            side.stop()
    code = _verdicts(
        builder, check, checks, profile, code, time.perf_counter() - started, pdf_code
    )
    if code == 0 and side is not None:
        side.publish()
    return code


def begin_latex(latex: Path) -> Path:
    """Begin a LaTeX build into the folder ``latex``; return its mark, to remove once
    the build succeeded.

    A build that was stopped part-way (Ctrl-C, a kill, a failed HTML build beside it) or
    that failed can leave LaTeX's files cut short (a ``book.aux`` ending mid-line stops
    every later xelatex run), so where the mark of the last build is still there, the
    folder is removed and this build starts it afresh.
    """
    mark = latex.with_name(latex.name + ".unfinished")
    if mark.exists():
        shutil.rmtree(latex, ignore_errors=True)
    mark.parent.mkdir(parents=True, exist_ok=True)
    mark.write_text("a LaTeX build began here and has not succeeded\n")
    return mark


def refuse_pdf_after_elsewhere() -> None:
    """``--pdf-after`` writes the PDF beside this checkout's HTML: a clear error where
    BOOK_BUILD_DIR is set."""
    if os.environ.get("BOOK_BUILD_DIR", "").strip():
        raise UserError(
            "--pdf-after builds the PDF in this checkout's _build/, and BOOK_BUILD_DIR "
            "builds a copy elsewhere: build the HTML there, then `make pdf` with the "
            "same BOOK_BUILD_DIR"
        )


class SidePdf:
    """The PDF, built beside the HTML by a second Jupyter Book process (``bookbuild
    build --pdf-after CMD``).

    The HTML's Sphinx phase (one process, about a minute) keeps one core busy; the PDF's
    (a second Sphinx process, then xelatex) fills the other instead of running after it.
    It starts once every chapter has executed. First ``CMD`` runs (``make -s
    pdf-ready``: wait for the background set-up, which installs TeX Live): exit 0 builds
    the PDF, 3 means there is no TeX Live here (a note; the PDF tests are then skipped),
    anything else fails the build. The PDF's Sphinx writes under ``_build/pdf-side``
    (its own doctrees, executed cells and panels, so the two processes never write one
    file); the execution cache and the engine's outputs are only read by both. The PDF
    goes to ``_build/latex/book.pdf`` (where ``make pdf`` writes it) and, once the HTML
    passed its checks, into the site.
    """

    LOG = BUILD_DIR / "pdf.log"
    OUTPUT = BUILD_DIR / "pdf-side"
    PDF = BUILD_DIR / "latex" / "book.pdf"
    NO_TEX = 3

    def __init__(self, ready: str, env: dict[str, str]) -> None:
        self.ready, self.env = ready, env
        self.proc: subprocess.Popen[bytes] | None = None  # Jupyter Book's PDF build
        self.ready_proc: subprocess.Popen[str] | None = None  # the ready command
        self.code: int | None = None  # None: no PDF (no TeX Live here), or not finished
        self.message = ""
        self.stopped = False
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, name="side-pdf", daemon=True)

    def start(self) -> None:
        self.started = time.perf_counter()
        self.thread.start()

    def _run(self) -> None:
        # Each child leads a process group of its own, so that stop() ends it with
        # everything it started (the set-up's wait; Sphinx, latexmk and xelatex); Ctrl-C
        # reaches the build, whose stop() ends them.
        with self.LOG.open("w") as log:
            with self.lock:
                if self.stopped:
                    return
                ready = self.ready_proc = subprocess.Popen(
                    self.ready,
                    shell=True,
                    cwd=ROOT,
                    env=self.env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    text=True,
                    start_new_session=True,
                )
            assert ready.stdout is not None
            # shown as well: make test's phase lines, the set-up's wait
            for line in ready.stdout:
                sys.stdout.write(line)
                log.write(line)
            ready.wait()
            if ready.returncode == self.NO_TEX:
                self.message = (
                    "NOTE: no TeX Live here; no PDF, and the PDF tests will be skipped "
                    "(see make tex)"
                )
                return
            if ready.returncode != 0:
                self.code, self.message = (
                    ready.returncode,
                    f"`{self.ready}` exited {ready.returncode}",
                )
                return
            with self.lock:
                if self.stopped:
                    return
                unfinished = begin_latex(self.OUTPUT / "_build" / "latex")
                self.proc = subprocess.Popen(
                    [
                        *jupyter_book_command("pdflatex"),
                        "--path-output",
                        str(self.OUTPUT),
                    ],
                    cwd=ROOT,
                    env=self.env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            self.code = self.proc.wait()
            if self.code == 0:
                unfinished.unlink()

    def finish(self) -> int:
        """Wait for the PDF; 0 when it built (copied to ``_build/latex/book.pdf``) or
        there is no TeX Live."""
        self.thread.join()
        seconds = time.perf_counter() - self.started
        if self.code is None:
            print(self.message)
            return 0
        code = self.code or log_problems(self.LOG.read_text(), 0)
        built = self.OUTPUT / "_build" / "latex" / "book.pdf"
        if code == 0 and not built.is_file():
            self.message, code = f"Jupyter Book exited 0 but wrote no {built}", 1
        if code:
            print(
                "".join(self.LOG.read_text().splitlines(keepends=True)[-40:]),
                self.message,
                sep="\n",
                file=sys.stderr,
            )
            return code
        # the whole LaTeX folder, as `make pdf` leaves it: the PDF tests read book.tex
        # and book.log beside it
        shutil.copytree(built.parent, self.PDF.parent, dirs_exist_ok=True)
        print(
            f"PDF built beside the HTML in {seconds:.0f} s (from the end of execution; "
            f"log: {self.LOG}): {self.PDF}"
        )
        return 0

    def stop(self) -> None:
        """End whatever is still running (nothing once :meth:`finish` returned): each
        child's whole process group, SIGTERM first, SIGKILL after 10 s."""
        with self.lock:
            self.stopped = True
            running = [
                p
                for p in (self.ready_proc, self.proc)
                if p is not None and p.poll() is None
            ]
        for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
            for p in running:
                try:
                    os.killpg(p.pid, sig)
                except ProcessLookupError:  # the group has ended
                    pass
            self.thread.join(timeout=wait)
            if not self.thread.is_alive():
                return

    def publish(self) -> None:
        """Copy the PDF into the site and point its links at it (nothing where no PDF
        was built)."""
        from bookbuild.site import downloads

        if self.code == 0 and downloads.publish(self.PDF, HTML_DIR) is not None:
            print(
                "The site links it from every page's header: "
                f"{HTML_DIR / downloads.PDF_NAME}"
            )


def _render(builder: str, env: dict[str, str]) -> int:
    """Run Jupyter Book over the executed chapters (logged to ``_build/build.log``); its
    exit code, or 1 when its log shows a chapter that failed or that myst-nb executed
    itself."""
    with LOG_FILE.open("w") as log:
        proc = subprocess.Popen(
            jupyter_book_command(builder),
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stdout.write(line)
            log.write(line)
        code = proc.wait()
    return log_problems(LOG_FILE.read_text(), code)


def log_problems(log_text: str, code: int) -> int:
    """``code``, or 1 where ``log_text`` (a Jupyter Book log) shows a failed chapter or
    one myst-nb executed."""
    problems = failures_in(log_text)
    if problems:
        print("\nA chapter failed to execute:", *problems, sep="\n  ", file=sys.stderr)
        code = code or 1
    rogue = [
        line for line in log_text.splitlines() if "Executing notebook using" in line
    ]
    # myst-nb found no engine output for a page, so it executed the page itself
    if rogue:
        print(
            "\nmyst-nb executed a page itself; the engine's outputs did not match it:",
            *rogue,
            sep="\n  ",
        )
        code = code or 1
    return code


def _verdicts(
    builder: str,
    check: bool,
    checks: list,
    profile: str,
    code: int,
    elapsed: float,
    pdf_code: int = 0,
) -> int:
    """After Jupyter Book: the exit code of the whole build, with the output check's
    verdicts under ``check``; ``pdf_code``: the exit code of the PDF built beside the
    HTML (:class:`SidePdf`), which fails a build that passed everything else."""
    from bookbuild import gate

    if code != 0:
        print(
            f"\nBuild FAILED after {elapsed:.0f} s (exit {code}); full log in "
            f"{LOG_FILE}",
            file=sys.stderr,
        )
        return code
    index = HTML_DIR / "index.html"
    if check:
        code = (
            gate.verdict(checks, profile)
            or gate.prose_verdict(ROOT)
            or gate.layout_verdict(ROOT, checks)
        )
        if code:
            print(
                f"\nBuild FAILED the output check after {elapsed:.0f} s (the HTML is "
                f"in {HTML_DIR})",
                file=sys.stderr,
            )
            return code
    else:
        diffs = sum(len(c.differences) for c in checks)
        if diffs:
            print(
                f"\nNote: {diffs} output(s) differ from baselines/{profile}/ (see the "
                "build report); `make check` fails until they are reviewed and "
                "accepted with `make accept`."
            )
        from bookbuild.lint.prose import check_pages

        typed = check_pages(ROOT)  # the pages' source, read in well under a second
        if typed:
            print(
                f"\nNote: {len(typed)} number(s) typed by hand into the prose, "
                "captions or alt texts; `make check` fails until each is glued or "
                "marked {lit}:",
                *typed,
                sep="\n  ",
            )
        overlaps = gate.figure_overlaps(ROOT, checks)
        if overlaps:
            print(
                f"\nNote: {len(overlaps)} pair(s) of texts overlap in figures; `make "
                "check` fails until the plotting code is fixed:",
                *overlaps,
                sep="\n  ",
            )
    if pdf_code:
        print(
            f"\nBuild FAILED after {elapsed:.0f} s: the HTML passed, the PDF beside it "
            f"did not build (exit {pdf_code}; log: {SidePdf.LOG})",
            file=sys.stderr,
        )
        return pdf_code
    if builder == "html":
        print(
            f"\nBuild succeeded in {elapsed:.0f} s. Open the book at:\n  file://{index}"
        )
    else:
        print(
            f"\nBuild succeeded in {elapsed:.0f} s. The {builder} output is in "
            f"{BUILD_DIR / 'latex'}"
            + (
                f" (the PDF: {BUILD_DIR / 'latex' / 'book.pdf'})"
                if builder == "pdflatex"
                else ""
            )
        )
        if builder == "pdflatex":
            from bookbuild.site import downloads

            published = downloads.publish(BUILD_DIR / "latex" / "book.pdf", HTML_DIR)
            if published is not None:
                print(f"The site links it from every page's header: {published}")
    return 0


def build_elsewhere(builder: str, check: bool, root: Path = ROOT) -> int:
    """The build of a read-only checkout: in a copy under ``$BOOK_BUILD_DIR/checkout``;
    nothing written into ``root``.

    The HTML build writes beside its sources (the generated report pages, Sphinx's
    output, the corpora in ``data/`` on first use), so it builds a copy of the sources,
    whose execution state starts from the one ``make check`` keeps in
    ``$BOOK_BUILD_DIR`` (chapters executed there are reused, trainings are not redone).
    """
    from bookbuild.execute import engine

    state = engine.build_dir(root)
    work = state / "checkout"
    work.mkdir(parents=True, exist_ok=True)
    copy_sources(work, root=root)
    for name in ("engine", ".jupyter_cache", "runs"):
        if (state / name).is_dir() and not (work / "_build" / name).exists():
            shutil.copytree(
                state / name,
                work / "_build" / name,
                ignore=shutil.ignore_patterns("*.lock*"),
            )
    env = {k: v for k, v in os.environ.items() if k != "BOOK_BUILD_DIR"}
    print(
        "build: a read-only checkout (BOOK_BUILD_DIR is set): building a copy in "
        f"{work}",
        flush=True,
    )
    argv = [
        sys.executable,
        "-m",
        "bookbuild",
        "build",
        "--builder",
        builder,
        *(["--check"] if check else []),
    ]
    return subprocess.run(argv, cwd=work, env=env).returncode


#: reference pages, if in the toc
ALWAYS_INCLUDED = [
    "book/glossary",
    "book/bibliography",
    "book/checked",
    "book/build-report",
]
COPIED = [
    "_config.yml",
    "book",
    "chapter_code",
    "bookbuild",
    "panels",
    "data",
    "baselines",
    "pyproject.toml",
    "requirements",
    "labs",
    "records",
]
_TARGET = re.compile(
    r"^\((?P<a>[^()\s]+)\)=\s*$|^:(?:label|name):\s*(?P<b>\S+)\s*$", re.MULTILINE
)
_REFERENCE = re.compile(
    r"\{(?:ref|numref|eq|prf:ref)\}`(?:[^`<]*<)?(?P<target>[^`>]+)>?`"
)
_DOC_REFERENCE = re.compile(r"\{doc\}`(?:[^`<]*<)?/?(?P<doc>[^`>]+)>?`")


def copy_sources(work: Path, with_toc: bool = True, root: Path = ROOT) -> None:
    """Copy what a build needs (sources, code, baselines, lock files) into ``work``,
    replacing older copies."""
    for name in [*COPIED, "_toc.yml"] if with_toc else COPIED:
        src, target = root / name, work / name
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
        if src.is_dir():
            generated = ("build-report.md", "checked.md")
            shutil.copytree(
                src,
                target,
                ignore=shutil.ignore_patterns("__pycache__", "_build", *generated),
            )
        elif src.exists():
            shutil.copy2(src, target)


def pages_needed(root: Path, names: list[str]) -> list[str]:
    """``names`` plus every page they refer to, directly or through another needed page,
    in toc order.

    Cross-references (``{ref}``, ``{numref}``, ``{eq}``, ``{doc}``) are resolved
    by scanning every page of the table of contents for the targets it defines.
    """
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    order = [toc["root"]] + [
        e["file"] for part in toc.get("parts", []) for e in part.get("chapters", [])
    ]
    texts = {
        n: (root / f"{n}.md").read_text() for n in order if (root / f"{n}.md").exists()
    }
    owner = {}
    for page, text in texts.items():
        for m in _TARGET.finditer(text):
            owner.setdefault(m.group("a") or m.group("b"), page)
    needed, queue = (
        set(),
        [toc["root"], *names, *[n for n in ALWAYS_INCLUDED if n in order]],
    )
    while queue:
        page = queue.pop()
        if page in needed:
            continue
        needed.add(page)
        text = texts.get(page, "")
        queue += [
            owner[m.group("target")]
            for m in _REFERENCE.finditer(text)
            if m.group("target") in owner
        ]
        queue += [
            d
            for m in _DOC_REFERENCE.finditer(text)
            if (d := m.group("doc").removesuffix(".md")) in texts
        ]
    return [n for n in order if n in needed]


def build_only(pages: list[str], dest: Path | None = None, root: Path = ROOT) -> int:
    """Build ``pages`` alone in a private copy; their cross-references to other pages
    link to the last full build.

    For authors working on one chapter while others are mid-edit: the copy lives
    in ``_build/only-<name>`` (or ``dest``) with its own execution state, which
    starts from the checkout's (so chapters already executed there are reused).
    Its table of contents holds the named pages, the reference pages
    (:data:`ALWAYS_INCLUDED`: glossary, bibliography, what the build checked, its
    report) and, as its root, a short page listing them; no other page is executed
    or rendered, so a chapter broken elsewhere does not stop it. A ``{ref}``,
    ``{numref}``, ``{eq}`` or ``{doc}`` to a page left out resolves from the last
    full build's ``_build/html/xrefs.json`` (:mod:`bookbuild.site.xrefs`), as a link
    into that build. Before any full build, the copy also builds every page the named
    ones refer to, directly or not (:func:`pages_needed`), and says so.
    """
    names = [p.removesuffix(".md") for p in pages]
    for name in names:
        if not (root / f"{name}.md").exists():
            raise UserError(f"--only: no such page {name}.md under {root}")
    build_dir = root / "_build"
    known = build_dir / "html" / "xrefs.json"
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    order = [toc["root"]] + [
        e["file"] for part in toc.get("parts", []) for e in part.get("chapters", [])
    ]
    if known.is_file():
        needed = [n for n in order if n in names or n in ALWAYS_INCLUDED]
    else:
        needed = pages_needed(root, names)
        print(
            f"--only: no full build yet ({known} is missing), so the pages that "
            f"{', '.join(names)} refer to are built too",
            flush=True,
        )
    work = dest or build_dir / ("only-" + "-".join(Path(n).name for n in names))
    work.mkdir(parents=True, exist_ok=True)
    copy_sources(work, with_toc=False, root=root)
    # memoized runs too: a page build must not retrain
    for state in ("engine", ".jupyter_cache", "runs"):
        if (build_dir / state).is_dir() and not (work / "_build" / state).exists():
            shutil.copytree(
                build_dir / state,
                work / "_build" / state,
                ignore=shutil.ignore_patterns("*.lock*"),
            )
    for part in toc.get("parts", []):
        part["chapters"] = [e for e in part.get("chapters", []) if e["file"] in needed]
    toc["parts"] = [part for part in toc.get("parts", []) if part["chapters"]]
    (work / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False))
    if known.is_file():
        config = yaml.safe_load((work / "_config.yml").read_text())
        sphinx = config.setdefault("sphinx", {})
        extensions = sphinx.setdefault("extra_extensions", [])
        if "bookbuild.site.xrefs" not in extensions:
            extensions.append("bookbuild.site.xrefs")
        sphinx.setdefault("config", {}).update(
            bookbuild_xref_inventory=str(known),
            bookbuild_xref_base=(build_dir / "html").as_uri(),
        )
        (work / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False))
        # the root page stands in as a list of what this build holds
        if toc["root"] not in names:
            title = config.get("title", "The book")
            listed = "\n".join(f"- {{doc}}`/{n}`" for n in needed if n != toc["root"])
            (work / f"{toc['root']}.md").write_text(
                f"# {title}: {', '.join(names)}\n\nA build of some pages only; their "
                f"references to other pages link to the last full build.\n\n{listed}\n"
            )
    print(f"--only: building {', '.join(n for n in needed)} in {work}", flush=True)
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "bookbuild", "build"], cwd=work)
    verdict = (
        "succeeded"
        if proc.returncode == 0
        else f"FAILED (exit {proc.returncode}); log: {work / '_build'}"
    )
    print(
        f"build of {', '.join(needed)} {verdict} in "
        f"{time.perf_counter() - started:.0f} s"
    )
    print(f"  file://{work / '_build' / 'html' / 'index.html'}")
    return proc.returncode


def clean() -> int:
    """Remove every build output, including the execution cache."""
    if BUILD_DIR.exists():
        shutil.rmtree(BUILD_DIR)
    print(f"removed {BUILD_DIR}")
    return 0


def serve(port: int = 8000) -> int:
    """Serve the built HTML on localhost only."""
    if not (HTML_DIR / "index.html").exists():
        print("No built book found; run `make book` first.", file=sys.stderr)
        return 1
    print(f"Serving {HTML_DIR} at http://127.0.0.1:{port}/ (Ctrl-C to stop)")
    return subprocess.call(
        [
            sys.executable,
            "-m",
            "http.server",
            str(port),
            "--bind",
            "127.0.0.1",
            "--directory",
            str(HTML_DIR),
        ]
    )
