"""Tests for chapter_code.runtime: device choice, seeding, threads, fingerprint."""

from __future__ import annotations

import pytest
import torch

from chapter_code import runtime


def test_pick_device_defaults_and_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BOOK_DEVICE", raising=False)
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert runtime.pick_device().type == expected
    monkeypatch.setenv("BOOK_DEVICE", "cpu")
    assert runtime.pick_device() == torch.device("cpu")


def test_pick_device_rejects_unknown_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOOK_DEVICE", "tpu")
    with pytest.raises(ValueError, match="BOOK_DEVICE must be 'cpu', 'cuda' or 'cuda:N'"):
        runtime.pick_device()


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error on a machine without CUDA")
def test_asking_for_missing_cuda_fails_clearly() -> None:
    with pytest.raises(RuntimeError, match="sees no CUDA device"):
        runtime.pick_device("cuda")


def test_setup_pins_threads_and_seeds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOOK_THREADS", "1")
    monkeypatch.setenv("BOOK_DEVICE", "cpu")
    before = torch.get_num_threads()
    try:
        runtime.setup(seed=7)
        assert torch.get_num_threads() == 1
        a = torch.rand(3)
        runtime.setup(seed=7)
        torch.testing.assert_close(torch.rand(3), a)
        fp = runtime.fingerprint()
        assert fp.threads == 1
        assert fp.seed == 7
        assert fp.profile == runtime.output_profile(torch.device("cpu"))
        assert fp.torch_version == torch.__version__
        assert dict(fp.as_rows())["CPU threads"] == "1"
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize(("var", "value"), [("BOOK_THREADS", "0"), ("BOOK_THREADS", "two"), ("BOOK_SEED", "-1")])
def test_bad_environment_values_are_named(monkeypatch: pytest.MonkeyPatch, var: str, value: str) -> None:
    monkeypatch.setenv(var, value)
    with pytest.raises(ValueError, match=var):
        runtime.setup()


def test_seed_everything_rejects_negative_seed() -> None:
    with pytest.raises(ValueError, match="seed must be a non-negative int"):
        runtime.seed_everything(-1)


def test_fingerprint_shows_the_profile_and_the_cpu_pins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOOK_DEVICE", "cpu")
    runtime.setup()
    fp = runtime.fingerprint()
    if runtime.cpu_supports_pins():
        assert fp.profile == "cpu-avx2"
        assert fp.cpu_kernels == ("AVX2 (pinned: ATEN_CPU_CAPABILITY=avx2, ONEDNN_MAX_CPU_ISA=AVX2, "
                                  "MKL_CBWR=AVX2)")
    else:
        assert fp.profile.endswith("-unpinned")
    assert "AVX2" in runtime.describe_profile("cpu-avx2")
    assert "no recorded baseline applies" in runtime.describe_profile("cpu-aarch64-unpinned")


def test_profile_of_a_machine_without_avx2_is_unpinned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime, "cpu_supports_pins", lambda: False)
    monkeypatch.setattr(runtime.platform, "machine", lambda: "aarch64")
    assert runtime.output_profile(torch.device("cpu")) == "cpu-aarch64-unpinned"
    assert runtime.output_profile(torch.device("cuda")) == "cuda"


@pytest.mark.skipif(not runtime.cpu_supports_pins(), reason="this CPU cannot run the pinned AVX2 kernels")
def test_setup_refuses_to_run_with_the_pins_removed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MKL_CBWR", "AUTO")
    with pytest.raises(RuntimeError, match="CPU numerics are not pinned"):
        runtime.setup()


@pytest.mark.skipif(not runtime.cpu_supports_pins(), reason="this CPU cannot run the pinned AVX2 kernels")
def test_a_process_that_imports_torch_first_still_gets_the_pins_from_its_parent() -> None:
    import subprocess
    import sys

    code = "import torch; print(torch.backends.cpu.get_cpu_capability())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "AVX2"  # the test process's environment carries the pins to its children
