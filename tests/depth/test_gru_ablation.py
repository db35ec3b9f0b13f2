"""Tests for chapter_code.depth.gru_ablation: the removed gate is fixed at 1 or 0 and
stays fixed through training."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from chapter_code.corpora.texts import Splits
from chapter_code.depth import gru_ablation
from chapter_code.depth.gru_ablation import ablation_run, remove_gate
from chapter_code.depth.scoreboard import ScoreRecipe
from chapter_code.gated.gates import gru_loop
from chapter_code.lm.char_lm import TrainConfig


@pytest.mark.parametrize(
    ("variant", "expect_copy"), [("update-only", False), ("reset-only", True)]
)
def test_removed_gate_is_fixed_and_stays_fixed(variant: str, expect_copy: bool) -> None:
    torch.manual_seed(0)
    gru = nn.GRU(3, 4, batch_first=True)
    remove_gate(gru, variant)
    before = {n: p.detach().clone() for n, p in gru.named_parameters()}
    opt = torch.optim.Adam(gru.parameters(), lr=0.1)
    for _ in range(5):
        out, _ = gru(torch.randn(2, 6, 3))
        opt.zero_grad()
        out.square().sum().backward()
        opt.step()
    block = slice(0, 4) if variant == "update-only" else slice(4, 8)
    others = [b for b in (slice(0, 4), slice(4, 8), slice(8, 12)) if b != block]
    for name, p in gru.named_parameters():
        # the removed gate never moved
        assert torch.equal(p[block], before[name][block]), name
        for other in others:  # every other block did
            assert not torch.equal(p[other], before[name][other]), (name, other)
    # the hand-written reset-after loop still matches the module with the gate removed
    x = torch.randn(1, 5, 3)
    w = (gru.weight_ih_l0, gru.weight_hh_l0, gru.bias_ih_l0, gru.bias_hh_l0)
    with torch.no_grad():
        ref, _ = gru(x)
        ours, _ = gru_loop(x, *w, reset_after=True)
    torch.testing.assert_close(ours, ref)
    z = torch.sigmoid((gru.bias_ih_l0 + gru.bias_hh_l0)[4:8])
    assert (z.max() < 1e-6) == expect_copy


def test_bad_variant_named() -> None:
    with pytest.raises(ValueError, match="variant"):
        remove_gate(nn.GRU(2, 2), "forget-only")
    with pytest.raises(ValueError, match="one-layer"):
        remove_gate(nn.GRU(2, 2, num_layers=2), "reset-only")


@pytest.mark.parametrize("variant", ["update-only", "reset-only"])
def test_tiny_ablation_run(monkeypatch: pytest.MonkeyPatch, variant: str) -> None:
    text = "to be or not to be, that is the question. " * 40

    def splits(corpus: str) -> Splits:
        assert corpus == "shakespeare"  # the recipe's corpus is the one read
        # '#' only beyond the training slice
        return Splits(text[:1200] + "#", text[1200:1500], text[1500:])

    seen = {}
    real_fit, real_loss, real_remove = (
        gru_ablation.fit_next_token,
        gru_ablation.fixed_window_loss,
        remove_gate,
    )

    def fit(model, ids, config, generator):
        seen.update(
            fit_ids=ids,
            config=config,
            seed=generator.initial_seed(),
            vocab=model.readout.out_features,
        )
        return real_fit(model, ids, config, generator)

    def loss(model, ids, window):
        seen.update(valid_ids=ids, window=window)
        return real_loss(model, ids, window)

    def remove(core, v):
        seen["variant"] = v
        return real_remove(core, v)

    monkeypatch.setattr(gru_ablation, "corpus_splits", splits)
    monkeypatch.setattr(gru_ablation, "fit_next_token", fit)
    monkeypatch.setattr(gru_ablation, "fixed_window_loss", loss)
    monkeypatch.setattr(gru_ablation, "remove_gate", remove)
    recipe = ScoreRecipe(
        train_chars=1000,
        valid_chars=200,
        embedding_size=4,
        hidden_size=8,
        train=TrainConfig(window=8, batch_size=4, steps=3, log_every=1),
    )
    out = ablation_run(2, variant, recipe)
    assert seen["variant"] == variant
    assert seen["seed"] == 2
    assert seen["config"] == recipe.train
    # the vocabulary of the whole training split
    assert seen["vocab"] == len(set(text + "#"))
    assert seen["fit_ids"].numel() == 1000
    assert seen["valid_ids"].numel() == 200
    assert seen["window"] == 8
    assert out["valid_perplexity"] == pytest.approx(
        torch.tensor(out["valid_nats"]).exp().item()
    )
    assert out["held_weights_max"] == 0.0
    again = ablation_run(2, variant, recipe)
    assert again == out
