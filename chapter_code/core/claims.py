"""Checks that hold the book's result sentences: one function, :func:`check`.

A sentence of prose that states a result ("the padded sequence ends in the
state it reaches alone") is a *claim*: the page marks it with the ``{claim}``
role and names a check, ``` {claim}`the padded sequence ends ... <c-pad-state>` ```.
The check is declared in a (hidden) code cell of the same page::

    from chapter_code.core import claims

    claims.check("c-pad-state", diff <= 1e-6, because="final states equal to 1e-6",
                 values={"largest difference": diff})

:func:`check` records the name, whether the condition held, the values it
compared and the source text of the condition, and raises
:class:`CheckFailed` when the condition is false, so the cell fails and the
build names the page and the cell. Inside a chapter's kernel the record is
also glued (``check:<name>``) so the page can show, beside the sentence, what
was checked and the values this build saw; the gate compares it with the
baseline like any other output. Outside a kernel (a test, a lab) it checks
and records only.

Pages: every page with result sentences; the appendix "What this build checked" lists
them all.
"""

from __future__ import annotations

import ast
import inspect
import json
import linecache
import math
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

#: A check's name: lower-case words joined by hyphens, as in a Sphinx label.
NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
#: The prefix of the glued record of a check (``check:c-pad-state``).
GLUE_PREFIX = "check:"


class CheckFailed(AssertionError):
    """A check's condition was false: the sentence that names it is not true in this
    build.
    """


@dataclass(frozen=True)
class Check:
    """What one call of :func:`check` saw."""

    name: str
    held: bool
    because: str
    condition: str  # the source text of the condition, as written in the cell
    values: dict[str, str]  # each compared value as text

    def as_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, ensure_ascii=False)


#: Every check declared in this process, by name (a kernel executes one chapter).
_DECLARED: dict[str, Check] = {}


def _text(value: Any) -> str:
    """A compared value as the reader sees it: floats to 6 significant digits, tensors
    as their item(s).
    """
    if hasattr(value, "tolist") and callable(value.tolist):  # torch / numpy
        value = value.tolist()
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.6g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    return str(value)


def _condition_source(frame: Any) -> str:
    """The source text of the ``condition`` argument of the :func:`check` call made in
    ``frame``.
    """
    lines = linecache.getlines(frame.f_code.co_filename, frame.f_globals)
    if not lines:
        return "(source not available)"
    source = "".join(lines)
    try:
        tree = ast.parse(source)
    except SyntaxError:  # an IPython cell with magics: fall back to the line itself
        return lines[frame.f_lineno - 1].strip()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and node.lineno <= frame.f_lineno <= (node.end_lineno or node.lineno)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "check"
        ):
            condition = (
                node.args[1]
                if len(node.args) > 1
                else next(
                    (k.value for k in node.keywords if k.arg == "condition"), None
                )
            )
            if condition is not None:
                return " ".join(
                    (ast.get_source_segment(source, condition) or "").split()
                )
    return lines[frame.f_lineno - 1].strip()


def check(
    name: str, condition: Any, *, because: str, values: Mapping[str, Any] | None = None
) -> bool:
    """Declare check ``name``: record whether ``condition`` holds, and raise
    :class:`CheckFailed` if not.

    ``because`` says in words what the condition establishes ("final states
    equal to 1e-6"); ``values`` names the numbers it compared, shown beside the
    claim. A name is declared once per chapter. Returns ``True``.
    """
    if not isinstance(name, str) or not NAME.match(name):
        raise ValueError(
            "name must be lower-case words joined by hyphens, such as "
            f"'c-pad-state'; got {name!r}"
        )
    if not isinstance(because, str) or not because.strip():
        raise ValueError(
            f"because must say in words what the check establishes; got {because!r}"
        )
    if name in _DECLARED:
        raise ValueError(
            f"check {name!r} is declared twice; each check is declared by one cell"
        )
    if values is not None and not isinstance(values, Mapping):
        raise TypeError(
            "values must be a mapping of names to compared values; got "
            f"{type(values).__name__}"
        )
    held = bool(condition)
    frame = inspect.currentframe()
    caller = frame.f_back if frame is not None else None
    record = Check(
        name=name,
        held=held,
        because=because.strip(),
        condition=_condition_source(caller)
        if caller is not None
        else "(source not available)",
        values={str(k): _text(v) for k, v in (values or {}).items()},
    )
    _DECLARED[name] = record
    _publish(record)
    if not held:
        shown = ", ".join(f"{k} = {v}" for k, v in record.values.items())
        raise CheckFailed(
            f"check {name!r} failed: {record.because} does not hold"
            f" ({record.condition}{'; ' + shown if shown else ''})"
        )
    return True


class _Payload:
    """A glued value whose plain-text form is the check's JSON (what the gate records
    and the page reads).
    """

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _publish(record: Check) -> None:
    """Inside a notebook kernel, glue the record so that the page and the gate see it;
    elsewhere nothing.
    """
    try:
        from IPython import get_ipython
    except ImportError:
        return
    if get_ipython() is None:
        return
    from myst_nb import glue

    glue(GLUE_PREFIX + record.name, _Payload(record.as_json()), display=False)


def declared() -> dict[str, Check]:
    """The checks declared so far in this process, by name."""
    return dict(_DECLARED)


def forget() -> None:
    """Forget every declared check (for tests that declare the same names again)."""
    _DECLARED.clear()
