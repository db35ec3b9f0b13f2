"""Tests for chapter_code.bptt.truncation: the gradient gate, cuts, reach fractions,
random truncation.

Tests for chapter_code.bptt.truncation that pin values: cut positions at several
lengths, which gradients cross which boundary, resets against separate windows, and
run_chunks against a hand-written loop (carry against reset, the ignored targets, the
optimizer path).
"""

from __future__ import annotations

import copy

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from chapter_code.bptt.truncation import (
    EchoRNN,
    cut_every,
    echo_stream,
    gradient_gate,
    random_gates,
    reach_fraction_by_autograd,
    reach_fraction_by_enumeration,
    run_chunks,
    unroll,
    weight_hh_gradient,
)
from chapter_code.rnn.recurrence import ElmanRNN


def test_gradient_gate_keeps_value_and_scales_gradient() -> None:
    h = torch.tensor([1.5, -2.0], dtype=torch.float64, requires_grad=True)
    out = gradient_gate(h, 0.25)
    torch.testing.assert_close(out, h.detach())
    out.sum().backward()
    torch.testing.assert_close(h.grad, torch.full((2,), 0.25, dtype=torch.float64))


def test_unroll_without_gates_is_the_elman_model() -> None:
    torch.manual_seed(0)
    model = ElmanRNN(3, 4).double()
    x = torch.randn(2, 6, 3, dtype=torch.float64)
    torch.testing.assert_close(unroll(model, x), model(x)[0])
    torch.testing.assert_close(
        unroll(model, x, gates=cut_every(6, 2).double()), model(x)[0]
    )  # values unchanged


def test_cut_passes_value_but_not_gradient_and_reset_passes_neither() -> None:
    torch.manual_seed(1)
    model = ElmanRNN(2, 3).double()
    x = torch.randn(1, 6, 2, dtype=torch.float64, requires_grad=True)
    carried = unroll(model, x, gates=cut_every(6, 3).double())
    (grad,) = torch.autograd.grad(carried[0, 5].sum(), x)
    assert grad[0, :3].abs().sum() == 0
    assert grad[0, 3:].abs().sum() > 0
    bumped = x.detach().clone()
    bumped[0, 0] += 1.0
    assert (
        unroll(model, bumped, gates=cut_every(6, 3).double())[0, 5] - carried[0, 5]
    ).abs().max() > 0
    reset = unroll(model, x.detach(), reset_every=3)
    torch.testing.assert_close(
        unroll(model, bumped, reset_every=3)[0, 3:], reset[0, 3:]
    )


@pytest.mark.parametrize("chunk", [1, 4, 8])
def test_reach_fraction_counted_two_ways_agrees_with_the_formula(chunk: int) -> None:
    model = ElmanRNN(2, 3)
    for lag in range(chunk + 2):
        formula = max(0.0, 1 - lag / chunk)
        assert reach_fraction_by_enumeration(chunk, lag) == pytest.approx(formula)
        assert reach_fraction_by_autograd(model, chunk, lag, chunks=2) == pytest.approx(
            formula
        )


def test_random_gates_have_mean_one_and_reject_bad_p() -> None:
    gates = random_gates(20001, 0.7, torch.Generator().manual_seed(0))
    assert set(gates.unique().tolist()) <= {0.0, 1 / 0.7}
    assert gates.mean().item() == pytest.approx(1.0, abs=0.03)
    with pytest.raises(ValueError, match=r"keep_prob must be in \(0, 1\]"):
        random_gates(5, 0.0, torch.Generator())


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 1000))
def test_all_ones_random_gates_give_the_full_gradient(seed: int) -> None:
    torch.manual_seed(seed)
    model = ElmanRNN(2, 3).double()
    x = torch.randn(1, 5, 2, dtype=torch.float64)
    full = weight_hh_gradient(model, x)
    torch.testing.assert_close(
        weight_hh_gradient(model, x, random_gates(5, 1.0, torch.Generator()).double()),
        full,
    )


def test_random_truncation_is_unbiased_on_two_steps() -> None:
    # With T = 2 there is one boundary: the estimate is either the short term alone or
    # short + long / p.
    torch.manual_seed(3)
    model = ElmanRNN(2, 3).double()
    x = torch.randn(1, 2, 2, dtype=torch.float64)
    full = weight_hh_gradient(model, x)
    cut = weight_hh_gradient(model, x, torch.zeros(1, dtype=torch.float64))
    kept = weight_hh_gradient(model, x, torch.full((1,), 1 / 0.4, dtype=torch.float64))
    torch.testing.assert_close(0.6 * cut + 0.4 * kept, full)


