"""Tests for chapter_code.lm.comparison: n-gram selection, scoring every position, unit
conversions.

Tests for chapter_code.lm.comparison that pin the n-gram grid's validation history, and
the edges of word_perplexity and share_saturated.
"""

from __future__ import annotations

import math

import pytest
import torch

from chapter_code.lm.char_lm import CharLM, fixed_window_loss
from chapter_code.lm.comparison import (
    choose_ngram,
    fixed_window_logits,
    share_saturated,
    word_perplexity,
)
from chapter_code.lm.ngram import CharNGram
from chapter_code.lm.perplexity import lm_loss_and_ppl

TRAIN = "the cat sat on the mat. the hat sat on the cat. " * 20
VALID = "the mat sat on the hat. "


def test_choose_ngram_picks_the_lowest_validation_loss() -> None:
    choice, models = choose_ngram(TRAIN, VALID, [1, 2, 3], [1.0, 0.01])
    assert set(choice.valid_nats) == {(o, k) for o in (1, 2, 3) for k in (1.0, 0.01)}
    best = choice.best()
    assert choice.valid_nats[best] == min(choice.valid_nats.values())
    assert choice.best(2)[0] == 2
    o, k = best
    assert (
        models[best].nats_per_char(VALID, history=TRAIN[-(o - 1) :] if o > 1 else "")
        == choice.valid_nats[best]
    )
    with pytest.raises(ValueError, match="order 7 is not in the grid"):
        choice.best(7)
    with pytest.raises(ValueError, match="orders and ks"):
        choose_ngram(TRAIN, VALID, [], [1.0])


@pytest.mark.parametrize("n", [1, 20, 33, 64])
def test_fixed_window_logits_score_every_position_once_from_a_fresh_state(
    n: int,
) -> None:
    torch.manual_seed(0)
    model = CharLM(7, "lstm", 4, 8)
    ids = torch.randint(0, 7, (n + 1,))
    logits = fixed_window_logits(model, ids, 16)
    assert logits.shape == (n, 7)
    with torch.no_grad():
        for start in range(0, n, 16):  # each window alone, from a zero state
            expected, _ = model(ids[start : min(start + 16, n)][None])
            torch.testing.assert_close(logits[start : start + 16], expected[0])
    if n % 16 == 0:  # whole windows: the same number as fixed_window_loss
        loss = lm_loss_and_ppl(logits, ids[1:])[0].item()
        assert loss == pytest.approx(fixed_window_loss(model, ids, 16), rel=1e-6)
    with pytest.raises(ValueError, match="ids must be a 1-D tensor"):
        fixed_window_logits(model, ids[:1], 16)


def test_word_perplexity_and_saturation() -> None:
    assert word_perplexity(math.log(4.5), 55, 10) == pytest.approx(4.5**5.5)
    with pytest.raises(ValueError, match="n_words"):
        word_perplexity(1.0, 10, 0)
    assert share_saturated(torch.tensor([0.0, 0.95, -0.99, 0.5])) == pytest.approx(0.5)


def test_loss_by_position_averages_to_the_fixed_window_loss() -> None:
    from chapter_code.lm.comparison import loss_by_position

    torch.manual_seed(1)
    model = CharLM(5, "rnn", 4, 6)
    ids = torch.randint(0, 5, (3 * 8 + 2,))
    by_pos = loss_by_position(model, ids, 8)
    assert by_pos.shape == (8,)
    assert by_pos.mean().item() == pytest.approx(
        fixed_window_loss(model, ids, 8), rel=1e-6
    )
    with torch.no_grad():  # position 0 by hand: each window alone, from a zero state
        nll0 = [
            -torch.log_softmax(model(ids[w * 8 : w * 8 + 8][None])[0][0, 0], dim=-1)[
                ids[w * 8 + 1]
            ]
            for w in range(3)
        ]
    assert by_pos[0].item() == pytest.approx(sum(nll0).item() / 3, rel=1e-6)
    with pytest.raises(ValueError, match="longer than window"):
        loss_by_position(model, ids[:5], 8)


TRAIN_V = "abcabdabcabdaacbbd"
VALID_V = "cabdab"


def test_each_grid_score_reads_its_history_from_the_end_of_train() -> None:
    choice, models = choose_ngram(TRAIN_V, VALID_V, orders=[1, 2, 3], ks=[0.1, 1.0])
    for (order, k), nats in choice.valid_nats.items():
        history = TRAIN_V[len(TRAIN_V) - (order - 1) :] if order > 1 else ""
        assert nats == CharNGram(order, k).fit(TRAIN_V).nats_per_char(
            VALID_V, history=history
        )
        assert models[(order, k)].order == order
    # the history matters here: without it the first characters are scored as uniform
    assert choice.valid_nats[(3, 0.1)] != CharNGram(3, 0.1).fit(TRAIN_V).nats_per_char(
        VALID_V
    )


def test_word_perplexity_accepts_one_character_and_one_word() -> None:
    assert word_perplexity(0.5, 1, 1) == pytest.approx(math.exp(0.5))
    assert word_perplexity(0.5, 6, 2) == pytest.approx(math.exp(1.5))


def test_a_value_at_the_threshold_is_not_saturated() -> None:
    assert share_saturated(torch.tensor([0.5, 0.75, -0.75, 0.25]), threshold=0.5) == 0.5
