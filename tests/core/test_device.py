"""Tests for core.device: BOOK_DEVICE read in one place, and the same function the runtime exports."""

from __future__ import annotations

import pytest
import torch

from chapter_code.core import device, runtime


def test_runtime_exports_the_same_function_and_error() -> None:
    assert runtime.pick_device is device.pick_device
    assert runtime.SettingError is device.SettingError


@pytest.mark.parametrize(("env", "expected"), [("cpu", "cpu"), (" CPU ", "cpu")])
def test_cpu_spellings(monkeypatch: pytest.MonkeyPatch, env: str, expected: str) -> None:
    monkeypatch.setenv("BOOK_DEVICE", env)
    assert device.pick_device() == torch.device(expected)


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "mps", "cuda0"])
def test_unknown_names_are_one_line_errors(monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    monkeypatch.setenv("BOOK_DEVICE", bad)
    with pytest.raises(device.SettingError, match=r"^BOOK_DEVICE must be 'cpu', 'cuda' or 'cuda:N'; got "):
        device.pick_device()


def test_cuda_asked_for_without_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(device.SettingError, match="sees no CUDA device"):
        device.pick_device("cuda:1")
