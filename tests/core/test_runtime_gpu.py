"""Tests for chapter_code.core.runtime on a GPU, with CUDA faked: profiles by GPU kind,
determinism, fingerprint.

No test here needs a GPU: each one fakes what the function reads from
``torch.cuda`` (presence, compute capability, device name) and cuDNN
(version), as ``test_runtime.py`` fakes ``/proc/cpuinfo``, and checks the exact
result. ``tests/bookbuild/test_gate.py`` checks what the gate does with a GPU
profile.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

from chapter_code.core import numerics, runtime


def fake_gpu(
    monkeypatch: pytest.MonkeyPatch,
    capability: tuple[int, int] = (9, 0),
    cuda: str | None = "12.8",
    cudnn: int | None = 91002,
) -> None:
    """Pretend a CUDA device of ``capability`` is present, with these CUDA and cuDNN
    versions."""
    monkeypatch.setattr(runtime.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(
        runtime.torch.cuda, "get_device_capability", lambda d=None: capability
    )
    monkeypatch.setattr(
        runtime.torch.cuda, "get_device_name", lambda d=None: "NVIDIA H200"
    )
    monkeypatch.setattr(runtime.torch.version, "cuda", cuda)
    monkeypatch.setattr(
        runtime.torch.backends.cudnn, "is_available", lambda: cudnn is not None
    )
    monkeypatch.setattr(runtime.torch.backends.cudnn, "version", lambda: cudnn)
    # no CUDA generators to seed here
    monkeypatch.setattr(runtime.torch, "manual_seed", lambda seed: None)


@pytest.fixture
def restored_torch_state():
    state = (
        torch.get_num_threads(),
        torch.are_deterministic_algorithms_enabled(),
        torch.is_deterministic_algorithms_warn_only_enabled(),
        torch.backends.cudnn.benchmark,
        torch.backends.cudnn.deterministic,
        torch.backends.cuda.matmul.allow_tf32,
        torch.backends.cudnn.allow_tf32,
        dict(runtime._STATE),
    )
    yield
    threads, det, warn, bench, cudnn_det, mm_tf32, cudnn_tf32, saved = state
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(det, warn_only=warn)
    torch.backends.cudnn.benchmark = bench
    torch.backends.cudnn.deterministic = cudnn_det
    torch.backends.cuda.matmul.allow_tf32 = mm_tf32
    torch.backends.cudnn.allow_tf32 = cudnn_tf32
    runtime._STATE.clear()
    runtime._STATE.update(saved)


def gpu_build(
    monkeypatch: pytest.MonkeyPatch, device: str = "cuda", **fake: object
) -> None:
    fake_gpu(monkeypatch, **fake)  # type: ignore[arg-type]
    monkeypatch.setattr(numerics, "check_pins", lambda: None)
    monkeypatch.setattr(numerics, "_git_commit", lambda: "0123456789ab")
    monkeypatch.setenv("BOOK_DEVICE", device)
    # monkeypatch restores it afterwards
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    for var in ("BOOK_THREADS", "BOOK_SEED"):
        monkeypatch.delenv(var, raising=False)


# ---- profiles
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("capability", "profile"),
    [
        ((9, 0), "cuda-sm90"),
        ((8, 0), "cuda-sm80"),
        ((8, 9), "cuda-sm89"),
        ((10, 0), "cuda-sm100"),
    ],
)
def test_a_gpu_profile_is_its_kind(
    monkeypatch: pytest.MonkeyPatch, capability: tuple[int, int], profile: str
) -> None:
    fake_gpu(monkeypatch, capability=capability)
    assert numerics.output_profile(torch.device("cuda")) == profile
    assert numerics.output_profile(torch.device("cuda:1")) == profile
    assert numerics.gpu_kind(torch.device("cuda")) == profile.removeprefix("cuda-")
    assert numerics.is_gpu_profile(profile)


def test_a_cpu_has_no_gpu_kind_and_no_gpu_software() -> None:
    assert numerics.gpu_kind(torch.device("cpu")) == "none"
    assert numerics.gpu_software(torch.device("cpu")) == {}


@pytest.mark.parametrize(
    "profile", ["cpu-avx2", "cuda", "cuda-smx", "cuda-sm", "cpu-aarch64-unpinned"]
)
def test_other_profiles_are_not_gpu_kinds(profile: str) -> None:
    assert not numerics.is_gpu_profile(profile)


def test_gpu_software_names_torch_cuda_and_cudnn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_gpu(monkeypatch, cuda="12.8", cudnn=91002)
    assert numerics.gpu_software(torch.device("cuda:0")) == {
        "torch": torch.__version__,
        "cuda": "12.8",
        "cudnn": "91002",
    }
    fake_gpu(monkeypatch, cuda=None, cudnn=None)
    assert numerics.gpu_software(torch.device("cuda")) == {
        "torch": torch.__version__,
        "cuda": "none",
        "cudnn": "none",
    }
    # cuDNN's version is not asked for when cuDNN is not available (it may raise there)
    monkeypatch.setattr(runtime.torch.backends.cudnn, "version", lambda: 1 / 0)
    assert numerics.gpu_software(torch.device("cuda"))["cudnn"] == "none"


def test_gpu_profile_description() -> None:
    text = numerics.describe_profile("cuda-sm90")
    assert text.startswith("NVIDIA GPUs of compute capability 9.0 through CUDA")
    assert "TF32 off" in text
    assert "PyTorch, CUDA and cuDNN versions" in text
    assert numerics.describe_profile("cuda-sm100").startswith(
        "NVIDIA GPUs of compute capability 10.0 "
    )
    assert numerics.describe_profile("cuda-sm86").startswith(
        "NVIDIA GPUs of compute capability 8.6 "
    )
    assert numerics.describe_profile("cuda-sm120").startswith(
        "NVIDIA GPUs of compute capability 12.0 "
    )
    assert text == (
        "NVIDIA GPUs of compute capability 9.0 through CUDA, with deterministic "
        "algorithms, TF32 off and cuDNN deterministic; their baselines hold for the "
        "PyTorch, CUDA and cuDNN versions they were recorded with"
    )


def test_gpu_kind_asks_for_the_capability_of_the_device_it_is_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    capability = {0: (8, 0), 1: (9, 0)}
    monkeypatch.setattr(
        runtime.torch.cuda,
        "get_device_capability",
        lambda d: capability[torch.device(d).index],
    )
    assert numerics.gpu_kind(torch.device("cuda:1")) == "sm90"
    assert numerics.gpu_kind(torch.device("cuda:0")) == "sm80"
    assert numerics.gpu_kind(torch.device("cpu")) == "none"


# ---- the CUDA pins
# --------------------------------------------------------------------------------------


def test_importing_runtime_sets_cublas_workspace_before_cuda_starts() -> None:
    env = {k: v for k, v in os.environ.items() if k != "CUBLAS_WORKSPACE_CONFIG"}
    probe = (
        "import os, chapter_code.core.runtime; "
        "print(os.environ['CUBLAS_WORKSPACE_CONFIG'])"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ":4096:8"


def test_a_deterministic_cublas_setting_already_chosen_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":16:8")
    numerics.pin_cuda_numerics()
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":16:8"
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG")
    numerics.pin_cuda_numerics()
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"


# ---- setup and the fingerprint on a GPU
# ----------------------------------------------------------------------


@pytest.mark.usefixtures("restored_torch_state")
def test_setup_on_cuda_makes_every_kernel_deterministic(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gpu_build(monkeypatch)
    torch.use_deterministic_algorithms(False)
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.deterministic = False
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    assert runtime.setup() == torch.device("cuda")
    assert torch.are_deterministic_algorithms_enabled()
    assert not torch.is_deterministic_algorithms_warn_only_enabled()
    assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == (
        False,
        False,
    )
    assert (torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark) == (
        True,
        False,
    )
    assert numerics.gpu_numerics() == (
        "deterministic algorithms, TF32 off, cuDNN deterministic, cuDNN benchmark off, "
        "CUBLAS_WORKSPACE_CONFIG=:4096:8"
    )


@pytest.mark.usefixtures("restored_torch_state")
def test_setup_on_cpu_only_warns_about_nondeterministic_kernels(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gpu_build(monkeypatch, device="cpu")
    torch.backends.cudnn.deterministic = False
    assert runtime.setup() == torch.device("cpu")
    assert torch.is_deterministic_algorithms_warn_only_enabled()
    # the CUDA settings are left alone
    assert torch.backends.cudnn.deterministic is False


@pytest.mark.usefixtures("restored_torch_state")
def test_gpu_numerics_reads_the_settings_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.deterministic = False
    torch.backends.cudnn.benchmark = True
    assert numerics.gpu_numerics() == (
        "deterministic algorithms: warn only, TF32 on, cuDNN not deterministic, cuDNN "
        "benchmark on, CUBLAS_WORKSPACE_CONFIG=(unset)"
    )


def fake_gpu_numerics(
    monkeypatch: pytest.MonkeyPatch,
    *,
    enabled: bool,
    warn_only: bool,
    matmul_tf32: bool,
    cudnn_tf32: bool,
    deterministic: bool,
    benchmark: bool,
) -> None:
    monkeypatch.setattr(
        runtime.torch, "are_deterministic_algorithms_enabled", lambda: enabled
    )
    monkeypatch.setattr(
        runtime.torch,
        "is_deterministic_algorithms_warn_only_enabled",
        lambda: warn_only,
    )
    monkeypatch.setattr(runtime.torch.backends.cuda.matmul, "allow_tf32", matmul_tf32)
    monkeypatch.setattr(runtime.torch.backends.cudnn, "allow_tf32", cudnn_tf32)
    monkeypatch.setattr(runtime.torch.backends.cudnn, "deterministic", deterministic)
    monkeypatch.setattr(runtime.torch.backends.cudnn, "benchmark", benchmark)


GPU_NUMERICS_CASES = [
    # (enabled, warn_only, matmul TF32, cuDNN TF32, cuDNN deterministic, benchmark) ->
    # the line
    (
        (True, False, False, False, True, False),
        "deterministic algorithms, TF32 off, cuDNN deterministic, cuDNN benchmark off",
    ),
    (
        (True, True, False, False, True, False),
        "deterministic algorithms: warn only, TF32 off, cuDNN deterministic, cuDNN "
        "benchmark off",
    ),
    (
        (False, False, False, False, True, False),
        "deterministic algorithms: warn only, TF32 off, cuDNN deterministic, cuDNN "
        "benchmark off",
    ),
    (
        (True, False, True, False, True, False),
        "deterministic algorithms, TF32 on, cuDNN deterministic, cuDNN benchmark off",
    ),
    (
        (True, False, False, True, True, False),
        "deterministic algorithms, TF32 on, cuDNN deterministic, cuDNN benchmark off",
    ),
    (
        (True, False, False, False, False, True),
        "deterministic algorithms, TF32 off, cuDNN not deterministic, cuDNN benchmark "
        "on",
    ),
]


@pytest.mark.parametrize(("flags", "line"), GPU_NUMERICS_CASES)
def test_gpu_numerics_reads_back_each_setting_in_force(
    monkeypatch: pytest.MonkeyPatch, flags: tuple[bool, ...], line: str
) -> None:
    """Each setting read back on its own: deterministic (and not warn-only), TF32 on if
    either switch is, cuDNN's two flags, then cuBLAS's workspace pin as set or unset."""
    keys = (
        "enabled",
        "warn_only",
        "matmul_tf32",
        "cudnn_tf32",
        "deterministic",
        "benchmark",
    )
    fake_gpu_numerics(monkeypatch, **dict(zip(keys, flags, strict=True)))
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    assert numerics.gpu_numerics() == line + ", CUBLAS_WORKSPACE_CONFIG=:4096:8"
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG")
    assert numerics.gpu_numerics() == line + ", CUBLAS_WORKSPACE_CONFIG=(unset)"


@pytest.mark.usefixtures("restored_torch_state")
def test_fingerprint_of_a_gpu_build_names_its_kind_software_and_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gpu_build(monkeypatch, device="cuda:0")
    runtime.setup()
    fp = runtime.fingerprint()
    assert (fp.device, fp.device_name, fp.profile, fp.gpu_kind) == (
        "cuda:0",
        "NVIDIA H200",
        "cuda-sm90",
        "sm90",
    )
    assert (fp.cuda_version, fp.cudnn_version) == ("12.8", "91002")
    assert fp.gpu_numerics.startswith(
        "deterministic algorithms, TF32 off, cuDNN deterministic"
    )
    rows = dict(fp.as_rows())
    assert rows["output profile"] == "cuda-sm90"
    assert rows["GPU kind"] == "sm90"
    assert rows["cuDNN"] == "91002"
    assert rows["GPU numerics"] == fp.gpu_numerics
    labels = [label for label, _ in fp.as_rows()]
    assert (
        labels.index("CUDA")
        < labels.index("GPU kind")
        < labels.index("cuDNN")
        < labels.index("GPU numerics")
    )


@pytest.mark.usefixtures("restored_torch_state")
def test_fingerprint_of_a_cpu_build_shows_no_gpu_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gpu_build(monkeypatch, device="cpu")
    runtime.setup()
    fp = runtime.fingerprint()
    assert (fp.gpu_kind, fp.cudnn_version, fp.gpu_numerics) == ("none", "none", "none")
    labels = [label for label, _ in fp.as_rows()]
    assert not {"GPU kind", "cuDNN", "GPU numerics"} & set(labels)


def test_build_keys_count_gpu_software_only_on_a_gpu(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    from bookbuild.execute import engine
    from bookbuild.runs import memo

    monkeypatch.setenv("BOOK_DEVICE", "cpu")
    cpu_key, cpu_env = engine.environment_key(tmp_path), memo.environment(root=tmp_path)
    assert "gpu_software" not in cpu_env
    fake_gpu(monkeypatch)
    monkeypatch.setenv("BOOK_DEVICE", "cuda")
    gpu_key, gpu_env = engine.environment_key(tmp_path), memo.environment(root=tmp_path)
    assert gpu_env["profile"] == "cuda-sm90"
    assert gpu_env["gpu_software"] == {
        "torch": torch.__version__,
        "cuda": "12.8",
        "cudnn": "91002",
    }
    fake_gpu(monkeypatch, cudnn=90100)
    # another cuDNN: another key
    assert engine.environment_key(tmp_path) not in (gpu_key, cpu_key)
    monkeypatch.setenv("BOOK_DEVICE", "cpu")
    assert engine.environment_key(tmp_path) == cpu_key
