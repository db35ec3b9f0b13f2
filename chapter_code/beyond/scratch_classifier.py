"""Many-to-one from scratch: a vanilla and an LSTM cell unrolled over padded, masked
passages.

The exercise version of the authorship classifier
(:mod:`chapter_code.beyond.authorship`): both cells are written by hand, the passages of
one batch have different lengths and are padded to the longest, and a mask keeps each
passage's state unchanged on its padded steps, so the state read out is the one after
its last real character.

- :class:`VanillaCell`: h_t = tanh(W_xh x_t + b + W_hh h_{t-1}), W_xh
  Xavier-initialised,
  W_hh orthogonal and without a bias.
- :class:`FusedLSTMCell`: one linear map from [h_{t-1}, x_t] to the four
  pre-activations (i, f, g, o, nn.LSTM's order), forget bias +1.
- :func:`unroll_masked`: h_t = m_t * cell(x_t, h_{t-1}) + (1 - m_t) * h_{t-1}, m_t = 1
  on real steps.
- :func:`train_scratch_classifier`: one cell, Shakespeare against Milton, the gradient
  norm before clipping at every step, validation accuracy and a confusion matrix.

Batch-first throughout: ids (B, L), inputs (B, L, F), states (B, H).

Pages: "Beyond the single carried state" (the many-to-one exercise, in place of
the textbook chapter's movie-review exercise).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import torch
from torch import nn

from chapter_code.beyond.authorship import (
    ALPHABET,
    Blocks,
    encode,
    evenly,
    normalize,
    sample_passages,
    split_blocks,
)
from chapter_code.core.arguments import positive_int_fields, positive_ints
from chapter_code.core.device import resolve_device
from chapter_code.corpora.milton import milton_text
from chapter_code.corpora.texts import shakespeare_text

#: The padding id: one past the alphabet; its embedding row stays zero.
PAD = len(ALPHABET)


class VanillaCell(nn.Module):
    """h' = tanh(W_xh x + b + W_hh h): separate input and recurrent maps, the recurrent
    one without a bias.
    """

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        positive_ints(input_size=input_size, hidden_size=hidden_size)
        self.hidden_size = hidden_size
        self.input_map = nn.Linear(input_size, hidden_size)
        self.recurrent = nn.Linear(hidden_size, hidden_size, bias=False)
        nn.init.xavier_uniform_(self.input_map.weight)
        nn.init.zeros_(self.input_map.bias)
        nn.init.orthogonal_(self.recurrent.weight)

    def initial_state(
        self, batch: int, device: torch.device | None = None
    ) -> tuple[torch.Tensor, ...]:
        return (torch.zeros(batch, self.hidden_size, device=device),)

    def forward(
        self, x: torch.Tensor, state: tuple[torch.Tensor, ...]
    ) -> tuple[tuple[torch.Tensor, ...], None]:
        """One step: x (B, F), state (h,) -> (h',), and no gates."""
        (h,) = state
        return (torch.tanh(self.input_map(x) + self.recurrent(h)),), None


class FusedLSTMCell(nn.Module):
    """The LSTM step with one fused map [h, x] -> (i, f, g, o) pre-activations; forget
    bias ``forget_bias``.
    """

    def __init__(
        self, input_size: int, hidden_size: int, forget_bias: float = 1.0
    ) -> None:
        super().__init__()
        positive_ints(input_size=input_size, hidden_size=hidden_size)
        self.hidden_size = hidden_size
        self.fused = nn.Linear(hidden_size + input_size, 4 * hidden_size)  # (4H, H + F)
        with torch.no_grad():
            # the f block
            self.fused.bias[hidden_size : 2 * hidden_size].fill_(forget_bias)

    def initial_state(
        self, batch: int, device: torch.device | None = None
    ) -> tuple[torch.Tensor, ...]:
        h = torch.zeros(batch, self.hidden_size, device=device)
        return h, torch.zeros_like(h)

    def forward(
        self, x: torch.Tensor, state: tuple[torch.Tensor, ...]
    ) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
        """One step: x (B, F), state (h, c) -> (h', c') and the gates (3, B, H) in the
        order i, f, o.
        """
        h, c = state
        # four (B, H)
        i, f, g, o = self.fused(torch.cat([h, x], dim=-1)).chunk(4, dim=-1)
        i, f, o, g = torch.sigmoid(i), torch.sigmoid(f), torch.sigmoid(o), torch.tanh(g)
        c = f * c + i * g
        return (o * torch.tanh(c), c), torch.stack([i, f, o])


def unroll_masked(
    cell: nn.Module, x: torch.Tensor, lengths: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Run ``cell`` over x (B, L, F), keeping each row's state on its steps t >=
    lengths[row]; ``lengths`` (B,) on x's device.

    Returns the last real state h (B, H) and, for a gated cell, the gates at every
    step (L, 3, B, H) (None for the vanilla cell).
    """
    if x.dim() != 3:
        raise ValueError(
            f"x must be (batch, time, features); got shape {tuple(x.shape)}"
        )
    if (
        lengths.shape != (x.shape[0],)
        or int(lengths.min()) < 1
        or int(lengths.max()) > x.shape[1]
    ):
        raise ValueError(
            f"lengths must be (batch,) = ({x.shape[0]},) with values in [1, "
            f"{x.shape[1]}]"
        )
    # (B, L): True on real steps
    mask = torch.arange(x.shape[1], device=x.device) < lengths[:, None]
    state = cell.initial_state(x.shape[0], x.device)
    trace = []
    for t in range(x.shape[1]):  # one step at a time over the time axis
        new, gates = cell(x[:, t], state)
        keep = mask[:, t, None]  # (B, 1)
        state = tuple(
            torch.where(keep, n, old) for n, old in zip(new, state, strict=True)
        )
        trace.append(gates)
    return state[0], (torch.stack(trace) if trace[0] is not None else None)


class ScratchClassifier(nn.Module):
    """Embedding with a zero padding row, a from-scratch cell unrolled with a mask, a
    readout of the last state.
    """

    def __init__(
        self, cell: str, embedding_size: int, hidden_size: int, classes: int = 2
    ) -> None:
        super().__init__()
        if cell not in ("rnn", "lstm"):
            raise ValueError(f"cell must be 'rnn' or 'lstm'; got {cell!r}")
        self.embed = nn.Embedding(PAD + 1, embedding_size, padding_idx=PAD)
        self.cell = (
            VanillaCell(embedding_size, hidden_size)
            if cell == "rnn"
            else FusedLSTMCell(embedding_size, hidden_size)
        )
        self.readout = nn.Linear(hidden_size, classes)

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Logits (B, classes) from padded ids (B, L) and true lengths (B,)."""
        h, _ = unroll_masked(self.cell, self.embed(ids), lengths)
        return self.readout(h)


def pad_passages(passages: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """Padded ids (N, L_max) of normalized passages of any lengths, and the lengths
    (N,).
    """
    if not passages or min(len(p) for p in passages) < 1:
        raise ValueError("passages must be a non-empty list of non-empty strings")
    longest = max(len(p) for p in passages)
    ids = torch.full((len(passages), longest), PAD)
    for row, p in enumerate(passages):
        ids[row, : len(p)] = encode([p])[0]
    return ids, torch.tensor([len(p) for p in passages])


def confusion_matrix(
    labels: torch.Tensor, predicted: torch.Tensor, classes: int
) -> torch.Tensor:
    """Counts (classes, classes): row = true class, column = predicted class."""
    if labels.shape != predicted.shape:
        raise ValueError(
            f"labels and predicted must have one shape; got {tuple(labels.shape)} and "
            f"{tuple(predicted.shape)}"
        )
    counts = torch.zeros(classes, classes, dtype=torch.long, device=labels.device)
    counts.index_put_((labels, predicted), torch.ones_like(labels), accumulate=True)
    return counts


@dataclass(frozen=True)
class ScratchConfig:
    """Passage lengths, widths and a short recipe (the exercise must stay cheap)."""

    min_len: int = 16
    max_len: int = 64
    embedding_size: int = 16
    hidden_size: int = 32
    steps: int = 300
    batch_size: int = 32  # half from each author
    lr: float = 3e-3
    clip: float = 1.0
    n_valid: int = 200  # validation passages per author
    block: int = 2000
    cycle: int = 10
    probe_len: int = 48  # length of the passage whose gates are traced

    def __post_init__(self) -> None:
        positive_int_fields(
            self,
            "min_len",
            "max_len",
            "embedding_size",
            "hidden_size",
            "steps",
            "batch_size",
            "n_valid",
            "block",
            "probe_len",
        )
        if (
            not self.min_len <= self.max_len <= self.block
            or self.probe_len > self.block
        ):
            raise ValueError(
                "need min_len <= max_len <= block and probe_len <= block; got "
                f"{self.min_len}, {self.max_len}, {self.block}, {self.probe_len}"
            )
        if self.batch_size % 2:
            raise ValueError(
                "batch_size must be even (half from each author); got "
                f"{self.batch_size}"
            )


def _mixed(
    blocks: list[Blocks],
    n: int,
    config: ScratchConfig,
    gen: torch.Generator,
    split: str,
) -> tuple[list[str], torch.Tensor]:
    """``n`` passages per author from ``split``, each cut to a length drawn in [min_len,
    max_len]; labels.
    """
    passages = []
    for b in blocks:
        drawn = sample_passages(getattr(b, split), n, config.max_len, gen)
        cuts = torch.randint(
            config.min_len, config.max_len + 1, (n,), generator=gen
        ).tolist()
        passages += [p[:k] for p, k in zip(drawn, cuts, strict=True)]
    return passages, torch.arange(len(blocks)).repeat_interleave(n)


def train_scratch_classifier(
    texts: dict[str, str],
    cell: str,
    seed: int,
    config: ScratchConfig = ScratchConfig(),
    device: torch.device | str | None = None,
) -> dict:
    """Train one from-scratch cell on padded passages of mixed lengths; validate; trace
    the LSTM's gates.

    Adam; the global gradient norm is recorded before clipping at every step.
    The gate trace (LSTM only) is over the validation passage of ``probe_len``
    characters that the trained model gives to its author most confidently.
    Passages are drawn on the CPU, the model runs on ``device`` (the build's by
    default), and the results are CPU values.
    """
    if len(texts) != 2:
        raise ValueError(
            f"texts must map two authors to normalized texts; got {len(texts)}"
        )
    start = time.perf_counter()
    device = resolve_device(device)
    authors = list(texts)
    blocks = [split_blocks(texts[a], config.block, config.cycle) for a in authors]
    n_train = min(len(b.train) for b in blocks)
    blocks = [Blocks(evenly(b.train, n_train), b.valid, b.test) for b in blocks]

    torch.manual_seed(seed)
    net = ScratchClassifier(
        cell, config.embedding_size, config.hidden_size, len(authors)
    ).to(device)
    data = torch.Generator().manual_seed(seed + 1)
    opt = torch.optim.Adam(net.parameters(), lr=config.lr)
    losses, grad_norms = [], []
    for _ in range(config.steps):
        passages, labels = _mixed(blocks, config.batch_size // 2, config, data, "train")
        ids, lengths = pad_passages(passages)
        logits = net(ids.to(device), lengths.to(device))
        loss = nn.functional.cross_entropy(logits, labels.to(device))
        opt.zero_grad()
        loss.backward()
        # the norm before
        grad_norms.append(
            float(nn.utils.clip_grad_norm_(net.parameters(), config.clip))
        )
        opt.step()
        losses.append(loss.item())

    net.eval()
    valid_gen = torch.Generator().manual_seed(seed + 2)
    passages, labels = _mixed(blocks, config.n_valid, config, valid_gen, "valid")
    ids, lengths = pad_passages(passages)
    with torch.no_grad():
        predicted = net(ids.to(device), lengths.to(device)).argmax(dim=1).cpu()
    result = {
        "cell": cell,
        "authors": authors,
        "accuracy": (predicted == labels).float().mean().item(),
        "confusion": confusion_matrix(labels, predicted, len(authors)).tolist(),
        "losses": losses,
        "grad_norms": grad_norms,
        "seconds": 0.0,
    }
    if cell == "lstm":
        probe_config = replace(
            config, min_len=config.probe_len, max_len=config.probe_len
        )
        probes, probe_labels = _mixed(
            blocks, config.n_valid, probe_config, valid_gen, "valid"
        )
        ids, lengths = pad_passages(probes)
        ids, lengths = ids.to(device), lengths.to(device)
        with torch.no_grad():
            # (N,)
            p = net(ids, lengths).softmax(dim=1)[
                torch.arange(len(probes)), probe_labels
            ]
            best = int(p.argmax())
            _, gates = unroll_masked(
                net.cell, net.embed(ids[best : best + 1]), lengths[best : best + 1]
            )
        # (L, 3)
        result.update(
            probe=probes[best],
            probe_author=authors[int(probe_labels[best])],
            probe_confidence=float(p[best]),
            gates=gates[:, :, 0].mean(dim=-1).tolist(),
        )
    result["seconds"] = time.perf_counter() - start
    return result


#: The corpus files :func:`scratch_shakespeare_milton` reads (to declare as a memoized
#: run's data).
CORPUS_FILES = ("data/shakespeare.txt", "data/milton.txt")


def scratch_shakespeare_milton(
    cell: str,
    seed: int,
    config: ScratchConfig = ScratchConfig(),
    device: torch.device | str | None = None,
) -> dict:
    """:func:`train_scratch_classifier` on the normalized Shakespeare and Milton
    corpora, on ``device`` (the build's by default).
    """
    texts = {
        "Shakespeare": normalize(shakespeare_text()),
        "Milton": normalize(milton_text()),
    }
    return train_scratch_classifier(texts, cell, seed, config, device)
