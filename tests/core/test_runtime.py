"""Tests for chapter_code.core.runtime: device choice, seeding, threads, fingerprint.

Value tests for chapter_code.core.runtime, one function at a time (issue 20).

They fake what a function reads (``/proc/cpuinfo``, the machine name, CUDA's
presence, the git repository, the memoizing build) so that each branch runs on
any machine, in well under a second, and the exact result is checked. The
mutation run of ``runtime`` uses these and ``test_runtime.py`` only (see
``mutation/config.toml``): the build engine's tests, which also import the
module, take minutes per mutant.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
import torch

from chapter_code.core import machine as host
from chapter_code.core import numerics, runtime


def test_pick_device_defaults_and_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BOOK_DEVICE", raising=False)
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert runtime.pick_device().type == expected
    monkeypatch.setenv("BOOK_DEVICE", "cpu")
    assert runtime.pick_device() == torch.device("cpu")


def test_pick_device_rejects_unknown_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOOK_DEVICE", "tpu")
    with pytest.raises(
        ValueError, match="BOOK_DEVICE must be 'cpu', 'cuda' or 'cuda:N'"
    ):
        runtime.pick_device()


@pytest.mark.skipif(
    torch.cuda.is_available(), reason="checks the error on a machine without CUDA"
)
def test_asking_for_missing_cuda_fails_clearly() -> None:
    with pytest.raises(runtime.SettingError, match="sees no CUDA device"):
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
        assert fp.profile == numerics.output_profile(torch.device("cpu"))
        assert fp.torch_version == torch.__version__
        assert dict(fp.as_rows())["CPU threads"] == "1"
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize(
    ("var", "value"),
    [("BOOK_THREADS", "0"), ("BOOK_THREADS", "two"), ("BOOK_SEED", "-1")],
)
def test_bad_environment_values_are_named(
    monkeypatch: pytest.MonkeyPatch, var: str, value: str
) -> None:
    monkeypatch.setenv(var, value)
    with pytest.raises(ValueError, match=var):
        runtime.setup()


def test_seed_everything_rejects_negative_seed() -> None:
    with pytest.raises(ValueError, match="seed must be a non-negative int"):
        runtime.seed_everything(-1)


def test_fingerprint_shows_the_profile_and_the_cpu_pins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BOOK_DEVICE", "cpu")
    runtime.setup()
    fp = runtime.fingerprint()
    if numerics.cpu_supports_pins():
        assert fp.profile == "cpu-avx2"
        assert fp.cpu_kernels == (
            "AVX2 (pinned: ATEN_CPU_CAPABILITY=avx2, ONEDNN_MAX_CPU_ISA=AVX2, "
            "MKL_CBWR=AVX2,STRICT)"
        )
    else:
        assert fp.profile.endswith("-unpinned")
    assert "AVX2" in numerics.describe_profile("cpu-avx2")
    assert "no recorded baseline applies" in numerics.describe_profile(
        "cpu-aarch64-unpinned"
    )


def test_profile_of_a_machine_without_avx2_is_unpinned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(numerics, "cpu_supports_pins", lambda: False)
    monkeypatch.setattr(numerics.platform, "machine", lambda: "aarch64")
    monkeypatch.setattr(runtime.torch.cuda, "get_device_capability", lambda d: (9, 0))
    assert numerics.output_profile(torch.device("cpu")) == "cpu-aarch64-unpinned"
    # a GPU's profile does not depend on the CPU
    assert numerics.output_profile(torch.device("cuda")) == "cuda-sm90"


@pytest.mark.skipif(
    not numerics.cpu_supports_pins(),
    reason="this CPU cannot run the pinned AVX2 kernels",
)
def test_setup_refuses_to_run_with_the_pins_removed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MKL_CBWR", "AUTO")
    with pytest.raises(RuntimeError, match="CPU numerics are not pinned"):
        runtime.setup()


@pytest.mark.skipif(
    not numerics.cpu_supports_pins(),
    reason="this CPU cannot run the pinned AVX2 kernels",
)
def test_a_process_that_imports_torch_first_still_gets_the_pins_from_its_parent() -> (
    None
):
    import subprocess

    code = "import torch; print(torch.backends.cpu.get_cpu_capability())"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    # the test process's environment carries the pins to its children
    assert out.stdout.strip() == "AVX2"


PIN_VARS = tuple(numerics.CPU_PINS)


class FakeFile:
    """Stands in for ``runtime.Path``: ``Path(anything).read_text()`` gives ``text`` or
    raises ``error``."""

    def __init__(self, text: str = "", error: Exception | None = None) -> None:
        self.text, self.error, self.opened = text, error, []

    def __call__(self, path: str) -> FakeFile:
        self.opened.append(path)
        return self

    def read_text(self) -> str:
        if self.error is not None:
            raise self.error
        return self.text


def fake_cpuinfo(
    monkeypatch: pytest.MonkeyPatch,
    text: str = "",
    error: Exception | None = None,
    machine: str = "x86_64",
) -> FakeFile:
    fake = FakeFile(text, error)
    # both read it: the CPU's flags (host) and its name (numerics)
    monkeypatch.setattr(host, "Path", fake)
    monkeypatch.setattr(numerics, "Path", fake)
    monkeypatch.setattr(host.platform, "machine", lambda: machine)
    return fake


CPUINFO = (
    "processor\t: 0\n"
    "vendor_id\t: AuthenticAMD\n"
    "model name\t: Example CPU 9000: 8-Core\n"
    "flags\t\t: fpu sse2 {flags}\n"
    "bugs\t\t: none\n"
    "processor\t: 1\n"
    "flags\t\t: fpu\n"
)


# ---- cpu_supports_pins
# ---------------------------------------------------------------------------------


@pytest.mark.parametrize("machine", ["x86_64", "AMD64", "amd64", "X86_64"])
def test_pins_are_supported_on_x86_64_with_avx2_and_fma(
    monkeypatch: pytest.MonkeyPatch, machine: str
) -> None:
    fake = fake_cpuinfo(
        monkeypatch, CPUINFO.format(flags="avx avx2 fma bmi2"), machine=machine
    )
    assert host.cpu_supports_pins() is True
    assert fake.opened == ["/proc/cpuinfo"]


@pytest.mark.parametrize("flags", ["avx2", "fma", "avx fma3 avx2x", "avx512f fma4", ""])
def test_pins_need_both_avx2_and_fma_in_the_first_flags_line(
    monkeypatch: pytest.MonkeyPatch, flags: str
) -> None:
    fake_cpuinfo(monkeypatch, CPUINFO.format(flags=flags))
    assert host.cpu_supports_pins() is False


def test_pins_read_only_the_first_flags_line(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "flags\t: fpu\nflags\t: avx2 fma\n"
    fake_cpuinfo(monkeypatch, text)
    assert host.cpu_supports_pins() is False
    fake_cpuinfo(monkeypatch, "flags\t: avx2 fma\nflags\t: fpu\n")
    assert host.cpu_supports_pins() is True


def test_a_flag_named_like_the_key_is_not_a_flag(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the split is at the first colon only: the key "flags" itself is never read as a
    # flag
    fake_cpuinfo(monkeypatch, "flags : avx2:fma\n")
    assert host.cpu_supports_pins() is False
    # a colon inside the value, between the two
    fake_cpuinfo(monkeypatch, "flags : avx2 x:y fma\n")
    assert host.cpu_supports_pins() is True
    fake_cpuinfo(monkeypatch, "flags:avx2 fma\n")  # no space before the colon
    assert host.cpu_supports_pins() is True


@pytest.mark.parametrize("machine", ["aarch64", "arm64", "i686", "x86", ""])
def test_pins_are_not_supported_off_x86_64(
    monkeypatch: pytest.MonkeyPatch, machine: str
) -> None:
    fake = fake_cpuinfo(monkeypatch, CPUINFO.format(flags="avx2 fma"), machine=machine)
    assert numerics.cpu_supports_pins() is False
    # decided by the architecture, before reading /proc/cpuinfo
    assert fake.opened == []


def test_pins_are_not_supported_without_cpuinfo_or_its_flags(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_cpuinfo(monkeypatch, error=FileNotFoundError("/proc/cpuinfo"))
    assert host.cpu_supports_pins() is False
    fake_cpuinfo(monkeypatch, error=PermissionError("/proc/cpuinfo"))
    assert host.cpu_supports_pins() is False
    fake_cpuinfo(monkeypatch, "processor\t: 0\nmodel name\t: avx2 fma\n")
    assert host.cpu_supports_pins() is False


# ---- pin_cpu_numerics
# ----------------------------------------------------------------------------------


def test_pinning_sets_every_pin_where_the_cpu_supports_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for var in PIN_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(host, "cpu_supports_pins", lambda: True)
    host.pin_cpu_numerics()
    assert {k: os.environ.get(k) for k in PIN_VARS} == {
        "ATEN_CPU_CAPABILITY": "avx2",
        "ONEDNN_MAX_CPU_ISA": "AVX2",
        "MKL_CBWR": "AVX2,STRICT",
    }


def test_pinning_leaves_the_environment_alone_elsewhere(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for var in PIN_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(host, "cpu_supports_pins", lambda: False)
    host.pin_cpu_numerics()
    assert [k for k in PIN_VARS if k in os.environ] == []


# ---- pick_device
# --------------------------------------------------------------------------------------


def with_cuda(monkeypatch: pytest.MonkeyPatch, present: bool) -> None:
    monkeypatch.setattr(runtime.torch.cuda, "is_available", lambda: present)


@pytest.mark.parametrize(
    ("env", "present", "expected"),
    [
        (None, False, "cpu"),
        (None, True, "cuda"),
        ("", True, "cuda"),
        ("  ", False, "cpu"),
        ("cpu", True, "cpu"),
        (" CPU ", True, "cpu"),
        ("cuda", True, "cuda"),
        ("CUDA:1", True, "cuda:1"),
        ("cuda:0", True, "cuda:0"),
    ],
)
def test_device_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, env: str | None, present: bool, expected: str
) -> None:
    with_cuda(monkeypatch, present)
    if env is None:
        monkeypatch.delenv("BOOK_DEVICE", raising=False)
    else:
        monkeypatch.setenv("BOOK_DEVICE", env)
    assert runtime.pick_device() == torch.device(expected)


def test_a_requested_device_wins_over_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with_cuda(monkeypatch, True)
    monkeypatch.setenv("BOOK_DEVICE", "tpu")
    assert runtime.pick_device("cpu") == torch.device("cpu")
    assert runtime.pick_device(" Cuda:2 ") == torch.device("cuda:2")
    monkeypatch.setenv("BOOK_DEVICE", "cpu")
    # an empty request is the default, not the variable
    assert runtime.pick_device("") == torch.device("cuda")


@pytest.mark.parametrize("name", ["cuda", "cuda:0", "CUDA:3"])
def test_cuda_without_a_cuda_device_is_refused(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    with_cuda(monkeypatch, False)
    monkeypatch.setenv("BOOK_DEVICE", name)
    with pytest.raises(
        runtime.SettingError, match=rf"^BOOK_DEVICE='{name.lower()}' asks for CUDA"
    ):
        runtime.pick_device()


@pytest.mark.parametrize(
    "name", ["tpu", "gpu", "mps", "cudax", "xcuda:0", "cuda:x", "cuda:", "cuda:-1"]
)
def test_unknown_devices_are_refused_by_name(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    with_cuda(monkeypatch, True)
    with pytest.raises(
        ValueError,
        match=rf"^BOOK_DEVICE must be 'cpu', 'cuda' or 'cuda:N'; got '{name}'$",
    ):
        runtime.pick_device(name)


# ---- settings: one validated spelling of BOOK_DEVICE, BOOK_THREADS and BOOK_SEED
# -------------------------


def with_env(monkeypatch: pytest.MonkeyPatch, **values: str | None) -> None:
    for name, value in values.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)


@pytest.mark.parametrize("device", [None, "", "cpu", " CPU ", "Cpu\t"])
@pytest.mark.parametrize(
    ("threads", "seed"), [(None, None), ("1", "0"), (" 1 ", " 0"), ("", "")]
)
def test_harmless_spellings_of_the_settings_are_one_setting_on_a_cpu_machine(
    monkeypatch: pytest.MonkeyPatch,
    device: str | None,
    threads: str | None,
    seed: str | None,
) -> None:
    with_cuda(monkeypatch, False)
    with_env(monkeypatch, BOOK_DEVICE=device, BOOK_THREADS=threads, BOOK_SEED=seed)
    assert runtime.settings() == runtime.Settings(device="cpu", threads=1, seed=0)
    assert runtime.settings().as_env() == {
        "BOOK_DEVICE": "cpu",
        "BOOK_THREADS": "1",
        "BOOK_SEED": "0",
    }


@pytest.mark.parametrize("device", [None, "cuda", " CUDA ", "cuda:0"])
def test_the_first_cuda_device_has_one_spelling(
    monkeypatch: pytest.MonkeyPatch, device: str | None
) -> None:
    with_cuda(monkeypatch, True)
    with_env(monkeypatch, BOOK_DEVICE=device)
    assert runtime.settings().device == "cuda:0"
    monkeypatch.setenv("BOOK_DEVICE", "cuda:1")
    assert runtime.settings().device == "cuda:1"
    monkeypatch.setenv("BOOK_DEVICE", "cpu")
    assert runtime.settings().device == "cpu"


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("BOOK_SEED", "abc", "BOOK_SEED must be an integer >= 0; got 'abc'"),
        ("BOOK_SEED", "-1", "BOOK_SEED must be an integer >= 0; got -1"),
        ("BOOK_THREADS", "0", "BOOK_THREADS must be an integer >= 1; got 0"),
        ("BOOK_THREADS", "x", "BOOK_THREADS must be an integer >= 1; got 'x'"),
        (
            "BOOK_DEVICE",
            "gpu",
            "BOOK_DEVICE must be 'cpu', 'cuda' or 'cuda:N'; got 'gpu'",
        ),
        (
            "BOOK_DEVICE",
            "cuda",
            "BOOK_DEVICE='cuda' asks for CUDA, but this PyTorch build sees no CUDA "
            "device; unset BOOK_DEVICE or set it to 'cpu'",
        ),
    ],
)
def test_bad_settings_are_refused_in_one_line_naming_the_setting_and_its_accepted_values(  # noqa: E501  (the test's name)
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, message: str
) -> None:
    with_cuda(monkeypatch, False)
    monkeypatch.setenv(name, value)
    with pytest.raises(runtime.SettingError) as caught:
        runtime.settings()
    assert str(caught.value) == message
    with pytest.raises(runtime.SettingError, match="^" + re.escape(message) + "$"):
        runtime.setup()  # the chapters' own check is the same one


# ---- _int_from_env
# -------------------------------------------------------------------------------------


def test_integer_variables_default_when_unset_or_blank(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("BOOK_TEST_INT", raising=False)
    assert runtime._int_from_env("BOOK_TEST_INT", 5, 1) == 5
    monkeypatch.setenv("BOOK_TEST_INT", " \t")
    assert runtime._int_from_env("BOOK_TEST_INT", 6, 1) == 6


@pytest.mark.parametrize(
    ("raw", "minimum", "value"),
    [
        ("3", 1, 3),
        (" 4 ", 1, 4),
        ("1", 1, 1),
        ("0", 0, 0),
        ("-2", -2, -2),
        ("12", 12, 12),
    ],
)
def test_integer_variables_are_parsed_down_to_the_minimum(
    monkeypatch: pytest.MonkeyPatch, raw: str, minimum: int, value: int
) -> None:
    monkeypatch.setenv("BOOK_TEST_INT", raw)
    assert runtime._int_from_env("BOOK_TEST_INT", 99, minimum) == value


@pytest.mark.parametrize(
    ("raw", "minimum", "message"),
    [
        ("0", 1, "^BOOK_TEST_INT must be an integer >= 1; got 0$"),
        ("11", 12, "^BOOK_TEST_INT must be an integer >= 12; got 11$"),
        ("-1", 0, "^BOOK_TEST_INT must be an integer >= 0; got -1$"),
        ("two", 1, "^BOOK_TEST_INT must be an integer >= 1; got 'two'$"),
        ("1.5", 0, r"^BOOK_TEST_INT must be an integer >= 0; got '1\.5'$"),
    ],
)
def test_bad_integer_variables_are_named_with_the_bound(
    monkeypatch: pytest.MonkeyPatch, raw: str, minimum: int, message: str
) -> None:
    monkeypatch.setenv("BOOK_TEST_INT", raw)
    with pytest.raises(ValueError, match=message):
        runtime._int_from_env("BOOK_TEST_INT", 99, minimum)


# ---- seed_everything
# -----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 12345])
def test_seeding_fixes_python_numpy_and_torch(seed: int) -> None:
    random.seed(999)
    np.random.seed(999)
    torch.manual_seed(999)
    runtime.seed_everything(seed)
    assert random.random() == random.Random(seed).random()
    assert np.random.rand() == np.random.RandomState(seed).rand()
    assert torch.equal(
        torch.rand(4), torch.rand(4, generator=torch.Generator().manual_seed(seed))
    )


@pytest.mark.parametrize("seed", [-1, -100, 1.0, "3", None])
def test_seeding_refuses_what_is_not_a_non_negative_int(seed: object) -> None:
    with pytest.raises(
        ValueError,
        match=r"^seed must be a non-negative int; got "
        + repr(seed).replace(".", r"\."),
    ):
        runtime.seed_everything(seed)  # type: ignore[arg-type]


# ---- _git_commit
# --------------------------------------------------------------------------------------


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        [
            "git",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
            *args,
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def test_commit_of_a_clean_and_a_dirty_repository(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "a.txt").write_text("one\n")
    git(tmp_path, "add", "a.txt")
    git(tmp_path, "commit", "-q", "-m", "first")
    head = git(tmp_path, "rev-parse", "HEAD")
    monkeypatch.setattr(host, "REPO_ROOT", tmp_path)
    monkeypatch.chdir(Path(__file__).parent)
    assert host._git_commit() == head[:12]
    (tmp_path / "untracked.txt").write_text("not tracked\n")
    # untracked files do not make a tree dirty
    assert host._git_commit() == head[:12]
    (tmp_path / "a.txt").write_text("two\n")
    assert host._git_commit() == head[:12] + "+dirty"


def test_commit_outside_a_repository_is_unknown(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(host, "REPO_ROOT", tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    assert host._git_commit() == "unknown"


@pytest.mark.parametrize(
    "error",
    [
        FileNotFoundError("git"),
        subprocess.TimeoutExpired("git", 5),
        subprocess.CalledProcessError(128, "git"),
    ],
)
def test_commit_is_unknown_when_git_fails(
    monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    calls: list[dict] = []

    def failing_run(*args, **kwargs):
        calls.append(kwargs)
        raise error

    monkeypatch.setattr(host.subprocess, "run", failing_run)
    assert host._git_commit() == "unknown"
    assert calls[0]["timeout"] == 5
    assert calls[0]["cwd"] == host.REPO_ROOT


def test_git_is_asked_with_a_timeout_for_the_short_commit_and_tracked_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[tuple[list[str], dict]] = []

    def fake_run(cmd, **kwargs):
        calls.append((cmd, kwargs))
        return types.SimpleNamespace(stdout="abc123\n" if cmd[1] == "rev-parse" else "")

    monkeypatch.setattr(host.subprocess, "run", fake_run)
    assert host._git_commit() == "abc123"
    assert [c for c, _ in calls] == [
        ["git", "rev-parse", "--short=12", "HEAD"],
        ["git", "status", "--porcelain", "--untracked-files=no"],
    ]
    for _, kwargs in calls:
        assert kwargs == {
            "cwd": host.REPO_ROOT,
            "capture_output": True,
            "text": True,
            "timeout": 5,
            "check": True,
        }


# ---- _cpu_name
# --------------------------------------------------------------------------------------


def test_cpu_name_is_the_first_model_name(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = fake_cpuinfo(
        monkeypatch, CPUINFO.format(flags="") + "model name\t: Second CPU\n"
    )
    assert numerics._cpu_name() == "Example CPU 9000: 8-Core"
    assert fake.opened == ["/proc/cpuinfo"]


@pytest.mark.parametrize(
    ("processor", "machine", "expected"),
    [
        ("Intel64 Family 6", "x86_64", "Intel64 Family 6"),
        ("", "arm64", "arm64"),
        ("", "", "CPU"),
    ],
)
def test_cpu_name_falls_back_without_cpuinfo(
    monkeypatch: pytest.MonkeyPatch, processor: str, machine: str, expected: str
) -> None:
    fake_cpuinfo(monkeypatch, error=FileNotFoundError("/proc/cpuinfo"), machine=machine)
    monkeypatch.setattr(numerics.platform, "processor", lambda: processor)
    assert numerics._cpu_name() == expected


def test_cpu_name_falls_back_when_cpuinfo_names_no_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_cpuinfo(monkeypatch, "processor\t: 0\nflags\t: avx2\n", machine="riscv64")
    monkeypatch.setattr(numerics.platform, "processor", lambda: "")
    assert numerics._cpu_name() == "riscv64"


# ---- output_profile, describe_profile, cpu_kernels
# -----------------------------------------------------


def test_profiles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(numerics, "cpu_supports_pins", lambda: True)
    monkeypatch.setattr(runtime.torch.cuda, "get_device_capability", lambda d: (9, 0))
    assert numerics.output_profile(torch.device("cpu")) == "cpu-avx2"
    assert numerics.output_profile(torch.device("cuda:1")) == "cuda-sm90"
    monkeypatch.setattr(numerics, "cpu_supports_pins", lambda: False)
    monkeypatch.setattr(numerics.platform, "machine", lambda: "ARM64")
    assert numerics.output_profile(torch.device("cpu")) == "cpu-arm64-unpinned"
    monkeypatch.setattr(numerics.platform, "machine", lambda: "")
    assert numerics.output_profile(torch.device("cpu")) == "cpu-unknown-unpinned"


def test_profile_descriptions() -> None:
    assert (
        numerics.describe_profile("cpu-avx2")
        == numerics.PROFILE_DESCRIPTIONS["cpu-avx2"]
    )
    assert numerics.describe_profile("cuda-sm90").startswith(
        "NVIDIA GPUs of compute capability 9.0 through CUDA"
    )
    assert numerics.describe_profile("cpu-arm64-unpinned") == (
        "this machine only: its CPU cannot run the pinned AVX2 kernels, so no recorded "
        "baseline applies"
    )


def test_cpu_kernels_names_the_pins_in_force(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        runtime.torch.backends.cpu, "get_cpu_capability", lambda: "AVX2"
    )
    for var in PIN_VARS:
        monkeypatch.setenv(var, numerics.CPU_PINS[var])
    assert numerics.cpu_kernels() == (
        "AVX2 (pinned: ATEN_CPU_CAPABILITY=avx2, ONEDNN_MAX_CPU_ISA=AVX2, "
        "MKL_CBWR=AVX2,STRICT)"
    )
    monkeypatch.delenv("ATEN_CPU_CAPABILITY")
    monkeypatch.setenv("MKL_CBWR", "AUTO")
    assert (
        numerics.cpu_kernels()
        == "AVX2 (pinned: ONEDNN_MAX_CPU_ISA=AVX2, MKL_CBWR=AUTO)"
    )
    for var in PIN_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(
        runtime.torch.backends.cpu, "get_cpu_capability", lambda: "AVX512"
    )
    assert numerics.cpu_kernels() == "AVX512 (not pinned)"


# ---- _check_pins
# --------------------------------------------------------------------------------------


def pins(
    monkeypatch: pytest.MonkeyPatch,
    supported: bool,
    capability: str,
    **overrides: str | None,
) -> None:
    monkeypatch.setattr(numerics, "cpu_supports_pins", lambda: supported)
    monkeypatch.setattr(
        runtime.torch.backends.cpu, "get_cpu_capability", lambda: capability
    )
    for var, value in {**numerics.CPU_PINS, **overrides}.items():
        if value is None:
            monkeypatch.delenv(var, raising=False)
        else:
            monkeypatch.setenv(var, value)


def test_pins_in_force_pass_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    pins(monkeypatch, True, "AVX2")
    assert numerics.check_pins() is None


@pytest.mark.parametrize(
    ("capability", "overrides"),
    [
        ("AVX512", {}),
        ("DEFAULT", {}),
        ("AVX2", {"MKL_CBWR": "AUTO"}),
        ("AVX2", {"ONEDNN_MAX_CPU_ISA": None}),
        ("AVX2", {"ATEN_CPU_CAPABILITY": "AVX2"}),
    ],
)
def test_pins_not_in_force_stop_the_build(
    monkeypatch: pytest.MonkeyPatch, capability: str, overrides: dict
) -> None:
    pins(monkeypatch, True, capability, **overrides)
    with pytest.raises(
        RuntimeError,
        match=rf"^CPU numerics are not pinned \(ATen kernels: {capability}; ",
    ):
        numerics.check_pins()


def test_a_cpu_that_cannot_be_pinned_is_not_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pins(monkeypatch, False, "NEON", MKL_CBWR=None, ATEN_CPU_CAPABILITY=None)
    assert numerics.check_pins() is None


# ---- setup and fingerprint
# -----------------------------------------------------------------------------


@pytest.fixture
def restored_torch_state():
    state = (
        torch.get_num_threads(),
        torch.are_deterministic_algorithms_enabled(),
        torch.is_deterministic_algorithms_warn_only_enabled(),
        torch.backends.cudnn.benchmark,
        torch.backends.cuda.matmul.allow_tf32,
        torch.backends.cudnn.allow_tf32,
        dict(runtime._STATE),
        torch.backends.cudnn.deterministic,
    )
    yield
    threads, det, warn, bench, mm_tf32, cudnn_tf32, saved, cudnn_det = state
    torch.backends.cudnn.deterministic = cudnn_det
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(det, warn_only=warn)
    torch.backends.cudnn.benchmark = bench
    torch.backends.cuda.matmul.allow_tf32 = mm_tf32
    torch.backends.cudnn.allow_tf32 = cudnn_tf32
    runtime._STATE.clear()
    runtime._STATE.update(saved)


def cpu_build(monkeypatch: pytest.MonkeyPatch, **env: str | None) -> None:
    pins(monkeypatch, True, "AVX2")
    # CUBLAS_WORKSPACE_CONFIG is set here too, so monkeypatch restores it after setup()
    # sets it
    settings = {
        "BOOK_DEVICE": "cpu",
        "BOOK_THREADS": None,
        "BOOK_SEED": None,
        "CUBLAS_WORKSPACE_CONFIG": ":4096:8",
        **env,
    }
    for var, value in settings.items():
        if value is None:
            monkeypatch.delenv(var, raising=False)
        else:
            monkeypatch.setenv(var, value)


@pytest.mark.usefixtures("restored_torch_state")
def test_setup_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    cpu_build(monkeypatch, CUBLAS_WORKSPACE_CONFIG=None)
    torch.set_num_threads(2)
    torch.use_deterministic_algorithms(False)
    runtime._STATE.clear()
    assert runtime.setup() == torch.device("cpu")
    assert torch.get_num_threads() == 1
    assert torch.are_deterministic_algorithms_enabled()
    assert torch.is_deterministic_algorithms_warn_only_enabled()
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
    assert runtime._STATE == {"device": torch.device("cpu"), "threads": 1, "seed": 0}
    assert torch.equal(
        torch.rand(3), torch.rand(3, generator=torch.Generator().manual_seed(0))
    )


@pytest.mark.usefixtures("restored_torch_state")
def test_setup_reads_threads_and_seed_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cpu_build(
        monkeypatch, BOOK_THREADS="2", BOOK_SEED="11", CUBLAS_WORKSPACE_CONFIG=":16:8"
    )
    runtime.setup()
    assert torch.get_num_threads() == 2
    # a value the user set is kept
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":16:8"
    assert runtime._STATE == {"device": torch.device("cpu"), "threads": 2, "seed": 11}
    assert random.random() == random.Random(11).random()
    runtime.setup(seed=0)  # an explicit seed wins over BOOK_SEED, even 0
    assert runtime._STATE["seed"] == 0
    assert random.random() == random.Random(0).random()


@pytest.mark.usefixtures("restored_torch_state")
@pytest.mark.parametrize(
    ("var", "value", "message"),
    [
        ("BOOK_THREADS", "0", "^BOOK_THREADS must be an integer >= 1; got 0$"),
        ("BOOK_SEED", "-1", "^BOOK_SEED must be an integer >= 0; got -1$"),
        ("BOOK_SEED", "x", "^BOOK_SEED must be an integer >= 0; got 'x'$"),
    ],
)
def test_setup_names_a_bad_variable_and_its_bound(
    monkeypatch: pytest.MonkeyPatch, var: str, value: str, message: str
) -> None:
    cpu_build(monkeypatch, **{var: value})
    with pytest.raises(ValueError, match=message):
        runtime.setup()


@pytest.mark.usefixtures("restored_torch_state")
def test_setup_accepts_seed_zero_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cpu_build(monkeypatch, BOOK_SEED="0", BOOK_THREADS="1")
    runtime.setup()
    assert runtime._STATE["seed"] == 0
    assert runtime._STATE["threads"] == 1


@pytest.mark.usefixtures("restored_torch_state")
def test_setup_checks_the_pins(monkeypatch: pytest.MonkeyPatch) -> None:
    cpu_build(monkeypatch)
    monkeypatch.setattr(
        runtime.torch.backends.cpu, "get_cpu_capability", lambda: "AVX512"
    )
    with pytest.raises(RuntimeError, match="^CPU numerics are not pinned"):
        runtime.setup()


@pytest.mark.usefixtures("restored_torch_state")
def test_setup_on_cuda_turns_off_tf32_and_benchmarking(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cpu_build(monkeypatch, BOOK_DEVICE="cuda:1")
    with_cuda(monkeypatch, True)
    # no CUDA generators to seed here
    monkeypatch.setattr(runtime.torch, "manual_seed", lambda seed: None)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    assert runtime.setup(seed=3) == torch.device("cuda:1")
    assert torch.backends.cudnn.benchmark is False
    assert torch.backends.cuda.matmul.allow_tf32 is False
    assert torch.backends.cudnn.allow_tf32 is False
    assert torch.backends.cudnn.deterministic is True
    assert torch.are_deterministic_algorithms_enabled()
    # on the GPU a non-deterministic op raises
    assert not torch.is_deterministic_algorithms_warn_only_enabled()


@pytest.mark.usefixtures("restored_torch_state")
def test_setup_on_cpu_leaves_the_cuda_settings_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cpu_build(monkeypatch)
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = True
    runtime.setup()
    assert torch.backends.cudnn.benchmark is True
    assert torch.backends.cudnn.allow_tf32 is True


def test_fingerprint_before_setup_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime, "_STATE", {"threads": 1, "seed": 0})
    with pytest.raises(
        RuntimeError,
        match=r"^call chapter_code\.core\.runtime\.setup\(\) before fingerprint\(\)$",
    ):
        runtime.fingerprint()


def fake_build(
    monkeypatch: pytest.MonkeyPatch, device: str, cuda_version: str | None
) -> None:
    monkeypatch.setattr(
        runtime, "_STATE", {"device": torch.device(device), "threads": 3, "seed": 42}
    )
    monkeypatch.setattr(numerics, "_git_commit", lambda: "0123456789ab+dirty")
    monkeypatch.setattr(numerics, "_cpu_name", lambda: "Example CPU")
    monkeypatch.setattr(numerics, "cpu_supports_pins", lambda: True)
    monkeypatch.setattr(numerics, "cpu_kernels", lambda: "AVX2 (pinned: ...)")
    monkeypatch.setattr(
        runtime.torch.cuda, "get_device_name", lambda d: f"Example GPU {d}"
    )
    monkeypatch.setattr(runtime.torch.version, "cuda", cuda_version)
    monkeypatch.setattr(
        runtime.torch, "are_deterministic_algorithms_enabled", lambda: True
    )


def test_fingerprint_of_a_cpu_build(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_build(monkeypatch, "cpu", None)
    fp = runtime.fingerprint()
    assert fp == numerics.Fingerprint(
        device="cpu",
        device_name="Example CPU",
        profile="cpu-avx2",
        cpu_kernels="AVX2 (pinned: ...)",
        torch_version=torch.__version__,
        cuda_version="none",
        python_version=numerics.platform.python_version(),
        threads=3,
        seed=42,
        deterministic_algorithms=True,
        git_commit="0123456789ab+dirty",
    )


def test_fingerprint_of_a_cuda_build(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_build(monkeypatch, "cuda:0", "12.4")
    monkeypatch.setattr(runtime.torch.cuda, "get_device_capability", lambda d: (9, 0))
    monkeypatch.setattr(runtime.torch.backends.cudnn, "is_available", lambda: True)
    monkeypatch.setattr(runtime.torch.backends.cudnn, "version", lambda: 91002)
    fp = runtime.fingerprint()
    assert (
        fp.device,
        fp.device_name,
        fp.profile,
        fp.cuda_version,
        fp.gpu_kind,
        fp.cudnn_version,
    ) == ("cuda:0", "Example GPU cuda:0", "cuda-sm90", "12.4", "sm90", "91002")
    assert type(fp.threads) is int
    assert type(fp.seed) is int


def test_fingerprint_rows_in_display_order() -> None:
    fp = numerics.Fingerprint(
        device="cpu",
        device_name="Example CPU",
        profile="cpu-avx2",
        cpu_kernels="AVX2",
        torch_version="2.0",
        cuda_version="none",
        python_version="3.12.1",
        threads=1,
        seed=0,
        deterministic_algorithms=True,
        git_commit="abc",
    )
    rows = [
        ("device", "cpu"),
        ("device name", "Example CPU"),
        ("output profile", "cpu-avx2"),
        ("CPU kernels", "AVX2"),
        ("PyTorch", "2.0"),
        ("CUDA", "none"),
        ("Python", "3.12.1"),
        ("CPU threads", "1"),
        ("base seed", "0"),
        ("deterministic algorithms", "True"),
    ]
    assert fp.as_rows() == rows + [("git commit", "abc")]
    assert fp.as_rows(with_commit=True) == rows + [("git commit", "abc")]
    assert fp.as_rows(with_commit=False) == rows
    assert fp.as_rows(False) == rows


# ---- run_once and load_sweep
# ---------------------------------------------------------------------------


def add(a: int, b: int = 0) -> int:
    return a + b


@pytest.fixture
def no_backend():
    saved = dict(runtime._BACKEND)
    runtime._BACKEND.clear()
    yield
    runtime._BACKEND.clear()
    runtime._BACKEND.update(saved)


def test_run_once_without_the_build_just_calls(no_backend) -> None:
    assert runtime.run_once(add, a=2, b=3) == 5
    assert runtime.run_once(add, data=["data/x.txt"], a=4) == 4


def test_run_once_hands_function_data_and_arguments_to_the_build(no_backend) -> None:
    calls: list[tuple] = []

    def memoized(fn, /, *, data, **kwargs):
        calls.append((fn, data, kwargs))
        return "stored"

    runtime.use_backend(run_once=memoized)
    assert (
        runtime.run_once(add, data=["data/a.txt", "data/b.txt"], a=1, b=2) == "stored"
    )
    assert runtime.run_once(add, a=1) == "stored"
    assert calls == [
        (add, ("data/a.txt", "data/b.txt"), {"a": 1, "b": 2}),
        (add, (), {"a": 1}),
    ]
    assert type(calls[0][1]) is tuple
    runtime.use_backend(run_once=None)
    assert runtime.run_once(add, a=1) == 1


def test_load_sweep_passes_its_arguments_to_the_records(no_backend) -> None:
    calls: list[tuple] = []

    def load(
        name,
        config="unset",
        allow_partial="unset",
        none_if_unrun="unset",
        edition="unset",
    ):
        calls.append((name, config, allow_partial, none_if_unrun, edition))
        return f"sweep {name}"

    runtime.use_backend(load_sweep=load)
    assert runtime.load_sweep("memory-robustness") == "sweep memory-robustness"
    assert runtime.load_sweep("x", "cluster", allow_partial=True) == "sweep x"
    assert runtime.load_sweep("y", config="smoke", allow_partial=False) == "sweep y"
    assert runtime.load_sweep("z", "gpu", none_if_unrun=True) == "sweep z"
    assert runtime.load_sweep("w", "cpu", edition="gpu") == "sweep w"
    assert calls == [
        ("memory-robustness", "cpu", False, False, None),
        ("x", "cluster", True, False, None),
        ("y", "smoke", False, False, None),
        ("z", "gpu", False, True, None),
        ("w", "cpu", False, False, "gpu"),
    ]


def test_load_sweep_outside_the_build_says_how_to_read_the_records(no_backend) -> None:
    with pytest.raises(
        runtime.SweepRecordsUnavailable,
        match=r"^the records of sweep 'scoreboard' are read and "
        r"checked by the book's build; outside it, run `python -m bookbuild "
        r"experiments status "
        r"scoreboard`",
    ):
        runtime.load_sweep("scoreboard")


def test_the_backend_takes_only_callables(no_backend) -> None:
    with pytest.raises(TypeError, match=r"^run_once must be callable or None; got 3$"):
        runtime.use_backend(run_once=3)  # type: ignore[arg-type]
    with pytest.raises(
        TypeError, match=r"^load_sweep must be callable or None; got 'x'$"
    ):
        runtime.use_backend(load_sweep="x")  # type: ignore[arg-type]
    assert runtime._BACKEND == {}


def test_the_kernel_hook_installs_the_build_as_backend(no_backend) -> None:
    from bookbuild.build import ROOT
    from bookbuild.execute import kernel_hooks

    kernel_hooks._install_backend(str(ROOT))  # the book being executed: this checkout
    assert set(runtime._BACKEND) == {"run_once", "load_sweep"}
    assert runtime._BACKEND["run_once"] is kernel_hooks._run_once


_DETERMINISM = """
import sys
import torch
from chapter_code.core import numerics, runtime
if {compiler_first}:
    import torch._inductor.config
