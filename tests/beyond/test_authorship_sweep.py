"""Tests for chapter_code.beyond.authorship_sweep: the classifier's run as plain metrics, and back."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import replace

import pytest

from bookbuild.runs import memo, sweeps
from chapter_code.beyond import authorship, authorship_sweep
from chapter_code.beyond.authorship import AuthorshipConfig
from chapter_code.beyond.authorship_sweep import authorship_metrics, config_from_dict, from_metrics
from tests.beyond.test_authorship import TINY, _authors

SHORT = replace(TINY, steps=2, n_test=8, lengths=(8, 16), orders=(3, 1, 2))


def test_a_config_survives_json_and_comes_back_equal() -> None:
    for config in [AuthorshipConfig(), SHORT]:
        params = json.loads(json.dumps(dataclasses.asdict(config)))  # tuples come back as lists
        assert isinstance(params["lengths"], list)
        assert config_from_dict(params) == config


def test_an_unknown_config_field_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"unknown fields \['widht'\]"):
        config_from_dict({**dataclasses.asdict(SHORT), "widht": 3})


@pytest.fixture
def both_authors(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _authors()
    monkeypatch.setattr(authorship, "shakespeare_text", lambda: texts["first"])
    monkeypatch.setattr(authorship, "milton_text", lambda: texts["second"])


@pytest.mark.usefixtures("both_authors")
def test_metrics_are_the_run_in_the_orders_of_the_config_and_json_plain() -> None:
    metrics = authorship_metrics(seed=2, config=dataclasses.asdict(SHORT))
    result = authorship.classify_shakespeare_milton(seed=2, config=SHORT)
    assert metrics["lengths"] == [8, 16]
    assert metrics["orders"] == [3, 1, 2]
    assert metrics["lstm"] == [result["lstm"][8], result["lstm"][16]]
    assert metrics["ngram"] == [result["ngram"][8], result["ngram"][16]]
    assert metrics["ngram_valid"] == [result["ngram_valid"][n] for n in (3, 1, 2)]
    for key in ["authors", "ngram_order", "train_chars", "losses"]:
        assert metrics[key] == result[key], key
    assert "state" not in metrics  # no weights in a record
    assert memo.canonical(metrics, "metrics") == json.loads(json.dumps(metrics))


@pytest.mark.usefixtures("both_authors")
def test_from_metrics_gives_back_what_the_run_returns_without_its_weights() -> None:
    result = authorship.classify_shakespeare_milton(seed=1, config=SHORT)
    stored = json.loads(json.dumps(authorship_metrics(seed=1, config=dataclasses.asdict(SHORT))))
    back = from_metrics(stored)
    for key in ["authors", "lstm", "ngram", "ngram_order", "ngram_valid", "train_chars", "losses"]:
        assert back[key] == result[key], key
    assert list(back["lstm"]) == [8, 16]  # keyed by int length again, in order
    assert set(back) == set(result) - {"state"}


def test_from_metrics_refuses_lists_that_do_not_match_their_keys() -> None:
    metrics = {"authors": ["a", "b"], "lengths": [8, 16], "orders": [1, 2], "lstm": [0.5], "ngram": [0.5, 0.6],
               "ngram_order": 1, "ngram_valid": [0.5, 0.5], "train_chars": 10, "losses": [], "train_seconds": 1.0}
    with pytest.raises(ValueError, match=r"metrics\['lstm'\] holds 1 values for 2 keys"):
        from_metrics(metrics)
    with pytest.raises(ValueError, match=r"metrics\['ngram_valid'\] holds 1 values for 2 keys"):
        from_metrics({**metrics, "lstm": [0.5, 0.6], "ngram_valid": [0.5]})


def test_the_job_calls_the_chapters_function(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = {}

    def fake(seed: int, config: AuthorshipConfig) -> dict:
        seen.update(seed=seed, config=config)
        return {"authors": ["S", "M"], "lstm": {8: 0.75, 16: 1.0}, "ngram": {8: 0.5, 16: 0.25}, "ngram_order": 2,
                "ngram_valid": {3: 0.1, 1: 0.2, 2: 0.3}, "train_chars": 40, "losses": [2.0, 1.5], "seconds": 3.5,
                "state": {}}

    monkeypatch.setattr(authorship_sweep, "classify_shakespeare_milton", fake)
    metrics = authorship_metrics(seed=7, config=dataclasses.asdict(SHORT))
    assert seen == {"seed": 7, "config": SHORT}
    assert metrics == {"authors": ["S", "M"], "lengths": [8, 16], "lstm": [0.75, 1.0], "ngram": [0.5, 0.25],
                       "ngram_order": 2, "orders": [3, 1, 2], "ngram_valid": [0.1, 0.2, 0.3], "train_chars": 40,
                       "losses": [2.0, 1.5], "train_seconds": 3.5}
    assert sweeps.is_timing("train_seconds")  # the spot check does not compare it
    assert from_metrics(metrics)["seconds"] == 3.5
