"""One call of a training function, kept whole in a sweep record: the jobs of the
chapters' ``book-runs`` sweeps.

A chapter that trained a model with ``runtime.run_once`` can instead read the same
call's result from a record made ahead of the build (``make experiments``). The
record's parameters are the call itself, the function's name and its keyword
arguments, written by :func:`book_call`; its metrics are the function's whole
result, written by :func:`encode_value`: numbers, strings, lists, tuples, dicts,
the dataclasses a chapter's job module allows, and tensors, each tensor as base64
of its little-endian bytes with its shape and SHA-256. Measured times in the
result are kept apart (``timings_seconds``), since no re-run reproduces them.
:func:`stored_result` finds the record of a call by its arguments, exactly as the
chapter writes them, and gives back what the function returned, refusing a tensor
whose bytes no longer match their hash.

The job functions live in each chapter's own module
(:mod:`chapter_code.depth.book_runs`, ...), which imports the functions it may call,
so that a record is tied to their source.
"""

from __future__ import annotations

import base64
import copy
import dataclasses
import hashlib
import inspect
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import torch

#: the tensor types a record may hold, and their little-endian NumPy types
DTYPES = {"float32": "<f4", "float64": "<f8", "int64": "<i8", "bool": "|b1"}
#: the key that marks a value JSON has no type for (a dict, a tuple, a tensor...)
TAG = "__stored__"
#: keys of a result that hold measured times (kept apart, never compared on a re-run)
TIMINGS = frozenset({"seconds", "step_seconds", "step_seconds_quartiles"})


def encode_tensor(tensor: torch.Tensor) -> dict[str, Any]:
    """``tensor`` as plain data: dtype, shape, SHA-256 of its bytes, base64 of them."""
    dtype = str(tensor.dtype).removeprefix("torch.")
    if dtype not in DTYPES:
        raise ValueError(f"a record holds tensors of {sorted(DTYPES)}; got {dtype}")
    raw = tensor.detach().cpu().contiguous().numpy().astype(DTYPES[dtype]).tobytes()
    return {
        "dtype": dtype,
        "shape": list(tensor.shape),
        "sha256": hashlib.sha256(raw).hexdigest(),
        "base64": base64.b64encode(raw).decode("ascii"),
    }


def decode_tensor(data: Mapping[str, Any], name: str = "tensor") -> torch.Tensor:
    """The tensor :func:`encode_tensor` wrote; a damaged one is named, not loaded."""
    missing = {"dtype", "shape", "sha256", "base64"} - set(data)
    if missing:
        raise ValueError(f"{name}: an encoded tensor needs {sorted(missing)}")
    if data["dtype"] not in DTYPES:
        raise ValueError(
            f"{name}: dtype must be one of {sorted(DTYPES)}; got {data['dtype']!r}"
        )
    raw = base64.b64decode(data["base64"], validate=True)
    digest = hashlib.sha256(raw).hexdigest()
    if digest != data["sha256"]:
        raise ValueError(
            f"{name}: its bytes are damaged (SHA-256 {digest[:12]}..., the record pins "
            f"{data['sha256'][:12]}...); re-run the sweep that wrote it"
        )
    array = np.frombuffer(raw, dtype=DTYPES[data["dtype"]])
    shape = tuple(data["shape"])
    if array.size != int(np.prod(shape, dtype=np.int64)):
        raise ValueError(f"{name}: {array.size} values do not fill the shape {shape}")
    return torch.from_numpy(array.reshape(shape).copy())


