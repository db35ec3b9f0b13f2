"""Character n-gram language models with add-k smoothing: the counting baseline of Chapter 4.

An order-``n`` model predicts each character from the ``n - 1`` characters
before it:

    p(c | h) = (count(h, c) + k) / (count(h) + k |V|)

where ``h`` is the history, ``count`` counts occurrences in the training text
and ``V`` is the training text's character set. With ``k > 0`` every character
of ``V`` has a probability above zero after any history, seen or not; an
unseen history gives the uniform distribution ``1 / |V|``.

Scores are in nats (natural logarithms), the unit of :func:`chapter_code.lm.lm_loss_and_ppl`,
so the counting model and the recurrent ones go through the same arithmetic.

Pages: "Recurrent language models" (the fair comparison); the labs.
"""

from __future__ import annotations

import math
from collections import Counter


class CharNGram:
    """An order-``order`` character model with add-``k`` smoothing.

    ``CharNGram(3, 0.1).fit(text)`` counts the text's trigrams;
    ``.nats_per_char(other)`` is the mean negative log-likelihood, in nats, of
    every character of ``other``.
    """

    def __init__(self, order: int, k: float) -> None:
        if isinstance(order, bool) or not isinstance(order, int) or order < 1:
            raise ValueError(f"order must be an int >= 1 (1 = unigram, 2 = bigram, ...); got {order!r}")
        if isinstance(k, bool) or not isinstance(k, (int, float)) or not math.isfinite(k) or k <= 0:
            raise ValueError(f"k must be a number > 0 (the add-k smoothing constant); got {k!r}")
        self.order = order
        self.k = float(k)
        self.vocab: list[str] = []
        self._index: dict[str, int] = {}
        self._joint: Counter[str] = Counter()  # history + next character -> count
        self._history: Counter[str] = Counter()  # history -> count

    def fit(self, text: str) -> CharNGram:
        """Count every ``order``-gram of ``text`` (histories shorter than ``order - 1`` at its start are skipped)."""
        if not isinstance(text, str) or len(text) < self.order:
            raise ValueError(f"text must be a string of at least order = {self.order} characters")
        self.vocab = sorted(set(text))
        self._index = {c: i for i, c in enumerate(self.vocab)}
        n = self.order
        self._joint = Counter(text[i - n + 1 : i + 1] for i in range(n - 1, len(text)))
        self._history = Counter(text[i - n + 1 : i] for i in range(n - 1, len(text)))
        return self

    def log_prob(self, history: str, char: str) -> float:
        """ln p(``char`` | the last ``order - 1`` characters of ``history``)."""
        if not self.vocab:
            raise RuntimeError("call fit(text) before scoring")
        if char not in self._index:
            raise ValueError(f"character {char!r} is not in the training text's vocabulary of {len(self.vocab)}")
        h = history[len(history) - (self.order - 1) :] if self.order > 1 else ""
        numerator = self._joint[h + char] + self.k
        denominator = self._history[h] + self.k * len(self.vocab)
        return math.log(numerator / denominator)

    def nats_per_char(self, text: str, history: str = "") -> float:
        """Mean -ln p of every character of ``text``, each predicted from the ``order - 1`` before it.

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
            total -= self.log_prob(context[start : offset + i], char) if self.order > 1 else self.log_prob("", char)
        return total / len(text)
