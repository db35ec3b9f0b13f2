"""Lab for "Depth, direction and scale": a bidirectional layer, a stack, and the
bidirectional trap's honest score.
"""

from __future__ import annotations

from bookbuild.tools.labs import Exercise, Lab, Prediction

# V = 5
_IDS = [
    0,
    1,
    2,
    3,
    4,
    4,
    3,
    1,
    0,
    2,
    2,
    2,
    1,
    3,
    0,
    4,
    1,
    1,
    2,
    0,
    3,
    3,
    4,
    0,
    1,
    2,
    4,
    3,
    2,
    1,
]


def checkpoint_bidirectional_states(bidirectional_states):
    """Against nn.GRU(bidirectional=True) with the same weights, half by half, and the
    forward half's causality.
    """
    import torch
    from torch import nn

    torch.manual_seed(60)
    both = nn.GRU(3, 4, batch_first=True, bidirectional=True)
    fwd, bwd = nn.GRU(3, 4, batch_first=True), nn.GRU(3, 4, batch_first=True)
    with torch.no_grad():
        for name, p in fwd.named_parameters():  # weight_ih_l0, ...
            p.copy_(getattr(both, name))
            dict(bwd.named_parameters())[name].copy_(getattr(both, name + "_reverse"))
    x = torch.randn(2, 6, 3)
    want, _ = both(x)  # (B, T, 2H)
    got = bidirectional_states(x, fwd, bwd)
    assert tuple(got.shape) == (2, 6, 8), (
        f"the states should be (B, T, 2H) = (2, 6, 8), the two directions joined "
        f"on the last axis; got {tuple(got.shape)}"
    )
    assert (got[..., :4] - want[..., :4]).abs().max() < 1e-5, (
        "the first half (the forward layer's states) differs from nn.GRU's: the "
        "forward layer reads x as it is, and its states come first"
    )
    back, flipped = got[..., 4:], want[..., 4:].flip(1)
    if (back - flipped).abs().max() < 1e-5:
        raise AssertionError(
            "the backward half is in reversed time: position t must hold the state "
            "that has read x_T..x_t, so put the backward layer's states back in the "
            "order of the positions"
        )
    if (back - bwd(x)[0]).abs().max() < 1e-5:
        raise AssertionError(
            "the backward layer has read the sequence from its start: it should read "
            "x_T first"
        )
    gap = (back - want[..., 4:]).abs().max().item()
    assert gap < 1e-5, (
        "the second half (the backward layer's states) differs from nn.GRU's by up "
        f"to {gap:.3g}"
    )
    changed = x.clone()
    changed[:, -1] += 1.0
    later = bidirectional_states(changed, fwd, bwd)
    assert (later[:, :-1, :4] - got[:, :-1, :4]).abs().max() < 1e-6, (
        "changing only the last input changed earlier forward states: the forward "
        "half must not read ahead"
    )
    print(
        "Checkpoint passed: bidirectional_states matches nn.GRU(bidirectional=True), "
        "half by half"
    )


def checkpoint_stacked_states(stacked_states):
    """Against nn.LSTM(num_layers=3) with the same weights."""
    import torch
    from torch import nn

    torch.manual_seed(61)
    deep = nn.LSTM(3, 5, num_layers=3, batch_first=True)
    layers = [nn.LSTM(3 if k == 0 else 5, 5, batch_first=True) for k in range(3)]
    with torch.no_grad():
        for k, layer in enumerate(layers):
            for name, p in layer.named_parameters():
                p.copy_(getattr(deep, name.replace("_l0", f"_l{k}")))
    x = torch.randn(2, 4, 3)
    want, _ = deep(x)
    try:
        got = stacked_states(x, layers)
    except NotImplementedError:
        raise
    except RuntimeError as exc:
        raise AssertionError(
            f"stacked_states raised {exc!r}: layer 2 reads 5 features, the outputs of "
            "layer 1, not the 3 input features"
        ) from None
    assert isinstance(got, torch.Tensor), (
        f"stacked_states should return the top layer's states, one tensor; got "
        f"{type(got).__name__}"
    )
    assert tuple(got.shape) == (2, 4, 5), (
        f"the top layer's states are (B, T, H) = (2, 4, 5); got {tuple(got.shape)}"
    )
    if (got - layers[0](x)[0]).abs().max() < 1e-6:
        raise AssertionError(
            "you return the first layer's states: the result is the top layer's"
        )
    gap = (got - want).abs().max().item()
    assert gap < 1e-5, (
        "the top layer's states differ from nn.LSTM(num_layers=3)'s by up to "
        f"{gap:.3g}: each layer "
        "should read the whole output sequence of the layer below"
    )
    print("Checkpoint passed: stacked_states matches nn.LSTM(num_layers=3)")


