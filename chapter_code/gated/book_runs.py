"""The trainings of "Gated memory: LSTM and GRU" that the memory grid's records
cannot stand for, as sweep records: the job of the ``gated-book-runs`` sweep.

The grid's records (``memory-robustness``, ``book-grid``) keep no weights, and the
chapter replays two trained LSTMs (the forget-gate trace) and trains one more with a
learned initial state (an exercise). Those calls run ahead of the build (``make
experiments SWEEP=gated-book-runs CONFIG=book-runs``), one record per call holding
the run whole, weights included (:mod:`chapter_code.core.stored_calls`); :func:`stored`
gives back what :func:`~chapter_code.gated.memory_task.train_recall` returned: the
run, and its network rebuilt from the run's weights.

Pages: "Gated memory: LSTM and GRU".
"""

from __future__ import annotations

import functools
from typing import Any

from chapter_code.core.stored_calls import call_and_encode, stored_result
from chapter_code.gated.memory_task import (
    Contender,
    RecallConfig,
    RecallNet,
    RecallRun,
    train_recall,
)

#: the dataclasses the calls' arguments and results may hold
TYPES = {t.__qualname__: t for t in (Contender, RecallConfig, RecallRun)}


@functools.wraps(train_recall)
def _recall_run(**kwargs: Any) -> RecallRun:
    """:func:`train_recall`'s run, which holds the network's weights."""
    run, _ = train_recall(**kwargs)
    return run


#: the calls a record may hold
FUNCTIONS = {"train_recall": _recall_run}


def gated_book_run(seed: int, function: str, kwargs: Any) -> dict[str, Any]:
    """One job: ``function(**kwargs)``, its run as the record's metrics."""
    return call_and_encode(FUNCTIONS, seed, function, kwargs, TYPES)


def stored(records: Any, function: Any, **kwargs: Any) -> tuple[RecallRun, RecallNet]:
    """What ``train_recall(**kwargs)`` returned, from ``runtime.load_sweep(
    "gated-book-runs", ...)``'s records: the run, and its network with the run's
    weights.
    """
    if function is not train_recall:
        raise ValueError(f"this sweep holds calls of train_recall; got {function!r}")
    run = stored_result(records.records, function, TYPES, **kwargs)
    config = kwargs.get("config", RecallConfig())
    net = RecallNet(
        kwargs["contender"].cell,
        config.vocab,
        config.hidden_size,
        learn_h0=kwargs.get("learn_h0", False),
    )
    net.load_state_dict(run.state)
    return run, net
