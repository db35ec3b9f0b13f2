"""Tests for chapter_code.depth: parameter counts against PyTorch's modules, shapes, the trap's scoring, tags."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from chapter_code.depth import (
    DirectionalLM,
    Tagger,
    generate_rereading,
    layer_input_sizes,
    layer_parameters,
    long_word_tags,
    module_layer_parameters,
    prefix_only_loss,
    stack_parameters,
)
from chapter_code.sampling import greedy


@pytest.mark.parametrize(("cls", "cell"), [(nn.RNN, "rnn"), (nn.GRU, "gru"), (nn.LSTM, "lstm")])
@pytest.mark.parametrize(("layers", "bidirectional"), [(1, False), (3, False), (2, True)])
def test_stack_counts_match_modules(cls, cell, layers, bidirectional) -> None:
    module = cls(7, 5, num_layers=layers, bidirectional=bidirectional)
    assert stack_parameters(cell, 7, 5, layers, bidirectional) == module_layer_parameters(module)


def test_textbook_count_is_one_bias_short() -> None:
    # 4h(d+h+1) counts one bias vector; PyTorch keeps two, 4h more
    assert layer_parameters("lstm", 10, 6, bias_vectors=1) == 4 * 6 * (10 + 6 + 1)
    assert layer_parameters("lstm", 10, 6) - layer_parameters("lstm", 10, 6, bias_vectors=1) == 4 * 6
    assert layer_parameters("gru", 10, 6, bias_vectors=1) == 3 * 6 * 17


def test_second_layer_reads_hidden_or_both_directions() -> None:
    assert layer_input_sizes(10, 6, 3) == [10, 6, 6]
    assert layer_input_sizes(10, 6, 2, bidirectional=True) == [10, 12]


@pytest.mark.parametrize(("kwargs", "name"), [({"cell": "tanh"}, "cell"), ({"input_size": 0}, "input_size"),
                                         ({"bias_vectors": 3}, "bias_vectors")])
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
    out = generate_rereading(model, torch.tensor([1, 2]), 7, greedy, torch.Generator().manual_seed(0), context=4)
    again = generate_rereading(model, torch.tensor([1, 2]), 7, greedy, torch.Generator().manual_seed(0), context=4)
    assert out.shape == (7,)
    assert torch.equal(out, again)
    with pytest.raises(ValueError, match="steps"):
        generate_rereading(model, torch.tensor([1]), -1, greedy, torch.Generator())


def test_long_word_tags() -> None:
    tags = long_word_tags("a castle, is big; sword", min_letters=5)
    text = "a castle, is big; sword"
    assert "".join(str(int(t)) for t in tags) == "".join(
        "1" if (i in range(2, 8) or i in range(18, 23)) else "0" for i in range(len(text)))
    with pytest.raises(ValueError, match="min_letters"):
        long_word_tags("x", 0)


def test_tagger_shapes() -> None:
    torch.manual_seed(0)
    assert Tagger(9, 4, 5, bidirectional=True)(torch.randint(0, 9, (2, 7))).shape == (2, 7, 2)


def test_scale_figure_draws_every_seed() -> None:
    from chapter_code.depth_figures import plot_scale

    fig = plot_scale({"small": (1000, [3.0, 3.2, 3.1]), "large": (4000, [2.0, 2.1, 2.2])}, "#0072B2")
    dots = [line for line in fig.axes[0].lines if line.get_linestyle() == "None" and len(line.get_xdata()) == 3]
    assert len(dots) == 2
    with pytest.raises(ValueError, match="sizes"):
        plot_scale({}, "#000000")
