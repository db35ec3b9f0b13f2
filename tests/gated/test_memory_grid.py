"""Tests for gated.memory_grid: the grid's worker processes, its order, its thread budget, and the results table.

The trainings themselves are faked (``fake_pool``) where only the grid's bookkeeping is under test; the
worker jobs are checked against training alone.
"""

from __future__ import annotations

import pytest
import torch

from chapter_code.core import runtime
from chapter_code.gated import memory_grid as mg
from chapter_code.gated import memory_task as mt
from chapter_code.gated.memory_task import (
    CONTENDERS,
    Contender,
    RecallConfig,
    RecallRun,
    make_recall,
    train_recall,
    train_recall_batched,
)

MINI = RecallConfig(lag=3, vocab=3, hidden_size=4, n_train=10, n_test=7, batch_size=4, epochs=2, lr=0.05,
                    clip=0.5, train_seed=5, test_seed=6)
RNN, LSTM, LSTM1, GRU, GRU1, GRU2 = mt.CONTENDERS
TINY = RecallConfig(lag=5, vocab=3, hidden_size=6, n_train=48, n_test=24, batch_size=16, epochs=2)


@pytest.fixture(autouse=True)
def _seeded() -> None:
    runtime.seed_everything(99)


class FakePool:
    """Records how ProcessPoolExecutor was made and what it was given; runs the jobs in this process."""

    made: list[dict] = []
    mapped: list[list] = []

    def __init__(self, max_workers, mp_context, initializer):
        FakePool.made.append({"max_workers": max_workers, "start": mp_context.get_start_method(),
                              "initializer": initializer})

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def map(self, fn, jobs):
        jobs = list(jobs)
        FakePool.mapped.append(jobs)
        return [fn(j) for j in reversed(jobs)][::-1]


def fake_run(contender: Contender, seed: int) -> RecallRun:
    return RecallRun(contender.label, seed, birth=float(seed), accuracy=0.5, epochs=1)


@pytest.fixture
def fake_pool(monkeypatch: pytest.MonkeyPatch):
    FakePool.made, FakePool.mapped = [], []
    monkeypatch.setattr(mg, "ProcessPoolExecutor", FakePool)
    monkeypatch.setattr(mg, "_train_in_worker", lambda job: fake_run(job[0], job[1]))
    monkeypatch.setattr(mg, "_train_group", lambda job: [fake_run(c, s) for c, s in job[0]])
    return FakePool


def keys(runs) -> list[tuple[str, int]]:
    return [(r.label, r.seed) for r in runs]


@pytest.mark.parametrize("workers", [2, 3])
def test_grid_in_workers_starts_slow_cells_first_and_returns_grid_order(fake_pool, workers: int) -> None:
    contenders = [RNN, LSTM, GRU, LSTM1]
    runs = mg.run_grid(contenders, (0, 1), MINI, workers=workers)
    assert keys(runs) == [(c.label, s) for c in contenders for s in (0, 1)]
    assert fake_pool.made == [{"max_workers": workers, "start": "spawn", "initializer": mg._one_thread}]
    (jobs,) = fake_pool.mapped
    assert [(c.label, s) for c, s, _ in jobs] == [
        (GRU.label, 0), (GRU.label, 1), (LSTM.label, 0), (LSTM.label, 1), (LSTM1.label, 0), (LSTM1.label, 1),
        (RNN.label, 0), (RNN.label, 1)]
    assert all(cfg is MINI for _, _, cfg in jobs)


def test_grid_defaults_to_the_thread_budget(fake_pool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mt.torch, "get_num_threads", lambda: 3)
    runs = mg.run_grid([GRU1], (4,), MINI)
    assert keys(runs) == [(GRU1.label, 4)]
    assert fake_pool.made[0]["max_workers"] == 3
    monkeypatch.setattr(mt.torch, "get_num_threads", lambda: 1)
    assert keys(mg.run_grid([GRU1], (4,), MINI)) == [(GRU1.label, 4)]
    assert len(fake_pool.made) == 1  # one thread: no pool


@pytest.mark.parametrize("workers", [0, 1])
def test_grid_with_no_or_one_worker_trains_in_this_process(fake_pool, workers: int) -> None:
    runs = mg.run_grid([LSTM, RNN], (1, 0), MINI, workers=workers)
    assert keys(runs) == [(LSTM.label, 1), (LSTM.label, 0), (RNN.label, 1), (RNN.label, 0)]
    assert fake_pool.made == []
    batched = mg.run_grid([LSTM, RNN], (1, 0), MINI, workers=workers, batched=True)
    assert keys(batched) == keys(runs)
    assert fake_pool.made == []


def test_grid_defaults_are_the_six_contenders_and_three_seeds(fake_pool) -> None:
    runs = mg.run_grid(workers=0)
    assert keys(runs) == [(c.label, s) for c in mt.CONTENDERS for s in mt.SEEDS]


