"""Tests for chapter_code.bptt.gradients.

Tests for chapter_code.bptt.gradients that pin what the first tests left open: defaults,
boundaries of each check, the one-step factors, and the spectral (not Frobenius) norm.
"""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from chapter_code.bptt.gradients import (
    bptt_vanilla,
    grad_at_first_input,
    grad_norm_by_distance,
    jacobian_product_norms,
    one_unit_gradient,
    spectral_norm,
)


def test_grad_at_first_input_matches_a_direct_autograd_computation() -> None:
    torch.manual_seed(0)
    rnn = nn.RNN(3, 5, batch_first=True).double()
    (ours,) = grad_at_first_input(rnn, [4], input_size=3, batch=2, seed=7)
    x = (
        torch.randn(2, 4, 3, generator=torch.Generator().manual_seed(11))
        .double()
        .requires_grad_(True)
    )
    out, _ = rnn(x)
    out[:, -1].sum().backward()
    assert ours == pytest.approx(x.grad[:, 0].norm().item(), rel=1e-12)


def test_grad_at_first_input_consumes_no_global_randomness() -> None:
    rnn = nn.RNN(2, 3, batch_first=True)
    torch.manual_seed(5)
    grad_at_first_input(rnn, [1, 3], input_size=2)
    after = torch.rand(1)
    torch.manual_seed(5)
    assert torch.equal(torch.rand(1), after)


@pytest.mark.parametrize("lags", [[], [0], [2, -1]])
def test_grad_at_first_input_rejects_bad_lags(lags: list[int]) -> None:
    with pytest.raises(
        ValueError, match="lags must be a non-empty sequence of ints >= 1"
    ):
        grad_at_first_input(nn.RNN(2, 3, batch_first=True), lags, input_size=2)


# --- hand-written BPTT, Jacobian products, the one-unit RNN
# ---------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from chapter_code.bptt.figures import plot_lag_curves, plot_one_unit  # noqa: E402
from chapter_code.rnn.recurrence import rnn_loop  # noqa: E402


def test_bptt_by_hand_matches_autograd_in_float64() -> None:
    gen = torch.Generator().manual_seed(3)
    B, T, F, H = 3, 7, 4, 5
    w_ih = torch.randn(H, F, generator=gen, dtype=torch.float64).requires_grad_(True)
    w_hh = (0.5 * torch.randn(H, H, generator=gen, dtype=torch.float64)).requires_grad_(
        True
    )
    bias = torch.randn(H, generator=gen, dtype=torch.float64).requires_grad_(True)
    x = torch.randn(B, T, F, generator=gen, dtype=torch.float64).requires_grad_(True)
    h0 = torch.randn(B, H, generator=gen, dtype=torch.float64).requires_grad_(True)
    readout = torch.randn(B, T, H, generator=gen, dtype=torch.float64)
    states, _ = rnn_loop(x, w_ih, w_hh, bias, h0=h0)
    # a loss at every step: dL_t/dh_t = readout[:, t]
    (states * readout).sum().backward()
    ours = bptt_vanilla(
        x.detach(), states.detach(), h0.detach(), w_ih.detach(), w_hh.detach(), readout
    )
    torch.testing.assert_close(ours.weight_hh, w_hh.grad)
    torch.testing.assert_close(ours.weight_ih, w_ih.grad)
    torch.testing.assert_close(ours.bias, bias.grad)
    torch.testing.assert_close(ours.x, x.grad)
    torch.testing.assert_close(ours.h0, h0.grad)
    torch.testing.assert_close(ours.weight_hh_per_use.sum(0), w_hh.grad)


def test_bptt_rejects_mismatched_grad_states() -> None:
    x, s = torch.zeros(1, 3, 2), torch.zeros(1, 3, 4)
    with pytest.raises(ValueError, match="grad_states must have the shape of states"):
        bptt_vanilla(
            x,
            s,
            torch.zeros(1, 4),
            torch.zeros(4, 2),
            torch.zeros(4, 4),
            torch.zeros(1, 2, 4),
        )


def test_jacobian_product_norms_match_autograd_and_obey_the_bound() -> None:
    gen = torch.Generator().manual_seed(4)
    H, T = 4, 6
    w_hh = torch.randn(H, H, generator=gen, dtype=torch.float64)
    w_ih = torch.randn(H, 2, generator=gen, dtype=torch.float64)
    x = torch.randn(1, T, 2, generator=gen, dtype=torch.float64)
    h0 = torch.zeros(1, H, dtype=torch.float64)
    states, _ = rnn_loop(x, w_ih, w_hh, torch.zeros(H, dtype=torch.float64), h0=h0)
    norms = jacobian_product_norms(states[0], w_hh)

    # autograd: the Jacobian of h_T with respect to h_1 is the product over distance T -
    # 1
    def last_from_first(h1: torch.Tensor) -> torch.Tensor:
        h = h1
        for t in range(1, T):
            h = torch.tanh(x[0, t] @ w_ih.T + h @ w_hh.T)
        return h

    jac = torch.autograd.functional.jacobian(last_from_first, states[0, 0])
    assert norms[T - 1] == pytest.approx(
        torch.linalg.matrix_norm(jac, ord=2).item(), rel=1e-10
    )
    bound = spectral_norm(w_hh)
    assert all(n <= bound**d * (1 + 1e-9) for d, n in enumerate(norms))


