"""Lab for "Generating text": temperature, top-k and nucleus distributions over the next token."""

from __future__ import annotations

from bookbuild.labs import Exercise, Lab


def checkpoint_temperature_probs(temperature_probs):
    """softmax(z / tau) at three temperatures on the logits (2, 1, 0), and a batch."""
    import torch

    logits = torch.tensor([2.0, 1.0, 0.0])
    for tau in (0.5, 1.0, 2.0):
        got = temperature_probs(logits, tau)
        want = torch.softmax(logits / tau, dim=-1)
        assert torch.allclose(got, want, atol=1e-6), (
            f"at temperature {tau} the probabilities of logits (2, 1, 0) should be "
            f"{[round(v, 3) for v in want.tolist()]}, got {[round(v, 3) for v in got.tolist()]}: divide the "
            "logits by the temperature, then take the softmax")
    batch = torch.tensor([[2.0, 1.0, 0.0], [0.0, 0.0, 3.0]])
    got = temperature_probs(batch, 0.5)
    assert torch.allclose(got.sum(dim=-1), torch.ones(2), atol=1e-6), (
        f"each row of a batch should sum to 1 (softmax over the last axis); row sums {got.sum(dim=-1).tolist()}")
    print("Checkpoint passed: temperature_probs is softmax(z / tau) over the last axis")


def checkpoint_top_k_probs(top_k_probs):
    """Top-2 of (2, 1, 0) renormalised; top-k keeps exactly k tokens; ties resolved by the logits."""
    import torch

    got = top_k_probs(torch.tensor([2.0, 1.0, 0.0]), 2)
    assert abs(got.sum().item() - 1) < 1e-6, f"top-k probabilities should sum to 1 (renormalise); sum {got.sum():.3f}"
    want = torch.softmax(torch.tensor([2.0, 1.0]), dim=-1)
    assert got[2].item() == 0, f"top-2 of logits (2, 1, 0) must drop the third token; it got {got[2].item():.3f}"
    assert torch.allclose(got[:2], want, atol=1e-6), (
        f"top-2 of (2, 1, 0) should keep {[round(v, 3) for v in want.tolist()]}, got "
        f"{[round(v, 3) for v in got[:2].tolist()]}")
    wide = top_k_probs(torch.tensor([0.5, 3.0, -1.0, 2.0, 0.0]), 3)
    assert int((wide > 0).sum()) == 3, f"top-3 should keep exactly 3 tokens; it kept {int((wide > 0).sum())}"
    assert (wide[2].item(), wide[4].item()) == (0, 0), "top-3 of (0.5, 3, -1, 2, 0) keeps the tokens 3, 2 and 0.5"
    print("Checkpoint passed: top_k_probs keeps the k largest logits and renormalises")


def checkpoint_nucleus_probs(nucleus_probs):
    """p = 0.9 on (2, 1, 0) keeps two tokens (the second one crosses 0.9); p = 1 keeps all; a tiny p keeps one."""
    import torch

    logits = torch.tensor([2.0, 1.0, 0.0])
    got = nucleus_probs(logits, 0.9)
    kept = int((got > 0).sum())
    assert kept == 2, (
        f"with p = 0.9 the nucleus of (2, 1, 0), probabilities (0.665, 0.245, 0.090), is the smallest top set whose "
        f"mass reaches 0.9: the first two tokens (0.910); your function kept {kept}. Keep a token while the mass "
        "ranked above it is still below p")
    want = torch.softmax(torch.tensor([2.0, 1.0]), dim=-1)
    assert torch.allclose(got[:2], want, atol=1e-6), (
        f"the kept tokens should be renormalised to {[round(v, 3) for v in want.tolist()]}; got {got.tolist()}")
    assert int((nucleus_probs(logits, 1.0) > 0).sum()) == 3, "with p = 1 every token is in the nucleus"
    assert int((nucleus_probs(logits, 0.01) > 0).sum()) == 1, "with a tiny p the nucleus is the top token alone"
    print("Checkpoint passed: nucleus_probs keeps the smallest top set with mass at least p")


LAB = Lab(
    slug="generating",
    chapter="book/generating",
    title="Lab 5: decoding rules",
    intro=(
        "A language model gives logits for the next token; a decoding rule turns them into a distribution to "
        "draw from. You write three: temperature scaling, top-k truncation and nucleus (top-p) truncation, "
        "each renormalised, and check them on the chapter's small example with logits (2, 1, 0)."
    ),
    setup="import math\n\nimport torch",
    exercises=[
        Exercise(
            target="chapter_code.sampling.rules:temperature_probs",
            context=("chapter_code.sampling.rules:_check_logits",),
            task="Return $\\mathrm{softmax}(z / \\tau)$ over the last axis (the arguments are already checked).",
            hint="`torch.softmax(x, dim=-1)` works on `(V,)` and on `(B, V)` alike.",
            checkpoint=checkpoint_temperature_probs,
        ),
        Exercise(
            target="chapter_code.sampling.rules:top_k_probs",
            task=("`probs` holds the temperature distribution. Keep the `k` tokens with the largest logits, "
                  "set the others to zero, and renormalise so each row sums to one."),
            hint=("`logits.topk(k, dim=-1).indices` are the kept tokens; scatter ones into a zero mask at those "
                  "indices, multiply, then divide by the row sums."),
            checkpoint=checkpoint_top_k_probs,
        ),
        Exercise(
            target="chapter_code.sampling.rules:nucleus_probs",
            task=("Keep the smallest set of most probable tokens whose probabilities add up to at least `p`, "
                  "zero the rest and renormalise. The token that makes the mass reach `p` is kept."),
            hint=("Sort by the logits (descending). For each sorted token, the mass ranked above it is the "
                  "cumulative sum minus its own probability; keep it while that mass is below `p`. Scatter the "
                  "kept flags back to the original order."),
            checkpoint=checkpoint_nucleus_probs,
        ),
    ],
)
