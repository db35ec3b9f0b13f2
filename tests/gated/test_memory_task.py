"""Tests for chapter_code.gated.memory_task: the recall data, seeded runs, the grid, the
forget-gate replay.

Value tests for chapter_code.gated.memory_task at toy sizes, against references written
out here (issue 20).

Each training helper is compared with the recipe spelled out in the test (draw
the weights, Adam, clip, shuffled minibatches, read out at the end) on a
few-sequence, two-epoch problem, so every check is exact and the whole file runs
in seconds. The worker pools of ``run_grid`` are replaced by an in-process
stand-in that records how it was asked to run; the real pool is exercised by
``test_memory_task.py``. The mutation run of ``memory_task`` uses this file only
(see ``mutation/config.toml``).
"""

from __future__ import annotations

import math
import time

import pytest
import torch
from torch import nn

from chapter_code.bptt.gradients import grad_at_first_input
from chapter_code.core import runtime
from chapter_code.gated import memory_task as mt
from chapter_code.gated.gates import effective_gate_bias
from chapter_code.gated.memory_task import (
    CONTENDERS,
    Contender,
    RecallConfig,
    RecallNet,
    RecallRun,
    build_recall_net,
    first_epoch_at,
    forget_gate_trace,
    make_recall,
    restore,
    train_recall,
)

TINY = RecallConfig(
    lag=5, vocab=3, hidden_size=6, n_train=48, n_test=24, batch_size=16, epochs=2
)


@pytest.fixture(autouse=True)
def _seeded() -> None:
    runtime.seed_everything(99)


def test_make_recall_labels_are_the_first_token_and_data_are_seeded() -> None:
    x, y = make_recall(10, 7, 4, seed=3)
    assert x.shape == (10, 7, 4)
    assert y.shape == (10,)
    torch.testing.assert_close(x.argmax(dim=2)[:, 0], y)
    torch.testing.assert_close(make_recall(10, 7, 4, seed=3)[0], x)
    assert not torch.equal(make_recall(10, 7, 4, seed=4)[0], x)
    with pytest.raises(ValueError, match="lag must be an int >= 1"):
        make_recall(10, 0, 4, seed=3)


def test_contender_and_config_validation() -> None:
    with pytest.raises(
        ValueError, match=r"cell must be one of \['gru', 'lstm', 'rnn'\]"
    ):
        Contender("x", "transformer")
    with pytest.raises(ValueError, match="keep_bias needs a gated cell"):
        Contender("x", "rnn", 1.0)
    with pytest.raises(ValueError, match=r"solved_at must be in \(0, 1\]"):
        RecallConfig(solved_at=1.5)
    with pytest.raises(ValueError, match="hidden_size must be an int >= 1"):
        RecallConfig(hidden_size=0)


def test_build_is_seeded_and_sets_the_keep_bias() -> None:
    lstm_plus = CONTENDERS[2]
    a, b = (
        build_recall_net(lstm_plus, TINY, seed=5),
        build_recall_net(lstm_plus, TINY, seed=5),
    )
    for (name, p), q in zip(a.named_parameters(), b.parameters(), strict=True):
        torch.testing.assert_close(p, q, msg=name)
    assert not torch.equal(
        a.rec.weight_hh_l0, build_recall_net(lstm_plus, TINY, seed=6).rec.weight_hh_l0
    )
    torch.testing.assert_close(
        effective_gate_bias(a.rec, "lstm", "f"), torch.ones(TINY.hidden_size)
    )
    gru2 = build_recall_net(CONTENDERS[5], TINY, seed=5)
    torch.testing.assert_close(
        effective_gate_bias(gru2.rec, "gru", "z"), torch.full((TINY.hidden_size,), 2.0)
    )


