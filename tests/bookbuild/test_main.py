"""Tests for bookbuild.__main__: a setting the user can fix ends in one line and exit
status 2."""

from __future__ import annotations

import pytest

from bookbuild import __main__ as cli
from bookbuild import build, gate


@pytest.mark.parametrize("argv", [["check"], ["build", "--check"], ["accept"]])
def test_a_bad_setting_is_one_line_and_exit_2_before_anything_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, argv: list[str]
) -> None:
    def must_not_run(*args: object, **kwargs: object) -> int:
        pytest.fail("the command started work with a bad setting")

    for module, name in [(gate, "check"), (gate, "accept"), (build, "build")]:
        monkeypatch.setattr(module, name, must_not_run)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("BOOK_SEED", "abc")
    assert cli.main(argv) == 2
    captured = capsys.readouterr()
    assert (
        captured.err
        == f"python -m bookbuild {argv[0]}: BOOK_SEED must be an integer >= 0; "
        "got 'abc'\n"
    )
    assert captured.out == ""


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("gpu", "BOOK_DEVICE must be 'cpu', 'cuda' or 'cuda:N'; got 'gpu'"),
        (
            "cuda",
            "BOOK_DEVICE='cuda' asks for CUDA, but this PyTorch build sees no CUDA "
            "device; unset BOOK_DEVICE or set it to 'cpu'",
        ),
    ],
)
@pytest.mark.parametrize("argv", [["check"], ["build", "--only", "book/recurrence"]])
def test_a_device_this_machine_lacks_is_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
    argv: list[str],
    value: str,
    message: str,
) -> None:
    from chapter_code.core import runtime

    def must_not_run(*args: object, **kwargs: object) -> int:
        pytest.fail("the command started work with a bad setting")

    for module, name in [(gate, "check"), (build, "build_only")]:
        monkeypatch.setattr(module, name, must_not_run)
    # a CPU machine
    monkeypatch.setattr(runtime.torch.cuda, "is_available", lambda: False)
    monkeypatch.setenv("BOOK_DEVICE", value)
    assert cli.main(argv) == 2
    assert capsys.readouterr().err == f"python -m bookbuild {argv[0]}: {message}\n"
