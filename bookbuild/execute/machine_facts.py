"""This machine's facts that take PyTorch to read, kept: the checked ``BOOK_*``
settings, the output profile, the GPU software and what the build runs on.

Reading them imports torch (about 2 s on the project's machine), and a build that
changes no chapter needs nothing else from torch. So the build's command line
(:func:`kept`) reads them through :func:`fact`, which keeps them in
``_build/engine/machine.json`` under a key of everything they depend on
(:func:`facts_key`): the settings and device variables, the pins in force, the CPU's
name and flags, the NVIDIA driver and device nodes, the installed torch (its ``RECORD``)
and NVIDIA libraries, the Python, and the source of the four modules that compute them.
The git commit of the report is read afresh, and the pins themselves need no torch
(:mod:`chapter_code.core.machine`). A library call (a test that fakes a GPU) measures
each time.

A changed key measures them again; a damaged file is measured again and rewritten, an
unwritable one measured every time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import sys
from collections.abc import Iterator
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any

from bookbuild import files
from chapter_code.core import machine

#: Environment variables the facts depend on besides the pins'.
VARIABLES = (
    "BOOK_DEVICE",
    "BOOK_THREADS",
    "BOOK_SEED",
    "BOOK_NUMERICS",
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "NVIDIA_VISIBLE_DEVICES",
    "PYTORCH_NVML_BASED_CUDA_CHECK",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
)
#: The modules that compute the facts (their source is in the key).
SOURCES = ("machine", "numerics", "device", "runtime")
#: Keys kept in the file at once (the pinned and the probe's numerics, a device or two).
KEEP = 8
FILE_NAME = "machine.json"


def _read(path: str) -> str:
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return ""


def _cpu_lines() -> list[str]:
    """The first ``model name`` and ``flags`` lines of ``/proc/cpuinfo``."""
    wanted: dict[str, str] = {}
    for line in _read("/proc/cpuinfo").splitlines():
        name = line.split(":", 1)[0].strip()
        if name in ("model name", "flags") and name not in wanted:
            wanted[name] = line
    return [wanted.get("model name", ""), wanted.get("flags", "")]


def _gpu_lines() -> list[str]:
    """The device nodes a GPU runtime opens (NVIDIA, WSL's, ROCm's), the NVIDIA driver's
    version and each NVIDIA GPU's description."""
    try:
        nodes = sorted(
            n
            for n in os.listdir("/dev")
            if n.startswith("nvidia") or n in ("dxg", "kfd")
        )
    except OSError:
        nodes = []
    gpus = Path("/proc/driver/nvidia/gpus")
    described = (
        [_read(str(g / "information")) for g in sorted(gpus.iterdir())]
        if gpus.is_dir()
        else []
    )
    return [*nodes, _read("/proc/driver/nvidia/version"), *described]


def _torch_install() -> list[str]:
    """torch's version and ``RECORD``, and the NVIDIA libraries installed beside it."""
    try:
        torch = metadata.distribution("torch")
    except metadata.PackageNotFoundError:
        return ["torch missing"]
    site = Path(str(torch.locate_file("")))
    try:
        nvidia = sorted(n for n in os.listdir(site) if n.startswith("nvidia_"))
    except OSError:
        nvidia = []
    return [torch.version, torch.read_text("RECORD") or "", *nvidia]


def _source_dir() -> Path:
    return Path(machine.__file__).resolve().parent


def pins_in_force() -> dict[str, str | None]:
    """The pins' variables as importing :mod:`chapter_code.core.numerics` leaves them
    (``pin_cpu_numerics`` then ``pin_cuda_numerics``), without setting them: the same
    before and after the build pins its own process, so both read one key."""
    names = sorted({*machine.CPU_PINS, *machine.PROBE_PINS, *machine.CUDA_PINS})
    pins = {name: os.environ.get(name) for name in names}
    if machine.cpu_supports_pins():
        try:
            pins.update(machine.active_pins())
        except machine.SettingError:  # a bad BOOK_NUMERICS: measured, never kept
            pass
    for name, value in machine.CUDA_PINS.items():
        if pins[name] is None:
            pins[name] = value
    return pins


