"""Floating-point facts of the section "A vectorized implementation, and why stability is not optional"."""

from __future__ import annotations

import numpy as np

__all__ = ["exp_overflow_threshold"]


def exp_overflow_threshold(dtype):
    """The smallest value x of ``dtype`` with ``exp(x) == inf`` when evaluated in ``dtype``.

    Found from ``np.finfo(dtype).max`` by stepping ``np.nextafter`` around ``log(max)``:
    about 11.09 for float16 (the section's "a score of 12 overflows") and 88.72 for float32.
    """
    dt = np.dtype(dtype)
    if not np.issubdtype(dt, np.floating):
        raise TypeError(f"dtype must be a floating type; got {dt}")
    big = np.finfo(dt).max
    x = dt.type(np.log(np.float64(big)))
    inf = dt.type(np.inf)
    with np.errstate(over="ignore"):
        while np.isinf(np.exp(x)):
            x = np.nextafter(x, -inf)
        while np.isfinite(np.exp(x)):
            x = np.nextafter(x, inf)
    return x