@pytest.mark.parametrize("contender", CONTENDERS, ids=lambda c: c.label)
def test_one_stream_reproduces_the_sources_global_seed(contender: Contender) -> None:
    """The sources call torch.manual_seed(seed), build the network with PyTorch's own
    constructors, set the keep bias, then draw each epoch's order with torch.randperm.
    One generator, drawing the weights and then the orders, must give the same
    numbers."""
    config = RecallConfig(hidden_size=8)
    torch.manual_seed(6050)
    # the global stream
    reference = RecallNet(contender.cell, config.vocab, config.hidden_size)
    if contender.keep_bias is not None:
        from chapter_code.gated.gates import set_gate_bias

        set_gate_bias(
            reference.rec,
            contender.cell,
            "f" if contender.cell == "lstm" else "z",
            contender.keep_bias,
        )
    reference_orders = [torch.randperm(config.n_train) for _ in range(2)]
    stream = torch.Generator().manual_seed(6050)
    net = build_recall_net(contender, config, 6050, generator=stream)
    orders = [torch.randperm(config.n_train, generator=stream) for _ in range(2)]
    for (name, p), q in zip(
        net.named_parameters(), reference.parameters(), strict=True
    ):
        torch.testing.assert_close(p, q, rtol=0, atol=0, msg=name)
    for a, b in zip(orders, reference_orders, strict=True):
        assert torch.equal(a, b)


def test_first_epoch_at() -> None:
    assert first_epoch_at([0.2, 0.5, 0.95, 0.8, 0.99], 0.9) == 3
    assert first_epoch_at([0.2, 0.5], 0.9) is None
    with pytest.raises(ValueError, match=r"threshold must be in \(0, 1\]"):
        first_epoch_at([0.5], 1.5)


def test_forget_gate_trace_replays_the_module() -> None:
    run, net = train_recall(CONTENDERS[2], 0, TINY)
    restored = restore(run, CONTENDERS[2], TINY)
    x, _ = make_recall(8, TINY.lag, TINY.vocab, seed=11)
    means, states = forget_gate_trace(restored.rec, x)
    with torch.no_grad():
        reference, _ = net.rec(x)
    torch.testing.assert_close(states, reference)
    assert len(means) == TINY.lag
    assert all(0.0 < m < 1.0 for m in means)
    with pytest.raises(ValueError, match="batch-first nn.LSTM"):
        forget_gate_trace(nn.GRU(3, 4, batch_first=True), x)


def test_learned_initial_state_gets_a_gradient() -> None:
    net = build_recall_net(CONTENDERS[2], TINY, seed=0, learn_h0=True)
    x, y = make_recall(8, TINY.lag, TINY.vocab, seed=1)
    nn.functional.cross_entropy(net(x), y).backward()
    assert net.h0 is not None
    assert net.h0.grad is not None
    assert net.h0.grad.abs().sum() > 0


#: Ten sequences in batches of four: two full batches and a short one per epoch.
MINI = RecallConfig(
    lag=3,
    vocab=3,
    hidden_size=4,
    n_train=10,
    n_test=7,
    batch_size=4,
    epochs=2,
    lr=0.05,
    clip=0.5,
    train_seed=5,
    test_seed=6,
)
RNN, LSTM, LSTM1, GRU, GRU1, GRU2 = mt.CONTENDERS
SIZES = ["lag", "vocab", "hidden_size", "n_train", "n_test", "batch_size", "epochs"]


# ---- Contender and RecallConfig
# ------------------------------------------------------------------------


def test_the_six_contenders_and_three_seeds() -> None:
    assert [c.cell for c in mt.CONTENDERS] == ["rnn"] + ["lstm"] * 2 + ["gru"] * 3
    assert [c.keep_bias for c in mt.CONTENDERS] == [None, None, 1.0, None, 1.0, 2.0]
    assert [c.label for c in mt.CONTENDERS][0] == "vanilla RNN"
    assert all(c.label.startswith(c.cell.upper()) for c in mt.CONTENDERS[1:])
    assert [c.label.split(", ")[-1] for c in mt.CONTENDERS[1:]] == [
        "default",
        "forget bias +1",
        "default",
        "keep bias +1",
        "keep bias +2",
    ]
    assert mt.SEEDS == (0, 1, 6050)


