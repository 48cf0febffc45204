"""The exact half: forward pass, softmax and its Jacobian, hand-derived backward pass."""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from stats import (
    attention_backward,
    gradient_check,
    naive_softmax,
    scaled_dot_product_attention,
    softmax,
    softmax_jacobian,
    softmax_vjp,
)

rows = arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 8)), elements=st.floats(-30, 30))


def direct_attention(Q, K, V, mask=None):
    """The section's three equations, entry by entry, for one head."""
    T_q, d_k = Q.shape
    T_k = K.shape[0]
    S = np.array([[sum(Q[i, m] * K[j, m] for m in range(d_k)) / np.sqrt(d_k) for j in range(T_k)] for i in range(T_q)])
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    A = np.zeros_like(S)
    for i in range(T_q):
        live = np.isfinite(S[i])
        if live.any():
            e = np.exp(S[i, live] - S[i, live].max())
            A[i, live] = e / e.sum()
    return A @ V, A


def test_forward_matches_the_three_equations(rng):
    Q, K, V = rng.normal(size=(5, 3)), rng.normal(size=(7, 3)), rng.normal(size=(7, 2))
    mask = rng.random((5, 7)) < 0.7
    for m in (None, mask):
        O, A = scaled_dot_product_attention(Q, K, V, m, return_weights=True)
        O_ref, A_ref = direct_attention(Q, K, V, m)
        np.testing.assert_allclose(O, O_ref, rtol=0, atol=1e-14)
        np.testing.assert_allclose(A, A_ref, rtol=0, atol=1e-15)


def test_scale_defaults_to_inverse_sqrt_dk_and_can_be_set(rng):
    Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    _, A = scaled_dot_product_attention(Q, K, V, return_weights=True)
    np.testing.assert_allclose(A, softmax(Q @ K.T / 2.0), atol=1e-15)
    _, A1 = scaled_dot_product_attention(Q, K, V, scale=1.0, return_weights=True)
    np.testing.assert_allclose(A1, softmax(Q @ K.T), atol=1e-15)


@given(rows)
def test_softmax_rows_sum_to_one_and_are_nonnegative(s):
    a = softmax(s)
    assert np.all(a >= 0)
    np.testing.assert_allclose(a.sum(axis=-1), 1.0, atol=1e-12)


@given(rows, st.floats(-1e3, 1e3))
def test_softmax_is_shift_invariant(s, t):
    np.testing.assert_allclose(softmax(s + t), softmax(s), atol=1e-12)


def test_fully_masked_row_is_zero_not_nan(rng):
    Q, K, V = rng.normal(size=(3, 2)), rng.normal(size=(4, 2)), rng.normal(size=(4, 3))
    mask = np.ones((3, 4), bool)
    mask[1] = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NaN is ever formed, not even transiently
        O, A = scaled_dot_product_attention(Q, K, V, mask, return_weights=True)
    assert np.all(np.isfinite(O)) and np.all(O[1] == 0) and np.all(A[1] == 0)
    dQ, dK, dV = attention_backward(Q, K, V, rng.normal(size=(3, 3)), mask)
    assert np.all(dQ[1] == 0) and all(np.all(np.isfinite(g)) for g in (dQ, dK, dV))


# ------------------------------------------------------------------ Jacobian

weights = arrays(np.float64, st.integers(1, 9), elements=st.floats(-20, 20)).map(softmax)


@given(weights)
def test_jacobian_symmetric_rows_sum_to_zero_psd(a):
    J = softmax_jacobian(a)
    np.testing.assert_allclose(J, J.T, atol=0)
    np.testing.assert_allclose(J.sum(axis=1), 0.0, atol=1e-15)
    assert np.linalg.eigvalsh(J).min() >= -1e-15


@given(weights, st.data())
def test_quadratic_form_is_weighted_variance(a, data):
    u = data.draw(arrays(np.float64, a.shape, elements=st.floats(-10, 10)))
    J = softmax_jacobian(a)
    weighted_var = np.sum(a * u**2) - np.sum(a * u) ** 2
    np.testing.assert_allclose(u @ J @ u, weighted_var, rtol=1e-9, atol=1e-12)


@given(weights)
def test_trace_is_one_minus_norm_squared(a):
    np.testing.assert_allclose(np.trace(softmax_jacobian(a)), 1 - a @ a, atol=1e-15)
    assert np.trace(softmax_jacobian(a)) <= 1 - 1 / a.size + 1e-15  # at most 1 - 1/n