def test_batched_grid_groups_by_cell_biggest_group_first(fake_pool) -> None:
    contenders = [RNN, GRU, LSTM, GRU2, LSTM1, GRU1]
    runs = mg.run_grid(contenders, (6050, 0), MINI, workers=2, batched=True)
    assert keys(runs) == [(c.label, s) for c in contenders for s in (6050, 0)]
    assert fake_pool.made == [{"max_workers": 2, "start": "spawn", "initializer": mg._one_thread}]
    (jobs,) = fake_pool.mapped
    assert [[(c.label, s) for c, s in group] for group, _ in jobs] == [
        [(c.label, s) for c in (GRU, GRU2, GRU1) for s in (6050, 0)],
        [(c.label, s) for c in (LSTM, LSTM1) for s in (6050, 0)],
        [(RNN.label, 6050), (RNN.label, 0)],
    ]
    assert all(cfg is MINI for _, cfg in jobs)


def test_batched_grid_defaults_to_the_thread_budget(fake_pool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mt.torch, "get_num_threads", lambda: 4)
    mg.run_grid([RNN], (0,), MINI, batched=True)
    assert fake_pool.made[0]["max_workers"] == 4


@pytest.mark.parametrize(("contenders", "seeds"), [([], (0,)), ([RNN], ()), ((), ())])
def test_grid_needs_contenders_and_seeds(contenders, seeds) -> None:
    with pytest.raises(ValueError, match=r"^contenders and seeds must each hold at least one entry$"):
        mg.run_grid(contenders, seeds, MINI, workers=0)


@pytest.mark.parametrize("workers", [-1, 2.0, "2"])
def test_grid_workers_are_a_count(workers: object) -> None:
    with pytest.raises(ValueError, match=rf"^workers must be an int >= 0; got {workers!r}$"):
        mg.run_grid([RNN], (0,), MINI, workers=workers)  # type: ignore[arg-type]


def test_worker_jobs_train_one_run_and_one_group() -> None:
    config = RecallConfig(lag=2, vocab=2, hidden_size=3, n_train=4, n_test=3, batch_size=2, epochs=1)
    run = mg._train_in_worker((GRU1, 3, config))
    alone, _ = mt.train_recall(GRU1, 3, config)
    assert (run.label, run.seed, run.history) == (alone.label, alone.seed, alone.history)
    for name, p in alone.state.items():
        assert torch.equal(run.state[name], p), name
    group = mg._train_group(([(GRU, 0), (GRU1, 1)], config))
    together = mt.train_recall_batched([(GRU, 0), (GRU1, 1)], config)
    assert [(r.label, r.seed, r.history) for r in group] == [(r.label, r.seed, r.history) for r in together]


def test_a_worker_runs_one_thread() -> None:
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        mg._one_thread()
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


# ---- restore, results_markdown, forget_gate_trace ------------------------------------------------------



def test_results_table() -> None:
    runs = [
        RecallRun("GRU", 0, birth=3e-4, accuracy=0.96, epochs=3, history=[0.5, 0.9, 0.96]),
        RecallRun("GRU", 1, birth=1e-5, accuracy=0.4, epochs=3, history=[0.3, 0.35, 0.4]),
        RecallRun("GRU", 2, birth=2e-2, accuracy=0.9, epochs=3, history=[0.2, 0.95, 0.9]),
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
        "| GRU | 3.0e-04 | 40% (≥40% from ep 3) | 96% (≥40% from ep 1) | 2/2 |")
    assert mg.results_markdown(runs[:1], seeds=(0,), solved=1.0).splitlines()[2] == "| GRU | 3.0e-04 | 96% | 0/1 |"


def test_results_table_defaults_to_the_three_seeds_and_ninety_percent() -> None:
    runs = [RecallRun("LSTM", s, birth=1e-3, accuracy=a, epochs=1, history=[a])
            for s, a in zip(mt.SEEDS, (0.9, 0.89, 1.0), strict=True)]
    assert mg.results_markdown(runs).splitlines()[0].endswith("| seed 0 | seed 1 | seed 6050 | solved |")
    assert mg.results_markdown(runs).splitlines()[2].endswith("| 2/3 |")


@pytest.mark.parametrize("solved", [0.0, 1.5, -1.0])
def test_results_table_needs_a_share(solved: float) -> None:
    with pytest.raises(ValueError, match=rf"^solved must be in \(0, 1\]; got {solved}$"):
        mg.results_markdown([], solved=solved)


