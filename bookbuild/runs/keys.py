"""Keys on definitions: what a job computes, not the bytes of the files it lives in.

A memoized run (:mod:`bookbuild.runs.memo`) and a sweep record
(:mod:`bookbuild.runs.sweeps`) are keyed on the *definitions the job reaches*: its
function, every function, class and module-level constant of the package that it names,
and, transitively, everything those name. Each definition enters the key in a normal
form, its syntax tree with docstrings removed (comments and formatting are not in a
syntax tree) and no module path, so

- a docstring edit, a comment, a reformat, a module moved or split, or a new
  function that the job does not call leaves every key as it was;
- a change inside a definition the job reaches (a body, a default, a decorator,
  a constant it reads) changes exactly the keys of the jobs that reach it.

Names are resolved statically, from each module's own top-level bindings
(``def``, ``class``, assignments, imports), so computing a key imports nothing.
A name bound in the package is followed wherever it is imported from (``from
chapter_code.rnn import recurrence`` then ``recurrence.rnn_step``); names from
elsewhere (PyTorch, the standard library) are left to the environment's key
(:func:`bookbuild.runs.memo.environment`: the locked packages, Python, the profile).
A local variable that shares a module-level name makes the key cover that
definition too: a key may cover more than the job needs, never less.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import io
import json
import tokenize
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def strip_docstrings(node: ast.AST) -> ast.AST:
    """``node`` with the docstring of every module, class and function in it removed (in
    place)."""
    for child in ast.walk(node):
        body = getattr(child, "body", None)
        if (
            isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)
            )
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            child.body = body[1:] or [ast.Pass()]
    return node


def normal_form(node: ast.AST) -> str:
    """The definition as its syntax tree, docstrings removed, without positions: equal
    for equal code."""
    return ast.dump(
        strip_docstrings(node), annotate_fields=True, include_attributes=False
    )


@dataclass
class Module:
    """One module's top-level bindings: definitions, assignments and imports, by the
    name they bind."""

    name: str
    # def / class / assignment, by bound name
    definitions: dict[str, ast.AST] = field(default_factory=dict)
    # name -> (module, attribute)
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    # name -> normal form, computed once
    forms: dict[str, str] = field(default_factory=dict)

    def form(self, name: str) -> str:
        if name not in self.forms:
            self.forms[name] = normal_form(copy.deepcopy(self.definitions[name]))
        return self.forms[name]


def module_file(name: str, root: Path) -> Path | None:
    path = root / Path(*name.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _assigned_names(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for t in target.elts for n in _assigned_names(t)]
    return []


def _top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements that bind a module's names, those inside a top-level ``if``,
    ``try`` or ``with`` too."""
    out: list[ast.stmt] = []
    for node in body:
        out.append(node)
        if isinstance(node, (ast.If, ast.With)):
            out += _top_level(node.body) + _top_level(getattr(node, "orelse", []))
        elif isinstance(node, ast.Try):
            out += _top_level(node.body) + [
                n for h in node.handlers for n in _top_level(h.body)
            ]
            out += _top_level(node.orelse) + _top_level(node.finalbody)
    return out


