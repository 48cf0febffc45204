"""Bad input gets a ValueError or TypeError that names the argument."""

import numpy as np
import pytest

from stats import (
    attention_backward,
    scaled_dot_product_attention,
    scaled_score_moments,
    score_distribution,
    softmax,
    softmax_vjp,
)


@pytest.fixture
def qkv(rng):
    return rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))


def test_mismatched_d_k(qkv):
    Q, K, V = qkv
    with pytest.raises(ValueError, match="d_k"):
        scaled_dot_product_attention(Q, K[:, :3], V)


def test_mismatched_t_k(qkv):
    Q, K, V = qkv
    with pytest.raises(ValueError, match="T_k"):
        scaled_dot_product_attention(Q, K, V[:4])


def test_do_shape(qkv):
    Q, K, V = qkv
    with pytest.raises(ValueError, match="dO"):
        attention_backward(Q, K, V, np.ones((3, 3)))


def test_mask_that_does_not_broadcast(qkv):
    Q, K, V = qkv
    with pytest.raises(ValueError, match="mask"):
        scaled_dot_product_attention(Q, K, V, np.ones((3, 4), bool))
    with pytest.raises(ValueError, match="mask"):
        scaled_dot_product_attention(Q, K, V, np.ones((2, 3, 5), bool))  # would enlarge the output


@pytest.mark.parametrize("name", ["Q", "K", "V"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_inputs(qkv, name, bad):
    args = dict(zip("QKV", qkv))
    args[name] = args[name].copy()
    args[name][0, 0] = bad
    with pytest.raises(ValueError, match=name):
        scaled_dot_product_attention(args["Q"], args["K"], args["V"])


@pytest.mark.parametrize("bad", [np.array([["a", "b"]]), np.ones((2, 2), bool), np.ones((2, 2), complex), [[1, 2], [3]]])
def test_non_numeric(bad, qkv):
    with pytest.raises(TypeError, match="Q"):
        scaled_dot_product_attention(bad, *qkv[1:])


def test_scale_must_be_positive(qkv):
    with pytest.raises(ValueError, match="scale"):
        scaled_dot_product_attention(*qkv, scale=-1.0)


def test_nan_in_scores_and_shape_errors():
    with pytest.raises(ValueError, match="s"):
        softmax(np.array([0.0, np.nan]))
    with pytest.raises(ValueError, match="g"):
        softmax_vjp(np.ones(3) / 3, np.ones(4))


@pytest.mark.parametrize("d_k", [0, -3])
def test_d_k_below_one(d_k):
    with pytest.raises(ValueError, match="d_k"):
        scaled_score_moments(d_k)
    with pytest.raises(ValueError, match="d_k"):
        score_distribution(d_k)


def test_d_k_not_integer():
    with pytest.raises(TypeError, match="d_k"):
        scaled_score_moments(2.5)


@pytest.mark.parametrize("rho", [1.01, -1.5, float("nan")])
def test_rho_outside_unit_interval(rho):
    with pytest.raises(ValueError, match="rho"):
        scaled_score_moments(4, rho)
    with pytest.raises(ValueError, match="rho"):
        score_distribution(4, rho)


def test_unknown_scale_and_entries():
    with pytest.raises(ValueError, match="scale"):
        scaled_score_moments(4, scale="cube")
    with pytest.raises(ValueError, match="entries"):
        scaled_score_moments(4, entries="cauchy")
