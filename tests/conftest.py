"""Shared test set-up: pin the CPU numerics before any test module imports torch.

Importing :mod:`chapter_code.core.runtime` sets the pins (see its docstring) in this
process's environment, so each pytest-xdist worker, and every process a test
starts, computes on the same kernels as the book's chapters.
"""

import chapter_code.core.runtime  # noqa: F401  (imported for its side effect: the CPU pins)