@pytest.mark.parametrize("cell", ["transformer", "LSTM", ""])
def test_a_contender_names_a_known_cell(cell: str) -> None:
    with pytest.raises(
        ValueError,
        match=r"^cell must be one of \['gru', 'lstm', 'rnn'\]; got " + repr(cell),
    ):
        Contender("x", cell)


@pytest.mark.parametrize("bias", [0.0, 1.0, -2.0])
def test_a_keep_bias_needs_a_gate(bias: float) -> None:
    with pytest.raises(ValueError, match=r"^keep_bias needs a gated cell"):
        Contender("x", "rnn", bias)
    assert Contender("x", "lstm", bias).keep_bias == bias
    assert Contender("x", "gru", bias).keep_bias == bias


def test_config_defaults_are_the_sources_recipe() -> None:
    c = RecallConfig()
    assert (
        c.lag,
        c.vocab,
        c.hidden_size,
        c.n_train,
        c.n_test,
        c.lr,
        c.batch_size,
        c.clip,
        c.epochs,
        c.solved_at,
        c.train_seed,
        c.test_seed,
    ) == (80, 4, 32, 2000, 500, 3e-3, 128, 1.0, 80, 0.9, 1, 2)


def test_config_sizes_may_be_one() -> None:
    c = RecallConfig(**dict.fromkeys(SIZES, 1), solved_at=1.0, lr=1e-12, clip=1e-12)
    assert [getattr(c, n) for n in SIZES] == [1] * len(SIZES)


@pytest.mark.parametrize("name", SIZES)
@pytest.mark.parametrize("value", [0, -1, 2.0, "3", True])
def test_config_sizes_are_ints_of_at_least_one(name: str, value: object) -> None:
    # True is refused too: Python counts it as an int, the book does not count with it
    with pytest.raises(
        ValueError, match=rf"^{name} must be an int >= 1; got {value!r}$"
    ):
        RecallConfig(**{name: value})


@pytest.mark.parametrize(
    ("lr", "clip"),
    [
        (0.0, 1.0),
        (-1e-3, 1.0),
        (1e-3, 0.0),
        (1e-3, -1.0),
        (float("nan"), 1.0),
        (1e-3, float("nan")),
    ],
)
def test_config_lr_and_clip_are_positive(lr: float, clip: float) -> None:
    with pytest.raises(ValueError, match=r"^lr and clip must be > 0; got lr="):
        RecallConfig(lr=lr, clip=clip)


@pytest.mark.parametrize("solved_at", [0.0, -0.5, 1.0001, 2.0, float("nan")])
def test_config_solved_at_is_a_share(solved_at: float) -> None:
    with pytest.raises(ValueError, match=r"^solved_at must be in \(0, 1\]; got "):
        RecallConfig(solved_at=solved_at)
    assert RecallConfig(solved_at=1.0).solved_at == 1.0
    assert RecallConfig(solved_at=1e-9).solved_at == 1e-9


# ---- make_recall
# --------------------------------------------------------------------------------------


def test_recall_data_are_seeded_one_hot_tokens_labelled_by_the_first() -> None:
    x, y = mt.make_recall(6, 4, 5, seed=9)
    tokens = torch.randint(0, 5, (6, 4), generator=torch.Generator().manual_seed(9))
    assert x.dtype == torch.float32
    assert torch.equal(x, torch.eye(5)[tokens])
    assert torch.equal(y, tokens[:, 0])
    assert torch.equal(
        mt.make_recall(6, 4, 5, seed=10)[1],
        torch.randint(0, 5, (6, 4), generator=torch.Generator().manual_seed(10))[:, 0],
    )


def test_recall_data_have_the_whole_alphabet_even_when_few_tokens_are_drawn() -> None:
    x, y = mt.make_recall(1, 2, 50, seed=0)
    # one-hot over the alphabet, not up to the largest token drawn
    assert x.shape == (1, 2, 50)
    assert int(y.max()) < 49


