"""Tests for chapter_code.figures: the diagram draws, bad input is named, the style applies."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest

from chapter_code.figures import COLORS, draw_loop_and_unrolled, use_book_style


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
