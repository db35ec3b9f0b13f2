"""Lab for "Recurrent language models": the loss, perplexity and bits; random training
windows; the training loop.
"""

from __future__ import annotations

from bookbuild.tools.labs import Exercise, Lab, Prediction

# a run of a second on a laptop
_TINY = {
    "vocab": 5,
    "embedding_size": 4,
    "hidden_size": 8,
    "window": 6,
    "batch_size": 4,
    "steps": 30,
    "lr": 0.05,
    "clip": 0.05,
    "log_every": 10,
}


def reference_lm_loss_and_ppl() -> dict:
    """The book's scorer on fixed logits (2, 5, 11) and targets."""
    import torch

    from chapter_code.lm.perplexity import lm_loss_and_ppl

    gen = torch.Generator().manual_seed(40)
    logits = (torch.randn(2, 5, 11, generator=gen) * 1000).round().div(1000)
    targets = torch.randint(0, 11, (2, 5), generator=gen)
    loss, ppl, bits = lm_loss_and_ppl(logits, targets)
    return {
        "logits": logits.tolist(),
        "targets": targets.tolist(),
        "loss": loss.item(),
        "ppl": ppl,
        "bits": bits,
    }


def checkpoint_lm_loss_and_ppl(lm_loss_and_ppl, expected):
    """Equal logits give perplexity V; the book's loss, perplexity and bits on fixed
    logits; a loss with a graph.
    """
    import math

    import torch

    vocab = 65
    targets = torch.randint(
        0, vocab, (2, 7), generator=torch.Generator().manual_seed(0)
    )
    loss, ppl, bits = lm_loss_and_ppl(torch.zeros(2, 7, vocab), targets)
    assert abs(ppl - vocab) < 1e-3, (
        f"perplexity of equal logits should be {vocab} (every character equally "
        f"likely), got {ppl:.4g}: perplexity is exp of the mean loss in nats"
    )
    logits = torch.tensor(expected["logits"], requires_grad=True)
    targets = torch.tensor(expected["targets"])
    loss, ppl, bits = lm_loss_and_ppl(logits, targets)
    want = expected["loss"]
    value = loss.item() if isinstance(loss, torch.Tensor) else float(loss)
    summed = abs(value / targets.numel() - want) < 1e-4
    assert abs(value - want) < 1e-5, (
        f"the loss should be the mean over all {targets.numel()} positions of -ln "
        f"p(target), {want:.4f}; got {value:.4f}"
        + (" (a sum: divide by the number of positions)" if summed else "")
    )
    assert abs(ppl - expected["ppl"]) < 1e-4 * expected["ppl"], (
        f"perplexity should be {expected['ppl']:.3f} for this loss; got {ppl}"
        + (
            " (that is 2 to the loss: the loss is in nats)"
            if abs(ppl - 2**want) < 1e-3
            else ""
        )
    )
    assert abs(bits - expected["bits"]) < 1e-5, (
        f"bits per character should be {expected['bits']:.4f}, the loss converted "
        f"from nats to bits; got {bits:.4f}"
        + (" (that is the loss in nats itself)" if abs(bits - want) < 1e-5 else "")
    )
    assert isinstance(loss, torch.Tensor), (
        f"the loss should be a tensor, not {type(loss).__name__}"
    )
    assert loss.requires_grad, (
        "the loss should keep its graph (requires_grad), so a model can be trained "
        "on it"
    )
    assert isinstance(ppl, float), "perplexity and bits should be Python floats"
    assert isinstance(bits, float), "perplexity and bits should be Python floats"
    assert not math.isnan(ppl)
    print("Checkpoint passed: loss, perplexity and bits agree with the book's")


def reference_random_windows() -> dict:
    """The book's windows of ids 0..19 (window 4, batch 3) from a generator seeded with
    41.
    """
    import torch

    from chapter_code.lm.char_lm import random_windows

    x, y = random_windows(torch.arange(20), 4, 3, torch.Generator().manual_seed(41))
    return {"x": x.tolist(), "y": y.tolist()}


