"""Many-to-one classification: which author wrote a passage, read one character at a
time.

A character LSTM reads a passage and classifies it from its last state alone
(many inputs, one output), against a counting baseline: one character n-gram
model per author (:class:`chapter_code.lm.ngram.CharNGram`), each passage given to
the author whose model finds it more likely (naive Bayes with equal priors).
Both are trained once, on passages of mixed lengths, and tested at every length
of ``AuthorshipConfig.lengths``.

The texts are the Shakespeare and Milton corpora (:mod:`chapter_code.corpora.texts`,
:mod:`chapter_code.corpora.milton`). :func:`normalize` strips the layout that would give
the author away without a word being read (speaker names and headings, stage
directions, line breaks, capitals, digits). :func:`split_blocks` cuts a text into
blocks and deals them to training, validation and test in turn, so every split
samples the whole text (all of Milton's four works, verse and prose) while no
passage is ever drawn across a block border: a test passage shares no character
with a training one. Each author contributes the same number of training
characters and the same number of passages to every batch and test set, so the
majority-class guess scores exactly one half.

Batch-first throughout: passages (B, L) of character ids, states (B, L, H).

Pages: "Beyond the single carried state" (many-to-one classification, in place
of the textbook chapter's movie-review exercise, whose data the book cannot ship).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

import torch
from torch import nn

from chapter_code.core.arguments import positive_int_fields, positive_ints
from chapter_code.core.device import resolve_device
from chapter_code.corpora.milton import milton_text
from chapter_code.corpora.texts import shakespeare_text
from chapter_code.lm.ngram import CharNGram

#: The characters a normalized passage can hold: lower-case letters, a space and light
#: punctuation.
ALPHABET = " !',-.:;?abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class AuthorshipConfig:
    """The passages, the model's widths, the recipe, and the baseline's candidate
    orders.
    """

    lengths: tuple[int, ...] = (16, 32, 64, 128, 256)  # passage lengths, in characters
    block: int = 2000  # characters per block; blocks are dealt to the splits in turn
    # of every `cycle` blocks, the last is test, the one before validation, the rest
    # training
    cycle: int = 10
    embedding_size: int = 16
    hidden_size: int = 64
    steps: int = 1000
    batch_size: int = 128  # half from each author
    lr: float = 1e-2
    clip: float = 1.0
    n_test: int = 400  # test passages per author and length
    # the n-gram orders tried on validation passages
    orders: tuple[int, ...] = (1, 2, 3, 4, 5)
    k: float = 0.1  # the n-gram models' add-k constant
    select_length: int = (
        64  # validation passages for choosing the order have this length
    )
    test_seed: int = 99

    def __post_init__(self) -> None:
        positive_int_fields(
            self,
            "block",
            "embedding_size",
            "hidden_size",
            "steps",
            "batch_size",
            "n_test",
            "select_length",
            "test_seed",
        )
        if (
            isinstance(self.cycle, bool)
            or not isinstance(self.cycle, int)
            or self.cycle < 3
        ):
            raise ValueError(
                "cycle must be an int >= 3 (training, validation and test blocks); "
                f"got {self.cycle!r}"
            )
        if self.batch_size % 2:
            raise ValueError(
                "batch_size must be even (half from each author); got "
                f"{self.batch_size}"
            )
        for name in ["lengths", "orders"]:
            values = getattr(self, name)
            if not values or any(
                isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in values
            ):
                raise ValueError(
                    f"{name} must be a non-empty tuple of ints >= 1; got {values!r}"
                )
        if max(self.lengths) > self.block or self.select_length > self.block:
            raise ValueError(
                f"lengths and select_length must be <= block = {self.block}; got "
                f"{self.lengths} and {self.select_length}"
            )
        if not self.lr > 0 or not self.clip > 0 or not self.k > 0:
            raise ValueError(
                f"lr, clip and k must be > 0; got lr={self.lr}, clip={self.clip}, "
                f"k={self.k}"
            )


# a line with capitals and no lower-case letter
_HEADING = re.compile(r"^[^a-z]*[A-Z][^a-z]*$")
_BRACKETS = re.compile(r"\[[^\]]*\]")  # a stage direction
_OUTSIDE = re.compile(f"[^{re.escape(ALPHABET)}]+")
_SPACES = re.compile(r" {2,}")


def normalize(text: str) -> str:
    """The words and punctuation of ``text`` without its layout.

    Lines with no lower-case letter (speaker names, act and book headings) and
    bracketed stage directions are dropped; the rest is lower-cased, every other
    character outside :data:`ALPHABET` (digits, brackets, quotes, line breaks)
    becomes a space, and runs of spaces become one.
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string; got {type(text).__name__}")
    kept = " ".join(line for line in text.split("\n") if not _HEADING.match(line))
    kept = _OUTSIDE.sub(" ", _BRACKETS.sub(" ", kept).lower())
    return _SPACES.sub(" ", kept).strip()


