"""The one codec of the book's records: a call's arguments and whole result as plain
JSON, and back.

A stored call (:mod:`bookbuild.runs.calls`) keeps what a taught function returned in
a sweep record: numbers, strings, lists, tuples, dicts, dataclasses, tensors, and
the PyTorch modules a function builds. :func:`encode_value` writes each as
JSON-ready data; a tensor as base64 of its little-endian bytes with its dtype,
shape and SHA-256, a dataclass by its class name and fields, a module by its class
name, the arguments it was constructed with (seen by :func:`constructions`) and its
weights. :func:`decode_value` gives the value back, refusing a tensor whose bytes
no longer match their hash; the classes it may build are the ones the called
function reaches (``types``), so no module path is stored and a moved module keeps
its records. Measured times in a result (:data:`TIMINGS`) are kept apart
(``timings_seconds``), since no re-run reproduces them.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import dataclasses
import functools
import hashlib
import inspect
import math
import weakref
from collections.abc import Iterable, Iterator, Mapping
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
    if isinstance(value, torch.nn.Module):
        return _encode_module(value, where)
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
        f"{where}: a record holds numbers, strings, lists, tuples, dicts, dataclasses, "
        f"tensors and PyTorch modules; got {type(value).__name__}"
    )


def decode_value(data: Any, types: Mapping[str, type], where: str = "result") -> Any:
    """The value :func:`encode_value` wrote; ``types`` names the classes (dataclasses
    and modules) it may build.
    """
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
    if kind == "module":
        return _decode_module(data, types, where)
    if kind == "dataclass":
        cls = _class(data, types, where)
        fields = {
            k: decode_value(v, types, f"{where}.{k}") for k, v in data["fields"].items()
        }
        return cls(**fields)
    raise ValueError(f"{where}: unknown stored value kind {kind!r}")


def from_canonical(value: Any, types: Mapping[str, type], where: str = "params") -> Any:
    """A job's parameters as :func:`bookbuild.runs.memo.canonical` wrote them, its
    dataclasses built again (``{"__dataclass__": name, **fields}``) from ``types``, the
    classes the job reaches: how a sweep's job gets its arguments back.
    """
    if isinstance(value, list):
        return [from_canonical(v, types, f"{where}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, dict):
        return value
    fields = {
        k: from_canonical(v, types, f"{where}.{k}")
        for k, v in value.items()
        if k != "__dataclass__"
    }
    if "__dataclass__" not in value:
        return fields
    return _class({"type": value["__dataclass__"]}, types, where)(**fields)


def _class(data: Mapping[str, Any], types: Mapping[str, type], where: str) -> type:
    cls = types.get(data["type"])
    if cls is None:
        raise ValueError(
            f"{where}: a record holds a {data['type']}, which is not among the classes "
            f"the called function reaches ({', '.join(sorted(types)) or 'none'})"
        )
    return cls


# ---------------------------------------------------------------- modules

#: the arguments each module built inside :func:`constructions` was constructed with
_CONSTRUCTED: weakref.WeakKeyDictionary[torch.nn.Module, dict[str, Any]] = (
    weakref.WeakKeyDictionary()
)


def _noting(cls: type, init: Any) -> Any:
    signature = inspect.signature(init)
    if any(p.kind is p.VAR_POSITIONAL for p in signature.parameters.values()):
        # cannot be rebuilt by keyword: such a module is refused when encoded
        return init

    @functools.wraps(init)
    def noted(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        if type(self) is cls:  # the class built, not a base class's __init__ it calls
            bound = signature.bind(self, *args, **kwargs)
            bound.apply_defaults()
            arguments = dict(list(bound.arguments.items())[1:])
            extra = [
                n for n, p in signature.parameters.items() if p.kind is p.VAR_KEYWORD
            ]
            for name in extra:
                arguments.update(arguments.pop(name, {}))
            _CONSTRUCTED[self] = arguments

    return noted


@contextlib.contextmanager
def constructions(classes: Iterable[type]) -> Iterator[None]:
    """While open, note the arguments every instance of ``classes`` (PyTorch module
    classes) is constructed with, so that :func:`encode_value` can write the module
    as a constructor call and its weights.
    """
    patched = []
    for cls in classes:
        if (
            isinstance(cls, type)
            and issubclass(cls, torch.nn.Module)
            and "__init__" in vars(cls)
        ):
            patched.append((cls, cls.__init__))
            cls.__init__ = _noting(cls, cls.__init__)
    try:
        yield
    finally:
        for cls, init in reversed(patched):
            cls.__init__ = init


def _encode_module(module: torch.nn.Module, where: str) -> dict[str, Any]:
    arguments = _CONSTRUCTED.get(module)
    if arguments is None:
        raise TypeError(
            f"{where}: a {type(module).__name__} can be stored only when it was built "
            "inside the stored call, by a class the called function reaches, whose "
            "constructor takes its arguments by name"
        )
    state = {k: v for k, v in module.state_dict().items()}
    return {
        TAG: "module",
        "type": type(module).__qualname__,
        "init": encode_value(arguments, f"{where} (constructor)"),
        "state": encode_value(state, f"{where} (weights)"),
        "training": module.training,
    }


def _decode_module(
    data: Mapping[str, Any], types: Mapping[str, type], where: str
) -> torch.nn.Module:
    cls = _class(data, types, where)
    arguments = decode_value(data["init"], types, f"{where} (constructor)")
    state = decode_value(data["state"], types, f"{where} (weights)")
    # the initial draw is overwritten: keep the seed's stream
    with torch.random.fork_rng(devices=[]):
        module = cls(**arguments)
    module.load_state_dict(state)
    module.train(data["training"])
    _CONSTRUCTED[module] = arguments
    return module


# ---------------------------------------------------------------- measured times


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


def split_timings(tree: Any) -> tuple[Any, dict[str, Any]]:
    """An encoded result with its measured times (:data:`TIMINGS`) taken out (``None``
    in their place), and the times by their place in the result.
    """
    timings = {}
    for node, key, path in list(_timing_nodes(tree)):
        timings[_path_text(path)] = node[key]
        node[key] = None
    return tree, timings


def join_timings(tree: Any, timings: Mapping[str, Any], where: str) -> Any:
    """The encoded result with its measured times put back (:func:`split_timings`)."""
    timings = dict(timings)
    for node, key, path in list(_timing_nodes(tree)):
        node[key] = timings.pop(_path_text(path), None)
    if timings:
        raise ValueError(
            f"{where}: timings with no place in its result: {sorted(timings)}"
        )
    return tree


# ---------------------------------------------------------------- one stored call

#: arguments that choose where a call computes, not what: not part of a stored call
IGNORED = frozenset({"device"})


def job(function: Any, **kwargs: Any) -> dict[str, Any]:
    """A call sweep's job: ``function`` called with ``kwargs``, as JSON-ready
    parameters.

    The device is left out (a record set is made per device), the arguments sorted
    (their order does not change a call), and the function named without its module,
    so that a moved module keeps its records.
    """
    arguments = {k: v for k, v in sorted(kwargs.items()) if k not in IGNORED}
    return {"function": function.__name__, "kwargs": encode_value(arguments, "kwargs")}


@functools.cache
def classes(function: str) -> dict[str, type]:
    """The dataclasses and PyTorch module classes defined in the modules that
    ``module:qualname`` reaches (:func:`bookbuild.runs.keys.reached`), by name: what a
    record of its calls may build. A name two of them share is left out.
    """
    import importlib

    from bookbuild.runs import keys

    module = importlib.import_module(function.partition(":")[0])
    found = keys.reached(function, keys.package_root(module) or keys.ROOT)
    out: dict[str, type] = {}
    shared: set[str] = set()
    for name in found.modules:
        for obj in vars(importlib.import_module(name)).values():
            if not isinstance(obj, type) or obj.__module__ != name:
                continue
            if not (dataclasses.is_dataclass(obj) or issubclass(obj, torch.nn.Module)):
                continue
            if out.get(obj.__qualname__, obj) is not obj:
                shared.add(obj.__qualname__)
            out[obj.__qualname__] = obj
    return {k: v for k, v in out.items() if k not in shared}


def resolve(function: str) -> Any:
    """The function ``module:qualname`` names."""
    import importlib

    module, _, qualname = function.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def run_call(function: str, seed: int, params: Mapping[str, Any]) -> dict[str, Any]:
    """Run one job of a call sweep: the call :func:`job` wrote, its whole result
    encoded as the record's metrics, measured times apart (``timings_seconds``).

    A stored call is one run: its own seed is among its arguments, and the sweep's
    seed must be 0.
    """
    fn = resolve(function)
    if seed != 0:
        raise ValueError(
            "a stored call is one run: its seed is in its arguments, and the sweep's "
            f"seed must be 0; got {seed}"
        )
    if params.get("function") != fn.__name__ or set(params) != {"function", "kwargs"}:
        raise ValueError(
            f"a job of {function} is {{'function': {fn.__name__!r}, 'kwargs': ...}} "
            f"(written by codec.job); got {dict(params)!r}"
        )
    types = classes(function)
    arguments = decode_value(params["kwargs"], types, "kwargs")
    if not isinstance(arguments, dict):
        raise ValueError(
            f"kwargs must be an encoded dict of arguments; got {arguments!r}"
        )
    unknown = sorted(set(arguments) - set(inspect.signature(fn).parameters))
    if unknown:
        raise ValueError(f"{fn.__name__} takes no argument(s) {unknown}")
    with constructions(types.values()):
        result = fn(**arguments)
        tree = encode_value(result)
    tree, timings = split_timings(tree)
    return {"result": tree, "timings_seconds": timings}


def stored_result(record: Mapping[str, Any], function: str) -> Any:
    """What the call of ``record`` returned when its sweep ran it, its measured times
    put back.
    """
    where = f"{record.get('job', 'record')}.seed{record.get('seed', '?')}"
    metrics = record["metrics"]
    tree = join_timings(
        copy.deepcopy(metrics["result"]), metrics.get("timings_seconds", {}), where
    )
    return decode_value(tree, classes(function), f"{where}'s result")
