"""Float formats: bfloat16 without torch, the thresholds the section quotes, and attention in
float16 that no longer overflows where its scaled scores fit."""

import numpy as np
import pytest

from stats import (
    attention_backward,
    exp_overflow_threshold,
    float_format,
    format_max,
    naive_softmax,
    scaled_dot_product_attention,
    softmax,
    tiled_attention_backward,
    tiled_attention_forward,
)


def test_bfloat16_threshold_is_the_first_value_whose_exp_overflows():
    dt = float_format("bfloat16")
    x = np.array(exp_overflow_threshold("bfloat16"), dtype=dt)
    below = np.nextafter(x, np.array(-np.inf, dtype=dt))
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(x)) and np.isfinite(np.exp(below))
    assert float(x) == 89.0 and float(format_max("bfloat16")) == pytest.approx(3.3895e38, rel=1e-4)


@pytest.mark.torch
def test_bfloat16_threshold_agrees_with_torch():
    torch = pytest.importorskip("torch", reason="PyTorch not installed: `make torch` adds the CPU build")
    x = torch.tensor(float(exp_overflow_threshold("bfloat16")), dtype=torch.bfloat16)
    below = torch.nextafter(x, torch.tensor(-float("inf"), dtype=torch.bfloat16))
    assert torch.isinf(torch.exp(x)) and not torch.isinf(torch.exp(below))


def test_float16_attention_scales_before_the_product():
    """Q = K = 100, d_k = 8: Q K^T = 80000 overflows float16, the scaled score 28284 does not."""
    Q = np.full((2, 8), 100, dtype=np.float16)
    dO = np.ones((2, 8), dtype=np.float16)
    O = scaled_dot_product_attention(Q, Q, Q)
    assert np.all(np.isfinite(O)) and O.dtype == np.float16
    assert all(np.all(np.isfinite(g)) for g in attention_backward(Q, Q, Q, dO))
    Ot, lse = tiled_attention_forward(Q, Q, Q)
    assert np.all(np.isfinite(Ot)) and np.all(np.isfinite(lse))
    assert all(np.all(np.isfinite(g)) for g in tiled_attention_backward(Q, Q, Q, Ot, lse, dO))


@pytest.mark.parametrize("bad", [np.ones((2, 3), dtype=np.int64), np.ones((2, 3), dtype=np.uint8)])
def test_integer_masks_are_refused_with_the_conversion(bad):
    Q = np.ones((2, 4))
    K = np.ones((3, 4))
    with pytest.raises(TypeError, match=r"astype\(bool\)"):
        scaled_dot_product_attention(Q, K, K, bad)


@pytest.mark.parametrize("fn", [softmax, naive_softmax])
def test_softmax_refuses_scalars_and_empty_rows(fn):
    with pytest.raises(ValueError, match="s"):
        fn(3.0)
    with pytest.raises(ValueError, match="s"):
        fn(np.zeros((2, 0)))


def test_softmax_refuses_plus_infinity():
    with pytest.raises(ValueError, match=r"\+inf"):
        softmax([np.inf, 0.0])


@pytest.mark.parametrize("shape", [(0, 4), (3, 0)])
def test_empty_attention_inputs_are_refused_everywhere(shape):
    Q = np.zeros(shape)
    K = np.zeros((3, shape[1]))
    for call in (lambda: scaled_dot_product_attention(Q, K, K), lambda: tiled_attention_forward(Q, K, K)):
        with pytest.raises(ValueError, match="empty"):
            call()