def test_echo_stream_and_chunks() -> None:
    tokens, targets = echo_stream(2, 12, 4, 2, torch.Generator().manual_seed(0))
    assert (targets[:, :2] == -100).all()
    assert torch.equal(targets[:, 2:], tokens[:, :-2])
    model = EchoRNN(4, 5)
    acc = run_chunks(model, tokens, targets, chunk=4, carry=True)
    assert len(acc) == 4
    assert all(0 <= a <= 1 for a in acc)
    with pytest.raises(ValueError, match="must be a multiple of chunk"):
        run_chunks(model, tokens, targets, chunk=5, carry=False)
    with pytest.raises(ValueError, match="delay must be an int >= 1"):
        echo_stream(1, 5, 3, 0, torch.Generator())


@pytest.mark.parametrize(
    ("steps", "chunk", "expected"),
    [
        (7, 3, [1, 1, 0, 1, 1, 0]),
        (6, 2, [1, 0, 1, 0, 1]),
        (5, 1, [0, 0, 0, 0]),
        (4, 5, [1, 1, 1]),
    ],
)
def test_cut_every_zeroes_the_boundaries_after_each_chunk(
    steps: int, chunk: int, expected: list[int]
) -> None:
    assert cut_every(steps, chunk).tolist() == expected


@pytest.mark.parametrize("bad", [0, 2.0])
def test_cut_and_enumeration_reject_a_non_int_or_small_chunk(bad: object) -> None:
    with pytest.raises(ValueError, match=r"^chunk must be an int >= 1"):
        cut_every(5, bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^chunk must be an int >= 1"):
        reach_fraction_by_enumeration(bad, 1)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [-1, 1.0])
def test_enumeration_rejects_a_non_int_or_negative_lag(bad: object) -> None:
    with pytest.raises(ValueError, match=r"^lag must be an int >= 0"):
        reach_fraction_by_enumeration(3, bad)  # type: ignore[arg-type]


def _reaches(model: ElmanRNN, x: torch.Tensor, **kwargs: object) -> list[list[bool]]:
    """reach[t][s]: is d states[t] / d x[s] nonzero?"""
    x = x.clone().requires_grad_(True)
    states = unroll(model, x, **kwargs)
    out = []
    for t in range(x.shape[1]):
        (g,) = torch.autograd.grad(states[0, t].sum(), x, retain_graph=True)
        out.append([bool(g[0, s].abs().sum() > 0) for s in range(x.shape[1])])
    return out


def test_each_gate_controls_exactly_its_own_boundary() -> None:
    torch.manual_seed(0)
    model = ElmanRNN(2, 3).double()
    x = torch.randn(1, 5, 2, dtype=torch.float64)
    # cuts between steps 0|1 and 2|3
    gates = torch.tensor([0.0, 1.0, 0.0, 1.0], dtype=torch.float64)
    reach = _reaches(model, x, gates=gates)
    for t in range(5):
        for s in range(5):
            crosses = s <= t and all(gates[b] != 0 for b in range(s, t))
            assert reach[t][s] == crosses, (t, s)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_reset_every_k_equals_running_each_window_alone(k: int) -> None:
    torch.manual_seed(0)
    model = ElmanRNN(2, 3).double()
    x = torch.randn(2, 7, 2, dtype=torch.float64)
    states = unroll(model, x, reset_every=k)
    windows = [unroll(model, x[:, s : s + k]) for s in range(0, 7, k)]
    torch.testing.assert_close(states, torch.cat(windows, dim=1))


@pytest.mark.parametrize("bad", [0, 1.5])
def test_unroll_rejects_a_bad_reset(bad: object) -> None:
    model = ElmanRNN(2, 3)
    with pytest.raises(ValueError, match=r"^reset_every must be an int >= 1"):
        unroll(model, torch.zeros(1, 3, 2), reset_every=bad)  # type: ignore[arg-type]


def test_weight_hh_gradient_uses_the_gates() -> None:
    torch.manual_seed(0)
    model = ElmanRNN(2, 3).double()
    x = torch.randn(2, 4, 2, dtype=torch.float64)
    gates = cut_every(4, 2).double()
    (expected,) = torch.autograd.grad(
        unroll(model, x, gates=gates).sum(), model.weight_hh
    )
    torch.testing.assert_close(weight_hh_gradient(model, x, gates), expected)
    assert not torch.allclose(weight_hh_gradient(model, x), expected)


def test_random_gates_depend_only_on_the_generator_and_reject_p_above_one() -> None:
    torch.manual_seed(1)
    a = random_gates(50, 0.5, torch.Generator().manual_seed(3))
    torch.manual_seed(2)
    b = random_gates(50, 0.5, torch.Generator().manual_seed(3))
    assert torch.equal(a, b)
    assert set(a.tolist()) == {0.0, 2.0}
    with pytest.raises(ValueError, match=r"^keep_prob must be in \(0, 1\]"):
        random_gates(5, 1.5, torch.Generator())


