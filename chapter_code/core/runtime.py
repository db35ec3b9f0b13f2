"""The one place where a build decides its device, seeds and thread count.

Every chapter calls :func:`setup` in its first code cell, and every test that
needs a seeded generator calls :func:`seed_everything`. Nothing else in the
book sets a seed, a thread count or a device, so two builds on the same machine
print the same numbers, and the build report can say exactly what ran where.

Environment variables (read once, by :func:`setup`, and checked by :func:`settings`,
which the build also calls before any chapter starts; case and surrounding spaces do not
matter):

``BOOK_DEVICE``
    ``cpu``, ``cuda`` or ``cuda:N``; unset means CUDA when available, else CPU.
``BOOK_THREADS``
    CPU threads for PyTorch's intra-op pool; unset means 1. The book's models
    are small, so one thread per chapter is as fast as two, avoids threads
    spinning against each other when several kernels share the cores, and lets
    the engine run one chapter per core. The CPU baselines assume 1.
``BOOK_SEED``
    The base seed; unset means 0.

CPU numerics: importing this module pins the code paths of PyTorch's CPU kernels
before torch loads (see :data:`CPU_PINS`), for the process and every process it
starts (chapter kernels, worker pools, tests). On one machine the same inputs then
give bit-identical outputs, build after build. Across machines that is not
guaranteed: Intel and AMD processors run different matrix and vector-maths kernels
for some shapes, whatever the pins say, so the last bits of some results differ,
and a diverging training run magnifies them. The book therefore compares every
output at the precision it really has (a rounding-level value as its bound, a
chaotic run by what is robust, any other tolerance with its reason), and
``BOOK_NUMERICS=probe`` (:data:`PROBE_PINS`, ``make check-portable``) shows one
machine another CPU's last bits. x86-64 CPUs with AVX2 share the ``cpu-avx2``
output profile; a CPU that cannot honour the pins (an ARM CPU, an x86 CPU without
AVX2) is compared with that profile's baselines at the same declared precision.

GPU numerics: importing this module also sets :data:`CUDA_PINS` (cuBLAS's
fixed workspace, which cuBLAS reads when CUDA initialises), and :func:`setup`
on a CUDA device turns on PyTorch's deterministic algorithms (an operation
without a deterministic CUDA kernel raises instead of warning), turns TF32 off
for matmuls and cuDNN, and makes cuDNN deterministic without benchmarking. A
GPU's profile is its kind, ``cuda-sm<major><minor>`` (``cuda-sm90`` for an H100
or H200); its baselines hold only for the PyTorch, CUDA and cuDNN they were
recorded with (:func:`gpu_software`), which the build's keys include too.

Pages: every chapter (first cell), the introduction's build-information table.
"""

from __future__ import annotations

import os
import platform
import random
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

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

import numpy as np  # noqa: E402
import torch  # noqa: E402

from chapter_code.core.device import SettingError, pick_device  # noqa: E402

DEFAULT_SEED = 0
T = TypeVar("T")
DEFAULT_THREADS = 1
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


def settings(environ: Mapping[str, str] | None = None) -> Settings:
    """``BOOK_DEVICE``, ``BOOK_THREADS`` and ``BOOK_SEED`` (of ``environ``, else this
    process), checked.

    Case and surrounding spaces are ignored, and an unset variable is its default (the
    device is the one
    :func:`pick_device` picks), so every harmless spelling of one choice is one
    :class:`Settings`. A value this machine cannot use raises :class:`SettingError`,
    before anything runs.
    """
    env = os.environ if environ is None else environ
    device = pick_device(env.get("BOOK_DEVICE", ""))
    return Settings(
        device="cpu" if device.type == "cpu" else f"cuda:{device.index or 0}",
        threads=_int_from_env("BOOK_THREADS", DEFAULT_THREADS, 1, env),
        seed=_int_from_env("BOOK_SEED", DEFAULT_SEED, 0, env),
    )


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


def _check_pins() -> None:
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


_STATE: dict[str, object] = {}


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


def setup(seed: int | None = None) -> torch.device:
    """Fix threads, seeds and determinism for this process and return the device.

    Call once at the top of a chapter. Calling it again re-seeds and returns the
    same device, so a cell can restart a seeded experiment.
    """
    checked = settings()
    threads = checked.threads
    base_seed = checked.seed if seed is None else seed
    device = pick_device()
    _check_pins()
    torch.set_num_threads(threads)
    # in case the environment was cleared since import; CUDA reads it when it
    # initialises
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
        torch.backends.cudnn.benchmark = (
            False  # benchmarking picks kernels by timing: another run, another kernel
        )
    else:
        use_deterministic_algorithms(warn_only=True)
    seed_everything(base_seed)
    _STATE.update(device=device, threads=threads, seed=base_seed)
    return device


