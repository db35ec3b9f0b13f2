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
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

#: Environment variables that fix which code paths PyTorch's CPU kernels take.
#: ATen's vectorised kernels, oneDNN and MKL each pick the widest instruction set
#: the CPU offers; AVX-512 kernels sum in a different order from AVX2 ones, so
#: the last bits of a result (and, through training, whole numbers on a page)
#: depend on the CPU. Capping all three at AVX2 removes most of that. MKL's
#: ``AVX2,STRICT`` branch is its strict conditional numerical reproducibility
#: mode; on an AMD CPU MKL takes its own automatic branch whatever this says
#: (measured: the same bits as without it), so Intel and AMD machines still run
#: different sgemm and vector-maths kernels for some shapes. The book therefore
#: compares every output at the precision it really has (see the gate), and
#: :data:`PROBE_PINS` lets one machine see another CPU's last bits.
CPU_PINS: dict[str, str] = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "MKL_CBWR": "AVX2,STRICT",
}
#: The fragility probe's code paths (``BOOK_NUMERICS=probe``, ``make check-portable``):
#: legitimate kernels that round differently from the pinned ones on every x86-64
#: machine (MKL's SSE2-era compatible branch, ATen's scalar kernels, oneDNN's SSE4.1
#: kernels), so an output that depends on the last bits moves under it.
PROBE_PINS: dict[str, str] = {
    "ATEN_CPU_CAPABILITY": "default",
    "ONEDNN_MAX_CPU_ISA": "SSE41",
    "MKL_CBWR": "COMPATIBLE",
}
#: ``BOOK_NUMERICS`` names which of these a process pins: unset or ``pinned`` is
#: :data:`CPU_PINS`, ``probe`` is :data:`PROBE_PINS`.
NUMERICS_PATHS: dict[str, dict[str, str]] = {"pinned": CPU_PINS, "probe": PROBE_PINS}
PINNED_PROFILE = "cpu-avx2"
PROFILE_DESCRIPTIONS: dict[str, str] = {
    PINNED_PROFILE: (
        "x86-64 CPUs with AVX2 and FMA (Intel or AMD, with or without AVX-512), "
        "kernels capped at their AVX2 code paths; the last bits of some results "
        "differ between vendors, so outputs are compared at their declared precision"
    )
}
#: Environment variables that make CUDA's libraries deterministic. cuBLAS reads its
#: workspace setting when CUDA initialises, so it is set at import, with the CPU pins; a
#: value already set (``:16:8``, also deterministic) is kept.
CUDA_PINS: dict[str, str] = {"CUBLAS_WORKSPACE_CONFIG": ":4096:8"}
#: The prefix of a GPU's output profile: ``cuda-sm90`` is compute capability 9.0
#: (Hopper).
GPU_PROFILE_PREFIX = "cuda-sm"


def cpu_supports_pins() -> bool:
    """True on an x86-64 CPU with AVX2 and FMA, the instruction sets the pinned kernels
    need.
    """
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                return {"avx2", "fma"} <= flags
    except OSError:
        pass
    return False


def numerics_path(environ: Mapping[str, str] | None = None) -> str:
    """``BOOK_NUMERICS``, checked: ``pinned`` (the default) or ``probe``."""
    raw = (os.environ if environ is None else environ).get("BOOK_NUMERICS", "")
    name = raw.strip().lower() or "pinned"
    if name not in NUMERICS_PATHS:
        raise SettingError(
            f"BOOK_NUMERICS must be one of {', '.join(NUMERICS_PATHS)}; got {raw!r}"
        )
    return name


def active_pins() -> dict[str, str]:
    """The pins this process sets: :data:`CPU_PINS`, or :data:`PROBE_PINS` under
    ``BOOK_NUMERICS=probe``.
    """
    return NUMERICS_PATHS[numerics_path()]


def pin_cpu_numerics() -> None:
    """Set :func:`active_pins` in this process's environment (inherited by every child
    process).

    They must be in place before torch is imported; importing this module does
    it. A torch imported earlier without them is caught by :func:`setup`.
    """
    if cpu_supports_pins():
        os.environ.update(active_pins())


def pin_cuda_numerics() -> None:
    """Set :data:`CUDA_PINS` in this process's environment unless already set; needed
    before CUDA initialises.
    """
    for name, value in CUDA_PINS.items():
        os.environ.setdefault(name, value)


pin_cpu_numerics()
pin_cuda_numerics()

import torch  # noqa: E402

from chapter_code.core.device import SettingError  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Fingerprint:
    """What a build ran on; printed by the introduction and the build report."""

    device: str
    device_name: str
    profile: str  # "cpu-avx2", "cuda", ...: which set of recorded outputs applies
    cpu_kernels: (
        str  # the instruction set ATen's CPU kernels dispatch to, and the pins in force
    )
    torch_version: str
    cuda_version: str
    python_version: str
    threads: int
    seed: int
    deterministic_algorithms: bool
    git_commit: str
    gpu_kind: str = "none"  # "sm90" on an H100 or H200; "none" on a CPU build
    cudnn_version: str = "none"
    gpu_numerics: str = (
        "none"  # the determinism settings in force on the GPU (:func:`gpu_numerics`)
    )

    def as_rows(self, with_commit: bool = True) -> list[tuple[str, str]]:
        """(label, value) pairs in display order, for a two-column table.

        A page whose outputs are cached leaves out the commit: the outputs stay
        valid across commits that change nothing they depend on, so the commit
        they were made at would read as the commit of the build. A CPU build
        leaves out the GPU rows (kind, cuDNN, GPU numerics).
        """
        labels = {
            "device": "device",
            "device_name": "device name",
            "profile": "output profile",
            "cpu_kernels": "CPU kernels",
            "torch_version": "PyTorch",
            "cuda_version": "CUDA",
            "gpu_kind": "GPU kind",
            "cudnn_version": "cuDNN",
            "gpu_numerics": "GPU numerics",
            "python_version": "Python",
            "threads": "CPU threads",
            "seed": "base seed",
            "deterministic_algorithms": "deterministic algorithms",
            "git_commit": "git commit",
        }
        values = asdict(self)
        hidden = {"git_commit"} if not with_commit else set()
        if self.gpu_kind == "none":  # a CPU build: no GPU rows
            hidden |= {"gpu_kind", "cudnn_version", "gpu_numerics"}
        return [
            (label, str(values[k])) for k, label in labels.items() if k not in hidden
        ]


def _git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


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


def is_gpu_profile(profile: str) -> bool:
    """Whether ``profile`` names a GPU kind (``cuda-sm90``), whose baselines are
    recorded per GPU software.
    """
    return (
        profile.startswith(GPU_PROFILE_PREFIX)
        and profile[len(GPU_PROFILE_PREFIX) :].isdigit()
    )


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


def describe_profile(profile: str) -> str:
    """One line on which machines share ``profile``'s outputs."""
    if is_gpu_profile(profile):
        digits = profile[len(GPU_PROFILE_PREFIX) :]
        return (
            f"NVIDIA GPUs of compute capability {digits[:-1]}.{digits[-1]} through "
            "CUDA, with deterministic algorithms, TF32 off and cuDNN deterministic; "
            "their baselines hold for the PyTorch, CUDA and cuDNN versions they were "
            "recorded with"
        )
    return PROFILE_DESCRIPTIONS.get(
        profile,
        "this machine only: its CPU cannot run the pinned AVX2 kernels, so no "
        "recorded baseline applies",
    )


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