if {public}:
    torch.use_deterministic_algorithms(True, warn_only={warn_only})
else:
    numerics.use_deterministic_algorithms(warn_only={warn_only})
imported = "torch._inductor" in sys.modules
import torch._inductor.config as compiler
print(imported, torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),
      compiler.deterministic)
"""  # noqa: E501  (a script's source)


@pytest.mark.parametrize(
    ("warn_only", "compiler_first"),
    [(True, False), (False, True)],
    ids=["cpu-compiler-later", "gpu-compiler-imported"],
)
def test_determinism_is_set_as_the_public_call_sets_it_without_importing_the_compiler(
    warn_only: bool, compiler_first: bool
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_DETERMINISTIC"}

    def state(public: bool) -> list[str]:
        code = _DETERMINISM.format(
            public=public, warn_only=warn_only, compiler_first=compiler_first
        )
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            cwd=Path(runtime.__file__).resolve().parents[2],
            check=True,
        )
        return done.stdout.split()

    ours, public = state(False), state(True)
    # the flag, its mode, the compiler's option
    assert ours[1:] == public[1:] == ["True", str(warn_only), "True"]
    # the compiler was imported only where the process imported it itself
    assert ours[0] == str(compiler_first)


# ---- settings read from a given mapping, not from this process
# -----------------------------------------


def test_settings_of_a_given_mapping_ignore_this_process_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The build reads the settings a chapter's kernel will get (a mapping it is about
    to pass on): every variable comes from that mapping, none from this process, even
    where this process's value is unusable."""
    with_cuda(monkeypatch, False)
    # each refused if read
    with_env(monkeypatch, BOOK_DEVICE="tpu", BOOK_THREADS="0", BOOK_SEED="-5")
    assert runtime.settings({}) == runtime.Settings(device="cpu", threads=1, seed=0)
    given = {"BOOK_DEVICE": " CPU ", "BOOK_THREADS": "3", "BOOK_SEED": "17"}
    assert runtime.settings(given) == runtime.Settings(device="cpu", threads=3, seed=17)
    assert runtime._int_from_env("BOOK_THREADS", 1, 1, {"BOOK_THREADS": "4"}) == 4
    # absent from the mapping: the default
    assert runtime._int_from_env("BOOK_THREADS", 2, 1, {}) == 2


