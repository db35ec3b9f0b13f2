"""The machine's side of a build: numerics, output profiles, what a build ran on.

Importing this module pins the code paths of PyTorch's CPU kernels before torch loads
(see :data:`CPU_PINS`), for the process and every process it starts (chapter kernels,
worker pools, tests), and sets cuBLAS's deterministic workspace (:data:`CUDA_PINS`).
:mod:`chapter_code.core.runtime` imports it first, so a chapter, a lab or a script that
starts with ``from chapter_code.core import runtime`` is pinned. On one machine the same
inputs then give bit-identical outputs, build after build. Across machines that is not
guaranteed: Intel and AMD processors run different matrix and vector-maths kernels for
some shapes, whatever the pins say, so the last bits of some results differ, and a
diverging training run magnifies them. The book therefore compares every output at the
precision it really has (a rounding-level value as its bound, a chaotic run by what is
robust, any other tolerance with its reason), and ``BOOK_NUMERICS=probe``
(:data:`PROBE_PINS`, ``make check-portable``) shows one machine another CPU's last bits.
x86-64 CPUs with AVX2 share the ``cpu-avx2`` output profile; a CPU that cannot honour
the pins (an ARM CPU, an x86 CPU without AVX2) is compared with that profile's baselines
at the same declared precision.

On a CUDA device, :func:`make_deterministic` turns on PyTorch's deterministic algorithms
(an operation without a deterministic CUDA kernel raises instead of warning), turns TF32
off for matmuls and cuDNN, and makes cuDNN deterministic without benchmarking. A GPU's
profile is its kind, ``cuda-sm<major><minor>`` (``cuda-sm90`` for an H100 or H200); its
baselines hold only for the PyTorch, CUDA and cuDNN they were recorded with
(:func:`gpu_software`), which the build's keys include too.

Used by :func:`chapter_code.core.runtime.setup` and by the build (its keys, its gate and
its report); a reader never calls it."""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

# every name is also read as numerics.<name> (the build, the tests)
from chapter_code.core.machine import (  # noqa: F401
    CPU_PINS,
    CUDA_PINS,
    GPU_PROFILE_PREFIX,
    NUMERICS_PATHS,
    PINNED_PROFILE,
    PROBE_PINS,
    PROFILE_DESCRIPTIONS,
    REPO_ROOT,
    Fingerprint,
    SettingError,
    _git_commit,
    active_pins,
    cpu_supports_pins,
    describe_profile,
    is_gpu_profile,
    numerics_path,
    pin_cpu_numerics,
    pin_cuda_numerics,
)

pin_cpu_numerics()
pin_cuda_numerics()

import torch  # noqa: E402


