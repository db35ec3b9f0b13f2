"""Many small recurrent models trained as one computation: a leading model axis M on
every tensor.

Small recurrent layers spend their time on per-operation overhead (80 tiny steps,
each a handful of small kernels), not on arithmetic. Stacking M independent
models of one cell type turns M small matrix products per step into one batched
product, so the overhead is paid once for all of them.

Layout and gate order follow PyTorch exactly, with a model axis in front:
``weight_ih`` (M, G*H, V), ``weight_hh`` (M, G*H, H), ``bias_ih``/``bias_hh``
(M, G*H); G = 1 (tanh RNN), 4 (LSTM: i, f, g, o) or 3 (GRU: r, z, n, with
PyTorch's reset-after candidate). The readout is ``weight`` (M, V, H) and
``bias`` (M, V). Slice m of every tensor is one model, and nothing mixes slices:

- the loss is the sum over models of each model's mean cross-entropy, so the
  gradient of slice m is exactly model m's own gradient;
- clipping computes one norm per model over its own slices (:func:`clip_per_model`);
- Adam is elementwise, so one Adam over the stacked tensors gives every slice
  the update it would get alone (all slices share the step count, as they all
  start together).

Pages: "Gated memory: LSTM and GRU" (the memory-test grid).
"""

from __future__ import annotations

import torch
from torch import nn

from chapter_code.core.arguments import positive_ints

GATE_COUNT = {"rnn": 1, "lstm": 4, "gru": 3}
MODULE_TYPE = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}
REC_NAMES = ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")


class StackedRecall(nn.Module):
    """M one-layer recurrent models of one cell type, each read out once after the last
    step.
    """

    def __init__(self, cell: str, n_models: int, vocab: int, hidden_size: int) -> None:
        super().__init__()
        if cell not in GATE_COUNT:
            raise ValueError(f"cell must be one of {sorted(GATE_COUNT)}; got {cell!r}")
        positive_ints(n_models=n_models, vocab=vocab, hidden_size=hidden_size)
        self.cell, self.hidden_size = cell, hidden_size
        gh = GATE_COUNT[cell] * hidden_size
        self.weight_ih = nn.Parameter(torch.zeros(n_models, gh, vocab))
        self.weight_hh = nn.Parameter(torch.zeros(n_models, gh, hidden_size))
        self.bias_ih = nn.Parameter(torch.zeros(n_models, gh))
        self.bias_hh = nn.Parameter(torch.zeros(n_models, gh))
        self.out_weight = nn.Parameter(torch.zeros(n_models, vocab, hidden_size))
        self.out_bias = nn.Parameter(torch.zeros(n_models, vocab))

    @property
    def n_models(self) -> int:
        return self.weight_ih.shape[0]

    @classmethod
    def from_nets(cls, nets: list[nn.Module]) -> StackedRecall:
        """Stack copies of the weights of nets with a ``rec`` (nn.RNN/LSTM/GRU) and a
        ``readout`` (nn.Linear).
        """
        if len(nets) == 0:
            raise ValueError("nets must hold at least one network")
        kinds = {type(net.rec) for net in nets}
        cell = next((c for c, t in MODULE_TYPE.items() if {t} == kinds), None)
        if cell is None:
            raise ValueError(
                "nets must all have the same rec type, one of nn.RNN/LSTM/GRU; got "
                f"{kinds}"
            )
        first = nets[0].rec
        stack = cls(cell, len(nets), first.input_size, first.hidden_size).to(
            first.weight_ih_l0.dtype
        )
        with torch.no_grad():
            for m, net in enumerate(nets):
                for mine, theirs in zip(
                    stack.parameters(), _net_tensors(net), strict=True
                ):
                    mine[m].copy_(theirs)
        return stack

    def state_dict_of(self, m: int) -> dict[str, torch.Tensor]:
        """Model m's weights under the names of a ``rec`` + ``readout`` network (cloned,
        on the CPU).
        """
        if not 0 <= m < self.n_models:
            raise ValueError(f"m must be in [0, {self.n_models}); got {m!r}")
        names = [f"rec.{n}" for n in REC_NAMES] + ["readout.weight", "readout.bias"]
        return {
            n: p[m].detach().cpu().clone()
            for n, p in zip(names, self.parameters(), strict=True)
        }

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits (M, B, V) from x (M, B, T, V), one batch per model, or (B, T, V),
        shared by all models.
        """
        if x.dim() == 3:
            # (T, M, B, GH), every step at once
            pre = torch.einsum("btv,mgv->tmbg", x, self.weight_ih)
        elif x.dim() == 4 and x.shape[0] == self.n_models:
            pre = torch.einsum("mbtv,mgv->tmbg", x, self.weight_ih)
        else:
            raise ValueError(
                f"x must be (B, T, V) or ({self.n_models}, B, T, V); got "
                f"{tuple(x.shape)}"
            )
        H = self.hidden_size
        # b_hn sits inside r * (W_hn h + b_hn); b_hr and b_hz add like b_ih
        if self.cell == "gru":
            folded = self.bias_ih + torch.cat(
                [self.bias_hh[:, : 2 * H], torch.zeros_like(self.bias_hh[:, 2 * H :])],
                1,
            )
            b_hn = self.bias_hh[:, 2 * H :]
        else:
            folded, b_hn = self.bias_ih + self.bias_hh, self.bias_hh[:, :0]
        pre = pre + folded[:, None, :]
        h_last = _Recurrence.apply(pre, self.weight_hh, b_hn, self.cell)  # (M, B, H)
        return torch.baddbmm(
            self.out_bias[:, None, :], h_last, self.out_weight.transpose(1, 2)
        )


def _net_tensors(net: nn.Module) -> list[torch.Tensor]:
    rec = net.rec
    return [getattr(rec, n) for n in REC_NAMES] + [net.readout.weight, net.readout.bias]


def stacked_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Sum over models of each model's mean cross-entropy; logits (M, B, V), targets (M,
    B).
    """
    if logits.dim() != 3 or targets.shape != logits.shape[:2]:
        shapes = f"{tuple(logits.shape)}, {tuple(targets.shape)}"
        raise ValueError(f"logits must be (M, B, V) and targets (M, B); got {shapes}")
    per_example = nn.functional.cross_entropy(
        logits.flatten(0, 1), targets.flatten(), reduction="none"
    )
    return per_example.view(targets.shape).mean(dim=1).sum()


