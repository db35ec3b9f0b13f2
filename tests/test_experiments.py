"""Tests for the helpers that build chapter_code.experiments' grids, called directly.

The module calls them once, at import; mutation testing can only check them
through calls made by a test, and the job names they make are part of each
record's identity.
"""

from __future__ import annotations

import dataclasses

from chapter_code.experiments import _recall_jobs, _slug, _smoke_recipe
from chapter_code.gated.memory_task import CONTENDERS, RecallConfig
from chapter_code.lm.char_models import WORKSHOP


def test_slug_keeps_letters_and_digits_joined_by_single_hyphens() -> None:
    assert _slug("LSTM, forget bias +1") == "lstm-forget-bias-1"
    assert _slug("  GRU -- keep bias +2 ") == "gru-keep-bias-2"
    assert _slug("vanilla RNN") == "vanilla-rnn"


def test_recall_jobs_name_each_contender_and_carry_its_fields_and_the_recipe() -> None:
    recipe = RecallConfig(lag=7)
    jobs = _recall_jobs(CONTENDERS[1:3], recipe)
    assert list(jobs) == ["lstm-default", "lstm-forget-bias-1"]
    for contender, params in zip(CONTENDERS[1:3], jobs.values(), strict=True):
        assert params == {"contender": dataclasses.asdict(contender), "recipe": dataclasses.asdict(recipe)}


def test_smoke_recipe_shrinks_only_the_sizes_and_the_training_length() -> None:
    for name, full in WORKSHOP.items():
        tiny = _smoke_recipe(name)
        expected = dataclasses.asdict(full)
        expected.update(hidden_size=16, embedding_size=8)
        expected["train"].update(steps=5, batch_size=4, window=16)
        assert tiny == expected
