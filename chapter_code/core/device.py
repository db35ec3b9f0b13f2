"""The build's device, from ``BOOK_DEVICE``: the one choice a job or a chapter reads.

Its own module, apart from :mod:`chapter_code.core.runtime`, so that a sweep's job
that puts its model on the device (:mod:`chapter_code.depth.word_lm`) is tied to this
short file and not to the whole runtime (a record is tied to the source of what its
job imports). :mod:`chapter_code.core.runtime` re-exports both names, and is still
what pins the numerics before torch is first imported.

Pages: none (the build's machinery).
"""

from __future__ import annotations

import os
import re

import torch

from chapter_code.core.machine import SettingError

_CUDA_NAME = re.compile(r"cuda(:\d+)?")


def pick_device(requested: str | None = None) -> torch.device:
    """Return the build's device: ``requested``, else ``$BOOK_DEVICE``, else CUDA if
    present, else CPU.
    """
    name = requested if requested is not None else os.environ.get("BOOK_DEVICE", "")
    name = name.strip().lower()
    if not name:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    if _CUDA_NAME.fullmatch(name):
        if not torch.cuda.is_available():
            raise SettingError(
                f"BOOK_DEVICE={name!r} asks for CUDA, but this PyTorch build sees no "
                "CUDA device; unset BOOK_DEVICE or set it to 'cpu'"
            )
        return torch.device(name)
    raise SettingError(f"BOOK_DEVICE must be 'cpu', 'cuda' or 'cuda:N'; got {name!r}")


def resolve_device(device: torch.device | str | None = None) -> torch.device:
    """``device`` as a ``torch.device``; ``None`` means the build's device
    (:func:`pick_device`: ``BOOK_DEVICE``, else CUDA if present, else CPU).

    Every trainer, evaluator and sampler that makes its own model takes a
    ``device`` argument and passes it here; one that is handed a model uses the
    model's own device instead.
    """
    return pick_device() if device is None else torch.device(device)


def model_device(model: torch.nn.Module) -> torch.device:
    """The device of ``model``'s parameters: where its inputs must be (the CPU for a
    model that has none).
    """
    first = next(iter(model.parameters()), None)
    return torch.device("cpu") if first is None else first.device
