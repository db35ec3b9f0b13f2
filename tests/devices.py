"""A device audit for the taught code, on a machine without a GPU (issue 55).

:class:`DeviceAudit` is a ``TorchFunctionMode`` that runs a trainer with its model
on PyTorch's ``meta`` device (tensors with shapes and no numbers) and records every
operation whose tensor arguments sit on more than one device: the call a GPU would
refuse ("Expected all tensors to be on the same device"). It lets through what a
GPU lets through: a 0-dim CPU tensor beside a device tensor, a device tensor
indexed by a CPU index, and a packed sequence's lengths on the CPU (where PyTorch
requires them). Reading a number out of a meta tensor (``.item()``,
``float()``, ``.tolist()``, ``.cpu()``) has no number to read, so the audit hands
back ones of the right shape on the CPU (``False`` for a truth value), and the
trainer goes on to its end.

Used by ``tests/test_devices.py``.
"""

from __future__ import annotations

import dataclasses
import traceback
from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.utils import _pytree as pytree

META = torch.device("meta")

#: Operations that move or copy between devices: mixed arguments are their job.
_TRANSFERS = {
    "to",
    "cpu",
    "cuda",
    "copy_",
    "type",
    "__get__",
    "__set__",
    "_has_compatible_shallow_copy_type",  # Module.to() asks before it moves
}
#: Indexing a device tensor with CPU indices is allowed on a GPU.
_INDEXING = {"__getitem__", "__setitem__", "index_put_", "index_put"}
#: Packed sequences: PyTorch wants their lengths (or batch sizes), the second
#: argument, as a 1-D int64 tensor on the CPU, whatever the device of the data.
_PACKED = {
    "_pack_padded_sequence",
    "_pad_packed_sequence",
    "gru",
    "lstm",
    "rnn_tanh",
    "rnn_relu",
}
#: Reading numbers out of a tensor.
_READS = {"item", "tolist", "__bool__", "__float__", "__int__", "__index__", "numpy"}


def _cpu_lengths(t: Any) -> bool:
    return (
        isinstance(t, torch.Tensor)
        and t.device.type == "cpu"
        and t.dtype == torch.int64
        and t.dim() == 1
    )


def _name(func: Any) -> str:
    return getattr(func, "__name__", str(func))


def _ones_like(t: torch.Tensor, device: torch.device, dtype: torch.dtype | None = None):
    return torch.ones(t.shape, dtype=dtype or t.dtype, device=device)


@dataclasses.dataclass
class Mixed:
    """One operation called with tensors on several devices."""

    op: str
    devices: tuple[str, ...]
    where: str  # the innermost frame in chapter_code


def _where() -> str:
    frames = [f for f in traceback.extract_stack() if "chapter_code" in f.filename]
    if not frames:
        return "(outside chapter_code)"
    f = frames[-1]
    return f"{f.filename.split('chapter_code/')[-1]}:{f.lineno} {f.line}"


class DeviceAudit(TorchFunctionMode):
    """Record every operation whose tensors are on more than one device."""

    def __init__(self) -> None:
        super().__init__()
        self.mixed: list[Mixed] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        kwargs = kwargs or {}
        name = _name(func)
        tensors = [
            t for t in pytree.tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)
        ]
        on_meta = any(t.device == META for t in tensors)
        if on_meta and name in _READS:
            t = args[0]
            # ones for numbers; False for a truth value, so that a check such as
            # ``if (targets < 0).any(): raise`` passes, as it does on real data
            fake = _ones_like(t, torch.device("cpu"))
            if t.dtype == torch.bool or name == "__bool__":
                fake = torch.zeros(t.shape, dtype=torch.bool)
            return getattr(fake, name)() if name != "numpy" else fake.numpy()
        if on_meta and name in ("to", "cpu") and args and args[0].device == META:
            if name == "cpu":
                return _ones_like(args[0], torch.device("cpu"))
            to_kwargs = {k: v for k, v in kwargs.items() if k != "copy"}
            device, dtype, *_ = torch._C._nn._parse_to(*args[1:], **to_kwargs)
            if device is not None and device != META:
                return _ones_like(args[0], device, dtype)
        if name not in _TRANSFERS:
            if name in _PACKED and len(args) > 1 and _cpu_lengths(args[1]):
                tensors = [t for t in tensors if t is not args[1]]
            devices = {
                t.device.type
                for t in tensors
                if t.dim() > 0 or t.device.type != "cpu"  # a CPU scalar may go along
            }
            if name in _INDEXING and args and isinstance(args[0], torch.Tensor):
                # a device tensor may be indexed by CPU indices; everything else
                # (values, and indices into a CPU tensor) must be on its device
                indexed = args[0].device
                devices = {indexed.type} | {
                    t.device.type
                    for t in tensors[1:]
                    if not (
                        t.device.type == "cpu"
                        and not t.is_floating_point()
                        and indexed.type != "cpu"
                    )
                }
            if len(devices) > 1:
                self.mixed.append(Mixed(name, tuple(sorted(devices)), _where()))
                # go on as a GPU cannot, so the audit finds every such call at once
                args, kwargs = pytree.tree_map(
                    lambda t: t.to(META) if isinstance(t, torch.Tensor) else t,
                    (args, kwargs),
                )
        return func(*args, **kwargs)


def off_device_tensors(result: Any, path: str = "result") -> list[str]:
    """Paths of the tensors in ``result`` that are not on the CPU (a module's own
    parameters excepted: a trained model may stay on its device).
    """
    found: list[str] = []
    if isinstance(result, torch.nn.Module):
        return found
    if isinstance(result, torch.Tensor):
        if result.device.type != "cpu":
            found.append(f"{path} on {result.device}")
    elif dataclasses.is_dataclass(result) and not isinstance(result, type):
        for f in dataclasses.fields(result):
            found += off_device_tensors(getattr(result, f.name), f"{path}.{f.name}")
    elif isinstance(result, dict):
        for k, v in result.items():
            found += off_device_tensors(v, f"{path}[{k!r}]")
    elif isinstance(result, (list, tuple)):
        for i, v in enumerate(result):
            found += off_device_tensors(v, f"{path}[{i}]")
    return found
