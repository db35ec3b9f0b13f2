"""Tests for bookbuild.lint.figure_layout: colliding labels are found from matplotlib's
boxes, clean figures pass."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from bookbuild.lint.figure_layout import drawn_texts, overlapping_texts  # noqa: E402


@pytest.fixture(autouse=True)
def _matplotlib_defaults():
    """The sizes below are matplotlib's defaults: a test that ran before may have
    applied the book's style."""
    with plt.style.context("default"):
        yield


def test_a_clean_figure_has_no_overlap() -> None:
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1, 2], [1, 3, 2])
    ax.set(xlabel="step", ylabel="loss", title="a clean figure")
    assert overlapping_texts(fig) == []
    plt.close(fig)


def test_two_texts_at_one_place_collide() -> None:
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.text(0.5, 0.5, "first label")
    ax.text(0.5, 0.5, "second label")
    assert overlapping_texts(fig) == ['"first label" and "second label"']
    plt.close(fig)


def test_crowded_tick_labels_collide() -> None:
    fig, ax = plt.subplots(figsize=(2, 2))
    ticks = list(range(12))
    ax.set_xticks(ticks, [f"label {t}" for t in ticks])
    found = overlapping_texts(fig)
    assert found
    assert all(
        part.startswith('"label') for pair in found for part in pair.split(" and ")
    )
    # wide enough that rotated labels stand side by side with room between
    fig.set_size_inches(6, 2)
    ax.set_xticks(ticks, [f"label {t}" for t in ticks], rotation=90)
    assert overlapping_texts(fig) == []
    plt.close(fig)


def test_texts_that_are_not_drawn_do_not_count() -> None:
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.set_xlim(0, 1)
    hidden = ax.text(0.5, 0.5, "hidden")
    hidden.set_visible(False)
    ax.text(0.5, 0.5, "shown")
    ax.text(0.5, 0.5, "   ")  # blank: draws nothing
    assert "hidden" not in [t.get_text() for t in drawn_texts(fig)]
    assert overlapping_texts(fig) == []
    plt.close(fig)


def test_a_touching_neighbour_is_not_a_collision() -> None:
    fig, ax = plt.subplots(figsize=(4, 3), dpi=100)
    ax.set_axis_off()
    first = ax.text(0.1, 0.5, "left", transform=ax.transAxes)
    fig.canvas.draw()
    box = first.get_window_extent(fig.canvas.get_renderer())
    # half a pixel of overlap
    x = ax.transAxes.inverted().transform((box.x1 - 0.5, box.y0))[0]
    ax.text(x, 0.5, "right", transform=ax.transAxes)
    assert overlapping_texts(fig) == []
    assert overlapping_texts(fig, min_pt=0) != []  # with no allowance, the touch counts
    plt.close(fig)


def test_bad_allowance() -> None:
    fig = plt.figure()
    with pytest.raises(ValueError, match="min_pt must be a number >= 0"):
        overlapping_texts(fig, min_pt=-1)
    plt.close(fig)