def test_one_hot_gives_zero_jacobian_and_uniform_the_largest_trace():
    a = np.zeros(6)
    a[2] = 1.0
    assert np.all(softmax_jacobian(a) == 0)
    u = np.full(6, 1 / 6)
    np.testing.assert_allclose(np.trace(softmax_jacobian(u)), 1 - 1 / 6, atol=1e-15)


@given(weights, st.data())
def test_vjp_equals_jacobian_product(a, data):
    g = data.draw(arrays(np.float64, a.shape, elements=st.floats(-10, 10)))
    np.testing.assert_allclose(softmax_vjp(a, g), softmax_jacobian(a) @ g, atol=1e-12)


def test_jacobian_batches(rng):
    a = softmax(rng.normal(size=(2, 3, 5)))
    J = softmax_jacobian(a)
    assert J.shape == (2, 3, 5, 5)
    np.testing.assert_allclose(J[1, 2], softmax_jacobian(a[1, 2]), atol=0)


# ------------------------------------------------------------------ backward vs finite differences

CASES = [
    # (Q leading, K/V leading, T_q, T_k, d_k, d_v, mask kind)
    ((), (), 3, 4, 2, 3, None),
    ((2,), (2,), 4, 3, 3, 2, "bool"),
    ((2, 2), (2, 2), 3, 5, 2, 1, "additive"),
    ((2, 1), (1, 2), 4, 4, 2, 3, "causal"),
    ((2,), (2,), 3, 4, 3, 2, "fully-masked-row"),
    ((3,), (), 2, 5, 4, 2, "broadcast-bool"),
]


def make_mask(kind, lead, T_q, T_k, rng):
    if kind is None:
        return None
    if kind == "bool":
        m = rng.random((*lead, T_q, T_k)) < 0.7
        m[..., 0] = True
        return m
    if kind == "additive":
        m = rng.normal(size=(*lead, T_q, T_k))
        m[..., 1, 2] = -np.inf
        return m
    if kind == "causal":
        return np.tril(np.ones((T_q, T_k), bool))
    if kind == "fully-masked-row":
        m = np.ones((*lead, T_q, T_k), bool)
        m[..., 1, :] = False
        return m
    return rng.random((T_q, 1)) < 2  # broadcast along keys: all True, shape (T_q, 1)


@pytest.mark.parametrize("case", CASES, ids=[c[-1] or "no-mask" for c in CASES])
def test_backward_matches_central_differences(case, rng):
    lead_q, lead_k, T_q, T_k, d_k, d_v, kind = case
    Q = rng.normal(size=(*lead_q, T_q, d_k))
    K = rng.normal(size=(*lead_k, T_k, d_k))
    V = rng.normal(size=(*lead_k, T_k, d_v))
    lead = np.broadcast_shapes(lead_q, lead_k)
    mask = make_mask(kind, lead, T_q, T_k, rng)
    G = rng.normal(size=(*lead, T_q, d_v))  # L = sum(G * O), so dO = G

    def loss(Q_, K_, V_):
        return float(np.sum(G * scaled_dot_product_attention(Q_, K_, V_, mask)))

    dQ, dK, dV = attention_backward(Q, K, V, G, mask)
    for x, g, f in (
        (Q, dQ, lambda x: loss(x, K, V)),
        (K, dK, lambda x: loss(Q, x, V)),
        (V, dV, lambda x: loss(Q, K, x)),
    ):
        assert g.shape == x.shape
        assert gradient_check(f, x, g).max_rel_error <= 1e-6


def test_masked_entries_get_exactly_zero_score_gradient(rng):
    Q, K, V = rng.normal(size=(2, 4, 3)), rng.normal(size=(2, 6, 3)), rng.normal(size=(2, 6, 2))
    mask = rng.random((2, 4, 6)) < 0.5
    mask[..., 0] = True
    *_, dS = attention_backward(Q, K, V, rng.normal(size=(2, 4, 2)), mask, return_score_grad=True)
    assert np.all(dS[~mask] == 0.0)
    assert np.all(dS[mask] != 0.0)


def test_naive_softmax_agrees_where_it_does_not_overflow(rng):
    s = rng.normal(size=(4, 6))
    np.testing.assert_allclose(naive_softmax(s), softmax(s), atol=1e-15)