def test_one_unit_product_matches_autograd() -> None:
    w, x, T = 1.3, 0.2, 9
    trace = one_unit_gradient(w, x, T)
    # s = 3, distance T - 3
    h_s = torch.tensor(trace.states[3], dtype=torch.float64, requires_grad=True)
    h = h_s
    for _ in range(T - 3):
        h = torch.tanh(w * h + x)
    (grad,) = torch.autograd.grad(h, h_s)
    assert trace.products[T - 3] == pytest.approx(abs(grad.item()), rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(w=st.floats(-3, 3), x=st.floats(-2, 2), steps=st.integers(1, 60))
def test_one_unit_product_never_exceeds_the_bound(
    w: float, x: float, steps: int
) -> None:
    trace = one_unit_gradient(w, x, steps)
    assert len(trace.products) == len(trace.bounds) == steps + 1
    assert all(
        p <= b * (1 + 1e-12) for p, b in zip(trace.products, trace.bounds, strict=True)
    )


def test_one_unit_at_zero_input_sits_on_the_bound() -> None:
    trace = one_unit_gradient(2.0, 0.0, 20)
    assert trace.products == pytest.approx(trace.bounds)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"w": 1.0, "x": 0.0, "steps": 0}, "steps must be an int in"),
        ({"w": float("nan"), "x": 0.0, "steps": 5}, "w must be a finite number"),
        ({"w": 1.0, "x": float("inf"), "steps": 5}, "x must be a finite number"),
    ],
)
def test_one_unit_rejects_bad_input(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        one_unit_gradient(**kwargs)


def test_grad_norm_by_distance_matches_a_looped_autograd() -> None:
    torch.manual_seed(2)
    rnn, readout = nn.RNN(3, 4, batch_first=True).double(), nn.Linear(4, 3).double()
    x = torch.randn(2, 5, 3, dtype=torch.float64)
    y = torch.tensor([0, 2])
    norms = grad_norm_by_distance(rnn, readout, x, y)
    assert len(norms) == 5
    # distance 0: the gradient at the last state, checked through the full nn.RNN call
    out, _ = rnn(x)
    last = out[:, -1].detach().requires_grad_(True)
    loss = nn.functional.cross_entropy(readout(last), y, reduction="sum")
    (g,) = torch.autograd.grad(loss, last)
    assert norms[0] == pytest.approx(g.norm(dim=1).mean().item(), rel=1e-10)


def test_plots_have_labelled_log_axes() -> None:
    import matplotlib.pyplot as plt

    fig = plot_lag_curves([1, 2, 3], {"a": ([1.0, 0.1, 0.01], "#000000")}, "grad")
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    assert ax.get_xlabel()
    assert ax.get_ylabel() == "grad"
    plt.close(fig)
    fig = plot_one_unit([one_unit_gradient(0.9, 0.0, 10)], ["#000000"])
    assert fig.axes[0].get_yscale() == "log"
    plt.close(fig)
    with pytest.raises(ValueError, match="one colour per trace"):
        plot_one_unit([one_unit_gradient(0.9, 0.0, 10)], [])


def test_grad_at_first_input_defaults_are_eight_sequences_seeded_from_100() -> None:
    torch.manual_seed(0)
    rec = nn.RNN(3, 4, batch_first=True)
    assert grad_at_first_input(rec, [2, 5], 3) == grad_at_first_input(
        rec, [2, 5], 3, batch=8, seed=100
    )
    assert grad_at_first_input(rec, [2], 3, batch=1)[0] > 0
    with pytest.raises(ValueError, match=r"^batch must be >= 1; got 0$"):
        grad_at_first_input(rec, [2], 3, batch=0)


def test_bptt_rejects_a_state_tensor_that_is_not_three_dimensional() -> None:
    x = torch.zeros(2, 3, 4)
    with pytest.raises(ValueError, match=r"^x and states must be \(batch, time, ·\)"):
        bptt_vanilla(
            x,
            torch.zeros(3, 5),
            torch.zeros(2, 5),
            torch.zeros(5, 4),
            torch.zeros(5, 5),
            torch.zeros(3, 5),
        )


def test_grad_norm_by_distance_rejects_mismatched_targets() -> None:
    rnn, readout = nn.RNN(3, 4, batch_first=True), nn.Linear(4, 2)
    with pytest.raises(
        ValueError, match=r"^x must be \(batch, time, features\) and targets \(batch,\)"
    ):
        grad_norm_by_distance(
            rnn, readout, torch.zeros(2, 5, 3), torch.zeros(3, dtype=torch.long)
        )


def test_jacobian_product_norms_rejects_states_of_the_wrong_width() -> None:
    with pytest.raises(ValueError, match=r"^states must be \(time, 4\); got \(3, 5\)$"):
        jacobian_product_norms(torch.zeros(3, 5), torch.zeros(4, 4))


def test_one_unit_gradient_steps_boundaries() -> None:
    assert len(one_unit_gradient(0.5, 0.1, 10_000).states) == 10_001
    for bad in (True, 0, 10_001):
        with pytest.raises(ValueError, match=r"^steps must be an int in \[1, 10000\]"):
            one_unit_gradient(0.5, 0.1, bad)


def test_one_unit_gradient_factors_are_the_one_step_derivatives() -> None:
    trace = one_unit_gradient(0.8, 0.3, 3)
    assert trace.factors == pytest.approx([(1 - h * h) * 0.8 for h in trace.states[1:]])
    assert trace.factors[0] == pytest.approx((1 - math.tanh(0.3) ** 2) * 0.8)


def test_spectral_norm_is_the_largest_singular_value() -> None:
    # Frobenius would be 5
    assert spectral_norm(torch.diag(torch.tensor([3.0, -4.0]))) == pytest.approx(4.0)
