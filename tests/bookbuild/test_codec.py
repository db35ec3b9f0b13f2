"""Tests for bookbuild.runs.codec (the records' one codec) and bookbuild.runs.calls
(stored calls served to a page).

Values go through the codec and back through canonical JSON, as a record does; the
stored calls are real calls of taught functions at toy sizes, compared with the same
call made directly.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import math
import re

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from bookbuild.runs import calls, codec, memo, registry, sweeps
from chapter_code.gated.memory_task import (
    CONTENDERS,
    RecallConfig,
    RecallNet,
    make_recall,
    train_recall,
)
from chapter_code.lm.char_lm import TrainConfig
from chapter_code.lm.char_models import (
    CPU,
    PROSE_LSTM,
    LMRecipe,
    load_char_lm,
    train_char_lm,
)

TINY_LM = LMRecipe(
    "lstm",
    8,
    TrainConfig(window=16, batch_size=4, steps=3, log_every=1),
    embedding_size=4,
)
TINY_RECALL = {
    "contender": CONTENDERS[2],
    "seed": 0,
    "config": RecallConfig(lag=6, n_train=64, n_test=32, epochs=2),
}


@dataclasses.dataclass
class Point:
    x: float
    tags: tuple[str, ...] = ()
    seconds: float = 0.0


def through_json(value):  # type: ignore[no-untyped-def]
    """What a record gives back: canonical JSON (sorted keys), written and read."""
    return json.loads(json.dumps(memo.canonical(value, "metrics")))


def same(a, b) -> bool:  # type: ignore[no-untyped-def]
    """Equal, type for type (tuples are not lists), tensors by dtype, shape and
    bytes."""
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
        return all(
            same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a)
        )
    return a == b


def stored(function, **kwargs):  # type: ignore[no-untyped-def]
    """A call run as a sweep's job runs it, its record's JSON round trip, and read back
    as a page gets it."""
    path = sweeps.function_path(function)
    params = through_json(codec.job(function, **kwargs))
    record = {
        "job": "toy",
        "seed": 0,
        "params": params,
        "metrics": through_json(codec.run_call(path, 0, params)),
    }
    return record, codec.stored_result(record, path)


leaves = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.text(max_size=8)
    | st.floats(allow_nan=True, allow_infinity=True)
)
values = st.recursive(
    leaves,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=6) | st.integers(-9, 9), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(values)
def test_any_plain_value_comes_back_unchanged(value) -> None:  # type: ignore[no-untyped-def]
    assert same(codec.decode_value(through_json(codec.encode_value(value)), {}), value)


@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(
        dtype=st.sampled_from([np.float32, np.float64, np.int64, np.bool_]),
        shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5),
    )
)
def test_a_tensor_survives_the_trip_through_plain_json_bit_for_bit(
    array: np.ndarray,
) -> None:
    tensor = torch.from_numpy(array.copy())
    back = codec.decode_tensor(json.loads(json.dumps(codec.encode_tensor(tensor))))
    assert back.dtype == tensor.dtype
    assert back.shape == tensor.shape
    # NaNs, signed zeros and all
    assert back.numpy().tobytes() == tensor.numpy().tobytes()


def test_the_encoding_is_little_endian_bytes_with_their_hash() -> None:
    data = codec.encode_tensor(torch.tensor([1.0, -2.0], dtype=torch.float32))
    assert (
        base64.b64decode(data["base64"]) == np.array([1.0, -2.0], dtype="<f4").tobytes()
    )
    assert (data["shape"], data["dtype"], len(data["sha256"])) == ([2], "float32", 64)
    # a strided view is copied contiguously
    assert codec.encode_tensor(torch.zeros(2, 3)[:, 1])["shape"] == [2]


def test_bad_tensors_are_named_not_loaded() -> None:
    good = codec.encode_tensor(torch.arange(6, dtype=torch.float32).reshape(2, 3))
    raw = bytearray(base64.b64decode(good["base64"]))
    raw[0] ^= 1
    damaged = {**good, "base64": base64.b64encode(bytes(raw)).decode()}
    with pytest.raises(
        ValueError, match=r"w: its bytes are damaged .*re-run the sweep"
    ):
        codec.decode_tensor(damaged, "w")
    # a character outside base64's alphabet is refused, not skipped (skipped, the bytes
    # and their hash would match)
    with pytest.raises(
        ValueError, match="Non-base64 digit found|Only base64 data is allowed"
    ):
        codec.decode_tensor(
            {**good, "base64": good["base64"][:4] + "!" + good["base64"][4:]}
        )
    with pytest.raises(ValueError, match=r"6 values do not fill the shape \(4, 2\)"):
        codec.decode_tensor({**good, "shape": [4, 2]})
    with pytest.raises(ValueError, match=r"dtype must be one of .*got 'float16'"):
        codec.decode_tensor({**good, "dtype": "float16"})
    with pytest.raises(ValueError, match=r"needs \['sha256'\]"):
        codec.decode_tensor({k: v for k, v in good.items() if k != "sha256"})
    with pytest.raises(ValueError, match=r"holds tensors of .*got float16"):
        codec.encode_tensor(torch.zeros(2, dtype=torch.float16))


def test_key_order_and_dataclasses_survive_and_an_unknown_class_is_named() -> None:
    value = {"zeta": 1, "alpha": Point(0.1, ("a", "b")), 3: [(1, 2.5)]}
    again = codec.decode_value(
        through_json(codec.encode_value(value)), {"Point": Point}
    )
    assert same(again, value)
    assert list(again) == ["zeta", "alpha", 3]
    with pytest.raises(
        ValueError,
        match="Point, which is not among the classes the called function reaches",
    ):
        codec.decode_value(through_json(codec.encode_value(Point(1.0))), {})
    with pytest.raises(TypeError, match="got object"):
        codec.encode_value({"a": object()})


def test_a_module_built_outside_a_stored_call_is_refused_with_the_reason() -> None:
    with pytest.raises(
        TypeError,
        match="RecallNet can be stored only when it was built inside the stored call",
    ):
        codec.encode_value(RecallNet("lstm", 4, 8))


def test_a_job_is_the_call_whatever_the_keyword_order_and_the_device() -> None:
    a = codec.job(train_recall, seed=1, contender=CONTENDERS[0], config=RecallConfig())
    b = codec.job(
        train_recall,
        config=RecallConfig(),
        contender=CONTENDERS[0],
        seed=1,
        device="cuda",
    )
    assert a == b
    assert a["function"] == "train_recall"
    assert "train_recall" in calls.call_names()


def test_a_stored_train_recall_gives_back_its_run_and_a_network_that_computes_as_the_trained_one() -> (  # noqa: E501  (the test's name)
    None
):
    record, (run, net) = stored(train_recall, **TINY_RECALL)
    # the run's time, kept apart
    assert list(record["metrics"]["timings_seconds"]) == ["0/seconds"]
    assert record["metrics"]["result"]["items"][0]["fields"]["seconds"] is None
    direct_run, direct_net = train_recall(**TINY_RECALL)
    assert same(
        dataclasses.replace(run, seconds=0.0),
        dataclasses.replace(direct_run, seconds=0.0),
    )
    assert run.seconds > 0
    assert isinstance(net, RecallNet)
    assert net.training == direct_net.training
    x, _ = make_recall(8, 6, TINY_RECALL["config"].vocab, seed=3)
    with torch.no_grad():
        assert torch.equal(net(x), direct_net(x))


def test_a_stored_train_char_lm_reads_back_exactly_and_damaged_weights_are_named() -> (
    None
):
    record, back = stored(train_char_lm, corpus="shakespeare", recipe=TINY_LM)
    direct = train_char_lm("shakespeare", TINY_LM)
    assert same(back, direct)
    ids = torch.tensor([[1, 2, 3, 4]])
    (model_direct, _), (model_back, _) = load_char_lm(direct), load_char_lm(back)
    with torch.no_grad():
        assert torch.equal(model_direct(ids)[0], model_back(ids)[0])
    text = json.dumps(record)
    b64 = re.search(r'"base64": "([^"]+)"', text).group(1)
    damaged = json.loads(
        text.replace(b64, ("B" if b64[0] != "B" else "C") + b64[1:], 1)
    )
    with pytest.raises(ValueError, match=r"toy\.seed0's result.*its bytes are damaged"):
        codec.stored_result(damaged, sweeps.function_path(train_char_lm))


def test_bad_calls_are_named() -> None:
    path = sweeps.function_path(train_recall)
    params = through_json(codec.job(train_recall, **TINY_RECALL))
    with pytest.raises(ValueError, match="seed must be 0; got 3"):
        codec.run_call(path, 3, params)
    with pytest.raises(
        ValueError, match=r"a job of .*train_recall is \{'function': 'train_recall'"
    ):
        codec.run_call(path, 0, {**params, "function": "make_recall"})
    extra = through_json(codec.job(train_recall, **TINY_RECALL, lr=0.1))
    with pytest.raises(
        ValueError, match=r"train_recall takes no argument\(s\) \['lr'\]"
    ):
        codec.run_call(path, 0, extra)


def test_a_page_s_call_is_found_in_its_sweep_and_a_different_call_is_not() -> None:
    config = RecallConfig()
    found = calls.find(
        train_recall,
        {"contender": CONTENDERS[2], "seed": 0, "config": config, "device": "cpu"},
    )
    assert found is not None
    assert (found[0].name, found[1], found[2]) == (
        "gated-book-runs",
        "book-runs",
        "trace-lstm-forget-bias-1",
    )
    assert (
        calls.find(
            train_recall, {"contender": CONTENDERS[2], "seed": 1, "config": config}
        )
        is None
    )
    # no sweep holds it
    assert calls.find(make_recall, {"n": 4, "lag": 3, "vocab": 4, "seed": 0}) is None
    lm = calls.find(train_char_lm, {"corpus": "shakespeare", "recipe": CPU["lstm"]})
    assert lm is not None
    assert lm[2] == "shakespeare-lstm"
    assert (
        calls.find(train_char_lm, {"corpus": "book-prose", "recipe": PROSE_LSTM})[2]
        == "prose-lstm"
    )


def test_every_call_sweep_holds_only_calls_of_its_functions_with_arguments_they_read_back() -> (  # noqa: E501  (the test's name)
    None
):
    for sweep in registry.SWEEPS.values():
        if not sweep.calls:
            continue
        names = {f.__name__: f for f in sweep.calls}
        for config, grid in sweep.configs.items():
            assert grid.seeds == (0,), f"{sweep.name} {config}: one call, one record"
            for job, params in grid.jobs.items():
                fn = names[params["function"]]
                kwargs = codec.decode_value(
                    params["kwargs"], codec.classes(sweeps.function_path(fn))
                )
                assert (
                    calls.find(fn, kwargs)[:2] == (sweep, config) or config == "smoke"
                ), f"{sweep.name} {job}"


def test_a_served_call_equals_the_call_made_directly() -> None:
    """The gated sweep's smoke record, served as a page would get it, against the same
    call computed here, at the precision the sweep declares for a training (its record
    may come from another CPU's kernels)."""
    grid = registry.GATED_BOOK_RUNS.configs["smoke"]
    kwargs = codec.decode_value(
        grid.jobs["tiny"]["kwargs"], codec.classes(sweeps.function_path(train_recall))
    )
    served = calls.serve(train_recall, {**kwargs, "device": "cpu"})
    assert served is not calls.NOT_STORED
    (run, net), (direct_run, direct_net) = served, train_recall(**kwargs)
    assert run.epochs == direct_run.epochs
    assert run.label == direct_run.label
    assert np.allclose(run.history, direct_run.history, rtol=1e-3, atol=1e-6)
    x, _ = make_recall(8, kwargs["config"].lag, kwargs["config"].vocab, seed=3)
    with torch.no_grad():
        assert torch.allclose(net(x), direct_net(x), rtol=1e-3, atol=1e-5)
    assert (
        calls.serve(make_recall, {"n": 4, "lag": 3, "vocab": 4, "seed": 0})
        is calls.NOT_STORED
    )


def test_numpy_values_dtypes_and_odd_floats_come_back_as_they_went_in() -> None:
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    value = {
        "array": array,
        "scalar32": np.float32(1.5),
        "scalar64": np.int64(7),
        "dtype": torch.float64,
        "odd": (math.inf, -math.inf),
        3: [torch.tensor([1, 2], dtype=torch.int64)],
    }
    back = codec.decode_value(through_json(codec.encode_value(value)), {})
    assert list(back) == list(value)
    assert type(back["array"]) is np.ndarray
    assert back["array"].dtype == np.float32
    np.testing.assert_array_equal(back["array"], array)
    # a NumPy scalar is stored as the Python number it holds
    assert type(back["scalar32"]) is float
    assert back["scalar32"] == 1.5
    assert type(back["scalar64"]) is int
    assert back["scalar64"] == 7
    assert back["dtype"] is torch.float64
    assert back["odd"] == (math.inf, -math.inf)
    assert type(back["odd"]) is tuple
    assert same(back[3], [torch.tensor([1, 2], dtype=torch.int64)])


def test_the_stored_form_of_each_kind_is_the_record_format() -> None:
    # what records on disk hold: a renamed tag would make every record unreadable
    encoded = codec.encode_value(
        {"a": (1, math.nan), "d": torch.int8, "x": np.zeros(1, dtype=np.int64)}
    )
    assert encoded[codec.TAG] == "dict"
    (a_key, a_value), (d_key, d_value), (x_key, x_value) = encoded["items"]
    assert (a_key, d_key, x_key) == ("a", "d", "x")
    assert a_value == {
        codec.TAG: "tuple",
        "items": [1, {codec.TAG: "float", "value": "nan"}],
    }
    assert d_value == {codec.TAG: "dtype", "name": "int8"}
    assert x_value[codec.TAG] == "ndarray"
    assert codec.decode_tensor(x_value).dtype == torch.int64


def test_a_value_the_format_cannot_hold_is_named_with_where_it_sits() -> None:
    with pytest.raises(
        TypeError, match=r"^result\[1\]\['k'\]: a record holds .* got set"
    ):
        codec.encode_value([0, {"k": {1}}])

    @dataclasses.dataclass
    class Out:
        loss: object

    with pytest.raises(TypeError, match=r"^metrics\.loss: .* got object"):
        codec.encode_value(Out(object()), "metrics")


@dataclasses.dataclass
class _Timed:
    loss: float
    seconds: float


def test_measured_times_are_taken_out_by_their_place_and_put_back_exactly() -> None:
    value = {
        "a": [{"seconds": 1.5, "x": 2}],
        "b": (_Timed(0.5, 2.5), {3: {"step_seconds": [1.0]}}),
        "seconds": 9.0,
    }
    encoded = codec.encode_value(value)
    bare, timings = codec.split_timings(json.loads(json.dumps(encoded)))
    assert timings == {
        "a/0/seconds": 1.5,
        "b/0/seconds": 2.5,
        "b/1/#0/step_seconds": [1.0],
        "seconds": 9.0,
    }
    # only the times are gone: the rest of the result is untouched
    back = codec.decode_value(bare, {"_Timed": _Timed})
    assert back["a"] == [{"seconds": None, "x": 2}]
    assert back["b"][0] == _Timed(0.5, None)
    assert back["b"][1] == {3: {"step_seconds": None}}
    assert back["seconds"] is None
    joined = codec.join_timings(bare, timings, "toy")
    assert joined == encoded
    with pytest.raises(ValueError, match=r"^toy: timings with no place .*'c/seconds'"):
        codec.join_timings(codec.split_timings(encoded)[0], {"c/seconds": 1.0}, "toy")