def test_echo_stream_values_for_delay_one_and_its_generator() -> None:
    torch.manual_seed(1)
    tokens, targets = echo_stream(200, 5, 3, 1, torch.Generator().manual_seed(0))
    assert targets[:, 0].eq(-100).all()
    assert torch.equal(targets[:, 1:], tokens[:, :-1])
    assert sorted(tokens.unique().tolist()) == [0, 1, 2]
    torch.manual_seed(2)
    again, _ = echo_stream(200, 5, 3, 1, torch.Generator().manual_seed(0))
    assert torch.equal(again, tokens)


def test_echo_rnn_is_batch_first_one_hot_over_the_vocabulary_and_starts_from_h() -> (
    None
):
    torch.manual_seed(0)
    model = EchoRNN(4, 3)
    # only token 0: the one-hot must still have 4 classes
    tokens = torch.zeros(2, 5, dtype=torch.long)
    h = torch.randn(1, 2, 3)
    logits, h_last = model(tokens, h)
    assert logits.shape == (2, 5, 4)
    ref = nn.RNN(4, 3, batch_first=True)
    ref.load_state_dict(model.rnn.state_dict())
    states, ref_last = ref(nn.functional.one_hot(tokens, 4).float(), h)
    torch.testing.assert_close(logits, model.out(states))
    torch.testing.assert_close(h_last, ref_last)
    zero_start, _ = model(tokens)
    assert not torch.allclose(zero_start, logits)


def _reference_chunks(model, tokens, targets, chunk, carry, opt=None):
    """run_chunks written out: the state crosses a cut as a value only, or not at
    all."""
    h = None
    losses, correct, seen = [], [0.0] * chunk, [0.0] * chunk
    for start in range(0, tokens.shape[1], chunk):
        piece, goal = (
            tokens[:, start : start + chunk],
            targets[:, start : start + chunk],
        )
        logits, h_last = model(piece, h.detach() if (carry and h is not None) else None)
        h = h_last
        if opt is not None:
            mask = goal != -100
            logp = torch.log_softmax(logits, dim=-1)
            picked = logp.gather(-1, goal.clamp(min=0).unsqueeze(-1)).squeeze(-1)
            loss = -(picked * mask).sum() / mask.sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        else:
            pred = logits.argmax(dim=2)
            for b in range(tokens.shape[0]):
                for k in range(chunk):
                    if goal[b, k] != -100:
                        seen[k] += 1
                        correct[k] += float(pred[b, k] == goal[b, k])
    return (
        losses
        if opt is not None
        else [c / s for c, s in zip(correct, seen, strict=True)]
    )


@pytest.mark.parametrize("carry", [True, False])
def test_run_chunks_accuracy_matches_a_hand_written_loop(carry: bool) -> None:
    torch.manual_seed(0)
    tokens, targets = echo_stream(6, 12, 3, 2, torch.Generator().manual_seed(0))
    model = EchoRNN(3, 4)
    acc = run_chunks(model, tokens, targets, chunk=4, carry=carry)
    assert acc == pytest.approx(_reference_chunks(model, tokens, targets, 4, carry))


def test_carry_and_reset_give_different_accuracies() -> None:
    torch.manual_seed(0)
    tokens, targets = echo_stream(40, 12, 3, 2, torch.Generator().manual_seed(0))
    model = EchoRNN(3, 4)
    with torch.no_grad():
        # a strong recurrence, so the start state matters
        model.rnn.weight_hh_l0.mul_(3.0)
    assert run_chunks(model, tokens, targets, 4, carry=True) != run_chunks(
        model, tokens, targets, 4, carry=False
    )


@pytest.mark.parametrize("carry", [True, False])
def test_run_chunks_training_matches_a_hand_written_loop(carry: bool) -> None:
    torch.manual_seed(0)
    tokens, targets = echo_stream(5, 9, 3, 2, torch.Generator().manual_seed(1))
    model = EchoRNN(3, 4)
    ref = copy.deepcopy(model)
    losses = run_chunks(
        model,
        tokens,
        targets,
        3,
        carry,
        opt=torch.optim.SGD(model.parameters(), lr=0.5),
    )
    expected = _reference_chunks(
        ref, tokens, targets, 3, carry, opt=torch.optim.SGD(ref.parameters(), lr=0.5)
    )
    assert len(losses) == 3
    assert losses == pytest.approx(expected, rel=1e-5)
    for p, q in zip(model.parameters(), ref.parameters(), strict=True):
        torch.testing.assert_close(p, q)
