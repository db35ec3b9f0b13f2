"""The layering of the tree: taught code never imports the build, and no import circle joins the two.

``chapter_code`` is what a reader is taught and what a lab imports; ``bookbuild`` builds and checks the
book. The build reaches the taught code's memoizer and sweep loader only through
``chapter_code.core.runtime.use_backend``, installed in each chapter's kernel.
"""

from __future__ import annotations

import ast
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import chapter_code

ROOT = Path(__file__).resolve().parents[1]


def _imports(path: Path, package: str) -> set[str]:
    """Top-level packages that the source at ``path`` imports, anywhere in it (functions included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found - {package}


def _sources(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def test_taught_code_imports_nothing_from_the_build() -> None:
    offenders = [str(p.relative_to(ROOT)) for p in _sources("chapter_code")
                 if "bookbuild" in _imports(p, "chapter_code")]
    assert offenders == []


def test_no_import_circle_between_the_two_packages() -> None:
    graph = {pkg: set().union(*(_imports(p, pkg) for p in _sources(pkg))) & {"chapter_code", "bookbuild"}
             for pkg in ("chapter_code", "bookbuild")}
    assert graph["chapter_code"] == set()
    assert graph["bookbuild"] == {"chapter_code"}  # one direction: the build imports what it builds


def test_every_taught_module_imports_with_the_build_unavailable(tmp_path: Path) -> None:
    # A copy of chapter_code alone, as a student takes it into a lab: bookbuild cannot be found at all.
    modules = sorted(m.name for m in pkgutil.walk_packages(chapter_code.__path__, "chapter_code."))
    assert len(modules) > 40
    script = (
        "import importlib, sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'bookbuild' or name.startswith('bookbuild.'):\n"
        "            raise ImportError('bookbuild is not available here')\n"
        "sys.meta_path.insert(0, Block())\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "assert not [m for m in sys.modules if m.split('.')[0] == 'bookbuild']\n"
        "from chapter_code.core import runtime\n"
        "assert runtime.run_once(lambda a: a + 1, a=1) == 2\n"
        "print('ok', len(sys.argv))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("ok")


def test_topic_packages_hold_no_code_in_their_init() -> None:
    # An __init__ with code would run on every import of its topic, outside every memoized run's key.
    for init in (ROOT / "chapter_code").rglob("__init__.py"):
        body = ast.parse(init.read_text()).body
        assert all(isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) for n in body), init
