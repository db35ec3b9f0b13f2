"""The solutions of the labs' exercises that their pages do not show
(``labs/solutions.py``), each against an independent computation: an RNN run on each
sequence unpadded, PyTorch's ``clip_grad_value_``, and autograd in float64."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from chapter_code.beyond.linear_scan import loop_linear
from labs.solutions import (
    clip_gradient_values,
    linear_recurrence_grad,
    masked_mean_state,
)


def test_the_masked_mean_is_the_mean_of_each_unpadded_sequence_s_rnn_states() -> None:
    torch.manual_seed(0)
    rnn = nn.RNN(3, 4, batch_first=True)
    lengths = [5, 2, 4]
    seqs = [torch.randn(n, 3) for n in lengths]
    batch = nn.utils.rnn.pad_sequence(seqs, batch_first=True)  # (B, T_max, F)
    mask = torch.arange(5).expand(3, 5) < torch.tensor(lengths).unsqueeze(1)
    packed = nn.utils.rnn.pack_padded_sequence(
        batch, lengths, batch_first=True, enforce_sorted=False
    )
    # zeros after each end
    states, _ = nn.utils.rnn.pad_packed_sequence(rnn(packed)[0], batch_first=True)
    with torch.no_grad():
        got = masked_mean_state(states, mask)
        want = torch.stack([rnn(s.unsqueeze(0))[0][0].mean(dim=0) for s in seqs])
        torch.testing.assert_close(got, want)
        # a 0/1 mask reads the same
        torch.testing.assert_close(masked_mean_state(states, mask.float()), want)
        # more padding, of any value
        longer = torch.cat([states, torch.randn(3, 2, 4)], dim=1)
        torch.testing.assert_close(
            masked_mean_state(
                longer, torch.cat([mask, torch.zeros(3, 2, dtype=bool)], 1)
            ),
            want,
        )


def test_the_masked_mean_names_its_bad_arguments() -> None:
    with pytest.raises(ValueError, match="states must be"):
        masked_mean_state(torch.zeros(2, 3), torch.ones(2, 3))
    with pytest.raises(ValueError, match=r"mask must be \(B, T\)"):
        masked_mean_state(torch.zeros(2, 3, 4), torch.ones(3, 2))
    with pytest.raises(ValueError, match="at least one real step"):
        masked_mean_state(torch.zeros(2, 3, 4), torch.tensor([[1, 0, 0], [0, 0, 0]]))


def test_clipping_by_value_is_pytorch_s_clip_grad_value_and_counts_what_it_changed() -> (  # noqa: E501  (the test's name)
    None
):
    torch.manual_seed(1)
    ours, theirs = nn.Linear(6, 5), nn.Linear(6, 5)
    theirs.load_state_dict(ours.state_dict())
    frozen = nn.Parameter(torch.zeros(3))  # no gradient: skipped
    x = torch.randn(8, 6)
    for model in (ours, theirs):
        model(x).pow(2).sum().backward()
    limit = 0.5
    outside = sum(int((p.grad.abs() > limit).sum()) for p in ours.parameters())
    # some entries clipped, some not
    assert 0 < outside < sum(p.numel() for p in ours.parameters())
    assert clip_gradient_values([*ours.parameters(), frozen], limit) == outside
    nn.utils.clip_grad_value_(theirs.parameters(), limit)
    for mine, torch_s in zip(ours.parameters(), theirs.parameters(), strict=True):
        torch.testing.assert_close(mine.grad, torch_s.grad)
    # clipping again changes nothing
    assert clip_gradient_values(ours.parameters(), limit) == 0
    with pytest.raises(ValueError, match="limit must be a finite number > 0"):
        clip_gradient_values(ours.parameters(), 0.0)


def test_the_recurrence_s_backward_pass_by_the_loop_is_autograd_s_gradient() -> None:
    gen = torch.Generator().manual_seed(2)
    a = torch.rand(2, 9, 3, generator=gen, dtype=torch.float64)
    b = torch.randn(2, 9, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    grad_c = torch.randn(2, 9, 3, generator=gen, dtype=torch.float64)
    c = loop_linear(a, b)
    (c * grad_c).sum().backward()  # a loss whose direct gradient at c_t is grad_c[:, t]
    torch.testing.assert_close(linear_recurrence_grad(a, grad_c), b.grad)
    with pytest.raises(ValueError, match="one shape"):
        linear_recurrence_grad(a, grad_c[:, :4])
