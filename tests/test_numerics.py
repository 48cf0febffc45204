"""Float16/float32 overflow facts, computed from np.finfo."""

import numpy as np
import pytest

from stats import exp_overflow_threshold, naive_softmax, softmax


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_threshold_is_the_first_value_whose_exp_is_inf(dtype):
    x = exp_overflow_threshold(dtype)
    assert x.dtype == dtype
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(x))
        assert np.isfinite(np.exp(np.nextafter(x, dtype(-np.inf))))
    assert abs(float(x) - np.log(np.float64(np.finfo(dtype).max))) < 0.01


def test_thresholds_the_section_quotes():
    assert 11.0 < float(exp_overflow_threshold(np.float16)) < 12.0  # "fails for a score of only 12"
    assert abs(float(exp_overflow_threshold(np.float32)) - 88.72) < 0.01


def test_naive_float16_softmax_overflows_at_12_and_stable_never_does():
    s = np.array([12.0, 0.0, -1.0], dtype=np.float16)
    assert np.isnan(naive_softmax(s)).any()
    for big in (12.0, 1e3, 6e4):
        a = softmax(np.array([big, 0.0, -1.0], dtype=np.float16))
        assert a.dtype == np.float16 and np.all(np.isfinite(a))
        np.testing.assert_allclose(a.astype(float).sum(), 1.0, atol=1e-3)


def test_threshold_rejects_non_float_dtypes():
    with pytest.raises(TypeError, match="dtype"):
        exp_overflow_threshold(np.int32)