def test_recall_data_of_size_one() -> None:
    x, y = mt.make_recall(1, 1, 1, seed=0)
    assert torch.equal(x, torch.ones(1, 1, 1))
    assert torch.equal(y, torch.zeros(1, dtype=torch.long))


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"n": 0}, "n"),
        ({"lag": 0}, "lag"),
        ({"vocab": 0}, "vocab"),
        ({"n": 2.0}, "n"),
        ({"lag": -3}, "lag"),
        ({"vocab": "4"}, "vocab"),
    ],
)
def test_recall_data_sizes_are_named(kwargs: dict, name: str) -> None:
    args = {"n": 2, "lag": 3, "vocab": 4, **kwargs}
    with pytest.raises(
        ValueError, match=rf"^{name} must be an int >= 1; got {args[name]!r}$"
    ):
        mt.make_recall(args["n"], args["lag"], args["vocab"], seed=0)


# ---- RecallNet and build_recall_net
# --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cell", "module"), [("rnn", nn.RNN), ("lstm", nn.LSTM), ("gru", nn.GRU)]
)
def test_recall_net_layers(cell: str, module: type) -> None:
    net = RecallNet(cell, 3, 5)
    assert type(net.rec) is module
    assert (
        net.rec.input_size,
        net.rec.hidden_size,
        net.rec.num_layers,
        net.rec.batch_first,
    ) == (3, 5, 1, True)
    assert (net.readout.in_features, net.readout.out_features) == (5, 3)
    assert net.readout.bias is not None
    assert net.cell == cell
    assert net.h0 is None
    learned = RecallNet(cell, 3, 5, learn_h0=True)
    assert isinstance(learned.h0, nn.Parameter)
    assert torch.equal(learned.h0, torch.zeros(5))
    # registered on the module itself: first
    assert [n for n, _ in learned.named_parameters()][0] == "h0"


def test_recall_net_refuses_unknown_cells() -> None:
    with pytest.raises(
        ValueError, match=r"^cell must be one of \['gru', 'lstm', 'rnn'\]; got 'elman'$"
    ):
        RecallNet("elman", 3, 4)


@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
def test_recall_net_reads_out_after_the_last_step(cell: str) -> None:
    torch.manual_seed(0)
    net = RecallNet(cell, 3, 4)
    x = torch.randn(2, 5, 3)
    with torch.no_grad():
        outputs, _ = net.rec(x)
        expected = outputs[:, 4] @ net.readout.weight.T + net.readout.bias
        assert torch.allclose(net(x), expected, atol=1e-6)


@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
def test_recall_net_starts_from_its_learned_state(cell: str) -> None:
    torch.manual_seed(1)
    net = RecallNet(cell, 3, 4, learn_h0=True)
    with torch.no_grad():
        net.h0.copy_(torch.tensor([0.5, -0.25, 0.75, 0.1]))
    x = torch.randn(2, 5, 3)
    h0 = net.h0.detach().expand(1, 2, 4).contiguous()
    state = (h0, torch.zeros(1, 2, 4)) if cell == "lstm" else h0
    with torch.no_grad():
        outputs, _ = net.rec(x, state)
        assert torch.allclose(net(x), net.readout(outputs[:, -1]), atol=0, rtol=0)
        assert not torch.allclose(net(x), net.readout(net.rec(x)[0][:, -1]))


def reference_net(
    contender: Contender,
    config: RecallConfig,
    gen: torch.Generator,
    learn_h0: bool = False,
):
    """The initialisation written out: every parameter but h0 uniform in +-1/sqrt(H), in
    registration order."""
    net = RecallNet(contender.cell, config.vocab, config.hidden_size, learn_h0=learn_h0)
    bound = config.hidden_size**-0.5
    with torch.no_grad():
        for name, p in net.named_parameters():
            if name != "h0":
                p.copy_(torch.empty_like(p).uniform_(-bound, bound, generator=gen))
    if contender.keep_bias is not None:
        gate = {"lstm": "f", "gru": "z"}[contender.cell]
        mt.set_gate_bias(net.rec, contender.cell, gate, contender.keep_bias)
    return net


