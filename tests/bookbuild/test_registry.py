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
from chapter_code.lm.char_models import WORKSHOP, LMRecipe


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


# Hand-written expectations for each helper, called inside the test body: the module
# calls them once at import, where no mutant is switched on, so only these calls
# measure them (TESTING.md, "Two things mutmut cannot see").

#: Chapter 6's recipe, written out: the base of every one-seed run below
SCORE_TRAIN = TrainConfig(
    window=64, batch_size=32, steps=600, lr=3e-3, clip=1.0, log_every=50
)
SCORE_BASE = ScoreRecipe(
    corpus="shakespeare",
    train_chars=200_000,
    valid_chars=20_000,
    embedding_size=32,
    hidden_size=128,
    train=SCORE_TRAIN,
)


def test_trained_gives_each_metric_the_tolerance_of_a_training() -> None:
    got = experiments.trained("valid_nats", "history")
    assert list(got) == ["valid_nats", "history"]
    for precision in got.values():
        assert precision.rtol == 0.001
        assert precision.atol == 0.000001
        assert precision.reason.startswith("training on another CPU's kernels")
        assert "at most 2e-7" in precision.reason
    assert experiments.trained() == {}
    assert experiments.trained("result") == {
        "result": experiments.Precision(
            rtol=1e-3, atol=1e-6, reason=experiments.TRAINED
        )
    }


def test_each_sweep_names_the_metrics_its_training_reproduces_loosely() -> None:
    precision = {
        name: sorted(sweep.precision) for name, sweep in experiments.SWEEPS.items()
    }
    assert precision == {
        "memory-robustness": ["birth", "final_accuracy", "history"],
        "char-lm-workshop": [
            "test_bits",
            "test_nats",
            "test_perplexity",
            "test_streaming_nats",
            "train_curve",
            "valid_bits",
            "valid_nats",
            "valid_perplexity",
        ],
        "char-lm-book": ["result"],
        "scoreboard": ["train_curve", "valid_nats", "valid_perplexity"],
        "word-lm-scale": [
            "test_nats",
            "test_nats_by_author",
            "test_perplexity",
            "test_perplexity_by_author",
            "valid_curve",
            "valid_nats",
        ],
        "depth-book-runs": ["result"],
        "gated-book-runs": ["result"],
        "beyond-book-runs": ["result"],
    }
    for sweep in experiments.SWEEPS.values():
        assert {(p.rtol, p.atol) for p in sweep.precision.values()} == {(1e-3, 1e-6)}


def test_slug_of_empty_punctuation_digits_and_accented_text() -> None:
    assert _slug("") == ""
    assert _slug("+, -") == ""
    assert _slug("x") == "x"
    assert _slug("LSTM") == "lstm"
    assert _slug("2-layer LSTM") == "2-layer-lstm"
    assert _slug("a.b_c") == "a-b-c"
    assert _slug("Élan vital") == "élan-vital"
    assert _slug("tab\tand\nnewline") == "tab-and-newline"


def test_recall_jobs_name_the_six_contenders_of_the_memory_test() -> None:
    recipe = RecallConfig()
    jobs = _recall_jobs(CONTENDERS, recipe)
    assert list(jobs) == [
        "vanilla-rnn",
        "lstm-default",
        "lstm-forget-bias-1",
        "gru-default",
        "gru-keep-bias-1",
        "gru-keep-bias-2",
    ]
    assert [params["contender"].label for params in jobs.values()] == [
        "vanilla RNN",
        "LSTM, default",
        "LSTM, forget bias +1",
        "GRU, default",
        "GRU, keep bias +1",
        "GRU, keep bias +2",
    ]
    assert all(set(params) == {"contender", "recipe"} for params in jobs.values())
    assert all(params["recipe"] is recipe for params in jobs.values())
    assert _recall_jobs((), recipe) == {}
    smoke = experiments.MEMORY_ROBUSTNESS.configs["smoke"].jobs
    assert list(smoke) == ["vanilla-rnn", "lstm-default"]
    assert smoke["lstm-default"]["recipe"] == RecallConfig(
        lag=10, n_train=256, n_test=128, epochs=2
    )


