"""The trainings of "Beyond the single carried state" as sweep records: the job of
the ``beyond-book-runs`` sweep.

The chapter trains two encoder-decoders on the reversal task (with and without
attention), two classifiers of Shakespeare against Milton from scratch and two
translators. They run ahead of the build (``make experiments
SWEEP=beyond-book-runs CONFIG=book-runs``), one record per call holding the call's
whole result, weights included (:mod:`chapter_code.core.stored_calls`); the chapter
reads each one back with :func:`stored`, by the same arguments it would have passed.

Pages: "Beyond the single carried state".
"""

from __future__ import annotations

from typing import Any

from chapter_code.beyond.scratch_classifier import (
    ScratchConfig,
    scratch_shakespeare_milton,
)
from chapter_code.beyond.seq2seq import ReversalConfig, train_reversal
from chapter_code.beyond.translator import TranslatorConfig, train_translator
from chapter_code.core.stored_calls import call_and_encode, stored_result

#: the calls a record may hold
FUNCTIONS = {
    f.__name__: f
    for f in (train_reversal, scratch_shakespeare_milton, train_translator)
}
#: the dataclasses their arguments and results may hold
TYPES = {t.__qualname__: t for t in (ReversalConfig, ScratchConfig, TranslatorConfig)}


def beyond_book_run(seed: int, function: str, kwargs: Any) -> dict[str, Any]:
    """One job: ``function(**kwargs)``, its whole result as the record's metrics."""
    return call_and_encode(FUNCTIONS, seed, function, kwargs, TYPES)


def stored(records: Any, function: Any, **kwargs: Any) -> Any:
    """What ``function(**kwargs)`` returned, from ``runtime.load_sweep(
    "beyond-book-runs", ...)``'s records.
    """
    return stored_result(records.records, function, TYPES, **kwargs)