def same_parameters(a: nn.Module, b: nn.Module) -> None:
    pa, pb = dict(a.named_parameters()), dict(b.named_parameters())
    assert list(pa) == list(pb)
    for name in pa:
        assert torch.equal(pa[name], pb[name]), name


@pytest.mark.parametrize("contender", mt.CONTENDERS, ids=lambda c: c.label)
def test_build_draws_every_weight_from_the_seed(contender: Contender) -> None:
    net = mt.build_recall_net(contender, MINI, seed=7)
    same_parameters(
        net, reference_net(contender, MINI, torch.Generator().manual_seed(7))
    )
    assert net.rec.weight_hh_l0.abs().max() <= 0.5  # 1/sqrt(4)
    assert net.rec.weight_hh_l0.abs().max() > 0.4
    if contender.keep_bias is not None:
        gate = mt.KEEP_GATE[contender.cell]
        torch.testing.assert_close(
            effective_gate_bias(net.rec, contender.cell, gate),
            torch.full((4,), contender.keep_bias),
        )


def test_build_draws_from_a_given_generator_and_leaves_it_after_the_draws() -> None:
    gen, ref_gen = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    net = mt.build_recall_net(GRU1, MINI, seed=999, generator=gen)
    same_parameters(net, reference_net(GRU1, MINI, ref_gen))
    assert torch.equal(torch.rand(5, generator=gen), torch.rand(5, generator=ref_gen))


def test_build_leaves_the_learned_state_at_zero() -> None:
    net = mt.build_recall_net(LSTM1, MINI, seed=2, learn_h0=True)
    assert torch.equal(net.h0, torch.zeros(4))
    same_parameters(
        net, reference_net(LSTM1, MINI, torch.Generator().manual_seed(2), learn_h0=True)
    )


def test_build_uses_the_config_width_and_alphabet() -> None:
    config = RecallConfig(vocab=5, hidden_size=9)
    net = mt.build_recall_net(RNN, config, seed=0)
    assert (net.rec.input_size, net.rec.hidden_size, net.readout.out_features) == (
        5,
        9,
        5,
    )
    assert net.readout.weight.abs().max() <= 1 / 3


# ---- first_epoch_at and accuracy
# -----------------------------------------------------------------------


def test_first_epoch_at_counts_from_one_and_includes_the_threshold() -> None:
    assert mt.first_epoch_at([0.5, 0.9, 0.95], 0.9) == 2
    assert mt.first_epoch_at([1.0], 1.0) == 1
    assert mt.first_epoch_at([0.2, 0.89999], 0.9) is None
    assert mt.first_epoch_at([], 0.5) is None


@pytest.mark.parametrize("threshold", [0.0, -0.1, 1.01])
def test_first_epoch_at_needs_a_share(threshold: float) -> None:
    with pytest.raises(
        ValueError, match=rf"^threshold must be in \(0, 1\]; got {threshold}$"
    ):
        mt.first_epoch_at([0.5], threshold)


def test_accuracy_is_the_share_of_argmax_hits() -> None:
    class Fixed(nn.Module):
        def forward(self, x):
            return x[:, 0]

    x = torch.tensor(
        [[[0.1, 0.9, 0.0]], [[0.8, 0.1, 0.1]], [[0.0, 0.2, 0.7]], [[0.3, 0.3, 0.9]]]
    )
    y = torch.tensor([1, 0, 0, 2])
    assert mt.accuracy(Fixed(), x, y) == 0.75
    torch.manual_seed(0)
    net = RecallNet("gru", 3, 4)
    x, y = mt.make_recall(9, 3, 3, seed=1)
    hits = (net(x).argmax(dim=1) == y).sum().item()
    # a float32 mean
    assert mt.accuracy(net, x, y) == torch.tensor(hits / 9, dtype=torch.float32).item()


# ---- train_recall against the recipe written out
# -------------------------------------------------------


