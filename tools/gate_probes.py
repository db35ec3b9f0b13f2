"""Attack the gate: the probes of issue 30 (and a few more), run against the real book in scratch copies.

Each probe edits, damages or mistreats a *copy* of this checkout (a clone plus a copy of its ``_build``,
so every memoized training and every executed chapter is reused), runs the build's own commands on it
(``python -m bookbuild check``, ``accept``, ``build --check``, ``build --only``, ``experiments status``)
and says whether the gate did what it must: fail with the message it must show, pass, or re-execute
exactly what the change touches. The checkout it is started from is never written (results aside).

    .venv/bin/python tools/gate_probes.py --list               # the probes, their family and expectation
    nice -n 15 .venv/bin/python tools/gate_probes.py           # all of them (about an hour on 2 loaded cores)
    .venv/bin/python tools/gate_probes.py --only seed-abc caption-edit
    .venv/bin/python tools/gate_probes.py --skip corrupt-global-db

Results: ``_build/probes/results.json``, ``results.md`` (the table TESTING.md shows) and one log per probe
(every command's whole output). A probe's *family* is the item of issue 30 it attacks (1-12), or ``own``.
"Raw traceback" means a line ``Traceback (most recent call last):`` from Python itself: the machinery
crashing. A chapter's own cell error, as IPython formats it inside the one-line failure, is not one.

Run it with the checkout's ``_build`` executed (``make check`` passed there): probes that must pass
assume the copy starts clean. It needs ``git``; the read-only probes need ``unshare`` and ``mount``
(root, or a user namespace); without them they are reported as not run.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import py_compile
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\):", re.MULTILINE)
PAGE = "book/recurrence.md"  # Chapter 1: about 40 s (95 s on a loaded machine) to execute, nothing to train
#: the cheapest page that executes (the build's own page: about 25 s), for probes that need any execution
BUILDING = "book/building.md"
#: what the copy of ``_build`` holds (the rest, e.g. ``only-*`` and the PDF, no probe needs)
STATE = ["engine", ".jupyter_cache", "runs", "html", ".doctrees", "jupyter_execute", "labs", "panels"]
#: what only the HTML build reads (copied for the probes that build it; the others get html/xrefs.json alone)
HTML_STATE = ["html", ".doctrees", "jupyter_execute", "labs", "panels"]
CHECK = ["check"]
FULL = ["build", "--check"]
ONLY = ["build", "--only", "book/recurrence"]
ONLY_BUILDING = ["build", "--only", "book/building"]


def touch_building(c: Ctx) -> None:
    """Make the building page execute again without changing its outputs (a comment in its cell)."""
    c.edit(BUILDING, "runtime.setup()\n", "runtime.setup()  # probe: execute again\n")


class ProbeError(Exception):
    """The probe could not be set up (an edit's text not found...): a fault of the probe, not of the gate."""


# --------------------------------------------------------------------------- running commands


@dataclass
class Run:
    argv: list[str]
    rc: int
    out: str
    seconds: float
    note: str = ""

    def has(self, pattern: str) -> bool:
        return re.search(pattern, self.out, re.MULTILINE) is not None

    def line(self, pattern: str) -> str:
        found = re.search(f"^.*(?:{pattern}).*$", self.out, re.MULTILINE)
        return found.group(0).strip() if found else ""

    def executed(self) -> list[str]:
        return re.findall(r"^engine: (book/[\w-]+): executed in", self.out, re.MULTILINE)

    def last_line(self) -> str:
        lines = [ln.strip() for ln in self.out.splitlines() if ln.strip()]
        return lines[-1] if lines else ""


@dataclass
class Result:
    name: str
    family: str
    does: str
    expected: str
    ok: bool = False
    observed: str = ""
    key_line: str = ""
    exit: str = ""
    traceback: bool = False
    seconds: float = 0.0
    runs: int = 0
    problem: str = ""  # why the probe itself could not run
    shared: str = ""  # the run it shares with other probes (timed in the first of them)
    run: str = ""  # when it ran (the probe run's start)
    checks: list[str] = field(default_factory=list)  # each expectation, met or not


class Ctx:
    """One probe's scratch copy and the commands run in it."""

    def __init__(self, root: Path, log: Path) -> None:
        self.root = root
        self.log = log
        self.python = str(root / ".venv" / "bin" / "python")  # inside the checkout, as `make book` puts it
        self.shared = ""  # the name of the run this probe shares with others
        self.runs: list[Run] = []
        self.checks: list[tuple[bool, str]] = []
        self.key = ""
        self.tmp = Path(tempfile.mkdtemp(prefix="probe-extra-", dir=root.parent))

    # -- files
    def path(self, rel: str) -> Path:
        return self.root / rel

    def read(self, rel: str) -> str:
        return self.path(rel).read_text()

    def write(self, rel: str, text: str) -> None:
        self.path(rel).write_text(text)

    def edit(self, rel: str, old: str, new: str) -> str:
        """Replace the first ``old`` by ``new`` in ``rel``; return the text before."""
        text = self.read(rel)
        if old not in text:
            raise ProbeError(f"{rel}: text to edit not found: {old[:60]!r}")
        self.write(rel, text.replace(old, new, 1))
        return text

    def add_cell(self, rel: str, after_label: str, label: str, source: str, options: str = "") -> None:
        """Insert a code cell after the cell labelled ``after_label``."""
        text = self.read(rel)
        start = text.find(f":label: {after_label}\n")
        end = text.find("\n```\n", start)
        if start < 0 or end < 0:
            raise ProbeError(f"{rel}: no cell {after_label}")
        cell = f"\n\n```{{code-cell}} ipython3\n:label: {label}\n{options}{source}\n```\n"
        self.write(rel, text[:end + 5] + cell + text[end + 5:])

    # -- commands
    def env(self, **extra: str | None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("BOOK_") and k not in ("PYTHONPATH", "CI", "BOOKBUILD_PROGRESS_EVERY")}
        env.update(BOOK_THREADS="1", PYTHONUNBUFFERED="1")
        for k, v in extra.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
        return env

    def bookbuild(self, *args: str, **kw: object) -> Run:
        return self.cmd([self.python, "-m", "bookbuild", *args], **kw)

    def cmd(self, argv: list[str], env: dict[str, str] | None = None, timeout: float = 3600,
            watch: Callable[[str, subprocess.Popen], None] | None = None, cwd: Path | None = None,
            preexec: Callable[[], None] | None = None, new_session: bool = False) -> Run:
        """Run ``argv`` in the copy, output merged; ``watch(line, proc)`` sees every line as it comes."""
        started = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd or self.root, env=env or self.env(), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, errors="replace", preexec_fn=preexec,
                                start_new_session=new_session)
        assert proc.stdout is not None
        lines: list[str] = []
        timed_out = threading.Event()

        def kill() -> None:
            timed_out.set()
            _kill_group(proc)

        killer = threading.Timer(timeout, kill)
        killer.start()
        try:
            for line in proc.stdout:
                lines.append(line)
                if watch is not None:
                    watch(line, proc)
            rc = proc.wait()
        finally:
            killer.cancel()
        run = Run([str(a) for a in argv], rc, "".join(lines), time.perf_counter() - started)
        self.runs.append(run)
        if timed_out.is_set():
            self.expect(False, f"finished within the probe's limit of {timeout:.0f} s (killed by the prober)")
        with self.log.open("a") as log:
            shown = " ".join(a.replace(str(self.root), "<copy>") for a in run.argv)
            log.write(f"\n$ {shown}\n# exit {rc} after {run.seconds:.1f} s\n{run.out}")
        return run

    def shared_run(self, key: str, make: Callable[[Ctx], Run]) -> Run:
        """One run for several probes (each checks its own line of it): made by the first, reused by the rest."""
        self.shared = key
        if key not in SHARED:
            SHARED[key] = make(self)
        else:
            run = SHARED[key]
            self.runs.append(run)
            with self.log.open("a") as log:
                log.write(f"\n# the run shared with the other probes of {key!r} (its log holds the output)\n")
        return SHARED[key]

    # -- expectations
    def expect(self, ok: bool, what: str) -> bool:
        self.checks.append((bool(ok), what))
        return bool(ok)

    def fails_with(self, run: Run, pattern: str, what: str = "", code: int | None = None) -> bool:
        self.key = self.key or run.line(pattern)
        status = run.rc != 0 if code is None else run.rc == code
        self.expect(status, f"exit status {'non-zero' if code is None else code} (was {run.rc})")
        return self.expect(run.has(pattern), what or f"says /{pattern}/")

    def passes(self, run: Run, pattern: str = "") -> bool:
        self.expect(run.rc == 0, f"exit status 0 (was {run.rc})")
        if pattern:
            self.key = self.key or run.line(pattern)
            return self.expect(run.has(pattern), f"says /{pattern}/")
        return run.rc == 0

    def executes_nothing(self, run: Run) -> bool:
        return self.expect(not run.has(r"^engine: executing"), "executes nothing"
                           + (f" (executed {', '.join(run.executed()) or 'some chapter'})"
                              if run.has(r"^engine: executing") else ""))

    def check_passes_executing_nothing(self, **env: str) -> Run:
        """``check`` (with ``env`` added to the probe's environment) must pass and execute nothing."""
        run = self.bookbuild(*CHECK, env=self.env(**env)) if env else self.bookbuild(*CHECK)
        self.passes(run, r"check: every output")
        self.executes_nothing(run)
        return run

    def executes(self, run: Run, chapters: list[str]) -> bool:
        return self.expect(sorted(run.executed()) == sorted(chapters),
                           f"executes exactly {', '.join(chapters)} (executed: {', '.join(run.executed()) or 'none'})")


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def processes_under(folder: Path) -> list[str]:
    """Processes whose working directory lies inside ``folder`` (kernels, workers left behind)."""
    left = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:120]
        except OSError:
            continue
        if cwd == str(folder) or cwd.startswith(str(folder) + "/"):
            left.append(f"{pid} {cmdline}")
    return left


