r"""Floating-point facts of the section "A vectorized implementation, and why stability is not optional".

The formats are numpy's float16 and float32 and bfloat16, which numpy gets from
``ml_dtypes`` (the package JAX and TensorFlow use), so no PyTorch is needed; the claims
cross-check it against ``torch.bfloat16`` where PyTorch is installed.
"""

from __future__ import annotations

import numpy as np

from .attention import check_scores

__all__ = ["FORMATS", "UNIT_ROUNDOFF", "exp_overflow_threshold", "float_format", "format_max", "softmax_terms", "unit_roundoff"]

FORMATS = ("float16", "bfloat16", "float32")


def float_format(dtype):
    """``dtype`` (a name, numpy dtype or scalar type) as a numpy dtype of a binary float format.

    Accepts the IEEE formats numpy has and ``"bfloat16"`` (from ``ml_dtypes``).
    """
    if isinstance(dtype, str) and dtype == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype must be a floating dtype such as 'float16', 'bfloat16' or 'float32'; got {dtype!r}") from None
    if np.issubdtype(dt, np.floating):
        return dt
    if dt.name == "bfloat16":
        return dt
    raise TypeError(f"dtype must be a floating type; got {dt}")


def unit_roundoff(dtype="float64"):
    """The unit roundoff u of the format, half its machine epsilon (one rounding's relative error
    bound), as a float: 2^-53 for float64, 2^-24 for float32, 2^-11 for float16, 2^-8 for bfloat16."""
    return float(np.finfo(float_format(dtype)).eps) / 2


#: The unit roundoff of float64, 2^-53: the error bounds of the float64 simulations are multiples of it.
UNIT_ROUNDOFF = unit_roundoff("float64")


def format_max(dtype):
    """The largest finite number of the format (65504 for float16)."""
    dt = float_format(dtype)
    if dt.name == "bfloat16":
        import ml_dtypes

        return ml_dtypes.finfo(dt).max
    return np.finfo(dt).max


def exp_overflow_threshold(dtype):
    """The smallest value x of ``dtype`` with ``exp(x) == inf`` when evaluated in ``dtype``.

    Found from the format's largest number by stepping ``np.nextafter`` around
    ``log(max)``: 11.09375 for float16 (the section's "a score of 12 overflows"), 89 in
    bfloat16, whose representable numbers near 88.7 are 0.5 apart (e^88.5 is still
    finite), and 88.72284 for float32.
    """
    dt = float_format(dtype)
    big = format_max(dt)
    x = np.array(np.log(np.float64(big)), dtype=dt)
    inf = np.array(np.inf, dtype=dt)
    with np.errstate(over="ignore"):
        while np.isinf(np.exp(x)):
            x = np.nextafter(x, -inf)
        while np.isfinite(np.exp(x)):
            x = np.nextafter(x, inf)
    return x[()]


def softmax_terms(s, axis=-1):
    r"""The stable softmax's terms :math:`e^{s_j - m}` and its denominator :math:`\sum_j e^{s_j - m}`, in ``s``'s format.

    The largest term is :math:`e^0 = 1` exactly, so the denominator is at least 1 in any
    format (rounding is monotone): nothing can overflow.
    """
    s = check_scores(s, axis)
    if not np.all(np.isfinite(s)):
        raise ValueError("s contains NaN or inf; the stable softmax's terms need finite scores")
    m = np.max(s, axis=axis, keepdims=True)
    with np.errstate(over="ignore"):  # s - m may round to -inf far below the max: its term is 0 either way
        e = np.exp(s - m)
    return e, np.sum(e, axis=axis, keepdims=True)