def reference_training(
    contender: Contender,
    seed: int,
    config: RecallConfig,
    dtype=torch.float32,
    share_dtype=torch.float32,
):
    """The recipe written out; test accuracies are means in ``share_dtype`` (float32 for
    a single run)."""
    gen = torch.Generator().manual_seed(config.train_seed)
    train_tokens = torch.randint(
        0, config.vocab, (config.n_train, config.lag), generator=gen
    )
    gen = torch.Generator().manual_seed(config.test_seed)
    test_tokens = torch.randint(
        0, config.vocab, (config.n_test, config.lag), generator=gen
    )
    eye = torch.eye(config.vocab, dtype=dtype)
    x_train, y_train = eye[train_tokens], train_tokens[:, 0]
    x_test, y_test = eye[test_tokens], test_tokens[:, 0]
    stream = torch.Generator().manual_seed(seed)
    net = reference_net(contender, config, stream).to(dtype)
    birth = grad_at_first_input(net.rec, [config.lag], input_size=config.vocab)[0]
    opt = torch.optim.Adam(net.parameters(), lr=config.lr)
    history = []
    for _epoch in range(config.epochs):
        order = torch.randperm(config.n_train, generator=stream)
        batches = [
            order[i : i + config.batch_size]
            for i in range(0, config.n_train, config.batch_size)
        ]
        for rows in batches:
            opt.zero_grad()
            logits = net.readout(net.rec(x_train[rows])[0][:, -1])
            nn.functional.cross_entropy(logits, y_train[rows]).backward()
            grads = [p.grad for p in net.parameters()]
            norm = torch.linalg.vector_norm(
                torch.stack([torch.linalg.vector_norm(g) for g in grads])
            )
            scale = min(1.0, config.clip / (norm.item() + 1e-6))
            for g in grads:
                g.mul_(scale)
            opt.step()
        with torch.no_grad():
            history.append(
                (net(x_test).argmax(dim=1) == y_test).to(share_dtype).mean().item()
            )
    return birth, history, net


@pytest.mark.parametrize(
    ("contender", "seed"),
    [(LSTM1, 0), (GRU, 6050), (RNN, 1)],
    ids=["lstm", "gru", "rnn"],
)
def test_train_recall_follows_the_recipe(contender: Contender, seed: int) -> None:
    birth, history, ref = reference_training(contender, seed, MINI, torch.float64)
    start = time.perf_counter()
    run, net = mt.train_recall(contender, seed, MINI, dtype=torch.float64)
    took = time.perf_counter() - start
    assert (run.label, run.seed, run.epochs) == (contender.label, seed, 2)
    assert run.birth == pytest.approx(birth, rel=1e-12)
    assert run.history == pytest.approx(history, abs=1e-12)
    assert run.accuracy == run.history[-1]
    assert len(run.history) == 2
    assert 0 < run.seconds <= took
    for name, p in ref.state_dict().items():
        torch.testing.assert_close(run.state[name], p, rtol=1e-9, atol=1e-12, msg=name)
        torch.testing.assert_close(
            net.state_dict()[name], p, rtol=1e-9, atol=1e-12, msg=name
        )
    assert run.state["rec.weight_hh_l0"].dtype == torch.float64
    net.rec.weight_hh_l0.data.zero_()  # the run keeps a copy, not the live weights
    assert run.state["rec.weight_hh_l0"].abs().sum() > 0


def test_train_recall_keeps_every_epoch_and_float32_by_default() -> None:
    config = RecallConfig(
        lag=2,
        vocab=2,
        hidden_size=3,
        n_train=6,
        n_test=5,
        batch_size=6,
        epochs=3,
        lr=0.1,
    )
    run, net = mt.train_recall(GRU2, 1, config)
    _, history, _ = reference_training(GRU2, 1, config)
    assert run.history == pytest.approx(history, abs=1e-6)
    assert len(run.history) == run.epochs == 3
    assert net.rec.weight_hh_l0.dtype == torch.float32


def test_train_recall_with_a_learned_state_trains_it() -> None:
    run, net = mt.train_recall(LSTM, 0, MINI, learn_h0=True)
    assert net.h0 is not None
    assert net.h0.abs().sum() > 0
    assert torch.equal(run.state["h0"], net.h0.detach())


