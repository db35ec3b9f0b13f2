"""How the book states that two computations agree: as a bound, not as rounding noise.

Two float32 computations of the same quantity in different orders (a loop by
hand and PyTorch's fused kernel) differ in their last bits. The size of that
difference is rounding, not a property of either computation, and its digits
move with the kernels a CPU runs. A page therefore reports the agreement as a
bound the difference stays under (asserted), never as the difference's digits.

Pages: every page that checks a hand-written computation against PyTorch.
"""

from __future__ import annotations

import math

import torch


def max_abs_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    """max |a - b| over all entries (shapes must match exactly)."""
    if a.shape != b.shape:
        raise ValueError(
            f"a and b must have the same shape; got {tuple(a.shape)} and "
            f"{tuple(b.shape)}"
        )
    return (a - b).abs().max().item() if a.numel() else 0.0


def within(diff: float, tol: float) -> str:
    """Assert that ``diff`` (a max |difference|) is at most ``tol``; return the bound as
    text, e.g. ``1e-6``.

    ``tol`` must be a power of ten, so the text is exact.
    """
    if not tol > 0 or not math.isclose(10 ** round(math.log10(tol)), tol, rel_tol=1e-9):
        raise ValueError(
            f"tol must be a positive power of ten such as 1e-6; got {tol!r}"
        )
    if not (diff >= 0) or math.isinf(diff):
        raise ValueError(f"diff must be a finite number >= 0; got {diff!r}")
    if diff > tol:
        raise AssertionError(
            f"the two computations differ by {diff:.3g}, more than the stated bound "
            f"{tol:g}"
        )
    return f"1e{round(math.log10(tol))}"
