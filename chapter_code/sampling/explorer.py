"""The sampling explorer's numbers: one logit vector under every temperature, top-k and
nucleus setting.

:func:`explorer_data` evaluates the decoding rules of
:mod:`chapter_code.sampling.rules` on one fixed logit vector over a grid of
settings and returns plain lists and dicts (JSON-ready). "Generating text"
draws its static explorer figure from it; an interactive panel can write the
same dictionary to a data file and show any grid point, so the panel's
numbers are these functions' numbers.

Pages: "Generating text" (the static explorer figure); the interactive panels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from chapter_code.sampling.rules import nucleus_probs, temperature_probs, top_k_probs

#: the explorer's default logit vector: six tokens, one clear favourite, a middle group
#: and a tail
EXPLORER_LOGITS = (3.0, 2.2, 1.6, 0.8, 0.0, -1.0)
EXPLORER_TOKENS = ("a", "b", "c", "d", "e", "f")


def explorer_data(
    logits: Sequence[float] = EXPLORER_LOGITS,
    tokens: Sequence[str] = EXPLORER_TOKENS,
    temperatures: Sequence[float] = (0.5, 1.0, 2.0),
    ks: Sequence[int] = (1, 2, 4),
    ps: Sequence[float] = (0.6, 0.9, 0.97),
) -> dict[str, Any]:
    """Every rule's distribution over ``tokens`` at every grid point, as plain data.

    Returns ``{"logits", "tokens", "temperatures", "ks", "ps", "temperature", "top_k",
    "nucleus"}``; ``temperature[i]`` is ``softmax(logits / temperatures[i])``;
    ``top_k[i][j]`` is the top-``ks[j]`` distribution at ``temperatures[i]``;
    ``nucleus[i][j]`` the nucleus distribution with ``p = ps[j]`` at
    ``temperatures[i]``. Every distribution is a list of floats in the order of
    ``tokens``.
    """
    if len(logits) != len(tokens) or len(tokens) < 2:
        raise ValueError(
            "logits and tokens must have the same length, at least 2; got "
            f"{len(logits)} and {len(tokens)}"
        )
    if not temperatures or not ks or not ps:
        raise ValueError("temperatures, ks and ps must each hold at least one setting")
    z = torch.tensor([float(v) for v in logits], dtype=torch.float64)  # (V,)
    return {
        "logits": [float(v) for v in logits],
        "tokens": list(tokens),
        "temperatures": [float(t) for t in temperatures],
        "ks": list(ks),
        "ps": [float(p) for p in ps],
        "temperature": [temperature_probs(z, t).tolist() for t in temperatures],
        "top_k": [[top_k_probs(z, k, t).tolist() for k in ks] for t in temperatures],
        "nucleus": [
            [nucleus_probs(z, p, t).tolist() for p in ps] for t in temperatures
        ],
    }
