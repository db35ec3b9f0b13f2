"""Tests for chapter_code.gru_ablation: the removed gate is fixed at 1 or 0 and stays fixed through training."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from chapter_code.gates import gru_loop
from chapter_code.gru_ablation import remove_gate


@pytest.mark.parametrize(("variant", "expect_copy"), [("update-only", False), ("reset-only", True)])
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
    for name, p in gru.named_parameters():
        assert torch.equal(p[block], before[name][block]), name  # the removed gate never moved
        assert not torch.equal(p, before[name]), name  # the rest did
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