# ---- determinism set in this process
# --------------------------------------------------------------------


@pytest.mark.parametrize("warn_only", [True, False])
def test_deterministic_algorithms_are_set_here_and_for_a_compiler_imported_before_or_after(  # noqa: E501  (the test's name)
    monkeypatch: pytest.MonkeyPatch, warn_only: bool
) -> None:
    """In this process (the comparison with the public call runs in fresh processes,
    above): the flag and its warn-only mode as asked; the compiler's variable set to 1;
    an already imported compiler config switched on."""
    before = (
        torch.are_deterministic_algorithms_enabled(),
        torch.is_deterministic_algorithms_warn_only_enabled(),
    )
    config = types.SimpleNamespace(deterministic=False)
    monkeypatch.setitem(sys.modules, "torch._inductor.config", config)
    monkeypatch.delenv("TORCHINDUCTOR_DETERMINISTIC", raising=False)
    try:
        numerics.use_deterministic_algorithms(warn_only=warn_only)
        assert torch.are_deterministic_algorithms_enabled() is True
        assert torch.is_deterministic_algorithms_warn_only_enabled() is warn_only
        assert os.environ["TORCHINDUCTOR_DETERMINISTIC"] == "1"
        assert config.deterministic is True
    finally:
        torch._C._set_deterministic_algorithms(before[0], warn_only=before[1])


