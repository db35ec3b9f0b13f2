"""The book's plotting style, its colours per architecture, and diagrams drawn at build time.

Every figure in the book is made by a function here or by a short page cell
that calls :func:`use_book_style` first, so fonts, sizes and colours agree
across chapters. Colours are fixed per architecture (a vanilla RNN is the same
orange on every page) and chosen to stay distinct for common colour-vision
deficiencies (Okabe and Ito's palette).

Pages: every page with a figure; "Recurrence" draws :func:`draw_loop_and_unrolled`.
"""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch
from matplotlib.text import Text

STYLE_FILE = Path(__file__).with_name("book.mplstyle")

#: Pixels per CSS pixel in the PNG a page shows: 2 keeps lines and text sharp on high-density screens.
PIXEL_RATIO = 2
#: PNG text chunk holding the height, in image pixels, of the smallest text drawn in the figure.
SMALLEST_TEXT_KEY = "Smallest text px"

#: One colour per architecture, used on every page (Okabe-Ito palette).
COLORS: dict[str, str] = {
    "rnn": "#E69F00",  # orange
    "lstm": "#0072B2",  # blue
    "gru": "#009E73",  # green
    "ngram": "#CC79A7",  # purple
    "linear": "#D55E00",  # vermillion
    "bound": "#999999",  # grey, for bounds and references
    "other": "#56B4E9",  # sky blue
}


def use_book_style() -> None:
    """Apply the book's matplotlib style file and, inside a notebook kernel, the book's PNG output (idempotent)."""
    plt.style.use(STYLE_FILE)
    _show_figures_as_book_png()


def smallest_text_points(fig: Figure) -> float:
    """Font size, in points, of the smallest text drawn in ``fig`` (0 when it draws none).

    Draws the figure first, so tick labels hold their text; the axis texts of
    an axes switched off (``ax.axis("off")``) are not drawn and do not count.
    """
    fig.canvas.draw()
    hidden = {id(t) for ax in fig.axes if not ax.axison for axis in (ax.xaxis, ax.yaxis) for t in axis.findobj(Text)}
    sizes = [
        t.get_fontsize() for t in fig.findobj(Text)
        if id(t) not in hidden and t.get_visible() and t.get_text().strip()
    ]
    return min(sizes, default=0.0)


def figure_png(fig: Figure) -> tuple[bytes, dict[str, int]]:
    """Render ``fig`` as a PNG at ``PIXEL_RATIO`` times its dpi; return the bytes and the display size in CSS px.

    The PNG records, in a text chunk, how tall its smallest text is in image
    pixels, so a browser test can tell how large that text appears on a phone.
    """
    dpi = fig.dpi * PIXEL_RATIO
    smallest_px = smallest_text_points(fig) / 72 * dpi
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight",
                metadata={SMALLEST_TEXT_KEY: f"{smallest_px:.2f}"})
    data = buffer.getvalue()
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")  # from the IHDR chunk
    return data, {"width": width // PIXEL_RATIO, "height": height // PIXEL_RATIO}


def _show_figures_as_book_png() -> None:
    """Make a running IPython kernel display every figure through :func:`figure_png`."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return
    # Importing the inline backend first lets it install its own formatter now, not over ours later.
    import matplotlib_inline.backend_inline  # noqa: F401

    shell.display_formatter.formatters["image/png"].for_type(Figure, figure_png)


def _box(ax: Axes, x: float, y: float, text: str, color: str, width: float = 0.9, height: float = 0.6) -> None:
    patch = FancyBboxPatch(
        (x - width / 2, y - height / 2),
        width,
        height,
        boxstyle="round,pad=0.04",
        facecolor=color,
        edgecolor="black",
        linewidth=1.0,
        alpha=0.9,
    )
    ax.add_patch(patch)
    ax.text(x, y, text, ha="center", va="center", fontsize=14)


def _arrow(ax: Axes, start: tuple[float, float], end: tuple[float, float], **kwargs: object) -> None:
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=12, linewidth=1.2, **kwargs))


def draw_loop_and_unrolled(steps: int = 4) -> Figure:
    """Left: one cell whose state feeds back into itself. Right: the same cell copied ``steps`` times."""
    if not isinstance(steps, int) or not 2 <= steps <= 8:
        raise ValueError(f"steps must be an int in [2, 8]; got {steps!r}")
    use_book_style()
    fig, (left, right) = plt.subplots(
        1, 2, figsize=(7.6, 2.9), gridspec_kw={"width_ratios": [1.0, steps + 0.6]}
    )
    cell = COLORS["rnn"]
    # The loop: one cell, input below, state above, and an arc back into the cell.
    _box(left, 0.5, 1.0, "$f$", cell)
    _arrow(left, (0.5, 0.0), (0.5, 0.68))
    _arrow(left, (0.5, 1.32), (0.5, 2.0))
    left.text(0.5, -0.2, "$x_t$", ha="center", va="top")
    left.text(0.5, 2.1, "$h_t$", ha="center", va="bottom")
    _arrow(left, (0.97, 1.1), (0.97, 0.9), connectionstyle="arc3,rad=-2.6")
    left.text(1.45, 1.0, "$h_{t-1}$", ha="left", va="center")
    left.set_xlim(-0.3, 1.9)
    left.set_title("the loop")
    # The unrolled chain: the same cell at every step, state passed left to right.
    half = 0.3  # half the width of a cell box on the chain
    for t in range(1, steps + 1):
        _box(right, t, 1.0, "$f$", cell, width=2 * half)
        _arrow(right, (t, 0.0), (t, 0.68))
        _arrow(right, (t, 1.32), (t, 2.0))
        right.text(t, -0.2, f"$x_{t}$", ha="center", va="top")
        right.text(t, 2.1, f"$h_{t}$", ha="center", va="bottom")
        _arrow(right, (t - 1 + half, 1.0), (t - half, 1.0))  # state from the previous step
    right.text(half - 0.05, 1.0, "$h_0$", ha="right", va="center")
    right.text(steps + 0.45, 1.0, "...", ha="left", va="center")
    right.set_xlim(-0.1, steps + 0.9)
    right.set_title("unrolled: one shared $f$ at every step")
    for ax in (left, right):
        ax.set_ylim(-0.6, 2.5)
        ax.set_aspect("equal")
        ax.axis("off")
    fig.tight_layout()
    return fig