def wait_until_read(path: Path, timeout: float = 300.0) -> bool:
    """Wait until ``path`` is read after its last write (its access time passes its modification time).

    With ``relatime`` (Linux's default) the first read after a write updates the access time.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = path.stat()
        if st.st_atime_ns > st.st_mtime_ns:
            return True
        time.sleep(0.05)
    return False


# --------------------------------------------------------------------------- the scratch copies


def git(*args: str, cwd: Path = ROOT, input_: bytes | None = None) -> bytes:
    return subprocess.run(["git", *args], cwd=cwd, input=input_, check=True, capture_output=True).stdout


def make_base(scratch: Path) -> tuple[Path, str]:
    """A clone of this checkout's tree (with its uncommitted changes, committed there) and a copy of its state."""
    base = scratch / "base"
    head = git("rev-parse", "HEAD").decode().strip()
    dirty = bool(git("status", "--porcelain", "--untracked-files=normal").strip())
    git("clone", "--quiet", "--shared", "--no-checkout", str(ROOT), str(base))
    git("checkout", "--quiet", "--detach", head, cwd=base)
    diff = git("diff", "--binary", "HEAD")
    if diff.strip():
        git("apply", "--binary", "-", cwd=base, input_=diff)
    for rel in git("ls-files", "--others", "--exclude-standard", "-z").decode().split("\0"):
        if rel:
            (base / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, base / rel)
    git("-c", "user.name=gate probes", "-c", "user.email=probes@localhost", "commit", "--quiet",
        "--allow-empty", "-am", "the tree under attack", cwd=base)
    git("add", "-A", cwd=base)
    git("-c", "user.name=gate probes", "-c", "user.email=probes@localhost", "commit", "--quiet",
        "--allow-empty", "-m", "untracked files", cwd=base)
    os.symlink((ROOT / ".venv").resolve(), base / ".venv")
    for corpus in (ROOT / "data").glob("*.txt"):  # the corpora (git-ignored, built once)
        if not (base / "data" / corpus.name).exists():
            shutil.copy2(corpus, base / "data" / corpus.name)
    (base / "_build").mkdir()
    for name in STATE:
        if (ROOT / "_build" / name).is_dir():
            shutil.copytree(ROOT / "_build" / name, base / "_build" / name, symlinks=True)
    return base, head[:12] + (" + uncommitted changes" if dirty else "")


def copy_of(base: Path, dest: Path, html: bool) -> None:
    """A copy of ``base``; without ``html``, of its ``_build`` only what `check` reads (and the cross-references)."""
    if html:
        subprocess.run(["cp", "-a", str(base), str(dest)], check=True)
        return
    dest.mkdir()
    tops = [p for p in base.iterdir() if p.name != "_build"]
    subprocess.run(["cp", "-a", *map(str, tops), str(dest)], check=True)
    (dest / "_build" / "html").mkdir(parents=True)
    state = [str(base / "_build" / n) for n in STATE if n not in HTML_STATE and (base / "_build" / n).exists()]
    subprocess.run(["cp", "-a", *state, str(dest / "_build")], check=True)
    if (base / "_build" / "html" / "xrefs.json").exists():
        shutil.copy2(base / "_build" / "html" / "xrefs.json", dest / "_build" / "html" / "xrefs.json")


# --------------------------------------------------------------------------- the probes

PROBES: list[tuple[str, str, str, str, Callable[[Ctx], None]]] = []
#: probes left out unless asked for (``--slow`` or by name): each executes every chapter again
SLOW: set[str] = set()
#: probes that build the HTML (their copy holds the last HTML build too)
HTML: set[str] = set()
SHARED: dict[str, Run] = {}


def probe(name: str, family: str, does: str, expected: str, slow: bool = False, html: bool = False) -> Callable:
    def register(fn: Callable[[Ctx], None]) -> Callable[[Ctx], None]:
        PROBES.append((name, family, does, expected, fn))
        if slow:
            SLOW.add(name)
        if html:
            HTML.add(name)
        return fn
    return register


DIAGRAMS = "chapter_code/rnn/diagrams.py"  # read by Chapter 1 alone, in its last cell
STALE = r"changed while the chapter was executing"


# ---- own: the controls

@probe("no-change-check", "own", "`check` on the untouched copy", "must pass, executing nothing")
def _(c: Ctx) -> None:
    run = c.bookbuild(*CHECK)
    c.passes(run, r"check: every output of \d+ chapter\(s\) matches")
    c.executes_nothing(run)


@probe("no-change-build", "own", "`build --check` (the HTML too) on the untouched copy",
       "must pass, executing nothing", html=True)
