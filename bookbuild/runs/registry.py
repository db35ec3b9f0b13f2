"""The book's experiment sweeps: what each one runs, over which grid, with which
resources.

A sweep is a grid of jobs (named parameter sets) times seeds. In most sweeps one
job is one call ``job(seed=seed, **params)`` of a small taught function that trains
and returns plain metrics; in a *call sweep* (``calls``) one job is one call of a
taught function with the arguments a page passes (:func:`bookbuild.runs.codec.job`),
its whole result kept, and the page that makes that call through
``runtime.run_once`` is served from the record (:mod:`bookbuild.runs.calls`). The
book runs the sweeps ahead of the build, as batch jobs (``make experiments
SWEEP=NAME``, see :mod:`bookbuild.runs.sweeps`), stores one JSON record per job under
``records/<sweep>/<config>/``, and refuses records made by other code (the
definitions the job reaches), other parameters or other data than those defined
here.

Each sweep has named configurations: ``cpu`` (what the book's records are made
with, on one machine), ``cluster`` or ``gpu`` (a larger grid for a cluster),
``book-runs`` (the calls and runs the chapters make) and ``smoke`` (a few cheap
jobs that check the whole path end to end). A job's parameters are part of its
record's identity, so editing a parameter here makes its record stale; adding
seeds only adds jobs, and editing this file otherwise stales nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bookbuild.runs import codec
from chapter_code.beyond.authorship import (
    AuthorshipConfig,
    classify_shakespeare_milton,
)
from chapter_code.beyond.parallel_recall import train_input_gated_recall
from chapter_code.beyond.scratch_classifier import CORPUS_FILES as SCRATCH_FILES
from chapter_code.beyond.scratch_classifier import (
    ScratchConfig,
    scratch_shakespeare_milton,
)
from chapter_code.beyond.seq2seq import ReversalConfig, train_reversal
from chapter_code.beyond.translator import TranslatorConfig, train_translator
from chapter_code.depth.gru_ablation import VARIANTS as GRU_VARIANTS
from chapter_code.depth.gru_ablation import ablation_run
from chapter_code.depth.layers import TrapConfig, train_directional, train_tagger
from chapter_code.depth.residual import DepthRecipe, depth_run
from chapter_code.depth.scoreboard import CONTENDERS as SCORE_CONTENDERS
from chapter_code.depth.scoreboard import (
    LR_GRID,
    ScoreRecipe,
    core_parameters,
    doubled_steps,
    matched_width,
    resized,
    score_run,
    with_lr,
)
from chapter_code.depth.word_lm import CLUSTER_SIZES, SIZES, WordRecipe, word_lm_metrics
from chapter_code.gated.memory_robustness import recall_metrics
from chapter_code.gated.memory_task import CONTENDERS, SEEDS, RecallConfig, train_recall
from chapter_code.lm.char_lm import TrainConfig
from chapter_code.lm.char_lm_sweep import char_lm_metrics
from chapter_code.lm.char_models import (
    CPU,
    PROSE_LSTM,
    WORKSHOP,
    LMRecipe,
    corpus_file,
    train_char_lm,
)


@dataclass(frozen=True)
class Resources:
    """What one job asks a scheduler for (Slurm: ``--time``, ``--gpus-per-node``,
    ``--cpus-per-task``, partition). ``minutes`` is a wall-clock limit: the CPU
    configurations' are several times a job's time on an idle 2-core machine,
    since a build often runs beside a (niced) sweep there.
    """

    minutes: int = 30
    gpus: int = 0
    cpus: int = 1
    partition: str | None = None  # None: the cluster's default partition


@dataclass(frozen=True)
class Grid:
    """One configuration of a sweep: job name -> keyword arguments, times every seed."""

    jobs: dict[str, dict[str, Any]]
    seeds: tuple[int, ...]
    resources: Resources = field(default_factory=Resources)


@dataclass(frozen=True)
class Precision:
    """How closely a re-run must reproduce one metric of a record, and why no closer.

    Counts, words and every metric a sweep does not name are compared exactly.
    A float (and each value of a stored tensor) must lie within ``rtol`` of the
    stored one, or within ``atol``.
    """

    rtol: float
    atol: float
    reason: str


#: Training on another CPU's kernels (another vendor's MKL branch; the fragility
#: probe's) changes the last bits of each step, and training carries them on.
TRAINED = (
    "training on another CPU's kernels (another vendor's matrix kernels, or the "
    "fragility probe's) moves the last bits of every step, and training carries them "
    "on; measured under the probe on the smoke jobs (2026-12-06): losses move by at "
    "most 2e-7 of their size, weights by at most 3e-4 of theirs (near zero, 1e-6)"
)


def trained(*metrics: str) -> dict[str, Precision]:
    """The precision of metrics a training computes (:data:`TRAINED`)."""
    return {m: Precision(rtol=1e-3, atol=1e-6, reason=TRAINED) for m in metrics}


@dataclass(frozen=True)
class Sweep:
    """A named experiment: its job function and its configurations (``cpu``,
    ``cluster``, ``smoke``...).

    A *call sweep* names ``calls`` instead of a job: the taught functions whose calls
    its jobs are (each job written by :func:`bookbuild.runs.codec.job`), a record
    keeping the call's whole result, weights included. A page that makes one of these
    calls through ``runtime.run_once`` is served from its record
    (:mod:`bookbuild.runs.calls`).
    """

    name: str
    configs: dict[str, Grid]
    job: Callable[..., dict[str, Any]] | None = None
    calls: tuple[Callable[..., Any], ...] = ()
    description: str = ""
    data: tuple[
        str, ...
    ] = ()  # repository files the jobs read, hashed into each record
    # metric -> how closely a re-run must reproduce it (exactly where absent)
    precision: dict[str, Precision] = field(default_factory=dict)
    # the configuration whose seeds measure each job's spread (same job names), by
    # which the build report judges a GPU edition's values against the CPU's
    spread: str | None = None


def _slug(text: str) -> str:
    return "-".join("".join(c if c.isalnum() else " " for c in text.lower()).split())


def _recall_jobs(contenders, recipe: RecallConfig) -> dict[str, dict[str, Any]]:
    return {
        _slug(c.label): {
            "contender": c,
            "recipe": recipe,
        }
        for c in contenders
    }


MEMORY_ROBUSTNESS = Sweep(
    name="memory-robustness",
    job=recall_metrics,
    description=(
        "The memory test (recall the first of `lag` tokens) for the six contenders "
        "over many seeds, "
        "with the chapter's recipe: how often does each contender solve it, and when?"
    ),
    configs={
        "cpu": Grid(
            _recall_jobs(CONTENDERS, RecallConfig()),
            seeds=tuple(range(16)),
            resources=Resources(minutes=40),
        ),
        # More seeds, for a cluster. CPU jobs: train_recall runs on the CPU; once it
        # takes a device, give this config Resources(gpus=1) and the jobs run under
        # BOOK_DEVICE=cuda.
        "cluster": Grid(
            _recall_jobs(CONTENDERS, RecallConfig()),
            seeds=tuple(range(64)),
            resources=Resources(minutes=20),
        ),
        # The chapter's own grid (its seeds, the source's count of three): the same
        # jobs as the chapter's table trains with run_grid, made ahead of the build so
        # that a cold build can read them (issue 31).
        "book-grid": Grid(
            _recall_jobs(CONTENDERS, RecallConfig()),
            seeds=SEEDS,
            resources=Resources(minutes=40),
        ),
        "smoke": Grid(
            _recall_jobs(
                CONTENDERS[:2], RecallConfig(lag=10, n_train=256, n_test=128, epochs=2)
            ),
            seeds=(0,),
            resources=Resources(minutes=5),
        ),
    },
    precision=trained("birth", "final_accuracy", "history"),
    spread="cpu",
)


def _tiny_recipe(name: str) -> LMRecipe:
    recipe = WORKSHOP[name]
    return dataclasses.replace(
        recipe,
        hidden_size=16,
        embedding_size=8,
        train=dataclasses.replace(recipe.train, steps=5, batch_size=4, window=16),
    )


CHAR_LM_WORKSHOP = Sweep(
    name="char-lm-workshop",
    job=char_lm_metrics,
    description=(
        "Chapter 4's character RNN and LSTM at the workshop's full size (embedding "
        "64, hidden 256, 64 windows of 128 characters, 1,000 and 2,000 steps) on the "
        "Shakespeare corpus, over seeds: too large for the book's CPU build, which "
        "trains the same shape at half width and half batch."
    ),
    data=("data/shakespeare.txt",),
    configs={
        # Run on the book's 2-core CPU machine, a job at a time per core: named for what
        # it is, full size.
        "full-size": Grid(
            {
                name: {
                    "corpus": "shakespeare",
                    "recipe": WORKSHOP[name],
                }
                for name in WORKSHOP
            },
            seeds=(0, 1, 2),
            resources=Resources(minutes=240),
        ),
        "smoke": Grid(
            {
                name: {"corpus": "shakespeare", "recipe": _tiny_recipe(name)}
                for name in WORKSHOP
            },
            seeds=(0,),
            resources=Resources(minutes=5),
        ),
    },
    precision=trained(
        "test_bits",
        "test_nats",
        "test_perplexity",
        "test_streaming_nats",
        "train_curve",
        "valid_bits",
        "valid_nats",
        "valid_perplexity",
    ),
)

#: Chapter 4's three models, trained ahead of the build with their weights (issue 31):
#: job name -> (corpus, recipe); Chapters 4 and 5 read them by these names
BOOK_CHAR_MODELS = {
    "prose-lstm": ("book-prose", PROSE_LSTM),
    "shakespeare-rnn": ("shakespeare", CPU["rnn"]),
    "shakespeare-lstm": ("shakespeare", CPU["lstm"]),
}

CHAR_LM_BOOK = Sweep(
    name="char-lm-book",
    calls=(train_char_lm,),
    description=(
        "Chapter 4's trained models at the CPU recipe (the prose LSTM, the Shakespeare "
        "RNN and LSTM), one seed, each record holding the model's weights: made ahead "
        "of the build so that Chapters 4 and 5 read them instead of training."
    ),
    data=(corpus_file("shakespeare"), corpus_file("book-prose")),
    configs={
        # One seed, the chapter's.
        "book-runs": Grid(
            {
                job: codec.job(train_char_lm, corpus=corpus, recipe=recipe)
                for job, (corpus, recipe) in BOOK_CHAR_MODELS.items()
            },
            seeds=(0,),
            resources=Resources(minutes=30),
        ),
        "smoke": Grid(
            {
                "tiny-lstm": codec.job(
                    train_char_lm, corpus="shakespeare", recipe=_tiny_recipe("lstm")
                )
            },
            seeds=(0,),
            resources=Resources(minutes=5),
        ),
    },
    precision=trained("result"),
)

_TINY_SCORE = ScoreRecipe(
    train_chars=5_000,
    valid_chars=1_000,
    embedding_size=8,
    hidden_size=16,
    train=TrainConfig(window=16, batch_size=4, steps=5, lr=3e-3, clip=1.0),
)

#: the seed of Chapter 6's one-seed runs (its small start, doubled budget,
#: learning-rate and one-gate exercises)
BOOK_SCORE_SEED = 0


def lr_job(lr: float) -> str:
    """The ``book-runs`` job name of nn.LSTM at learning rate ``lr`` (``lstm-lr-3e-2``:
    a job name holds no dot); ``lr`` must have one significant digit."""
    short = f"{lr:.0e}".replace("e-0", "e-").replace("e+0", "e")
    if float(short) != lr:
        raise ValueError(f"lr must have one significant digit, like 3e-3; got {lr!r}")
    return f"lstm-lr-{short}"


def _book_score_jobs() -> dict[str, dict[str, Any]]:
    """Chapter 6's one-seed runs beyond the scoreboard's grid, as calls of
    ``score_run``: the small-initialisation scratch LSTM, the forget-bias LSTM with
    twice the steps, nn.LSTM at the exercise's other learning rates, at twice the
    width, twice the embedding and twice the steps, the GRU as wide as gives it
    nn.LSTM's parameter count, and the GRU with one gate removed (``ablation_run``).
    """
    base = ScoreRecipe()

    def call(contender: str, recipe: ScoreRecipe) -> dict[str, Any]:
        return codec.job(
            score_run, seed=BOOK_SCORE_SEED, contender=contender, recipe=recipe
        )

    jobs = {
        "lstm-scratch-small": call("lstm-scratch-small", base),
        "lstm-forget1-double-steps": call("lstm-forget1", doubled_steps(base)),
    }
    for lr in LR_GRID:
        if lr != base.train.lr:
            jobs[lr_job(lr)] = call("lstm", with_lr(base, lr))
    # the hyperparameter exercise's other settings, one at a time
    jobs[f"lstm-hidden-{2 * base.hidden_size}"] = call(
        "lstm", resized(base, hidden_size=2 * base.hidden_size)
    )
    jobs[f"lstm-embedding-{2 * base.embedding_size}"] = call(
        "lstm", resized(base, embedding_size=2 * base.embedding_size)
    )
    jobs[f"lstm-steps-{2 * base.train.steps}"] = call("lstm", doubled_steps(base))
    # the GRU with nn.LSTM's core parameter count
    lstm_core = core_parameters(4, base.embedding_size, base.hidden_size)
    width = matched_width(3, lstm_core, base.embedding_size)
    jobs[f"gru-matched-{width}"] = call("gru", resized(base, hidden_size=width))
    for variant in GRU_VARIANTS:
        jobs[f"gru-{variant}"] = codec.job(
            ablation_run, seed=BOOK_SCORE_SEED, variant=variant, recipe=base
        )
    return jobs


SCOREBOARD = Sweep(
    name="scoreboard",
    job=score_run,
    description=(
        "Chapter 6's scoreboard: recurrent cores (vanilla RNN, LSTM from scratch "
        "(cpu: PyTorch's initialisation; cluster: also a small one), nn.LSTM, LSTM "
        "with forget bias +1, the LSTM without a forget gate, GRU, 2-layer LSTM) under "
        "one fixed recipe on a "
        "200,000-character slice of the Shakespeare corpus: validation perplexity and "
        "time per step, over seeds."
    ),
    data=("data/shakespeare.txt",),
    configs={
        # The small-initialisation scratch LSTM is left out of the cpu grid: at about
        # 0.3 s per step on the loaded 2-core machine its three runs would add ten
        # minutes; the cluster grid has it.
        "cpu": Grid(
            {
                c: {"contender": c, "recipe": ScoreRecipe()}
                for c in SCORE_CONTENDERS
                if c != "lstm-scratch-small"
            },
            seeds=(0, 1, 2),
            resources=Resources(minutes=40),
        ),
        "cluster": Grid(
            {c: {"contender": c, "recipe": ScoreRecipe()} for c in SCORE_CONTENDERS},
            seeds=tuple(range(10)),
            resources=Resources(minutes=30),
        ),
        "smoke": Grid(
            {
                c: {"contender": c, "recipe": _TINY_SCORE}
                for c in ("rnn", "lstm-scratch")
            },
            seeds=(0,),
            resources=Resources(minutes=5),
        ),
    },
    precision=trained("train_curve", "valid_nats", "valid_perplexity"),
)


#: the seed of Chapter 7's one-seed runs (the authorship classifier; the input-gated
#: cell on the memory test takes the memory grid's last seed, as the chapter says)
BOOK_BEYOND_SEED = 0

# The chapters' own one-off trainings (what ``runtime.run_once`` would train in the
# build), each record one call with its whole result (bookbuild.runs.codec):
# the jobs' parameters are the calls exactly as the chapters write them.

#: Chapter 6: the depth study's stacks (plain and residual), the trap's two models,
#: the two taggers
_DEPTH_TRAP = TrapConfig()
_DEPTH_CALLS = {
    **{
        f"stack-{layers}-{'residual' if residual else 'plain'}": codec.job(
            depth_run,
            seed=0,
            num_layers=layers,
            residual=residual,
            recipe=DepthRecipe(),
        )
        for layers, residual in [(1, False)]
        + [(n, r) for n in (2, 3, 4) for r in (False, True)]
    },
    **{
        f"trap-{name}": codec.job(
            train_directional,
            corpus="shakespeare",
            config=_DEPTH_TRAP,
            bidirectional=name == "bidirectional",
        )
        for name in ("causal", "bidirectional")
    },
    **{
        f"tagger-{name}": codec.job(
            train_tagger,
            corpus="shakespeare",
            config=_DEPTH_TRAP,
            bidirectional=name == "bidirectional",
            min_letters=5,
        )
        for name in ("causal", "bidirectional")
    },
    **_book_score_jobs(),
}

DEPTH_BOOK_RUNS = Sweep(
    name="depth-book-runs",
    calls=(depth_run, train_directional, train_tagger, score_run, ablation_run),
    description=(
        "Chapter 6's own trainings, one seed each: the depth study's plain and "
        "residual stacks, the trap's causal and bidirectional models, the two "
        "taggers, the scoreboard's small start, doubled budget and other learning "
        "rates, the GRU with one gate removed; each record holds the call's whole "
        "result."
    ),
    data=("data/shakespeare.txt",),
    configs={
        "book-runs": Grid(_DEPTH_CALLS, seeds=(0,), resources=Resources(minutes=30)),
        "smoke": Grid(
            {
                "stack-tiny": codec.job(
                    depth_run,
                    seed=0,
                    num_layers=2,
                    residual=True,
                    recipe=DepthRecipe(
                        train_chars=5_000,
                        valid_chars=1_000,
                        embedding_size=4,
                        hidden_size=8,
                        train=TrainConfig(window=8, batch_size=4, steps=3),
                    ),
                )
            },
            seeds=(0,),
            resources=Resources(minutes=5),
        ),
    },
    precision=trained("result"),
)

#: Chapter 3: the two LSTMs whose forget gates the chapter traces (seed 0, the first
#: seed on which the LSTM with forget bias +1 solves the task) and the exercise's
#: learned initial state
_GATED_CONFIG = RecallConfig()
GATED_BOOK_RUNS = Sweep(
    name="gated-book-runs",
    calls=(train_recall,),
    description=(
        "Chapter 3's runs that need their weights: the forget-gate trace's two LSTMs "
        "and the learned initial state of the exercise; each record holds the run "
        "whole, weights included."
    ),
    configs={
        "book-runs": Grid(
            {
                **{
                    f"trace-{_slug(c.label)}": codec.job(
                        train_recall, contender=c, seed=0, config=_GATED_CONFIG
                    )
                    for c in (CONTENDERS[2], CONTENDERS[1])
                },
                "learned-h0": codec.job(
                    train_recall,
                    contender=CONTENDERS[2],
                    seed=SEEDS[0],
                    config=dataclasses.replace(_GATED_CONFIG, epochs=30),
                    learn_h0=True,
                ),
            },
            seeds=(0,),
            resources=Resources(minutes=30),
        ),
        "smoke": Grid(
            {
                "tiny": codec.job(
                    train_recall,
                    contender=CONTENDERS[2],
                    seed=0,
                    config=RecallConfig(lag=10, n_train=256, n_test=128, epochs=2),
                )
            },
            seeds=(0,),
            resources=Resources(minutes=5),
        ),
    },
    precision=trained("result"),
)

#: Chapter 7: the reversal task's two encoder-decoders, the two classifiers trained
#: from scratch, the exercise's two translators
BEYOND_BOOK_RUNS = Sweep(
    name="beyond-book-runs",
    calls=(
        train_reversal,
        scratch_shakespeare_milton,
        train_translator,
        classify_shakespeare_milton,
        train_input_gated_recall,
    ),
    description=(
        "Chapter 7's own trainings, one seed each: the encoder-decoders on the "
        "reversal task with and without attention, the Shakespeare-or-Milton "
        "classifiers from scratch, the exercise's translators, the authorship "
        "classifier and its n-gram baseline, the input-gated cell on the memory test; "
        "each record holds the call's whole result, weights included."
    ),
    data=SCRATCH_FILES,
    configs={
        "book-runs": Grid(
            {
                **{
                    f"reversal-{name}": codec.job(
                        train_reversal,
                        attention=flag,
                        seed=BOOK_BEYOND_SEED,
                        config=ReversalConfig(),
                    )
                    for name, flag in [("final-state", False), ("attention", True)]
                },
                **{
                    f"scratch-{cell}": codec.job(
                        scratch_shakespeare_milton,
                        cell=cell,
                        seed=BOOK_BEYOND_SEED,
                        config=ScratchConfig(),
                    )
                    for cell in ("rnn", "lstm")
                },
                **{
                    f"translator-{cell}": codec.job(
                        train_translator,
                        cell=cell,
                        seed=BOOK_BEYOND_SEED,
                        config=TranslatorConfig(),
                    )
                    for cell in ("rnn", "gru")
                },
                "authorship": codec.job(
                    classify_shakespeare_milton,
                    seed=BOOK_BEYOND_SEED,
                    config=AuthorshipConfig(),
                ),
                # the memory grid's last seed, as the chapter says
                "input-gated-forget1": codec.job(
                    train_input_gated_recall, seed=SEEDS[-1], config=RecallConfig()
                ),
            },
            seeds=(0,),
            resources=Resources(minutes=30),
        ),
        "smoke": Grid(
            {
                "translator-tiny": codec.job(
                    train_translator,
                    cell="gru",
                    seed=0,
                    config=TranslatorConfig(
                        hidden_size=8, embedding_size=4, steps=3, n_test=4
                    ),
                )
            },
            seeds=(0,),
            resources=Resources(minutes=5),
        ),
    },
    precision=trained("result"),
)


def _word_jobs(
    sizes: dict[str, tuple[int, int]], recipe: WordRecipe
) -> dict[str, dict[str, Any]]:
    return {
        name: {
            "hidden_size": h,
            "num_layers": layers,
            "recipe": recipe,
        }
        for name, (h, layers) in sizes.items()
    }


_WORD_CLUSTER = WordRecipe(
    vocab_size=20_000,
    eval_every=1000,
    train=TrainConfig(
        window=70, batch_size=64, steps=20_000, lr=1e-3, clip=0.5, log_every=500
    ),
)

# The `gpu` configuration: what `make gpu-run` (bookbuild.tools.gpu_run) runs on the GPU
# machine (one H200, 16 cores) beside the chapters, inside its budget. It follows the
# design of the source's scale study as far as this corpus allows: a 10,000-word
# vocabulary (from the 390,351 training words), tied embeddings (the read-out's weight
# is the embedding matrix), three widths from 3.1 to 17.1 million parameters, the number
# of layers (1 and 2) as a second axis, one recipe with a fixed budget of four epochs
# for every model (the source: 12 epochs of a five times larger corpus), the checkpoint
# chosen on validation (every 50 steps and at the end), three seeds. Each job asks for
# one GPU; ten at a time share the one GPU (bookbuild.runs.sweeps.least_loaded) and are
# recorded under the GPU's profile. Sizes, largest first so the local executor starts
# the longest jobs first: (hidden size, layers).
GPU_SIZES: dict[str, tuple[int, int]] = {
    "large-2-layers": (768, 2),
    "large-1-layer": (768, 1),
    "medium-2-layers": (512, 2),
    "medium-1-layer": (512, 1),
    "small-2-layers": (256, 2),
    "small-1-layer": (256, 1),
}
#: four epochs: 700 steps x 64 windows x 35 words = 1,568,000 training positions, at
#: least four times the 390,351 training words
_WORD_GPU = WordRecipe(
    vocab_size=10_000,
    eval_every=50,
    tied=True,
    train=TrainConfig(
        window=35, batch_size=64, steps=700, lr=2e-3, clip=1.0, log_every=50
    ),
)

WORD_LM_SCALE = Sweep(
    name="word-lm-scale",
    job=word_lm_metrics,
    description=(
        "Chapter 6's scale study: word-level LSTM language models of three sizes on "
        "the Shakespeare and Milton corpus, one recipe, the checkpoint chosen on "
        "validation before the test split is read, over seeds."
    ),
    data=("data/shakespeare.txt", "data/milton.txt"),
    configs={
        # Sized for the 2-core machine: on Shakespeare + Milton, 68.5 minutes for all
        # nine runs (two at a time, under load).
        "cpu": Grid(
            _word_jobs(SIZES, WordRecipe()),
            seeds=(0, 1, 2),
            resources=Resources(minutes=180),
        ),
        "cluster": Grid(
            _word_jobs(CLUSTER_SIZES, _WORD_CLUSTER),
            seeds=(0, 1, 2),
            resources=Resources(minutes=120, gpus=1),
        ),
        # 18 jobs on one GPU, ten at a time (see _WORD_GPU and bookbuild.tools.gpu_run).
        "gpu": Grid(
            _word_jobs(GPU_SIZES, _WORD_GPU),
            seeds=(0, 1, 2),
            resources=Resources(minutes=10, gpus=1),
        ),
        "smoke": Grid(
            _word_jobs(
                {"small": (8, 1)},
                WordRecipe(
                    vocab_size=200,
                    eval_every=2,
                    train=TrainConfig(window=8, batch_size=4, steps=4, log_every=2),
                ),
            ),
            seeds=(0,),
            resources=Resources(minutes=5),
        ),
    },
    precision=trained(
        "test_nats",
        "test_nats_by_author",
        "test_perplexity",
        "test_perplexity_by_author",
        "valid_curve",
        "valid_nats",
    ),
    spread="cpu",  # its three seeds per size
)

#: Every sweep, by name; ``python -m bookbuild experiments list`` prints them.
SWEEPS: dict[str, Sweep] = {
    s.name: s
    for s in [
        MEMORY_ROBUSTNESS,
        CHAR_LM_WORKSHOP,
        CHAR_LM_BOOK,
        SCOREBOARD,
        WORD_LM_SCALE,
        DEPTH_BOOK_RUNS,
        GATED_BOOK_RUNS,
        BEYOND_BOOK_RUNS,
    ]
}

#: The configurations re-run on each edition's device (every sweep's, or one
#: sweep's as ``sweep:config``): the chapters' own runs and grids (``book-runs``,
#: ``book-grid``), the scale study's three sizes (``word-lm-scale:cpu``, whose
#: three seeds measure each size's spread) and the smoke checks. On a GPU
#: (``experiments run NAME --config C --device cuda``) their records go to a set
#: of their own, ``records/<sweep>/<config>@<profile>/``, which a GPU build reads;
#: a CPU build reads ``records/<sweep>/<config>/``. The other larger studies
#: (the memory test's 16 seeds, the scoreboard, the workshop's models) are read
#: from their CPU records by both editions; a configuration that asks for GPUs
#: (``gpu``) runs on one anyway.
PER_DEVICE_CONFIGS = ("book-runs", "book-grid", "smoke", "word-lm-scale:cpu")
