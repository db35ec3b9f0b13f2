"""Tests for chapter_code.core.plotting: the diagram draws, bad input is named, the
style applies.

Tests for chapter_code.core.plotting that pin what the style would otherwise hide: the
boxes' own colours, the PNG's own settings, which texts count as the smallest, the steps
range, and the hook that shows figures as the book's PNGs inside a kernel.
"""

from __future__ import annotations

import io
import sys
import types

import matplotlib.pyplot as plt
import pytest
from matplotlib.figure import Figure
from PIL import Image

from chapter_code.core import plotting as figures
from chapter_code.core.plotting import (
    COLORS,
    PIXEL_RATIO,
    SMALLEST_TEXT_KEY,
    figure_png,
    smallest_text_points,
    use_book_style,
)
from chapter_code.rnn.diagrams import draw_loop_and_unrolled
from tests.figure_facts import diagram_facts


def test_unrolled_diagram_has_one_cell_per_step_plus_the_loop() -> None:
    fig = draw_loop_and_unrolled(steps=5)
    left, right = fig.axes
    texts = {t.get_text() for t in right.texts}
    assert {f"$x_{t}$" for t in range(1, 6)} <= texts
    assert "$h_0$" in texts
    assert sum(t.get_text() == "$f$" for t in right.texts) == 5
    assert sum(t.get_text() == "$f$" for t in left.texts) == 1
    plt.close(fig)


@pytest.mark.parametrize("steps", [1, 9, 3.0])
def test_unrolled_diagram_rejects_bad_steps(steps: object) -> None:
    with pytest.raises(ValueError, match=r"steps must be an int in \[2, 8\]"):
        draw_loop_and_unrolled(steps=steps)  # type: ignore[arg-type]


def test_style_and_palette() -> None:
    use_book_style()
    assert plt.rcParams["axes.spines.top"] is False
    assert len(set(COLORS.values())) == len(COLORS)