def _(c: Ctx) -> None:
    run = c.bookbuild(*FULL)
    c.passes(run, r"Build succeeded")
    c.executes_nothing(run)
    c.expect(not run.has(r"Executing notebook using"), "myst-nb executes nothing itself")


# ---- item 1: edits while a chapter runs

@probe("revert-during-run", "1", f"edit {DIAGRAMS} (a comment), start `check`, revert it when execution starts, "
       "restore the edit once the kernel has read the reverted file; then `check` again",
       "must fail as stale naming the file; the next check must re-execute Chapter 1 and pass")
def _(c: Ctx) -> None:
    target = c.path(DIAGRAMS)
    original = target.read_text()
    edited = original + "# probe: an edit\n"
    target.write_text(edited)
    state = {"reverted": False, "read": False}

    def watch(line: str, proc: subprocess.Popen) -> None:
        if line.startswith("engine: executing") and not state["reverted"]:
            target.write_text(original)
            state["reverted"] = True

            def restore() -> None:
                state["read"] = wait_until_read(target)
                target.write_text(edited)
            threading.Thread(target=restore, daemon=True).start()

    run = c.bookbuild(*CHECK, watch=watch)
    c.expect(state["read"], "the kernel read the reverted file before the edit came back (timing)")
    c.fails_with(run, f"diagrams.py {STALE}")
    again = c.bookbuild(*CHECK)
    c.executes(again, ["book/recurrence"])
    c.passes(again, r"check: every output")


@probe("edit-during-accept", "1", f"start `accept --only book/recurrence` after a comment edit of {PAGE}; once "
       f"execution starts change {DIAGRAMS} (alpha 0.9 -> 0.2), revert it once the kernel has read it",
       "must fail as stale naming the file and write no baseline")
def _(c: Ctx) -> None:
    c.edit(PAGE, "device = runtime.setup()", "device = runtime.setup()  # probe")
    target = c.path(DIAGRAMS)
    original = target.read_text()
    state = {"read": False}

    def watch(line: str, proc: subprocess.Popen) -> None:
        if line.startswith("engine: executing") and "edited" not in state:
            target.write_text(original.replace("alpha=0.9", "alpha=0.2"))
            state["edited"] = True

            def revert() -> None:
                state["read"] = wait_until_read(target)
                target.write_text(original)
            threading.Thread(target=revert, daemon=True).start()

    run = c.bookbuild("accept", "--only", "book/recurrence", watch=watch)
    c.expect(state["read"], "the kernel read the edited file before it was reverted (timing)")
    c.fails_with(run, f"diagrams.py {STALE}")
    changed = git("status", "--porcelain", "baselines", cwd=c.root).decode().strip()
    c.expect(not changed, f"no baseline written ({changed or 'none'})")


# ---- item 2: bytecode

@probe("stale-bytecode", "2", f"a timestamp .pyc of {DIAGRAMS}, then an edit of the same size with its mtime "
       "kept (alpha=0.9 -> alpha=0.2, `touch -r`)", "must re-execute Chapter 1 with the new code: its figure differs")
def _(c: Ctx) -> None:
    target = c.path(DIAGRAMS)
    py_compile.compile(str(target), cfile=importlib.util.cache_from_source(str(target)), doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)
    st = target.stat()
    c.edit(DIAGRAMS, "alpha=0.9", "alpha=0.2")
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    if (target.stat().st_size, target.stat().st_mtime_ns) != (st.st_size, st.st_mtime_ns):
        raise ProbeError("the edit changed the size or the mtime")
    run = c.bookbuild(*CHECK)
    c.expect(run.has(r"changed: chapter_code/rnn/diagrams.py") or "book/recurrence" in run.executed(),
             "Chapter 1 re-executes")
    c.fails_with(run, r"\[fig-unrolled\]: .*RMS", "the figure differs (the new code ran)")


# ---- item 3: the installed environment

def shadow_venv(c: Ctx, package: str) -> tuple[Path, Path]:
    """Make the copy's ``.venv`` a venv of its own that sees the shared one, with its own copy of ``package``.

    The copy (with its dist-info, times kept) comes first on ``sys.path``: the distribution as a reinstall
    would leave it, without touching the shared environment.
    """
    shared = (ROOT / ".venv").resolve()
    base_python = Path(os.path.realpath(shared / "bin" / "python"))
    venv = c.path(".venv")
    venv.unlink()
    subprocess.run([str(base_python), "-m", "venv", "--without-pip", str(venv)], check=True)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    own, theirs = venv / "lib" / version / "site-packages", shared / "lib" / version / "site-packages"
    (own / "zz-shared-environment.pth").write_text(f"import site; site.addsitedir({str(theirs)!r})\n")
    for script in (shared / "bin").iterdir():  # jupyter-book and friends, run with this venv's python
        if not (venv / "bin" / script.name).exists() and script.is_file():
            head = script.read_bytes()[:200]
            if head.startswith(b"#!") and b"python" in head.split(b"\n")[0]:
                body = script.read_text().split("\n", 1)[1]
                (venv / "bin" / script.name).write_text(f"#!{venv / 'bin' / 'python'}\n{body}")
                (venv / "bin" / script.name).chmod(0o755)
    from importlib import metadata

    dist = metadata.distribution(package)
    top = (dist.read_text("top_level.txt") or package).split()[0]
    info = Path(str(dist._path))  # type: ignore[attr-defined]
    subprocess.run(["cp", "-a", str(theirs / top), str(info), str(own)], check=True)
    c.python = str(venv / "bin" / "python")
    return own / top, own / info.name


def chapters_importing(root: Path, dist: str) -> list[str]:
    manifest = json.loads((root / "_build" / "engine" / "manifest.json").read_text())
    return sorted(c for c, e in manifest.items() if dist in (e.get("distributions") or {}))


INSTALLED = "opt_einsum"  # small, pure Python, imported (through torch) by every chapter that imports torch


@probe("installed-same-env", "3", f"`build --only book/building` from another venv in the copy's .venv holding its "
       f"own copy of {INSTALLED} (times kept)", "must pass, executing nothing (the same files)")
def _(c: Ctx) -> None:
    shadow_venv(c, INSTALLED)
    run = c.bookbuild(*ONLY_BUILDING)
    c.passes(run, r"build of .*book/building.* succeeded")
    c.executes_nothing(run)


@probe("installed-reinstalled", "3", f"as installed-same-env, then a file of {INSTALLED} changed and its RECORD "
       "rewritten (a reinstall of another build)", "must re-execute the building page, and pass")
def _(c: Ctx) -> None:
    package, info = shadow_venv(c, INSTALLED)
    init = package / "__init__.py"
    init.write_text(init.read_text() + "# probe: reinstalled\n")
    data = init.read_bytes()
    import base64

    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record = info / "RECORD"
    lines = [f"{package.name}/__init__.py,sha256={digest},{len(data)}" if ln.startswith(f"{package.name}/__init__.py,")
             else ln for ln in record.read_text().splitlines()]
    record.write_text("\n".join(lines) + "\n")
    c.expect("book/building" in chapters_importing(c.root, INSTALLED), f"the manifest records {INSTALLED}")
    run = c.bookbuild(*ONLY_BUILDING)
    c.expect(run.has(rf"installed package changed: {INSTALLED}"), f"says installed package changed: {INSTALLED}")
    c.key = run.line(rf"installed package changed: {INSTALLED}")
    c.executes(run, ["book/building"])
    c.passes(run, r"build of .*book/building.* succeeded")


