"""Central finite differences, the independent reference for the hand-derived gradients."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import as_real_array, check_positive

__all__ = ["GradientCheck", "gradient_check", "numerical_gradient"]


def numerical_gradient(f, x, *, eps=1e-6):
    r"""Central differences of a scalar function: :math:`(f(x + \epsilon e_i) - f(x - \epsilon e_i)) / 2\epsilon`.

    Truncation error is :math:`O(\epsilon^2)` and rounding error :math:`O(u/\epsilon)`; in
    float64 the default ``eps`` balances the two at about 1e-10 relative error.
    """
    if not callable(f):
        raise TypeError("f must be a callable returning a scalar")
    eps = check_positive(eps, "eps")
    x = as_real_array(x, "x", dtype=np.float64).copy()
    grad = np.empty_like(x)
    flat, gflat = x.reshape(-1), grad.reshape(-1)
    for i in range(flat.size):
        orig = flat[i]
        flat[i] = orig + eps
        up = float(f(x))
        flat[i] = orig - eps
        down = float(f(x))
        flat[i] = orig
        gflat[i] = (up - down) / (2 * eps)
    return grad


@dataclass(frozen=True)
class GradientCheck:
    """``max_abs_error = max|g - n|``; ``max_rel_error = max|g - n| / max(max|n|, max|g|)``."""

    max_abs_error: float
    max_rel_error: float


def gradient_check(f, x, analytic, *, eps=1e-6):
    """Compare an analytic gradient of ``f`` at ``x`` with :func:`numerical_gradient`.

    The relative error is normwise (the error over the largest gradient entry), so entries
    that are exactly zero, such as masked connections, do not divide by zero.
    """
    analytic = as_real_array(analytic, "analytic", dtype=np.float64)
    numeric = numerical_gradient(f, x, eps=eps)
    if numeric.shape != analytic.shape:
        raise ValueError(f"analytic gradient has shape {analytic.shape}; x has shape {numeric.shape}")
    err = float(np.max(np.abs(analytic - numeric), initial=0.0))
    scale = max(float(np.max(np.abs(numeric), initial=0.0)), float(np.max(np.abs(analytic), initial=0.0)))
    rel = err / scale if scale > 0 else err
    return GradientCheck(max_abs_error=err, max_rel_error=rel)
