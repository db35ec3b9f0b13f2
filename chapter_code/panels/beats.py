"""What every interactive panel is made of: beats, checked sentences and numbers.

A panel is a short sequence of *beats*: a state to draw and one sentence of
transcript that says what the picture shows at that beat, plus, for some
panels, parameter controls a reader may move. The player in ``panels/`` (plain
JavaScript and SVG) draws the states; every number it shows on a beat is
computed at build time by the chapter's own code, in the chapter's topic package
(``bptt/panels.py``, ``gated/panels.py``, ``sampling/panels.py``). Where a slider
asks for a value between beats, the panel recomputes it in JavaScript; the browser
tests compare those numbers with the Python functions.

Every sentence that states a result is checked when the data is built
(:func:`claim` raises if it is false), so a panel cannot say what its numbers
do not show.

Text that a page shows (titles, summaries, notes, beats) writes its math as TeX
between dollar signs (``$b_f = +1$``) and the names of code between backticks; the
directive typesets the math as the page's own math and the names as code. A slider's
label and a setting's description name a symbol as ``{key}``, one of the panel's
``symbols`` (TeX), typeset once on the page. Each beat carries the number of words
of its narration (:func:`reading_words`): playing, the player holds a beat ``words *
msPerWord`` milliseconds (at 1x), after a move of ``moveMs``.
"""

from __future__ import annotations

from typing import Any

Panel = dict[str, Any]

#: Milliseconds a beat's move takes at 1x (nothing moves under reduced motion).
MOVE_MS = 1200
#: Milliseconds a beat is held per word of its narration at 1x: about 180 words a
#: minute, slow enough to read a sentence with numbers while looking at the picture.
MS_PER_WORD = 330

_SUPERSCRIPT = str.maketrans(
    "-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079"
)


def number(value: float, digits: int = 2) -> str:
    """A number as the panels print it: plain between 0.001 and 10000, else ``m × 10ⁿ``
    (``digits`` significant).
    """
    if value == 0 or 1e-3 <= abs(value) < 1e4:
        # rounded, then printed plainly: 9999 reads 10000, as the player's JavaScript
        # prints it, not 1e+04
        return f"{float(f'{value:.{digits + 1}g}'):g}" if value else "0"
    mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
    return f"{mantissa} \u00d7 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def signed(value: float) -> str:
    """``+1``, ``0``, ``−1``: a bias as the panels print it."""
    return "0" if value == 0 else f"{value:+g}".replace("-", "\u2212")


def reading_words(text: str) -> int:
    """The words a reader reads in ``text``: its whitespace-separated pieces, math
    included (``$b_f = +1$`` is three).
    """
    return len(text.replace("$", "").split())


def tex_signed(value: float) -> str:
    """``+1``, ``0``, ``-1``: a signed number inside TeX (an ASCII minus, which TeX
    sets as a minus sign).
    """
    return "0" if value == 0 else f"{value:+g}"


def claim(condition: bool, what: str) -> None:
    """Refuse to build a panel whose transcript would state something its numbers do not
    show.
    """
    if not condition:
        raise AssertionError(
            f"panel data: the transcript claims {what}, but the computation disagrees"
        )


def beat(state: dict[str, float], text: str) -> dict[str, Any]:
    """One beat; apostrophes typeset as the page typesets them (so the transcript and
    the data agree).
    """
    return {"state": state, "text": text.replace("'", "\u2019")}
