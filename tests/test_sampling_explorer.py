"""Tests for chapter_code.sampling_explorer and chapter_code.sampling_figures."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from chapter_code.sampling import nucleus_probs, temperature_probs  # noqa: E402
from chapter_code.sampling_explorer import explorer_data  # noqa: E402
from chapter_code.sampling_figures import plot_explorer, plot_temperatures  # noqa: E402


def test_explorer_data_is_plain_and_equals_the_rules() -> None:
    data = explorer_data()
    assert json.loads(json.dumps(data)) == data  # JSON-ready for a panel
    z = torch.tensor(data["logits"], dtype=torch.float64)
    assert data["temperature"][0] == temperature_probs(z, data["temperatures"][0]).tolist()
    assert data["nucleus"][2][1] == nucleus_probs(z, data["ps"][1], data["temperatures"][2]).tolist()
    kept = [sum(x > 0 for x in row) for row in data["top_k"][1]]
    assert kept == data["ks"]
    for rows in (data["temperature"], *data["top_k"], *data["nucleus"]):
        for row in rows if isinstance(rows[0], list) else [rows]:
            assert sum(row) == pytest.approx(1.0)


def test_explorer_rejects_mismatched_tokens() -> None:
    with pytest.raises(ValueError, match="same length"):
        explorer_data(logits=(1.0, 2.0), tokens=("a",))


def test_figures_have_labelled_axes_and_one_bar_per_token_and_setting() -> None:
    data = explorer_data()
    fig = plot_explorer(data)
    assert len(fig.axes) == 3
    assert all(ax.get_ylabel() == "probability" for ax in fig.axes)
    assert len(fig.axes[1].patches) == len(data["tokens"]) * len(data["ks"])
    heights = [p.get_height() for p in fig.axes[0].patches[: len(data["tokens"])]]
    assert heights == pytest.approx(data["temperature"][0])
    plt.close(fig)
    fig = plot_temperatures(["2", "1", "0"], [[0.5, 0.3, 0.2], [0.4, 0.35, 0.25]], [1.0, 2.0])
    assert fig.axes[0].get_xlabel()
    assert len(fig.axes[0].patches) == 6
    plt.close(fig)
    with pytest.raises(ValueError, match="temperature_index"):
        plot_explorer(data, temperature_index=5)


def test_kept_counts_histogram_shares_add_to_one() -> None:
    from chapter_code.sampling_figures import plot_kept_counts

    fig = plot_kept_counts([1, 1, 2, 4], k=3, p=0.9)
    ax = fig.axes[0]
    assert [p.get_height() for p in ax.patches] == pytest.approx([0.5, 0.25, 0.0, 0.25])
    assert list(ax.lines[0].get_xdata()) == [3, 3]
    assert ax.get_xlabel()
    assert ax.get_ylabel()
    plt.close(fig)
    with pytest.raises(ValueError, match="at least one"):
        plot_kept_counts([], 3, 0.9)
