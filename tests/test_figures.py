"""Tests for chapter_code.figures: the diagram draws, bad input is named, the style applies."""

from __future__ import annotations

import io

import matplotlib.pyplot as plt
import pytest
from PIL import Image

from chapter_code.figures import (
    COLORS,
    PIXEL_RATIO,
    SMALLEST_TEXT_KEY,
    draw_loop_and_unrolled,
    figure_png,
    smallest_text_points,
    use_book_style,
)


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
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert size == {"width": width // PIXEL_RATIO, "height": height // PIXEL_RATIO}
    assert 0.9 * 4.0 * fig.dpi <= size["width"] <= 1.1 * 4.0 * fig.dpi  # shown at the figure's own size
    recorded = float(Image.open(io.BytesIO(data)).text[SMALLEST_TEXT_KEY])
    assert recorded == pytest.approx(7 / 72 * fig.dpi * PIXEL_RATIO, abs=0.01)
    plt.close(fig)


def test_smallest_text_ignores_the_hidden_axes_of_a_diagram() -> None:
    fig = draw_loop_and_unrolled(steps=3)
    assert smallest_text_points(fig) >= 11.5  # tick labels of the switched-off axes do not count
    plt.close(fig)
