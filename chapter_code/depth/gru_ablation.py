"""GRUs with one gate removed: the reset gate held open, or the update gate held shut.

PyTorch's GRU (gate order ``r, z, n``) computes

    n_t = tanh(W_in x_t + b_in + r_t * (W_hn h_{t-1} + b_hn)),   h_t = (1 - z_t) * n_t +
    z_t * h_{t-1}.

*Update gate only*: ``r_t = 1`` always, so the candidate always sees the whole
old state. *Reset gate only*: ``z_t = 0`` always, so ``h_t = n_t``: no
interpolation with the old state, a vanilla RNN whose recurrent term is
gated. A gate is removed by zeroing its weight rows, setting its effective
bias to ``+/- BIAS`` (``sigmoid(20)`` is 1 to within 3e-9) and masking its
gradients so the optimiser never moves them. The rest of the model and the
recipe are the scoreboard's (:mod:`chapter_code.depth.scoreboard`).

Pages: "Depth, direction and scale" (exercises).
"""

from __future__ import annotations

import functools
from typing import Any

import torch
from torch import nn

from chapter_code.core.device import resolve_device
from chapter_code.depth.scoreboard import ScoreRecipe, build_core
from chapter_code.gated.gates import gate_index, set_gate_bias
from chapter_code.lm.char_lm import (
    CharLM,
    Vocab,
    fit_next_token,
    fixed_window_loss,
)
from chapter_code.lm.char_models import corpus_splits

#: the gate held fixed, and its effective bias, for each variant
VARIANTS: dict[str, tuple[str, float]] = {
    "update-only": ("r", 20.0),
    "reset-only": ("z", -20.0),
}


def remove_gate(core: nn.GRU, variant: str) -> None:
    """Hold one gate of a one-layer ``nn.GRU`` at 1 (``r``) or 0 (``z``) for good, as
    ``variant`` says.
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {list(VARIANTS)}; got {variant!r}")
    if not isinstance(core, nn.GRU) or core.num_layers != 1 or core.bidirectional:
        raise ValueError("core must be a one-layer, unidirectional nn.GRU")
    gate, bias = VARIANTS[variant]
    rows = slice(
        gate_index("gru", gate) * core.hidden_size,
        (gate_index("gru", gate) + 1) * core.hidden_size,
    )
    with torch.no_grad():
        core.weight_ih_l0[rows].zero_()
        core.weight_hh_l0[rows].zero_()
    set_gate_bias(core, "gru", gate, bias)
    # every parameter's first axis is the stacked gate axis (3H)
    for p in core.parameters():
        mask = torch.ones_like(p)
        mask[rows] = 0.0
        p.register_hook(lambda grad, mask=mask: grad * mask)


def ablation_run(
    seed: int,
    variant: str,
    recipe: ScoreRecipe,
    device: torch.device | str | None = None,
) -> dict[str, Any]:
    """Train the scoreboard's GRU model with one gate removed, on ``device`` (the
    build's by default); return validation nats and perplexity.
    """
    splits = corpus_splits(recipe.corpus)
    vocab = Vocab(splits.train)
    torch.manual_seed(seed)
    model = CharLM(
        len(vocab),
        functools.partial(build_core, "gru"),
        recipe.embedding_size,
        recipe.hidden_size,
    )
    model = model.to(resolve_device(device))  # before the masks: they go where it is
    remove_gate(model.rnn, variant)  # type: ignore[arg-type]
    generator = torch.Generator().manual_seed(seed)
    fit_next_token(
        model, vocab.encode(splits.train[: recipe.train_chars]), recipe.train, generator
    )  # type: ignore[arg-type]
    nats = fixed_window_loss(
        model, vocab.encode(splits.valid[: recipe.valid_chars]), recipe.train.window
    )  # type: ignore[arg-type]
    gate_rows = slice(
        gate_index("gru", VARIANTS[variant][0]) * recipe.hidden_size,
        (gate_index("gru", VARIANTS[variant][0]) + 1) * recipe.hidden_size,
    )
    held = model.rnn.weight_hh_l0[gate_rows].abs().max().item()  # type: ignore[index]
    return {
        "valid_nats": nats,
        "valid_perplexity": float(torch.tensor(nats).exp()),
        "held_weights_max": held,
    }
