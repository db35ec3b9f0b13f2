"""Tests for chapter_code.gated.model_batch: a stack of M models computes what each model computes alone.

Tests for chapter_code.gated.model_batch that pin what the first tests left open: a stack of one,
each model's weights read back under a network's names, and the boundaries of every check.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from chapter_code.gated.memory_task import CONTENDERS, RecallConfig, build_recall_net, make_recall
from chapter_code.gated.model_batch import StackedRecall, clip_per_model, stacked_loss

SMALL = RecallConfig(lag=7, vocab=3, hidden_size=5)
BY_CELL = {"rnn": [CONTENDERS[0]] * 3, "lstm": [CONTENDERS[1], CONTENDERS[2]], "gru": list(CONTENDERS[3:])}


def _nets(cell: str) -> list[nn.Module]:
    return [build_recall_net(c, SMALL, seed=s).double() for s, c in enumerate(BY_CELL[cell])]


def _own_params(net: nn.Module) -> list[torch.Tensor]:
    rec = net.rec
    return [rec.weight_ih_l0, rec.weight_hh_l0, rec.bias_ih_l0, rec.bias_hh_l0, net.readout.weight, net.readout.bias]


@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
def test_stack_forward_and_gradients_equal_each_model_alone(cell: str) -> None:
    nets = _nets(cell)
    stack = StackedRecall.from_nets(nets)
    x, y = make_recall(20, SMALL.lag, SMALL.vocab, seed=4)
    x = x.double()
    rows = torch.stack([torch.randperm(20, generator=torch.Generator().manual_seed(m))[:8] for m in range(len(nets))])
    logits = stack(x[rows])  # (M, B, V), each model on its own batch
    stacked_loss(logits, y[rows]).backward()
    with torch.no_grad():
        shared = stack(x)  # (M, 20, V), every model on the same batch
    for m, net in enumerate(nets):
        alone = net(x[rows[m]])
        torch.testing.assert_close(logits[m], alone, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(shared[m], net(x).detach(), rtol=1e-12, atol=1e-12)
        nn.functional.cross_entropy(alone, y[rows[m]]).backward()
        for mine, theirs in zip(stack.parameters(), _own_params(net), strict=True):
            torch.testing.assert_close(mine.grad[m], theirs.grad, rtol=1e-10, atol=1e-12)


def test_one_clipped_adam_step_equals_each_model_alone() -> None:
    nets = _nets("gru")
    stack = StackedRecall.from_nets(nets)
    opt = torch.optim.Adam(stack.parameters(), lr=0.05)
    x, y = make_recall(12, SMALL.lag, SMALL.vocab, seed=5)
    x = x.double()
    big_y = (y * 0 + 2).expand(len(nets), -1)  # a fixed target and scaled logits: large gradients for some
    for _ in range(2):
        opt.zero_grad()
        stacked_loss(stack(x) * 20, big_y).backward()
        norms = clip_per_model(list(stack.parameters()), 0.5)
        opt.step()
    assert norms.max() > 0.5  # one model was clipped ...
    assert norms.min() < 0.5  # ... and one was not
    for m, net in enumerate(nets):
        own = torch.optim.Adam(net.parameters(), lr=0.05)
        for _ in range(2):
            own.zero_grad()
            nn.functional.cross_entropy(net(x) * 20, big_y[m]).backward()
            nn.utils.clip_grad_norm_(net.parameters(), 0.5)
            own.step()
        for mine, theirs in zip(stack.parameters(), _own_params(net), strict=True):
            torch.testing.assert_close(mine[m], theirs, rtol=1e-10, atol=1e-12)


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="cell must be one of"):
        StackedRecall("transformer", 2, 3, 4)
    with pytest.raises(ValueError, match="n_models must be an int >= 1"):
        StackedRecall("gru", 0, 3, 4)
    with pytest.raises(ValueError, match="nets must all have the same rec type"):
        StackedRecall.from_nets([build_recall_net(CONTENDERS[0], SMALL, 0), build_recall_net(CONTENDERS[1], SMALL, 0)])
    stack = StackedRecall("rnn", 2, 3, 4)
    with pytest.raises(ValueError, match="x must be"):
        stack(torch.zeros(3, 5, 2, 3))
    with pytest.raises(ValueError, match="max_norm must be > 0"):
        clip_per_model(list(stack.parameters()), 0.0)
    with pytest.raises(ValueError, match="logits must be"):
        stacked_loss(torch.zeros(2, 3), torch.zeros(2, dtype=torch.long))


SMALL_V = RecallConfig(lag=5, vocab=3, hidden_size=4)


def test_a_stack_of_one_network_computes_what_it_computes() -> None:
    net = build_recall_net(CONTENDERS[1], SMALL_V, seed=0).double()
    stack = StackedRecall.from_nets([net])
    x, _ = make_recall(6, SMALL_V.lag, SMALL_V.vocab, seed=1)
    torch.testing.assert_close(stack(x.double())[0], net(x.double()), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("contender", [CONTENDERS[0], CONTENDERS[2], CONTENDERS[4]])
def test_state_dict_of_gives_each_models_own_weights_under_the_networks_names(contender) -> None:
    nets = [build_recall_net(contender, SMALL_V, seed=s) for s in (0, 1)]
    stack = StackedRecall.from_nets(nets)
    for m, net in enumerate(nets):
        ours = stack.state_dict_of(m)
        theirs = {k: v for k, v in net.state_dict().items() if k.startswith(("rec.", "readout."))}
        assert list(ours) == list(theirs)
        for k in theirs:
            assert torch.equal(ours[k], theirs[k])
        fresh = build_recall_net(contender, SMALL_V, seed=9)
        fresh.load_state_dict(ours, strict=False)
        x, _ = make_recall(4, SMALL_V.lag, SMALL_V.vocab, seed=2)
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
