"""Lab for "Recurrent language models": the loss in nats, perplexity and bits per character."""

from __future__ import annotations

from bookbuild.labs import Exercise, Lab


def checkpoint_lm_loss_and_ppl(lm_loss_and_ppl):
    """Equal logits give perplexity V; the loss is F.cross_entropy's; bits are nats / ln 2; the loss keeps its graph."""
    import math

    import torch
    import torch.nn.functional as F

    vocab = 65
    targets = torch.randint(0, vocab, (2, 7), generator=torch.Generator().manual_seed(0))
    loss, ppl, bits = lm_loss_and_ppl(torch.zeros(2, 7, vocab), targets)
    assert abs(ppl - vocab) < 1e-3, (f"perplexity of equal logits should be {vocab} (every character equally "
                                     f"likely), got {ppl:.4g}: perplexity is exp of the mean loss in nats")
    logits = torch.randn(2, 7, vocab, generator=torch.Generator().manual_seed(1), requires_grad=True)
    loss, ppl, bits = lm_loss_and_ppl(logits, targets)
    want = F.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1)).item()
    value = loss.item() if isinstance(loss, torch.Tensor) else float(loss)
    summed = abs(value / targets.numel() - want) < 1e-4
    assert abs(value - want) < 1e-5, (
        f"the loss should be the mean over all {targets.numel()} positions of -ln p(target), {want:.4f}; got "
        f"{value:.4f}" + (" (a sum: divide by the number of positions)" if summed else ""))
    assert abs(ppl - math.exp(want)) < 1e-3 * math.exp(want), (
        f"perplexity should be exp(loss) = {math.exp(want):.3f}; got {ppl}")
    assert abs(bits - want / math.log(2)) < 1e-5, (
        f"bits per character should be the loss in nats divided by ln 2, {want / math.log(2):.4f}; got {bits:.4f}")
    assert isinstance(loss, torch.Tensor), f"the loss should be a tensor, not {type(loss).__name__}"
    assert loss.requires_grad, "the loss should keep its graph (requires_grad), so a model can be trained on it"
    print("Checkpoint passed: loss, perplexity and bits agree with F.cross_entropy")


LAB = Lab(
    slug="language-models",
    chapter="book/language-models",
    title="Lab 4: loss, perplexity and bits",
    intro=(
        "A character language model is scored by the mean negative log-probability it gives each true next "
        "character, in nats. Its exponential is the perplexity, the size of a uniform choice that would be "
        "as surprised; divided by $\\ln 2$ it is in bits per character. You write the scorer that the book's "
        "chapter uses for every model, counting and neural alike."
    ),
    setup="import math\n\nimport torch",
    exercises=[
        Exercise(
            target="chapter_code.lm.perplexity:lm_loss_and_ppl",
            task=(
                "The checks on the arguments are done and `vocab` is the vocabulary size. Compute the mean over "
                "all positions of $-\\ln p(\\text{target})$ under the softmax of the logits, keep it as a tensor "
                "with its graph, and return `(loss, perplexity, bits)` with the last two as floats."
            ),
            hint=(
                "`torch.log_softmax(logits.reshape(-1, vocab), dim=-1)` gives every log-probability; "
                "`.gather(1, targets.reshape(-1, 1))` picks the target's. Average, negate, then "
                "`math.exp(nats)` and `nats / math.log(2)`."
            ),
            checkpoint=checkpoint_lm_loss_and_ppl,
        ),
    ],
)
