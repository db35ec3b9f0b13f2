"""Sweep records carried across a move of modules: the same definitions, under new module names.

A record's code hash names its job function and the modules of its source
closure (:func:`bookbuild.sweeps.code_hash`), so moving a module into a topic
package, or splitting one module in two, stales every record that reads it,
although not one definition the job runs has changed. Re-running a sweep costs
hours of the machine; :func:`migrate` instead proves, record by record, that
nothing the job executes changed, and only then re-keys the record:

1. The record matches the code at ``from_commit``: its code hash is recomputed
   from that commit's files (``git archive``), so a record that was already
   stale there is left stale.
2. Every top-level definition in the job's *current* source closure (functions,
   classes, assignments; docstrings removed, imports left out, since they only
   name where a definition lives) is, name for name, the same syntax tree as the
   definition of that name in the closure at ``from_commit``, and no name is
   defined twice in either closure. A changed body, default, decorator or
   constant fails the migration for that record.
3. The job function keeps its name.

A migrated record keeps its metrics, parameters, seed, commit and timing, and
gains ``"moved": {"from_commit", "function", "code_hash"}``, so a reviewer sees
that it was re-keyed and from what. Records made from a dirty tree stay so;
re-running the sweep from a clean commit replaces them.

A module-level constant whose text had to change with the move (a path
computed from ``__file__`` one folder deeper) may be named with ``--same
NAME=REASON``; its reason is stored in the record's ``moved.differs``.

Command: ``python -m bookbuild experiments migrate --from REV [--same NAME=REASON]`` (all sweeps).
"""

from __future__ import annotations

import ast
import io
import json
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from bookbuild import files, runs, sweeps


class MoveError(ValueError):
    """A record cannot be carried over: what it ran is not what the current code runs."""


def _strip_docstrings(node: ast.AST) -> ast.AST:
    for child in ast.walk(node):
        body = getattr(child, "body", None)
        if (isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            child.body = body[1:] or [ast.Pass()]
    return node


def definitions(closure: dict[str, str], root: Path) -> dict[str, str]:
    """``{name: syntax tree}`` of every top-level definition in the modules of ``closure`` (imports left out)."""
    out: dict[str, str] = {}
    for module in closure:
        path = runs._module_file(module, root)
        if path is None:
            raise MoveError(f"module {module} of the closure has no source under {root}")
        tree = _strip_docstrings(ast.parse(files.code_bytes(path).decode(), str(path)))
        for node in tree.body:  # type: ignore[attr-defined]
            if isinstance(node, (ast.Import, ast.ImportFrom, ast.Pass)):
                continue
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names = [node.name]
            elif isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names = [node.target.id]
            else:
                names = [f"<statement {ast.dump(node)}>"]
            for name in names:
                if name in out:
                    raise MoveError(f"{name} is defined twice in the closure of {sorted(closure)}")
                out[name] = ast.dump(node)
    return out


def check_move(record: dict[str, Any], new_function: str, old_root: Path, new_root: Path,
               allowed: dict[str, str] | None = None) -> dict[str, Any]:
    """The record re-keyed for ``new_function``, or :class:`MoveError` saying what differs.

    ``allowed`` names module-level constants whose text may differ, each with the reason it still holds the
    same value (a path written from a module one folder deeper); the reasons are kept in the record.
    """
    allowed = allowed or {}
    old_function = record["function"]
    old_hash, old_sources = sweeps.code_hash(old_function, old_root)
    if old_hash != record["code_hash"]:
        raise MoveError(f"{record['sweep']}/{record['job']}.seed{record['seed']}: the record does not match the code "
                        "at the old commit (it was already stale there)")
    if old_function.partition(":")[2] != new_function.partition(":")[2]:
        raise MoveError(f"the job function was renamed: {old_function} -> {new_function}")
    new_hash, new_sources = sweeps.code_hash(new_function, new_root)
    old_defs, new_defs = definitions(old_sources, old_root), definitions(new_sources, new_root)
    changed = sorted(n for n, d in new_defs.items() if old_defs.get(n) != d and n not in allowed)
    for name in sorted(set(allowed) & set(new_defs)):
        if not new_defs[name].startswith(("Assign(", "AnnAssign(")) or name not in old_defs:
            raise MoveError(f"only a constant defined before and after may differ; {name} is not one")
    if changed:
        raise MoveError(f"{record['sweep']}: definitions differ from the old commit's: {', '.join(changed)}")
    moved = dict(record)
    moved.update(function=new_function, code_hash=new_hash, sources=new_sources,
                 moved={"from_commit": None, "function": old_function, "code_hash": old_hash,
                        "differs": {n: allowed[n] for n in sorted(set(allowed) & set(new_defs))
                                    if old_defs[n] != new_defs[n]}})
    return moved


def _archive(commit: str, root: Path, into: Path) -> str:
    full = subprocess.run(["git", "rev-parse", "--verify", f"{commit}^{{commit}}"], cwd=root, capture_output=True,
                          text=True)
    if full.returncode != 0:
        raise files.UserError(f"experiments migrate: {commit!r} is not a commit of this repository")
    data = subprocess.run(["git", "archive", "--format=tar", full.stdout.strip(), "chapter_code"], cwd=root,
                          capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return full.stdout.strip()


def migrate(from_commit: str, root: Path | None = None, dry_run: bool = False,
            allowed: dict[str, str] | None = None) -> list[str]:
    """Re-key every record that the move since ``from_commit`` staled without changing what it ran."""
    root = root or sweeps.ROOT
    report = []
    with tempfile.TemporaryDirectory() as tmp:
        old_root = Path(tmp)
        commit = _archive(from_commit, root, old_root)
        for name, sweep in sweeps.registry().items():
            new_function = sweeps.function_path(sweep.job)
            for config in sweep.configs:
                folder = sweeps.records_dir(name, config, root)
                for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
                    record = json.loads(path.read_text())
                    if record.get("function") == new_function and record.get("code_hash") == \
                            sweeps.code_hash(new_function, root)[0]:
                        report.append(f"{path.relative_to(root)}: fresh already")
                        continue
                    if sweeps.SEAL in record and record[sweeps.SEAL] != sweeps.seal(record):
                        raise MoveError(f"{path.relative_to(root)}: edited since it was written (its "
                                        "record_sha256 does not match its content); not moved")
                    moved = check_move(record, new_function, old_root, root, allowed)
                    moved["moved"]["from_commit"] = commit[:12]
                    if sweeps.SEAL in record:  # re-keyed by this proof, sealed again
                        moved[sweeps.SEAL] = sweeps.seal(moved)
                    if not dry_run:
                        files.write_json(path, moved)
                    report.append(f"{path.relative_to(root)}: {record['function']} -> {new_function}")
    return report
