"""Text that overlaps text in a figure: found from matplotlib's own boxes, at build
time.

:func:`overlapping_texts` draws the figure once with a renderer that notes every
text it draws (tick labels outside the view, empty strings and hidden artists are
never drawn, so they never count), takes each drawn text's box in display
pixels, and reports every pair whose boxes overlap by more than
:data:`MIN_OVERLAP_PT` points in both directions. The kernel adds the pairs to a
figure's summary (:func:`bookbuild.execute.kernel_hooks.summarise_figure`), and the
build fails on any (:func:`bookbuild.gate.layout_verdict`): a figure whose labels
print over each other is a defect to fix in its plotting code, not an output to
accept.

Pages: none (the build's machinery); every figure the chapters draw.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

#: Overlap, in points (1/72 in) in both directions, above which two texts collide; a
#: box's padding (the font's descent and leading) may touch its neighbour's without a
#: visible collision.
MIN_OVERLAP_PT = 1.0


def drawn_texts(fig: Any) -> list[Any]:
    """The Text artists the figure draws, in drawing order, each once."""
    canvas = fig.canvas
    renderer = canvas.get_renderer()
    drawn: dict[int, Any] = {}
    original = renderer.draw_text

    def noting(
        gc: Any,
        x: float,
        y: float,
        s: str,
        prop: Any,
        angle: float,
        ismath: Any = False,
        mtext: Any = None,
    ) -> Any:
        if mtext is not None and s.strip():
            drawn.setdefault(id(mtext), mtext)
        return original(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)

    renderer.draw_text = noting
    try:
        fig.draw(renderer)
    finally:
        # the instance attribute; the class's method shows through again
        del renderer.draw_text
    return list(drawn.values())


def overlapping_texts(fig: Any, min_pt: float = MIN_OVERLAP_PT) -> list[str]:
    """Every pair of drawn texts whose boxes overlap by more than ``min_pt`` points both
    ways, as ``'"a" and "b"'``.
    """
    if not min_pt >= 0:
        raise ValueError(f"min_pt must be a number >= 0; got {min_pt!r}")
    texts = drawn_texts(fig)
    renderer = fig.canvas.get_renderer()
    limit = min_pt * fig.dpi / 72.0
    boxes = [(t, t.get_window_extent(renderer)) for t in texts]
    found = []
    for (a, box_a), (b, box_b) in combinations(boxes, 2):
        width = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
        height = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
        if width > limit and height > limit:
            found.append(f"{_quoted(a)} and {_quoted(b)}")
    return found


def _quoted(text: Any) -> str:
    return '"' + " ".join(text.get_text().split())[:60] + '"'
