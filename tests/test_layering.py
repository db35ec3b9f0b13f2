"""The layering of the tree: taught code never imports the build, and no import circle
joins the two.

``chapter_code`` is what a reader is taught and what a lab imports; ``bookbuild`` builds
and checks the book. The build reaches the taught code's memoizer and sweep loader only
through ``chapter_code.core.runtime.use_backend``, installed in each chapter's kernel.
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
    """Top-level packages that the source at ``path`` imports, anywhere in it (functions
    included)."""
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
    offenders = [
        str(p.relative_to(ROOT))
        for p in _sources("chapter_code")
        if "bookbuild" in _imports(p, "chapter_code")
    ]
    assert offenders == []


def test_no_import_circle_between_the_two_packages() -> None:
    graph = {
        pkg: set().union(*(_imports(p, pkg) for p in _sources(pkg)))
        & {"chapter_code", "bookbuild"}
        for pkg in ("chapter_code", "bookbuild")
    }
    assert graph["chapter_code"] == set()
    # one direction: the build imports what it builds
    assert graph["bookbuild"] == {"chapter_code"}


def test_every_taught_module_imports_with_the_build_unavailable(tmp_path: Path) -> None:
    # A copy of chapter_code alone, as a student takes it into a lab: bookbuild cannot
    # be found at all.
    modules = sorted(
        m.name for m in pkgutil.walk_packages(chapter_code.__path__, "chapter_code.")
    )
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
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("ok")


def test_topic_packages_hold_no_code_in_their_init() -> None:
    # An __init__ with code would run on every import of its topic, outside every
    # memoized run's key.
    for init in (ROOT / "chapter_code").rglob("__init__.py"):
        body = ast.parse(init.read_text()).body
        assert all(
            isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) for n in body
        ), init


# ---- the build itself: grouped by job, without an import circle (issue 51)
# -----------------------------------


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_imports(path: Path, package: str) -> set[str]:
    """The ``package`` modules that the source at ``path`` imports, anywhere in it
    (inside functions too): for ``from a.b import c`` the module ``a.b.c`` where that is
    a module, else ``a.b``."""
    modules = {_module_name(p) for p in _sources(package)}
    me = _module_name(path)
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == package}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = me.split(".")[
                    : len(me.split(".")) - node.level + (path.name == "__init__.py")
                ]
                base = ".".join(up + ([base] if base else []))
            if base.split(".")[0] != package:
                continue
            for alias in node.names:
                found.add(
                    f"{base}.{alias.name}"
                    if f"{base}.{alias.name}" in modules
                    else base
                )
    return {m for m in found if m in modules and m != me}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every elementary circle through the graph's strongly connected parts, as a list
    of modules (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    parts: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                parts.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return parts


def _parents(module: str) -> set[str]:
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def test_no_import_circle_inside_the_build_not_even_through_a_function() -> None:
    graph = {
        _module_name(p): _module_imports(p, "bookbuild") for p in _sources("bookbuild")
    }
    # Importing a.b.c runs a/__init__ and a/b/__init__ first: an edge to each. A
    # module's own parents are loaded before it whatever it imports, so they are no edge
    # of its code.
    graph = {
        m: {
            x
            for d in deps
            for x in {d, *_parents(d)}
            if x not in _parents(m) and x != m
        }
        for m, deps in graph.items()
    }
    assert _cycles(graph) == []


def test_the_circle_finder_finds_a_circle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [
        ["a", "b", "c"]
    ]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_build_is_grouped_by_job_with_a_docstring_line_per_module() -> None:
    packages = sorted(p.parent.name for p in (ROOT / "bookbuild").glob("*/__init__.py"))
    assert packages == ["execute", "gate", "lint", "runs", "site", "tools"]
    loose = sorted(p.name for p in (ROOT / "bookbuild").glob("*.py"))
    assert loose == ["__init__.py", "__main__.py", "build.py", "files.py"]
    for path in _sources("bookbuild"):
        tree = ast.parse(path.read_text(), str(path))
        doc = ast.get_docstring(tree)
        assert (doc or "").strip(), (
            f"{path.relative_to(ROOT)} opens with no docstring saying what it is"
        )


def test_one_formatter_and_one_line_length_over_every_python_source() -> None:
    """`make lint` checks the rules and the formatting of all four source folders, at
    the one line length of pyproject.toml (88 columns, so that a listing fits the page),
    and no folder carries a ruff configuration of its own that could set another."""
    import re
    import tomllib

    folders = ["chapter_code", "bookbuild", "tests", "labs"]
    ruff = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["ruff"]
    assert ruff["line-length"] == 88
    lint = re.search(
        r"^define LINT\n(.*?)^endef", (ROOT / "Makefile").read_text(), re.M | re.S
    )
    assert lint, "the Makefile defines no LINT"
    commands = lint.group(1).splitlines()
    for command in ("ruff check", "ruff format --check"):
        assert f"$(PY) -m {command} {' '.join(folders)}" in commands, command
    for folder in folders:
        own = [
            *(ROOT / folder).rglob("ruff.toml"),
            *(ROOT / folder).rglob(".ruff.toml"),
        ]
        assert not own, own