def encode_value(value: Any, where: str = "result") -> Any:
    """``value`` as JSON-ready data that :func:`decode_value` turns back into it."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return {TAG: "float", "value": repr(value)}
    if isinstance(value, torch.Tensor):
        return {TAG: "tensor", **encode_tensor(value)}
    if isinstance(value, np.ndarray):
        return {TAG: "ndarray", **encode_tensor(torch.from_numpy(value))}
    if isinstance(value, np.generic):
        return encode_value(value.item(), where)
    if isinstance(value, torch.dtype):
        return {TAG: "dtype", "name": str(value).removeprefix("torch.")}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {
            f.name: encode_value(getattr(value, f.name), f"{where}.{f.name}")
            for f in dataclasses.fields(value)
        }
        return {TAG: "dataclass", "type": type(value).__qualname__, "fields": fields}
    if isinstance(value, tuple):
        items = [encode_value(v, f"{where}[{i}]") for i, v in enumerate(value)]
        return {TAG: "tuple", "items": items}
    if isinstance(value, list):
        return [encode_value(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(
        value, Mapping
    ):  # as pairs: JSON would sort the keys, losing their order
        items = [
            [encode_value(k, f"{where} key"), encode_value(v, f"{where}[{k!r}]")]
            for k, v in value.items()
        ]
        return {TAG: "dict", "items": items}
    raise TypeError(
        f"{where}: a record holds numbers, strings, lists, tuples, dicts, dataclasses "
        f"and tensors; got {type(value).__name__}"
    )


def decode_value(data: Any, types: Mapping[str, type], where: str = "result") -> Any:
    """The value :func:`encode_value` wrote; ``types`` names the dataclasses allowed."""
    if isinstance(data, list):
        return [decode_value(v, types, f"{where}[{i}]") for i, v in enumerate(data)]
    if not isinstance(data, dict):
        return data
    kind = data.get(TAG)
    if kind is None:
        raise ValueError(
            f"{where}: a stored dict is written as its pairs; got a bare dict"
        )
    if kind == "float":
        return float(data["value"])
    if kind == "tensor":
        return decode_tensor(data, where)
    if kind == "ndarray":
        return decode_tensor(data, where).numpy()
    if kind == "dtype":
        return getattr(torch, data["name"])
    if kind == "tuple":
        return tuple(
            decode_value(v, types, f"{where}[{i}]") for i, v in enumerate(data["items"])
        )
    if kind == "dict":
        return {
            decode_value(k, types, where): decode_value(v, types, where)
            for k, v in data["items"]
        }
    if kind == "dataclass":
        cls = types.get(data["type"])
        if cls is None:
            raise ValueError(
                f"{where}: a record holds a {data['type']}, which is not among the "
                f"dataclasses this chapter reads ({sorted(types)})"
            )
        fields = {
            k: decode_value(v, types, f"{where}.{k}") for k, v in data["fields"].items()
        }
        return cls(**fields)
    raise ValueError(f"{where}: unknown stored value kind {kind!r}")


def _timing_nodes(tree: Any, path: tuple = ()) -> Iterable[tuple[list, int, tuple]]:
    """(container, index, path) for each measured time (:data:`TIMINGS`) in an
    encoded tree: the value of a key of a dict, or of a field of a dataclass.
    """
    if isinstance(tree, list):
        for i, v in enumerate(tree):
            yield from _timing_nodes(v, (*path, i))
    elif isinstance(tree, dict):
        kind = tree.get(TAG)
        if kind == "dataclass":
            for k, v in tree["fields"].items():
                if k in TIMINGS:
                    yield tree["fields"], k, (*path, k)
                else:
                    yield from _timing_nodes(v, (*path, k))
        elif kind == "dict":
            for i, (k, v) in enumerate(tree["items"]):
                if k in TIMINGS:
                    yield tree["items"][i], 1, (*path, k)
                else:  # a string key names its place; any other key, its position
                    yield from _timing_nodes(
                        v, (*path, k if isinstance(k, str) else f"#{i}")
                    )
        elif kind == "tuple":
            yield from _timing_nodes(tree["items"], path)


def _path_text(path: tuple) -> str:
    return "/".join(str(p) for p in path)


def book_call(function: Callable[..., Any], **kwargs: Any) -> dict[str, Any]:
    """A job's parameters: ``function`` called with ``kwargs``, as JSON-ready data."""
    # sorted: the order of keyword arguments does not change a call
    arguments = dict(sorted(kwargs.items()))
    return {"function": function.__name__, "kwargs": encode_value(arguments, "kwargs")}


def call_and_encode(
    functions: Mapping[str, Callable[..., Any]],
    seed: int,
    function: str,
    kwargs: Any,
    types: Mapping[str, type],
) -> dict[str, Any]:
    """Run one job of a ``book-runs`` sweep: ``functions[function](**kwargs)``, its
    result encoded as the record's metrics.

    The call's own seed is among ``kwargs`` where the function takes one, as the
    chapter writes it; the sweep's ``seed`` numbers replicates, and one call has
    one, 0. Measured times go to ``timings_seconds`` (by their place in the
    result), a ``null`` left in their place.
    """
    if function not in functions:
        raise ValueError(
            f"function must be one of {sorted(functions)}; got {function!r}"
        )
    if seed != 0:
        raise ValueError(
            "a stored call is one run: its seed is in its arguments, and the sweep's "
            f"seed must be 0; got {seed}"
        )
    arguments = decode_value(kwargs, types, "kwargs")
    if not isinstance(arguments, dict):
        raise ValueError(f"kwargs must be an encoded dict of arguments; got {kwargs!r}")
    accepted = inspect.signature(functions[function]).parameters
    unknown = sorted(set(arguments) - set(accepted))
    if unknown:
        raise ValueError(f"{function} takes no argument(s) {unknown}")
    tree = encode_value(functions[function](**arguments))
    timings = {}
    for node, key, path in list(_timing_nodes(tree)):
        timings[_path_text(path)] = node[key]
        node[key] = None
    return {"result": tree, "timings_seconds": timings}


def stored_result(
    records: Iterable[Mapping[str, Any]],
    function: Callable[..., Any],
    types: Mapping[str, type],
    **kwargs: Any,
) -> Any:
    """What ``function(**kwargs)`` returned when its sweep ran it, from the record
    whose parameters are this call; its measured times put back.
    """
    wanted = book_call(function, **kwargs)
    found = [r for r in records if r["params"] == wanted]
    if len(found) != 1:
        raise LookupError(
            f"{len(found)} records hold the call {function.__name__}"
            f"({', '.join(sorted(kwargs))}) with these arguments; the chapter's "
            "book-runs sweep (chapter_code/experiments.py) must define it once"
        )
    metrics = found[0]["metrics"]
    tree = copy.deepcopy(metrics["result"])
    timings = dict(metrics.get("timings_seconds", {}))
    for node, key, path in list(_timing_nodes(tree)):
        node[key] = timings.pop(_path_text(path), None)
    if timings:
        name = function.__name__
        raise ValueError(
            f"{name}: timings with no place in its result: {sorted(timings)}"
        )
    return decode_value(tree, types, f"{function.__name__}'s result")