def _cpu_name() -> str:
    """The CPU's model name where the OS tells it (Linux), else the architecture."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


def gpu_kind(device: torch.device) -> str:
    """The GPU's compute capability as ``sm<major><minor>`` (``sm90`` for an H100 or
    H200); ``none`` on a CPU.
    """
    if device.type != "cuda":
        return "none"
    major, minor = torch.cuda.get_device_capability(device)
    return f"sm{major}{minor}"


def gpu_software(device: torch.device) -> dict[str, str]:
    """What a GPU's outputs depend on besides its kind: PyTorch, CUDA and cuDNN
    versions; ``{}`` on a CPU.
    """
    if device.type != "cuda":
        return {}
    cudnn = (
        torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    )
    return {
        "torch": torch.__version__,
        "cuda": torch.version.cuda or "none",
        "cudnn": str(cudnn or "none"),
    }


def output_profile(device: torch.device) -> str:
    """Name the set of machines whose outputs agree bit for bit with this one's (see
    :data:`PROFILE_DESCRIPTIONS`).

    A GPU's profile is its kind, ``cuda-sm90``; its outputs agree only under the
    same :func:`gpu_software`, which the gate checks against its baselines.
    """
    if device.type == "cuda":
        return f"cuda-{gpu_kind(device)}"
    if cpu_supports_pins():
        return PINNED_PROFILE
    return f"cpu-{platform.machine().lower() or 'unknown'}-unpinned"


def gpu_numerics() -> str:
    """The GPU determinism settings in force, read back from torch, e.g. ``deterministic
    algorithms, TF32 off, ...``.
    """
    tf32 = torch.backends.cuda.matmul.allow_tf32 or torch.backends.cudnn.allow_tf32
    parts = [
        "deterministic algorithms"
        if torch.are_deterministic_algorithms_enabled()
        and not torch.is_deterministic_algorithms_warn_only_enabled()
        else "deterministic algorithms: warn only",
        "TF32 on" if tf32 else "TF32 off",
        "cuDNN deterministic"
        if torch.backends.cudnn.deterministic
        else "cuDNN not deterministic",
        "cuDNN benchmark on"
        if torch.backends.cudnn.benchmark
        else "cuDNN benchmark off",
        *[f"{k}={os.environ.get(k, '(unset)')}" for k in CUDA_PINS],
    ]
    return ", ".join(parts)


def cpu_kernels() -> str:
    """ATen's CPU instruction set and the pins in force, e.g. ``AVX2 (pinned:
    ATEN_CPU_CAPABILITY=avx2, ...)``.
    """
    capability = torch.backends.cpu.get_cpu_capability()
    pins = [f"{k}={os.environ[k]}" for k in CPU_PINS if k in os.environ]
    if numerics_path() == "probe":
        pins.append("BOOK_NUMERICS=probe")
    return (
        f"{capability} (pinned: {', '.join(pins)})"
        if pins
        else f"{capability} (not pinned)"
    )


def check_pins() -> None:
    if not cpu_supports_pins():
        return
    pins = active_pins()
    wrong = {k: os.environ.get(k) for k, v in pins.items() if os.environ.get(k) != v}
    capability = torch.backends.cpu.get_cpu_capability()
    if wrong or capability != pins["ATEN_CPU_CAPABILITY"].upper():
        raise RuntimeError(
            f"CPU numerics are not pinned (ATen kernels: {capability}; variables: "
            f"{wrong or 'set'}): torch ran "
            "an operation before chapter_code.core.runtime was imported, or the pins "
            "were changed. Import "
            "chapter_code.core.runtime before anything that imports torch (the first "
            "line of a chapter or script), "
            "and do not override " + ", ".join(CPU_PINS) + "."
        )


def use_deterministic_algorithms(warn_only: bool) -> None:
    """What ``torch.use_deterministic_algorithms(True, warn_only=...)`` does, without
    importing PyTorch's compiler.

    The public call also sets the compiler's ``deterministic`` option, and to do so
    it imports ``torch._inductor``, which takes about a second in every process
    that calls :func:`setup` (every chapter's kernel, every sweep job) though the
    book compiles nothing. Here the option is set where the compiler reads it when
    it is imported (``TORCHINDUCTOR_DETERMINISTIC``), or on its config if it
    already is, and the flag itself as the public call sets it
    (``tests/core/test_runtime.py`` checks both against the public call).
    """
    os.environ["TORCHINDUCTOR_DETERMINISTIC"] = "1"
    inductor = sys.modules.get("torch._inductor.config")
    if inductor is not None:
        inductor.deterministic = True  # type: ignore[attr-defined]
    torch._C._set_deterministic_algorithms(True, warn_only=warn_only)


def make_deterministic(device: torch.device) -> None:
    """Make every kernel on ``device`` deterministic.

    On a GPU: deterministic algorithms that raise, TF32 off, cuDNN deterministic
    without benchmarking. On a CPU: deterministic algorithms that warn.
    """
    # in case the environment was cleared since import (CUDA reads it at its start)
    pin_cuda_numerics()
    if device.type == "cuda":
        # On the GPU, every kernel must be deterministic: an operation without a
        # deterministic CUDA implementation raises (naming itself) rather than printing
        # a warning into a page.
        use_deterministic_algorithms(warn_only=False)
        torch.backends.cuda.matmul.allow_tf32 = (
            False  # TF32 rounds matmul inputs to 10 bits of mantissa
        )
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.deterministic = True
        # benchmarking picks kernels by timing: another run, another kernel
        torch.backends.cudnn.benchmark = False
    else:
        use_deterministic_algorithms(warn_only=True)


def fingerprint(device: torch.device, threads: int, seed: int) -> Fingerprint:
    """Describe a build on ``device`` with ``threads`` CPU threads and base ``seed``."""
    on_gpu = device.type == "cuda"
    device_name = torch.cuda.get_device_name(device) if on_gpu else _cpu_name()
    software = gpu_software(device)
    return Fingerprint(
        device=str(device),
        device_name=device_name,
        profile=output_profile(device),
        cpu_kernels=cpu_kernels(),
        torch_version=torch.__version__,
        cuda_version=torch.version.cuda or "none",
        python_version=platform.python_version(),
        threads=threads,
        seed=seed,
        deterministic_algorithms=torch.are_deterministic_algorithms_enabled(),
        git_commit=_git_commit(),
        gpu_kind=gpu_kind(device),
        cudnn_version=software.get("cudnn", "none"),
        gpu_numerics=gpu_numerics() if on_gpu else "none",
    )