@dataclass(frozen=True)
class Blocks:
    """One text's blocks, dealt to the three splits."""

    train: list[str]
    valid: list[str]
    test: list[str]


def split_blocks(text: str, block: int, cycle: int) -> Blocks:
    """Cut ``text`` into whole blocks of ``block`` characters (a shorter tail is
    dropped) and deal them in turn.

    Block ``i`` goes to test when ``i % cycle == cycle - 1``, to validation when
    ``i % cycle == cycle - 2``, to training otherwise.
    """
    positive_ints(block=block)
    if isinstance(cycle, bool) or not isinstance(cycle, int) or cycle < 3:
        raise ValueError(f"cycle must be an int >= 3; got {cycle!r}")
    if len(text) < cycle * block:
        raise ValueError(
            f"text must hold at least cycle * block = {cycle * block} characters; "
            f"got {len(text)}"
        )
    blocks = [text[i : i + block] for i in range(0, len(text) - block + 1, block)]
    split: dict[int, list[str]] = {0: [], 1: [], 2: []}
    for i, piece in enumerate(blocks):
        split[{cycle - 1: 2, cycle - 2: 1}.get(i % cycle, 0)].append(piece)
    return Blocks(split[0], split[1], split[2])


def evenly(items: list[str], n: int) -> list[str]:
    """``n`` of ``items``, spread evenly over the list (all of them when ``n >=
    len(items)``).
    """
    positive_ints(n=n)
    if n >= len(items):
        return list(items)
    return [items[i * len(items) // n] for i in range(n)]


def sample_passages(
    blocks: list[str], n: int, length: int, generator: torch.Generator
) -> list[str]:
    """``n`` passages of ``length`` characters, each inside one block (block and start
    drawn uniformly).
    """
    positive_ints(n=n, length=length)
    if not blocks or min(len(b) for b in blocks) < length:
        raise ValueError(
            f"blocks must be non-empty and each at least length = {length} "
            "characters long"
        )
    which = torch.randint(len(blocks), (n,), generator=generator).tolist()
    starts = [
        int(torch.randint(len(blocks[w]) - length + 1, (1,), generator=generator))
        for w in which
    ]
    return [blocks[w][s : s + length] for w, s in zip(which, starts, strict=True)]


def encode(passages: list[str]) -> torch.Tensor:
    """Character ids (N, L) of equally long passages, by position in
    :data:`ALPHABET`.
    """
    if not passages or len({len(p) for p in passages}) != 1:
        raise ValueError("passages must be a non-empty list of strings of one length")
    index = {c: i for i, c in enumerate(ALPHABET)}
    try:
        return torch.tensor([[index[c] for c in p] for p in passages])  # (N, L)
    except KeyError as err:
        raise ValueError(
            f"passages must be normalized: character {err.args[0]!r} is not in ALPHABET"
        ) from None


class CharClassifier(nn.Module):
    """Embedding, one LSTM layer, a linear readout of the last state: ids (B, L) ->
    logits (B, classes).
    """

    def __init__(
        self, vocab: int, embedding_size: int, hidden_size: int, classes: int
    ) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, embedding_size)
        self.lstm = nn.LSTM(embedding_size, hidden_size, batch_first=True)
        self.readout = nn.Linear(hidden_size, classes)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        # (B, L, H): one state per character read
        states, _ = self.lstm(self.embed(ids))  # [1]
        # (B, classes): only the last state is read out
        return self.readout(states[:, -1])  # [2]


def ngram_predict(models: list[CharNGram], passages: list[str]) -> torch.Tensor:
    """For each passage, the index of the model under which it is most likely (N,):
    naive Bayes, equal priors.
    """
    if not models or not passages:
        raise ValueError("models and passages must be non-empty lists")
    # (N, classes)
    nats = torch.tensor([[m.nats_per_char(p) for m in models] for p in passages])
    return nats.argmin(dim=1)


def _balanced(
    blocks: list[Blocks], n: int, length: int, gen: torch.Generator, split: str
) -> tuple[list[str], torch.Tensor]:
    """``n`` passages of ``length`` from the ``split`` blocks of every author, and their
    labels (author's index).
    """
    passages = [
        p for b in blocks for p in sample_passages(getattr(b, split), n, length, gen)
    ]
    return passages, torch.arange(len(blocks)).repeat_interleave(n)


def train_authorship(
    texts: dict[str, str],
    seed: int,
    config: AuthorshipConfig = AuthorshipConfig(),
    device: torch.device | str | None = None,
) -> dict:
    """Train the LSTM classifier and fit the n-gram baseline; test both at every passage
    length.

    ``texts`` maps each author's name to a normalized text. Every author gets
    as many training blocks as the author with the fewest (spread evenly over
    the text). The n-gram order is the one of ``config.orders`` with the best
    accuracy on validation passages of ``select_length``; the LSTM takes no
    choice from validation. Each training step draws one length from
    ``config.lengths`` and an equal share of the batch from every author; Adam,
    clipping by global norm. Passages are drawn on the CPU and the LSTM runs on
    ``device`` (the build's by default); the results are CPU values.
    """
    if len(texts) < 2:
        raise ValueError(
            f"texts must map at least two authors to their texts; got {len(texts)}"
        )
    start = time.perf_counter()
    device = resolve_device(device)
    authors = list(texts)
    blocks = [split_blocks(texts[a], config.block, config.cycle) for a in authors]
    n_train = min(len(b.train) for b in blocks)
    blocks = [Blocks(evenly(b.train, n_train), b.valid, b.test) for b in blocks]

    # The baseline: one n-gram model per author, its order chosen on validation
    # passages.
    gen = torch.Generator().manual_seed(config.test_seed + 1)
    valid, valid_labels = _balanced(
        blocks, config.n_test, config.select_length, gen, "valid"
    )
    valid_acc = {}
    for order in config.orders:
        models = [CharNGram(order, config.k).fit(" ".join(b.train)) for b in blocks]
        valid_acc[order] = (
            (ngram_predict(models, valid) == valid_labels).float().mean().item()
        )
    # the best; the lowest order on a tie
    order = max(config.orders, key=lambda n: (valid_acc[n], -n))
    ngrams = [CharNGram(order, config.k).fit(" ".join(b.train)) for b in blocks]

    # The LSTM, many-to-one: one label per passage, read from the last state.
    torch.manual_seed(seed)  # the initial weights
    net = CharClassifier(
        len(ALPHABET), config.embedding_size, config.hidden_size, len(authors)
    ).to(device)
    data = torch.Generator().manual_seed(seed + 1)  # the training stream
    opt = torch.optim.Adam(net.parameters(), lr=config.lr)
    per_author = config.batch_size // len(authors)
    losses = []
    for _ in range(config.steps):
        length = config.lengths[
            int(torch.randint(len(config.lengths), (1,), generator=data))
        ]
        passages, labels = _balanced(blocks, per_author, length, data, "train")
        logits = net(encode(passages).to(device))
        loss = nn.functional.cross_entropy(logits, labels.to(device))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), config.clip)
        opt.step()
        losses.append(loss.item())

    net.eval()
    test = torch.Generator().manual_seed(config.test_seed)
    lstm_acc, ngram_acc = {}, {}
    for length in config.lengths:
        passages, labels = _balanced(blocks, config.n_test, length, test, "test")
        with torch.no_grad():
            predicted = net(encode(passages).to(device)).argmax(dim=1).cpu()
        lstm_acc[length] = (predicted == labels).float().mean().item()
        ngram_acc[length] = (
            (ngram_predict(ngrams, passages) == labels).float().mean().item()
        )
    return {
        "authors": authors,
        "lstm": lstm_acc,
        "ngram": ngram_acc,
        "ngram_order": order,
        "ngram_valid": valid_acc,
        "train_chars": n_train * config.block,
        "losses": losses,
        "state": {
            k: v.detach().to("cpu", copy=True) for k, v in net.state_dict().items()
        },
        "seconds": time.perf_counter() - start,
    }


#: The corpus files :func:`classify_shakespeare_milton` reads (to declare as a memoized
#: run's data).
CORPUS_FILES = ("data/shakespeare.txt", "data/milton.txt")


def classify_shakespeare_milton(
    seed: int,
    config: AuthorshipConfig = AuthorshipConfig(),
    device: torch.device | str | None = None,
) -> dict:
    """:func:`train_authorship` on the normalized Shakespeare and Milton corpora, in
    that order, on ``device`` (the build's by default).
    """
    texts = {
        "Shakespeare": normalize(shakespeare_text()),
        "Milton": normalize(milton_text()),
    }
    return train_authorship(texts, seed, config, device)
