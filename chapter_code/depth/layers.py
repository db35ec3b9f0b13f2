"""Depth and direction: stacked and bidirectional recurrent layers, counted, shaped and
trained.

Batch-first throughout: token ids are ``(B, T)``, features ``(B, T, F)``.

*Counting.* One recurrent layer with ``k`` blocks (``k = 1`` for a vanilla
RNN, ``3`` for a GRU, ``4`` for an LSTM) reading ``d`` features into ``h``
units has ``k h (d + h + b)`` parameters, where ``b`` is the number of bias
vectors: the textbook formula ``k h (d + h + 1)`` counts one, PyTorch keeps
two (``bias_ih`` and ``bias_hh``, which only enter as their sum). In a stack,
layer 1 reads the ``d`` input features and every later layer reads the ``h``
(or, bidirectional, ``2h``) outputs of the layer below
(:func:`layer_input_sizes`, :func:`stack_parameters`).

*The bidirectional trap.* :class:`DirectionalLM` is a character model whose
recurrent layer may read in both directions. Trained by next-character
prediction (with :func:`chapter_code.lm.char_lm.fit_next_token`), a
bidirectional one sees the answer: its backward half has read the next
character. :func:`prefix_only_loss` scores a model the way generation uses
it, from the characters before each position only, and
:func:`generate_rereading` samples by re-reading the whole context at every
step (a bidirectional model has no state to carry forward).

*What bidirectional layers are for.* :func:`long_word_tags` labels every
letter by whether its word has at least ``min_letters`` letters: a
tag that depends on both sides of the position. :class:`Tagger` is trained on
it by :func:`fit_tagger` in a causal and a bidirectional version.

Pages: "Depth, direction and scale". Follows Schuster and Paliwal (1997) for
the bidirectional layer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from chapter_code.core.arguments import positive_ints
from chapter_code.core.device import model_device, resolve_device
from chapter_code.lm.char_lm import TrainConfig, Vocab, fit_next_token
from chapter_code.lm.char_models import corpus_splits
from chapter_code.lm.perplexity import lm_loss_and_ppl

#: blocks per recurrent layer: one affine map of [x, h] per gate or candidate
BLOCKS: dict[str, int] = {"rnn": 1, "gru": 3, "lstm": 4}
_MODULES = {nn.RNN: "rnn", nn.GRU: "gru", nn.LSTM: "lstm"}


def layer_parameters(
    cell: str, input_size: int, hidden_size: int, bias_vectors: int = 2
) -> int:
    """``k h (d + h + b)``: parameters of one recurrent layer (one direction), ``k``
    from :data:`BLOCKS`.

    ``bias_vectors=1`` is the textbook count (``4h(d+h+1)`` for an LSTM);
    ``2``, the default, is PyTorch's (``bias_ih`` and ``bias_hh``).
    """
    if cell not in BLOCKS:
        raise ValueError(f"cell must be one of {sorted(BLOCKS)}; got {cell!r}")
    positive_ints(input_size=input_size, hidden_size=hidden_size)
    if bias_vectors not in (0, 1, 2):
        raise ValueError(f"bias_vectors must be 0, 1 or 2; got {bias_vectors!r}")
    return BLOCKS[cell] * hidden_size * (input_size + hidden_size + bias_vectors)


def layer_input_sizes(
    input_size: int, hidden_size: int, num_layers: int, bidirectional: bool = False
) -> list[int]:
    """Features each layer of a stack reads: ``d`` for the first, ``h`` (``2h`` if
    bidirectional) for the rest.
    """
    positive_ints(input_size=input_size, hidden_size=hidden_size, num_layers=num_layers)
    below = hidden_size * (2 if bidirectional else 1)
    return [input_size] + [below] * (num_layers - 1)


def stack_parameters(
    cell: str,
    input_size: int,
    hidden_size: int,
    num_layers: int,
    bidirectional: bool = False,
    bias_vectors: int = 2,
) -> list[int]:
    """Parameters of each layer of a stack (both directions together), in order."""
    directions = 2 if bidirectional else 1
    return [
        directions * layer_parameters(cell, d, hidden_size, bias_vectors)
        for d in layer_input_sizes(input_size, hidden_size, num_layers, bidirectional)
    ]


def module_layer_parameters(module: nn.RNNBase) -> list[int]:
    """The parameters PyTorch holds for each layer of ``module`` (``nn.RNN``, ``nn.GRU``
    or ``nn.LSTM``).
    """
    if type(module) not in _MODULES:
        raise TypeError(
            f"module must be an nn.RNN, nn.GRU or nn.LSTM; got {type(module).__name__}"
        )
    counts = [0] * module.num_layers
    for name, p in module.named_parameters():  # e.g. weight_hh_l1_reverse
        layer = int(name.split("_l")[1].split("_")[0])
        counts[layer] += p.numel()
    return counts


# ----------------------------------------------------------------------------- the trap


class DirectionalLM(nn.Module):
    """Embedding, one LSTM layer reading forwards or both ways, and a read-out of every
    position.

    With ``bidirectional=True`` the read-out sees ``[h_fwd_t, h_bwd_t]`` (``2H``
    features): the forward state has read ``x_1..x_t``, the backward state
    ``x_T..x_t``.
    """

    def __init__(
        self,
        vocab_size: int,
        embedding_size: int,
        hidden_size: int,
        bidirectional: bool,
    ) -> None:
        super().__init__()
        positive_ints(
            vocab_size=vocab_size,
            embedding_size=embedding_size,
            hidden_size=hidden_size,
        )
        self.bidirectional = bidirectional
        self.embed = nn.Embedding(vocab_size, embedding_size)
        self.rnn = nn.LSTM(
            embedding_size, hidden_size, batch_first=True, bidirectional=bidirectional
        )
        self.readout = nn.Linear(hidden_size * (2 if bidirectional else 1), vocab_size)

    def forward(
        self, tokens: torch.Tensor, state: object = None
    ) -> tuple[torch.Tensor, object]:
        """Logits ``(B, T, V)`` for every position of ``tokens`` ``(B, T)``, and the
        final state.
        """
        if tokens.dim() != 2 or tokens.dtype != torch.long:
            raise ValueError(
                f"tokens must be int64 of shape (B, T); got {tokens.dtype} "
                f"{tuple(tokens.shape)}"
            )
        states, last = self.rnn(self.embed(tokens), state)  # (B, T, H) or (B, T, 2H)
        return self.readout(states), last


@dataclass(frozen=True)
class TrapConfig:
    """A small character model on a slice of a corpus, trained by next-character
    prediction.
    """

    train_chars: int = 200_000
    embedding_size: int = 32
    hidden_size: int = 96
    train: TrainConfig = TrainConfig(
        window=64, batch_size=32, steps=400, lr=3e-3, clip=1.0
    )
    seed: int = 0


def _slice(corpus: str, config: TrapConfig) -> tuple[str, Vocab]:
    """The first ``config.train_chars`` characters of ``corpus``'s training split, and
    that split's vocabulary.
    """
    train = corpus_splits(corpus).train
    if len(train) < config.train_chars:
        raise ValueError(
            f"train_chars must be at most {len(train)} for corpus {corpus!r}; got "
            f"{config.train_chars}"
        )
    return train[: config.train_chars], Vocab(train)


def train_directional(
    corpus: str,
    config: TrapConfig,
    bidirectional: bool,
    device: torch.device | str | None = None,
) -> dict:
    """Train a :class:`DirectionalLM` on ``device`` (the build's by default) on a
    slice of ``corpus``; return weights (on the CPU), curve and vocabulary.
    """
    train, vocab = _slice(corpus, config)
    torch.manual_seed(config.seed)
    model = DirectionalLM(
        len(vocab), config.embedding_size, config.hidden_size, bidirectional
    ).to(resolve_device(device))
    generator = torch.Generator().manual_seed(config.seed)
    history = fit_next_token(model, vocab.encode(train), config.train, generator)  # type: ignore[arg-type]
    return {
        "chars": vocab.chars,
        "bidirectional": bidirectional,
        "history": history,
        "state_dict": cpu_state(model),
    }


def cpu_state(model: nn.Module) -> dict[str, torch.Tensor]:
    """A copy of ``model``'s weights on the CPU, wherever it trained."""
    return {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}


def load_directional(
    result: dict, config: TrapConfig, device: torch.device | str | None = None
) -> tuple[DirectionalLM, Vocab]:
    """The trained model (eval mode, on ``device``) and its vocabulary, from
    :func:`train_directional`'s result.
    """
    vocab = Vocab("".join(result["chars"]))
    model = DirectionalLM(
        len(vocab), config.embedding_size, config.hidden_size, result["bidirectional"]
    )
    model.load_state_dict(result["state_dict"])
    return model.to(resolve_device(device)).eval(), vocab


@torch.no_grad()
def prefix_only_loss(
    model: nn.Module, ids: torch.Tensor, context: int, positions: int
) -> float:
    """Mean nats of the next character at ``positions`` places, each predicted from the
    ``context`` before it.

    Position ``j`` (``j = 0 .. positions - 1``) reads ``ids[j : j + context]``
    and is scored on ``ids[j + context]``, as generation would use the model:
    nothing after the scored character's predecessor is read.
    """
    positive_ints(context=context, positions=positions)
    if ids.dim() != 1 or ids.numel() < context + positions:
        raise ValueError(
            "ids must be 1-D with at least context + positions = "
            f"{context + positions} tokens"
        )
    model.eval()
    ids = ids.to(model_device(model))
    ### BEGIN SOLUTION
    rows = torch.arange(positions)[:, None] + torch.arange(context)  # (N, C)
    logits, _ = model(ids[rows])  # (N, C, V)
    return lm_loss_and_ppl(logits[:, -1], ids[context : context + positions])[
        0
    ].item()  # (N, V) vs (N,)
    ### END SOLUTION


@torch.no_grad()
def generate_rereading(
    model: nn.Module,
    prefix: torch.Tensor,
    steps: int,
    rule: Callable[[torch.Tensor, torch.Generator], torch.Tensor],
    generator: torch.Generator,
    context: int = 64,
) -> torch.Tensor:
    """Continue ``prefix`` (int64 ``(T,)``) by ``steps`` tokens, re-reading the last
    ``context`` tokens each step.
    """
    if prefix.dim() != 1 or prefix.numel() < 1 or prefix.dtype != torch.long:
        raise ValueError(
            "prefix must be a non-empty int64 tensor of shape (T,); got "
            f"{tuple(prefix.shape)}"
        )
    positive_ints(context=context)
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps must be an int >= 0; got {steps!r}")
    model.eval()
    device = model_device(model)
    tokens = prefix.tolist()
    for _ in range(steps):
        # (1, t, V): read again from scratch
        logits, _ = model(torch.tensor(tokens[-context:], device=device).unsqueeze(0))
        # drawn on the CPU: the same draws on every device
        tokens.append(int(rule(logits[0, -1].cpu(), generator)))
    return torch.tensor(tokens[prefix.numel() :], dtype=torch.long)


# ----------------------------------------------------------------------------- tagging


def long_word_tags(text: str, min_letters: int = 5) -> torch.Tensor:
    """``1`` at every letter of a word with at least ``min_letters`` letters, else
    ``0``; int64 ``(len(text),)``.

    A word is a maximal run of letters. Whether a letter's word is long
    depends on the letters before it and after it.
    """
    positive_ints(min_letters=min_letters)
    tags = torch.zeros(len(text), dtype=torch.long)
    start = None
    for i, ch in enumerate(text + " "):
        if ch.isalpha():
            start = i if start is None else start
        elif start is not None:
            if i - start >= min_letters:
                tags[start:i] = 1
            start = None
    return tags


class Tagger(nn.Module):
    """Embedding, one LSTM layer (forwards or both ways) and a two-way classifier at
    every position.
    """

    def __init__(
        self,
        vocab_size: int,
        embedding_size: int,
        hidden_size: int,
        bidirectional: bool,
    ) -> None:
        super().__init__()
        self.lm = DirectionalLM(vocab_size, embedding_size, hidden_size, bidirectional)
        self.lm.readout = nn.Linear(hidden_size * (2 if bidirectional else 1), 2)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Tag logits ``(B, T, 2)`` for ``tokens`` ``(B, T)``."""
        return self.lm(tokens)[0]


def fit_tagger(
    model: Tagger,
    ids: torch.Tensor,
    tags: torch.Tensor,
    config: TrainConfig,
    generator: torch.Generator,
) -> list[tuple[int, float]]:
    """Train ``model`` to predict ``tags`` from ``ids`` (both ``(N,)``) on random
    windows; return the loss curve.
    """
    if ids.shape != tags.shape or ids.dim() != 1 or ids.numel() <= config.window:
        raise ValueError(
            "ids and tags must be 1-D, of equal length, longer than window = "
            f"{config.window}"
        )
    ids, tags = ids.to(model_device(model)), tags.to(model_device(model))
    opt = torch.optim.Adam(model.parameters(), lr=config.lr)
    history = []
    model.train()
    for step in range(1, config.steps + 1):
        starts = torch.randint(
            0, ids.numel() - config.window, (config.batch_size,), generator=generator
        )
        rows = starts[:, None] + torch.arange(config.window)  # (B, W)
        logits = model(ids[rows])  # (B, W, 2)
        loss = nn.functional.cross_entropy(
            logits.reshape(-1, 2), tags[rows].reshape(-1)
        )
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), config.clip)
        opt.step()
        if step % config.log_every == 0 or step == config.steps:
            history.append((step, loss.item()))
    return history


@torch.no_grad()
def tag_accuracy_by_letter(
    model: Tagger,
    vocab: Vocab,
    text: str,
    window: int,
    min_letters: int = 5,
    max_index: int = 6,
) -> dict[int, float]:
    """Accuracy on letters, by the letter's index in its word (1 = first; ``max_index``
    gathers the rest).

    The text is read in consecutive windows of ``window`` characters; letters
    of words cut by a window edge are left out, so every scored letter's word
    lies whole inside its window.
    """
    positive_ints(window=window)
    model.eval()
    n = len(text) // window
    vocab_ids, tags = (
        vocab.encode(text[: n * window]),
        long_word_tags(text[: n * window], min_letters),
    )
    # (n * W,), back on the CPU beside the tags
    pred = model(vocab_ids.reshape(n, window).to(model_device(model)))
    pred = pred.argmax(-1).reshape(-1).cpu()
    correct: dict[int, list[int]] = {}
    for w in range(n):
        chunk = text[w * window : (w + 1) * window]
        i = 0
        while i < window:
            if not chunk[i].isalpha():
                i += 1
                continue
            j = i
            while j < window and chunk[j].isalpha():
                j += 1
            whole = (
                i > 0 or w == 0 or not text[w * window - 1].isalpha()
            ) and j < window
            if whole:
                for k in range(i, j):
                    pos = w * window + k
                    correct.setdefault(min(k - i + 1, max_index), []).append(
                        int(pred[pos] == tags[pos])
                    )
            i = j
    return {k: sum(v) / len(v) for k, v in sorted(correct.items())}


def train_tagger(
    corpus: str,
    config: TrapConfig,
    bidirectional: bool,
    min_letters: int = 5,
    device: torch.device | str | None = None,
) -> dict:
    """Train a :class:`Tagger` on ``device`` (the build's by default) on a slice of
    ``corpus`` with ``config``'s sizes and schedule.
    """
    train, vocab = _slice(corpus, config)
    torch.manual_seed(config.seed)
    model = Tagger(len(vocab), config.embedding_size, config.hidden_size, bidirectional)
    model = model.to(resolve_device(device))
    generator = torch.Generator().manual_seed(config.seed)
    history = fit_tagger(
        model,
        vocab.encode(train),
        long_word_tags(train, min_letters),
        config.train,
        generator,
    )
    return {
        "chars": vocab.chars,
        "bidirectional": bidirectional,
        "history": history,
        "state_dict": cpu_state(model),
    }


def load_tagger(
    result: dict, config: TrapConfig, device: torch.device | str | None = None
) -> tuple[Tagger, Vocab]:
    """The trained tagger (eval mode, on ``device``) and its vocabulary, from
    :func:`train_tagger`'s result.
    """
    vocab = Vocab("".join(result["chars"]))
    model = Tagger(
        len(vocab), config.embedding_size, config.hidden_size, result["bidirectional"]
    )
    model.load_state_dict(result["state_dict"])
    return model.to(resolve_device(device)).eval(), vocab
