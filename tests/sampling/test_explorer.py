"""Tests for chapter_code.sampling.explorer and chapter_code.sampling.figures.

Value tests for chapter_code.sampling.explorer: every grid point equals the rule it
names, with its temperature, and each argument check at its boundary.
"""

from __future__ import annotations

import json
import math

import matplotlib
import pytest
import torch

from chapter_code.sampling.explorer import (
    EXPLORER_LOGITS,
    EXPLORER_TOKENS,
    explorer_data,
)
from chapter_code.sampling.rules import nucleus_probs, temperature_probs, top_k_probs

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from chapter_code.sampling.figures import plot_explorer, plot_temperatures  # noqa: E402


def test_explorer_data_is_plain_and_equals_the_rules() -> None:
    data = explorer_data()
    assert json.loads(json.dumps(data)) == data  # JSON-ready for a panel
    z = torch.tensor(data["logits"], dtype=torch.float64)
    assert (
        data["temperature"][0] == temperature_probs(z, data["temperatures"][0]).tolist()
    )
    assert (
        data["nucleus"][2][1]
        == nucleus_probs(z, data["ps"][1], data["temperatures"][2]).tolist()
    )
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
    fig = plot_temperatures(
        ["2", "1", "0"], [[0.5, 0.3, 0.2], [0.4, 0.35, 0.25]], [1.0, 2.0]
    )
    assert fig.axes[0].get_xlabel()
    assert len(fig.axes[0].patches) == 6
    plt.close(fig)
    with pytest.raises(ValueError, match="temperature_index"):
        plot_explorer(data, temperature_index=5)


def test_kept_counts_histogram_shares_add_to_one() -> None:
    from chapter_code.sampling.figures import plot_kept_counts

    fig = plot_kept_counts([1, 1, 2, 4], k=3, p=0.9)
    ax = fig.axes[0]
    assert [p.get_height() for p in ax.patches] == pytest.approx([0.5, 0.25, 0.0, 0.25])
    assert list(ax.lines[0].get_xdata()) == [3, 3]
    assert ax.get_xlabel()
    assert ax.get_ylabel()
    plt.close(fig)
    with pytest.raises(ValueError, match="at least one"):
        plot_kept_counts([], 3, 0.9)


def test_every_grid_point_is_its_rule_at_its_temperature() -> None:
    temperatures, ks, ps = (0.5, 1.5), (1, 3), (0.5, 0.95)
    data = explorer_data(temperatures=temperatures, ks=ks, ps=ps)
    z = torch.tensor(EXPLORER_LOGITS, dtype=torch.float64)
    assert data["logits"] == list(EXPLORER_LOGITS)
    assert data["tokens"] == list(EXPLORER_TOKENS)
    assert (data["temperatures"], data["ks"], data["ps"]) == (
        [0.5, 1.5],
        [1, 3],
        [0.5, 0.95],
    )
    for i, t in enumerate(temperatures):
        assert data["temperature"][i] == temperature_probs(z, t).tolist()
        for j, k in enumerate(ks):
            assert data["top_k"][i][j] == top_k_probs(z, k, t).tolist()
        for j, p in enumerate(ps):
            assert data["nucleus"][i][j] == nucleus_probs(z, p, t).tolist()


def test_top_two_at_half_temperature_by_hand() -> None:
    data = explorer_data(
        logits=(3.0, 2.2, 1.6),
        tokens=("x", "y", "z"),
        temperatures=(0.5,),
        ks=(2,),
        ps=(1.0,),
    )
    # logits / 0.5 = (6, 4.4, 3.2); the top two renormalised: 1 / (1 + e^-1.6) and its
    # complement
    first = 1 / (1 + math.exp(-1.6))
    assert data["top_k"][0][0] == pytest.approx([first, 1 - first, 0.0])
    # at temperature 1 the same two would be 1 / (1 + e^-0.8): the temperature is
    # applied
    assert data["top_k"][0][0][0] != pytest.approx(1 / (1 + math.exp(-0.8)))


def test_two_tokens_are_enough_and_lengths_must_match() -> None:
    data = explorer_data(
        logits=(1.0, 0.0), tokens=("a", "b"), temperatures=(1.0,), ks=(1,), ps=(0.9,)
    )
    assert data["temperature"][0] == pytest.approx(
        [1 / (1 + math.exp(-1)), 1 / (1 + math.exp(1))]
    )
    for logits, tokens in [
        ((1.0,), ("a",)),
        ((1.0, 2.0, 3.0), ("a", "b")),
        ((1.0, 2.0), ("a", "b", "c")),
    ]:
        with pytest.raises(
            ValueError, match="^logits and tokens must have the same length, at least 2"
        ):
            explorer_data(logits=logits, tokens=tokens)


@pytest.mark.parametrize("empty", ["temperatures", "ks", "ps"])
def test_each_empty_setting_list_is_rejected(empty: str) -> None:
    with pytest.raises(
        ValueError, match="^temperatures, ks and ps must each hold at least one setting"
    ):
        explorer_data(**{empty: ()})