def checkpoint_random_windows(random_windows, expected):
    """Windows of the ids 0..19, where a window's values show where it starts."""
    import torch

    ids = torch.arange(20)
    got = random_windows(ids, 4, 3, torch.Generator().manual_seed(41))
    assert isinstance(got, tuple), (
        "random_windows should return the pair (inputs, targets)"
    )
    assert len(got) == 2, "random_windows should return the pair (inputs, targets)"
    x, y = got
    shapes = (tuple(x.shape), tuple(y.shape))
    assert shapes == ((3, 4), (3, 4)), (
        f"inputs and targets should both be (B, W) = (3, 4); got {shapes}"
    )
    assert bool(((x[:, 1:] - x[:, :-1]) == 1).all()), (
        f"each window should be consecutive ids; got {x.tolist()}"
    )
    assert torch.equal(y, x + 1), (
        f"the targets should be the inputs shifted by one (the next id at every "
        f"position); got inputs {x.tolist()} and targets {y.tolist()}"
    )
    assert torch.equal(x, torch.tensor(expected["x"])), (
        "the windows should start where one torch.randint call on the generator puts "
        f"them, {expected['x']}; got {x.tolist()}: draw the B starts at once, from 0 "
        "up to (not including) len(ids) - window"
    )
    many = random_windows(torch.arange(10), 9, 200, torch.Generator().manual_seed(0))[1]
    assert int(many.max()) <= 9, (
        "a window's last target must still be in the ids: starts stop before "
        "len(ids) - window"
    )
    print(
        "Checkpoint passed: random_windows draws the book's windows and shifts the "
        "targets by one"
    )


def reference_fit_next_token() -> dict:
    """The book's fit_next_token on a tiny GRU model and a periodic sequence."""
    import torch

    from chapter_code.lm.char_lm import CharLM, TrainConfig, fit_next_token

    t = _TINY
    torch.manual_seed(42)
    model = CharLM(t["vocab"], "gru", t["embedding_size"], t["hidden_size"])
    ids = torch.tensor([0, 1, 2, 3, 4, 2, 1, 0, 3] * 12)
    config = TrainConfig(
        t["window"], t["batch_size"], t["steps"], t["lr"], t["clip"], t["log_every"]
    )
    history = fit_next_token(model, ids, config, torch.Generator().manual_seed(43))
    return {"run": t, "history": [[step, loss] for step, loss in history]}


def checkpoint_fit_next_token(fit_next_token, expected):
    """Train the same tiny model as the book: the logged losses, every step's clipped
    gradient, and the step count.
    """
    import torch
    from torch.optim.optimizer import register_optimizer_step_pre_hook

    t = expected["run"]
    # the notebook's own CharLM and TrainConfig (the book's, given above)
    space = fit_next_token.__globals__
    CharLM, TrainConfig = space["CharLM"], space["TrainConfig"]  # noqa: N806
    torch.manual_seed(42)
    model = CharLM(t["vocab"], "gru", t["embedding_size"], t["hidden_size"])
    ids = torch.tensor([0, 1, 2, 3, 4, 2, 1, 0, 3] * 12)
    config = TrainConfig(
        t["window"], t["batch_size"], t["steps"], t["lr"], t["clip"], t["log_every"]
    )
    norms = []

    def watch(optimizer, args, kwargs):  # runs before every optimizer step
        grads = [
            p.grad
            for group in optimizer.param_groups
            for p in group["params"]
            if p.grad is not None
        ]
        norms.append(
            torch.sqrt(sum(g.pow(2).sum() for g in grads)).item() if grads else 0.0
        )

    handle = register_optimizer_step_pre_hook(watch)
    try:
        history = fit_next_token(model, ids, config, torch.Generator().manual_seed(43))
    finally:
        handle.remove()
    assert len(norms) == t["steps"], (
        f"{t['steps']} steps take {t['steps']} optimizer steps; there were {len(norms)}"
    )
    assert max(norms) <= t["clip"] * (1 + 1e-3), (
        f"an optimizer step saw a gradient of norm {max(norms):.3f}, above clip = "
        f"{t['clip']}: clip the global norm after backward and before the step"
    )
    want = expected["history"]
    assert [s for s, _ in history] == [s for s, _ in want], (
        "log (step, loss) every log_every steps and at the last: steps "
        f"{[s for s, _ in want]}; got {[s for s, _ in history]}"
    )
    gaps = [abs(loss - w) for (_, loss), (_, w) in zip(history, want, strict=True)]
    assert max(gaps) < 1e-3, (
        f"the logged losses {[round(v, 4) for _, v in history]} differ from the "
        f"book's run {[round(v, 4) for _, v in want]}: clear the old gradients before "
        "each backward, score the logits with lm_loss_and_ppl against the targets, "
        "and draw one batch of windows per step"
    )
    print(
        "Checkpoint passed: fit_next_token reproduces the book's run, clipped at "
        "every step"
    )


