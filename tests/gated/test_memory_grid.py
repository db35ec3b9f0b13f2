"""Tests for gated.memory_grid: the grid's order, its runs against training alone, the
records read back, and the results table.
"""

from __future__ import annotations

import pytest
import torch

from chapter_code.core import runtime
from chapter_code.gated import memory_grid as mg
from chapter_code.gated import memory_task as mt
from chapter_code.gated.memory_task import (
    CONTENDERS,
    RecallConfig,
    RecallRun,
    make_recall,
    train_recall,
)

MINI = RecallConfig(
    lag=3,
    vocab=3,
    hidden_size=4,
    n_train=10,
    n_test=7,
    batch_size=4,
    epochs=2,
    lr=0.05,
    clip=0.5,
    train_seed=5,
    test_seed=6,
)
RNN, LSTM, LSTM1, GRU, GRU1, GRU2 = mt.CONTENDERS
TINY = RecallConfig(
    lag=5, vocab=3, hidden_size=6, n_train=48, n_test=24, batch_size=16, epochs=2
)


@pytest.fixture(autouse=True)
def _seeded() -> None:
    runtime.seed_everything(99)


def keys(runs) -> list[tuple[str, int]]:
    return [(r.label, r.seed) for r in runs]


def test_grid_order_is_contender_then_seed_and_defaults_are_the_chapters(
    monkeypatch,
) -> None:
    made = []
    monkeypatch.setattr(
        mg,
        "train_recall",
        lambda c, s, config, device=None: (
            made.append((c.label, s, config, device))
            or RecallRun(c.label, s, birth=0.0, accuracy=0.5, epochs=1),
            None,
        ),
    )
    runs = mg.run_grid([LSTM, RNN], (1, 0), MINI, device="cpu")
    assert keys(runs) == [
        (LSTM.label, 1),
        (LSTM.label, 0),
        (RNN.label, 1),
        (RNN.label, 0),
    ]
    assert {m[2] for m in made} == {MINI}
    assert {m[3] for m in made} == {"cpu"}
    made.clear()
    assert keys(mg.run_grid()) == [(c.label, s) for c in CONTENDERS for s in mt.SEEDS]
    assert {m[2] for m in made} == {RecallConfig()}
    assert {m[3] for m in made} == {None}


@pytest.mark.parametrize(("contenders", "seeds"), [([], (0,)), ([RNN], ()), ((), ())])
def test_grid_needs_contenders_and_seeds(contenders, seeds) -> None:
    with pytest.raises(
        ValueError, match=r"^contenders and seeds must each hold at least one entry$"
    ):
        mg.run_grid(contenders, seeds, MINI)


# ---- restore, results_markdown, forget_gate_trace
# ------------------------------------------------------


def test_results_table() -> None:
    runs = [
        RecallRun(
            "GRU", 0, birth=3e-4, accuracy=0.96, epochs=3, history=[0.5, 0.9, 0.96]
        ),
        RecallRun(
            "GRU", 1, birth=1e-5, accuracy=0.4, epochs=3, history=[0.3, 0.35, 0.4]
        ),
        RecallRun(
            "GRU", 2, birth=2e-2, accuracy=0.9, epochs=3, history=[0.2, 0.95, 0.9]
        ),
        RecallRun("RNN", 2, birth=1.0, accuracy=0.25, epochs=1, history=[0.25]),
        RecallRun("RNN", 0, birth=5.0, accuracy=0.25, epochs=1, history=[0.25]),
        RecallRun("RNN", 1, birth=2.0, accuracy=0.25, epochs=1, history=[0.25]),
    ]
    assert mg.results_markdown(runs, seeds=(0, 1, 2), solved=0.9) == (
        "| contender | signal at birth (median) | seed 0 | seed 1 | seed 2 | solved |\n"
        "|---|---|---|---|---|---|\n"
        "| GRU | 3.0e-04 | 96% (≥90% from ep 2) | 40% | 90% (≥90% from ep 2) | 2/3 |\n"
        "| RNN | 2.0e+00 | 25% | 25% | 25% | 0/3 |"
    )
    assert mg.results_markdown(runs[:2], seeds=(1, 0), solved=0.4).splitlines()[2] == (
        "| GRU | 3.0e-04 | 40% (≥40% from ep 3) | 96% (≥40% from ep 1) | 2/2 |"
    )
    assert (
        mg.results_markdown(runs[:1], seeds=(0,), solved=1.0).splitlines()[2]
        == "| GRU | 3.0e-04 | 96% | 0/1 |"
    )


def test_results_table_defaults_to_the_three_seeds_and_ninety_percent() -> None:
    runs = [
        RecallRun("LSTM", s, birth=1e-3, accuracy=a, epochs=1, history=[a])
        for s, a in zip(mt.SEEDS, (0.9, 0.89, 1.0), strict=True)
    ]
    assert (
        mg.results_markdown(runs)
        .splitlines()[0]
        .endswith("| seed 0 | seed 1 | seed 6050 | solved |")
    )
    assert mg.results_markdown(runs).splitlines()[2].endswith("| 2/3 |")


