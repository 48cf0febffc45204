r"""Streaming, mergeable estimators with Monte Carlo standard errors (MCSE).

A :class:`MomentSummary` holds the count, mean and the central power sums
:math:`M_p = \sum (x - \bar x)^p`, p = 2, 3, 4, of a sample, per column.  Summaries of
disjoint chunks merge exactly (Chan, Golub & LeVeque 1979; Pebay 2008), so a run of any
length streams through bounded memory and its numbers do not depend on how it was cut.

MCSEs: :math:`\operatorname{se}(\bar x) = s/\sqrt n`;
:math:`\operatorname{se}(s^2) = \sqrt{(m_4 - \tfrac{n-3}{n-1}s^4)/n}` from the fourth
central moment; a proportion's :math:`\sqrt{\hat p(1-\hat p)/n}`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import numbers

from .._validation import as_real_array, check_finite

__all__ = [
    "Estimate",
    "MomentSummary",
    "delta_method",
    "mean_estimate",
    "merge_moments",
    "merge_power_sums",
    "moment_summary",
    "proportion_estimate",
    "quantile_estimate",
    "scale_moments",
    "variance_estimate",
]


@dataclass(frozen=True)
class MomentSummary:
    """Count, mean and central power sums M2, M3, M4 of a sample (arrays over columns)."""

    n: int
    mean: np.ndarray
    m2: np.ndarray
    m3: np.ndarray
    m4: np.ndarray

    @property
    def variance(self):
        """Unbiased sample variance :math:`M_2/(n-1)`."""
        return self.m2 / (self.n - 1)

    @property
    def kurtosis(self):
        r"""Plug-in kurtosis :math:`n M_4 / M_2^2` (3 for a Gaussian)."""
        return self.n * self.m4 / self.m2**2


@dataclass(frozen=True)
class Estimate:
    """A Monte Carlo estimate and its standard error."""

    value: float
    mcse: float
    n: int


def moment_summary(x, *, name="x"):
    """:class:`MomentSummary` of the samples in ``x`` along axis 0 (two-pass, per chunk); errors
    name the argument ``name``."""
    x = as_real_array(x, name, dtype=np.float64)
    if x.ndim == 0 or x.shape[0] < 1:
        raise ValueError(f"{name} must hold at least one sample along axis 0")
    check_finite(x, name)
    mean = x.mean(axis=0)
    d = x - mean
    d2 = d * d
    return MomentSummary(x.shape[0], mean, d2.sum(axis=0), (d2 * d).sum(axis=0), (d2 * d2).sum(axis=0))


def merge_power_sums(a, b):
    r"""Count, mean and central power sums of two disjoint samples' union (Pébay 2008, eqs. 3.1-3.3).

    ``a`` and ``b`` are ``(n, mean, M2, M3, M4)``; the arithmetic is elementwise, so the
    entries may be floats or arrays.  The one implementation of the merge: the engine's
    row summaries and :func:`merge_moments` both call it.
    """
    for name, x in (("a", a), ("b", b)):
        if not isinstance(x, (tuple, list)) or len(x) != 5:
            raise TypeError(f"{name} must be a tuple (n, mean, M2, M3, M4); got {type(x).__name__}")
    na, mean_a, m2a, m3a, m4a = a
    nb, mean_b, m2b, m3b, m4b = b
    for name, n in (("a", na), ("b", nb)):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"{name}'s count n must be a positive integer; got {n!r}")
    n = na + nb
    delta = mean_b - mean_a
    d_n = delta / n
    mean = mean_a + nb * d_n
    m2 = m2a + m2b + delta * d_n * na * nb
    m3 = m3a + m3b + delta * d_n * d_n * na * nb * (na - nb) + 3.0 * d_n * (na * m2b - nb * m2a)
    m4 = (
        m4a
        + m4b
        + delta * d_n**3 * na * nb * (na * na - na * nb + nb * nb)
        + 6.0 * d_n * d_n * (na * na * m2b + nb * nb * m2a)
        + 4.0 * d_n * (na * m3b - nb * m3a)
    )
    return n, mean, m2, m3, m4


def merge_moments(a: MomentSummary, b: MomentSummary) -> MomentSummary:
    """Exact summary of the union of two disjoint samples (:func:`merge_power_sums`)."""
    for name, m in (("a", a), ("b", b)):
        if not isinstance(m, MomentSummary):
            raise TypeError(f"{name} must be a MomentSummary; got {type(m).__name__}")
    return MomentSummary(*merge_power_sums((a.n, a.mean, a.m2, a.m3, a.m4), (b.n, b.mean, b.m2, b.m3, b.m4)))


def scale_moments(s: MomentSummary, c) -> MomentSummary:
    """Summary of the sample multiplied by the constant ``c``."""
    if not isinstance(s, MomentSummary):
        raise TypeError(f"s must be a MomentSummary; got {type(s).__name__}")
    if isinstance(c, bool) or not isinstance(c, numbers.Real) or not np.isfinite(c):
        raise ValueError(f"c must be a finite real number; got {c!r}")
    return MomentSummary(s.n, c * s.mean, c**2 * s.m2, c**3 * s.m3, c**4 * s.m4)


def delta_method(f, means, ses, *, step_floor=None):
    r"""Value and delta-method standard error of ``f`` at ``means``:
    :math:`\operatorname{se}(f) = \sqrt{\sum_i (\partial f/\partial\mu_i)^2 \operatorname{se}_i^2}`.

    The gradient is a central difference with step :math:`h_i = 10^{-6} \max(|\mu_i|, s_i)`,
    :math:`s_i` = ``step_floor[i]`` (default: ``ses[i]``, so a mean near zero still gets a
    step of the size of its own uncertainty).  Returns ``(f(means), se)`` as floats.
    """
    if not callable(f):
        raise TypeError(f"f must be callable; got {type(f).__name__}")
    mu = check_finite(as_real_array(means, "means", dtype=np.float64), "means")
    if mu.ndim != 1 or mu.size == 0:
        raise ValueError(f"means must be a non-empty one-dimensional sequence; got shape {mu.shape}")
    ses = check_finite(as_real_array(ses, "ses", dtype=np.float64), "ses")
    if ses.shape != mu.shape or np.any(ses < 0):
        raise ValueError(f"ses must be standard errors (>= 0) in the shape of means, {mu.shape}; got {ses}")
    floor = ses if step_floor is None else check_finite(as_real_array(step_floor, "step_floor", dtype=np.float64), "step_floor")
    if floor.shape != mu.shape:
        raise ValueError(f"step_floor must have the shape of means, {mu.shape}; got {floor.shape}")
    grad = np.empty(mu.size)
    for i in range(mu.size):
        h = 1e-6 * max(abs(mu[i]), floor[i], 1e-300)
        up, down = mu.copy(), mu.copy()
        up[i] += h
        down[i] -= h
        grad[i] = (f(up) - f(down)) / (2 * h)
    value, se = float(f(mu)), float(np.sqrt(np.sum((grad * ses) ** 2)))
    if not (np.isfinite(value) and np.isfinite(se)):
        raise ValueError(f"f is not finite and differentiable at means={mu}: value {value}, standard error {se}")
    return value, se


def _summary(samples):
    s = samples if isinstance(samples, MomentSummary) else moment_summary(samples, name="samples")
    if not all(np.all(np.isfinite(v)) for v in (s.mean, s.m2, s.m3, s.m4)):
        raise ValueError("samples summarize to NaN or inf (a non-finite draw): no estimate")
    return s


def _need(s, k, what):
    if s.n < k:
        raise ValueError(f"n must be at least {k} for {what}; got n = {s.n}")


def mean_estimate(samples) -> Estimate:
    """Sample mean with MCSE :math:`s/\\sqrt n` (samples or a :class:`MomentSummary`)."""
    s = _summary(samples)
    _need(s, 2, "a mean's standard error")
    return Estimate(s.mean, np.sqrt(s.variance / s.n), s.n)


def variance_estimate(samples) -> Estimate:
    r"""Unbiased variance with MCSE :math:`\sqrt{(m_4 - \frac{n-3}{n-1}s^4)/n}`."""
    s = _summary(samples)
    _need(s, 4, "a variance's standard error")
    var = s.variance
    m4 = s.m4 / s.n
    return Estimate(var, np.sqrt(np.maximum(m4 - (s.n - 3) / (s.n - 1) * var**2, 0.0) / s.n), s.n)


def proportion_estimate(successes, n) -> Estimate:
    r"""Proportion :math:`\hat p = k/n` with MCSE :math:`\sqrt{\hat p(1-\hat p)/n}`."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"n must be a positive integer; got {n!r}")
    if isinstance(successes, bool) or not isinstance(successes, numbers.Integral) or not 0 <= successes <= n:
        raise ValueError(f"successes must be an integer in [0, n]; got {successes!r}")
    p = successes / n
    return Estimate(p, np.sqrt(p * (1 - p) / n), n)


def quantile_estimate(samples, q) -> Estimate:
    r"""Sample q-quantile with a distribution-free MCSE from order statistics.

    The MCSE is half the width of the order-statistic interval
    :math:`[x_{(np - \sqrt{np(1-p)})}, x_{(np + \sqrt{np(1-p)})}]` (one binomial standard
    deviation of ranks either side).  Needs the samples themselves, not a summary.
    """
    x = np.sort(check_finite(as_real_array(samples, "samples", dtype=np.float64), "samples").ravel())
    if isinstance(q, bool) or not isinstance(q, numbers.Real) or not 0 < q < 1:
        raise ValueError(f"q must lie strictly between 0 and 1; got {q}")
    n = x.size
    _need(MomentSummary(n, 0, 0, 0, 0), 2, "a quantile's standard error")
    half = np.sqrt(n * q * (1 - q))
    lo = int(np.clip(np.floor(n * q - half), 0, n - 1))
    hi = int(np.clip(np.ceil(n * q + half), 0, n - 1))
    return Estimate(float(np.quantile(x, q)), 0.5 * (x[hi] - x[lo]), n)
