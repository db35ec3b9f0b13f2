"""The trained character language models of Chapters 4 and 5: corpora, splits, recipes,
one trainer per family.

A model is named by its corpus and its recipe (:class:`LMRecipe`: cell,
sizes, training schedule, seed). :func:`train_char_lm` trains one with the
canonical next-token trainer and returns plain data (weights, training curve,
vocabulary), so a page calls it through ``runtime.run_once`` with the corpus
file declared as data: a rebuild that changes no training code retrains
nothing, and "Generating text" loads the same models with :func:`load_char_lm`
without training them again.

Two recipe sets are defined as data. :data:`WORKSHOP` is the workshop's full
size (embedding 64, hidden 256, 64 windows of 128 characters per step; 1,000
steps for the RNN and 2,000 for the LSTM), kept for an experiment sweep on
larger machines; :data:`CPU` is the same shape scaled to fit the book's
CPU build.

The chapter's models, and the calls that read them back without training
(the arguments must be exactly these for the stored run to be found)::

    runtime.run_once(train_char_lm, data=[corpus_file("book-prose")],
    corpus="book-prose", recipe=PROSE_LSTM) runtime.run_once(train_char_lm,
    data=[corpus_file("shakespeare")], corpus="shakespeare", recipe=CPU["rnn"])
    runtime.run_once(train_char_lm, data=[corpus_file("shakespeare")],
    corpus="shakespeare", recipe=CPU["lstm"])

Pages: "Recurrent language models", "Generating text".
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

from chapter_code.core.device import resolve_device
from chapter_code.corpora.texts import (
    BOOK_PROSE_FILE,
    SHAKESPEARE_FILE,
    Splits,
    book_prose_text,
    shakespeare_text,
    split_text,
)
from chapter_code.lm.char_lm import CharLM, TrainConfig, Vocab, fit_next_token

#: character extents of the Shakespeare splits (train, validation, test); contiguous, in
#: this order
SHAKESPEARE_SPLITS = (1_100_000, 55_000, 60_394)
#: share of the prose snapshot used for training; the rest is held out (half validation,
#: half test)
PROSE_TRAIN_SHARE = 0.9

CORPORA = ("shakespeare", "book-prose")


def corpus_file(corpus: str) -> str:
    """The corpus's file, relative to the repository root (to declare as a run's
    data).
    """
    files = {"shakespeare": SHAKESPEARE_FILE, "book-prose": BOOK_PROSE_FILE}
    if corpus not in files:
        raise ValueError(f"corpus must be one of {CORPORA}; got {corpus!r}")
    return f"data/{files[corpus]}"


def corpus_splits(corpus: str) -> Splits:
    """Train, validation and test text of ``corpus``, each read through its hash
    check.
    """
    corpus_file(corpus)  # names a bad corpus
    if corpus == "shakespeare":
        return split_text(shakespeare_text(), *SHAKESPEARE_SPLITS)
    text = book_prose_text()
    n_train = int(len(text) * PROSE_TRAIN_SHARE)
    n_valid = (len(text) - n_train) // 2
    return split_text(text, n_train, n_valid, len(text) - n_train - n_valid)


@dataclass(frozen=True)
class LMRecipe:
    """One character language model: its cell and sizes, and how it is trained."""

    cell: str
    hidden_size: int
    train: TrainConfig
    embedding_size: int = 64
    seed: int = 0


def _recipe(cell: str, hidden: int, batch: int, steps: int) -> LMRecipe:
    return LMRecipe(
        cell,
        hidden,
        TrainConfig(window=128, batch_size=batch, steps=steps, lr=2e-3, clip=1.0),
    )


#: the workshop's recipe, full size: for the experiment sweep, not the CPU build
WORKSHOP = {
    "rnn": _recipe("rnn", 256, 64, 1000),
    "lstm": _recipe("lstm", 256, 64, 2000),
}
#: the same shape scaled for the book's CPU build: half the width, half the batch, the
#: same windows and steps
CPU = {
    name: dataclasses.replace(
        r, hidden_size=128, train=dataclasses.replace(r.train, batch_size=32)
    )
    for name, r in WORKSHOP.items()
}
#: the book-reads-itself model: the CPU LSTM with 1,000 steps on the (much smaller)
#: prose snapshot
PROSE_LSTM = dataclasses.replace(
    CPU["lstm"], train=dataclasses.replace(CPU["lstm"].train, steps=1000)
)


def train_char_lm(
    corpus: str, recipe: LMRecipe, device: torch.device | str | None = None
) -> dict:
    """Train one model on ``corpus``'s training split, on ``device`` (the build's by
    default); return its weights (on the CPU), curve and vocabulary as plain data.

    The model's initial weights and its windows come from one generator
    seeded with ``recipe.seed``, drawn on the CPU.
    """
    splits = corpus_splits(corpus)
    vocab = Vocab(splits.train)
    torch.manual_seed(recipe.seed)  # the initial weights
    model = CharLM(len(vocab), recipe.cell, recipe.embedding_size, recipe.hidden_size)
    model = model.to(resolve_device(device))
    generator = torch.Generator().manual_seed(recipe.seed)  # the windows
    history = fit_next_token(model, vocab.encode(splits.train), recipe.train, generator)
    return {
        "corpus": corpus,
        "recipe": dataclasses.asdict(recipe),
        "chars": vocab.chars,
        "state_dict": {
            k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()
        },
        "history": history,
    }


def load_char_lm(
    result: dict, device: torch.device | str | None = None
) -> tuple[CharLM, Vocab]:
    """The trained model (in eval mode, on ``device``) and its vocabulary, from
    :func:`train_char_lm`'s result.
    """
    recipe = result["recipe"]
    vocab = Vocab("".join(result["chars"]))
    model = CharLM(
        len(vocab), recipe["cell"], recipe["embedding_size"], recipe["hidden_size"]
    )
    model.load_state_dict(result["state_dict"])
    return model.to(resolve_device(device)).eval(), vocab


def count_parameters(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
