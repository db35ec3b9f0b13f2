"""Tests for chapter_code.model_batch that pin what the first tests left open: a stack of one,
each model's weights read back under a network's names, and the boundaries of every check."""

from __future__ import annotations

import pytest
import torch

from chapter_code.memory_task import CONTENDERS, RecallConfig, build_recall_net, make_recall
from chapter_code.model_batch import StackedRecall, stacked_loss

SMALL = RecallConfig(lag=5, vocab=3, hidden_size=4)


def test_a_stack_of_one_network_computes_what_it_computes() -> None:
    net = build_recall_net(CONTENDERS[1], SMALL, seed=0).double()
    stack = StackedRecall.from_nets([net])
    x, _ = make_recall(6, SMALL.lag, SMALL.vocab, seed=1)
    torch.testing.assert_close(stack(x.double())[0], net(x.double()), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("contender", [CONTENDERS[0], CONTENDERS[2], CONTENDERS[4]])
def test_state_dict_of_gives_each_models_own_weights_under_the_networks_names(contender) -> None:
    nets = [build_recall_net(contender, SMALL, seed=s) for s in (0, 1)]
    stack = StackedRecall.from_nets(nets)
    for m, net in enumerate(nets):
        ours = stack.state_dict_of(m)
        theirs = {k: v for k, v in net.state_dict().items() if k.startswith(("rec.", "readout."))}
        assert list(ours) == list(theirs)
        for k in theirs:
            assert torch.equal(ours[k], theirs[k])
        fresh = build_recall_net(contender, SMALL, seed=9)
        fresh.load_state_dict(ours, strict=False)
        x, _ = make_recall(4, SMALL.lag, SMALL.vocab, seed=2)
        torch.testing.assert_close(fresh(x), net(x))
    for bad in (-1, 2):
        with pytest.raises(ValueError, match=rf"^m must be in \[0, 2\); got {bad}$"):
            stack.state_dict_of(bad)


@pytest.mark.parametrize(("args", "name"), [((0, 3, 4), "n_models"), ((2, 0, 4), "vocab"), ((2, 3, 0), "hidden_size")])
def test_stack_sizes_are_named_and_one_is_allowed(args: tuple[int, int, int], name: str) -> None:
    with pytest.raises(ValueError, match=rf"^{name} must be an int >= 1; got 0$"):
        StackedRecall("gru", *args)
    assert StackedRecall("gru", 1, 1, 1).weight_hh.shape == (1, 3, 1)


def test_stacked_loss_rejects_targets_of_the_wrong_shape() -> None:
    message = r"^logits must be \(M, B, V\) and targets \(M, B\); got \(2, 3, 4\), \(2, 4\)$"
    with pytest.raises(ValueError, match=message):
        stacked_loss(torch.zeros(2, 3, 4), torch.zeros(2, 4, dtype=torch.long))
