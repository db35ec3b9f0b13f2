"""Value tests for chapter_code.sampling.figures: what each figure draws, read back from
its artists (bar positions, widths, heights, colours, labels, ticks, limits, titles,
legends and sizes)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

from chapter_code.sampling.explorer import explorer_data  # noqa: E402
from chapter_code.sampling.figures import (
    SHADES,
    plot_explorer,
    plot_kept_counts,
    plot_temperatures,
)  # noqa: E402


def _bars(ax) -> list[list[tuple[float, float, float, str]]]:
    """Per bar container: (centre, width, height, face colour) of each bar."""
    return [
        [
            (
                p.get_x() + p.get_width() / 2,
                p.get_width(),
                p.get_height(),
                to_hex(p.get_facecolor()).upper(),
            )
            for p in container
        ]
        for container in ax.containers
    ]


def _legend(ax) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_temperature_bars_are_grouped_by_token_around_the_tick() -> None:
    probs = [[0.5, 0.3, 0.2], [0.4, 0.35, 0.25], [0.34, 0.33, 0.33]]
    fig = plot_temperatures(["x", "y", "z"], probs, [0.5, 1.0, 2.0])
    ax = fig.axes[0]
    width = 0.8 / 3
    bars = _bars(ax)
    assert len(bars) == 3
    for j, container in enumerate(bars):
        offset = (j - 1) * width  # three settings: left of the tick, on it, right of it
        assert [b[0] for b in container] == pytest.approx(
            [i + offset for i in range(3)]
        )
        assert [b[1] for b in container] == pytest.approx([width] * 3)
        assert [b[2] for b in container] == pytest.approx(probs[j])
        assert {b[3] for b in container} == {SHADES[j].upper()}
    assert [c.get_label() for c in ax.containers] == [
        r"$\tau$ = 0.5",
        r"$\tau$ = 1",
        r"$\tau$ = 2",
    ]
    assert _legend(ax) == [r"$\tau$ = 0.5", r"$\tau$ = 1", r"$\tau$ = 2"]
    assert list(ax.get_xticks()) == [0, 1, 2]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["x", "y", "z"]
    assert ax.get_ylim() == (0.0, 1.0)
    assert ax.get_xlabel() == "token (logit)"
    assert ax.get_ylabel() == "probability"
    assert tuple(fig.get_size_inches()) == pytest.approx((6.4, 3.4))
    plt.close(fig)


def test_two_settings_sit_either_side_of_the_tick() -> None:
    fig = plot_temperatures(["p", "q"], [[0.9, 0.1], [0.6, 0.4]], [1.0, 3.0])
    bars = _bars(fig.axes[0])
    assert [b[0] for b in bars[0]] == pytest.approx([-0.2, 0.8])
    assert [b[0] for b in bars[1]] == pytest.approx([0.2, 1.2])
    assert [b[1] for b in bars[0]] == pytest.approx([0.4, 0.4])
    plt.close(fig)


def test_plot_temperatures_checks_its_lengths() -> None:
    for probs, temps in [
        ([[0.5, 0.5]], [1.0, 2.0]),
        ([[0.5, 0.5], [0.4, 0.6]], [1.0]),
        ([], []),
    ]:
        with pytest.raises(
            ValueError, match="^probs must hold one distribution per temperature"
        ):
            plot_temperatures(["a", "b"], probs, temps)
    with pytest.raises(ValueError, match="^at most 3 settings per panel"):
        plot_temperatures(["a", "b"], [[0.5, 0.5]] * 4, [1.0, 2.0, 3.0, 4.0])
    plt.close("all")


def test_explorer_panels_titles_labels_and_shared_axis() -> None:
    data = explorer_data()
    fig = plot_explorer(data)  # default: the middle temperature, 1
    top, middle, bottom = fig.axes
    assert [ax.get_title() for ax in fig.axes] == [
        "temperature",
        r"top-k at $\tau$ = 1",
        r"nucleus at $\tau$ = 1",
    ]
    assert _legend(top) == [r"$\tau$ = 0.5", r"$\tau$ = 1", r"$\tau$ = 2"]
    assert _legend(middle) == ["k = 1", "k = 2", "k = 4"]
    assert _legend(bottom) == ["p = 0.6", "p = 0.9", "p = 0.97"]
    # matplotlib's code for "upper right"
    assert all(ax.get_legend()._loc == 1 for ax in fig.axes)
    assert [ax.get_xlabel() for ax in fig.axes] == ["", "", "token and its logit"]
    assert all(
        ax.get_ylabel() == "probability" and ax.get_ylim() == (0.0, 1.0)
        for ax in fig.axes
    )
    assert top.get_shared_x_axes().joined(top, bottom)
    assert [t.get_text() for t in bottom.get_xticklabels()] == [
        "a\n3",
        "b\n2.2",
        "c\n1.6",
        "d\n0.8",
        "e\n0",
        "f\n-1",
    ]
    assert tuple(fig.get_size_inches()) == pytest.approx((6.4, 8.4))
    for j, container in enumerate(_bars(middle)):
        assert [b[2] for b in container] == pytest.approx(data["top_k"][1][j])
        assert {b[3] for b in container} == {SHADES[j].upper()}
    for j, container in enumerate(_bars(bottom)):
        assert [b[2] for b in container] == pytest.approx(data["nucleus"][1][j])
    for j, container in enumerate(_bars(top)):
        assert [b[2] for b in container] == pytest.approx(data["temperature"][j])
    plt.close(fig)


@pytest.mark.parametrize("index", [0, 2])
def test_explorer_first_and_last_temperature_are_drawable(index: int) -> None:
    data = explorer_data()
    fig = plot_explorer(data, temperature_index=index)
    tau = f"{data['temperatures'][index]:g}"
    assert fig.axes[1].get_title() == rf"top-k at $\tau$ = {tau}"
    assert [p.get_height() for p in fig.axes[2].containers[0]] == pytest.approx(
        data["nucleus"][index][0]
    )
    plt.close(fig)


def test_explorer_rejects_indices_outside_the_grid_and_ragged_data() -> None:
    data = explorer_data()
    for index in (-1, 3):
        with pytest.raises(ValueError, match=r"^temperature_index must be in \[0, 3\)"):
            plot_explorer(data, temperature_index=index)
    ragged = dict(data, ks=[*data["ks"], 5])  # a label for a row that is not there
    with pytest.raises(ValueError, match="zip"):
        plot_explorer(ragged)
    short = dict(data, tokens=data["tokens"][:-1])
    with pytest.raises(ValueError, match="zip"):
        plot_explorer(short)
    plt.close("all")


def test_kept_counts_bars_line_labels_and_size() -> None:
    fig = plot_kept_counts([2, 2, 5, 1], k=3, p=0.95)
    ax = fig.axes[0]
    (bars,) = _bars(ax)
    assert [b[0] for b in bars] == pytest.approx([1, 2, 3, 4, 5])
    assert [b[1] for b in bars] == pytest.approx([0.8] * 5)
    assert [b[2] for b in bars] == pytest.approx([0.25, 0.5, 0.0, 0.0, 0.25])
    assert {b[3] for b in bars} == {SHADES[1].upper()}
    (line,) = ax.lines
    assert list(line.get_xdata()) == [3, 3]
    assert to_hex(line.get_color()).upper() == "#D55E00"
    assert line.get_linestyle() == "--"
    # lines are listed first
    assert _legend(ax) == ["top-k, k = 3 (every position)", "nucleus, p = 0.95"]
    assert ax.get_xlabel() == "tokens kept at a position"
    assert ax.get_ylabel() == "share of positions"
    assert tuple(fig.get_size_inches()) == pytest.approx((6.4, 3.4))
    plt.close(fig)


def test_kept_counts_axis_reaches_k_when_k_is_larger_than_every_count() -> None:
    fig = plot_kept_counts([1, 2], k=4, p=0.5)
    (bars,) = _bars(fig.axes[0])
    assert [b[0] for b in bars] == pytest.approx([1, 2, 3, 4])
    assert [b[2] for b in bars] == pytest.approx([0.5, 0.5, 0.0, 0.0])
    plt.close(fig)