PREDICTION = Prediction(
    question=(
        "A small GRU language model is about to be trained on the short text below, "
        "whose vocabulary has `V` characters (the next cell prints `V`). Before any "
        "training, what perplexity will your `lm_loss_and_ppl` give it on the text: "
        "about 1, about `V`, or about `V` squared? And after 150 steps of your "
        "`fit_next_token`?"
    ),
    guess="""\
text = (
    "a recurrent network reads one character at a time and carries what it has "
    "read in its state; trained to guess the next character, it learns which "
    "letters follow which, then which words follow which. "
) * 4
chars = sorted(set(text))
print("V =", len(chars))
# your guesses, before you run the next cell (a number each)
guess_ppl_before = None
guess_ppl_after = None""",
    measure="""\
ids = torch.tensor([chars.index(ch) for ch in text])
inputs, targets = ids[:-1].unsqueeze(0), ids[1:].unsqueeze(0)  # the whole text, (1, N)
torch.manual_seed(0)
model = CharLM(len(chars), "gru", embedding_size=16, hidden_size=48)
config = TrainConfig(window=24, batch_size=16, steps=150, lr=0.01, clip=1.0,
                     log_every=25)
with torch.no_grad():
    _, measured_ppl_before, _ = lm_loss_and_ppl(model(inputs)[0], targets)
history = fit_next_token(model, ids, config, torch.Generator().manual_seed(1))
with torch.no_grad():
    _, measured_ppl_after, _ = lm_loss_and_ppl(model(inputs)[0], targets)""",
    compare="""\
print(f"before training: you guessed {guess_ppl_before}, "
      f"measured {measured_ppl_before:.2f} (V = {len(chars)})")
print(f"after 150 steps: you guessed {guess_ppl_after}, "
      f"measured {measured_ppl_after:.2f} (on the training text itself)")""",
)

STRETCH = (
    "Hold out the last fifth of a longer text of your own and log the held-out "
    "perplexity beside the training loss. At which step do they part, and what does "
    "a larger hidden size change?",
    'Swap `"gru"` for `"rnn"` and `"lstm"` with the same budget of steps; '
    "compare the final perplexities and the time per step.",
    "Make `random_windows` draw only starts that are multiples of the window "
    "(non-overlapping windows). Does training get better or worse per step, and "
    "why might it?",
)

RESULTS = """\
print(f"{'step':>5} {'loss (nats)':>12} {'perplexity':>11} {'bits/char':>10}")
for step, loss in history:
    print(f"{step:>5} {loss:>12.4f} {math.exp(loss):>11.2f} "
          f"{loss / math.log(2):>10.3f}")
with torch.no_grad():  # the last row: the whole text, scored by your lm_loss_and_ppl
    loss, ppl, bits = lm_loss_and_ppl(model(inputs)[0], targets)
print(f"{'all':>5} {loss.item():>12.4f} {ppl:>11.2f} {bits:>10.3f}")"""