def fingerprint() -> Fingerprint:
    """Describe the current build; call :func:`setup` first."""
    if "device" not in _STATE:
        raise RuntimeError(
            "call chapter_code.core.runtime.setup() before fingerprint()"
        )
    device = _STATE["device"]
    assert isinstance(device, torch.device)
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
        threads=int(_STATE["threads"]),  # type: ignore[arg-type]
        seed=int(_STATE["seed"]),  # type: ignore[arg-type]
        deterministic_algorithms=torch.are_deterministic_algorithms_enabled(),
        git_commit=_git_commit(),
        gpu_kind=gpu_kind(device),
        cudnn_version=software.get("cudnn", "none"),
        gpu_numerics=gpu_numerics() if on_gpu else "none",
    )


#: What the book's build installs when it starts a chapter's kernel
#: (:func:`use_backend`); empty elsewhere.
_BACKEND: dict[str, Callable[..., Any]] = {}


def use_backend(
    *,
    run_once: Callable[..., Any] | None = None,
    load_sweep: Callable[..., Any] | None = None,
) -> None:
    """Hand :func:`run_once` and :func:`load_sweep` to the book's build: the one entry
    point between the two.

    The build (``bookbuild.execute.kernel_hooks.install``) calls this in every chapter's
    kernel before the first cell, with its memoizer and its checked sweep
    loader. Taught code never imports the build: a lab, a shell or a test that
    never calls this computes directly. ``None`` removes an entry.
    """
    for name, fn in (("run_once", run_once), ("load_sweep", load_sweep)):
        if fn is None:
            _BACKEND.pop(name, None)
        elif not callable(fn):
            raise TypeError(f"{name} must be callable or None; got {fn!r}")
        else:
            _BACKEND[name] = fn


def run_once(fn: Callable[..., T], /, *, data: Sequence[str] = (), **kwargs: Any) -> T:
    """Return ``fn(**kwargs)``, computing it only once per content of its code,
    arguments and data.

    Inside the book's build the result is memoized (the build's memoizer,
    installed by :func:`use_backend`): a later call with the same function
    source (and the sources of the ``chapter_code`` modules it imports), the
    same arguments, the same ``data`` files, packages and device profile reads
    the stored result back bit for bit. Outside the build (a lab, a student's
    notebook, a shell, a test) it simply calls ``fn``.
    """
    memoized = _BACKEND.get("run_once")
    if memoized is None:
        return fn(**kwargs)
    return memoized(fn, data=tuple(data), **kwargs)


class SweepRecordsUnavailable(RuntimeError):
    """:func:`load_sweep` was called outside the book's build, which alone checks
    records against the code.
    """


def load_sweep(
    name: str,
    config: str = "cpu",
    allow_partial: bool = False,
    none_if_unrun: bool = False,
    edition: str | None = None,
) -> Any:
    """The stored records of experiment sweep ``name`` (defined in
    :mod:`bookbuild.runs.registry`), checked.

    Inside the book's build every record is checked against the current code,
    parameters and data: a stale, damaged or missing record raises the build's
    ``SweepNotReady``, which names the sweep and the ``make experiments``
    command that refreshes it. ``allow_partial=True`` returns a partial sweep
    marked as such (``.complete`` false, ``.missing`` listed, ``.describe()``
    says PARTIAL), never silently averaged. ``none_if_unrun=True`` returns ``None``
    when the configuration has no record at all (a page that says the study has
    not run there yet). ``edition``: for a configuration re-run on each device,
    ``"cpu"`` or ``"gpu"`` reads that edition's records whatever this build's
    device (a page that sets the two side by side); by default, this build's.
    Outside the build there is no
    checked copy to fall back on, so this raises
    :class:`SweepRecordsUnavailable` saying how to read them.
    """
    loader = _BACKEND.get("load_sweep")
    if loader is None:
        raise SweepRecordsUnavailable(
            f"the records of sweep {name!r} are read and checked by the book's build; "
            f"outside it, run `python -m bookbuild experiments status {name}` in the "
            "repository, or the sweep's job function (bookbuild.runs.registry) "
            "directly"
        )
    return loader(
        name,
        config=config,
        allow_partial=allow_partial,
        none_if_unrun=none_if_unrun,
        edition=edition,
    )
