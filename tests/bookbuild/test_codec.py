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


@dataclasses.dataclass(frozen=True)
class Width:
    size: int


class Tagged(torch.nn.Module):
    """A module built from a dataclass, with a non-tensor state beside its weights
    (PyTorch's extra state, which ``state_dict`` carries)."""

    def __init__(self, width: Width) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(width.size, width.size)
        self.tag: object = width

    def get_extra_state(self) -> object:
        return self.tag

    def set_extra_state(self, state: object) -> None:
        self.tag = state


def stored_module() -> tuple[list, Tagged]:
    """A value holding a module built inside :func:`codec.constructions`, its extra
    state a dataclass, beside a dataclass in a list and a dataclass as a key."""
    torch.manual_seed(0)
    with codec.constructions([Tagged]):
        net = Tagged(Width(3))
    net.tag = Width(5)
    net.eval()
    return [Point(1.0), (net, {Width(2): "two"})], net


ALL_TYPES = {"Point": Point, "Width": Width, "Tagged": Tagged}


def test_classes_inside_a_module_a_list_or_a_key_are_built_from_the_types_given() -> (
    None
):
    value, net = stored_module()
    encoded = through_json(codec.encode_value(value))
    back = codec.decode_value(encoded, ALL_TYPES)
    assert back[0] == Point(1.0)
    assert type(back[1]) is tuple
    (net_back, keyed) = back[1]
    assert keyed == {Width(2): "two"}
    assert type(net_back) is Tagged
    # its constructor's dataclass, its extra state and its weights
    assert net_back.linear.in_features == 3
    assert net_back.tag == Width(5)
    assert net_back.training is False
    assert torch.equal(net_back.linear.weight, net.linear.weight)
    assert torch.equal(net_back.linear.bias, net.linear.bias)
    # a module read back can be stored again, to the same record
    assert through_json(codec.encode_value(back)) == encoded


def test_a_module_s_constructor_and_weights_are_named_where_they_fail() -> None:
    value, net = stored_module()
    encoded = through_json(codec.encode_value(value))
    module = encoded[1]["items"][0]
    with pytest.raises(ValueError, match=r"^toy\[1\]\[0\]: a record holds a Tagged"):
        codec.decode_value(encoded, {"Point": Point, "Width": Width}, "toy")
    with pytest.raises(
        ValueError, match=r"^toy\[0\] \(constructor\): a record holds a Width"
    ):
        codec.decode_value([module], {"Tagged": Tagged}, "toy")
    weight = dict(module["state"]["items"])["linear.weight"]
    raw = bytearray(base64.b64decode(weight["base64"]))
    raw[0] ^= 1
    weight["base64"] = base64.b64encode(bytes(raw)).decode()
    with pytest.raises(
        ValueError, match=r"^toy\[0\] \(weights\): its bytes are damaged"
    ):
        codec.decode_value([module], ALL_TYPES, "toy")
    # on the way in: an argument or a state the record cannot hold
    net.tag = {5}
    with pytest.raises(
        TypeError, match=r"^result\[0\] \(weights\)\['_extra_state'\]: .*got set"
    ):
        codec.encode_value([net])
    with codec.constructions([torch.nn.Linear]):
        linear = torch.nn.Linear(2, 2, device=torch.device("cpu"))
    with pytest.raises(
        TypeError, match=r"^result\[0\] \(constructor\)\['device'\]: .*got device"
    ):
        codec.encode_value([linear])
    with pytest.raises(TypeError, match=r"^result\[0\]: a Linear can be stored only"):
        codec.encode_value([torch.nn.Linear(2, 2)])


def test_decoding_a_module_leaves_every_random_stream_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The module's first draw is overwritten by its weights: the seed's CPU stream is
    kept, and no accelerator's stream is read (which would start CUDA on every device
    a page's process can see)."""
    value, _ = stored_module()
    encoded = through_json(codec.encode_value(value))
    touched = []
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "get_rng_state", lambda *a: touched.append(a))
    monkeypatch.setattr(torch.cuda, "set_rng_state", lambda *a: touched.append(a))
    torch.manual_seed(1)
    before = torch.get_rng_state()
    codec.decode_value(encoded, ALL_TYPES)
    assert torch.equal(torch.get_rng_state(), before)
    assert touched == []


