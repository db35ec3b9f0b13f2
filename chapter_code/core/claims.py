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

The numbers the sentence cites are glued by the same call, once the condition
holds: ``cite={"c_pad_gap": f"{diff:.0e}"}`` glues each text under its name as
``myst_nb.glue(name, text, display=False)`` does, so the sentence reads
``{glue:text}`c_pad_gap``` and no separate ``glue`` line restates the fact. A
cited text is a string, exactly what the page shows.

Values are recorded at the precision they really have. A value the condition bounds
above by a small number (``gap < 1e-6``, any literal up to :data:`ROUNDING_BOUND`) is
rounding error by nature: it is recorded and shown as that bound, "below 1e-6", never
as the draw of this CPU's last bits. :func:`below` and :func:`above` say the same of
any value (a diverging run's loss is "above 2.773", whatever the draw). Every other
float is shown to four significant digits, and the gate compares it within one unit
of its last digit.

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
#: A glued text's name, as ``cite`` takes it (``g_pad_gap``).
GLUE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: The prefix of the glued record of a check (``check:c-pad-state``).
GLUE_PREFIX = "check:"
#: A value that the condition bounds above by a literal no larger than this
#: (``diff < 1e-6``) is rounding error by nature, recorded as the bound.
ROUNDING_BOUND = 1e-3
#: Significant digits of a float value in a check's record.
DIGITS = 4


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


def limit_text(limit: float) -> str:
    """A bound as a page writes it: ``1e-6``, ``0.001``, ``2.773``."""
    text = f"{limit:.4g}"
    return re.sub(r"e([+-])0*(\d)", lambda m: "e" + m[1].replace("+", "") + m[2], text)


@dataclass(frozen=True)
class Bound:
    """A value recorded as the bound it lies within ("below 1e-6"), not as its draw."""

    value: float
    limit: float
    side: str  # "below" or "above"

    def __post_init__(self) -> None:
        if self.side not in ("below", "above"):
            raise ValueError(f"side must be 'below' or 'above'; got {self.side!r}")
        value, limit = float(self.value), float(self.limit)
        inside = value < limit if self.side == "below" else value > limit
        if not inside:
            raise ValueError(
                f"a value recorded as {self.side} {limit_text(limit)} must lie "
                f"{self.side} it; got {value!r}"
            )

    def __str__(self) -> str:
        return f"{self.side} {limit_text(self.limit)}"


def below(value: Any, limit: float) -> Bound:
    """Record ``value`` as "below ``limit``": for a value whose draw depends on the
    CPU's last bits (a difference between two implementations, a diverging run).
    """
    return Bound(_number(value), limit, "below")


def above(value: Any, limit: float) -> Bound:
    """Record ``value`` as "above ``limit``" (see :func:`below`)."""
    return Bound(_number(value), limit, "above")


def _number(value: Any) -> float:
    if hasattr(value, "item") and callable(value.item):  # a one-element tensor
        value = value.item()
    return float(value)


def _text(value: Any) -> str:
    """A compared value as the reader sees it: floats to :data:`DIGITS` significant
    digits (always with a decimal point, so an integer reads as an integer), inside
    lists and mappings too, tensors as their item(s), a :class:`Bound` as its bound.
    """
    if isinstance(value, Bound):
        return str(value)
    if hasattr(value, "tolist") and callable(value.tolist):  # torch / numpy
        value = value.tolist()
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:#.{DIGITS}g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {_text(v)}" for k, v in value.items()) + "}"
    return str(value)


def _bounded_above(condition: ast.AST, source: str) -> dict[str, float]:
    """The expressions ``condition`` bounds above by a small literal (``x < 1e-6``):
    their source text (spaces removed) -> the literal.
    """
    out: dict[str, float] = {}
    for node in ast.walk(condition):
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
            continue
        left, op, right = node.left, node.ops[0], node.comparators[0]
        if isinstance(op, (ast.Gt, ast.GtE)):  # 1e-6 > x
            left, right = right, left
        elif not isinstance(op, (ast.Lt, ast.LtE)):
            continue
        if (
            isinstance(right, ast.Constant)
            and isinstance(right.value, (int, float))
            and not isinstance(right.value, bool)
            and 0 < right.value <= ROUNDING_BOUND
        ):
            text = "".join((ast.get_source_segment(source, left) or "").split())
            if text:
                out[text] = float(right.value)
    return out


def _condition_source(frame: Any) -> tuple[str, dict[str, float]]:
    """The source text of the ``condition`` argument of the :func:`check` call made in
    ``frame``, and which ``values`` it bounds above by a small literal (by name).
    """
    lines = linecache.getlines(frame.f_code.co_filename, frame.f_globals)
    if not lines:
        return "(source not available)", {}
    source = "".join(lines)
    try:
        tree = ast.parse(source)
    except SyntaxError:  # an IPython cell with magics: fall back to the line itself
        return lines[frame.f_lineno - 1].strip(), {}
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
                text = " ".join(
                    (ast.get_source_segment(source, condition) or "").split()
                )
                return text, _bounded_values(node, condition, source)
    return lines[frame.f_lineno - 1].strip(), {}


def _bounded_values(
    call: ast.Call, condition: ast.AST, source: str
) -> dict[str, float]:
    """The names in the call's literal ``values={...}`` whose expression the condition
    bounds above by a small literal, with that literal.
    """
    bounded = _bounded_above(condition, source)
    values = next((k.value for k in call.keywords if k.arg == "values"), None)
    if not bounded or not isinstance(values, ast.Dict):
        return {}
    out = {}
    for key, value in zip(values.keys, values.values, strict=True):
        text = "".join((ast.get_source_segment(source, value) or "").split())
        if (
            isinstance(key, ast.Constant)
            and isinstance(key.value, str)
            and text in bounded
        ):
            out[key.value] = bounded[text]
    return out


def check(
    name: str,
    condition: Any,
    *,
    because: str,
    values: Mapping[str, Any] | None = None,
    cite: Mapping[str, str] | None = None,
) -> None:
    """Declare check ``name``: record whether ``condition`` holds, and raise
    :class:`CheckFailed` if not.

    ``because`` says in words what the condition establishes ("final states
    equal to 1e-6"); ``values`` names the numbers it compared, shown beside the
    claim; ``cite`` maps glue names to the texts the claim's sentence cites
    (``{"g_gap": f"{gap:.2f}"}``), glued once the condition holds, as
    ``myst_nb.glue(name, text, display=False)`` would (the texts, like every
    argument, are computed before the check runs). A name is declared once per
    chapter. Returns nothing, so a cell that ends with a check shows no value.
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
    cited = _cited(name, cite)
    held = bool(condition)
    frame = inspect.currentframe()
    caller = frame.f_back if frame is not None else None
    source, bounded = (
        _condition_source(caller)
        if caller is not None
        else ("(source not available)", {})
    )
    shown = dict(values or {})
    for (
        key,
        limit,
    ) in bounded.items():  # rounding error by nature: recorded as its bound
        if not isinstance(shown[key], Bound) and _number(shown[key]) < limit:
            shown[key] = below(shown[key], limit)
    record = Check(
        name=name,
        held=held,
        because=because.strip(),
        condition=source,
        values={str(k): _text(v) for k, v in shown.items()},
    )
    _DECLARED[name] = record
    _publish(record)
    if not held:
        shown = ", ".join(f"{k} = {v}" for k, v in record.values.items())
        raise CheckFailed(
            f"check {name!r} failed: {record.because} does not hold"
            f" ({record.condition}{'; ' + shown if shown else ''})"
        )
    for key, text in cited.items():
        _glue(key, text)


def _cited(name: str, cite: Mapping[str, str] | None) -> dict[str, str]:
    """``cite`` checked: glue names (not a check's record) to strings."""
    if cite is None:
        return {}
    if not isinstance(cite, Mapping):
        raise TypeError(
            f"check {name!r}: cite must map glue names to the texts the sentence "
            f"cites; got {type(cite).__name__}"
        )
    for key, text in cite.items():
        if not isinstance(key, str) or not GLUE_NAME.match(key):
            raise ValueError(
                f"check {name!r}: a cited glue name is letters, digits and "
                f"underscores, such as 'g_gap'; got {key!r}"
            )
        if not isinstance(text, str):
            raise TypeError(
                f"check {name!r}: cite[{key!r}] is a {type(text).__name__}, not a "
                "string: the page shows exactly the cited text, so write it as the "
                f'sentence reads it (f"{{x:.2f}}", str(n)) or glue the value '
                "itself with glue()"
            )
    return dict(cite)


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
    _glue(GLUE_PREFIX + record.name, _Payload(record.as_json()))


def _glue(name: str, value: Any) -> None:
    """Inside a notebook kernel, ``myst_nb.glue(name, value, display=False)``;
    elsewhere nothing.
    """
    try:
        from IPython import get_ipython
    except ImportError:
        return
    if get_ipython() is None:
        return
    from myst_nb import glue

    glue(name, value, display=False)


def declared() -> dict[str, Check]:
    """The checks declared so far in this process, by name."""
    return dict(_DECLARED)


def forget() -> None:
    """Forget every declared check (for tests that declare the same names again)."""
    _DECLARED.clear()
