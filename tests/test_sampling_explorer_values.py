"""Value tests for chapter_code.sampling_explorer: every grid point equals the rule it names, with its
temperature, and each argument check at its boundary."""

from __future__ import annotations

import math

import pytest
import torch

from chapter_code.sampling import nucleus_probs, temperature_probs, top_k_probs
from chapter_code.sampling_explorer import EXPLORER_LOGITS, EXPLORER_TOKENS, explorer_data


def test_every_grid_point_is_its_rule_at_its_temperature() -> None:
    temperatures, ks, ps = (0.5, 1.5), (1, 3), (0.5, 0.95)
    data = explorer_data(temperatures=temperatures, ks=ks, ps=ps)
    z = torch.tensor(EXPLORER_LOGITS, dtype=torch.float64)
    assert data["logits"] == list(EXPLORER_LOGITS)
    assert data["tokens"] == list(EXPLORER_TOKENS)
    assert (data["temperatures"], data["ks"], data["ps"]) == ([0.5, 1.5], [1, 3], [0.5, 0.95])
    for i, t in enumerate(temperatures):
        assert data["temperature"][i] == temperature_probs(z, t).tolist()
        for j, k in enumerate(ks):
            assert data["top_k"][i][j] == top_k_probs(z, k, t).tolist()
        for j, p in enumerate(ps):
            assert data["nucleus"][i][j] == nucleus_probs(z, p, t).tolist()


def test_top_two_at_half_temperature_by_hand() -> None:
    data = explorer_data(logits=(3.0, 2.2, 1.6), tokens=("x", "y", "z"), temperatures=(0.5,), ks=(2,), ps=(1.0,))
    # logits / 0.5 = (6, 4.4, 3.2); the top two renormalised: 1 / (1 + e^-1.6) and its complement
    first = 1 / (1 + math.exp(-1.6))
    assert data["top_k"][0][0] == pytest.approx([first, 1 - first, 0.0])
    # at temperature 1 the same two would be 1 / (1 + e^-0.8): the temperature is applied
    assert data["top_k"][0][0][0] != pytest.approx(1 / (1 + math.exp(-0.8)))


def test_two_tokens_are_enough_and_lengths_must_match() -> None:
    data = explorer_data(logits=(1.0, 0.0), tokens=("a", "b"), temperatures=(1.0,), ks=(1,), ps=(0.9,))
    assert data["temperature"][0] == pytest.approx([1 / (1 + math.exp(-1)), 1 / (1 + math.exp(1))])
    for logits, tokens in [((1.0,), ("a",)), ((1.0, 2.0, 3.0), ("a", "b")), ((1.0, 2.0), ("a", "b", "c"))]:
        with pytest.raises(ValueError, match="^logits and tokens must have the same length, at least 2"):
            explorer_data(logits=logits, tokens=tokens)


@pytest.mark.parametrize("empty", ["temperatures", "ks", "ps"])
def test_each_empty_setting_list_is_rejected(empty: str) -> None:
    with pytest.raises(ValueError, match="^temperatures, ks and ps must each hold at least one setting"):
        explorer_data(**{empty: ()})
