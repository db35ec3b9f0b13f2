"""Chapter 4's trained character models as sweep records, weights included: the job of
the ``char-lm-book`` sweep.

The chapter "Recurrent language models" trains three models (the prose LSTM and
the Shakespeare RNN and LSTM at the CPU recipe) and "Generating text" samples
from them. Training them takes most of Chapter 4's execution, so they run ahead
of the build as one sweep (``make experiments SWEEP=char-lm-book
CONFIG=book-runs``), and both chapters read the records back through
``runtime.load_sweep``, which refuses a record made by other code, parameters or
data. One call of :func:`book_char_lm` is one call of
:func:`chapter_code.lm.char_models.train_char_lm`, its result kept whole: the
weights travel as base64 text of their little-endian bytes, each tensor with its
shape and SHA-256, and :func:`result_from_record` turns a record back into what
``train_char_lm`` returned, refusing weights whose bytes no longer match their
hash.

This module, not :mod:`chapter_code.lm.char_lm_sweep`, holds the job, so that the
records of the full-size sweep (``char-lm-workshop``), which are tied to that
module's source, stay fresh.

Pages: "Recurrent language models" and "Generating text" (the models they read).
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
from typing import Any

import numpy as np
import torch

from chapter_code.lm.char_lm_sweep import recipe_from_dict
from chapter_code.lm.char_models import train_char_lm

#: the tensor types a record may hold, and their little-endian NumPy types
DTYPES = {"float32": "<f4", "float64": "<f8", "int64": "<i8"}


def encode_tensor(tensor: torch.Tensor) -> dict[str, Any]:
    """``tensor`` as plain data: dtype, shape, SHA-256 of its bytes, and the bytes
    in base64.
    """
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


def decode_tensor(data: dict[str, Any], name: str = "tensor") -> torch.Tensor:
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


def book_char_lm(seed: int, corpus: str, recipe: dict[str, Any]) -> dict[str, Any]:
    """Train ``recipe`` (with ``seed``) on ``corpus`` as the chapter does; the whole
    result, weights encoded, as a record's metrics.
    """
    model_recipe = dataclasses.replace(recipe_from_dict(recipe), seed=seed)
    result = train_char_lm(corpus, model_recipe)
    weights = {k: encode_tensor(v) for k, v in result["state_dict"].items()}
    return {**result, "state_dict": weights}


def result_from_record(record: dict[str, Any]) -> dict[str, Any]:
    """What :func:`train_char_lm` returned, from a ``char-lm-book`` record (its
    weights checked against their hashes), ready for
    :func:`chapter_code.lm.char_models.load_char_lm`.
    """
    metrics = record["metrics"]
    where = f"{record.get('job', 'record')}.seed{record.get('seed', '?')}"
    state = {
        k: decode_tensor(v, f"{where}: {k}") for k, v in metrics["state_dict"].items()
    }
    history = [tuple(point) for point in metrics["history"]]
    return {**metrics, "state_dict": state, "history": history}


def book_results(records: Any) -> dict[str, dict[str, Any]]:
    """Job name -> decoded result, from ``runtime.load_sweep("char-lm-book", ...)``:
    one record per job.
    """
    by_job = records.by_job()
    several = sorted(job for job, rs in by_job.items() if len(rs) != 1)
    if several:
        raise ValueError(f"expected one record per job; {several} have more")
    return {job: result_from_record(rs[0]) for job, rs in by_job.items()}
