"""Lab for "Generating text": temperature, top-k and nucleus distributions, and the
counting check of a sampler.
"""

from __future__ import annotations

from bookbuild.tools.labs import Exercise, Lab, Prediction

# a batch of two (V = 6) logit rows
_WIDE = [[0.5, 3.0, -1.0, 2.0, 0.0, 2.5], [1.0, -2.0, 0.25, 0.0, 1.5, -0.5]]


def _lists(t) -> list:
    return t.tolist()


def reference_temperature_probs() -> dict:
    """The book's temperature_probs on (2, 1, 0) at three temperatures, and on a
    batch.
    """
    import torch

    from chapter_code.sampling.rules import temperature_probs

    small = torch.tensor([2.0, 1.0, 0.0])
    return {
        "small": {
            str(tau): _lists(temperature_probs(small, tau)) for tau in (0.5, 1.0, 2.0)
        },
        "wide": _WIDE,
        "wide at 0.7": _lists(temperature_probs(torch.tensor(_WIDE), 0.7)),
    }


def checkpoint_temperature_probs(temperature_probs, expected):
    """softmax(z / tau) at three temperatures on the logits (2, 1, 0), and a batch,
    against the book's numbers.
    """
    import torch

    logits = torch.tensor([2.0, 1.0, 0.0])
    small = {float(tau): torch.tensor(v) for tau, v in expected["small"].items()}
    for tau, want in small.items():
        got = temperature_probs(logits, tau)
        if torch.allclose(got, want, atol=1e-6):
            continue
        if torch.allclose(got, small[1.0], atol=1e-6):
            raise AssertionError(
                f"at temperature {tau} you return the temperature-1 distribution: the "
                "temperature has to act on the logits before the softmax"
            )
        if tau != 1.0 and torch.allclose(got, small[1 / tau], atol=1e-6):
            raise AssertionError(
                f"at temperature {tau} you return the distribution of temperature "
                f"{1 / tau}: a low temperature should sharpen the distribution, so "
                "divide rather than multiply"
            )
        raise AssertionError(
            f"at temperature {tau} the probabilities of logits (2, 1, 0) should be "
            f"{[round(v, 3) for v in want.tolist()]}, got "
            f"{[round(v, 3) for v in got.tolist()]}"
        )
    got = temperature_probs(torch.tensor(expected["wide"]), 0.7)
    assert torch.allclose(got.sum(dim=-1), torch.ones(2), atol=1e-6), (
        "each row of a batch should sum to 1 (softmax over the last axis); row sums "
        f"{got.sum(dim=-1).tolist()}"
    )
    assert torch.allclose(got, torch.tensor(expected["wide at 0.7"]), atol=1e-6), (
        "a batch of rows: the last axis"
    )
    print("Checkpoint passed: temperature_probs gives the book's distributions")


def reference_top_k_probs() -> dict:
    import torch

    from chapter_code.sampling.rules import top_k_probs

    return {
        "wide": _WIDE,
        "top-3 at 1": _lists(top_k_probs(torch.tensor(_WIDE), 3)),
        "top-2 at 0.5": _lists(top_k_probs(torch.tensor(_WIDE), 2, temperature=0.5)),
    }


def checkpoint_top_k_probs(top_k_probs, expected):
    """Top-2 of (2, 1, 0) keeps two tokens; a batch keeps k per row, renormalised, at
    two temperatures.
    """
    import torch

    got = top_k_probs(torch.tensor([2.0, 1.0, 0.0]), 2)
    assert abs(got.sum().item() - 1) < 1e-6, (
        f"top-k probabilities should sum to 1 (renormalise); sum {got.sum():.3f}"
    )
    assert got[2].item() == 0, (
        "top-2 of logits (2, 1, 0) must drop the third token; it got "
        f"{got[2].item():.3f}"
    )
    wide = torch.tensor(expected["wide"])
    got = top_k_probs(wide, 3)
    kept = (got > 0).sum(dim=-1).tolist()
    assert kept == [3, 3], (
        f"top-3 should keep exactly 3 tokens in each row; it kept {kept}"
    )
    want = torch.tensor(expected["top-3 at 1"])
    assert torch.equal(got > 0, want > 0), (
        f"top-3 should keep the tokens with the 3 largest logits of each row, "
        f"{(want > 0).nonzero()[:, 1].tolist()}; it kept "
        f"{(got > 0).nonzero()[:, 1].tolist()}"
    )
    assert torch.allclose(got, want, atol=1e-6), (
        "the kept tokens should keep their relative probabilities"
    )
    cold = top_k_probs(wide, 2, temperature=0.5)
    assert torch.allclose(cold, torch.tensor(expected["top-2 at 0.5"]), atol=1e-6), (
        "at temperature 0.5 the kept tokens should hold the temperature "
        "distribution, renormalised"
    )
    print("Checkpoint passed: top_k_probs keeps the k largest logits and renormalises")


