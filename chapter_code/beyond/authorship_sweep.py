"""The authorship classifier as the job of an experiment sweep: one run reduced to
plain metrics, and those metrics read back in the shape the chapter uses.

:func:`chapter_code.beyond.authorship.classify_shakespeare_milton` returns
accuracies keyed by passage length and the trained weights; a sweep's record is
JSON, so :func:`authorship_metrics` keeps the numbers only, as lists in the order
of the configuration's ``lengths`` and ``orders``, and :func:`from_metrics` turns
a record's metrics back into the dictionaries the page reads (its table, figure
and checks). The chapter reads the run from the ``authorship`` sweep's records
(``bookbuild.runs.registry``), made ahead of the build.

Pages: "Beyond the single carried state" (many-to-one classification).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from chapter_code.beyond.authorship import AuthorshipConfig, classify_shakespeare_milton


def config_from_dict(params: dict[str, Any]) -> AuthorshipConfig:
    """The :class:`AuthorshipConfig` that ``dataclasses.asdict`` turned into ``params``
    (its tuples may come back from JSON as lists)."""
    fields = {f.name for f in dataclasses.fields(AuthorshipConfig)}
    unknown = set(params) - fields
    if unknown:
        raise ValueError(
            f"config has unknown fields {sorted(unknown)}; expected {sorted(fields)}"
        )
    return AuthorshipConfig(
        **{k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}
    )


def authorship_metrics(seed: int, config: dict[str, Any]) -> dict[str, Any]:
    """Train and test the classifier and its n-gram baseline with ``config`` (fields of
    :class:`AuthorshipConfig`) and ``seed``; numbers only.
    """
    cfg = config_from_dict(config)
    result = classify_shakespeare_milton(seed, cfg)
    return {
        "authors": list(result["authors"]),
        "lengths": list(cfg.lengths),
        "lstm": [result["lstm"][n] for n in cfg.lengths],
        "ngram": [result["ngram"][n] for n in cfg.lengths],
        "ngram_order": result["ngram_order"],
        "orders": list(cfg.orders),
        "ngram_valid": [result["ngram_valid"][n] for n in cfg.orders],
        "train_chars": result["train_chars"],
        "losses": result["losses"],
        # a measured time (`_seconds`): a re-run's check does not compare it
        "train_seconds": result["seconds"],
    }


def from_metrics(metrics: dict[str, Any]) -> dict[str, Any]:
    """A record's metrics in the shape :func:`classify_shakespeare_milton` returns them
    (accuracies keyed by length, validation scores by order), without the weights."""
    lengths, orders = metrics["lengths"], metrics["orders"]
    for name, keys in [("lstm", lengths), ("ngram", lengths), ("ngram_valid", orders)]:
        if len(metrics[name]) != len(keys):
            raise ValueError(
                f"metrics[{name!r}] holds {len(metrics[name])} values for "
                f"{len(keys)} keys"
            )
    return {
        "authors": list(metrics["authors"]),
        "lstm": dict(zip(lengths, metrics["lstm"], strict=True)),
        "ngram": dict(zip(lengths, metrics["ngram"], strict=True)),
        "ngram_order": metrics["ngram_order"],
        "ngram_valid": dict(zip(orders, metrics["ngram_valid"], strict=True)),
        "train_chars": metrics["train_chars"],
        "losses": list(metrics["losses"]),
        "seconds": metrics["train_seconds"],
    }
