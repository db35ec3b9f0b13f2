"""The memory test's grid: every (contender, seed) run trained, and tabulated.

The runs are independent (each has its own random stream, see
:mod:`chapter_code.gated.memory_task`), so the order they train in, or the
machine, changes none of their numbers on one kind of machine.

The book's build does not train the grid itself: the same jobs run ahead of it
as the ``book-grid`` configuration of the memory-robustness sweep
(:mod:`bookbuild.runs.registry`), and :func:`runs_from_records` turns their
checked records back into the runs :func:`run_grid` returns.

Pages: "Gated memory: LSTM and GRU" (the grid and its results table); "Beyond
the single carried state" (the LSTM's accuracies beside the input-gated cell).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import torch

from chapter_code.gated.memory_task import (
    CONTENDERS,
    SEEDS,
    Contender,
    RecallConfig,
    RecallRun,
    first_epoch_at,
    train_recall,
)


def run_grid(
    contenders: Sequence[Contender] = CONTENDERS,
    seeds: Sequence[int] = SEEDS,
    # B008 below: (frozen: one shared default is safe)
    config: RecallConfig = RecallConfig(),  # noqa: B008
    device: torch.device | str | None = None,
) -> list[RecallRun]:
    """Train every (contender, seed) pair on ``device``, one after another; return
    the runs in (contender, seed) order.
    """
    if len(contenders) == 0 or len(seeds) == 0:
        raise ValueError("contenders and seeds must each hold at least one entry")
    return [
        train_recall(contender, seed, config, device=device)[0]
        for contender in contenders
        for seed in seeds
    ]


def runs_from_records(
    records: Sequence[Mapping],
    contenders: Sequence[Contender] = CONTENDERS,
    seeds: Sequence[int] = SEEDS,
    config: RecallConfig | None = None,
) -> list[RecallRun]:
    """The runs :func:`run_grid` would return, rebuilt from sweep records.

    ``records`` are the memory-robustness sweep's records (one per (contender,
    seed) job of :func:`chapter_code.gated.memory_robustness.recall_metrics`).
    The runs come back in (contender, seed) order, with the record's wall time as
    ``seconds`` and no weights (``state`` is empty: a record keeps numbers only).
    Raises ``ValueError`` naming each pair without a record, and each record
    trained with another recipe than ``config`` (when given).
    """
    if len(contenders) == 0 or len(seeds) == 0:
        raise ValueError("contenders and seeds must each hold at least one entry")
    want = None if config is None else dataclasses.asdict(config)
    by_key: dict[tuple[str, int], RecallRun] = {}
    for record in records:
        try:
            label = record["params"]["contender"]["label"]
            # the recipe's fields (a record names its dataclass beside them)
            recipe = {
                k: v
                for k, v in record["params"]["recipe"].items()
                if k != "__dataclass__"
            }
            metrics, seed = record["metrics"], record["seed"]
            run = RecallRun(
                label=label,
                seed=seed,
                birth=metrics["birth"],
                accuracy=metrics["final_accuracy"],
                epochs=metrics["epochs"],
                history=list(metrics["history"]),
                seconds=float(record["wall_s"]),
            )
        except (KeyError, TypeError) as missing:
            raise ValueError(
                f"not a memory-robustness record (no {missing}): {sorted(record)}"
            ) from None
        if want is not None and recipe != want:
            differ = sorted(k for k in want if recipe.get(k) != want[k])
            raise ValueError(
                f"record {label!r}, seed {seed} was trained with another recipe "
                f"(differs in {', '.join(differ) or 'its fields'})"
            )
        by_key[(label, seed)] = run
    absent = [
        f"{c.label}, seed {s}"
        for c in contenders
        for s in seeds
        if (c.label, s) not in by_key
    ]
    if absent:
        raise ValueError(f"no record for {len(absent)} run(s): " + "; ".join(absent))
    return [by_key[(c.label, s)] for c in contenders for s in seeds]


def results_markdown(
    runs: Sequence[RecallRun], seeds: Sequence[int] = SEEDS, solved: float = 0.9
) -> str:
    """A markdown table: one row per contender, signal at birth, then per seed the final
    test accuracy.

    A seed's cell also names the first epoch whose test accuracy reached ``solved``,
    if any ("from ep 28"): when the run crossed the line, not a selected accuracy.
    """
    if not 0 < solved <= 1:
        raise ValueError(f"solved must be in (0, 1]; got {solved}")
    labels = list(dict.fromkeys(r.label for r in runs))
    head = (
        "| contender | signal at birth (median) | "
        + " | ".join(f"seed {s}" for s in seeds)
        + " | solved |"
    )
    lines = [head, "|" + "---|" * (len(seeds) + 3)]
    for label in labels:
        by_seed = {r.seed: r for r in runs if r.label == label}
        births = sorted(by_seed[s].birth for s in seeds)
        crossed = {s: first_epoch_at(by_seed[s].history, solved) for s in seeds}
        cells = [
            f"{by_seed[s].accuracy:.0%}"
            + ("" if crossed[s] is None else f" (≥{solved:.0%} from ep {crossed[s]})")
            for s in seeds
        ]
        n_solved = sum(by_seed[s].accuracy >= solved for s in seeds)
        median = births[len(births) // 2]
        lines.append(
            f"| {label} | {median:.1e} | "
            + " | ".join(cells)
            + f" | {n_solved}/{len(seeds)} |"
        )
    return "\n".join(lines)
