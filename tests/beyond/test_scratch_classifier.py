"""Tests for beyond.scratch_classifier: both cells against PyTorch, the mask, padding,
the confusion matrix."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest
import torch
from torch import nn

from chapter_code.beyond import scratch_classifier
from chapter_code.beyond.authorship import (
    ALPHABET,
    evenly,
    sample_passages,
    split_blocks,
)
from chapter_code.beyond.scratch_classifier import (
    PAD,
    FusedLSTMCell,
    ScratchClassifier,
    ScratchConfig,
    VanillaCell,
    _mixed,
    confusion_matrix,
    pad_passages,
    train_scratch_classifier,
    unroll_masked,
)
from chapter_code.core import runtime


@pytest.fixture(autouse=True)
def _seeded() -> None:
    runtime.seed_everything(3)


def test_vanilla_cell_is_rnn_cell_without_recurrent_bias() -> None:
    cell = VanillaCell(5, 7).double()
    ref = nn.RNNCell(5, 7).double()
    with torch.no_grad():
        ref.weight_ih.copy_(cell.input_map.weight)
        ref.bias_ih.copy_(cell.input_map.bias)
        ref.weight_hh.copy_(cell.recurrent.weight)
        ref.bias_hh.zero_()
    x, h = (
        torch.randn(3, 5, dtype=torch.float64),
        torch.randn(3, 7, dtype=torch.float64),
    )
    (mine,), gates = cell(x, (h,))
    assert gates is None
    torch.testing.assert_close(mine, ref(x, h))
    w = cell.recurrent.weight.detach()
    # orthogonal at initialisation
    torch.testing.assert_close(w @ w.T, torch.eye(7, dtype=w.dtype), atol=1e-5, rtol=0)
    assert cell.recurrent.bias is None


def test_fused_lstm_cell_is_lstm_cell_with_forget_bias() -> None:
    cell = FusedLSTMCell(4, 6, forget_bias=1.0).double()
    assert torch.all(cell.fused.bias[6:12] == 1.0)
    ref = nn.LSTMCell(4, 6).double()
    with torch.no_grad():
        ref.weight_hh.copy_(cell.fused.weight[:, :6])
        ref.weight_ih.copy_(cell.fused.weight[:, 6:])
        ref.bias_ih.copy_(cell.fused.bias)
        ref.bias_hh.zero_()
    x = torch.randn(2, 4, dtype=torch.float64)
    h, c = (
        torch.randn(2, 6, dtype=torch.float64),
        torch.randn(2, 6, dtype=torch.float64),
    )
    (h1, c1), gates = cell(x, (h, c))
    h_ref, c_ref = ref(x, (h, c))
    torch.testing.assert_close(h1, h_ref)
    torch.testing.assert_close(c1, c_ref)
    assert gates.shape == (3, 2, 6)
    assert bool(((gates > 0) & (gates < 1)).all())


@pytest.mark.parametrize("cell", [VanillaCell(3, 5), FusedLSTMCell(3, 5)])
def test_padded_row_ends_in_the_state_it_reaches_alone(cell: nn.Module) -> None:
    x = torch.randn(2, 9, 3)
    lengths = torch.tensor([4, 9])
    h, _ = unroll_masked(cell, x, lengths)
    alone, _ = unroll_masked(cell, x[:1, :4], torch.tensor([4]))
    torch.testing.assert_close(h[0], alone[0])
    garbage = x.clone()
    garbage[0, 4:] = 100.0  # what sits on padded steps must not matter
    torch.testing.assert_close(unroll_masked(cell, garbage, lengths)[0], h)


def test_unroll_masked_rejects_bad_lengths() -> None:
    with pytest.raises(ValueError, match="lengths"):
        unroll_masked(VanillaCell(3, 4), torch.randn(2, 5, 3), torch.tensor([0, 5]))
    with pytest.raises(ValueError, match="x must be"):
        unroll_masked(VanillaCell(3, 4), torch.randn(5, 3), torch.tensor([5]))


def test_padding_row_stays_zero_and_gets_no_gradient() -> None:
    net = ScratchClassifier("lstm", 4, 6)
    ids, lengths = pad_passages(["abc", "de"])
    assert ids[1, 2].item() == PAD
    assert lengths.tolist() == [3, 2]
    net(ids, lengths).sum().backward()
    assert torch.all(net.embed.weight[PAD] == 0)
    assert torch.all(net.embed.weight.grad[PAD] == 0)
    with pytest.raises(ValueError, match="cell"):
        ScratchClassifier("gru", 4, 6)


def test_confusion_matrix_counts_true_by_predicted() -> None:
    counts = confusion_matrix(
        torch.tensor([0, 0, 1, 1, 1]), torch.tensor([0, 1, 1, 1, 0]), 2
    )
    assert counts.tolist() == [[1, 1], [1, 2]]
    with pytest.raises(ValueError, match="shape"):
        confusion_matrix(torch.tensor([0]), torch.tensor([0, 1]), 2)


def test_config_errors_name_the_argument() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        ScratchConfig(batch_size=3)
    with pytest.raises(ValueError, match="min_len"):
        ScratchConfig(min_len=70, max_len=64)


def test_tiny_training_records_norms_confusion_and_gates() -> None:
    letters = ALPHABET[9:]
    texts = {
        "a": "".join(letters[i % 5] for i in range(400)),
        "b": "".join(letters[10 + i % 7] for i in range(400)),
    }
    config = ScratchConfig(
        min_len=4,
        max_len=8,
        embedding_size=4,
        hidden_size=6,
        steps=30,
        batch_size=8,
        lr=2e-2,
        n_valid=20,
        block=20,
        cycle=4,
        probe_len=6,
    )
    result = train_scratch_classifier(texts, "lstm", seed=0, config=config)
    assert len(result["grad_norms"]) == 30
    assert min(result["grad_norms"]) > 0
    assert sum(map(sum, result["confusion"])) == 40
    assert result["accuracy"] > 0.9  # two disjoint alphabets: easy
    assert len(result["gates"]) == 6
    assert all(len(g) == 3 for g in result["gates"])
    assert len(result["probe"]) == 6


def test_cells_refuse_widths_below_one_naming_the_argument() -> None:
    for cls in (VanillaCell, FusedLSTMCell):
        with pytest.raises(ValueError, match="^input_size must be an int >= 1"):
            cls(0, 5)
        with pytest.raises(ValueError, match="^hidden_size must be an int >= 1"):
            cls(3, 0)


def test_initial_states_are_zeros_of_batch_by_hidden() -> None:
    """One (B, H) zero tensor per carried state: h for the vanilla cell, h and c for the
    LSTM."""
    (h,) = VanillaCell(3, 5).initial_state(4)
    assert h.shape == (4, 5)
    assert torch.all(h == 0)
    h, c = FusedLSTMCell(3, 5).initial_state(4)
    assert h.shape == c.shape == (4, 5)
    assert torch.all(h == 0)
    assert torch.all(c == 0)


def test_fused_lstm_cell_sets_only_the_forget_block_to_one_by_default() -> None:
    cell = FusedLSTMCell(4, 6)
    bias = cell.fused.bias.detach()
    assert torch.all(bias[6:12] == 1.0)
    # i, g and o keep nn.Linear's initialisation, uniform in +-1/sqrt(fan_in) =
    # +-1/sqrt(H + F)
    others = torch.cat([bias[:6], bias[12:]])
    assert others.abs().max() <= (6 + 4) ** -0.5


def test_unroll_masked_accepts_length_one_and_a_single_step() -> None:
    cell = FusedLSTMCell(3, 4)
    x = torch.randn(2, 3, 3)
    h, gates = unroll_masked(cell, x, torch.tensor([1, 3]))
    (h_one, _), _ = cell(x[:1, 0], cell.initial_state(1))
    # a passage of one character: one step, then held
    torch.testing.assert_close(h[0], h_one[0])
    assert gates.shape == (3, 3, 2, 4)
    # one time step only: the gate trace is that step's gates
    h, gates = unroll_masked(cell, x[:, :1], torch.tensor([1, 1]))
    (h_ref, _), g_ref = cell(x[:, 0], cell.initial_state(2))
    torch.testing.assert_close(h, h_ref)
    torch.testing.assert_close(gates, g_ref[None])
    h, gates = unroll_masked(VanillaCell(3, 4), x[:, :1], torch.tensor([1, 1]))
    assert h.shape == (2, 4)
    assert gates is None


def test_scratch_classifier_builds_the_cell_it_is_named_for() -> None:
    rnn = ScratchClassifier("rnn", 4, 6)
    assert isinstance(rnn.cell, VanillaCell)
    assert rnn.cell.input_map.in_features == 4
    assert rnn.cell.hidden_size == 6
    lstm = ScratchClassifier("lstm", 4, 6)
    assert isinstance(lstm.cell, FusedLSTMCell)
    # the alphabet plus one padding row; two classes unless told
    assert lstm.embed.weight.shape == (PAD + 1, 4) == (len(ALPHABET) + 1, 4)
    ids, lengths = pad_passages(["abc", "d"])
    assert lstm(ids, lengths).shape == (2, 2)
    assert rnn(ids, lengths).shape == (2, 2)
    assert ScratchClassifier("rnn", 4, 6, classes=3)(ids, lengths).shape == (2, 3)


def test_pad_passages_takes_one_character_passages_and_refuses_empty_ones() -> None:
    ids, lengths = pad_passages(["a", "bc"])
    assert ids.tolist() == [
        [ALPHABET.index("a"), PAD],
        [ALPHABET.index("b"), ALPHABET.index("c")],
    ]
    assert lengths.tolist() == [1, 2]
    with pytest.raises(ValueError, match="passages"):
        pad_passages([])
    with pytest.raises(ValueError, match="passages"):
        pad_passages(["ab", ""])


@pytest.mark.parametrize(
    "name",
    [
        "min_len",
        "max_len",
        "embedding_size",
        "hidden_size",
        "steps",
        "batch_size",
        "n_valid",
        "block",
        "probe_len",
    ],
)
def test_config_refuses_counts_below_one_naming_the_field(name: str) -> None:
    with pytest.raises(ValueError, match=f"^{name} must be an int >= 1; got 0"):
        ScratchConfig(**{name: 0})


def test_config_accepts_passages_as_long_as_a_block() -> None:
    config = ScratchConfig(min_len=1, max_len=20, block=20, probe_len=20, batch_size=2)
    assert (config.max_len, config.probe_len, config.block) == (20, 20, 20)
    with pytest.raises(ValueError, match="probe_len"):
        ScratchConfig(max_len=20, block=20, probe_len=21)


def _two_authors() -> dict[str, str]:
    """Two random texts over overlapping letters (a-m and f-z), of different lengths: a
    hard task for a few steps."""
    gen = torch.Generator().manual_seed(11)
    first = "".join(
        ALPHABET[i] for i in torch.randint(9, 22, (600,), generator=gen).tolist()
    )
    second = "".join(
        ALPHABET[i] for i in torch.randint(14, 35, (520,), generator=gen).tolist()
    )
    return {"first": first, "second": second}


TINY = ScratchConfig(
    min_len=2,
    max_len=6,
    embedding_size=4,
    hidden_size=5,
    steps=3,
    batch_size=6,
    lr=2e-2,
    n_valid=12,
    block=20,
    cycle=4,
    probe_len=5,
    clip=0.1,
)


def _drawn(
    splits: list[list[str]], n: int, low: int, high: int, gen: torch.Generator
) -> list[str]:
    """The recipe of _mixed written out: per author, n passages of ``high`` characters,
    then n cuts in [low, high]."""
    passages = []
    for blocks in splits:
        full = sample_passages(blocks, n, high, gen)
        cuts = torch.randint(low, high + 1, (n,), generator=gen).tolist()
        passages += [p[:k] for p, k in zip(full, cuts, strict=True)]
    return passages


def test_mixed_draws_from_its_stream_and_cuts_to_lengths_in_bounds() -> None:
    blocks = [split_blocks(t, TINY.block, TINY.cycle) for t in _two_authors().values()]
    passages, labels = _mixed(
        blocks, 50, TINY, torch.Generator().manual_seed(4), "valid"
    )
    assert passages == _drawn(
        [b.valid for b in blocks], 50, 2, 6, torch.Generator().manual_seed(4)
    )
    assert labels.tolist() == [0] * 50 + [1] * 50
    # both bounds reached, nothing outside
    assert {len(p) for p in passages} == {2, 3, 4, 5, 6}
    assert all(p in "".join(blocks[0].valid) for p in passages[:50])


def test_train_scratch_classifier_matches_its_steps_written_out() -> None:
    """The training stream (seed + 1), Adam on the clipped gradient, the validation and
    probe passages (seed + 2, one stream), the confusion counts and the probe's gates,
    reproduced by hand from the seed."""
    texts, seed, config = _two_authors(), 7, TINY
    before = time.perf_counter()
    result = train_scratch_classifier(texts, "lstm", seed=seed, config=config)
    elapsed = time.perf_counter() - before
    assert set(result) == {
        "cell",
        "authors",
        "accuracy",
        "confusion",
        "losses",
        "grad_norms",
        "seconds",
        "probe",
        "probe_author",
        "probe_confidence",
        "gates",
    }
    assert result["cell"] == "lstm"
    assert result["authors"] == ["first", "second"]
    assert 0 < result["seconds"] <= elapsed

    blocks = [split_blocks(t, config.block, config.cycle) for t in texts.values()]
    n_train = min(len(b.train) for b in blocks)
    train = [evenly(b.train, n_train) for b in blocks]
    valid = [b.valid for b in blocks]
    torch.manual_seed(seed)
    net = ScratchClassifier("lstm", 4, 5, 2)
    opt = torch.optim.Adam(net.parameters(), lr=config.lr)
    data = torch.Generator().manual_seed(seed + 1)
    labels = torch.tensor([0, 0, 0, 1, 1, 1])  # half of the batch of 6 from each author
    losses, norms = [], []
    for _ in range(config.steps):
        passages = _drawn(train, 3, 2, 6, data)
        loss = nn.functional.cross_entropy(net(*pad_passages(passages)), labels)
        opt.zero_grad()
        loss.backward()
        grads = torch.cat(
            [p.grad.flatten() for p in net.parameters() if p.grad is not None]
        )
        norms.append(float(grads.norm()))
        nn.utils.clip_grad_norm_(net.parameters(), config.clip)
        opt.step()
        losses.append(loss.item())
    assert result["losses"] == losses
    assert result["grad_norms"] == pytest.approx(norms, rel=1e-6)
    # the clip bites at least once, so the norm recorded is the one before
    assert max(norms) > config.clip

    valid_gen = torch.Generator().manual_seed(seed + 2)
    passages = _drawn(valid, 12, 2, 6, valid_gen)
    truth = [0] * 12 + [1] * 12
    with torch.no_grad():
        predicted = net(*pad_passages(passages)).argmax(dim=1).tolist()
    counts = [[0, 0], [0, 0]]
    for t, q in zip(truth, predicted, strict=True):
        counts[t][q] += 1
    assert result["confusion"] == counts
    assert result["accuracy"] == pytest.approx(
        sum(t == q for t, q in zip(truth, predicted, strict=True)) / 24
    )
    # some passages are misread: which ones were drawn matters
    assert 0 < result["accuracy"] < 1

    # the same stream, after the validation passages
    probes = _drawn(valid, 12, 5, 5, valid_gen)
    # nearly all different: which one is best depends on the draw
    assert len(set(probes)) > 20
    with torch.no_grad():
        ids, lengths = pad_passages(probes)
        confidence = net(ids, lengths).softmax(dim=1)[
            torch.arange(24), torch.tensor(truth)
        ]
        best = int(confidence.argmax())
        state, gates = net.cell.initial_state(1), []
        for t in range(5):
            state, g = net.cell(net.embed(ids[best : best + 1, t]), state)
            # (3,): i, f, o averaged over the hidden units
            gates.append(g[:, 0].mean(dim=-1).tolist())
    assert result["probe"] == probes[best]
    assert result["probe_author"] == ["first", "second"][truth[best]]
    assert result["probe_confidence"] == pytest.approx(float(confidence[best]))
    torch.testing.assert_close(torch.tensor(result["gates"]), torch.tensor(gates))


def test_train_scratch_classifier_with_the_vanilla_cell_traces_no_gates() -> None:
    result = train_scratch_classifier(
        _two_authors(), "rnn", seed=0, config=replace(TINY, steps=1)
    )
    assert set(result) == {
        "cell",
        "authors",
        "accuracy",
        "confusion",
        "losses",
        "grad_norms",
        "seconds",
    }
    assert result["cell"] == "rnn"
    torch.manual_seed(0)
    assert isinstance(ScratchClassifier("rnn", 4, 5).cell, VanillaCell)


def test_scratch_shakespeare_milton_reads_both_corpora_normalized(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = _two_authors()
    monkeypatch.setattr(
        scratch_classifier,
        "shakespeare_text",
        lambda: "HAMLET.\n" + texts["first"].capitalize(),
    )
    monkeypatch.setattr(
        scratch_classifier, "milton_text", lambda: "BOOK I.\n" + texts["second"]
    )
    short = replace(TINY, steps=2)
    result = scratch_classifier.scratch_shakespeare_milton("rnn", seed=1, config=short)
    assert result["authors"] == ["Shakespeare", "Milton"]
    assert result["cell"] == "rnn"
    # normalized, the headings and the capital are gone: the two texts as drawn
    expected = train_scratch_classifier(
        {"Shakespeare": texts["first"], "Milton": texts["second"]},
        "rnn",
        seed=1,
        config=short,
    )
    assert result["losses"] == expected["losses"]
    assert result["confusion"] == expected["confusion"]
    assert scratch_classifier.CORPUS_FILES == (
        "data/shakespeare.txt",
        "data/milton.txt",
    )
