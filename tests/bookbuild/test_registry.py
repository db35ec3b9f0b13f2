"""Tests for the helpers that build bookbuild.runs.registry's grids, called directly.

The module calls them once, at import; mutation testing can only check them
through calls made by a test, and the job names they make are part of each
record's identity.
"""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from bookbuild.runs import registry as experiments
from bookbuild.runs import sweeps
from bookbuild.runs.registry import (
    _book_score_jobs,
    _recall_jobs,
    _slug,
    _tiny_recipe,
    _word_jobs,
    doubled_steps,
    lr_job,
    with_lr,
)
from chapter_code.beyond.authorship import AuthorshipConfig
from chapter_code.depth.gru_ablation import VARIANTS
from chapter_code.depth.scoreboard import ScoreRecipe, recipe_dict
from chapter_code.depth.word_lm import WordRecipe, word_lm_metrics
from chapter_code.gated.memory_task import CONTENDERS, SEEDS, RecallConfig
from chapter_code.lm.char_lm import TrainConfig
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


def test_tiny_recipe_shrinks_only_the_sizes_and_the_training_length() -> None:
    for name, full in WORKSHOP.items():
        tiny = dataclasses.asdict(_tiny_recipe(name))
        expected = dataclasses.asdict(full)
        expected.update(hidden_size=16, embedding_size=8)
        expected["train"].update(steps=5, batch_size=4, window=16)
        assert tiny == expected


def test_doubled_steps_and_with_lr_change_one_field_of_the_training_only() -> None:
    base = ScoreRecipe()
    doubled = doubled_steps(base)
    assert doubled.train.steps == 2 * base.train.steps
    assert dataclasses.replace(doubled, train=base.train) == base
    assert dataclasses.replace(doubled.train, steps=base.train.steps) == base.train
    fast = with_lr(base, 3e-2)
    assert fast.train.lr == 3e-2
    assert dataclasses.replace(fast.train, lr=base.train.lr) == base.train
    assert dataclasses.replace(fast, train=base.train) == base


def test_lr_job_names_are_the_rate_written_short() -> None:
    assert [lr_job(lr) for lr in (1e-3, 3e-3, 1e-2, 3e-2, 5.0, 20.0)] == [
        "lstm-lr-1e-3", "lstm-lr-3e-3", "lstm-lr-1e-2", "lstm-lr-3e-2", "lstm-lr-5e0", "lstm-lr-2e1"]
    with pytest.raises(ValueError, match=r"one significant digit, like 3e-3; got 0\.0015"):
        lr_job(1.5e-3)


def test_every_sweep_is_valid() -> None:
    """Names a record can take (no dot in a job name), seeds, plain parameters: what the runner checks first."""
    for sweep in experiments.SWEEPS.values():
        sweeps.validate(sweep)


def test_book_score_jobs_are_the_chapters_runs() -> None:
    """What Chapter 6 trained with run_once before these runs became records: the same calls of score_run."""
    base = ScoreRecipe()
    jobs = _book_score_jobs()
    others = [lr for lr in experiments.SCORE_LR_GRID if lr != base.train.lr]
    assert len(others) == 3
    assert base.train.lr in experiments.SCORE_LR_GRID
    assert list(jobs) == ["lstm-scratch-small", "lstm-forget1-double-steps"] + [lr_job(lr) for lr in others]
    assert jobs["lstm-scratch-small"] == {"contender": "lstm-scratch-small", "recipe": recipe_dict()}
    doubled = {"contender": "lstm-forget1", "recipe": recipe_dict(doubled_steps(base))}
    assert jobs["lstm-forget1-double-steps"] == doubled
    for lr in others:
        assert jobs[lr_job(lr)] == {"contender": "lstm", "recipe": recipe_dict(with_lr(base, lr))}
    grid = experiments.SCOREBOARD.configs["book-runs"]
    assert grid.jobs == jobs
    assert grid.seeds == (experiments.BOOK_SCORE_SEED,) == (0,)


def test_the_one_seed_sweeps_hold_the_chapters_runs() -> None:
    ablation = experiments.GRU_ABLATION.configs["book-runs"]
    assert ablation.jobs == {v: {"variant": v, "recipe": recipe_dict()} for v in VARIANTS}
    assert ablation.seeds == (0,)
    auth = experiments.AUTHORSHIP.configs["book-runs"]
    assert auth.jobs == {"lstm-and-ngram": {"config": dataclasses.asdict(AuthorshipConfig())}}
    assert auth.seeds == (experiments.BOOK_BEYOND_SEED,) == (0,)
    gated = experiments.INPUT_GATED_RECALL.configs["book-runs"]
    assert gated.jobs == {"input-gated-forget1": {"recipe": dataclasses.asdict(RecallConfig())}}
    assert gated.seeds == (SEEDS[-1],)
    for sweep in [experiments.GRU_ABLATION, experiments.AUTHORSHIP, experiments.INPUT_GATED_RECALL]:
        assert set(sweep.configs) == {"book-runs", "smoke"}
        assert experiments.SWEEPS[sweep.name] is sweep


def test_word_jobs_give_each_size_its_width_depth_and_the_recipe_as_the_jobs_arguments() -> None:
    # Pins the scale study's job parameters, called directly (the module builds its grids at
    # import): one job per size, named as the size, holding the hidden size and layer count of
    # its pair and the recipe as plain data, under the names word_lm_metrics takes besides seed
    # and device (left to the job's BOOK_DEVICE).
    recipe = WordRecipe(vocab_size=200, train=TrainConfig(window=8, batch_size=4, steps=4))
    jobs = _word_jobs({"wide": (16, 1), "deep": (8, 2)}, recipe)
    plain = dataclasses.asdict(recipe)
    assert jobs == {
        "wide": {"hidden_size": 16, "num_layers": 1, "recipe": plain},
        "deep": {"hidden_size": 8, "num_layers": 2, "recipe": plain},
    }
    assert list(jobs) == ["wide", "deep"]
    takes = set(inspect.signature(word_lm_metrics).parameters) - {"seed", "device"}
    assert all(set(params) == takes for params in jobs.values())