def reference_nucleus_probs() -> dict:
    import torch

    from chapter_code.sampling.rules import nucleus_probs

    return {
        "wide": _WIDE,
        "p=0.8": _lists(nucleus_probs(torch.tensor(_WIDE), 0.8)),
        "p=0.5 at 2": _lists(nucleus_probs(torch.tensor(_WIDE), 0.5, temperature=2.0)),
    }


def checkpoint_nucleus_probs(nucleus_probs, expected):
    """p = 0.9 on (2, 1, 0) keeps two tokens (the second one crosses 0.9); a tie at p
    (four tokens of 0.25, p = 0.5) keeps two; p = 1 keeps all; a tiny p keeps one.
    """
    import torch

    logits = torch.tensor([2.0, 1.0, 0.0])
    got = nucleus_probs(logits, 0.9)
    kept = int((got > 0).sum())
    assert kept == 2, (
        "with p = 0.9 the nucleus of (2, 1, 0), probabilities (0.665, 0.245, "
        "0.090), is the smallest top set whose "
        f"mass reaches 0.9: the first two tokens (0.910); your function kept {kept}"
        + (
            ". The token whose probability makes the mass reach p belongs to the "
            "nucleus"
            if kept == 1
            else ""
        )
    )
    assert abs(got.sum().item() - 1) < 1e-6, (
        f"the kept tokens should be renormalised to sum 1; sum {got.sum():.3f}"
    )
    # four equal logits: probabilities of exactly 0.25, so the masses tie with p exactly
    tied = int((nucleus_probs(torch.zeros(4), 0.5) > 0).sum())
    assert tied == 2, (
        "with four equal logits (probabilities 0.25 each) and p = 0.5, the first two "
        "tokens already reach p, so the nucleus is those two; your function kept "
        f"{tied}"
        + (
            ": it also keeps the third token, whose mass ranked above it is exactly "
            "p. A token before which the mass has already reached p is outside the "
            "nucleus, even at a tie"
            if tied == 3
            else ""
        )
    )
    assert int((nucleus_probs(logits, 1.0) > 0).sum()) == 3, (
        "with p = 1 every token is in the nucleus"
    )
    assert int((nucleus_probs(logits, 0.01) > 0).sum()) == 1, (
        "with a tiny p the nucleus is the top token alone"
    )
    wide = torch.tensor(expected["wide"])
    for key, got in (
        ("p=0.8", nucleus_probs(wide, 0.8)),
        ("p=0.5 at 2", nucleus_probs(wide, 0.5, temperature=2.0)),
    ):
        want = torch.tensor(expected[key])
        assert torch.equal(got > 0, want > 0), (
            f"on the batch at {key} each row's nucleus should be the tokens "
            f"{[r.nonzero()[:, 0].tolist() for r in want]}; got "
            f"{[r.nonzero()[:, 0].tolist() for r in got]}: rank within each row and "
            "put the kept flags back in the original order"
        )
        assert torch.allclose(got, want, atol=1e-6), (
            f"on the batch at {key} the renormalised probabilities differ"
        )
    print(
        "Checkpoint passed: nucleus_probs keeps the smallest top set with mass at "
        "least p"
    )


