"""The scale study's GPU configuration on the page: its design, and its results once
its records exist.

The ``gpu`` configuration of the ``word-lm-scale`` sweep
(:data:`bookbuild.runs.registry.WORD_LM_SCALE`) crosses three widths with one
and two layers, tied embeddings, over three seeds. :func:`design_rows` counts
each model's parameters without training it (the model is built on PyTorch's
``meta`` device, which holds shapes and no numbers); :func:`result_rows`
summarises the records, size by size; :func:`scale_markdown` writes either as a
table.

Pages: "Depth, direction and scale" (the scale study on a GPU).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from chapter_code.depth.word_lm import WordLM, WordRecipe


@dataclass(frozen=True)
class SizeRow:
    """One size of the study: its shape, its parameters and (once run) its test
    perplexities by seed.
    """

    name: str
    hidden: int
    layers: int
    parameters: int
    perplexities: tuple[float, ...] = ()
    best_steps: tuple[int, ...] = ()

    @property
    def mean(self) -> float:
        return statistics.fmean(self.perplexities)

    @property
    def sd(self) -> float:
        """The sample standard deviation over seeds (0 for one seed)."""
        return (
            statistics.stdev(self.perplexities) if len(self.perplexities) > 1 else 0.0
        )


def parameter_count(vocab: int, hidden: int, layers: int, tied: bool) -> int:
    """Parameters of :class:`WordLM` of this shape (a tied matrix counted once),
    counted on the ``meta`` device.
    """
    with torch.device("meta"):
        model = WordLM(vocab, hidden, layers, 0.0, tied=tied)
    return sum(p.numel() for p in model.parameters())


def design_rows(
    sizes: Mapping[str, tuple[int, int]], recipe: WordRecipe
) -> list[SizeRow]:
    """One row per size (``name -> (hidden, layers)``), in order, without results."""
    return [
        SizeRow(name, h, n, parameter_count(recipe.vocab_size, h, n, recipe.tied))
        for name, (h, n) in sizes.items()
    ]


def result_rows(
    sizes: Mapping[str, tuple[int, int]], by_job: Mapping[str, Sequence[dict[str, Any]]]
) -> list[SizeRow]:
    """One row per size that was trained (``by_job``: job name -> its runs' results,
    one per seed), seeds in order; parameters as the runs counted them.
    """
    rows = []
    for name, (hidden, layers) in sizes.items():
        runs = sorted(by_job.get(name, ()), key=lambda r: r["seed"])
        if not runs:
            continue
        counts = {r["metrics"]["parameters"] for r in runs}
        if len(counts) != 1:
            raise ValueError(f"the runs of {name!r} disagree on its size: {counts}")
        rows.append(
            SizeRow(
                name,
                hidden,
                layers,
                counts.pop(),
                tuple(r["metrics"]["test_perplexity"] for r in runs),
                tuple(r["metrics"]["best_step"] for r in runs),
            )
        )
    return rows


def scale_markdown(rows: Sequence[SizeRow]) -> str:
    """A markdown table of the rows: shape and parameters, and test perplexity where
    the rows have results.
    """
    results = any(r.perplexities for r in rows)
    head = "| model | hidden | layers | parameters |"
    rule = "|---|--:|--:|--:|"
    if results:
        head += " test perplexity (mean ± sd) | seeds | best steps |"
        rule += "--:|---|---|"
    lines = [head, rule]
    for r in rows:
        line = f"| {r.name} | {r.hidden} | {r.layers} | {r.parameters / 1e6:.2f} M |"
        if results:
            seeds = ", ".join(f"{p:.1f}" for p in r.perplexities)
            steps = ", ".join(str(s) for s in r.best_steps)
            line += f" {r.mean:.1f} ± {r.sd:.1f} | {seeds} | {steps} |"
        lines.append(line)
    return "\n".join(lines)


def editions_markdown(cpu: Sequence[SizeRow], gpu: Sequence[SizeRow]) -> str:
    """The two editions' test perplexities, size by size: each mean ± its sample
    standard deviation over seeds, the GPU's mean minus the CPU's, and whether that
    difference lies within two of the CPU seeds' standard deviations.
    """
    by_name = {row.name: row for row in gpu}
    lines = [
        "| size | CPU | GPU | GPU − CPU | within two seed spreads |",
        "|---|---:|---:|---:|---|",
    ]
    for row in cpu:
        other = by_name.get(row.name)
        if other is None or not row.perplexities or not other.perplexities:
            continue
        gap = other.mean - row.mean
        lines.append(
            f"| {row.name} | {row.mean:.1f} ± {row.sd:.1f} | "
            f"{other.mean:.1f} ± {other.sd:.1f} | {gap:+.1f} | "
            f"{'yes' if abs(gap) <= 2 * row.sd else 'no'} |"
        )
    return "\n".join(lines)
