"""Tests for the helpers that build bookbuild.runs.registry's grids, called directly.

The module calls them once, at import; mutation testing can only check them
through calls made by a test, and the job names they make are part of each
record's identity.
"""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from bookbuild.runs import codec, sweeps
from bookbuild.runs import registry as experiments
from bookbuild.runs.registry import (
    _book_score_jobs,
    _recall_jobs,
    _slug,
    _tiny_recipe,
    _word_jobs,
    lr_job,
)
from chapter_code.beyond.authorship import AuthorshipConfig, classify_shakespeare_milton
from chapter_code.beyond.parallel_recall import train_input_gated_recall
from chapter_code.depth.gru_ablation import VARIANTS, ablation_run
from chapter_code.depth.scoreboard import (
    LR_GRID,
    ScoreRecipe,
    doubled_steps,
    resized,
    score_run,
    with_lr,
)
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
        assert params == {"contender": contender, "recipe": recipe}


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
        "lstm-lr-1e-3",
        "lstm-lr-3e-3",
        "lstm-lr-1e-2",
        "lstm-lr-3e-2",
        "lstm-lr-5e0",
        "lstm-lr-2e1",
    ]
    with pytest.raises(
        ValueError, match=r"one significant digit, like 3e-3; got 0\.0015"
    ):
        lr_job(1.5e-3)


def test_every_sweep_is_valid() -> None:
    """Names a record can take (no dot in a job name), seeds, plain parameters: what the
    runner checks first."""
    for sweep in experiments.SWEEPS.values():
        sweeps.validate(sweep)


def test_book_score_jobs_are_the_calls_chapter_6_makes() -> None:
    """The one-seed runs of Chapter 6, as the page calls them: score_run on seed 0 with
    the recipe, its doubled budget and the other learning rates, and ablation_run for
    each variant; all in Chapter 6's call sweep."""
    base = ScoreRecipe()
    jobs = _book_score_jobs()
    others = [lr for lr in LR_GRID if lr != base.train.lr]
    assert len(others) == 3
    assert base.train.lr in LR_GRID
    assert list(jobs) == [
        "lstm-scratch-small",
        "lstm-forget1-double-steps",
        *(lr_job(lr) for lr in others),
        "lstm-hidden-256",
        "lstm-embedding-64",
        "lstm-steps-1200",
        "gru-matched-150",
        *(f"gru-{v}" for v in VARIANTS),
    ]

    def score(contender: str, recipe: ScoreRecipe) -> dict:
        return codec.job(score_run, seed=0, contender=contender, recipe=recipe)

    assert jobs["lstm-scratch-small"] == score("lstm-scratch-small", base)
    assert jobs["lstm-forget1-double-steps"] == score(
        "lstm-forget1", doubled_steps(base)
    )
    for lr in others:
        assert jobs[lr_job(lr)] == score("lstm", with_lr(base, lr))
    assert jobs["lstm-hidden-256"] == score("lstm", resized(base, hidden_size=256))
    assert jobs["lstm-embedding-64"] == score("lstm", resized(base, embedding_size=64))
    assert jobs["lstm-steps-1200"] == score("lstm", doubled_steps(base))
    assert jobs["gru-matched-150"] == score("gru", resized(base, hidden_size=150))
    for v in VARIANTS:
        assert jobs[f"gru-{v}"] == codec.job(
            ablation_run, seed=0, variant=v, recipe=base
        )
    grid = experiments.DEPTH_BOOK_RUNS.configs["book-runs"]
    assert {k: grid.jobs[k] for k in jobs} == jobs
    assert "book-runs" not in experiments.SCOREBOARD.configs


def test_chapter_7_s_call_sweep_holds_its_classifier_and_input_gated_run() -> None:
    jobs = experiments.BEYOND_BOOK_RUNS.configs["book-runs"].jobs
    assert jobs["authorship"] == codec.job(
        classify_shakespeare_milton, seed=0, config=AuthorshipConfig()
    )
    assert jobs["input-gated-forget1"] == codec.job(
        train_input_gated_recall, seed=SEEDS[-1], config=RecallConfig()
    )
    assert experiments.BOOK_BEYOND_SEED == 0


def test_word_jobs_give_each_size_its_width_depth_and_the_recipe_as_the_jobs_arguments() -> (  # noqa: E501 (a test name)
    None
):
    # Pins the scale study's job parameters, called directly (the module builds its
    # grids at
    # import): one job per size, named as the size, holding the hidden size and layer
    # count of
    # its pair and the recipe as its dataclass, under the names word_lm_metrics takes
    # besides seed
    # and device (left to the job's BOOK_DEVICE).
    recipe = WordRecipe(
        vocab_size=200, train=TrainConfig(window=8, batch_size=4, steps=4)
    )
    jobs = _word_jobs({"wide": (16, 1), "deep": (8, 2)}, recipe)
    assert jobs == {
        "wide": {"hidden_size": 16, "num_layers": 1, "recipe": recipe},
        "deep": {"hidden_size": 8, "num_layers": 2, "recipe": recipe},
    }
    assert list(jobs) == ["wide", "deep"]
    takes = set(inspect.signature(word_lm_metrics).parameters) - {"seed", "device"}
    assert all(set(params) == takes for params in jobs.values())
