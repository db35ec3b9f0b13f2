"""Create and fill the book's virtual environment (standard library only).

Run by ``make`` with the system Python before anything else exists:
``python3 bookbuild/tools/venv.py .venv``. It

1. creates ``.venv`` if absent; when the Python in use already has a CUDA
   build of torch (a GPU image), the environment sees that torch through
   ``--system-site-packages`` and no second torch is installed;
2. installs the project (editable) with its ``book`` extras, constrained by
   ``requirements/lock.txt`` (and ``requirements/torch.txt`` on CPU images),
   then the JAX edition's stack named in ``requirements/jax.txt`` (``pip install
   -r``, under the same constraints, so no package of ``lock.txt`` moves). JAX is
   a separate file, not part of ``lock.txt``, because ``lock.txt`` is hashed into
   every memoized run's key; ``jax.txt`` counts only for runs that import jax.
   As with torch, when the Python in use already has a JAX whose default
   backend is a GPU (a GPU image with ``jax[cuda]``), the environment sees it
   through ``--system-site-packages`` and ``jax.txt``'s CPU build is not
   installed; the build then keys JAX's cells by the installed version;
3. writes a stamp holding the hash of the lock files, so a later ``make``
   reinstalls only when they change.

On a CPU image the packages are installed by uv (:data:`UV`, itself installed
by pip into ``.venv/.uv``, outside the environment's packages), which resolves
the same constraints to the same versions and installs from its cache in
seconds where pip takes a minute and a half; it is given pip's own
configuration (the machine's indexes, find-links, constraints, certificate and
timeout: :func:`uv_settings`). Where that configuration holds a setting uv is
not given, on a GPU image (an environment that sees the host's packages), or
when uv fails, pip installs everything as before.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOCK_FILES = [
    ROOT / "pyproject.toml",
    ROOT / "requirements" / "lock.txt",
    ROOT / "requirements" / "torch.txt",
    ROOT / "requirements" / "jax.txt",
]
JAX_LOCK = ROOT / "requirements" / "jax.txt"


def host_has_cuda_torch(python: str) -> bool:
    """True when ``python`` imports a torch built with CUDA."""
    probe = "import torch, sys; sys.exit(0 if torch.version.cuda else 1)"
    try:
        return (
            subprocess.run(
                [python, "-c", probe], capture_output=True, timeout=120
            ).returncode
            == 0
        )
    except (OSError, subprocess.SubprocessError):
        return False


def host_has_gpu_jax(python: str) -> bool:
    """True when ``python`` imports a JAX whose default backend is a GPU."""
    probe = "import jax, sys; sys.exit(0 if jax.default_backend() == 'gpu' else 1)"
    try:
        return (
            subprocess.run(
                [python, "-c", probe], capture_output=True, timeout=300
            ).returncode
            == 0
        )
    except (OSError, subprocess.SubprocessError):
        return False


def lock_hash(use_host_torch: bool, use_host_jax: bool = False) -> str:
    # (host-jax is written only when true, so the stamps of environments made before it
    # existed stay valid)
    host_jax = "host-jax=True\n" if use_host_jax else ""
    digest = hashlib.sha256(
        f"host-torch={use_host_torch}\n{host_jax}python={sys.version_info[:2]}\n".encode()
    )
    for path in LOCK_FILES:
        digest.update(path.read_bytes())
    return digest.hexdigest()


def venv_python_version(venv: Path) -> str | None:
    """``major.minor`` of the environment's Python, or ``None`` if it has none that
    runs."""
    python = venv / "bin" / "python"
    if not python.exists():
        return None
    try:
        out = subprocess.run(
            [str(python), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def site_packages(venv: Path) -> Path:
    """The environment's own site-packages (its Python is this one's version:
    :func:`main` checks)."""
    return Path(
        sysconfig.get_path(
            "purelib", "venv", vars={"base": str(venv), "platbase": str(venv)}
        )
    )


#: byte-compile a folder on every core, as quietly as pip does (a file that does not
#: compile, a package's template or test data, is left to the import that would need it;
#: pip skips those too), leaving out the packages' own test suites (``tests``/``test``
#: folders: 1,876 of 11,683 files, which the book never imports; 40 -> 34 s here)
COMPILE = (
    "import compileall, re, sys; compileall.compile_dir(sys.argv[1], quiet=2, "
    "workers=0, rx=re.compile(r'[/\\\\]tests?[/\\\\]'))"
)


#: The installer used where it can be (see the module's docstring), pinned.
UV = "uv==0.13.9"
#: pip settings (``pip config list``) uv is given, and how: key -> (uv option, split
#: into several values)
UV_OPTIONS = {
    "index-url": ("--index-url", False),
    "extra-index-url": ("--extra-index-url", True),
    "find-links": ("--find-links", True),
    "constraint": ("--constraint", True),
}
#: pip settings passed to uv through its environment: key -> variable
UV_ENVIRONMENT = {
    "cert": "SSL_CERT_FILE",
    "default-timeout": "UV_HTTP_TIMEOUT",
    "timeout": "UV_HTTP_TIMEOUT",
}
#: pip settings that change nothing uv installs
PIP_ONLY = {
    "disable-pip-version-check",
    "progress-bar",
    "no-color",
    "quiet",
    "verbose",
    "cache-dir",
    "no-cache-dir",
    "root-user-action",
    "no-warn-script-location",
    "no-python-version-warning",
}


def pip_config(python: str) -> list[str]:
    """The lines of ``pip config list`` for ``python``'s pip (``section.key='value'``),
    [] if it cannot say."""
    try:
        out = subprocess.run(
            [python, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    return out.stdout.splitlines() if out.returncode == 0 else []


def uv_settings(lines: list[str]) -> tuple[list[str], dict[str, str]] | None:
    """uv's options and environment for pip's configuration ``lines``; None if one
    setting has no uv equivalent.

    A setting from the environment (``:env:``) wins over one in the ``install`` section,
    which wins over ``global``, as in pip.
    """
    rank = {":env:": 0, "install": 1, "global": 2}
    chosen: dict[str, tuple[int, str]] = {}
    for line in lines:
        name, sep, value = line.partition("=")
        section, _, key = name.rpartition(".")
        if not sep or section not in rank:
            return None
        value = value.strip().strip("'\"")
        if key not in chosen or rank[section] < chosen[key][0]:
            chosen[key] = (rank[section], value)
    options: list[str] = []
    environment: dict[str, str] = {}
    for key, (_, value) in sorted(chosen.items()):
        if key in UV_OPTIONS:
            option, several = UV_OPTIONS[key]
            for one in value.split() if several else [value]:
                options += [option, one]
        elif key in UV_ENVIRONMENT:
            environment[UV_ENVIRONMENT[key]] = value
        elif key not in PIP_ONLY:
            return None
    return options, environment


def run(cmd: list[str], env: dict[str, str] | None = None) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, env=None if env is None else {**os.environ, **env})


def uv_installs(
    venv: Path, constraints: list[str], options: list[str]
) -> list[list[str]]:
    """uv's two installs into ``venv``: setuptools, then the book (editable, its extras)
    and the JAX edition."""
    # pip's way of choosing among indexes (the best version on any of them), and no
    # bytecode: compiled after
    uv = [
        str(venv / ".uv" / "bin" / "uv"),
        "pip",
        "install",
        "--quiet",
        "--python",
        str(venv / "bin" / "python"),
        "--index-strategy",
        "unsafe-best-match",
        *options,
        *constraints,
    ]
    return [
        [*uv, "setuptools>=68"],
        [*uv, "--no-build-isolation", "-e", f"{ROOT}[book]", "-r", str(JAX_LOCK)],
    ]


def install_with_uv(
    venv: Path, constraints: list[str], settings: tuple[list[str], dict[str, str]]
) -> bool:
    """Install what :func:`main` installs with pip, with uv instead; False (nothing to
    undo) where uv fails."""
    options, environment = settings
    try:
        run(
            [
                str(venv / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--upgrade",
                "--target",
                str(venv / ".uv"),
                UV,
            ]
        )
        for command in uv_installs(venv, constraints, options):
            run(command, environment)
    except (OSError, subprocess.CalledProcessError) as error:
        print(
            f"uv could not install the environment ({error}); pip installs it instead.",
            flush=True,
        )
        return False
    return True


def constraints_for(use_host_torch: bool) -> list[str]:
    """The constraint options of every install: the lock, and the torch pin unless the
    host's torch is used."""
    constraints = ["-c", str(ROOT / "requirements" / "lock.txt")]
    if not use_host_torch:
        constraints += ["-c", str(ROOT / "requirements" / "torch.txt")]
    return constraints


