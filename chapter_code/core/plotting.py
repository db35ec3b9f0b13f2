"""The book's plotting style, its colours per architecture, and the PNG form every page
shows.

Every figure in the book is made by a function here or by a short page cell
that calls :func:`use_book_style` first, so fonts, sizes and colours agree
across chapters. Colours are fixed per architecture (a vanilla RNN is the same
orange on every page) and chosen to stay distinct for common colour-vision
deficiencies (Okabe and Ito's palette).

Pages: every page with a figure.
"""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.text import Text

STYLE_FILE = Path(__file__).with_name("book.mplstyle")

#: Pixels per CSS pixel in the PNG a page shows: 2 keeps lines and text sharp on
#: high-density screens.
PIXEL_RATIO = 2
#: PNG text chunk holding the height, in image pixels, of the smallest text drawn in the
#: figure.
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
    """Apply the book's matplotlib style file and, inside a notebook kernel, the book's
    PNG output (idempotent).
    """
    plt.style.use(STYLE_FILE)
    _show_figures_as_book_png()


def smallest_text_points(fig: Figure) -> float:
    """Font size, in points, of the smallest text drawn in ``fig`` (0 when it draws
    none).

    Draws the figure first, so tick labels hold their text; the axis texts of
    an axes switched off (``ax.axis("off")``) are not drawn and do not count.
    """
    fig.canvas.draw()
    hidden = {
        id(t)
        for ax in fig.axes
        if not ax.axison
        for axis in (ax.xaxis, ax.yaxis)
        for t in axis.findobj(Text)
    }
    sizes = [
        t.get_fontsize()
        for t in fig.findobj(Text)
        if id(t) not in hidden and t.get_visible() and t.get_text().strip()
    ]
    return min(sizes, default=0.0)


def figure_png(fig: Figure) -> tuple[bytes, dict[str, int]]:
    """Render ``fig`` as a PNG at ``PIXEL_RATIO`` times its dpi; return the bytes and
    the display size in CSS px.

    The PNG records, in a text chunk, how tall its smallest text is in image
    pixels, so a browser test can tell how large that text appears on a phone.
    """
    dpi = fig.dpi * PIXEL_RATIO
    smallest_px = smallest_text_points(fig) / 72 * dpi
    buffer = io.BytesIO()
    fig.savefig(
        buffer,
        format="png",
        dpi=dpi,
        bbox_inches="tight",
        metadata={SMALLEST_TEXT_KEY: f"{smallest_px:.2f}"},
    )
    data = buffer.getvalue()
    # from the IHDR chunk
    width, height = (
        int.from_bytes(data[16:20], "big"),
        int.from_bytes(data[20:24], "big"),
    )
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
    # Importing the inline backend first lets it install its own formatter now, not over
    # ours later.
    import matplotlib_inline.backend_inline  # noqa: F401

    shell.display_formatter.formatters["image/png"].for_type(Figure, figure_png)