@probe("installed-hand-edit", "3", f"as installed-same-env, then a file of {INSTALLED} edited in place (RECORD "
       "untouched)", "must re-execute the building page, and pass")
def _(c: Ctx) -> None:
    package, _ = shadow_venv(c, INSTALLED)
    init = package / "__init__.py"
    init.write_text(init.read_text() + "# probe: edited in place\n")
    run = c.bookbuild(*ONLY_BUILDING)
    c.expect(run.has(rf"installed package changed: {INSTALLED}"), f"says installed package changed: {INSTALLED}")
    c.key = run.line(rf"installed package changed: {INSTALLED}")
    c.executes(run, ["book/building"])
    c.passes(run, r"build of .*book/building.* succeeded")


# ---- item 4: what the page shows beyond its cells

@probe("panel-slider-max", "4", "the one-unit panel's slider maximum 3.0 -> 4.0 in chapter_code/bptt/panels.py",
       "must fail: panel data differ")
def _(c: Ctx) -> None:
    c.edit("chapter_code/bptt/panels.py", '"max": 3.0,', '"max": 4.0,')
    c.fails_with(c.bookbuild(*CHECK), r"\[panel one-unit\]")


@probe("listing-unimported-module", "4", "a listing of a module no chapter imports (added and accepted), then "
       "the listed function's text changed", "must fail: the listing differs, with its diff")
def _(c: Ctx) -> None:
    c.write("chapter_code/probe_listing.py", 'def probe_function(x):\n    """Twice x."""\n    return 2 * x\n')
    c.edit(PAGE, "## Summary\n", "```{literalinclude} ../chapter_code/probe_listing.py\n:pyobject: probe_function\n"
           "```\n\n## Summary\n")
    c.expect(c.bookbuild("accept", "--only", "book/recurrence").rc == 0, "the listing is accepted")
    c.edit("chapter_code/probe_listing.py", "return 2 * x", "return 3 * x")
    run = c.bookbuild(*CHECK)
    c.fails_with(run, r"\[listing chapter_code/probe_listing.py:probe_function\]")
    c.expect(run.has(r"^\s*\+\s+return 3 \* x"), "shows the changed line in a diff")
    c.executes_nothing(run)


@probe("listing-pyobject-gone", "4", "a listing's `:pyobject:` names an object its file does not define",
       "must fail in one line naming page, line and object")
def _(c: Ctx) -> None:
    c.edit(PAGE, ":pyobject: pad_batch\n", ":pyobject: pad_batches\n")
    c.fails_with(c.bookbuild(*CHECK), r"recurrence.md:\d+: the listing of .*defines no object 'pad_batches'")


def prose_probe(c: Ctx, sentence: str, shown: str) -> None:
    c.edit(PAGE, "## The unrolled view\n", f"{sentence}\n\n## The unrolled view\n")
    run = c.bookbuild(*CHECK)
    c.fails_with(run, re.escape(shown))
    c.expect(run.has(r"check FAILED: .*numbers are typed into the prose"), "the closing line names the prose")


@probe("inline-math-number", "4", "`$0.135$` typed into a paragraph", "must fail: a number typed into inline math")
def _(c: Ctx) -> None:
    prose_probe(c, "The padded states end near $0.135$ here.", "0.135")


@probe("ref-text-number", "4", "a `{ref}` whose text holds a number (`the 400-step run`)",
       "must fail: a number typed into a reference's text")
def _(c: Ctx) -> None:
    prose_probe(c, "See {ref}`the 400-step run <chap-gradients>`.", "400")


@probe("code-span-number", "4", "a code span that is only a number (`` `26` ``)",
       "must fail: a number typed into a code span")
def _(c: Ctx) -> None:
    prose_probe(c, "The batch holds `26` sequences.", "26")


# ---- item 5: weakening a check

@probe("volatile-with-changed-output", "5", "`:volatile: true` added to a compared cell whose output changes",
       "must fail: marking it volatile is a difference")
def _(c: Ctx) -> None:
    c.edit(PAGE, ':label: padding-report\n:tags: [remove-input]\n',
           ':label: padding-report\n:volatile: true\n:tags: [remove-input]\n')
    c.edit(PAGE, 'print("mask (1 = real step):")', 'print("mask (1 = a real step):")')
    run = c.bookbuild(*CHECK)
    c.fails_with(run, r"\[padding-report\]: compared -> marked ':volatile: true'")


@probe("tolerance-loosened", "5", "`:tolerance: {rtol: 0.5}` added to a compared cell",
       "must fail: a looser tolerance is a difference")
def _(c: Ctx) -> None:
    c.edit(PAGE, ":label: rnn-jax-report\n", ":label: rnn-jax-report\n:tolerance: {rtol: 0.5}\n")
    c.fails_with(c.bookbuild(*CHECK), r"\[rnn-jax-report\]: :tolerance: rtol 0 -> rtol 0.5 \(a looser tolerance")


@probe("image-tolerance-loosened", "5", "`:image_tolerance: 50` added to the figure cell",
       "must fail: a looser image tolerance is a difference")
def _(c: Ctx) -> None:
    c.edit(PAGE, ":label: fig-unrolled\n", ":label: fig-unrolled\n:image_tolerance: 50\n")
    c.fails_with(c.bookbuild(*CHECK), r"\[fig-unrolled\]: :image_tolerance: [\d.]+ -> 50 \(a looser tolerance")


# ---- item 6: a detected fault leaves no lasting false alarm

def cheapest_run(c: Ctx, chapter: str = "book/depth") -> str:
    """The key of ``chapter``'s cheapest memoized run stored in the copy, read from the engine's manifest (run keys
    change with the code a training imports, so none is written into a probe)."""
    manifest = json.loads(c.read("_build/engine/manifest.json"))
    runs = [r for r in manifest.get(chapter, {}).get("runs", [])
            if c.path(f"_build/runs/{r['key']}/result.pt").exists()]
    if not runs:
        raise ProbeError(f"{chapter} has no stored memoized run in the copy's manifest")
    return min(runs, key=lambda r: r.get("compute_s") or 0.0)["key"]




@probe("damaged-memoized-run", "6", "the result file of Chapter 6's cheapest stored run overwritten "
       "(_build/runs/<key>/result.pt, the key read from the engine's manifest), and Chapter 6 re-executed "
       "(a comment in a cell); then `check` again",
       "must pass, the damage named in the build log, not in an output; the next check executes nothing and passes")
def _(c: Ctx) -> None:
    key = cheapest_run(c)
    result = c.path(f"_build/runs/{key}/result.pt")
    result.write_bytes(b"garbage" + result.read_bytes()[7:])
    text = c.read("book/depth.md")
    first = text.index("```{code-cell} ipython3\n")
    body = text.index("\n\n", first) + 2  # after the cell's options
    c.write("book/depth.md", text[:body] + "# probe: re-execute\n" + text[body:])
    run = c.bookbuild(*CHECK)
    c.passes(run, rf"stored run {key} is damaged")
    c.executes(run, ["book/depth"])
    c.expect(run.has(rf"^engine: book/depth: run_once: the stored run {key} is damaged"),
             "the note is the engine's line, not an output")
    again = c.bookbuild(*CHECK)
    c.passes(again, r"check: every output")
    c.executes_nothing(again)