@lru_cache(maxsize=512)
def _parse(path: Path, mtime_ns: int, size: int, name: str) -> Module:
    del mtime_ns, size  # part of the cache key only: an edited file is parsed again
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    module = Module(name)
    package = name.split(".")[0]
    is_package = path.name == "__init__.py"
    for node in _top_level(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            module.definitions[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for bound in _assigned_names(target):
                    module.definitions[bound] = node
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    module.imports[alias.asname] = (alias.name, None)
                else:  # `import a.b` binds `a`, the top package
                    top = alias.name.split(".")[0]
                    module.imports[top] = (top, None)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = name.split(".")[
                    : len(name.split(".")) - node.level + (1 if is_package else 0)
                ]
                base = ".".join(parts + ([base] if base else []))
            if base.split(".")[0] != package:
                continue
            for alias in node.names:
                module.imports[alias.asname or alias.name] = (base, alias.name)
    return module


def load(name: str, root: Path) -> Module | None:
    """The bindings of module ``name`` under ``root``, or ``None`` when it is not a file
    there."""
    path = module_file(name, root)
    if path is None:
        return None
    stat = path.stat()
    return _parse(path, stat.st_mtime_ns, stat.st_size, name)


@dataclass(frozen=True)
class Reached:
    """The definitions a job reaches: their normal forms' SHA-256 by name, and the
    modules they live in."""

    # "name" (or "name [2]" for a second definition of the same name) -> SHA-256
    definitions: dict[str, str]
    modules: tuple[str, ...]

    @property
    def digest(self) -> str:
        """One SHA-256 over every reached definition, independent of which module holds
        each."""
        return hashlib.sha256(
            json.dumps(self.definitions, sort_keys=True).encode()
        ).hexdigest()


class _Walker:
    def __init__(self, root: Path, package: str) -> None:
        self.root, self.package = root, package
        self.seen: dict[tuple[str, str], str] = {}  # (module, name) -> normal form
        self.modules: set[str] = set()

    def resolve(self, module: str, name: str, depth: int = 0) -> None:
        """Follow ``name`` as bound at the top of ``module`` to its definition, and what
        that reaches."""
        if depth > 20 or (module, name) in self.seen:
            return
        info = load(module, self.root)
        if info is None:
            return
        self.modules.add(module)
        if name in info.definitions:
            self.seen[(module, name)] = info.form(name)
            self.walk(module, info.definitions[name])
        elif name in info.imports:
            source, attribute = info.imports[name]
            if (
                attribute is None
                or load(f"{source}.{attribute}", self.root) is not None
            ):
                # a module: followed through the attributes read from it
                # (``module.name``)
                return
            self.resolve(source, attribute, depth + 1)

    def module_of(self, module: str, name: str) -> str | None:
        """The package module that ``name`` names at the top of ``module``, if it names
        one."""
        info = load(module, self.root)
        if info is None or name not in info.imports:
            return None
        source, attribute = info.imports[name]
        target = source if attribute is None else f"{source}.{attribute}"
        return (
            target
            if target.split(".")[0] == self.package
            and load(target, self.root) is not None
            else None
        )

    def walk(self, module: str, node: ast.AST) -> None:
        for child in ast.walk(node):
            if isinstance(child, ast.Name):
                self.resolve(module, child.id)
            elif isinstance(child, ast.Attribute):
                chain = []
                base: ast.AST = child
                while isinstance(base, ast.Attribute):
                    chain.append(base.attr)
                    base = base.value
                if not isinstance(base, ast.Name):
                    continue
                target = self.module_of(module, base.id)
                # `pkg.mod.name`: through submodules to a definition
                for attr in reversed(chain):
                    if target is None:
                        break
                    sub = f"{target}.{attr}"
                    if load(sub, self.root) is not None:
                        target = sub
                        self.modules.add(sub)
                    else:
                        self.resolve(target, attr)
                        break


def package_root(module: Any) -> Path | None:
    """The folder that holds ``module``'s top package (``root`` of
    ``root/chapter_code/core/x.py``), or ``None``."""
    file = getattr(module, "__file__", None)
    if not file:
        return None
    depth = len(module.__name__.split(".")) - (
        0 if Path(file).name == "__init__.py" else 1
    )
    return Path(file).resolve().parents[depth]


def reached(function: str, root: Path | None = None) -> Reached:
    """What ``module:qualname`` (or ``module.qualname``) reaches: see the module's
    docstring."""
    root = root or ROOT
    module, _, qualname = (
        function.partition(":") if ":" in function else function.rpartition(".")
    )
    walker = _Walker(root, module.split(".")[0])
    walker.resolve(module, qualname.split(".")[0])
    if not walker.seen:
        raise LookupError(
            f"{function}: {qualname.split('.')[0]!r} is not defined at the top of "
            f"{module} under {root}"
        )
    names: dict[str, str] = {}
    for (_, name), form in sorted(
        walker.seen.items(), key=lambda item: (item[0][1], item[1])
    ):
        key, n = name, 1
        while key in names:
            n += 1
            key = f"{name} [{n}]"
        names[key] = hashlib.sha256(form.encode()).hexdigest()
    return Reached(names, tuple(sorted(walker.modules)))


def changed(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """The definitions that differ between two :attr:`Reached.definitions` (added,
    removed or changed)."""
    return sorted(
        name for name in set(before) | set(after) if before.get(name) != after.get(name)
    )


#: Tokens that carry no computation: comments, and the line breaks of blank or comment-
#: only lines.
_NOT_CODE = (tokenize.COMMENT, tokenize.NL)
#: Tokens whose place follows from the code around them (a trailing comment moves a
#: line's NEWLINE).
_PLACELESS = (
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENDMARKER,
    tokenize.ENCODING,
)


def source_form(source: bytes | str, places: bool = True) -> str | None:
    """A digest of a Python source's tokens without its comments: equal when the two
    sources compile alike.

    This keys a chapter's execution (:mod:`bookbuild.execute.engine`) where
    :func:`normal_form` keys a job: a chapter's outputs may show what a job's result
    cannot (a docstring, a line number), so only comments and the blank lines are left
    out, and docstrings and formatting stay in. With ``places`` (a module), every token
    keeps its line and column, so a comment at the end of a line or of the file changes
    nothing while one on a line of its own above code moves that code's line numbers and
    changes the form; the code objects compiled from two sources of one form are the
    same, line tables included. Without (a notebook's code cell, whose line numbers only
    a traceback or a warning would show, and the build allows neither in a page), a
    comment line anywhere changes nothing. ``None`` where the source is not plain Python
    (an IPython magic, a shell escape, a token Python does not know, a syntax error):
    such a source is keyed on its text."""
    if isinstance(source, str):
        if any(line.lstrip().startswith(("%", "!")) for line in source.splitlines()):
            return None
        source = source.encode()
    digest = hashlib.sha256()
    try:
        for token in tokenize.tokenize(io.BytesIO(source).readline):
            if token.type == tokenize.ERRORTOKEN:
                return None
            if token.type in _NOT_CODE:
                continue
            place = token.start if places and token.type not in _PLACELESS else ()
            digest.update(
                json.dumps([token.type, token.string, place]).encode() + b"\n"
            )
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError):
        return None
    return digest.hexdigest()[:16]
