"""Tests for chapter_code.depth.layers: parameter counts against PyTorch's modules,
shapes, the trap's scoring, tags."""

from __future__ import annotations

import dataclasses
import re

import pytest
import torch
from torch import nn

from chapter_code.corpora.texts import Splits
from chapter_code.depth import layers as depth
from chapter_code.depth.layers import (
    DirectionalLM,
    Tagger,
    TrapConfig,
    fit_tagger,
    generate_rereading,
    layer_input_sizes,
    layer_parameters,
    long_word_tags,
    module_layer_parameters,
    prefix_only_loss,
    stack_parameters,
    tag_accuracy_by_letter,
)
from chapter_code.lm.char_lm import TrainConfig, Vocab
from chapter_code.sampling.rules import greedy


@pytest.mark.parametrize(
    ("cls", "cell"), [(nn.RNN, "rnn"), (nn.GRU, "gru"), (nn.LSTM, "lstm")]
)
@pytest.mark.parametrize(
    ("layers", "bidirectional"), [(1, False), (3, False), (2, True)]
)
def test_stack_counts_match_modules(cls, cell, layers, bidirectional) -> None:
    module = cls(7, 5, num_layers=layers, bidirectional=bidirectional)
    assert stack_parameters(
        cell, 7, 5, layers, bidirectional
    ) == module_layer_parameters(module)


def test_textbook_count_is_one_bias_short() -> None:
    # 4h(d+h+1) counts one bias vector; PyTorch keeps two, 4h more
    assert layer_parameters("lstm", 10, 6, bias_vectors=1) == 4 * 6 * (10 + 6 + 1)
    assert (
        layer_parameters("lstm", 10, 6)
        - layer_parameters("lstm", 10, 6, bias_vectors=1)
        == 4 * 6
    )
    assert layer_parameters("gru", 10, 6, bias_vectors=1) == 3 * 6 * 17


def test_second_layer_reads_hidden_or_both_directions() -> None:
    assert layer_input_sizes(10, 6, 3) == [10, 6, 6]
    assert layer_input_sizes(10, 6, 2, bidirectional=True) == [10, 12]


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"cell": "tanh"}, "cell"),
        ({"input_size": 0}, "input_size"),
        ({"bias_vectors": 3}, "bias_vectors"),
    ],
)
def test_bad_counts_named(kwargs, name) -> None:
    args = {"cell": "lstm", "input_size": 3, "hidden_size": 4, **kwargs}
    with pytest.raises(ValueError, match=name):
        layer_parameters(**args)


def test_bidirectional_output_doubles_width() -> None:
    torch.manual_seed(0)
    model = DirectionalLM(11, 4, 6, bidirectional=True)
    logits, (h, c) = model(torch.randint(0, 11, (3, 9)))
    assert logits.shape == (3, 9, 11)
    assert h.shape == (2, 3, 6)
    assert c.shape == (2, 3, 6)


def test_bidirectional_position_sees_the_future_causal_does_not() -> None:
    torch.manual_seed(0)
    for bidirectional in (False, True):
        model = DirectionalLM(11, 4, 6, bidirectional=bidirectional).eval()
        x = torch.randint(0, 11, (1, 9))
        y = x.clone()
        y[0, 5] = (x[0, 5] + 1) % 11  # change a later token
        with torch.no_grad():
            changed = (model(x)[0][0, 2] - model(y)[0][0, 2]).abs().max().item()
        assert (changed > 0) == bidirectional


def test_prefix_only_loss_matches_last_position_scores() -> None:
    torch.manual_seed(1)
    model = DirectionalLM(5, 3, 4, bidirectional=True).eval()
    ids = torch.randint(0, 5, (20,))
    loss = prefix_only_loss(model, ids, context=6, positions=4)
    by_hand = []
    for j in range(4):
        logits, _ = model(ids[j : j + 6].unsqueeze(0))
        by_hand.append(-torch.log_softmax(logits[0, -1], -1)[ids[j + 6]].item())
    assert loss == pytest.approx(sum(by_hand) / 4, rel=1e-5)
    with pytest.raises(ValueError, match="context"):
        prefix_only_loss(model, ids, context=0, positions=4)
    with pytest.raises(ValueError, match="at least"):
        prefix_only_loss(model, ids, context=18, positions=4)