def test_tiny_recipe_is_the_workshop_cell_at_width_16_for_5_steps() -> None:
    tiny_train = TrainConfig(
        window=16, batch_size=4, steps=5, lr=2e-3, clip=1.0, log_every=50
    )
    assert _tiny_recipe("rnn") == LMRecipe(
        cell="rnn", hidden_size=16, embedding_size=8, seed=0, train=tiny_train
    )
    assert _tiny_recipe("lstm") == LMRecipe(
        cell="lstm", hidden_size=16, embedding_size=8, seed=0, train=tiny_train
    )
    # the full-size recipe it starts from is left as it was
    assert WORKSHOP["lstm"].hidden_size == 256
    assert WORKSHOP["lstm"].train.steps == 2000
    with pytest.raises(KeyError, match="gru"):
        _tiny_recipe("gru")
    smoke = experiments.CHAR_LM_WORKSHOP.configs["smoke"].jobs
    assert smoke["rnn"] == {"corpus": "shakespeare", "recipe": _tiny_recipe("rnn")}


def test_lr_job_keeps_a_two_digit_exponent_and_refuses_a_second_digit() -> None:
    assert lr_job(1e-10) == "lstm-lr-1e-10"
    assert lr_job(0.3) == "lstm-lr-3e-1"
    assert lr_job(1.0) == "lstm-lr-1e0"
    assert lr_job(0.0) == "lstm-lr-0e0"
    for lr in (2.5e-3, 0.35, 3.0000001e-3):
        with pytest.raises(ValueError, match="lr must have one significant digit"):
            lr_job(lr)


def _calls(jobs: dict[str, dict]) -> dict[str, tuple[str, dict]]:
    """Each call job as (function name, its arguments decoded)."""
    types = {"ScoreRecipe": ScoreRecipe, "TrainConfig": TrainConfig}
    return {
        name: (job["function"], codec.decode_value(job["kwargs"], types, "kwargs"))
        for name, job in jobs.items()
    }


def test_book_score_jobs_written_out() -> None:
    """Chapter 6's one-seed runs, every name and argument written by hand."""

    def lstm(**changes) -> tuple[str, dict]:
        recipe = dataclasses.replace(SCORE_BASE, **changes)
        return "score_run", {"contender": "lstm", "recipe": recipe, "seed": 0}

    def train(**changes) -> TrainConfig:
        return dataclasses.replace(SCORE_TRAIN, **changes)

    assert _calls(_book_score_jobs()) == {
        "lstm-scratch-small": (
            "score_run",
            {"contender": "lstm-scratch-small", "recipe": SCORE_BASE, "seed": 0},
        ),
        "lstm-forget1-double-steps": (
            "score_run",
            {
                "contender": "lstm-forget1",
                "recipe": dataclasses.replace(SCORE_BASE, train=train(steps=1200)),
                "seed": 0,
            },
        ),
        "lstm-lr-1e-3": lstm(train=train(lr=0.001)),
        "lstm-lr-1e-2": lstm(train=train(lr=0.01)),
        "lstm-lr-3e-2": lstm(train=train(lr=0.03)),
        "lstm-hidden-256": lstm(hidden_size=256),
        "lstm-embedding-64": lstm(embedding_size=64),
        "lstm-steps-1200": lstm(train=train(steps=1200)),
        "gru-matched-150": (
            "score_run",
            {
                "contender": "gru",
                "recipe": dataclasses.replace(SCORE_BASE, hidden_size=150),
                "seed": 0,
            },
        ),
        "gru-update-only": (
            "ablation_run",
            {"recipe": SCORE_BASE, "seed": 0, "variant": "update-only"},
        ),
        "gru-reset-only": (
            "ablation_run",
            {"recipe": SCORE_BASE, "seed": 0, "variant": "reset-only"},
        ),
    }
    assert ScoreRecipe() == SCORE_BASE  # the base above is the scoreboard's recipe


def test_word_jobs_of_no_sizes_and_the_smoke_grid() -> None:
    assert _word_jobs({}, WordRecipe()) == {}
    recipe = WordRecipe(vocab_size=200)
    assert _word_jobs({"small": (8, 1)}, recipe) == {
        "small": {"hidden_size": 8, "num_layers": 1, "recipe": recipe}
    }
    smoke = experiments.WORD_LM_SCALE.configs["smoke"].jobs
    assert list(smoke) == ["small"]
    assert (smoke["small"]["hidden_size"], smoke["small"]["num_layers"]) == (8, 1)
    gpu = experiments.WORD_LM_SCALE.configs["gpu"].jobs
    assert [(p["hidden_size"], p["num_layers"]) for p in gpu.values()] == [
        (768, 2),
        (768, 1),
        (512, 2),
        (512, 1),
        (256, 2),
        (256, 1),
    ]


def test_the_chapter_3_traces_are_named_by_the_contender_s_slug() -> None:
    jobs = experiments.GATED_BOOK_RUNS.configs["book-runs"].jobs
    assert list(jobs) == [
        "trace-lstm-forget-bias-1",
        "trace-lstm-default",
        "learned-h0",
    ]