def facts_key() -> str:
    """A SHA-256 of everything :func:`measure` depends on (see the module's
    docstring)."""
    parts = [
        sys.executable,
        sys.version,
        platform.machine(),
        *(f"{name}={os.environ.get(name)!r}" for name in VARIABLES),
        *(f"{name}={value!r}" for name, value in pins_in_force().items()),
        *_cpu_lines(),
        *_gpu_lines(),
        *_torch_install(),
        *(_read(str(_source_dir() / f"{name}.py")) for name in SOURCES),
    ]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


#: The facts, by name.
NAMES = ("settings", "profile", "gpu", "fingerprint")


def measure_one(name: str) -> Any:
    """One fact (one of :data:`NAMES`), read through torch in this process; a
    ``BOOK_*`` setting that cannot be used here raises
    :class:`chapter_code.core.machine.SettingError`."""
    from chapter_code.core import numerics, runtime

    checked = runtime.settings()
    if name == "settings":
        return asdict(checked)
    if name == "fingerprint":
        runtime.setup()
        fingerprint = asdict(runtime.fingerprint())
        del fingerprint["git_commit"]  # read afresh: it changes with every commit
        return fingerprint
    device = runtime.pick_device(checked.device)
    if name == "profile":
        return numerics.output_profile(device)
    if name == "gpu":
        return numerics.gpu_software(device)
    raise ValueError(f"name must be one of {NAMES}; got {name!r}")


_MEMO: dict[str, dict[str, Any]] = {}
#: Whether :func:`fact` keeps what it measures: the build's command line turns it on
#: (:func:`kept`). A library call (a test that fakes a GPU, a tool) measures each time.
_KEEP = False


@contextlib.contextmanager
def kept() -> Iterator[None]:
    """Keep the facts inside the block, in this process and under the build folder (as
    before it after)."""
    global _KEEP
    before, _KEEP = _KEEP, True
    try:
        yield
    finally:
        _KEEP = before


def fact(build_dir: Path, name: str) -> Any:
    """One fact of this machine and environment (one of :data:`NAMES`).

    Once :func:`keep` was called, all of them are measured together on a miss and kept
    in this process and in ``build_dir/engine/machine.json`` under :func:`facts_key`.
    A setting that cannot be used raises
    :class:`chapter_code.core.machine.SettingError` and nothing is kept, so fixing it
    is seen at once.
    """
    if name not in NAMES:
        raise ValueError(f"name must be one of {NAMES}; got {name!r}")
    if not _KEEP:
        return measure_one(name)
    key = facts_key()
    if key not in _MEMO:
        _MEMO[key] = _kept(build_dir / "engine" / FILE_NAME, key)
    return _MEMO[key][name]


def _kept(path: Path, key: str) -> dict[str, Any]:
    # {"entries": [[key, facts], ...]}, the most recently measured last
    try:
        stored = {str(k): v for k, v in json.loads(path.read_text())["entries"]}
    except (OSError, ValueError, KeyError, TypeError):
        stored = {}
    found = stored.get(key)
    if isinstance(found, dict) and set(NAMES) <= set(found):
        return found
    found = {name: measure_one(name) for name in NAMES}
    stored.pop(key, None)
    entries = [*list(stored.items())[-(KEEP - 1) :], (key, found)]
    try:
        files.write_json(path, {"entries": entries})
    except OSError:  # a read-only build folder: measured again next time
        pass
    return found


def settings(build_dir: Path) -> machine.Settings:
    """The checked ``BOOK_*`` settings (as ``runtime.settings``); a value this machine
    cannot use raises :class:`chapter_code.core.machine.SettingError`."""
    return machine.Settings(**fact(build_dir, "settings"))


def fingerprint(build_dir: Path) -> machine.Fingerprint:
    """What the build runs on (``runtime.fingerprint`` after ``runtime.setup``), with
    the current commit."""
    return machine.Fingerprint(
        **fact(build_dir, "fingerprint"), git_commit=machine._git_commit()
    )
