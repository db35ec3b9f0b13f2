"""Wall time of a computation on this machine: each of a few repeats, or the best of
them, after a warm-up call.

The minimum over repeats is the least disturbed measurement on a shared
machine (other processes only ever add time). Timings are facts of one
machine at one moment: pages that print them mark those cells volatile, so the
build neither stores nor compares them.

Pages: "Recurrent language models" (the time of a training step), "Beyond the single
carried state" (nn.LSTM against sequence length, loop against scan).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from chapter_code.core.arguments import positive_ints


def times(fn: Callable[[], object], repeats: int = 5) -> list[float]:
    """Seconds taken by each of ``repeats`` calls of ``fn()``, in order, after one
    untimed warm-up call.
    """
    positive_ints(repeats=repeats)
    fn()
    taken = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        taken.append(time.perf_counter() - start)
    return taken


def best_time(fn: Callable[[], object], repeats: int = 5) -> float:
    """Seconds taken by the fastest of ``repeats`` calls of ``fn()``, after one untimed
    warm-up call.
    """
    return min(times(fn, repeats))
