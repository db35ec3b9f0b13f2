"""How the book's functions refuse bad arguments: one check, one message.

A function that takes a count (a length, a batch size, a number of steps or
layers) refuses anything but an int of at least 1 with a ``ValueError`` that
names the argument, what it accepts and what it got. ``True`` is not a count
here, although Python counts it as an int.

Pages: none (used by the listings of every chapter).
"""

from __future__ import annotations


def positive_ints(**values: object) -> None:
    """Raise ``ValueError`` for the first of ``values`` that is not an int >= 1.

    ``positive_ints(window=window, steps=steps)`` names the argument in its message.
    """
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an int >= 1; got {value!r}")


def positive_int_fields(obj: object, *names: str) -> None:
    """:func:`positive_ints` for the attributes ``names`` of ``obj`` (a dataclass's
    ``__post_init__``).
    """
    positive_ints(**{name: getattr(obj, name) for name in names})