# ---- item 7: recovery

def corrupt_db(c: Ctx, under: str = "_build") -> None:
    db = c.path(f"{under}/.jupyter_cache/global.db")
    data = db.read_bytes()
    db.write_bytes(data[:100] + b"\0garbage\0" * 64 + data[100 + 9 * 64:])


@probe("corrupt-global-db", "7", "garbage written into _build/.jupyter_cache/global.db, then `check`, then `check`",
       "must pass with one message (moved aside, rebuilt; every chapter executes again); the next check executes "
       "nothing", slow=True)
def _(c: Ctx) -> None:
    corrupt_db(c)
    run = c.bookbuild(*CHECK, timeout=3000)
    c.passes(run, r"execution cache .* is damaged .*moved it to")
    c.expect(len(re.findall(r"is damaged", run.out)) == 1, "one message")
    again = c.bookbuild(*CHECK)
    c.passes(again, r"check: every output")
    c.executes_nothing(again)


@probe("corrupt-global-db-only", "7", "garbage in global.db, then `build --only book/recurrence`",
       "must build with one message (moved aside, rebuilt); only Chapter 1 executes")
def _(c: Ctx) -> None:
    corrupt_db(c)
    run = c.bookbuild(*ONLY)
    c.passes(run, r"execution cache .* is damaged .*moved it to")
    c.executes(run, ["book/recurrence"])


def read_only(c: Ctx, argv: list[str], env: dict[str, str]) -> Run:
    """Run ``argv`` with the copy mounted read-only (a private mount namespace: nothing else sees it)."""
    if shutil.which("unshare") is None:
        raise ProbeError("no unshare: cannot mount the copy read-only")
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && cd "$0" && exec "$@"'
    return c.cmd(["unshare", "-m", "sh", "-c", script, str(c.root), *argv], env=env)


def state_elsewhere(c: Ctx) -> Path:
    """Move the copy's ``_build`` out of it, as the state ``make check`` keeps in ``$BOOK_BUILD_DIR``."""
    state = c.tmp / "state"
    shutil.move(str(c.path("_build")), state)
    return state


@probe("read-only-check", "7", "a code-cell comment edit, the copy mounted read-only, BOOK_BUILD_DIR elsewhere, "
       "`check`", "must pass, executing the edited page, writing nothing into the checkout")
def _(c: Ctx) -> None:
    touch_building(c)
    state = state_elsewhere(c)
    run = read_only(c, [c.python, "-m", "bookbuild", *CHECK], c.env(BOOK_BUILD_DIR=str(state)))
    c.passes(run, r"check: every output")
    c.executes(run, ["book/building"])
    c.expect(not run.has(r"Errno 30|Read-only file system"), "no write into the checkout was tried")


@probe("read-only-build", "7", "as read-only-check, with `build --check` (the HTML, built in "
       "$BOOK_BUILD_DIR/checkout from an earlier build there)", "must pass, writing nothing into the checkout",
       html=True)
def _(c: Ctx) -> None:
    touch_building(c)
    state = state_elsewhere(c)
    earlier = state / "checkout" / "_build"
    earlier.mkdir(parents=True)
    for name in ("html", ".doctrees", "jupyter_execute", "labs", "panels"):
        if (state / name).is_dir():
            shutil.copytree(state / name, earlier / name, symlinks=True)
    run = read_only(c, [c.python, "-m", "bookbuild", *FULL], c.env(BOOK_BUILD_DIR=str(state)))
    c.passes(run, r"Build succeeded")
    c.expect(not run.has(r"Errno 30|Read-only file system"), "no write into the checkout was tried")


@probe("read-only-no-corpus", "7", "a read-only checkout whose data/ corpora were never built, BOOK_BUILD_DIR "
       "elsewhere, `check`", "must fail in one line saying the corpus is not built; nothing written")
def _(c: Ctx) -> None:
    for name in ("shakespeare.txt", "milton.txt"):
        c.path(f"data/{name}").unlink(missing_ok=True)
    state = state_elsewhere(c)
    run = read_only(c, [c.python, "-m", "bookbuild", *CHECK], c.env(BOOK_BUILD_DIR=str(state)))
    c.fails_with(run, r"data/shakespeare.txt.* not built yet", code=2)
    c.expect(not run.has(r"Errno 30|Read-only file system"), "no write into the checkout was tried")


# ---- item 8: --only

@probe("only-with-broken-chapter", "8", "Chapter 3 broken (a cell that raises), then `build --only book/recurrence`",
       "must build Chapter 1 and pass")
def _(c: Ctx) -> None:
    text = c.read("book/gated.md")
    first = text.index("```{code-cell} ipython3\n")
    c.write("book/gated.md", text[:first] + "```{code-cell} ipython3\n:label: probe-broken\n"
            "raise RuntimeError('probe: this chapter is broken')\n```\n\n" + text[first:])
    run = c.bookbuild(*ONLY)
    c.passes(run, r"build of book/recurrence.* succeeded")
    c.expect(not run.has(r"book/gated"), "Chapter 3 plays no part")


# ---- item 9: harmless input

@probe("device-spaced-CPU", "9", 'BOOK_DEVICE=" CPU "', "must pass, executing nothing")
def _(c: Ctx) -> None:
    c.check_passes_executing_nothing(BOOK_DEVICE=" CPU ")


@probe("device-explicit-cpu", "9", "BOOK_DEVICE=cpu", "must pass, executing nothing")
def _(c: Ctx) -> None:
    c.check_passes_executing_nothing(BOOK_DEVICE="cpu")


@probe("threads-spelled", "own", 'BOOK_THREADS=" 1 "', "must pass, executing nothing")
def _(c: Ctx) -> None:
    c.check_passes_executing_nothing(BOOK_THREADS=" 1 ")


@probe("seed-abc", "9", "BOOK_SEED=abc", "must fail at once: one line, exit 2, no kernel started")
def _(c: Ctx) -> None:
    run = c.bookbuild(*CHECK, env=c.env(BOOK_SEED="abc"))
    c.fails_with(run, r"BOOK_SEED", code=2)
    c.expect(len(run.out.strip().splitlines()) == 1, f"one line (was {len(run.out.strip().splitlines())})")
    c.executes_nothing(run)


@probe("caption-edit", "9", "a word of Fig. 1.1's caption changed", "must pass, executing nothing")
def _(c: Ctx) -> None:
    c.edit(PAGE, 'caption: "Two drawings of the same model.', 'caption: "Two pictures of the same model.')
    c.check_passes_executing_nothing()


@probe("alt-text-edit", "9", "a word of Fig. 1.1's alt text changed", "must pass, executing nothing")
def _(c: Ctx) -> None:
    c.edit(PAGE, 'alt: "Left, a single box', 'alt: "Left, one box')
    c.check_passes_executing_nothing()


@probe("prose-only-edit", "own", "a word of a paragraph changed", "must pass, executing nothing")
def _(c: Ctx) -> None:
    c.edit(PAGE, "This picture is\nwhat the next chapter differentiates.", "This picture is\nwhat the next chapter "
           "takes apart.")
    c.check_passes_executing_nothing()


@probe("revert-an-edit", "9", "a printed line of a cell changed, `check`; the edit reverted, `check`",
       "the first must fail on that cell; the second must pass, executing nothing")