def test_train_recall_reads_the_run_seed() -> None:
    a, _ = mt.train_recall(GRU, 0, MINI)
    b, _ = mt.train_recall(GRU, 1, MINI)
    assert not torch.equal(a.state["rec.weight_hh_l0"], b.state["rec.weight_hh_l0"])


def test_restore_loads_the_saved_weights() -> None:
    config = RecallConfig(vocab=3, hidden_size=5)
    net = mt.build_recall_net(LSTM1, config, seed=4)
    run = RecallRun(
        LSTM1.label,
        4,
        0.0,
        0.0,
        0,
        state={k: v.clone() for k, v in net.state_dict().items()},
    )
    restored = mt.restore(run, LSTM1, config)
    assert type(restored.rec) is nn.LSTM
    same_parameters(restored, net)
    with pytest.raises(RuntimeError):
        mt.restore(run, GRU, config)


def test_restore_defaults_to_the_recipe_sizes() -> None:
    net = mt.build_recall_net(RNN, RecallConfig(), seed=0)
    run = RecallRun(RNN.label, 0, 0.0, 0.0, 0, state=net.state_dict())
    same_parameters(mt.restore(run, RNN), net)


def test_forget_gate_trace_against_the_equations() -> None:
    torch.manual_seed(3)
    lstm = nn.LSTM(3, 4, batch_first=True)
    x = torch.randn(2, 5, 3)
    means, states = mt.forget_gate_trace(lstm, x)
    w_ih, w_hh = lstm.weight_ih_l0.detach(), lstm.weight_hh_l0.detach()
    b = (lstm.bias_ih_l0 + lstm.bias_hh_l0).detach()
    h = c = torch.zeros(2, 4)
    expected_means, expected_states = [], []
    for t in range(5):
        z = x[:, t] @ w_ih.T + h @ w_hh.T + b
        i, f, g, o = (
            torch.sigmoid(z[:, :4]),
            torch.sigmoid(z[:, 4:8]),
            torch.tanh(z[:, 8:12]),
            torch.sigmoid(z[:, 12:]),
        )
        c = f * c + i * g
        h = o * torch.tanh(c)
        expected_means.append(f.mean().item())
        expected_states.append(h)
    assert means == pytest.approx(expected_means, abs=1e-6)
    torch.testing.assert_close(states, torch.stack(expected_states, dim=1))
    torch.testing.assert_close(states, lstm(x)[0].detach())
    assert not states.requires_grad


@pytest.mark.parametrize(
    "module",
    [
        nn.GRU(3, 4, batch_first=True),
        nn.LSTM(3, 4, num_layers=2, batch_first=True),
        nn.LSTM(3, 4, bidirectional=True, batch_first=True),
        nn.LSTM(3, 4),
    ],
    ids=["gru", "two-layer", "bidirectional", "time-first"],
)
def test_forget_gate_trace_needs_a_plain_batch_first_lstm(module: nn.Module) -> None:
    with pytest.raises(
        ValueError,
        match=r"^lstm must be a one-layer, unidirectional, batch-first nn\.LSTM$",
    ):
        mt.forget_gate_trace(module, torch.zeros(1, 2, 3))


def test_keep_gates() -> None:
    assert mt.KEEP_GATE == {"lstm": "f", "gru": "z"}
    assert mt.CELLS == {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}
    assert math.isclose(1 / math.sqrt(MINI.hidden_size), 0.5)


def test_a_run_s_accuracy_is_its_last_epoch_s_not_another_one_s() -> None:
    # with two epochs the last entry is also the second, so three epochs whose
    # accuracies differ tell them apart
    config = RecallConfig(
        lag=2,
        vocab=3,
        hidden_size=3,
        n_train=12,
        n_test=40,
        batch_size=4,
        epochs=4,
        lr=0.2,
    )
    run, _ = mt.train_recall(GRU2, 1, config)
    assert len(run.history) == 4
    # the last three epochs differ on this seed
    assert len(set(run.history[-3:])) == 3, run.history
    assert run.accuracy == run.history[-1]
