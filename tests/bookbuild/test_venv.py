"""Tests for bookbuild/tools/venv.py: an environment made with another Python is
replaced, not reused."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bookbuild" / "tools"))
import venv as book_venv  # noqa: E402  (bookbuild/tools/venv.py runs before the package can be imported)


def test_version_of_a_working_environment_is_read(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "env")],
        check=True,
    )
    assert book_venv.venv_python_version(tmp_path / "env") == "{}.{}".format(
        *sys.version_info[:2]
    )


def test_an_environment_whose_python_is_gone_or_different_reads_as_none(
    tmp_path: Path,
) -> None:
    assert book_venv.venv_python_version(tmp_path / "absent") is None
    broken = tmp_path / "broken" / "bin"
    broken.mkdir(parents=True)
    (broken / "python").write_text("#!/bin/sh\nexit 1\n")
    (broken / "python").chmod(0o755)
    assert book_venv.venv_python_version(tmp_path / "broken") is None


def test_the_jax_lock_is_hashed_into_the_stamp_and_moves_nothing_in_lock_txt() -> None:
    assert book_venv.JAX_LOCK in book_venv.LOCK_FILES

    def pins(path: Path) -> dict[str, str]:
        lines = [
            ln.strip()
            for ln in path.read_text().splitlines()
            if ln.strip() and not ln.startswith("#")
        ]
        return {
            ln.split("==")[0].lower().replace("_", "-"): ln.split("==")[1]
            for ln in lines
        }

    jax_pins = pins(book_venv.JAX_LOCK)
    assert {"jax", "jaxlib"} <= set(jax_pins)
    assert jax_pins["jax"] == jax_pins["jaxlib"]
    assert not set(jax_pins) & set(pins(book_venv.ROOT / "requirements" / "lock.txt"))


def install_commands(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    gpu_jax: bool,
    pip_settings: list[str] | None = None,
) -> list[list[str]]:
    """The commands ``main`` runs to make a new environment on a CPU-torch host, with or
    without a GPU JAX, where pip's configuration is ``pip_settings`` (by default one uv
    cannot be given, so pip installs)."""
    commands: list[list[str]] = []
    settings = (
        ["global.proxy='http://proxy.invalid:3128'"]
        if pip_settings is None
        else pip_settings
    )
    monkeypatch.setattr(book_venv, "pip_config", lambda python: settings)
    monkeypatch.setattr(book_venv, "host_has_cuda_torch", lambda python: False)
    monkeypatch.setattr(book_venv, "host_has_gpu_jax", lambda python: gpu_jax)
    monkeypatch.setattr(book_venv, "venv_python_version", lambda venv: None)
    venv = tmp_path / "env"
    monkeypatch.setattr(
        book_venv,
        "run",
        lambda cmd, env=None: (commands.append(cmd), venv.mkdir(exist_ok=True)),
    )
    monkeypatch.setattr(book_venv, "ROOT", tmp_path)
    assert book_venv.main(str(venv)) == 0
    assert (venv / ".book-installed").read_text().strip() == book_venv.lock_hash(
        False, gpu_jax
    )
    return commands


def test_a_host_gpu_jax_is_used_and_the_cpu_jax_not_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commands = install_commands(tmp_path, monkeypatch, gpu_jax=True)
    assert "--system-site-packages" in commands[0]
    assert not any(str(book_venv.JAX_LOCK) in cmd for cmd in commands)
    assert book_venv.lock_hash(False, True) != book_venv.lock_hash(False)


def test_without_a_host_gpu_jax_the_locked_cpu_jax_is_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commands = install_commands(tmp_path, monkeypatch, gpu_jax=False)
    assert "--system-site-packages" not in commands[0]
    installs = [cmd for cmd in commands if cmd[1:4] == ["-m", "pip", "install"]]
    assert installs[-1][-2:] == ["-r", str(book_venv.JAX_LOCK)]
    # pip compiles nothing; one compileall over the new site-packages, on every core,
    # comes last
    assert all("--no-compile" in cmd for cmd in installs)
    assert len(installs) == 3
    assert commands[-1] == [
        str(tmp_path / "env" / "bin" / "python"),
        "-c",
        book_venv.COMPILE,
        str(book_venv.site_packages(tmp_path / "env")),
    ]
    assert (
        book_venv.site_packages(tmp_path / "env")
        == tmp_path
        / "env"
        / "lib"
        / ("python{}.{}".format(*sys.version_info[:2]))
        / "site-packages"
    )


def test_the_probe_finds_no_gpu_jax_here_and_none_in_a_python_without_jax(
    tmp_path: Path,
) -> None:
    # this machine: the CPU build, or none
    assert book_venv.host_has_gpu_jax(sys.executable) is False
    assert book_venv.host_has_gpu_jax(str(tmp_path / "no-python")) is False


def test_pips_settings_are_given_to_uv_the_environment_first() -> None:
    lines = [
        "global.find-links='/opt/wheels'",
        ":env:.find-links='/srv/a /srv/b'",
        "global.extra-index-url='file:///x/simple file:///y/simple'",
        "install.index-url='https://mirror.invalid/simple'",
        "global.index-url='https://other.invalid/simple'",
        "global.constraint='/etc/c.txt'",
        "global.cert='/etc/ca.crt'",
        ":env:.default-timeout='180'",
        ":env:.disable-pip-version-check='1'",
    ]
    options, environment = book_venv.uv_settings(lines)
    assert options == [
        "--constraint",
        "/etc/c.txt",
        "--extra-index-url",
        "file:///x/simple",
        "--extra-index-url",
        "file:///y/simple",
        "--find-links",
        "/srv/a",
        "--find-links",
        "/srv/b",
        "--index-url",
        "https://mirror.invalid/simple",
    ]
    assert environment == {"SSL_CERT_FILE": "/etc/ca.crt", "UV_HTTP_TIMEOUT": "180"}
    assert book_venv.uv_settings([]) == ([], {})


@pytest.mark.parametrize(
    "line",
    [
        "global.proxy='http://proxy.invalid:3128'",
        "global.no-index='true'",
        "install.require-hashes='1'",
        "global.trusted-host='mirror.invalid'",
        "not a setting",
    ],
)
def test_a_pip_setting_uv_is_not_given_leaves_the_install_to_pip(line: str) -> None:
    assert book_venv.uv_settings(["global.find-links='/opt/wheels'", line]) is None


def test_uv_installs_with_pips_settings_the_same_constraints_then_compileall(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commands = install_commands(
        tmp_path, monkeypatch, gpu_jax=False, pip_settings=["global.find-links='/w'"]
    )
    py = str(tmp_path / "env" / "bin" / "python")
    assert commands[1][:3] == [py, "-m", "pip"]
    assert commands[1][-3:] == ["--target", str(tmp_path / "env" / ".uv"), book_venv.UV]
    uv = [
        cmd
        for cmd in commands
        if cmd[0] == str(tmp_path / "env" / ".uv" / "bin" / "uv")
    ]
    assert len(uv) == 2
    assert not [cmd for cmd in commands if cmd[1:4] == ["-m", "pip", "install"]][1:]
    for cmd in uv:
        assert cmd[cmd.index("--find-links") + 1] == "/w"
        assert cmd[cmd.index("--python") + 1] == py
        assert str(tmp_path / "requirements" / "lock.txt") in cmd
        assert str(tmp_path / "requirements" / "torch.txt") in cmd
    assert uv[0][-1] == "setuptools>=68"
    assert uv[1][-4:] == ["-e", f"{tmp_path}[book]", "-r", str(book_venv.JAX_LOCK)]
    assert commands[-1][-2] == book_venv.COMPILE


def test_where_uv_fails_pip_installs_everything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commands: list[list[str]] = []

    def run(cmd: list[str], env: dict[str, str] | None = None) -> None:
        commands.append(cmd)
        (tmp_path / "env").mkdir(exist_ok=True)
        if "uv" in Path(cmd[0]).name:
            raise subprocess.CalledProcessError(2, cmd)

    monkeypatch.setattr(book_venv, "pip_config", lambda python: [])
    monkeypatch.setattr(book_venv, "host_has_cuda_torch", lambda python: False)
    monkeypatch.setattr(book_venv, "host_has_gpu_jax", lambda python: False)
    monkeypatch.setattr(book_venv, "venv_python_version", lambda venv: None)
    monkeypatch.setattr(book_venv, "run", run)
    monkeypatch.setattr(book_venv, "ROOT", tmp_path)
    assert book_venv.main(str(tmp_path / "env")) == 0
    pips = [
        cmd
        for cmd in commands
        if cmd[1:4] == ["-m", "pip", "install"] and "--target" not in cmd
    ]
    assert len(pips) == 3
    assert pips[-1][-2:] == ["-r", str(book_venv.JAX_LOCK)]


def test_a_gpu_image_installs_with_pip_which_sees_the_hosts_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commands = install_commands(tmp_path, monkeypatch, gpu_jax=True, pip_settings=[])
    assert not any(".uv" in " ".join(cmd) for cmd in commands)


def test_uv_given_this_machines_pip_settings_would_change_nothing_in_the_books_environment() -> (  # noqa: E501  (the test's name)
    None
):
    """Where ``make`` made the environment with uv, uv resolves the same constraints,
    from this machine's indexes as pip's settings name them, to exactly what is
    installed (a dry run: nothing is changed; the book's own editable package aside,
    which uv reinstalls every time)."""
    venv = book_venv.ROOT / ".venv"
    if not (venv / ".uv" / "bin" / "uv").exists():
        pytest.skip(
            "this environment was installed by pip (uv is used on CPU images where "
            "pip's settings allow)"
        )
    settings = book_venv.uv_settings(book_venv.pip_config(str(venv / "bin" / "python")))
    assert settings is not None
    options, environment = settings
    for command in book_venv.uv_installs(
        venv, book_venv.constraints_for(False), options
    ):
        dry = [c for c in command if c != "--quiet"] + ["--dry-run"]
        proc = subprocess.run(
            dry,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, **environment},
        )
        assert proc.returncode == 0, proc.stderr
        # uv re-installs an editable project on every install; nothing else may move
        lines = (proc.stderr + proc.stdout).splitlines()
        changes = [
            re.split(r"==| @", line[3:])[0]
            for line in lines
            if line[:3] in (" - ", " + ")
        ]
        assert set(changes) <= {"recurrent-book"}, proc.stderr