def test_a_malformed_value_is_named_by_its_place_in_the_record() -> None:
    bare = {"a": 1}  # a dict written as itself, not as its pairs
    tagged = codec.TAG
    with pytest.raises(ValueError, match=r"^result: a stored dict is written"):
        codec.decode_value(bare, {})
    with pytest.raises(ValueError, match=r"^result\[1\]: a stored dict is written"):
        codec.decode_value([0, bare], {})
    with pytest.raises(ValueError, match=r"^result\[1\]: a stored dict is written"):
        codec.decode_value({tagged: "tuple", "items": [0, bare]}, {})
    with pytest.raises(ValueError, match=r"^toy: a stored dict is written"):
        codec.decode_value({tagged: "dict", "items": [[bare, 0]]}, {}, "toy")
    with pytest.raises(ValueError, match=r"^result\.x: a stored dict is written"):
        codec.decode_value(
            {tagged: "dataclass", "type": "Point", "fields": {"x": bare}},
            {"Point": Point},
        )
    with pytest.raises(ValueError, match=r"^result\[0\]: a record holds a Point"):
        codec.decode_value([codec.encode_value(Point(1.0))], {})
    array = codec.encode_value(np.zeros(2, dtype=np.float32))
    with pytest.raises(ValueError, match=r"^result\[0\]: its bytes are damaged"):
        codec.decode_value([{**array, "sha256": "0" * 64}], {})
    # a tensor read on its own is named as one
    with pytest.raises(ValueError, match=r"^tensor: its bytes are damaged"):
        codec.decode_tensor({**array, "sha256": "0" * 64})


def test_a_value_refused_on_the_way_in_is_named_by_its_place() -> None:
    with pytest.raises(TypeError, match=r"^result\[1\]: .*got complex"):
        codec.encode_value([0, np.complex64(1j)])
    with pytest.raises(TypeError, match=r"^result\[1\]: .*got set"):
        codec.encode_value((0, {1}))
    with pytest.raises(TypeError, match=r"^toy key: .*got frozenset"):
        codec.encode_value({frozenset(): 1}, "toy")
    with pytest.raises(TypeError, match=r"^kwargs\['extra'\]: .*got set"):
        codec.job(train_recall, config=RecallConfig(), extra={1})


@dataclasses.dataclass
class _Run:
    inner: _Timed
    log: dict


def test_measured_times_inside_a_dataclass_s_fields_are_found_by_their_path() -> None:
    value = [_Run(_Timed(0.5, 2.5), {"step_seconds": [1.0], "loss": 0.25})]
    encoded = codec.encode_value(value)
    bare, timings = codec.split_timings(json.loads(json.dumps(encoded)))
    assert timings == {"0/inner/seconds": 2.5, "0/log/step_seconds": [1.0]}
    back = codec.decode_value(bare, {"_Run": _Run, "_Timed": _Timed})
    assert back == [_Run(_Timed(0.5, None), {"step_seconds": None, "loss": 0.25})]
    assert codec.join_timings(bare, timings, "toy") == encoded


def test_a_job_s_parameters_come_back_with_their_dataclasses_wherever_they_sit() -> (
    None
):
    types = {"Width": Width, "_Timed": _Timed}
    params = {
        "n": 3,
        "widths": [Width(1), Width(2)],
        "options": {"timed": _Timed(0.5, 1.0), "names": ["a", "b"]},
    }
    canonical = json.loads(json.dumps(memo.canonical(params, "params")))
    assert codec.from_canonical(canonical, types) == params
    with pytest.raises(ValueError, match=r"^params: a record holds a Nope"):
        codec.from_canonical({"__dataclass__": "Nope"}, types)
    with pytest.raises(
        ValueError, match=r"^params\.widths\[1\]: a record holds a Nope"
    ):
        codec.from_canonical({"widths": [{}, {"__dataclass__": "Nope"}]}, types)


def test_a_call_s_arguments_are_named_kwargs_and_a_dotted_function_is_found() -> None:
    path = sweeps.function_path(train_recall)
    params = {
        "function": "train_recall",
        "kwargs": codec.encode_value({"config": Point(1.0)}),
    }
    with pytest.raises(ValueError, match=r"^kwargs: a record holds a Point"):
        codec.run_call(path, 0, through_json(params))
    assert codec.resolve("torch.nn:Module.train") is torch.nn.Module.train


def test_a_stored_result_reads_back_each_key_its_times_and_names_its_record() -> None:
    path = sweeps.function_path(train_recall)
    value = {"loss": 0.5, "seconds": 1.5, "weights": torch.tensor([1.0, 2.0])}
    tree, timings = codec.split_timings(through_json(codec.encode_value(value)))
    assert timings == {"seconds": 1.5}
    back = codec.stored_result({"metrics": {"result": tree}}, path)
    # a record with no times has None in their place
    assert list(back) == ["loss", "seconds", "weights"]
    assert back["loss"] == 0.5
    assert back["seconds"] is None
    assert torch.equal(back["weights"], torch.tensor([1.0, 2.0]))
    record = {"metrics": {"result": tree, "timings_seconds": timings}}
    assert codec.stored_result(record, path)["seconds"] == 1.5
    # the stored tree is not changed by reading it
    assert tree == codec.split_timings(through_json(codec.encode_value(value)))[0]
    # the record is named by its job and seed, or said to be unnamed
    (_, weights) = tree["items"][2]
    weights["sha256"] = "0" * 64
    with pytest.raises(ValueError, match=r"^record\.seed\?'s result: its bytes"):
        codec.stored_result({"metrics": {"result": tree}}, path)
    with pytest.raises(ValueError, match=r"^toy\.seed0: timings with no place"):
        codec.stored_result(
            {"job": "toy", "seed": 0, "metrics": {**record["metrics"], "result": 1}},
            path,
        )