def test_generate_rereading_is_seeded_and_sized() -> None:
    torch.manual_seed(2)
    model = DirectionalLM(5, 3, 4, bidirectional=True)
    out = generate_rereading(
        model,
        torch.tensor([1, 2]),
        7,
        greedy,
        torch.Generator().manual_seed(0),
        context=4,
    )
    again = generate_rereading(
        model,
        torch.tensor([1, 2]),
        7,
        greedy,
        torch.Generator().manual_seed(0),
        context=4,
    )
    assert out.shape == (7,)
    assert torch.equal(out, again)
    with pytest.raises(ValueError, match="steps"):
        generate_rereading(model, torch.tensor([1]), -1, greedy, torch.Generator())


def test_long_word_tags() -> None:
    tags = long_word_tags("a castle, is big; sword", min_letters=5)
    text = "a castle, is big; sword"
    assert "".join(str(int(t)) for t in tags) == "".join(
        "1" if (i in range(2, 8) or i in range(18, 23)) else "0"
        for i in range(len(text))
    )
    with pytest.raises(ValueError, match="min_letters"):
        long_word_tags("x", 0)


def test_tagger_shapes() -> None:
    torch.manual_seed(0)
    assert Tagger(9, 4, 5, bidirectional=True)(torch.randint(0, 9, (2, 7))).shape == (
        2,
        7,
        2,
    )


def test_scale_figure_draws_every_seed() -> None:
    from chapter_code.depth.figures import plot_scale

    fig = plot_scale(
        {"small": (1000, [3.0, 3.2, 3.1]), "large": (4000, [2.0, 2.1, 2.2])}, "#0072B2"
    )
    dots = [
        line
        for line in fig.axes[0].lines
        if line.get_linestyle() == "None" and len(line.get_xdata()) == 3
    ]
    assert len(dots) == 2
    with pytest.raises(ValueError, match="sizes"):
        plot_scale({}, "#000000")


# ----------------------------------------------- training and loading, on a tiny corpus

# 'z', 'q' only at the end
_TEXT = "the castle stood upon the hill, and the river ran below it. " * 12 + "zq"


def _splits(corpus: str) -> Splits:
    if corpus != "shakespeare":  # the corpus asked for is the one read
        raise ValueError(f"no corpus {corpus!r} here")
    return Splits(_TEXT, "unused", "unused")


def _tiny(monkeypatch: pytest.MonkeyPatch, steps: int = 3, seed: int = 0) -> TrapConfig:
    monkeypatch.setattr(depth, "corpus_splits", _splits)
    return TrapConfig(
        train_chars=300,
        embedding_size=4,
        hidden_size=6,
        seed=seed,
        train=TrainConfig(window=8, batch_size=4, steps=steps, lr=1e-2, log_every=1),
    )


