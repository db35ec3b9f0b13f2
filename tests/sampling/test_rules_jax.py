"""Tests for chapter_code.sampling.rules_jax: each rule's distribution against the
PyTorch listing; keyed draws.

Value tests for chapter_code.sampling.rules_jax: exact distributions by hand, each check
at its boundary, batched rows, ties, and keys (new-style and legacy) giving the same
draws every time.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

from chapter_code.sampling import rules as sampling
from chapter_code.sampling import rules_jax as sampling_jax
from chapter_code.sampling import rules_jax as sj

jax.config.update("jax_enable_x64", True)


def _logits() -> torch.Tensor:
    return (
        torch.randn(
            4, 30, generator=torch.Generator().manual_seed(2), dtype=torch.float64
        )
        * 2
    )


@pytest.mark.parametrize("temperature", [0.5, 1.0, 2.0])
def test_rules_match_pytorch(temperature: float) -> None:
    z = _logits()
    zj = jnp.asarray(z.numpy())
    pairs = [
        (
            sampling.temperature_probs(z, temperature),
            sampling_jax.temperature_probs(zj, temperature),
        ),
        (
            sampling.top_k_probs(z, 5, temperature),
            sampling_jax.top_k_probs(zj, 5, temperature),
        ),
        (
            sampling.nucleus_probs(z, 0.8, temperature),
            sampling_jax.nucleus_probs(zj, 0.8, temperature),
        ),
        (sampling.top_k_probs(z[0], 1), sampling_jax.top_k_probs(zj[0], 1)),
        (sampling.nucleus_probs(z[1], 1.0), sampling_jax.nucleus_probs(zj[1], 1.0)),
    ]
    for ref, ours in pairs:
        np.testing.assert_allclose(np.asarray(ours), ref.numpy(), atol=1e-12)
    assert int(sampling_jax.greedy(zj[2])) == int(sampling.greedy(z[2]))


def test_nucleus_keeps_the_first_token_even_for_tiny_p_and_ties_like_pytorch() -> None:
    z = jnp.array([1.0, 3.0, 3.0, 0.0])
    np.testing.assert_array_equal(
        np.asarray(sampling_jax.nucleus_probs(z, 1e-9)), [0, 1, 0, 0]
    )
    np.testing.assert_allclose(
        np.asarray(sampling_jax.nucleus_probs(z, 0.6)),
        sampling.nucleus_probs(torch.tensor(np.asarray(z)), 0.6).numpy(),
        atol=1e-12,
    )


def test_draws_follow_the_distribution_never_pick_dropped_tokens_and_repeat_per_key() -> (  # noqa: E501  (the test's name)
    None
):
    # drops token 0
    probs = sampling_jax.top_k_probs(jnp.log(jnp.array([0.1, 0.5, 0.15, 0.25])), 3)
    keys = jax.random.split(jax.random.key(0), 20_000)
    tokens = np.asarray(jax.vmap(lambda k: sampling_jax.draw(probs, k))(keys))
    counts = np.bincount(tokens, minlength=4) / len(tokens)
    assert counts[0] == 0.0
    # about 4 standard errors
    np.testing.assert_allclose(counts, np.asarray(probs), atol=0.015)
    assert int(sampling_jax.draw(probs, keys[3])) == int(
        sampling_jax.draw(probs, keys[3])
    )
    assert sampling_jax.draw(jnp.ones((5, 4)) / 4, keys[0]).shape == (5,)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda z: sampling_jax.temperature_probs(z, 0.0),
            ValueError,
            "temperature must be a finite number > 0",
        ),
        (
            lambda z: sampling_jax.top_k_probs(z, 31),
            ValueError,
            r"k must be an int in \[1, 30\]",
        ),
        (
            lambda z: sampling_jax.nucleus_probs(z, 1.5),
            ValueError,
            r"p must be a number in \(0, 1\]",
        ),
        (
            lambda z: sampling_jax.temperature_probs(z[None, None], 1.0),
            ValueError,
            "logits must have shape",
        ),
        (
            lambda z: sampling_jax.greedy(z.astype(jnp.int32)),
            TypeError,
            "logits must be a floating-point",
        ),
        (lambda z: sampling_jax.draw(z, 0), TypeError, "key must be a jax.random key"),
    ],
)
def test_bad_input_gets_the_pytorch_sides_named_errors(call, error, message) -> None:
    with pytest.raises(error, match=message):
        call(jnp.zeros(30))


def test_pytorch_side_uses_the_same_words() -> None:
    with pytest.raises(ValueError, match=r"k must be an int in \[1, 30\]"):
        sampling.top_k_probs(torch.zeros(30), 31)
    with pytest.raises(ValueError, match=r"p must be a number in \(0, 1\]"):
        sampling.nucleus_probs(torch.zeros(30), 1.5)


jax.config.update("jax_enable_x64", True)

# softmax gives exactly (1/2, 1/4, 1/4): the mass ranked above the third token is
# exactly 3/4
HALF = jnp.array([math.log(2.0), 0.0, 0.0])


def test_temperature_by_hand_and_integer_temperatures() -> None:
    z = jnp.array([2.0, 1.0, 0.0])
    e = np.exp([1.0, 0.5, 0.0])
    np.testing.assert_allclose(
        np.asarray(sj.temperature_probs(z, 2)), e / e.sum(), rtol=1e-12
    )
    np.testing.assert_allclose(
        np.asarray(sj.temperature_probs(z, 1)),
        np.exp([2, 1, 0]) / np.exp([2, 1, 0]).sum(),
        rtol=1e-12,
    )
    # (2, V): each row on its own
    batch = sj.temperature_probs(jnp.stack([z, z[::-1]]), 0.5)
    np.testing.assert_allclose(np.asarray(batch).sum(axis=-1), [1.0, 1.0], rtol=1e-12)
    np.testing.assert_allclose(
        np.asarray(batch[1]), np.asarray(batch[0])[::-1], rtol=1e-12
    )


@pytest.mark.parametrize(
    "temperature", [0.0, -1.0, math.inf, math.nan, True, "1", None]
)
def test_temperature_must_be_a_finite_positive_number(temperature) -> None:
    with pytest.raises(ValueError, match="^temperature must be a finite number > 0"):
        sj.temperature_probs(jnp.zeros(3), temperature)


def test_logits_checks_at_their_boundaries() -> None:
    np.testing.assert_array_equal(
        np.asarray(sj.temperature_probs(jnp.zeros(1), 1.0)), [1.0]
    )  # V = 1 is allowed
    for shape in [(0,), (3, 0), (2, 2, 2), ()]:
        with pytest.raises(
            ValueError, match=r"^logits must have shape \(V,\) or \(B, V\)"
        ):
            sj.temperature_probs(jnp.zeros(shape), 1.0)
    for bad in ([1.0, 2.0], np.zeros(3, dtype=np.int64), jnp.zeros(3, dtype=jnp.int32)):
        with pytest.raises(TypeError, match="^logits must be a floating-point tensor"):
            sj.greedy(bad)


def test_top_k_by_hand_at_a_temperature_and_its_bounds() -> None:
    z = jnp.array([0.0, 3.0, 1.0, 2.0])
    # the two largest logits, 3 and 2, at temperature 0.5: 6 and 4 -> 1 / (1 + e^-2) and
    # the rest
    first = 1 / (1 + math.exp(-2.0))
    np.testing.assert_allclose(
        np.asarray(sj.top_k_probs(z, 2, 0.5)), [0.0, first, 0.0, 1 - first], rtol=1e-12
    )
    np.testing.assert_allclose(
        np.asarray(sj.top_k_probs(z, 4)),
        np.asarray(sj.temperature_probs(z, 1.0)),
        rtol=1e-12,
    )  # k = V keeps everything
    np.testing.assert_allclose(
        np.asarray(sj.top_k_probs(z, 1)), [0.0, 1.0, 0.0, 0.0], rtol=1e-12, atol=0
    )
    for k in (0, 5, -1, 2.0, True):
        with pytest.raises(
            ValueError, match=r"^k must be an int in \[1, 4\] \(the vocabulary size\)"
        ):
            sj.top_k_probs(z, k)


def test_top_k_keeps_each_rows_own_largest_logits() -> None:
    z = jnp.array([[0.0, 3.0, 1.0, 2.0], [5.0, 0.0, 4.0, -1.0]])
    kept = np.asarray(sj.top_k_probs(z, 2)) > 0
    np.testing.assert_array_equal(
        kept, [[False, True, False, True], [True, False, True, False]]
    )
    np.testing.assert_allclose(
        np.asarray(sj.top_k_probs(z, 2)).sum(axis=-1), [1.0, 1.0], rtol=1e-12
    )


def test_nucleus_boundary_where_the_mass_above_equals_p() -> None:
    # the second token has exactly 1/2 ranked above it, the third exactly 3/4: a token
    # is kept while the mass above it is strictly below p
    np.testing.assert_array_equal(
        np.asarray(sj.nucleus_probs(HALF, 0.5)), [1.0, 0.0, 0.0]
    )
    np.testing.assert_allclose(
        np.asarray(sj.nucleus_probs(HALF, 0.5000001)), [2 / 3, 1 / 3, 0.0], rtol=1e-12
    )
    np.testing.assert_allclose(
        np.asarray(sj.nucleus_probs(HALF, 0.75)), [2 / 3, 1 / 3, 0.0], rtol=1e-12
    )
    np.testing.assert_allclose(
        np.asarray(sj.nucleus_probs(HALF, 0.76)), [0.5, 0.25, 0.25], rtol=1e-12
    )
    np.testing.assert_allclose(
        np.asarray(sj.nucleus_probs(HALF, 1)), [0.5, 0.25, 0.25], rtol=1e-12
    )  # int p


def test_nucleus_applies_the_temperature_and_works_per_row() -> None:
    # at temperature 2 the logits (2 ln 2, 0, 0) become (ln 2, 0, 0): the same (1/2,
    # 1/4, 1/4)
    z = jnp.array([2 * math.log(2.0), 0.0, 0.0])
    np.testing.assert_allclose(
        np.asarray(sj.nucleus_probs(z, 0.6, 2.0)), [2 / 3, 1 / 3, 0.0], rtol=1e-12
    )
    # second row: the favourite in the middle; of the tied pair after it, the first is
    # kept
    rows = jnp.stack([HALF, HALF[jnp.array([2, 0, 1])]])
    np.testing.assert_allclose(
        np.asarray(sj.nucleus_probs(rows, 0.6)),
        [[2 / 3, 1 / 3, 0.0], [1 / 3, 2 / 3, 0.0]],
        rtol=1e-12,
    )


@pytest.mark.parametrize("p", [0.0, -0.5, 1.0000001, 2, True, "0.5", None])
def test_nucleus_p_outside_zero_one(p) -> None:
    with pytest.raises(ValueError, match=r"^p must be a number in \(0, 1\]"):
        sj.nucleus_probs(HALF, p)


def test_greedy_per_row_and_first_of_ties() -> None:
    np.testing.assert_array_equal(
        np.asarray(sj.greedy(jnp.array([[0.0, 2.0, 1.0], [5.0, 1.0, 5.0]]))), [1, 0]
    )
    assert int(sj.greedy(jnp.array([1.0, 4.0, 4.0]))) == 1


def test_draw_rows_keys_and_reproducibility() -> None:
    one_hot = jnp.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    key = jax.random.key(7)
    # one token per row
    np.testing.assert_array_equal(np.asarray(sj.draw(one_hot, key)), [1, 2, 0])
    assert sj.draw(HALF, key).shape == ()
    legacy = jax.random.PRNGKey(7)  # a raw uint32 key of shape (2,) is accepted too
    np.testing.assert_array_equal(np.asarray(sj.draw(one_hot, legacy)), [1, 2, 0])
    probs = sj.temperature_probs(jnp.zeros((50, 4)), 1.0)
    first = np.asarray(sj.draw(probs, jax.random.key(3)))
    assert first.tolist() == np.asarray(sj.draw(probs, jax.random.key(3))).tolist()
    assert first.tolist() != np.asarray(sj.draw(probs, jax.random.key(4))).tolist()
    assert (
        first.tolist()
        == np.asarray(
            jax.random.categorical(jax.random.key(3), jnp.log(probs), axis=-1)
        ).tolist()
    )
    assert set(first.tolist()) == {0, 1, 2, 3}


@pytest.mark.parametrize(
    "key", [0, np.zeros(2, dtype=np.uint32), jnp.zeros(3, dtype=jnp.uint32), None]
)
def test_draw_rejects_what_is_not_a_key(key) -> None:
    with pytest.raises(TypeError, match="^key must be a jax.random key"):
        sj.draw(jnp.ones(3) / 3, key)


def test_nucleus_ranks_many_ties_in_index_order_like_pytorch() -> None:
    # an unstable sort keeps small arrays in order but shuffles ties from about 20
    # entries on
    z = jnp.concatenate([jnp.zeros(30), jnp.full(10, -1.0)])
    tiny = np.asarray(sj.nucleus_probs(z, 1e-9))
    np.testing.assert_array_equal(np.nonzero(tiny)[0], [0])
    half = np.asarray(sj.nucleus_probs(z, 0.5))
    reference = sampling.nucleus_probs(torch.tensor(np.asarray(z)), 0.5).numpy()
    np.testing.assert_allclose(half, reference, rtol=1e-12, atol=0)
    assert np.nonzero(half)[0].tolist() == list(range(np.count_nonzero(reference)))


def test_distributions_keep_the_logits_float_dtype() -> None:
    # float32 even with 64-bit JAX enabled
    z32 = jnp.array([0.0, 3.0, 1.0, 2.0], dtype=jnp.float32)
    for probs in (
        sj.temperature_probs(z32, 1.0),
        sj.top_k_probs(z32, 2),
        sj.nucleus_probs(z32, 0.9),
    ):
        assert probs.dtype == jnp.float32
    assert sj.top_k_probs(z32.astype(jnp.float64), 2).dtype == jnp.float64
