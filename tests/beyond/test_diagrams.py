"""Tests for beyond.diagrams: the spans of the doubling scan, checked against the scan
itself, and the drawing."""

from __future__ import annotations

import matplotlib
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from chapter_code.beyond.diagrams import draw_doubling_scan, scan_spans
from chapter_code.beyond.linear_scan import scan_rounds

matplotlib.use("Agg")


@given(st.integers(min_value=1, max_value=70))
def test_spans_follow_the_invariant_and_end_complete(length: int) -> None:
    rows = scan_spans(length)
    assert len(rows) == scan_rounds(length) + 1
    for r, spans in enumerate(rows):
        d = 2**r  # after round r, each position covers up to 2^r steps
        assert spans == [(max(1, t - d + 1), t) for t in range(1, length + 1)]
    assert all(first == 1 for first, _ in rows[-1])


def test_spans_match_the_scan_on_indicator_steps() -> None:
    # a_t = 1 everywhere and b_t = 2^t: after a round, b at position t is the sum over
    # the steps it holds
    length = 11
    spans = scan_spans(length)[-1]
    b = torch.tensor([2.0**t for t in range(1, length + 1)], dtype=torch.float64)
    cum = torch.cumsum(b, 0)
    assert [sum(2.0**s for s in range(f, t + 1)) for f, t in spans] == cum.tolist()


def test_drawing_has_one_arrow_per_combine() -> None:
    fig = draw_doubling_scan(8)
    arrows = [
        p
        for p in fig.axes[0].patches
        if p.get_arrowstyle().__class__.__name__ == "CurveFilledB"
    ]
    assert len(arrows) == (8 - 1) + (8 - 2) + (8 - 4)
    with pytest.raises(ValueError, match="length"):
        draw_doubling_scan(1)
