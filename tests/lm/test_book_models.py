"""Tests for chapter_code.lm.book_models: Chapter 4's models as sweep records, weights included.

The weights survive the trip through a record bit for bit (any shape, every accepted dtype), a damaged tensor is
named instead of loaded, a record read back is exactly what ``train_char_lm`` returned (the same weights, curve
and vocabulary, the same model outputs), and the sweep trains exactly the chapter's three recipes.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from bookbuild.runs import memo
from chapter_code.lm.book_models import (
    DTYPES,
    book_char_lm,
    book_results,
    decode_tensor,
    encode_tensor,
    result_from_record,
)
from chapter_code.lm.char_lm import TrainConfig
from chapter_code.lm.char_models import CPU, PROSE_LSTM, LMRecipe, corpus_file, load_char_lm, train_char_lm

TINY = LMRecipe("lstm", 8, TrainConfig(window=16, batch_size=4, steps=3, log_every=1), embedding_size=4)


@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(
        dtype=st.sampled_from([np.float32, np.float64, np.int64]),
        shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5),
    )
)
def test_a_tensor_survives_the_trip_through_plain_json_bit_for_bit(array: np.ndarray) -> None:
    tensor = torch.from_numpy(array.copy())
    data = json.loads(json.dumps(encode_tensor(tensor)))
    back = decode_tensor(data)
    assert back.dtype == tensor.dtype
    assert back.shape == tensor.shape
    assert back.numpy().tobytes() == tensor.numpy().tobytes()  # NaNs, signed zeros and all


def test_the_encoding_is_little_endian_bytes_with_their_hash() -> None:
    data = encode_tensor(torch.tensor([1.0, -2.0], dtype=torch.float32))
    assert base64.b64decode(data["base64"]) == np.array([1.0, -2.0], dtype="<f4").tobytes()
    assert data["shape"] == [2]
    assert data["dtype"] == "float32"
    assert len(data["sha256"]) == 64
    assert encode_tensor(torch.zeros(2, 3)[:, 1])["shape"] == [2]  # a strided view is copied contiguously
    assert set(DTYPES) == {"float32", "float64", "int64"}


def test_bad_tensors_are_named_not_loaded() -> None:
    good = encode_tensor(torch.arange(6, dtype=torch.float32).reshape(2, 3))
    raw = bytearray(base64.b64decode(good["base64"]))
    raw[0] ^= 1
    damaged = {**good, "base64": base64.b64encode(bytes(raw)).decode()}
    with pytest.raises(ValueError, match=r"w: its bytes are damaged .*re-run the sweep"):
        decode_tensor(damaged, "w")
    with pytest.raises(ValueError, match=r"^tensor: its bytes are damaged"):  # unnamed, it is "tensor"
        decode_tensor(damaged)
    # a character outside base64's alphabet is refused, not skipped (skipped, the bytes and their hash would match)
    with pytest.raises(ValueError, match="Non-base64 digit found|Only base64 data is allowed"):
        decode_tensor({**good, "base64": good["base64"][:4] + "!" + good["base64"][4:]})
    with pytest.raises(ValueError, match=r"6 values do not fill the shape \(4, 2\)"):
        decode_tensor({**good, "shape": [4, 2]})
    with pytest.raises(ValueError, match=r"dtype must be one of .*got 'float16'"):
        decode_tensor({**good, "dtype": "float16"})
    with pytest.raises(ValueError, match=r"needs \['sha256'\]"):
        decode_tensor({k: v for k, v in good.items() if k != "sha256"})
    with pytest.raises(ValueError, match=r"holds tensors of .*got float16"):
        encode_tensor(torch.zeros(2, dtype=torch.float16))


def _as_record(metrics: dict, job: str = "tiny") -> dict:
    """What load_sweep hands a chapter: the job's metrics after the record's JSON round trip."""
    return {"job": job, "seed": 2, "metrics": json.loads(json.dumps(memo.canonical(metrics, "metrics")))}


def test_a_record_read_back_is_exactly_what_train_char_lm_returned() -> None:
    direct = train_char_lm("shakespeare", dataclasses.replace(TINY, seed=2))
    record = _as_record(book_char_lm(seed=2, corpus="shakespeare", recipe=dataclasses.asdict(TINY)))
    back = result_from_record(record)
    assert back["recipe"] == dataclasses.asdict(dataclasses.replace(TINY, seed=2))
    assert back["chars"] == direct["chars"]
    assert back["corpus"] == "shakespeare"
    assert back["history"] == direct["history"]
    assert len(back["history"]) == 3
    assert back["state_dict"].keys() == direct["state_dict"].keys()
    for name, tensor in direct["state_dict"].items():
        assert torch.equal(back["state_dict"][name], tensor), name
    ids = torch.tensor([[1, 2, 3, 4]])
    (model_direct, _), (model_back, _) = load_char_lm(direct), load_char_lm(back)
    with torch.no_grad():
        assert torch.equal(model_direct(ids)[0], model_back(ids)[0])


def test_a_record_whose_weights_were_damaged_is_refused_with_its_job_named() -> None:
    record = _as_record(book_char_lm(seed=0, corpus="book-prose", recipe=dataclasses.asdict(TINY)), job="prose")
    weights = record["metrics"]["state_dict"]["readout.bias"]
    weights["base64"] = base64.b64encode(b"\0" * len(base64.b64decode(weights["base64"]))).decode()
    with pytest.raises(ValueError, match=r"prose\.seed2: readout\.bias: its bytes are damaged"):
        result_from_record(record)


def test_a_record_without_its_job_or_seed_is_still_named() -> None:
    record = _as_record(book_char_lm(seed=0, corpus="book-prose", recipe=dataclasses.asdict(TINY)))
    del record["job"], record["seed"]
    record["metrics"]["state_dict"]["readout.bias"]["sha256"] = "0" * 64
    with pytest.raises(ValueError, match=r"^record\.seed\?: readout\.bias: its bytes are damaged"):
        result_from_record(record)


def test_book_results_wants_one_record_per_job() -> None:
    metrics = book_char_lm(seed=0, corpus="book-prose", recipe=dataclasses.asdict(TINY))
    one = _as_record(metrics, "a")
    sweep = SimpleNamespace(by_job=lambda: {"a": [one]})
    assert list(book_results(sweep)) == ["a"]
    with pytest.raises(ValueError, match=r"one record per job; \['a'\] have more"):
        book_results(SimpleNamespace(by_job=lambda: {"a": [one, one]}))


def test_the_sweep_trains_the_chapters_three_recipes_on_their_corpora() -> None:
    from chapter_code.experiments import BOOK_CHAR_MODELS, SWEEPS

    sweep = SWEEPS["char-lm-book"]
    assert sweep.job is book_char_lm
    assert sweep.data == (corpus_file("shakespeare"), corpus_file("book-prose"))
    jobs = sweep.configs["book-runs"].jobs
    expected = {
        "prose-lstm": ("book-prose", PROSE_LSTM),
        "shakespeare-rnn": ("shakespeare", CPU["rnn"]),
        "shakespeare-lstm": ("shakespeare", CPU["lstm"]),
    }
    assert BOOK_CHAR_MODELS == expected
    assert {job: (p["corpus"], p["recipe"]) for job, p in jobs.items()} == {
        job: (corpus, dataclasses.asdict(recipe)) for job, (corpus, recipe) in expected.items()
    }
    assert sweep.configs["book-runs"].seeds == (0,)
    (smoke,) = sweep.configs["smoke"].jobs.values()
    assert smoke["recipe"]["train"]["steps"] <= 5
    assert smoke["recipe"]["hidden_size"] <= 16