class _Repeat:
    """For the reference: logits that bet on the last character read repeating (4 on its
    one-hot).
    """

    def eval(self):
        return self

    def parameters(self):  # where it computes, as a module's parameters say: the CPU
        import torch

        return iter([torch.zeros(0)])

    def __call__(self, tokens):
        import torch

        return 4.0 * torch.nn.functional.one_hot(tokens, 5).float(), None


def reference_prefix_only_loss() -> dict:
    import torch

    from chapter_code.depth.layers import prefix_only_loss

    score = prefix_only_loss(_Repeat(), torch.tensor(_IDS), 4, 20)
    return {"ids": _IDS, "repeat model, context 4, 20 positions": score}


def checkpoint_prefix_only_loss(prefix_only_loss, expected):
    """A model that reads ahead gains nothing; every window is `context` long; an honest
    model scores the book's.
    """
    import math

    import torch
    from torch.nn.functional import one_hot

    ids = torch.tensor(expected["ids"])

    # at position t it predicts tokens[t + 1] with confidence: it reads the window's
    # future
    class Peeker:
        def __init__(self):
            self.widths = []

        def eval(self):
            return self

        def parameters(self):  # it computes on the CPU
            return iter([torch.zeros(0)])

        def __call__(self, tokens):
            self.widths.append(tokens.shape[1])
            logits = torch.zeros(*tokens.shape, 5)
            # the last position has nothing to peek at
            logits[:, :-1] = 8.0 * one_hot(tokens[:, 1:], 5).float()
            return logits, None

    class Repeat:  # an honest model: it bets that the last character read comes again
        def eval(self):
            return self

        def parameters(self):
            return iter([torch.zeros(0)])

        def __call__(self, tokens):
            return 4.0 * one_hot(tokens, 5).float(), None

    peeker = Peeker()
    got = prefix_only_loss(peeker, ids, 4, 20)
    assert isinstance(got, float), (
        f"prefix_only_loss should return a Python float; got {type(got).__name__}"
    )
    assert all(w == 4 for w in peeker.widths), (
        f"every window the model reads should be context = 4 characters; "
        f"it read windows of {sorted(set(peeker.widths))}"
    )
    assert got > math.log(5) - 1e-4, (
        f"a model that reads ahead scored {got:.3f} nats, below the {math.log(5):.3f} "
        "of a uniform guess: the scored character was inside what the model read. "
        "Score each window at its last position only"
    )
    want = expected["repeat model, context 4, 20 positions"]
    honest = prefix_only_loss(Repeat(), ids, 4, 20)
    assert abs(honest - want) < 1e-5, (
        f"an honest model should score {want:.4f} nats here; got {honest:.4f}: "
        "window j is ids[j : j + context], "
        "scored on the character right after it, for j = 0 .. positions - 1"
    )
    print(
        "Checkpoint passed: prefix_only_loss scores every character from the "
        "characters before it only"
    )


PREDICTION = Prediction(
    question=(
        "A sequence of 8 steps goes through your `bidirectional_states`. Then only "
        "its last input, $x_8$, is changed. At position 1, which half of the state "
        "changes, the forward half, the backward half, both or neither? Guess the "
        "largest change of each half there as a number (0 if it cannot change)."
    ),
    guess=(
        "# your guesses, before you run the next cell (a number each)\n"
        "guess_forward_change = None\n"
        "guess_backward_change = None"
    ),
    measure="""\
torch.manual_seed(0)
forward, backward = nn.RNN(3, 4, batch_first=True), nn.RNN(3, 4, batch_first=True)
x = torch.randn(1, 8, 3)
changed = x.clone()
changed[:, -1] += 1.0  # only the last input moves
with torch.no_grad():
    before = bidirectional_states(x, forward, backward)  # (1, 8, 8)
    after = bidirectional_states(changed, forward, backward)
change = (after - before)[0].abs()  # (T, 2H)
measured_forward_change = change[0, :4].max().item()
measured_backward_change = change[0, 4:].max().item()""",
    compare="""\
print(f"forward half at position 1:  you guessed {guess_forward_change}, "
      f"measured {measured_forward_change:.3g}")
print(f"backward half at position 1: you guessed {guess_backward_change}, "
      f"measured {measured_backward_change:.3g}")
# The trap of the chapter: a bidirectional state at t has read the future.""",
)

STRETCH = (
    "Give `stacked_states` residual connections (each layer's input added to its "
    "output, where the sizes match) and measure how the top layer's gradient with "
    "respect to $x_1$ changes with 2, 4 and 8 layers, with and without them.",
    "Build a bidirectional, two-layer stack from your two functions and check it "
    "against `nn.LSTM(..., num_layers=2, bidirectional=True)` with copied weights.",
    "Train two tiny character models for 100 steps, one left to right and one "
    "bidirectional, and score both with your `prefix_only_loss`. Which one looks "
    "better under a loss that lets it see the target, and which one generates?",
)