@pytest.mark.parametrize("solved", [0.0, 1.5, -1.0])
def test_results_table_needs_a_share(solved: float) -> None:
    with pytest.raises(
        ValueError, match=rf"^solved must be in \(0, 1\]; got {solved}$"
    ):
        mg.results_markdown([], solved=solved)


def test_training_is_reproducible_and_the_grid_matches_runs_alone() -> None:
    contenders = [CONTENDERS[4]]
    alone = [train_recall(c, s, TINY)[0] for c in contenders for s in (0, 1)]
    grid = mg.run_grid(contenders, (0, 1), TINY)
    for a, b in zip(alone, grid, strict=True):
        assert (a.label, a.seed, a.epochs) == (b.label, b.seed, TINY.epochs)
        assert (a.history, a.birth) == (b.history, b.birth)
        for name, tensor in a.state.items():
            torch.testing.assert_close(b.state[name], tensor, rtol=0, atol=0)


def test_every_run_trains_all_epochs_and_the_table_reports_the_last() -> None:
    easy = RecallConfig(
        lag=3, vocab=2, hidden_size=4, n_train=32, n_test=16, batch_size=16, epochs=5
    )
    run, net = train_recall(CONTENDERS[1], 0, easy)
    assert run.epochs == len(run.history) == 5  # no early stop, whatever the accuracy
    x_test, y_test = make_recall(easy.n_test, easy.lag, easy.vocab, easy.test_seed)
    assert (
        run.accuracy
        == run.history[-1]
        == (net(x_test).argmax(1) == y_test).float().mean().item()
    )
    table = mg.results_markdown([run], seeds=(0,), solved=0.01)
    assert "| LSTM, default |" in table
    assert f"| {run.accuracy:.0%} (≥1% from ep 1) |" in table
    assert table.endswith("| 1/1 |")
    with pytest.raises(ValueError, match=r"solved must be in \(0, 1\]"):
        mg.results_markdown([run], seeds=(0,), solved=0)


def _records(contenders, seeds, recipe: RecallConfig) -> list[dict]:
    """Records as the sweep's runner writes them: the sweep's own job parameters, the
    job's metrics."""
    from bookbuild.runs.memo import canonical
    from bookbuild.runs.registry import _recall_jobs
    from chapter_code.gated.memory_robustness import recall_metrics

    return [
        {
            "params": canonical(params),
            "seed": seed,
            "wall_s": 1.5 + seed,
            "metrics": recall_metrics(seed=seed, **params),
        }
        for params in _recall_jobs(contenders, recipe).values()
        for seed in seeds
    ]


def test_runs_from_records_are_the_grid_runs() -> None:
    contenders = [CONTENDERS[0], CONTENDERS[4]]
    records = _records(contenders, (0, 1), TINY)
    # any record order
    rebuilt = mg.runs_from_records(records[::-1], contenders, (0, 1), config=TINY)
    grid = mg.run_grid(contenders, (0, 1), TINY)
    assert (
        keys(rebuilt)
        == keys(grid)
        == [(c.label, s) for c in contenders for s in (0, 1)]
    )
    for r, g in zip(rebuilt, grid, strict=True):
        assert (r.accuracy, r.history, r.epochs, r.birth) == (
            g.accuracy,
            g.history,
            g.epochs,
            g.birth,
        )
        assert r.state == {}
    assert [r.seconds for r in rebuilt] == [1.5, 2.5, 1.5, 2.5]


def test_runs_from_records_name_what_is_missing_or_differs() -> None:
    records = [
        {
            "params": {"contender": {"label": c.label}, "recipe": {}},
            "seed": s,
            "wall_s": 1.0,
            "metrics": {
                "birth": 0.0,
                "final_accuracy": 0.5,
                "epochs": 1,
                "history": [0.5],
            },
        }
        for c in CONTENDERS[:2]
        for s in (0, 1)
    ]
    with pytest.raises(
        ValueError, match=r"^no record for 1 run\(s\): LSTM, default, seed 1$"
    ):
        # names only the missing pair
        mg.runs_from_records(records[:3], CONTENDERS[:2], (0, 1))
    five = (
        r"^no record for 5 run\(s\): vanilla RNN, seed 1; vanilla RNN, seed 2; "
        r"LSTM, default, seed 0;"
    )
    with pytest.raises(ValueError, match=five):
        mg.runs_from_records(records[:1], CONTENDERS[:2], (0, 1, 2))
    with pytest.raises(
        ValueError,
        match=r"seed 0 was trained with another recipe \(differs in batch_size",
    ):
        mg.runs_from_records(records, CONTENDERS[:2], (0, 1), config=TINY)
    broken = [dict(records[0], metrics={"birth": 0.0})]
    with pytest.raises(
        ValueError, match=r"^not a memory-robustness record \(no 'final_accuracy'\)"
    ):
        mg.runs_from_records(broken, CONTENDERS[:1], (0,))
    with pytest.raises(
        ValueError, match="contenders and seeds must each hold at least one entry"
    ):
        mg.runs_from_records(records, [], (0,))
