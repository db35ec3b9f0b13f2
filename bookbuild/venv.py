"""Create and fill the book's virtual environment (standard library only).

Run by ``make`` with the system Python before anything else exists:
``python3 bookbuild/venv.py .venv``. It

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
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK_FILES = [ROOT / "pyproject.toml", ROOT / "requirements" / "lock.txt", ROOT / "requirements" / "torch.txt",
              ROOT / "requirements" / "jax.txt"]
JAX_LOCK = ROOT / "requirements" / "jax.txt"


def host_has_cuda_torch(python: str) -> bool:
    """True when ``python`` imports a torch built with CUDA."""
    probe = "import torch, sys; sys.exit(0 if torch.version.cuda else 1)"
    try:
        return subprocess.run([python, "-c", probe], capture_output=True, timeout=120).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def host_has_gpu_jax(python: str) -> bool:
    """True when ``python`` imports a JAX whose default backend is a GPU."""
    probe = "import jax, sys; sys.exit(0 if jax.default_backend() == 'gpu' else 1)"
    try:
        return subprocess.run([python, "-c", probe], capture_output=True, timeout=300).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def lock_hash(use_host_torch: bool, use_host_jax: bool = False) -> str:
    # (host-jax is written only when true, so the stamps of environments made before it existed stay valid)
    host_jax = "host-jax=True\n" if use_host_jax else ""
    digest = hashlib.sha256(f"host-torch={use_host_torch}\n{host_jax}python={sys.version_info[:2]}\n".encode())
    for path in LOCK_FILES:
        digest.update(path.read_bytes())
    return digest.hexdigest()


def venv_python_version(venv: Path) -> str | None:
    """``major.minor`` of the environment's Python, or ``None`` if it has none that runs."""
    python = venv / "bin" / "python"
    if not python.exists():
        return None
    try:
        out = subprocess.run([str(python), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def site_packages(venv: Path) -> Path:
    """The environment's own site-packages (its Python is this one's version: :func:`main` checks)."""
    return Path(sysconfig.get_path("purelib", "venv", vars={"base": str(venv), "platbase": str(venv)}))


#: byte-compile a folder on every core, as quietly as pip does (a file that does not compile, a package's template
#: or test data, is left to the import that would need it; pip skips those too)
COMPILE = "import compileall, sys; compileall.compile_dir(sys.argv[1], quiet=2, workers=0)"


def run(cmd: list[str]) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def main(venv_dir: str = ".venv") -> int:
    venv = (ROOT / venv_dir).resolve()
    use_host_torch = host_has_cuda_torch(sys.executable)
    use_host_jax = host_has_gpu_jax(sys.executable)
    stamp = venv / ".book-installed"
    wanted = lock_hash(use_host_torch, use_host_jax)
    here = "{}.{}".format(*sys.version_info[:2])
    found = venv_python_version(venv)
    if venv.exists() and found != here:
        print(f"{venv} was made with Python {found or '(none that runs)'}, not this Python {here}; recreating it.")
        shutil.rmtree(venv)
    elif stamp.exists() and stamp.read_text().strip() == wanted:
        return 0
    if not (venv / "bin" / "python").exists():
        cmd = [sys.executable, "-m", "venv", str(venv)]
        if use_host_torch or use_host_jax:
            cmd.insert(3, "--system-site-packages")
        if use_host_torch:
            print("A CUDA build of torch is installed for this Python; the environment will use it.")
        if use_host_jax:
            print("A GPU build of JAX is installed for this Python; the environment will use it.")
        run(cmd)
    py = str(venv / "bin" / "python")
    constraints = ["-c", str(ROOT / "requirements" / "lock.txt")]
    if not use_host_torch:
        constraints += ["-c", str(ROOT / "requirements" / "torch.txt")]
    # pip byte-compiles what it installs one file at a time (about a minute of the environment's time on a 2-core
    # machine); --no-compile, then compileall over the new site-packages on every core, leaves the same .pyc files.
    pip = [py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile"]
    run([*pip, "setuptools>=68", *constraints])
    run([*pip, "--no-build-isolation", *constraints, "-e", f"{ROOT}[book]"])
    # the JAX edition: jax, jaxlib and their new dependencies, exact versions; lock.txt still constrains
    if not use_host_jax:
        run([*pip, *constraints, "-r", str(JAX_LOCK)])
    run([py, "-c", COMPILE, str(site_packages(venv))])
    stamp.write_text(wanted + "\n")
    print(f"Environment ready: {venv}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
