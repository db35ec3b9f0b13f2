"""Character n-gram language models with add-k smoothing: the counting baseline of
Chapter 4.

An order-``n`` model predicts each character from the ``n - 1`` characters
before it:

    p(c | h) = (count(h, c) + k) / (count(h) + k |V|)

where ``h`` is the history, ``count`` counts occurrences in the training text
and ``V`` is the training text's character set. With ``k > 0`` every character
of ``V`` has a probability above zero after any history, seen or not; an
unseen history gives the uniform distribution ``1 / |V|``.

Scores are in nats (natural logarithms), the unit of
:func:`chapter_code.lm.perplexity.lm_loss_and_ppl`, so the counting model and the
recurrent ones go through the same arithmetic.

Pages: "Recurrent language models" (the fair comparison); the labs.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

import torch


class CharNGram:
    """An order-``order`` character model with add-``k`` smoothing.

    ``CharNGram(3, 0.1).fit(text)`` counts the text's trigrams;
    ``.nats_per_char(other)`` is the mean negative log-likelihood, in nats, of
    every character of ``other``.
    """

    def __init__(self, order: int, k: float) -> None:
        if isinstance(order, bool) or not isinstance(order, int) or order < 1:
            raise ValueError(
                "order must be an int >= 1 (1 = unigram, 2 = bigram, ...); got "
                f"{order!r}"
            )
        if (
            isinstance(k, bool)
            or not isinstance(k, (int, float))
            or not math.isfinite(k)
            or k <= 0
        ):
            raise ValueError(
                f"k must be a number > 0 (the add-k smoothing constant); got {k!r}"
            )
        self.order = order
        self.k = float(k)
        self.vocab: list[str] = []
        self._index: dict[str, int] = {}
        self._joint: Counter[str] = Counter()  # history + next character -> count
        self._history: Counter[str] = Counter()  # history -> count
        self._next: dict[
            str, tuple[list[int], list[int]]
        ] = {}  # history -> (next characters' ids, counts)

    def fit(self, text: str) -> CharNGram:
        """Count every ``order``-gram of ``text`` (histories shorter than ``order - 1``
        at its start are skipped).
        """
        if not isinstance(text, str) or len(text) < self.order:
            raise ValueError(
                f"text must be a string of at least order = {self.order} characters"
            )
        self.vocab = sorted(set(text))
        self._index = {c: i for i, c in enumerate(self.vocab)}
        n = self.order
        self._joint = Counter(text[i - n + 1 : i + 1] for i in range(n - 1, len(text)))
        self._history = Counter(text[i - n + 1 : i] for i in range(n - 1, len(text)))
        following: defaultdict[str, tuple[list[int], list[int]]] = defaultdict(
            lambda: ([], [])
        )
        for gram, count in self._joint.items():
            ids, counts = following[gram[:-1]]
            ids.append(self._index[gram[-1]])
            counts.append(count)
        self._next = dict(following)
        return self

    @property
    def stored_counts(self) -> int:
        """How many distinct ``order``-grams the model counted: the size of its
        table.
        """
        return len(self._joint)

    def log_prob(self, history: str, char: str) -> float:
        """ln p(``char`` | the last ``order - 1`` characters of ``history``)."""
        if not self.vocab:
            raise RuntimeError("call fit(text) before scoring")
        if char not in self._index:
            raise ValueError(
                f"character {char!r} is not in the training text's vocabulary of "
                f"{len(self.vocab)}"
            )
        h = history[len(history) - (self.order - 1) :] if self.order > 1 else ""
        numerator = self._joint[h + char] + self.k
        denominator = self._history[h] + self.k * len(self.vocab)
        return math.log(numerator / denominator)

    def nats_per_char(self, text: str, history: str = "") -> float:
        """Mean -ln p of every character of ``text``, each predicted from the ``order -
        1`` before it.

        The first characters take their history from the end of ``history``;
        where even that is too short, the available characters are used as the
        history (whose counts are then zero, so the prediction is uniform).
        """
        if not text:
            raise ValueError("text must hold at least one character to score")
        context = history + text
        offset = len(history)
        total = 0.0
        for i, char in enumerate(text):
            start = max(0, offset + i - (self.order - 1))
            total -= (
                self.log_prob(context[start : offset + i], char)
                if self.order > 1
                else self.log_prob("", char)
            )
        return total / len(text)

    def log_prob_matrix(self, text: str, history: str = "") -> torch.Tensor:
        """ln p(c | history) for every character ``c`` of the vocabulary at every
        position of ``text``: ``(N, V)``.

        Row ``i`` is the model's whole distribution for ``text[i]``, with the
        same histories as :meth:`nats_per_char`; log-probabilities are valid
        logits, so ``lm_loss_and_ppl(matrix, targets)`` scores the counts with
        the networks' arithmetic. float64.
        """
        if not self.vocab:
            raise RuntimeError("call fit(text) before scoring")
        if not text:
            raise ValueError("text must hold at least one character to score")
        for char in set(text):
            if char not in self._index:
                raise ValueError(
                    f"character {char!r} is not in the training text's vocabulary of "
                    f"{len(self.vocab)}"
                )
        context = history + text
        offset = len(history)
        rows: list[int] = []
        cols: list[int] = []
        seen: list[int] = []
        totals = []
        for i in range(len(text)):
            h = (
                context[max(0, offset + i - (self.order - 1)) : offset + i]
                if self.order > 1
                else ""
            )
            ids, counts = self._next.get(h, ((), ()))
            rows.extend([i] * len(ids))
            cols.extend(ids)
            seen.extend(counts)
            totals.append(self._history[h] + self.k * len(self.vocab))
        # (N, V): k everywhere
        matrix = torch.full((len(text), len(self.vocab)), self.k, dtype=torch.float64)
        # plus the counts
        matrix.index_put_(
            (
                torch.tensor(rows, dtype=torch.long),
                torch.tensor(cols, dtype=torch.long),
            ),
            torch.tensor(seen, dtype=torch.float64),
            accumulate=True,
        )
        return matrix.log() - torch.tensor(totals, dtype=torch.float64).log()[:, None]
