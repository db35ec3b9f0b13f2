"""A page's code cells before they run: every one labelled once, and its comparison
options valid.

The engine checks them before a chapter executes, so a missing label or a bad option
costs no execution; the gate (:mod:`bookbuild.gate.baselines`) reads the same options
when it compares the outputs.
"""

from __future__ import annotations

from typing import Any

CELL_OPTIONS = ("tolerance", "image_tolerance", "volatile")


class RecordError(ValueError):
    """A chapter's cells cannot be recorded (a missing or repeated label)."""


def _is_number(value: Any) -> bool:
    return (
        isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
    )


def cell_options(cell: Any, chapter: str, number: int) -> dict[str, Any]:
    """The gate's options of one code cell, validated (a wrong type or key is an error
    naming the cell)."""
    import difflib

    label = cell.metadata.get("label", f"code cell #{number}")
    where = f"{chapter}.md, cell {label!r}"
    for key in cell.metadata:
        close = difflib.get_close_matches(str(key), CELL_OPTIONS, n=1, cutoff=0.75)
        if key not in CELL_OPTIONS and close:
            raise RecordError(
                f"{where}: unknown option ':{key}:'; did you mean ':{close[0]}:'?"
            )
    options = {k: cell.metadata[k] for k in CELL_OPTIONS if k in cell.metadata}
    tol = options.get("tolerance")
    if tol is not None:
        example = (
            "{rtol: 1e-3, reason: 'why the output has no more precision than this'}"
        )
        if not isinstance(tol, dict) or not tol:
            raise RecordError(
                f"{where}: ':tolerance:' must be a mapping such as {example}; got "
                f"{tol!r}"
            )
        for key, value in tol.items():
            if key not in ("rtol", "atol", "image", "lines", "reason"):
                raise RecordError(
                    f"{where}: ':tolerance:' accepts the keys rtol, atol, image, lines "
                    f"and reason; got {key!r}"
                )
            if key == "lines" and not (
                isinstance(value, dict)
                and value
                and all(isinstance(k, str) and _is_number(v) for k, v in value.items())
            ):
                raise RecordError(
                    f"{where}: ':tolerance:' lines must map labels of the figure's "
                    "lines to their own rtol, such as {lines: {no clipping: 10}}; "
                    f"got {value!r}"
                )
            if key not in ("reason", "lines") and not _is_number(value):
                raise RecordError(
                    f"{where}: ':tolerance:' {key} must be a number >= 0; got {value!r}"
                )
        reason = tol.get("reason")
        if not isinstance(reason, str) or len(reason.split()) < 3:
            raise RecordError(
                f"{where}: ':tolerance:' needs a reason, a few words on why the output "
                f"has no more precision than it allows, such as {example}; got "
                f"{reason!r}"
            )
        if "image" in tol:
            options["image_tolerance"] = tol["image"]
    elif "image_tolerance" in options:
        raise RecordError(
            f"{where}: ':image_tolerance:' is now written inside ':tolerance:' with "
            "its reason, such as {image: 30, reason: '...'}"
        )
    if "image_tolerance" in options and not _is_number(options["image_tolerance"]):
        raise RecordError(
            f"{where}: ':image_tolerance:' must be a number >= 0 (an RMS over pixels); "
            f"got {options['image_tolerance']!r}"
        )
    if "volatile" in options and not isinstance(options["volatile"], bool):
        raise RecordError(
            f"{where}: ':volatile:' must be true or false; got {options['volatile']!r}"
        )
    return options


def validate_cells(nb: Any, chapter: str) -> dict[str, dict]:
    """Every code cell has a unique label and valid gate options; return the options by
    label.

    Runs before a chapter executes, so a missing label costs no execution. Cells
    are counted among code cells only, and named by their first line.
    """
    problems: list[str] = []
    options: dict[str, dict] = {}
    number = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        number += 1
        first = next(
            (ln for ln in str(cell.source).splitlines() if ln.strip()), "(empty)"
        )
        label = cell.metadata.get("label")
        if not label:
            problems.append(
                f"{chapter}.md: code cell #{number} (starting `{first[:60]}`) has no "
                "':label:' option; every code cell needs a unique one"
            )
            continue
        if label in options:
            problems.append(
                f"{chapter}.md: the label {label!r} is used by more than one code cell "
                f"(again at code cell #{number})"
            )
            continue
        try:
            options[label] = cell_options(cell, chapter, number)
        except RecordError as exc:
            problems.append(str(exc))
    if problems:
        raise RecordError("\n".join(problems))
    return options
