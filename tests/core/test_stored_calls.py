"""Tests for chapter_code.core.stored_calls and the chapters' ``book-runs`` sweeps built on it.

Any value a training returns survives the trip through a record (JSON, as the sweep runner writes it) unchanged:
tuples stay tuples, dict keys keep their order and types, tensors their bytes, dtype and shape, dataclasses their
class; measured times are kept apart and put back. A damaged tensor, an unknown dataclass or function, a call
the sweep does not hold, are named errors. Each chapter's sweep holds exactly the calls its page makes, and a
job's record read back is what calling the function directly returns.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from bookbuild.runs import memo
from chapter_code import experiments
from chapter_code.beyond import book_runs as beyond_runs
from chapter_code.core.stored_calls import (
    TIMINGS,
    book_call,
    call_and_encode,
    decode_value,
    encode_value,
    stored_result,
)
from chapter_code.depth import book_runs as depth_runs
from chapter_code.gated import book_runs as gated_runs
from chapter_code.gated.memory_task import CONTENDERS, RecallConfig, make_recall, train_recall

ROOT = Path(__file__).resolve().parents[2]
BOOK_RUN_SWEEPS = {"depth-book-runs": (depth_runs, "book/depth.md"), "gated-book-runs": (gated_runs, "book/gated.md"),
                   "beyond-book-runs": (beyond_runs, "book/beyond.md")}


@dataclasses.dataclass
class Point:
    x: float
    tags: tuple[str, ...] = ()
    seconds: float = 0.0


def through_json(value):  # type: ignore[no-untyped-def]
    """What a record gives back: canonical JSON (sorted keys), written and read."""
    return json.loads(json.dumps(memo.canonical(value, "metrics")))


def same(a, b) -> bool:  # type: ignore[no-untyped-def]
    """Equal, type for type (tuples are not lists), tensors by dtype, shape and bytes."""
    if type(a) is not type(b):
        return False
    if isinstance(a, torch.Tensor):
        return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if dataclasses.is_dataclass(a):
        return all(same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    return a == b


leaves = (st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8)
          | st.floats(allow_nan=True, allow_infinity=True))
values = st.recursive(
    leaves,
    lambda inner: (st.lists(inner, max_size=4) | st.tuples(inner, inner)
                   | st.dictionaries(st.text(max_size=6) | st.integers(-9, 9), inner, max_size=4)),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(values)
def test_any_plain_value_comes_back_unchanged(value) -> None:  # type: ignore[no-untyped-def]
    assert same(decode_value(through_json(encode_value(value)), {}), value)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.bool])
def test_tensors_keep_bytes_dtype_and_shape(dtype: torch.dtype) -> None:
    tensor = (torch.randn(3, 0, 2) if dtype.is_floating_point else torch.arange(6).reshape(2, 3)).to(dtype)
    again = decode_value(through_json(encode_value({"w": tensor, "empty": torch.zeros(0)})), {})
    assert same(again, {"w": tensor, "empty": torch.zeros(0)})


def test_key_order_and_dataclasses_survive_the_sorted_json() -> None:
    value = {"zeta": 1, "alpha": Point(0.1, ("a", "b")), 3: [(1, 2.5)]}
    again = decode_value(through_json(encode_value(value)), {"Point": Point})
    assert same(again, value)
    assert list(again) == ["zeta", "alpha", 3]


def test_a_damaged_tensor_or_an_unknown_dataclass_is_named() -> None:
    tree = through_json(encode_value({"w": torch.ones(4)}))
    text = json.dumps(tree)
    b64 = re.search(r'"base64": "([^"]+)"', text).group(1)
    damaged = json.loads(text.replace(b64, ("B" if b64[0] != "B" else "C") + b64[1:]))
    with pytest.raises(ValueError, match="damaged"):
        decode_value(damaged, {})
    with pytest.raises(ValueError, match="Point, which is not among"):
        decode_value(through_json(encode_value(Point(1.0))), {})
    with pytest.raises(TypeError, match="got object"):
        encode_value({"a": object()})


def toy(seed: int, size: int, point: Point) -> dict:
    return {"seed": seed, "w": torch.full((size,), float(seed)), "point": point, "seconds": 12.5,
            "step_seconds": [0.1, 0.2]}


def test_a_job_keeps_its_timings_apart_and_the_record_reads_back_whole() -> None:
    params = book_call(toy, size=3, seed=4, point=Point(2.0, seconds=7.0))
    assert params == book_call(toy, point=Point(2.0, seconds=7.0), seed=4, size=3)  # keyword order is no part
    metrics = through_json(call_and_encode({"toy": toy}, 0, **through_json(params), types={"Point": Point}))
    assert metrics["timings_seconds"] == {"seconds": 12.5, "step_seconds": [0.1, 0.2], "point/seconds": 7.0}
    assert "12.5" not in json.dumps(metrics["result"])  # a re-run's times differ: not in what is compared
    assert all(k.endswith("_seconds") for k in metrics if k != "result")
    record = {"params": through_json(params), "metrics": metrics}
    again = stored_result([record], toy, {"Point": Point}, seed=4, size=3, point=Point(2.0, seconds=7.0))
    assert same(again, toy(4, 3, Point(2.0, seconds=7.0)))
    assert {"seconds", "step_seconds"} <= TIMINGS


def test_bad_jobs_and_missing_calls_are_named() -> None:
    params = through_json(book_call(toy, seed=1, size=2, point=Point(0.0)))
    with pytest.raises(ValueError, match=r"function must be one of \['toy'\]; got 'nope'"):
        call_and_encode({"toy": toy}, 0, "nope", params["kwargs"], {"Point": Point})
    with pytest.raises(ValueError, match="seed must be 0; got 3"):
        call_and_encode({"toy": toy}, 3, **params, types={"Point": Point})
    extra = through_json(book_call(toy, seed=1, size=2, point=Point(0.0), lr=0.1))
    with pytest.raises(ValueError, match=r"toy takes no argument\(s\) \['lr'\]"):
        call_and_encode({"toy": toy}, 0, **extra, types={"Point": Point})
    with pytest.raises(LookupError, match=r"0 records hold the call toy\(point, seed, size\)"):
        stored_result([], toy, {"Point": Point}, seed=1, size=2, point=Point(0.0))


@pytest.mark.parametrize("name", sorted(BOOK_RUN_SWEEPS))
def test_each_sweep_holds_the_calls_of_its_page_and_nothing_else(name: str) -> None:
    module, page = BOOK_RUN_SWEEPS[name]
    sweep = experiments.SWEEPS[name]
    assert sweep.job.__module__ == module.__name__
    source = (ROOT / page).read_text()
    assert f'runtime.load_sweep("{name}", config="book-runs")' in source
    assert "runtime.run_once(" not in source or name == "gated-book-runs"  # Chapter 3 trains one run itself
    for config, grid in sweep.configs.items():
        assert grid.seeds == (0,), f"{name} {config}: one call, one record: the call's seed is in its arguments"
        for job, params in grid.jobs.items():
            assert params["function"] in module.FUNCTIONS, f"{name} {config} {job}"
            assert f"{params['function']}," in source or config == "smoke", f"{page} never calls {job}"
            decode_value(params["kwargs"], module.TYPES)  # every argument is one the module reads back


def test_the_depth_sweep_holds_each_stack_and_the_trap_and_taggers_once() -> None:
    jobs = experiments.SWEEPS["depth-book-runs"].configs["book-runs"].jobs
    calls = [json.dumps(p, sort_keys=True) for p in jobs.values()]
    assert len(set(calls)) == len(calls) == 11
    assert sorted(p["function"] for p in jobs.values()) == ["depth_run"] * 7 + ["train_directional"] * 2 + [
        "train_tagger"] * 2


def test_a_gated_record_gives_back_the_run_and_a_network_that_computes_as_the_trained_one() -> None:
    kwargs = {"contender": CONTENDERS[2], "seed": 0, "config": RecallConfig(lag=6, n_train=64, n_test=32, epochs=2)}
    params = through_json(book_call(train_recall, **kwargs))
    metrics = through_json(gated_runs.gated_book_run(0, **params))
    run, net = gated_runs.stored(SimpleNamespace(records=[{"params": params, "metrics": metrics}]), train_recall,
                                 **kwargs)
    direct_run, direct_net = train_recall(**kwargs)
    assert same(dataclasses.replace(run, seconds=0.0), dataclasses.replace(direct_run, seconds=0.0))
    x, _ = make_recall(8, 6, kwargs["config"].vocab, seed=3)
    with torch.no_grad():
        assert torch.equal(net(x), direct_net(x))
    with pytest.raises(ValueError, match="holds calls of train_recall"):
        gated_runs.stored(SimpleNamespace(records=[]), make_recall, **kwargs)
