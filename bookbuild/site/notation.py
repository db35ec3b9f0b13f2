"""Numbers in the reader's notation: a glued ``1.3e-20`` is set as 1.3 × 10⁻²⁰.

Cells glue numbers as Python formats them (``f"{x:.1e}"``), and the gate
compares those strings; only their rendering changes. :func:`split_scientific`
finds each number in E notation in a glued text and splits it into mantissa and
exponent; :func:`scientific_nodes` builds the docutils nodes, a superscript for
the exponent, so the HTML shows ``10<sup>−20</sup>`` and the PDF
``10\\textsuperscript{−20}``. A mantissa of exactly 1 is dropped (``1e-6`` is
10⁻⁶), the exponent loses its ``+`` and leading zeros, and its minus is the
typographic one (U+2212). The mantissa, the times sign and the power are joined
by no-break spaces, so a line never breaks inside a number.

Pages: every chapter (its glued numbers).
"""

from __future__ import annotations

import re

from docutils import nodes

MINUS = "\u2212"
NBSP = "\u00a0"
#: A decimal number in E notation, standing alone (not part of a word, a version or a
#: longer number).
_E_NUMBER = re.compile(r"(?<![\w.])([-+\u2212]?\d+(?:\.\d+)?)[eE]([-+]?)(\d+)(?![\w.])")


def split_scientific(text: str) -> list[str | tuple[str, str]]:
    """``text`` as pieces: plain strings, and ``(base, exponent)`` for each number in E
    notation.

    ``base`` is ``"1.3 × 10"`` (or ``"10"`` for a mantissa of 1) with no-break
    spaces; ``exponent`` is ``"−20"``. ``"".join`` of the plain pieces and the
    numbers' source text gives ``text`` back (see the tests).
    """
    pieces: list[str | tuple[str, str]] = []
    at = 0
    for match in _E_NUMBER.finditer(text):
        mantissa, sign, digits = match.groups()
        if match.start() > at:
            pieces.append(text[at : match.start()])
        mantissa = mantissa.replace("-", MINUS)
        unsigned = mantissa.lstrip("+" + MINUS)
        power = f"{MINUS if sign == '-' else ''}{int(digits)}"
        if unsigned == "1" or re.fullmatch(r"1\.0+", unsigned):
            base = f"{mantissa[: len(mantissa) - len(unsigned)].replace('+', '')}10"
        else:
            base = f"{mantissa.lstrip('+')}{NBSP}×{NBSP}10"
        pieces.append((base, power))
        at = match.end()
    if at < len(text):
        pieces.append(text[at:])
    return pieces


def scientific_nodes(text: str) -> list[nodes.Node]:
    """Text and superscript nodes for ``text``; a single text node when it holds no E
    notation."""
    out: list[nodes.Node] = []
    for piece in split_scientific(text):
        if isinstance(piece, str):
            out.append(nodes.Text(piece))
        else:
            base, power = piece
            out += [nodes.Text(base), nodes.superscript(power, power)]
    return out


def set_scientific(node: nodes.Element) -> None:
    """Rewrite, in place, every text child of ``node`` that holds a number in E
    notation."""
    for child in list(node.children):
        if isinstance(child, nodes.Text):
            replaced = scientific_nodes(str(child))
            if len(replaced) != 1 or not isinstance(replaced[0], nodes.Text):
                node.replace(child, replaced)
        elif isinstance(child, nodes.Element):
            set_scientific(child)
