"""Tests for depth.scale_study: parameter counts on the meta device, the records'
summary, the table."""

from __future__ import annotations

import pytest
import torch

from chapter_code.depth.scale_study import (
    SizeRow,
    design_rows,
    parameter_count,
    result_rows,
    scale_markdown,
)
from chapter_code.depth.word_lm import WordLM, WordRecipe


@pytest.mark.parametrize(
    ("hidden", "layers", "tied"), [(8, 1, False), (8, 2, True), (16, 1, True)]
)
def test_meta_count_equals_a_real_model(hidden: int, layers: int, tied: bool) -> None:
    real = WordLM(40, hidden, layers, 0.0, tied=tied)
    assert parameter_count(40, hidden, layers, tied) == sum(
        p.numel() for p in real.parameters()
    )


def test_tied_count_by_hand() -> None:
    v, h = 100, 8
    lstm = 4 * h * (h + h) + 2 * 4 * h  # weights and both biases of one layer
    # embedding (= read-out weight), read-out bias
    assert parameter_count(v, h, 1, tied=True) == v * h + lstm + v
    assert parameter_count(v, h, 1, tied=False) == 2 * v * h + lstm + v


def test_gpu_design_follows_the_configuration() -> None:
    from bookbuild.runs.registry import GPU_SIZES, WORD_LM_SCALE

    params = WORD_LM_SCALE.configs["gpu"].jobs["large-2-layers"]["recipe"]
    rows = design_rows(
        GPU_SIZES, WordRecipe(vocab_size=params.vocab_size, tied=params.tied)
    )
    assert [r.name for r in rows] == list(GPU_SIZES)
    assert params.tied is True
    assert all(r.parameters > 1_000_000 for r in rows)  # models in the millions
    counts = {r.name: r.parameters for r in rows}
    assert (
        counts["large-2-layers"] > counts["large-1-layer"] > counts["medium-2-layers"]
    )


def _record(seed: int, ppl: float, step: int, params: int = 10) -> dict:
    return {
        "seed": seed,
        "metrics": {"test_perplexity": ppl, "best_step": step, "parameters": params},
    }


def test_result_rows_sort_seeds_and_skip_unrun_sizes() -> None:
    rows = result_rows(
        {"a": (8, 1), "b": (16, 2)},
        {"a": [_record(1, 20.0, 300), _record(0, 10.0, 350)]},
    )
    assert len(rows) == 1
    assert rows[0].perplexities == (10.0, 20.0)
    assert rows[0].best_steps == (350, 300)
    assert rows[0].mean == pytest.approx(15.0)
    assert rows[0].sd == pytest.approx(torch.tensor([10.0, 20.0]).std().item())


def test_records_that_disagree_on_the_size_are_refused() -> None:
    with pytest.raises(ValueError, match="disagree on its size"):
        result_rows(
            {"a": (8, 1)},
            {"a": [_record(0, 1.0, 1, params=10), _record(1, 1.0, 1, params=11)]},
        )


def test_markdown_has_result_columns_only_with_results() -> None:
    design = scale_markdown([SizeRow("small", 8, 1, 3_096_336)])
    assert design.splitlines()[0] == "| model | hidden | layers | parameters |"
    assert "3.10 M" in design
    done = scale_markdown(
        [SizeRow("small", 8, 1, 3_096_336, (100.0, 102.0), (700, 650))]
    )
    assert "test perplexity" in done.splitlines()[0]
    assert "| 101.0 ± 1.4 | 100.0, 102.0 | 700, 650 |" in done
    assert SizeRow("one", 8, 1, 1, (5.0,)).sd == 0.0


def test_design_rows_carry_each_shape_and_the_recipes_tying() -> None:
    # pins every field of a design row: the width and depth as given, and a count made
    # with the recipe's `tied` (a tied 100-word vocabulary saves exactly one 100 x 8
    # matrix)
    rows = design_rows(
        {"a": (8, 1), "b": (16, 2)}, WordRecipe(vocab_size=100, tied=True)
    )
    assert rows == [
        SizeRow("a", 8, 1, parameter_count(100, 8, 1, tied=True)),
        SizeRow("b", 16, 2, parameter_count(100, 16, 2, tied=True)),
    ]
    assert rows[0].parameters == parameter_count(100, 8, 1, tied=False) - 100 * 8


def test_result_rows_keep_every_field_and_go_past_an_unrun_size() -> None:
    # pins the row built from records (name, shape, the jobs' parameter count) and that
    # an unrun size in the middle is skipped, not the end of the table
    sizes = {"a": (8, 1), "b": (16, 2), "c": (32, 3)}
    by_job = {
        "a": [_record(0, 10.0, 100, params=11)],
        "c": [_record(1, 30.0, 300, params=33)],
    }
    assert result_rows(sizes, by_job) == [
        SizeRow("a", 8, 1, 11, (10.0,), (100,)),
        SizeRow("c", 32, 3, 33, (30.0,), (300,)),
    ]


def test_markdown_lines_exactly() -> None:
    # pins the whole header and rule, with and without result columns, and the millions
    # rounded at the cent: 1_005_001 parameters are 1.005001 M, shown as 1.01 M
    design = scale_markdown([SizeRow("small", 8, 1, 1_005_001)]).splitlines()
    assert design == [
        "| model | hidden | layers | parameters |",
        "|---|--:|--:|--:|",
        "| small | 8 | 1 | 1.01 M |",
    ]
    done = scale_markdown(
        [SizeRow("small", 8, 1, 1_005_001, (100.0, 102.0), (700, 650))]
    ).splitlines()
    assert done == [
        "| model | hidden | layers | parameters | test perplexity (mean ± sd) | seeds "
        "| best steps |",
        "|---|--:|--:|--:|--:|---|---|",
        "| small | 8 | 1 | 1.01 M | 101.0 ± 1.4 | 100.0, 102.0 | 700, 650 |",
    ]


def test_the_two_editions_side_by_side() -> None:
    from chapter_code.depth.scale_study import SizeRow, editions_markdown

    cpu = [
        SizeRow("small", 64, 1, 10, (100.0, 102.0, 104.0)),
        SizeRow("large", 256, 1, 40, (90.0, 91.0, 92.0)),
    ]
    gpu = [
        SizeRow("small", 64, 1, 10, (101.0, 103.0, 105.0)),
        SizeRow("large", 256, 1, 40, (95.0, 95.0, 95.0)),
    ]
    assert editions_markdown(cpu, gpu).splitlines() == [
        "| size | CPU | GPU | GPU − CPU | within two seed spreads |",
        "|---|---:|---:|---:|---|",
        "| small | 102.0 ± 2.0 | 103.0 ± 2.0 | +1.0 | yes |",
        "| large | 91.0 ± 1.0 | 95.0 ± 0.0 | +4.0 | no |",
    ]
    # a size the GPU has not run is left out
    assert len(editions_markdown(cpu, gpu[:1]).splitlines()) == 3