def checkpoint_chi_square_statistic(chi_square_statistic):
    """Pearson's X^2 and its degrees of freedom on counts small enough to check by
    hand.
    """
    import math

    import torch

    got = chi_square_statistic(
        torch.tensor([30, 50, 20]), torch.tensor([0.25, 0.5, 0.25])
    )
    assert isinstance(got, tuple), (
        "chi_square_statistic should return (X^2, degrees of freedom)"
    )
    assert len(got) == 2, "chi_square_statistic should return (X^2, degrees of freedom)"
    x2, dof = got
    if abs(x2 - (25 / 30 + 25 / 20)) < 1e-9:
        raise AssertionError(
            "X^2 divides each squared difference by the expected count n q_i, not by "
            "the observed one"
        )
    assert abs(x2 - 2.0) < 1e-9, (
        "counts (30, 50, 20) against probabilities (0.25, 0.5, 0.25) of 100 draws "
        f"give X^2 = 2; got {x2}"
    )
    assert dof == 2, (
        f"three tokens of nonzero probability give 2 degrees of freedom; got {dof}"
    )
    x2, dof = chi_square_statistic(
        torch.tensor([40, 60, 0]), torch.tensor([0.5, 0.5, 0.0])
    )
    assert dof == 1, (
        "a token of probability zero does not count: two tokens left, 1 degree of "
        f"freedom; got {dof}"
    )
    assert abs(x2 - 4.0) < 1e-9, (
        f"counts (40, 60, 0) against (0.5, 0.5, 0) give X^2 = 4 over the two possible "
        f"tokens; got {x2}"
    )
    x2, _ = chi_square_statistic(
        torch.tensor([40, 59, 1]), torch.tensor([0.5, 0.5, 0.0])
    )
    assert x2 == math.inf, (
        "drawing a token of probability zero must fail the check outright: X^2 = "
        f"inf; got {x2}"
    )
    assert isinstance(
        chi_square_statistic(torch.tensor([1, 1]), torch.tensor([0.5, 0.5]))[0], float
    ), "X^2 as a float"
    print("Checkpoint passed: chi_square_statistic counts like Pearson")


PREDICTION = Prediction(
    question=(
        "Six tokens have logits 3, 2, 1, 0, -1 and -2. How many of them does your "
        "`nucleus_probs` keep with p = 0.9 at temperature 1? At temperature 2?"
    ),
    guess=(
        "# your guesses, before you run the next cell (a whole number each)\n"
        "guess_kept_at_1 = None\n"
        "guess_kept_at_2 = None"
    ),
    measure="""\
logits = torch.tensor([3.0, 2.0, 1.0, 0.0, -1.0, -2.0])
measured_kept_at_1 = int((nucleus_probs(logits, 0.9, 1.0) > 0).sum())
measured_kept_at_2 = int((nucleus_probs(logits, 0.9, 2.0) > 0).sum())""",
    compare="""\
for temperature, guess, measured in [(1, guess_kept_at_1, measured_kept_at_1),
                                     (2, guess_kept_at_2, measured_kept_at_2)]:
    print(f"temperature {temperature}: you guessed {guess}, measured {measured}")""",
)

STRETCH = (
    "Min-p sampling keeps every token whose probability is at least a fraction of "
    "the largest one. Write `min_p_probs(logits, fraction, temperature)`, test that "
    "it always keeps the top token and sums to one, and compare how many tokens it "
    "keeps with the nucleus as the temperature rises.",
    "Draw 10 000 tokens from a distribution with many rare tokens and run your "
    "`chi_square_statistic`. Merge the tokens whose expected count is below 5 into "
    "one bin first: how does that change the statistic and its degrees of freedom?",
    "Typical sampling keeps the tokens whose surprisal is closest to the "
    "distribution's entropy. Write it and find logits on which it keeps a token the "
    "nucleus drops.",
)

RESULTS = """\
def entropy_bits(probs):
    kept = probs[probs > 0]
    return -(kept * kept.log2()).sum().item()


gen = torch.Generator().manual_seed(0)
print(f"{'temperature':>11} {'entropy (bits)':>15} {'top-3 kept':>11} "
      f"{'nucleus kept':>13} {'X^2':>7} {'dof':>4}")
for temperature in (0.5, 1.0, 2.0):
    probs = temperature_probs(logits, temperature)
    top3 = int((top_k_probs(logits, 3, temperature) > 0).sum())
    nucleus = nucleus_probs(logits, 0.9, temperature)
    draws = torch.multinomial(nucleus, 2000, replacement=True, generator=gen)
    counts = torch.bincount(draws, minlength=len(logits)).double()
    x2, dof = chi_square_statistic(counts, nucleus.double())
    print(f"{temperature:>11} {entropy_bits(probs):>15.3f} {top3:>11} "
          f"{int((nucleus > 0).sum()):>13} {x2:>7.2f} {dof:>4}")"""


