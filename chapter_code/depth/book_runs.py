"""The trainings of "Depth, direction and scale" as sweep records: the job of the
``depth-book-runs`` sweep.

The chapter trains stacks of one to four layers (plain and residual), two
character models that read one or both ways (the trap) and two taggers. They run
ahead of the build (``make experiments SWEEP=depth-book-runs CONFIG=book-runs``),
one record per call holding the call's whole result, weights included
(:mod:`chapter_code.core.stored_calls`); the chapter reads each one back with
:func:`stored`, by the same arguments it would have passed.

Pages: "Depth, direction and scale".
"""

from __future__ import annotations

from typing import Any

from chapter_code.core.stored_calls import call_and_encode, stored_result
from chapter_code.depth.layers import TrapConfig, train_directional, train_tagger
from chapter_code.depth.residual import depth_run
from chapter_code.lm.char_lm import TrainConfig

#: the calls a record may hold
FUNCTIONS = {f.__name__: f for f in (depth_run, train_directional, train_tagger)}
#: the dataclasses their arguments and results may hold
TYPES = {t.__qualname__: t for t in (TrapConfig, TrainConfig)}


def depth_book_run(seed: int, function: str, kwargs: Any) -> dict[str, Any]:
    """One job: ``function(**kwargs)``, its whole result as the record's metrics."""
    return call_and_encode(FUNCTIONS, seed, function, kwargs, TYPES)


def stored(records: Any, function: Any, **kwargs: Any) -> Any:
    """What ``function(**kwargs)`` returned, from ``runtime.load_sweep(
    "depth-book-runs", ...)``'s records.
    """
    return stored_result(records.records, function, TYPES, **kwargs)