LAB = Lab(
    slug="language-models",
    chapter="book/language-models",
    title="Lab 4: training a character language model",
    intro=(
        "A character language model is scored by the mean negative log-probability it "
        "gives each true next character, in nats. Its exponential is the perplexity, "
        "the size of a uniform choice that would be as surprised; divided by $\\ln 2$ "
        "it is in bits per character. You write that scorer, then the sampler of "
        "random training windows, then the training loop the chapter uses for every "
        "neural model: windows, forward pass, loss, backward, clipping, Adam step."
    ),
    setup=(
        "import math\nfrom collections.abc import Callable\nfrom dataclasses import "
        "dataclass\n\nimport torch\nfrom torch import nn\n\n"
        'CELLS = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}'
    ),
    prediction=PREDICTION,
    stretch=STRETCH,
    results=RESULTS,
    exercises=[
        Exercise(
            target="chapter_code.lm.perplexity:lm_loss_and_ppl",
            task=(
                "The checks on the arguments are done and `vocab` is the vocabulary "
                "size. Compute the mean over all positions of $-\\ln "
                "p(\\text{target})$ under the softmax of the logits, keep it as a "
                "tensor with its graph, and return `(loss, perplexity, bits)` with "
                "the last two as floats."
            ),
            hints=(
                "Flatten batch and time into one axis of positions first; then each "
                "position needs only the log-probability of its own target.",
                "`torch.log_softmax` over the last axis of the `(B*T, V)` logits, "
                "`.gather(1, ...)` with the targets as a column, then the negative "
                "mean. Perplexity and bits are computed from its value (`.item()`) "
                "with `math.exp` and a change of logarithm base.",
            ),
            checkpoint=checkpoint_lm_loss_and_ppl,
            reference=reference_lm_loss_and_ppl,
            minutes=15,
        ),
        Exercise(
            target="chapter_code.lm.char_lm:random_windows",
            task=(
                "Draw `batch_size` start positions uniformly with `generator`, cut a "
                "window of `window + 1` ids at each, and return the first `window` of "
                "every row as inputs and the last `window` as targets, both `(B, W)`."
            ),
            hints=(
                "Every start must leave room for `window + 1` ids; one call to "
                "`torch.randint` with the generator draws all the starts.",
                "Build a `(B, W + 1)` index tensor by broadcasting the starts `(B, "
                "1)` against `torch.arange(window + 1)`, index `ids` with it, and "
                "slice off the last column for the inputs and the first column for "
                "the targets.",
            ),
            checkpoint=checkpoint_random_windows,
            reference=reference_random_windows,
            minutes=15,
        ),
        Exercise(
            target="chapter_code.lm.char_lm:fit_next_token",
            context=(
                "chapter_code.core.arguments:positive_ints",
                "chapter_code.core.arguments:positive_int_fields",
                "chapter_code.lm.char_lm:CharLM",
                "chapter_code.lm.char_lm:TrainConfig",
                "chapter_code.core.device:model_device",
            ),
            task=(
                "Train `model` for `config.steps` steps with Adam at `config.lr`. "
                "Each step: draw windows with your `random_windows`, run the model "
                "from a fresh state, score it with your `lm_loss_and_ppl`, "
                "backpropagate, clip the global gradient norm at `config.clip` with "
                "`nn.utils.clip_grad_norm_`, and step. Return `(step, loss)` pairs, "
                "steps counted from 1, every `config.log_every` steps and at the last "
                "step."
            ),
            hints=(
                "The order within a step matters twice: old gradients must be gone "
                "before `backward`, and clipping must act on the new gradients before "
                "the optimizer reads them.",
                "Create the optimizer once, before the loop, and put the model in "
                "training mode. Each step, in this order: draw the windows, run the "
                "model (it returns the logits and a state you do not need), score the "
                "logits, clear the old gradients, backpropagate, clip, step the "
                "optimizer; then log if the step is a multiple of `config.log_every` "
                "or the last one.",
            ),
            checkpoint=checkpoint_fit_next_token,
            reference=reference_fit_next_token,
            minutes=25,
        ),
    ],
)