@torch.no_grad()
def clip_per_model(params: list[torch.Tensor], max_norm: float) -> torch.Tensor:
    """Clip each model's gradient to global norm ``max_norm`` over its own slices;
    return the M norms.

    The same rule as ``nn.utils.clip_grad_norm_`` applied to each model alone:
    scale by ``max_norm / (norm + 1e-6)`` when that is below 1.
    """
    if not max_norm > 0:
        raise ValueError(f"max_norm must be > 0; got {max_norm!r}")
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        raise ValueError("params hold no gradients; call backward() first")
    # (M,)
    norms = torch.stack([g.flatten(1).norm(dim=1) for g in grads], dim=1).norm(dim=1)
    scale = (max_norm / (norms + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(scale.view(-1, *([1] * (g.dim() - 1))))
    return norms


class _Recurrence(torch.autograd.Function):
    """The loop over time with a hand-written backward.

    Forward runs the steps without a graph and keeps what the backward needs.
    Backward walks the steps in reverse doing only the elementwise gate
    derivatives and one batched product per step (the gradient to the previous
    state); the weight gradient is one product over all steps at the end. This
    halves the per-step matrix work of autograd's backward and drops its
    per-step bookkeeping (splits, concatenations, bias sums).
    """

    @staticmethod
    def forward(
        ctx, pre: torch.Tensor, weight_hh: torch.Tensor, b_hn: torch.Tensor, cell: str
    ) -> torch.Tensor:
        T, M, B, _ = pre.shape
        H = weight_hh.shape[2]
        w_t = weight_hh.transpose(1, 2)  # (M, H, GH)
        h = pre.new_zeros(M, B, H)
        c = h
        saved: dict[str, list[torch.Tensor]] = {"h_prev": []}
        for pre_t in pre.unbind(0):
            saved["h_prev"].append(h)
            rec = torch.bmm(h, w_t)  # (M, B, GH)
            if cell == "rnn":
                h = torch.tanh(pre_t + rec)
                saved.setdefault("h", []).append(h)
            elif cell == "lstm":
                act = pre_t + rec
                act[..., : 2 * H].sigmoid_()  # i, f
                act[..., 2 * H : 3 * H].tanh_()  # g
                act[..., 3 * H :].sigmoid_()  # o
                i, f, g, o = act.split(H, dim=2)
                saved.setdefault("c_prev", []).append(c)
                c = f * c + i * g
                tanh_c = torch.tanh(c)
                h = o * tanh_c
                saved.setdefault("act", []).append(act)
                saved.setdefault("tanh_c", []).append(tanh_c)
            else:
                rz = torch.sigmoid(pre_t[..., : 2 * H] + rec[..., : 2 * H])
                r, z = rz.split(H, dim=2)
                hn = rec[..., 2 * H :] + b_hn[:, None, :]
                n = torch.tanh(pre_t[..., 2 * H :] + r * hn)
                h = n + z * (h - n)
                for key, value in [("rz", rz), ("hn", hn), ("n", n)]:
                    saved.setdefault(key, []).append(value)
        ctx.cell = cell
        ctx.saved = {k: torch.stack(v) for k, v in saved.items()}  # each (T, M, B, ...)
        ctx.save_for_backward(weight_hh)
        return h

    @staticmethod
    def backward(ctx, grad_h: torch.Tensor):
        (weight_hh,) = ctx.saved_tensors
        s, cell = ctx.saved, ctx.cell
        T, M, B, H = s["h_prev"].shape
        # gradient to the pre-activations from the input
        d_pre = grad_h.new_empty(T, M, B, weight_hh.shape[1])
        # ... and from W_hh h (the GRU differs)
        d_rec = d_pre if cell != "gru" else torch.empty_like(d_pre)
        dh = grad_h
        dc = torch.zeros_like(grad_h)
        for t in range(T - 1, -1, -1):
            if cell == "rnn":
                h = s["h"][t]
                torch.mul(dh, 1 - h * h, out=d_pre[t])
                dh = torch.bmm(d_pre[t], weight_hh)
            elif cell == "lstm":
                i, f, g, o = s["act"][t].split(H, dim=2)
                tanh_c = s["tanh_c"][t]
                dc = dc + dh * o * (1 - tanh_c * tanh_c)
                # one concatenation into the contiguous step slice; out= on strided gate
                # slices copies
                torch.cat(
                    [
                        dc * g * i * (1 - i),
                        dc * s["c_prev"][t] * f * (1 - f),
                        dc * i * (1 - g * g),
                        dh * tanh_c * o * (1 - o),
                    ],
                    dim=2,
                    out=d_pre[t],
                )
                dc = dc * f
                dh = torch.bmm(d_pre[t], weight_hh)
            else:
                r, z = s["rz"][t].split(H, dim=2)
                n, hn, h_prev = s["n"][t], s["hn"][t], s["h_prev"][t]
                d_n = dh * (1 - z) * (1 - n * n)
                d_rz = [d_n * hn * r * (1 - r), dh * (h_prev - n) * z * (1 - z)]
                torch.cat([*d_rz, d_n], dim=2, out=d_pre[t])
                torch.cat([*d_rz, d_n * r], dim=2, out=d_rec[t])
                dh = dh * z + torch.bmm(d_rec[t], weight_hh)
        # every step in one product
        d_weight_hh = torch.einsum("tmbg,tmbh->mgh", d_rec, s["h_prev"])
        d_b_hn = d_rec[..., 2 * H :].sum(dim=(0, 2)) if cell == "gru" else None
        return d_pre, d_weight_hh, d_b_hn, None