def test_figure_png_has_twice_the_pixels_and_records_its_smallest_text() -> None:
    use_book_style()
    fig, ax = plt.subplots(figsize=(4.0, 2.0))
    ax.plot([0, 1], [0, 1], label="a line")
    ax.legend()
    ax.text(0.5, 0.5, "small", fontsize=7)
    data, size = figure_png(fig)
    width, height = (
        int.from_bytes(data[16:20], "big"),
        int.from_bytes(data[20:24], "big"),
    )
    assert size == {"width": width // PIXEL_RATIO, "height": height // PIXEL_RATIO}
    # shown at the figure's own size
    assert 0.9 * 4.0 * fig.dpi <= size["width"] <= 1.1 * 4.0 * fig.dpi
    recorded = float(Image.open(io.BytesIO(data)).text[SMALLEST_TEXT_KEY])
    assert recorded == pytest.approx(7 / 72 * fig.dpi * PIXEL_RATIO, abs=0.01)
    plt.close(fig)


def test_smallest_text_ignores_the_hidden_axes_of_a_diagram() -> None:
    fig = draw_loop_and_unrolled(steps=3)
    # tick labels of the switched-off axes do not count
    assert smallest_text_points(fig) >= 11.5
    plt.close(fig)


def _boxes(fig: Figure) -> list[dict]:
    return [
        p
        for ax in diagram_facts(fig)["axes"]
        for p in ax["patches"]
        if p["kind"] == "FancyBboxPatch"
    ]


def test_boxes_set_their_own_colours_and_line_width() -> None:
    reference = _boxes(draw_loop_and_unrolled(3))
    with plt.rc_context(
        {"patch.facecolor": "red", "patch.edgecolor": "red", "patch.linewidth": 3.0}
    ):
        boxes = _boxes(draw_loop_and_unrolled(3))
    assert len(boxes) == 4
    assert boxes == reference
    assert {(b["fc"], b["ec"], b["lw"]) for b in boxes} == {
        ("#e69f00e6", "#000000e6", 1.0)
    }
    plt.close("all")


@pytest.mark.parametrize("steps", [2, 8])
def test_unrolled_diagram_accepts_two_to_eight_steps(steps: int) -> None:
    fig = draw_loop_and_unrolled(steps)
    assert sum(t.get_text() == "$f$" for t in fig.axes[1].texts) == steps
    plt.close(fig)


def _png_size(data: bytes) -> tuple[int, int]:
    return Image.open(io.BytesIO(data)).size


def test_figure_png_sets_its_own_format_resolution_and_crop() -> None:
    fig = plt.figure(figsize=(4.0, 2.0), dpi=50)
    # a small drawing in a large, empty figure
    fig.text(0.5, 0.5, "only this", fontsize=12)
    # Whatever the saving defaults are, the PNG is cropped to the drawing, at twice the
    # figure's dpi.
    with plt.rc_context(
        {"savefig.format": "svg", "savefig.bbox": None, "savefig.dpi": 300}
    ):
        data, size = figure_png(fig)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = _png_size(data)
    assert size == {"width": width // PIXEL_RATIO, "height": height // PIXEL_RATIO}
    assert isinstance(size["width"], int)
    assert isinstance(size["height"], int)
    # cropped: far narrower than the 4-inch figure
    assert width < 4.0 * 50 * PIXEL_RATIO / 2
    assert height < 2.0 * 50 * PIXEL_RATIO / 2
    text_px = float(Image.open(io.BytesIO(data)).text[figures.SMALLEST_TEXT_KEY])
    assert text_px == pytest.approx(12 / 72 * 50 * PIXEL_RATIO, abs=0.01)
    plt.close(fig)


def test_figure_png_reports_odd_pixel_sizes_as_whole_css_pixels() -> None:
    fig = plt.figure(figsize=(1.0, 1.0), dpi=100)
    fig.text(0.1, 0.1, "x" * 7, fontsize=11)
    data, size = figure_png(fig)
    width, height = _png_size(data)
    assert size == {"width": width // 2, "height": height // 2}
    assert all(type(v) is int for v in size.values())
    plt.close(fig)


def test_smallest_text_counts_only_drawn_visible_non_empty_text() -> None:
    fig, (off, on) = plt.subplots(1, 2)
    off.axis("off")
    off.tick_params(labelsize=5)  # hidden: the axes are switched off
    on.tick_params(labelsize=9)
    on.text(0.5, 0.5, "", fontsize=2)  # empty: not drawn
    hidden = on.text(0.5, 0.5, "hidden", fontsize=3)
    hidden.set_visible(False)
    on.text(0.2, 0.2, "label", fontsize=12)
    assert smallest_text_points(fig) == 9
    plt.close(fig)


def test_smallest_text_of_a_figure_without_text_is_zero() -> None:
    fig, ax = plt.subplots()
    ax.axis("off")
    assert smallest_text_points(fig) == 0.0
    plt.close(fig)


class _Formatter:
    def __init__(self) -> None:
        self.registered: list[tuple[object, object]] = []

    def for_type(self, kind: object, func: object) -> None:
        self.registered.append((kind, func))


def _fake_ipython(monkeypatch: pytest.MonkeyPatch, shell: object) -> None:
    # In a kernel the real IPython is imported already, and with it what the inline
    # backend needs; import that backend before IPython is swapped for the fake, so the
    # test passes whichever tests ran before it on its worker.
    import matplotlib_inline.backend_inline  # noqa: F401

    module = types.ModuleType("IPython")
    module.get_ipython = lambda: shell  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", module)


def test_inside_a_kernel_figures_are_shown_through_figure_png(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    png = _Formatter()
    shell = types.SimpleNamespace(
        display_formatter=types.SimpleNamespace(formatters={"image/png": png})
    )
    _fake_ipython(monkeypatch, shell)
    figures.use_book_style()
    assert png.registered == [(Figure, figure_png)]


def test_outside_a_kernel_nothing_is_registered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _fake_ipython(monkeypatch, None)
    figures.use_book_style()  # get_ipython() is None: returns quietly
    # IPython not importable: returns quietly too
    monkeypatch.setitem(sys.modules, "IPython", None)
    figures.use_book_style()


def test_tick_labels_written_on_a_switched_off_axes_do_not_count() -> None:
    # labels set by hand exist and are visible even after ax.axis("off"); they are not
    # drawn, so they must not count
    fig, (shown, off) = plt.subplots(1, 2)
    shown.text(0.5, 0.5, "drawn", fontsize=10)
    shown.tick_params(labelsize=10)
    off.set_xticks([0, 1], ["a", "b"], fontsize=5)
    off.axis("off")
    assert smallest_text_points(fig) == 10
    plt.close(fig)