def test_slice_is_the_head_of_train_with_the_whole_split_vocabulary(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = _tiny(monkeypatch)
    seen = {}

    def spy(model, ids, train_config, generator):
        seen.update(ids=ids, config=train_config, generator=generator)
        return [(1, 0.0)]

    monkeypatch.setattr(depth, "fit_next_token", spy)
    result = depth.train_directional("shakespeare", config, bidirectional=False)
    # 'z' and 'q' lie beyond the slice but are in the vocabulary
    assert result["chars"] == sorted(set(_TEXT))
    assert "".join(result["chars"][i] for i in seen["ids"]) == _TEXT[:300]
    assert seen["config"] == config.train
    # the windows come from their own seeded generator
    assert isinstance(seen["generator"], torch.Generator)
    assert seen["generator"].initial_seed() == config.seed
    full = dataclasses.replace(config, train_chars=len(_TEXT))
    assert (
        depth.train_directional("shakespeare", full, bidirectional=False)["chars"]
        == result["chars"]
    )
    with pytest.raises(ValueError, match=f"train_chars must be at most {len(_TEXT)}"):
        depth.train_directional(
            "shakespeare",
            dataclasses.replace(config, train_chars=len(_TEXT) + 1),
            False,
        )


@pytest.mark.parametrize("bidirectional", [False, True])
def test_train_directional_round_trips_through_load(
    monkeypatch: pytest.MonkeyPatch, bidirectional: bool
) -> None:
    config = _tiny(monkeypatch)
    result = depth.train_directional("shakespeare", config, bidirectional)
    assert result["bidirectional"] is bidirectional
    assert [s for s, _ in result["history"]] == [1, 2, 3]
    torch.manual_seed(config.seed)
    untrained = DirectionalLM(len(result["chars"]), 4, 6, bidirectional)
    assert any(
        not torch.equal(v, untrained.state_dict()[k])
        for k, v in result["state_dict"].items()
    )
    model, vocab = depth.load_directional(result, config)
    assert not model.training
    assert vocab.chars == result["chars"]
    assert model.bidirectional is bidirectional
    for k, v in model.state_dict().items():
        assert torch.equal(v, result["state_dict"][k])
    # seeded: the same weights
    again = depth.train_directional("shakespeare", config, bidirectional)
    assert all(
        torch.equal(v, again["state_dict"][k]) for k, v in result["state_dict"].items()
    )
    other = depth.train_directional(
        "shakespeare", _tiny(monkeypatch, seed=1), bidirectional
    )
    assert not torch.equal(
        other["state_dict"]["readout.weight"], result["state_dict"]["readout.weight"]
    )


def test_train_tagger_uses_the_slice_tags_and_round_trips(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = _tiny(monkeypatch, steps=2)
    seen = {}
    real = depth.fit_tagger

    def spy(model, ids, tags, train_config, generator):
        seen.update(ids=ids, tags=tags, config=train_config, generator=generator)
        return real(model, ids, tags, train_config, generator)

    monkeypatch.setattr(depth, "fit_tagger", spy)
    result = depth.train_tagger(
        "shakespeare", config, bidirectional=True, min_letters=4
    )
    assert torch.equal(seen["tags"], long_word_tags(_TEXT[:300], 4))
    assert "".join(result["chars"][i] for i in seen["ids"]) == _TEXT[:300]
    assert seen["config"] == config.train
    assert isinstance(seen["generator"], torch.Generator)
    assert seen["generator"].initial_seed() == config.seed
    assert result["bidirectional"] is True
    assert [s for s, _ in result["history"]] == [1, 2]
    tagger, vocab = depth.load_tagger(result, config)
    assert not tagger.training
    assert vocab.chars == result["chars"]
    for k, v in tagger.state_dict().items():
        assert torch.equal(v, result["state_dict"][k])
    assert tagger(vocab.encode("the river").unsqueeze(0)).shape == (1, 9, 2)
    # min_letters defaults to 5
    default = depth.train_tagger("shakespeare", config, bidirectional=False)
    assert torch.equal(seen["tags"], long_word_tags(_TEXT[:300], 5))
    assert default["bidirectional"] is False


def test_fit_tagger_learns_logs_and_checks_its_input() -> None:
    torch.manual_seed(0)
    ids = torch.randint(0, 4, (200,))
    tags = (ids == 2).long()  # a tag readable from the token itself
    model = Tagger(4, 3, 4, bidirectional=False)
    config = TrainConfig(window=6, batch_size=4, steps=25, lr=5e-2, log_every=10)
    history = fit_tagger(model, ids, tags, config, torch.Generator().manual_seed(0))
    assert [s for s, _ in history] == [10, 20, 25]
    with torch.no_grad():
        accuracy = (model(ids.unsqueeze(0))[0].argmax(-1) == tags).float().mean().item()
    assert accuracy == 1.0
    assert (
        history[-1][1]
        < 0.5 * nn.functional.cross_entropy(torch.zeros(1, 2), torch.tensor([0])).item()
    )
    with pytest.raises(ValueError, match="longer than window"):
        fit_tagger(model, ids[:6], tags[:6], config, torch.Generator())
    with pytest.raises(ValueError, match="equal length"):
        fit_tagger(model, ids, tags[:-1], config, torch.Generator())
    # the shortest accepted text has one window start; every window must stay inside it
    short = TrainConfig(window=6, batch_size=4, steps=12, lr=1e-2, log_every=5)
    assert (
        len(
            fit_tagger(
                model, ids[:7], tags[:7], short, torch.Generator().manual_seed(1)
            )
        )
        == 3
    )


def test_fit_tagger_reads_whole_windows_from_its_generator() -> None:
    ids = torch.arange(30)  # distinct tokens: a window is a run of consecutive ids
    tags = (ids % 3 == 0).long()
    batches = []

    def record(module, inputs):
        batches.append(inputs[0].clone())

    runs = []
    # the global generator must not matter, only the one passed in
    for global_seed in (0, 1):
        torch.manual_seed(5)
        model = Tagger(30, 3, 4, bidirectional=False)
        model.register_forward_pre_hook(record)
        torch.manual_seed(global_seed)
        config = TrainConfig(window=5, batch_size=3, steps=2, lr=1e-2, log_every=1)
        runs.append(
            fit_tagger(model, ids, tags, config, torch.Generator().manual_seed(7))
        )
    assert runs[0] == runs[1]
    assert torch.equal(batches[0], batches[2])
    for batch in batches:
        assert batch.shape == (3, 5)
        # consecutive, forwards
        assert torch.equal(batch - batch[:, :1], torch.arange(5).expand(3, 5))
        assert int(batch.max()) <= 29


class _Constant(nn.Module):
    """A tagger that answers ``label`` everywhere."""

    def __init__(self, label: int) -> None:
        super().__init__()
        self.label = label

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        logits = torch.zeros(*tokens.shape, 2)
        logits[..., self.label] = 1.0
        return logits


def test_tag_accuracy_by_letter_by_hand() -> None:
    # windows of 8: "ab cdef " and "g hi jkl" (the last character is dropped); with
    # min_letters 3, "cdef" and "jkl" are long. "jkl" touches the window's end, so it is
    # not scored. Letter indices: a c g h = 1, b d i = 2, e f = 3 (index 4 gathered into
    # max_index 3).
    text = "ab cdef g hi jklm"
    vocab = Vocab(text)
    zero = tag_accuracy_by_letter(
        _Constant(0), vocab, text, window=8, min_letters=3, max_index=3
    )
    assert zero == pytest.approx({1: 3 / 4, 2: 2 / 3, 3: 0.0})
    one = tag_accuracy_by_letter(
        _Constant(1), vocab, text, window=8, min_letters=3, max_index=3
    )
    assert one == pytest.approx({1: 1 / 4, 2: 1 / 3, 3: 1.0})
    assert list(one) == [1, 2, 3]
    wide = tag_accuracy_by_letter(
        _Constant(1), vocab, text, window=8, min_letters=3, max_index=6
    )
    assert wide == pytest.approx({1: 1 / 4, 2: 1 / 3, 3: 1.0, 4: 1.0})
    with pytest.raises(ValueError, match="window"):
        tag_accuracy_by_letter(_Constant(0), vocab, text, window=0)


def test_tag_accuracy_leaves_out_words_cut_by_a_window_edge() -> None:
    # windows "ab cdefg" and "hij kl m": "cdefghij" is cut by the edge, "m" touches the
    # end; only "ab" and "kl" (short words, tag 0) are scored, so answering 0 everywhere
    # is right on every scored letter
    text = "ab cdefghij kl mn"
    vocab = Vocab(text)
    assert tag_accuracy_by_letter(_Constant(0), vocab, text, window=8) == {
        1: 1.0,
        2: 1.0,
    }
    assert tag_accuracy_by_letter(_Constant(1), vocab, text, window=8) == {
        1: 0.0,
        2: 0.0,
    }
    # a word that starts a later window after a non-letter is whole: "g" here
    assert (
        tag_accuracy_by_letter(
            _Constant(0),
            Vocab("ab cdef g hi jkl"),
            "ab cdef g hi jkl",
            window=8,
            min_letters=3,
            max_index=3,
        )[1]
        == 3 / 4
    )


# --------------------------------------------------------- argument checks and defaults

_SIZE_CHECKS = [
    (lambda v: layer_parameters("lstm", v, 4), "input_size"),
    (lambda v: layer_parameters("lstm", 3, v), "hidden_size"),
    (lambda v: layer_input_sizes(v, 4, 2), "input_size"),
    (lambda v: layer_input_sizes(3, v, 2), "hidden_size"),
    (lambda v: layer_input_sizes(3, 4, v), "num_layers"),
    (lambda v: DirectionalLM(v, 4, 5, False), "vocab_size"),
    (lambda v: DirectionalLM(9, v, 5, False), "embedding_size"),
    (lambda v: DirectionalLM(9, 4, v, False), "hidden_size"),
    (lambda v: long_word_tags("abc", v), "min_letters"),
]


@pytest.mark.parametrize(("call", "name"), _SIZE_CHECKS)
@pytest.mark.parametrize("bad", [0, -1, True, 2.0])
def test_sizes_must_be_positive_ints_and_are_named(call, name, bad) -> None:
    with pytest.raises(
        ValueError, match=rf"^{name} must be an int >= 1; got {re.escape(repr(bad))}$"
    ):
        call(bad)


def test_counts_accept_no_bias_and_pass_bias_vectors_on() -> None:
    assert layer_parameters("lstm", 3, 4, bias_vectors=0) == 4 * 4 * 7
    assert stack_parameters("gru", 3, 4, 1, bias_vectors=1) == [3 * 4 * (3 + 4 + 1)]
    assert stack_parameters("lstm", 7, 5, 2) == module_layer_parameters(
        nn.LSTM(7, 5, num_layers=2)
    )  # one-way


def test_long_word_tags_defaults_and_text_end() -> None:
    tags = long_word_tags("four fives")  # min_letters 5 by default
    assert tags.dtype == torch.long
    assert tags.tolist() == [0] * 5 + [1] * 5
    # the last word ends with the text
    assert long_word_tags("a big", 5).tolist() == [0] * 5


def test_directional_lm_checks_tokens_and_carries_state() -> None:
    torch.manual_seed(0)
    model = DirectionalLM(7, 3, 4, bidirectional=False).eval()
    with pytest.raises(ValueError, match="tokens"):
        model(torch.zeros(1, 5))  # float
    with pytest.raises(ValueError, match="tokens"):
        model(torch.zeros(1, 5, 1, dtype=torch.long))  # three axes
    x = torch.randint(0, 7, (2, 10))
    with torch.no_grad():
        whole, _ = model(x)
        _, state = model(x[:, :6])
        rest, _ = model(x[:, 6:], state)
    # the state passed in is the one continued from
    assert torch.allclose(rest, whole[:, 6:], atol=1e-6)


def test_tagger_reads_one_or_both_directions() -> None:
    assert Tagger(9, 4, 5, bidirectional=False).lm.readout.in_features == 5
    assert Tagger(9, 4, 5, bidirectional=True).lm.readout.in_features == 10
