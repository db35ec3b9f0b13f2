"""What a build knows of the machine without importing PyTorch: the CPU's kernel
pins, the output profiles, the checked ``BOOK_*`` settings and the record of what a
build ran on.

The build's own process reads these (to name a machine's profile, describe it, key
outputs on the settings, pass the pins to every kernel it starts) and never needs the
tensors, so it does not pay for importing torch. :mod:`chapter_code.core.numerics`
imports every name here, pins the kernels and then imports torch; a chapter reaches it
through :mod:`chapter_code.core.runtime`, never this module directly.

Pages: none (the build's machinery).
"""

from __future__ import annotations

import os
import platform
import subprocess
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SEED = 0
DEFAULT_THREADS = 1


class SettingError(ValueError):
    """A ``BOOK_*`` setting this machine cannot honour; the message is one line naming
    it and what it accepts.
    """


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


def is_gpu_profile(profile: str) -> bool:
    """Whether ``profile`` names a GPU kind (``cuda-sm90``), whose baselines are
    recorded per GPU software.
    """
    return (
        profile.startswith(GPU_PROFILE_PREFIX)
        and profile[len(GPU_PROFILE_PREFIX) :].isdigit()
    )


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


def _int_from_env(
    var: str, default: int, minimum: int, environ: Mapping[str, str] | None = None
) -> int:
    raw = (os.environ if environ is None else environ).get(var, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SettingError(
            f"{var} must be an integer >= {minimum}; got {raw!r}"
        ) from None
    if value < minimum:
        raise SettingError(f"{var} must be an integer >= {minimum}; got {value}")
    return value


@dataclass(frozen=True)
class Settings:
    """The build's settings, checked, each in one spelling: what the build keys outputs
    and runs on.
    """

    # "cpu" or "cuda:N" ("cuda" and an unset variable on a CUDA machine are "cuda:0")
    device: str
    threads: int
    seed: int

    def as_env(self) -> dict[str, str]:
        """The settings as the variables that set them, e.g. ``{"BOOK_DEVICE": "cpu",
        ...}``.
        """
        return {
            "BOOK_DEVICE": self.device,
            "BOOK_THREADS": str(self.threads),
            "BOOK_SEED": str(self.seed),
        }


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