def main(venv_dir: str = ".venv") -> int:
    venv = (ROOT / venv_dir).resolve()
    use_host_torch = host_has_cuda_torch(sys.executable)
    use_host_jax = host_has_gpu_jax(sys.executable)
    stamp = venv / ".book-installed"
    wanted = lock_hash(use_host_torch, use_host_jax)
    here = "{}.{}".format(*sys.version_info[:2])
    found = venv_python_version(venv)
    if venv.exists() and found != here:
        print(
            f"{venv} was made with Python {found or '(none that runs)'}, not this "
            f"Python {here}; recreating it."
        )
        shutil.rmtree(venv)
    elif stamp.exists() and stamp.read_text().strip() == wanted:
        return 0
    if not (venv / "bin" / "python").exists():
        cmd = [sys.executable, "-m", "venv", str(venv)]
        if use_host_torch or use_host_jax:
            cmd.insert(3, "--system-site-packages")
        if use_host_torch:
            print(
                "A CUDA build of torch is installed for this Python; the environment "
                "will use it."
            )
        if use_host_jax:
            print(
                "A GPU build of JAX is installed for this Python; the environment will "
                "use it."
            )
        run(cmd)
    py = str(venv / "bin" / "python")
    constraints = constraints_for(use_host_torch)
    # pip byte-compiles what it installs one file at a time (about a minute of the
    # environment's time on a 2-core machine); --no-compile, then compileall over the
    # new site-packages on every core, leaves the same .pyc files.
    settings = None if use_host_torch or use_host_jax else uv_settings(pip_config(py))
    if settings is None or not install_with_uv(venv, constraints, settings):
        pip = [
            py,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-compile",
        ]
        run([*pip, "setuptools>=68", *constraints])
        run([*pip, "--no-build-isolation", *constraints, "-e", f"{ROOT}[book]"])
        # the JAX edition: jax, jaxlib and their new dependencies, exact versions;
        # lock.txt still constrains
        if not use_host_jax:
            run([*pip, *constraints, "-r", str(JAX_LOCK)])
    run([py, "-c", COMPILE, str(site_packages(venv))])
    stamp.write_text(wanted + "\n")
    print(f"Environment ready: {venv}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
