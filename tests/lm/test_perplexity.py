"""Tests for chapter_code.lm.perplexity: loss, perplexity and bits per character."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from chapter_code.lm.perplexity import cross_entropy_reference, lm_loss_and_ppl


def test_agrees_with_cross_entropy_and_keeps_the_graph() -> None:
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(3, 7, 11, generator=g, dtype=torch.float64, requires_grad=True)
    targets = torch.randint(0, 11, (3, 7), generator=g)
    loss, ppl, bpc = lm_loss_and_ppl(logits, targets)
    reference = cross_entropy_reference(logits, targets)
    torch.testing.assert_close(loss, reference, rtol=0, atol=1e-12)
    assert ppl == pytest.approx(math.exp(reference.item()), rel=1e-12)
    assert bpc == pytest.approx(reference.item() / math.log(2), rel=1e-12)
    (grad,) = torch.autograd.grad(loss, logits)
    (ref_grad,) = torch.autograd.grad(cross_entropy_reference(logits, targets), logits)
    torch.testing.assert_close(grad, ref_grad, rtol=0, atol=1e-12)


@given(vocab=st.integers(2, 80), positions=st.integers(1, 20), value=st.floats(-5, 5))
@settings(max_examples=30, deadline=None)
def test_equal_logits_give_the_vocabulary_size_as_perplexity(
    vocab: int, positions: int, value: float
) -> None:
    logits = torch.full((1, positions, vocab), value, dtype=torch.float64)
    targets = torch.zeros(1, positions, dtype=torch.long)
    loss, ppl, bpc = lm_loss_and_ppl(logits, targets)
    assert ppl == pytest.approx(vocab, rel=1e-9)
    assert bpc == pytest.approx(math.log2(vocab), rel=1e-9)


def test_flat_positions_are_accepted() -> None:
    logits = torch.tensor([[0.0, 0.0], [0.0, math.log(3.0)]])
    loss, _, _ = lm_loss_and_ppl(logits, torch.tensor([0, 1]))
    assert loss.item() == pytest.approx((math.log(2) + math.log(4 / 3)) / 2)


@pytest.mark.parametrize(
    ("logits", "targets", "error", "message"),
    [
        (
            torch.zeros(2, 3, 4, dtype=torch.long),
            torch.zeros(2, 3, dtype=torch.long),
            TypeError,
            "floating-point",
        ),
        (torch.zeros(2, 3, 4), torch.zeros(2, 3), TypeError, "int64"),
        (
            torch.zeros(2, 3, 4),
            torch.zeros(2, 4, dtype=torch.long),
            ValueError,
            r"targets \(2, 4\)",
        ),
        (torch.zeros(4), torch.zeros(4, dtype=torch.long), ValueError, "must be"),
        (
            torch.zeros(2, 3, 4),
            torch.full((2, 3), 4, dtype=torch.long),
            ValueError,
            r"\[0, 4\)",
        ),
        (
            torch.zeros(0, 4),
            torch.zeros(0, dtype=torch.long),
            ValueError,
            "at least one position",
        ),
    ],
)
def test_bad_input_is_named(
    logits: torch.Tensor, targets: torch.Tensor, error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        lm_loss_and_ppl(logits, targets)
