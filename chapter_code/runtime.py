"""The one place where a build decides its device, seeds and thread count.

Every chapter calls :func:`setup` in its first code cell, and every test that
needs a seeded generator calls :func:`seed_everything`. Nothing else in the
book sets a seed, a thread count or a device, so two builds on the same machine
print the same numbers, and the build report can say exactly what ran where.

Environment variables (read once, by :func:`setup`):

``BOOK_DEVICE``
    ``cpu``, ``cuda`` or ``cuda:N``; unset means CUDA when available, else CPU.
``BOOK_THREADS``
    CPU threads for PyTorch's intra-op pool; unset means 1. The book's models
    are small, so one thread per chapter is as fast as two, avoids threads
    spinning against each other when several kernels share the cores, and lets
    the engine run one chapter per core. The CPU baselines assume 1.
``BOOK_SEED``
    The base seed; unset means 0.

Pages: every chapter (first cell), the introduction's build-information table.
"""

from __future__ import annotations

import os
import platform
import random
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

DEFAULT_SEED = 0
DEFAULT_THREADS = 1
REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Fingerprint:
    """What a build ran on; printed by the introduction and the build report."""

    device: str
    device_name: str
    profile: str  # "cpu" or "cuda": which set of recorded outputs applies
    torch_version: str
    cuda_version: str
    python_version: str
    threads: int
    seed: int
    deterministic_algorithms: bool
    git_commit: str

    def as_rows(self) -> list[tuple[str, str]]:
        """(label, value) pairs in display order, for a two-column table."""
        labels = {
            "device": "device",
            "device_name": "device name",
            "profile": "output profile",
            "torch_version": "PyTorch",
            "cuda_version": "CUDA",
            "python_version": "Python",
            "threads": "CPU threads",
            "seed": "base seed",
            "deterministic_algorithms": "deterministic algorithms",
            "git_commit": "git commit",
        }
        return [(labels[k], str(v)) for k, v in asdict(self).items()]


def pick_device(requested: str | None = None) -> torch.device:
    """Return the build's device: ``requested``, else ``$BOOK_DEVICE``, else CUDA if present, else CPU."""
    name = requested if requested is not None else os.environ.get("BOOK_DEVICE", "")
    name = name.strip().lower()
    if not name:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    if name == "cuda" or name.startswith("cuda:"):
        if not torch.cuda.is_available():
            raise RuntimeError(
                f"BOOK_DEVICE={name!r} asks for CUDA, but this PyTorch build sees no CUDA device; "
                "unset BOOK_DEVICE or set it to 'cpu'"
            )
        return torch.device(name)
    raise ValueError(f"BOOK_DEVICE must be 'cpu', 'cuda' or 'cuda:N'; got {name!r}")


def _int_from_env(var: str, default: int, minimum: int) -> int:
    raw = os.environ.get(var, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{var} must be an integer >= {minimum}; got {raw!r}") from None
    if value < minimum:
        raise ValueError(f"{var} must be an integer >= {minimum}; got {value}")
    return value


def seed_everything(seed: int) -> None:
    """Seed Python's, NumPy's and PyTorch's generators (CPU and every CUDA device)."""
    if not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative int; got {seed!r}")
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # seeds CUDA generators too


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


_STATE: dict[str, object] = {}


def setup(seed: int | None = None) -> torch.device:
    """Fix threads, seeds and determinism for this process and return the device.

    Call once at the top of a chapter. Calling it again re-seeds and returns the
    same device, so a cell can restart a seeded experiment.
    """
    threads = _int_from_env("BOOK_THREADS", DEFAULT_THREADS, 1)
    base_seed = _int_from_env("BOOK_SEED", DEFAULT_SEED, 0) if seed is None else seed
    device = pick_device()
    torch.set_num_threads(threads)
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=True)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = False
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    seed_everything(base_seed)
    _STATE.update(device=device, threads=threads, seed=base_seed)
    return device


def fingerprint() -> Fingerprint:
    """Describe the current build; call :func:`setup` first."""
    if "device" not in _STATE:
        raise RuntimeError("call chapter_code.runtime.setup() before fingerprint()")
    device = _STATE["device"]
    assert isinstance(device, torch.device)
    if device.type == "cuda":
        device_name = torch.cuda.get_device_name(device)
    else:
        device_name = _cpu_name()
    return Fingerprint(
        device=str(device),
        device_name=device_name,
        profile=device.type,
        torch_version=torch.__version__,
        cuda_version=torch.version.cuda or "none",
        python_version=platform.python_version(),
        threads=int(_STATE["threads"]),  # type: ignore[arg-type]
        seed=int(_STATE["seed"]),  # type: ignore[arg-type]
        deterministic_algorithms=torch.are_deterministic_algorithms_enabled(),
        git_commit=_git_commit(),
    )