def test_training_is_reproducible_and_the_grid_matches_runs_alone() -> None:
    contenders = [CONTENDERS[4]]
    alone = [train_recall(c, s, TINY)[0] for c in contenders for s in (0, 1)]
    in_process = mg.run_grid(contenders, (0, 1), TINY, workers=0)
    in_workers = mg.run_grid(contenders, (0, 1), TINY, workers=2)
    for a, b, w in zip(alone, in_process, in_workers, strict=True):
        assert (a.label, a.seed) == (b.label, b.seed) == (w.label, w.seed)
        assert a.epochs == b.epochs == w.epochs == TINY.epochs
        assert a.history == b.history
        assert abs(a.birth - w.birth) < 1e-6 * max(1.0, a.birth)
        for name, tensor in a.state.items():
            torch.testing.assert_close(b.state[name], tensor, rtol=0, atol=0)
            torch.testing.assert_close(w.state[name], tensor, rtol=1e-4, atol=1e-5)  # one thread vs two: rounding


def test_every_run_trains_all_epochs_and_the_table_reports_the_last() -> None:
    easy = RecallConfig(lag=3, vocab=2, hidden_size=4, n_train=32, n_test=16, batch_size=16, epochs=5)
    run, net = train_recall(CONTENDERS[1], 0, easy)
    assert run.epochs == len(run.history) == 5  # no early stop, whatever the accuracy
    x_test, y_test = make_recall(easy.n_test, easy.lag, easy.vocab, easy.test_seed)
    assert run.accuracy == run.history[-1] == (net(x_test).argmax(1) == y_test).float().mean().item()
    table = mg.results_markdown([run], seeds=(0,), solved=0.01)
    assert "| LSTM, default |" in table
    assert f"| {run.accuracy:.0%} (≥1% from ep 1) |" in table
    assert table.endswith("| 1/1 |")
    with pytest.raises(ValueError, match=r"solved must be in \(0, 1\]"):
        mg.results_markdown([run], seeds=(0,), solved=0)


def test_batched_grid_matches_batched_groups() -> None:
    contenders = [CONTENDERS[0], CONTENDERS[4]]
    grid = mg.run_grid(contenders, (0, 1), TINY, workers=0, batched=True)
    assert [(r.label, r.seed) for r in grid] == [(c.label, s) for c in contenders for s in (0, 1)]
    group = train_recall_batched([(CONTENDERS[4], 0), (CONTENDERS[4], 1)], TINY)
    assert [r.history for r in grid[2:]] == [r.history for r in group]


def _records(contenders, seeds, recipe: RecallConfig) -> list[dict]:
    """Records as the sweep's runner writes them: the sweep's own job parameters, the job's metrics."""
    from chapter_code.experiments import _recall_jobs
    from chapter_code.gated.memory_robustness import recall_metrics

    return [{"params": params, "seed": seed, "wall_s": 1.5 + seed, "metrics": recall_metrics(seed=seed, **params)}
            for params in _recall_jobs(contenders, recipe).values() for seed in seeds]


def test_runs_from_records_are_the_grid_runs() -> None:
    contenders = [CONTENDERS[0], CONTENDERS[4]]
    records = _records(contenders, (0, 1), TINY)
    rebuilt = mg.runs_from_records(records[::-1], contenders, (0, 1), config=TINY)  # any record order
    grid = mg.run_grid(contenders, (0, 1), TINY, workers=0)
    assert keys(rebuilt) == keys(grid) == [(c.label, s) for c in contenders for s in (0, 1)]
    for r, g in zip(rebuilt, grid, strict=True):
        assert (r.accuracy, r.history, r.epochs, r.birth) == (g.accuracy, g.history, g.epochs, g.birth)
        assert r.state == {}
    assert [r.seconds for r in rebuilt] == [1.5, 2.5, 1.5, 2.5]


def test_runs_from_records_name_what_is_missing_or_differs() -> None:
    records = [{"params": {"contender": {"label": c.label}, "recipe": {}}, "seed": s, "wall_s": 1.0,
                "metrics": {"birth": 0.0, "final_accuracy": 0.5, "epochs": 1, "history": [0.5]}}
               for c in CONTENDERS[:2] for s in (0, 1)]
    with pytest.raises(ValueError, match=r"^no record for 1 run\(s\): LSTM, default, seed 1$"):
        mg.runs_from_records(records[:3], CONTENDERS[:2], (0, 1))  # names only the missing pair
    five = r"^no record for 5 run\(s\): vanilla RNN, seed 1; vanilla RNN, seed 2; LSTM, default, seed 0;"
    with pytest.raises(ValueError, match=five):
        mg.runs_from_records(records[:1], CONTENDERS[:2], (0, 1, 2))
    with pytest.raises(ValueError, match=r"seed 0 was trained with another recipe \(differs in batch_size"):
        mg.runs_from_records(records, CONTENDERS[:2], (0, 1), config=TINY)
    broken = [dict(records[0], metrics={"birth": 0.0})]
    with pytest.raises(ValueError, match=r"^not a memory-robustness record \(no 'final_accuracy'\)"):
        mg.runs_from_records(broken, CONTENDERS[:1], (0,))
    with pytest.raises(ValueError, match="contenders and seeds must each hold at least one entry"):
        mg.runs_from_records(records, [], (0,))