RESULTS = """\
torch.manual_seed(1)
stack = [nn.GRU(3, 4, batch_first=True), nn.GRU(4, 4, batch_first=True),
         nn.GRU(4, 4, batch_first=True)]
with torch.no_grad():
    deep = (stacked_states(changed, stack) - stacked_states(x, stack))[0].abs()
print(f"{'position':>8} {'forward half':>13} {'backward half':>14} "
      f"{'3-layer stack':>14}")
for t in range(8):
    print(f"{t + 1:>8} {change[t, :4].max().item():>13.3g} "
          f"{change[t, 4:].max().item():>14.3g} {deep[t].max().item():>14.3g}")"""


LAB = Lab(
    slug="depth",
    chapter="book/depth",
    title="Lab 6: direction, depth and the bidirectional trap",
    intro=(
        "PyTorch builds a bidirectional layer and a stack of layers with two flags. "
        "You build both from one-layer modules and check them against the flags: a "
        "second layer that reads the sequence from its end, its states joined "
        "position by position to the forward layer's; then layers fed one into the "
        "next. Then the trap of the chapter: a bidirectional model trained as a "
        "language model has read the answer, so its training loss says nothing about "
        "generation. You write the score that a generator would see, and the "
        "checkpoint tries it on a model built to cheat."
    ),
    setup="import math\nfrom collections.abc import Sequence\n\nimport torch\nfrom "
    "torch import nn",
    prediction=PREDICTION,
    stretch=STRETCH,
    results=RESULTS,
    exercises=[
        Exercise(
            target="chapter_code.depth.directions:bidirectional_states",
            context=("chapter_code.depth.directions:_check_one_layer",),
            task=(
                "`forward` and `backward` are one-layer batch-first modules (each "
                "returns `(states, last)`). Return `(B, T, 2H)`: at position $t$ the "
                "forward state, which has read $x_1..x_t$, joined with the backward "
                "state, which has read $x_T..x_t$."
            ),
            hints=(
                "A module only reads forwards in time. How do you make one read a "
                "sequence from its end, and in "
                "which order do its outputs then come out?",
                "Run `forward` on `x`; run `backward` on `x.flip(1)`; flip the "
                "backward states back along time "
                "before `torch.cat` on the last axis, forward half first.",
            ),
            checkpoint=checkpoint_bidirectional_states,
            minutes=20,
        ),
        Exercise(
            target="chapter_code.depth.directions:stacked_states",
            context=("chapter_code.depth.directions:_check_one_layer",),
            task=(
                "Feed `x` through the layers in order, each reading the states of the "
                "one below; return the top layer's states `(B, T, H)`."
            ),
            hints=(
                "Layer 2 of a stack does not see `x` at all; what does it read "
                "instead?",
                "One variable for the current sequence, starting at `x`; in a loop "
                "over the layers replace it by "
                "the layer's states (the first of the pair it returns); return it.",
            ),
            checkpoint=checkpoint_stacked_states,
            minutes=10,
        ),
        Exercise(
            target="chapter_code.depth.layers:prefix_only_loss",
            context=(
                "chapter_code.core.arguments:positive_ints",
                "chapter_code.core.device:model_device",
                "chapter_code.lm.perplexity:lm_loss_and_ppl",
            ),
            task=(
                "Score the model as generation uses it: for $j = 0..$`positions`$-1$ "
                "it reads `ids[j : j + context]` and is scored, with "
                "`lm_loss_and_ppl`, on the character right after that window. Return "
                "the mean loss in nats as a float. All windows can go in one batch."
            ),
            hints=(
                "A bidirectional model's output at a position has read everything in "
                "its window, so only one position of each window is a fair "
                "prediction. Which one, and of which character?",
                "Build the `(N, C)` index rows by broadcasting "
                "`torch.arange(positions)[:, None]` against `torch.arange(context)`; "
                "run the model on `ids[rows]`; keep only the last position's logits "
                "`(N, V)` and score them against `ids[context : context + positions]`.",
            ),
            checkpoint=checkpoint_prefix_only_loss,
            stand_ins=(
                (
                    "chapter_code.lm.perplexity:lm_loss_and_ppl",
                    "# given: Lab 4 asks you to write this one; here PyTorch's own\n"
                    "# cross-entropy stands in for it (the same numbers)\n"
                    "loss = nn.functional.cross_entropy(\n"
                    "    logits.reshape(-1, vocab), targets.reshape(-1)\n"
                    ")\n"
                    "return loss, loss.exp().item(), loss.item() / math.log(2)\n",
                ),
            ),
            reference=reference_prefix_only_loss,
            minutes=25,
        ),
    ],
)