LAB = Lab(
    slug="generating",
    chapter="book/generating",
    title="Lab 5: decoding rules and the counting check",
    intro=(
        "A language model gives logits for the next token; a decoding rule turns them "
        "into a distribution to draw from. You write three: temperature scaling, "
        "top-k truncation and nucleus (top-p) truncation, each renormalised, and "
        "check them on the chapter's small example with logits (2, 1, 0) and on a "
        "batch. Then you write Pearson's statistic, the counting check that tells "
        "whether a sampler draws from the distribution it claims."
    ),
    setup="import math\n\nimport torch",
    prediction=PREDICTION,
    stretch=STRETCH,
    results=RESULTS,
    exercises=[
        Exercise(
            target="chapter_code.sampling.rules:temperature_probs",
            context=("chapter_code.sampling.rules:_check_logits",),
            task="Return $\\mathrm{softmax}(z / \\tau)$ over the last axis (the "
            "arguments are already checked).",
            hints=(
                "The same code should work for one row of logits `(V,)` and for a "
                "batch `(B, V)`: which axis holds the vocabulary in both?",
                "Scale the logits by the temperature, then one `torch.softmax` with "
                "`dim=-1`.",
            ),
            checkpoint=checkpoint_temperature_probs,
            reference=reference_temperature_probs,
            minutes=5,
        ),
        Exercise(
            target="chapter_code.sampling.rules:top_k_probs",
            task=(
                "`probs` holds the temperature distribution. Keep the `k` tokens "
                "with the largest logits, "
                "set the others to zero, and renormalise so each row sums to one."
            ),
            hints=(
                "Build a 0/1 mask of the kept tokens with the shape of `probs`; "
                "everything else follows from it.",
                "`logits.topk(k, dim=-1).indices` are the kept tokens; "
                "`torch.zeros_like(probs).scatter(-1, indices, 1.0)` is the mask; "
                "multiply, then divide by the row sums (`keepdim=True`).",
            ),
            checkpoint=checkpoint_top_k_probs,
            reference=reference_top_k_probs,
            minutes=15,
        ),
        Exercise(
            target="chapter_code.sampling.rules:nucleus_probs",
            task=(
                "Keep the smallest set of most probable tokens whose probabilities "
                "add up to at least `p`, zero the rest and renormalise. The token "
                "that makes the mass reach `p` is kept."
            ),
            hints=(
                'Work in sorted order, where "the smallest top set" is a prefix; '
                "then bring the decision back "
                "to the original order. Be careful with the token that crosses `p`.",
                "Sort by the logits (descending, `argsort`), gather the probabilities "
                "in that order and take their cumulative sum. A token belongs to the "
                "nucleus when the mass ranked strictly above it is still below `p`. "
                "Scatter the kept flags back with the same order, mask and "
                "renormalise.",
            ),
            checkpoint=checkpoint_nucleus_probs,
            reference=reference_nucleus_probs,
            minutes=25,
        ),
        Exercise(
            target="chapter_code.sampling.goodness_of_fit:chi_square_statistic",
            task=(
                "Return Pearson's $X^2 = \\sum_{i:\\,q_i > 0} (c_i - n q_i)^2 / (n "
                "q_i)$ of the counts against the probabilities, with $n$ the number "
                "of draws, and its degrees of freedom (tokens of nonzero probability, "
                "minus one). If a token of probability zero was drawn, $X^2$ is "
                "infinite."
            ),
            hints=(
                "Tokens of probability zero leave the sum and the count of degrees of "
                "freedom; they only matter if one of them was drawn.",
                "Work in float64: expected counts are `probs * counts.sum()`; a bool "
                "mask of the tokens of nonzero probability selects the terms; check "
                "the counts outside the mask first and return `math.inf` if any were "
                "drawn; return the sum as a Python `float`.",
            ),
            checkpoint=checkpoint_chi_square_statistic,
            minutes=15,
        ),
    ],
)