def _(c: Ctx) -> None:
    good = c.edit(PAGE, 'print("mask (1 = real step):")', 'print("mask (1 = a real step):")')
    first = c.bookbuild(*CHECK)
    c.fails_with(first, r"\[padding-report\]")
    c.write(PAGE, good)
    second = c.bookbuild(*CHECK)
    c.passes(second, r"check: every output")
    c.executes_nothing(second)


@probe("bad-option-fixed", "9", "bad YAML in a cell's options, `check`; fixed, `check`",
       "the first must fail; the fix must execute nothing (the chapter's last execution is kept)")
def _(c: Ctx) -> None:
    good = c.edit(PAGE, ":label: padding-report\n", ":label: padding-report\n:tolerance: {rtol: [1\n")
    c.fails_with(c.bookbuild(*CHECK), r"recurrence.md:\d+: the options of code cell")
    c.write(PAGE, good)
    again = c.bookbuild(*CHECK)
    c.passes(again, r"check: every output")
    c.executes_nothing(again)


@probe("accept-only-the-change", "9", "a printed line changed, `accept --only book/recurrence`",
       "must rewrite only that cell's lines of the baseline (no masked timing rewritten)")
def _(c: Ctx) -> None:
    c.edit(PAGE, 'print("mask (1 = real step):")', 'print("mask (1 = a real step):")')
    run = c.bookbuild("accept", "--only", "book/recurrence")
    c.passes(run, r"accept: 1 change")
    diff = git("diff", "-U0", "baselines", cwd=c.root).decode()
    changed = [ln for ln in diff.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
    c.expect(bool(changed) and all("mask (1 = " in ln for ln in changed),
             f"only the changed cell's line is rewritten ({len(changed)} line(s) changed)")
    c.key = f"{len(changed)} baseline line(s) changed: " + "; ".join(ln[:70] for ln in changed[:2])


# ---- item 10: no raw traceback

@probe("device-cuda-on-cpu", "10", "BOOK_DEVICE=cuda on a machine without a GPU", "must fail at once: one line, exit 2")
def _(c: Ctx) -> None:
    run = c.bookbuild(*CHECK, env=c.env(BOOK_DEVICE="cuda"))
    c.fails_with(run, r"BOOK_DEVICE", code=2)
    c.expect(len(run.out.strip().splitlines()) == 1, f"one line (was {len(run.out.strip().splitlines())})")


@probe("device-gpu-on-cpu", "10", "BOOK_DEVICE=gpu on a machine without a GPU", "must fail at once: one line, exit 2")
def _(c: Ctx) -> None:
    run = c.bookbuild(*CHECK, env=c.env(BOOK_DEVICE="gpu"))
    c.fails_with(run, r"BOOK_DEVICE", code=2)
    c.expect(len(run.out.strip().splitlines()) == 1, f"one line (was {len(run.out.strip().splitlines())})")


@probe("bad-yaml-option", "10", "bad YAML in a cell's options (`:tolerance: {rtol: [1`)",
       "must fail in one line naming file, line and cell")
def _(c: Ctx) -> None:
    c.edit(PAGE, ":label: padding-report\n", ":label: padding-report\n:tolerance: {rtol: [1\n")
    c.fails_with(c.bookbuild(*CHECK), r"book/recurrence.md:\d+: the options of code cell #\d+ .*cannot be read")


@probe("kernel-dies", "10", "a cell that ends its kernel (`os._exit(1)`)", "must fail in one line naming the cell")
def _(c: Ctx) -> None:
    c.add_cell(BUILDING, "build-info", "probe-dies", "import os\nos._exit(1)")
    c.fails_with(c.bookbuild(*CHECK), r"the kernel died while cell 'probe-dies' was running")


@probe("cell-error", "own", "a cell that raises (`1 / 0`)", "must fail naming the cell and the error")
def _(c: Ctx) -> None:
    c.add_cell(BUILDING, "build-info", "probe-error", "1 / 0")
    c.fails_with(c.bookbuild(*CHECK), r"cell 'probe-error' failed")


def interrupt_when_running(c: Ctx, ignore: bool) -> tuple[Run, dict]:
    """`check` in a session of its own; a SIGINT to its whole process group once a page's kernel is busy."""
    touch_building(c)
    state: dict = {"sent": False}

    def watch(line: str, proc: subprocess.Popen) -> None:
        if not state["sent"] and re.match(r"engine: book/building: cell '", line):
            os.killpg(proc.pid, signal.SIGINT)
            state["sent"] = time.perf_counter()

    # Ignored, as a command started in the background is; otherwise the default, as at a terminal (whatever
    # the prober itself inherited: started with `&` from a script, it ignores SIGINT, and so would its children)
    disposition = signal.SIG_IGN if ignore else signal.SIG_DFL
    preexec = lambda: signal.signal(signal.SIGINT, disposition)  # noqa: E731
    run = c.bookbuild(*CHECK, env=c.env(BOOKBUILD_PROGRESS_EVERY="1"), watch=watch, preexec=preexec,
                      new_session=True)
    c.expect(bool(state["sent"]), "SIGINT sent while the page's kernel ran")
    return run, state


@probe("sigint-ignored-engine", "10", "`check` started with SIGINT ignored (as in the background); SIGINT to its "
       "process group while a page executes", "must carry on and pass: no traceback, no kernel killed mid-cell")
def _(c: Ctx) -> None:
    run, _ = interrupt_when_running(c, ignore=True)
    c.passes(run, r"check: every output")
    c.executes(run, ["book/building"])


@probe("ctrl-c", "own", "SIGINT to the process group of `check` while a page executes (Ctrl-C)",
       "must stop: exit 130, one message, no kernel left behind")
def _(c: Ctx) -> None:
    run, _ = interrupt_when_running(c, ignore=False)
    c.fails_with(run, r"interrupted", code=130)
    time.sleep(3)
    left = processes_under(c.root)
    c.expect(not left, f"no process left in the copy ({'; '.join(left) or 'none'})")


@probe("sigkill-engine", "own", "SIGKILL to the engine alone while a page executes",
       "its workers and kernels must exit by themselves within 15 s")
def _(c: Ctx) -> None:
    touch_building(c)
    state: dict = {"sent": False}

    def watch(line: str, proc: subprocess.Popen) -> None:
        if not state["sent"] and re.match(r"engine: book/building: cell '", line):
            proc.kill()
            state["sent"] = True

    c.bookbuild(*CHECK, env=c.env(BOOKBUILD_PROGRESS_EVERY="1"), watch=watch, new_session=True, timeout=600)
    c.expect(state["sent"], "SIGKILL sent while a cell ran")
    deadline = time.monotonic() + 15
    while processes_under(c.root) and time.monotonic() < deadline:
        time.sleep(0.5)
    left = processes_under(c.root)
    c.expect(not left, f"no process left in the copy ({'; '.join(left) or 'none'})")
    c.key = "no process left" if not left else f"{len(left)} process(es) left"


@probe("concurrent-checks", "own", "two `check`s started at once in one checkout",
       "the second must wait, saying so; both must pass")
def _(c: Ctx) -> None:
    second: dict = {}

    def start_second() -> None:
        time.sleep(3)
        second["run"] = c.bookbuild(*CHECK)

    thread = threading.Thread(target=start_second)
    thread.start()
    first = c.bookbuild(*CHECK)
    thread.join()
    c.passes(first, r"check: every output")
    c.passes(second["run"], r"another build of this checkout is running .*waiting")


# ---- item 11: messages

MESSAGES = "messages"  # the edits of the message probes, made and checked in one run (each probe its own line)


def messages_run(c: Ctx) -> Run:
    c.edit(PAGE, 'f"{tuple(last.shape)}"\n)', 'f"{tuple(last.shape)} "\n)')  # a trailing space
    c.edit(PAGE, "diff_cell = (step_ours - cell(x[:, 0], h_prev)).abs().max().item()\n",
           "diff_cell = (step_ours - cell(x[:, 0], h_prev)).abs().max().item()\nprint('probe: a new line')\n")
    c.edit(PAGE, "fig = draw_loop_and_unrolled(steps=4)", "print('probe: text beside the figure')\n"
           "fig = draw_loop_and_unrolled(steps=4)")
    c.edit(PAGE, 'print("mask (1 = real step):")', 'print("mask (1 = a real step):")')
    c.edit(PAGE, '"unmasked batch vs each sequence alone', '"unmasked  batch vs each sequence alone')
    return c.bookbuild(*CHECK, env=c.env(BOOKBUILD_PROGRESS_EVERY="1"))


def messages(c: Ctx) -> Run:
    return c.shared_run(MESSAGES, messages_run)


@probe("msg-trailing-space", "11", "a printed line gains a trailing space",
       "must fail showing the space: the two lines quoted, `·` in the cell's diff")
def _(c: Ctx) -> None:
    run = messages(c)
    c.fails_with(run, r"\[rnn-vs-torch-report\]: '[^']*\(4, 16\)' -> '[^']*\(4, 16\) '")
    c.expect(run.has(r"^\s*\+input .*\(4, 16\)·$"), "the diff marks the trailing space with ·")


@probe("msg-no-output-to-text", "11", "a cell that printed nothing prints a line",
       "must fail showing the new text")
def _(c: Ctx) -> None:
    run = messages(c)
    c.fails_with(run, r"\[rnn-vs-torch\]: no output -> text: 'probe: a new line'")


@probe("msg-image-to-text-image", "11", "a figure cell also prints a line", "must fail showing the new text")
def _(c: Ctx) -> None:
    run = messages(c)
    c.fails_with(run, r"\[fig-unrolled\]: image -> text, image: 'probe: text beside the figure'")


@probe("msg-whole-cell-diff", "11", "two printed lines of one cell change",
       "must fail with a unified diff of the cell showing both")
def _(c: Ctx) -> None:
    run = messages(c)
    c.fails_with(run, r"\[padding-report\]")
    c.expect(run.has(r"^\s*\+mask \(1 = a real step\):") and run.has(r"^\s*\+unmasked  batch"),
             "both changed lines in the diff")


@probe("msg-progress-labels", "11", "progress lines of a chapter that executes (every second)",
       "must name cells by label (hidden ones too), never `cell #N`")
def _(c: Ctx) -> None:
    run = messages(c)
    c.expect(run.has(r"^engine: book/recurrence: cell '[\w-]+' running for"), "a cell named by its label")
    c.key = run.line(r"^engine: book/recurrence: cell '[\w-]+' running for")
    c.expect(not run.has(r"cell #\d"), "no `cell #N`")
    c.expect(run.rc != 0, "(the run fails on the other message probes' edits)")


@probe("msg-prose-failure", "11", "a number typed into a paragraph (outputs all match)",
       "must fail with a closing line naming the prose, not only `every output matches`")
def _(c: Ctx) -> None:
    c.edit(PAGE, "## The unrolled view\n", "The batch holds 26 sequences.\n\n## The unrolled view\n")
    run = c.bookbuild(*CHECK)
    c.fails_with(run, r"check FAILED: numbers are typed into the prose")
    c.expect(run.has(r"26"), "names the number")


SCOREBOARD = "records/scoreboard/cpu/rnn.seed0.json"


def edit_record(c: Ctx) -> None:
    text = c.read(SCOREBOARD)
    found = re.search(r'("core_parameters": )(\d+)', text)
    if not found:
        raise ProbeError("no metric to edit in the record")
    c.write(SCOREBOARD, text[:found.start(2)] + str(int(found.group(2)) + 1) + text[found.end(2):])


@probe("status-hand-edited-record", "11", f"a metric of {SCOREBOARD} edited by hand, `experiments status "
       "scoreboard`", "must not call it fresh: edited since it was written")
def _(c: Ctx) -> None:
    edit_record(c)
    run = c.bookbuild("experiments", "status", "scoreboard")
    c.expect(run.has(r"edited since it was written"), "says it was edited")
    c.key = run.line(r"edited since it was written")
    c.expect(not re.search(r"^.*rnn\.seed0.*fresh", run.out, re.MULTILINE), "not fresh")


@probe("record-edited-check", "own", f"a metric of {SCOREBOARD} edited by hand, `check`",
       "must fail: Chapter 6 refuses the record, naming it (not a changed output `make accept` would store)")
def _(c: Ctx) -> None:
    edit_record(c)
    c.fails_with(c.bookbuild(*CHECK), r"rnn\.seed0: damaged \(edited since it was")


# ---- item 12: a failing figure, to review

@probe("figure-review", "12", f"the diagram's boxes drawn paler ({DIAGRAMS}: alpha 0.9 -> 0.2), `build --check`",
       "must fail listing the figure's baseline, new and diff images (written under _build/review/), "
       "shown side by side in the build report", html=True)
def _(c: Ctx) -> None:
    c.edit(DIAGRAMS, "alpha=0.9", "alpha=0.2")
    run = c.bookbuild(*FULL)
    c.fails_with(run, r"\[fig-unrolled\]: .*RMS")
    paths = [f"_build/review/recurrence/fig-unrolled-1-{part}.png" for part in ("baseline", "new", "diff")]
    c.expect(all(c.path(p).is_file() for p in paths), "the three images exist")
    c.expect(all(run.has(re.escape(p)) for p in paths), "their paths are printed")
    report = c.path("_build/html/book/build-report.html")
    html = report.read_text() if report.exists() else ""
    c.expect(all(Path(p).name in html for p in paths), "the build report shows the three images")


# ---- own: more tampering

@probe("baseline-tampered", "own", "a glued number in baselines/cpu-avx2/recurrence.json changed by hand",
       "must fail naming the glue")
def _(c: Ctx) -> None:
    c.edit("baselines/cpu-avx2/recurrence.json", '"name": "param_vocab", "lines": ["65"]',
           '"name": "param_vocab", "lines": ["66"]')
    c.fails_with(c.bookbuild(*CHECK), r"\[param-counts: glue param_vocab\]")


@probe("unpaired-claim", "own", "a claim naming a check no cell declares", "must fail naming the claim")
def _(c: Ctx) -> None:
    c.edit(PAGE, "## The unrolled view\n", "{claim}`A result nobody checked <c-probe-none>`.\n\n## The unrolled view\n")
    c.fails_with(c.bookbuild(*CHECK), r"c-probe-none")


@probe("cached-notebook-tampered", "own", "an output of the building page's executed notebook edited in the "
       "execution cache", "must re-execute that page (the outputs' digest) and pass")
def _(c: Ctx) -> None:
    found = []
    for path in c.path("_build/.jupyter_cache/executed").glob("*/base.ipynb"):
        nb = json.loads(path.read_text())
        if any("as_rows(with_commit=False)" in "".join(cell.get("source", "")) for cell in nb["cells"]):
            for cell in nb["cells"]:
                for out in cell.get("outputs", []):
                    for key, value in out.get("data", {}).items():
                        if key.startswith("text/"):
                            out["data"][key] = (value if isinstance(value, str) else "".join(value)) + " (edited)"
            path.write_text(json.dumps(nb))
            found.append(path)
    if not found:
        raise ProbeError("no executed notebook of the building page found")
    run = c.bookbuild(*CHECK)
    c.passes(run, r"cached outputs were modified after execution")
    c.executes(run, ["book/building"])


# --------------------------------------------------------------------------- running and reporting


def run_probe(base: Path, scratch: Path, out: Path, entry: tuple) -> Result:
    name, family, does, expected, fn = entry
    result = Result(name, family, does, expected)
    dest = scratch / name
    log = out / f"{name}.log"
    log.write_text(f"# probe {name} (issue 30 family {family}): {does}\n# expected: {expected}\n")
    started = time.perf_counter()
    copy_of(base, dest, html=name in HTML)
    c = Ctx(dest, log)
    try:
        fn(c)
    except ProbeError as exc:
        result.problem = str(exc)
    except Exception as exc:  # noqa: BLE001 - a probe's own failure is reported, and the others run
        result.problem = f"{type(exc).__name__}: {exc}"
    result.seconds = time.perf_counter() - started
    result.shared = c.shared
    result.runs = len(c.runs)
    result.checks = [("ok: " if ok else "NOT MET: ") + what for ok, what in c.checks]
    result.traceback = any(TRACEBACK.search(r.out) for r in c.runs)
    result.ok = bool(c.checks) and all(ok for ok, _ in c.checks) and not result.traceback and not result.problem
    result.exit = ", ".join(str(r.rc) for r in c.runs)
    key = c.key or (c.runs[-1].last_line() if c.runs else "")
    result.key_line = key.replace(str(dest), "<copy>")[:220]
    unmet = [what for ok, what in c.checks if not ok]
    result.observed = ("as expected" if result.ok else "NOT as expected: " + "; ".join(
        unmet + (["a raw traceback"] if result.traceback else []) + ([result.problem] if result.problem else [])))
    with log.open("a") as handle:
        handle.write("\n# " + "\n# ".join(result.checks) + f"\n# verdict: {result.observed}\n")
    shutil.rmtree(dest, ignore_errors=True)
    shutil.rmtree(c.tmp, ignore_errors=True)
    return result


def markdown(results: list[Result]) -> str:
    lines = ["| probe | family | what it does | expected | observed | exit | no raw traceback | key line | time (s) |",
             "|---|---|---|---|---|---|---|---|---:|"]

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    for r in results:
        lines.append(f"| `{r.name}` | {r.family} | {cell(r.does)} | {cell(r.expected)} | "
                     f"{'**as expected**' if r.ok else '**NOT as expected**: ' + cell(r.observed)} | {r.exit} | "
                     f"{'yes' if not r.traceback else '**no**'} | `{cell(r.key_line.replace(chr(96), chr(39)))}` | "
                     f"{r.seconds:.0f}"
                     f"{' (one run: ' + r.shared + ')' if r.shared else ''} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these probes")
    parser.add_argument("--skip", nargs="+", metavar="NAME", default=[], help="run all but these")
    parser.add_argument("--list", action="store_true", help="list the probes and exit")
    parser.add_argument("--fresh", action="store_true", help="forget the stored results of earlier runs")
    parser.add_argument("--slow", action="store_true", help=f"also the slow probes ({', '.join(sorted(SLOW))})")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "probes", help="where the results go")
    parser.add_argument("--scratch", type=Path, help="where the copies go (default: a temporary folder)")
    args = parser.parse_args(argv)
    chosen = [p for p in PROBES if (p[0] in args.only if args.only else args.slow or p[0] not in SLOW)
              and p[0] not in args.skip]
    unknown = set(args.only or []) - {p[0] for p in PROBES}
    if unknown:
        parser.error(f"no such probe: {', '.join(sorted(unknown))}")
    if args.list:
        for name, family, does, expected, _ in PROBES:
            print(f"{name:30} {family:>4}  {expected}\n{'':36}{textwrap.shorten(does, 120)}")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="gate-probes-", dir=args.scratch))
    started, started_at = time.perf_counter(), time.strftime("%Y-%m-%d %H:%M")
    load_before = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    print(f"probes: {len(chosen)} probe(s); copies under {scratch}", flush=True)
    base, commit = make_base(scratch)
    results = []
    try:
        for entry in chosen:
            result = run_probe(base, scratch, args.out, entry)
            results.append(result)
            print(f"probe {result.name:30} {'ok ' if result.ok else 'BAD'} {result.seconds:6.0f} s  "
                  f"{result.observed if not result.ok else result.key_line[:90]}", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    wall = time.perf_counter() - started
    load_after = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    this_run = {"date": time.strftime("%Y-%m-%d %H:%M"), "started": started_at, "commit": commit,
                "probes": [r.name for r in results],
                "wall_s": round(wall), "load_before": load_before, "load_after": load_after, "cores": os.cpu_count()}
    for r in results:
        r.run = this_run["date"]
    results_file = args.out / "results.json"
    stored = json.loads(results_file.read_text()) if results_file.exists() and not args.fresh else {}
    previous = {r["name"]: r for r in stored.get("results", [])}  # probes not run now keep their last result
    merged = {**previous, **{r.name: asdict(r) for r in results}}
    known = {f.name for f in fields(Result)}
    rows = [Result(**{k: v for k, v in merged[n].items() if k in known}) for n in (p[0] for p in PROBES) if n in merged]
    runs = [*[run for run in stored.get("runs", []) if set(run["probes"]) & {r.name for r in rows}
              and run["date"] != this_run["date"]], this_run]
    summary = {
        "probes": len(rows),
        "as_expected": sum(r.ok for r in rows),
        "must_fail": sum(r.expected.startswith("must fail") for r in rows),
        "must_fail_failed": sum(r.expected.startswith("must fail") and r.ok for r in rows),
        "must_pass": sum(r.expected.startswith("must pass") for r in rows),
        "must_pass_passed": sum(r.expected.startswith("must pass") and r.ok for r in rows),
        "other": sum(not r.expected.startswith(("must fail", "must pass")) for r in rows),
        "other_as_expected": sum(not r.expected.startswith(("must fail", "must pass")) and r.ok for r in rows),
        "tracebacks": sum(r.traceback for r in rows),
    }
    results_file.write_text(json.dumps({"summary": summary, "runs": runs, "results": [asdict(r) for r in rows]},
                                       indent=1) + "\n")
    (args.out / "results.md").write_text(markdown(rows))
    print(f"\nprobes: this run {sum(r.ok for r in results)} of {len(results)} as expected, "
          f"{sum(r.traceback for r in results)} with a raw traceback, {wall:.0f} s (load {' '.join(load_before)} -> "
          f"{' '.join(load_after)}); stored: {summary['as_expected']} of {len(rows)} as expected; "
          f"table: {args.out / 'results.md'}")
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