# ---- the fragility probe's numerics (issue 57)
# ---------------------------------------------------------------


def test_book_numerics_picks_the_pinned_or_the_probe_paths(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for var in PIN_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(numerics, "cpu_supports_pins", lambda: True)
    for raw, pins in [
        ("", numerics.CPU_PINS),
        (" Pinned ", numerics.CPU_PINS),
        ("probe", numerics.PROBE_PINS),
    ]:
        monkeypatch.setenv("BOOK_NUMERICS", raw)
        numerics.pin_cpu_numerics()
        assert {k: os.environ.get(k) for k in PIN_VARS} == pins
    assert numerics.PROBE_PINS["MKL_CBWR"] != numerics.CPU_PINS["MKL_CBWR"]
    # the same variables, other code paths
    assert set(numerics.PROBE_PINS) == set(numerics.CPU_PINS)


def test_an_unknown_book_numerics_is_refused_with_the_choices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BOOK_NUMERICS", "fast")
    with pytest.raises(
        runtime.SettingError,
        match="^BOOK_NUMERICS must be one of pinned, probe; got 'fast'$",
    ):
        numerics.numerics_path()


def test_the_numerics_path_reads_the_environment_it_is_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BOOK_NUMERICS", "pinned")
    assert numerics.numerics_path({"BOOK_NUMERICS": " Probe "}) == "probe"
    assert numerics.numerics_path({}) == "pinned"
    monkeypatch.setenv("BOOK_NUMERICS", "probe")
    assert numerics.numerics_path({"BOOK_NUMERICS": ""}) == "pinned"
    assert numerics.numerics_path() == "probe"


def test_under_the_probe_the_kernels_line_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BOOK_NUMERICS", "probe")
    assert numerics.cpu_kernels().endswith("BOOK_NUMERICS=probe)")
