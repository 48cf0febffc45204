"""Tiled (online-softmax) attention equals the dense reference."""

import numpy as np
import pytest

from stats import attention_backward, scaled_dot_product_attention, tiled_attention_backward, tiled_attention_forward
from stats.exact.attention import softmax


@pytest.mark.parametrize("block_size", [1, 3, 4, 7, 16, 64])
@pytest.mark.parametrize("mask_kind", [None, "causal", "bool-with-empty-row", "additive"])
def test_tiled_equals_dense(block_size, mask_kind, rng):
    Q = rng.normal(size=(2, 3, 9, 4)) * 3  # large scores exercise the running-max rescaling
    K = rng.normal(size=(2, 3, 13, 4)) * 3
    V = rng.normal(size=(2, 3, 13, 5))
    dO = rng.normal(size=(2, 3, 9, 5))
    mask = None
    if mask_kind == "causal":
        mask = np.tril(np.ones((9, 13), bool), k=4)
    elif mask_kind == "bool-with-empty-row":
        mask = rng.random((2, 1, 9, 13)) < 0.4
        mask[..., 2, :] = False
    elif mask_kind == "additive":
        mask = rng.normal(size=(9, 13))
    O_ref = scaled_dot_product_attention(Q, K, V, mask)
    O, lse = tiled_attention_forward(Q, K, V, mask, block_size=block_size)
    np.testing.assert_allclose(O, O_ref, rtol=0, atol=1e-12)
    grads_ref = attention_backward(Q, K, V, dO, mask)
    grads = tiled_attention_backward(Q, K, V, O, lse, dO, mask, block_size=block_size)
    for g, g_ref in zip(grads, grads_ref):
        assert g.shape == g_ref.shape
        np.testing.assert_allclose(g, g_ref, rtol=0, atol=1e-12)


def test_lse_is_the_row_log_sum_exp(rng):
    Q, K, V = rng.normal(size=(5, 3)), rng.normal(size=(11, 3)), rng.normal(size=(11, 2))
    _, lse = tiled_attention_forward(Q, K, V, block_size=4)
    S = Q @ K.T / np.sqrt(3)
    np.testing.assert_allclose(lse, np.log(np.exp(S).sum(axis=1)), atol=1e-13)
    np.testing.assert_allclose(np.exp(S - lse[:, None]), softmax(S), atol=1e-15)


def test_empty_row_has_minus_inf_lse_and_zero_output(rng):
    Q, K, V = rng.normal(size=(3, 2)), rng.normal(size=(5, 2)), rng.normal(size=(5, 2))
    mask = np.ones((3, 5), bool)
    mask[0] = False
    O, lse = tiled_attention_forward(Q, K, V, mask, block_size=2)
    assert lse[0] == -np.inf and np.all(O[0] == 0) and np.all(np.isfinite(lse[1:]))


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_block_size_must_be_a_positive_integer(bad, rng):
    Q = rng.normal(size=(2, 2))
    with pytest.raises(ValueError, match="block_size"):
        tiled_attention_forward(Q, Q, Q, block_size=bad)
