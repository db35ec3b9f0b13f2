"""Tests for core.device: BOOK_DEVICE read in one place, and the same function the
runtime exports."""

from __future__ import annotations

import pytest
import torch

from chapter_code.core import device, runtime


def test_runtime_exports_the_same_function_and_error() -> None:
    assert runtime.pick_device is device.pick_device
    assert runtime.SettingError is device.SettingError


@pytest.mark.parametrize(("env", "expected"), [("cpu", "cpu"), (" CPU ", "cpu")])
def test_cpu_spellings(
    monkeypatch: pytest.MonkeyPatch, env: str, expected: str
) -> None:
    monkeypatch.setenv("BOOK_DEVICE", env)
    assert device.pick_device() == torch.device(expected)


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "mps", "cuda0"])
def test_unknown_names_are_one_line_errors(
    monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    monkeypatch.setenv("BOOK_DEVICE", bad)
    with pytest.raises(
        device.SettingError,
        match=r"^BOOK_DEVICE must be 'cpu', 'cuda' or 'cuda:N'; got ",
    ):
        device.pick_device()


def test_cuda_asked_for_without_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(device.SettingError, match="sees no CUDA device"):
        device.pick_device("cuda:1")


@pytest.mark.parametrize(("available", "expected"), [(True, "cuda"), (False, "cpu")])
def test_unset_or_blank_book_device_takes_cuda_when_present_else_cpu(
    monkeypatch: pytest.MonkeyPatch, available: bool, expected: str
) -> None:
    # Pins the default: no BOOK_DEVICE (read as "", not None or another default) and a
    # blank one both mean "CUDA if torch sees it, else CPU", spelled as torch spells
    # them. torch.device("cuda") is only a name: making it needs no GPU.
    monkeypatch.setattr(torch.cuda, "is_available", lambda: available)
    monkeypatch.delenv("BOOK_DEVICE", raising=False)
    assert device.pick_device() == torch.device(expected)
    assert str(device.pick_device()) == expected
    monkeypatch.setenv("BOOK_DEVICE", "  ")
    assert device.pick_device() == torch.device(expected)


@pytest.mark.parametrize(
    ("asked", "expected"),
    [("cuda", "cuda"), (" CUDA:1 ", "cuda:1"), ("cuda:0", "cuda:0")],
)
def test_a_cuda_name_gives_that_device_when_cuda_is_present(
    monkeypatch: pytest.MonkeyPatch, asked: str, expected: str
) -> None:
    # Pins that a CUDA name (any case, padded) comes back as that device, index
    # included, whether it is passed in or read from BOOK_DEVICE; torch's availability
    # is faked.
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert device.pick_device(asked) == torch.device(expected)
    assert device.pick_device(asked).index == torch.device(expected).index
    monkeypatch.setenv("BOOK_DEVICE", asked)
    assert device.pick_device() == torch.device(expected)


def test_a_requested_name_wins_over_book_device(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Pins the order of the sources: the argument first, BOOK_DEVICE only when it is
    # None.
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setenv("BOOK_DEVICE", "cuda:1")
    assert device.pick_device("cpu") == torch.device("cpu")
    assert device.pick_device(None) == torch.device("cuda:1")
