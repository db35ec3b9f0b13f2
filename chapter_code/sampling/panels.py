"""The panel of "Generating text": the sampling explorer (temperature, top-k and
nucleus on one distribution).

Its data (beats, controls and a transcript whose result sentences are checked as the
data is built, :func:`chapter_code.panels.beats.claim`) and its static figure, both
computed by this chapter's own code (:mod:`chapter_code.sampling.explorer`);
:mod:`chapter_code.panels.data` and :mod:`chapter_code.panels.figures` list every panel
of the book.

Page: "Generating text", through the ``book-panel`` directive.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from chapter_code.core.plotting import COLORS, use_book_style
from chapter_code.panels.beats import (
    Panel,
    beat,
    claim,
    number,
    signed,
)
from chapter_code.sampling.explorer import (
    EXPLORER_LOGITS,
    EXPLORER_TOKENS,
    explorer_data,
)

# ----------------------------------------------------------------------------- sampling
# explorer

#: (temperature, k, p) per beat: temperature alone, then top-k, then the nucleus at
#: three temperatures.
SAMPLING_BEATS = [
    (1.0, 6, 1.0),
    (0.5, 6, 1.0),
    (2.0, 6, 1.0),
    (1.0, 2, 1.0),
    (1.0, 2, 0.9),
    (0.5, 2, 0.9),
    (2.0, 2, 0.9),
]


def sampling_parts(temperature: float, k: int, p: float) -> dict[str, list[float]]:
    """The explorer's three distributions at one setting, from :func:`explorer_data` on
    the explorer's logits.

    ``temperature``: softmax(z / temperature); ``topK``: the top-``k`` distribution;
    ``nucleus``: the nucleus distribution with mass ``p``, both at the same temperature
    (each a list in the order of the tokens).
    """
    data = explorer_data(
        EXPLORER_LOGITS, EXPLORER_TOKENS, temperatures=[temperature], ks=[k], ps=[p]
    )
    return {
        "temperature": data["temperature"][0],
        "topK": data["top_k"][0][0],
        "nucleus": data["nucleus"][0][0],
    }


def _kept(dist: list[float]) -> list[str]:
    return [t for t, q in zip(EXPLORER_TOKENS, dist, strict=True) if q > 0]


def _tokens(names: list[str]) -> str:
    """``a``, ``a and b``, ``a to e`` (a run of three or more)."""
    if len(names) <= 2:
        return " and ".join(names)
    return f"{names[0]} to {names[-1]}"


def sampling_panel() -> Panel:
    """One logit vector under temperature, top-k and nucleus sampling; sliders for tau,
    k and p.
    """
    parts = [sampling_parts(*setting) for setting in SAMPLING_BEATS]
    (t1, t_cold, t_hot, k2, p_mid, p_cold, p_hot) = parts
    tau, vocab = [s[0] for s in SAMPLING_BEATS], len(EXPLORER_TOKENS)
    z = ", ".join(signed(v).lstrip("+") for v in EXPLORER_LOGITS)

    def ranked(q: list[float]) -> bool:
        return all(a > b for a, b in zip(q, q[1:], strict=False))

    claim(
        all(ranked(q["temperature"]) for q in parts),
        "that temperature never changes the order",
    )
    claim(
        t_cold["temperature"][0] > t1["temperature"][0] > t_hot["temperature"][0],
        "colder sharpens",
    )
    claim(
        t_cold["temperature"][-1] < t1["temperature"][-1] < t_hot["temperature"][-1],
        "hotter lifts the tail",
    )
    claim(
        t1["temperature"] == t1["topK"] == t1["nucleus"],
        "that k = 6 and p = 1 cut nothing",
    )
    claim(_kept(k2["topK"]) == ["a", "b"], "that top-2 keeps a and b")
    p = SAMPLING_BEATS[4][2]
    pair, trio = sum(p_mid["temperature"][:2]), sum(p_mid["temperature"][:3])
    claim(
        pair < p <= trio and _kept(p_mid["nucleus"]) == ["a", "b", "c"],
        "that the nucleus needs c to reach p",
    )
    sizes = [len(_kept(q["nucleus"])) for q in (p_cold, p_mid, p_hot)]
    claim(
        _kept(p_cold["nucleus"]) == ["a", "b"] and p_cold["temperature"][0] < p,
        "the cold nucleus is a and b",
    )
    claim(
        sizes[0] < sizes[1] < sizes[2]
        and all(len(_kept(q["topK"])) == 2 for q in (p_cold, p_mid, p_hot)),
        "that the nucleus grows with the temperature while top-k stays",
    )

    def probs(q: list[float], names: list[str]) -> str:
        return ", ".join(number(q[EXPLORER_TOKENS.index(n)]) for n in names)

    texts = [
        f"Six tokens with logits {z}. At $\\tau = {tau[0]:g}$, with $k = {vocab}$ and "
        f"$p = {SAMPLING_BEATS[0][2]:g}$, nothing is cut: all three columns show "
        f"$\\mathrm{{softmax}}(z)$, which gives the favourite a "
        f"{number(t1['temperature'][0])} and the last token f "
        f"{number(t1['temperature'][-1])}.",
        f"Halve the temperature, $\\tau = {tau[1]:g}$: every gap between logits "
        f"doubles, a rises to {number(t_cold['temperature'][0])} and f falls to "
        f"{number(t_cold['temperature'][-1])}. The order of the tokens stays the same.",
        f"Double it instead, $\\tau = {tau[2]:g}$: the gaps halve, a falls to "
        f"{number(t_hot['temperature'][0])} and f rises to "
        f"{number(t_hot['temperature'][-1])}, on the way to the uniform "
        f"{number(1 / vocab)}; still in the same order.",
        f"Back at $\\tau = {tau[3]:g}$, top-k with $k = {SAMPLING_BEATS[3][1]}$: a and "
        "b are kept and renormalised "
        f"to {probs(k2['topK'], ['a', 'b'])}; c to f get exactly zero.",
        f"The nucleus with $p = {p:g}$: a and b hold only {number(pair)}, so c is kept "
        f"too, which brings the sum to {number(trio)}; the three are renormalised to "
        f"{probs(p_mid['nucleus'], ['a', 'b', 'c'])}.",
        f"Colder, $\\tau = {tau[5]:g}$: a alone holds "
        f"{number(p_cold['temperature'][0])}, and a and b together "
        f"{number(sum(p_cold['temperature'][:2]))}, so the nucleus shrinks to "
        f"{_tokens(_kept(p_cold['nucleus']))}; "
        f"top-{SAMPLING_BEATS[5][1]} keeps two tokens, as always.",
        f"Hotter, $\\tau = {tau[6]:g}$: the mass spreads, and the nucleus needs "
        f"{sizes[2]} tokens, {_tokens(_kept(p_hot['nucleus']))}, to reach {p:g}, "
        f"while top-{SAMPLING_BEATS[6][1]} still keeps two. The nucleus follows how "
        "spread out the distribution is; k does not.",
    ]
    return {
        "name": "sampling-explorer",
        "title": "The sampling explorer: temperature, top-k and nucleus on one logit "
        "vector",
        "summary": f"Six tokens, a to f, with fixed logits ({z}). Left: "
        "$\\mathrm{softmax}(z / \\tau)$. Middle: top-k. "
        "Right: the nucleus with mass $p$. Hollow bars: the temperature distribution "
        "before the cut; filled "
        "bars: the renormalised distribution a token is drawn from.",
        "note": "Computed, on an illustrative logit vector (the one of the chapter's "
        "explorer figure): every "
        "distribution is what `temperature_probs`, `top_k_probs` and `nucleus_probs` "
        "return, here at build time "
        "(through `explorer_data`) and in your browser when you move a slider. No "
        "model is involved.",
        "alt": (
            "Three bar charts side by side, one bar per token a to f: the "
            "temperature distribution, the top-k distribution and the nucleus "
            "distribution, with the tokens each rule cuts marked."
        ),
        "logits": list(EXPLORER_LOGITS),
        "tokens": list(EXPLORER_TOKENS),
        "controls": [
            {
                "id": "tau",
                "label": "temperature {tau}",
                "min": 0.1,
                "max": 4.0,
                "step": 0.05,
            },
            {"id": "k", "label": "top-k: {k}", "min": 1, "max": vocab, "step": 1},
            {"id": "p", "label": "nucleus: {p}", "min": 0.05, "max": 1.0, "step": 0.01},
        ],
        "symbols": {"tau": "\\tau", "k": "k", "p": "p"},
        "beats": [
            beat({"tau": t, "k": k, "p": q}, text)
            for (t, k, q), text in zip(SAMPLING_BEATS, texts, strict=True)
        ],
    }


def sampling_figure() -> Figure:
    """The panel's last three beats side by side: rows are temperatures, columns
    softmax, top-k and the nucleus.

    Hollow bars: softmax(z / tau) before the cut; filled bars: the renormalised
    distribution that is sampled.
    """
    use_book_style()
    temperatures = sorted({t for t, _, _ in SAMPLING_BEATS[-3:]})
    (k,), (p,) = (
        {s[1] for s in SAMPLING_BEATS[-3:]},
        {s[2] for s in SAMPLING_BEATS[-3:]},
    )
    data = explorer_data(
        EXPLORER_LOGITS, EXPLORER_TOKENS, temperatures=temperatures, ks=[k], ps=[p]
    )
    slots = range(len(EXPLORER_TOKENS))
    fig, axes = plt.subplots(
        len(temperatures), 3, figsize=(6.4, 5.6), sharex=True, sharey=True
    )
    for row, tau in enumerate(temperatures):
        before = data["temperature"][row]
        columns = [
            ("softmax(z / $\\tau$)", before),
            (f"top-k, k = {k}", data["top_k"][row][0]),
            (f"nucleus, p = {p:g}", data["nucleus"][row][0]),
        ]
        for col, (title, dist) in enumerate(columns):
            ax = axes[row][col]
            if col:
                ax.bar(
                    slots,
                    before,
                    0.8,
                    fill=False,
                    edgecolor="#595959",
                    linestyle="--",
                    linewidth=0.8,
                )
            ax.bar(slots, dist, 0.55, color=COLORS["lstm"])
            kept = sum(q > 0 for q in dist)
            ax.set_title(
                f"{title}: {kept} kept" if col else f"$\\tau$ = {tau:g}: {title}",
                fontsize=10,
            )
            ax.set_ylim(0, 1)
        axes[row][0].set_ylabel("probability")
    for ax in axes[-1]:
        ax.set_xticks(list(slots), list(EXPLORER_TOKENS))
        ax.set_xlabel("token")
    fig.tight_layout()
    return fig
