"""One character language model trained and scored, as plain metrics: the job of an
experiment sweep.

The chapter "Recurrent language models" trains its models at a CPU-scaled
size (:data:`chapter_code.lm.char_models.CPU`). The workshop's full-size recipe
(:data:`chapter_code.lm.char_models.WORKSHOP`), and more seeds of either, are
runs for a sweep on larger machines: one call of :func:`char_lm_metrics` per
model and seed, returning numbers only (no weights), in the same units and on
the same held-out characters as the chapter's table.

Pages: none directly; its records are for "Recurrent language models".
"""

from __future__ import annotations

import dataclasses
from typing import Any

from chapter_code.lm.char_lm import streaming_loss
from chapter_code.lm.char_models import (
    LMRecipe,
    corpus_splits,
    count_parameters,
    load_char_lm,
    train_char_lm,
)
from chapter_code.lm.comparison import fixed_window_logits
from chapter_code.lm.perplexity import lm_loss_and_ppl


def char_lm_metrics(seed: int, corpus: str, recipe: LMRecipe) -> dict[str, Any]:
    """Train ``recipe`` (with ``seed``) on ``corpus`` and score its validation and test
    splits.

    Every split is scored at every character, each from the true text before
    it, in fresh-state windows of the training length (as the chapter's table
    does); the test split is also scored with the state carried.
    """
    model_recipe = dataclasses.replace(recipe, seed=seed)
    result = train_char_lm(corpus, model_recipe)
    model, vocab = load_char_lm(result)
    splits = corpus_splits(corpus)
    window = model_recipe.train.window
    metrics: dict[str, Any] = {}
    for name, before, text in (
        ("valid", splits.train[-1], splits.valid),
        ("test", splits.valid[-1], splits.test),
    ):
        # (N, V)
        logits = fixed_window_logits(model, vocab.encode(before + text), window)
        nats, ppl, bits = lm_loss_and_ppl(logits, vocab.encode(text))
        metrics.update(
            {
                f"{name}_nats": nats.item(),
                f"{name}_perplexity": ppl,
                f"{name}_bits": bits,
            }
        )
    metrics["test_streaming_nats"] = streaming_loss(
        model, vocab.encode(splits.test), window
    )
    metrics["parameters"] = count_parameters(model)
    metrics["steps"] = model_recipe.train.steps
    metrics["train_curve"] = [loss for _, loss in result["history"]]
    return metrics
