r"""Calibrated one-sample tests for Monte Carlo output, and the experiment design behind them.

Every test returns a :class:`TestResult` (statistic, p-value, whether it rejects at
``alpha``, the estimate and its MCSE).  scipy does the work wherever it has the test
(``ttest_1samp``'s distribution, ``kstest``, ``cramervonmises``, ``binomtest``); what it
lacks -- a variance test valid for non-Gaussian samples, tests from streaming summaries,
power design -- is written here.

Tail requirements.  A normal-approximation p-value is only trustworthy far in the tail,
where a Bonferroni-corrected alpha lives, if one huge draw cannot dominate the sum: the
chance that a single draw moves a mean by z standard errors is about
:math:`n^{1-\nu/2} z^{-\nu}` for tail index :math:`\nu`.  We therefore ask for finite
moments beyond order 4 of whatever is averaged: the samples themselves for
:func:`mean_test` (``tail_index > 4``) and their squared deviations for
:func:`variance_test` (``tail_index > 8``).  Below that the tests refuse with
:class:`UntestableError` instead of printing a p-value that means nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

# scipy.stats and pandas are imported where they are used (see stats/models/__init__.py).
from .._validation import as_real_array, check_alpha, check_positive
from .estimators import MomentSummary, mean_estimate, moment_summary, variance_estimate

__all__ = [
    "MEAN_TEST_MIN_TAIL_INDEX",
    "VARIANCE_TEST_MIN_TAIL_INDEX",
    "TestResult",
    "UntestableError",
    "detectable_discrepancy",
    "detectable_ks_distance",
    "detectable_shift",
    "distribution_test",
    "holm_adjust",
    "interval_test",
    "mean_test",
    "proportion_test",
    "share_interval_test",
    "required_ks_sample_size",
    "required_sample_size",
    "two_sample_test",
    "variance_ratio_test",
    "variance_test",
]

MEAN_TEST_MIN_TAIL_INDEX = 4.0
VARIANCE_TEST_MIN_TAIL_INDEX = 8.0


class UntestableError(ValueError):
    """The samples' law lacks a moment the test's calibration needs."""


@dataclass(frozen=True)
class TestResult:
    """Outcome of one test.  ``reject`` is ``pvalue < alpha``; ``mcse`` is ``None`` for a
    goodness-of-fit test, whose statistic has no standard error to report."""

    __test__ = False  # not a pytest class

    test: str
    statistic: float
    pvalue: float
    alpha: float
    reject: bool
    estimate: float
    mcse: float
    expected: float
    n: int


def _summary(samples, name="samples"):
    if isinstance(samples, MomentSummary):
        s = samples
    else:
        x = as_real_array(samples, name, dtype=np.float64)
        if x.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional; got shape {x.shape}")
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{name} contains NaN or inf")
        s = moment_summary(x, name=name)
    if np.ndim(s.mean) != 0:
        raise ValueError(f"{name} must summarize a single column")
    return s


def _check_expected(expected, name="expected"):
    if isinstance(expected, bool) or not isinstance(expected, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number; got {type(expected).__name__}")
    if not math.isfinite(expected):
        raise ValueError(f"{name} must be finite; got {expected}")
    return float(expected)


def _check_n(s, k, test):
    if s.n < k:
        raise ValueError(f"n must be at least {k} for {test}; got n = {s.n}")


def _check_tail(tail_index, needed, test, what):
    if not tail_index > needed:
        raise UntestableError(
            f"{test} needs finite moments beyond order {needed:g} of {what}; the samples' law has "
            f"finite moments only below order {tail_index:g}, so no calibrated p-value exists"
        )


def _two_sided_normal(z):
    from scipy import stats as sps

    return float(2.0 * sps.norm.sf(abs(z)))


def mean_test(samples, expected, *, alpha, tail_index=math.inf):
    r"""Two-sided one-sample t-test of :math:`E[X] = ` ``expected``.

    ``samples`` is an array or a :class:`MomentSummary`; the statistic is
    :math:`(\bar x - \mu_0)/(s/\sqrt n)` on n - 1 degrees of freedom (``scipy.stats.ttest_1samp``
    gives the same numbers on an array).  ``tail_index`` is the supremum of the orders of
    finite moments of the samples' law; the test refuses below
    :data:`MEAN_TEST_MIN_TAIL_INDEX`.
    """
    from scipy import stats as sps

    alpha = check_alpha(alpha)
    expected = _check_expected(expected)
    s = _summary(samples)
    _check_n(s, 2, "mean_test")
    _check_tail(tail_index, MEAN_TEST_MIN_TAIL_INDEX, "mean_test", "the samples")
    est = mean_estimate(s)
    if est.mcse == 0:
        t = 0.0 if est.value == expected else math.copysign(math.inf, est.value - expected)
    else:
        t = float((est.value - expected) / est.mcse)
    p = float(2.0 * sps.t.sf(abs(t), s.n - 1))
    return TestResult("mean", t, p, alpha, p < alpha, float(est.value), float(est.mcse), float(expected), s.n)


def _log_variance(s):
    r"""log of the sample variance and its delta-method standard error :math:`\sqrt{(\hat\kappa - \frac{n-3}{n-1})/n}`."""
    est = variance_estimate(s)
    if est.value <= 0:
        raise ValueError("samples have zero variance; a variance test needs spread")
    se_log = float(est.mcse / est.value)
    return float(np.log(est.value)), se_log, est


def variance_test(samples, expected, *, alpha, tail_index=math.inf):
    r"""Two-sided test of :math:`\operatorname{Var}(X) = ` ``expected`` for any law with enough moments.

    Works on the log scale, where the sample variance is far less skewed:
    :math:`z = (\log s^2 - \log\sigma_0^2)/\widehat{\operatorname{se}}`, with the
    delta-method standard error from the sample kurtosis.  Unlike the chi-square test it
    does not assume Gaussian samples (whose kurtosis 3 it would silently use: at
    :math:`d_k = 1` the raw score has kurtosis 9).  Refuses below
    :data:`VARIANCE_TEST_MIN_TAIL_INDEX`.
    """
    alpha = check_alpha(alpha)
    expected = _check_expected(expected)
    if not expected > 0:
        raise ValueError(f"expected variance must be positive; got {expected}")
    s = _summary(samples)
    _check_n(s, 4, "variance_test")
    _check_tail(tail_index, VARIANCE_TEST_MIN_TAIL_INDEX, "variance_test", "the samples (the fourth moment of their deviations)")
    log_var, se, est = _log_variance(s)
    z = (log_var - math.log(expected)) / se
    p = _two_sided_normal(z)
    return TestResult("variance", z, p, alpha, p < alpha, float(est.value), float(est.mcse), float(expected), s.n)


def variance_ratio_test(samples_a, samples_b, expected_ratio, *, alpha, tail_index=math.inf):
    r"""Two-sided test of :math:`\operatorname{Var}(A)/\operatorname{Var}(B) = ` ``expected_ratio`` (independent samples).

    :math:`z = (\log s_A^2 - \log s_B^2 - \log r_0)/\sqrt{\widehat{se}_A^2 + \widehat{se}_B^2}`.
    ``estimate``/``mcse`` in the result are the ratio and its delta-method error.
    """
    alpha = check_alpha(alpha)
    expected_ratio = _check_expected(expected_ratio, "expected_ratio")
    if not expected_ratio > 0:
        raise ValueError(f"expected_ratio must be positive; got {expected_ratio}")
    a, b = _summary(samples_a, "samples_a"), _summary(samples_b, "samples_b")
    for s in (a, b):
        _check_n(s, 4, "variance_ratio_test")
    _check_tail(tail_index, VARIANCE_TEST_MIN_TAIL_INDEX, "variance_ratio_test", "the samples")
    la, sa, _ = _log_variance(a)
    lb, sb, _ = _log_variance(b)
    se = math.hypot(sa, sb)
    z = (la - lb - math.log(expected_ratio)) / se
    ratio = math.exp(la - lb)
    p = _two_sided_normal(z)
    return TestResult("variance_ratio", z, p, alpha, p < alpha, ratio, ratio * se, float(expected_ratio), min(a.n, b.n))


def two_sample_test(samples_a, samples_b, expected_difference=0.0, *, alpha, tail_index=math.inf):
    r"""Welch's two-sided test of :math:`E[A] - E[B] = ` ``expected_difference`` (independent samples, unequal variances).

    ``samples_a``/``samples_b`` are arrays or :class:`MomentSummary` s; scipy's
    ``ttest_ind_from_stats`` gives the p-value.  ``estimate`` is :math:`\bar a - \bar b`,
    ``mcse`` :math:`\sqrt{s_a^2/n_a + s_b^2/n_b}`, ``n`` the smaller sample.
    """
    from scipy import stats as sps

    alpha = check_alpha(alpha)
    expected_difference = _check_expected(expected_difference, "expected_difference")
    a, b = _summary(samples_a, "samples_a"), _summary(samples_b, "samples_b")
    for s in (a, b):
        _check_n(s, 2, "two_sample_test")
    _check_tail(tail_index, MEAN_TEST_MIN_TAIL_INDEX, "two_sample_test", "the samples")
    ma, mb = float(a.mean), float(b.mean)
    va, vb = float(a.m2) / (a.n - 1), float(b.m2) / (b.n - 1)
    if not (va > 0 or vb > 0):
        raise ValueError("both samples are constant: Welch's test needs spread in at least one")
    if not all(math.isfinite(x) for x in (ma, mb, va, vb)):
        raise ValueError("samples summarize to NaN or inf (a non-finite draw): no test")
    w = sps.ttest_ind_from_stats(ma, math.sqrt(va), a.n, mb + expected_difference, math.sqrt(vb), b.n, equal_var=False)
    se = math.sqrt(va / a.n + vb / b.n)
    p = float(w.pvalue)
    return TestResult("two_sample", float(w.statistic), p, alpha, p < alpha, ma - mb, se, expected_difference, min(a.n, b.n))


def interval_test(estimate, mcse, lo, hi, *, alpha):
    r"""Test of the interval null :math:`\theta \in [lo, hi)` for a normal estimate with standard error ``mcse``.

    The p-value is that of the interval's closest point (two-sided, so conservative):
    1 inside the interval, :math:`2\bar\Phi(d/\mathrm{se})` at distance d outside it.
    ``expected`` in the result is the nearer end.
    """
    from scipy import stats as sps

    alpha = check_alpha(alpha)
    for name, v in (("estimate", estimate), ("mcse", mcse)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v):
            raise ValueError(f"{name} must be a finite real number; got {v!r}")
    if not mcse >= 0:
        raise ValueError(f"mcse must be >= 0; got {mcse}")
    for name, v in (("lo", lo), ("hi", hi)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or math.isnan(v):
            raise ValueError(f"{name} must be a real number (inf allowed); got {v!r}")
    if not lo <= hi:
        raise ValueError(f"the interval [lo, hi) must have lo <= hi; got [{lo}, {hi})")
    dist = max(lo - estimate, estimate - hi, 0.0)
    if dist == 0.0:
        p = 1.0
    elif mcse == 0:
        p = 0.0
    else:
        p = float(min(1.0, 2.0 * sps.norm.sf(dist / mcse)))
    z = math.inf if dist and not mcse else (dist / mcse if mcse else 0.0)
    nearer = lo if estimate < lo else (hi if estimate > hi else float(estimate))
    return TestResult("interval", z, p, alpha, p < alpha, float(estimate), float(mcse), float(nearer), 0)


def distribution_test(samples, cdf, *, alpha, method="ks"):
    """Goodness of fit to an exact, fully specified CDF: Kolmogorov-Smirnov or Cramer-von Mises.

    ``cdf`` is a callable or a frozen ``scipy.stats`` distribution.  ``estimate`` in the
    result is the statistic itself (the KS distance for ``method="ks"``).
    """
    from scipy import stats as sps

    alpha = check_alpha(alpha)
    x = as_real_array(samples, "samples", dtype=np.float64)
    if x.ndim != 1 or x.size < 2:
        raise ValueError(f"samples must be one-dimensional with n >= 2; got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("samples contains NaN or inf")
    f = cdf.cdf if hasattr(cdf, "cdf") else cdf
    if not callable(f):
        raise TypeError("cdf must be callable or a frozen scipy.stats distribution")
    if method == "ks":
        r = sps.kstest(x, f)
    elif method == "cvm":
        r = sps.cramervonmises(x, f)
    else:
        raise ValueError(f"method must be 'ks' or 'cvm'; got {method!r}")
    p = float(r.pvalue)
    stat = float(r.statistic)
    return TestResult(method, stat, p, alpha, p < alpha, stat, None, 0.0, x.size)  # a KS distance has no MCSE


def proportion_test(successes, n, expected, *, alpha):
    """Exact two-sided binomial test of a proportion (``scipy.stats.binomtest``)."""
    from scipy import stats as sps

    alpha = check_alpha(alpha)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= 2**53:
        raise ValueError(f"n must be a positive integer (at most 2^53); got {n!r}")
    if isinstance(successes, bool) or not isinstance(successes, (int, np.integer)) or not 0 <= successes <= n:
        raise ValueError(f"successes must be an integer in [0, n]; got {successes!r}")
    if isinstance(expected, bool) or not isinstance(expected, (int, float, np.floating)) or not 0 <= expected <= 1:
        raise ValueError(f"expected must be a probability in [0, 1]; got {expected}")
    r = sps.binomtest(int(successes), int(n), expected)
    p_hat = successes / n
    return TestResult(
        "proportion", p_hat, float(r.pvalue), alpha, r.pvalue < alpha, p_hat, math.sqrt(p_hat * (1 - p_hat) / n), expected, int(n)
    )


def share_interval_test(successes, n, lo, hi, *, alpha):
    r"""Exact binomial test of :math:`H_0: p \in [lo, hi]` from ``successes`` in ``n`` trials.

    The p-value is the one-sided binomial tail at the interval's nearest end: below it,
    :math:`P(X \le k \mid p = lo)`; above it, :math:`P(X \ge k \mid p = hi)`; inside, 1.  It is
    valid for every p in the interval (the tails are monotone in p) and conservative
    (discrete), with no normal approximation: a share near 0 or 1 is tested exactly.
    """
    from scipy import stats as sps

    alpha = check_alpha(alpha)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= 2**53:
        raise ValueError(f"n must be a positive integer (at most 2^53); got {n!r}")
    if isinstance(successes, bool) or not isinstance(successes, (int, np.integer)) or not 0 <= successes <= n:
        raise ValueError(f"successes must be an integer in [0, n]; got {successes!r}")
    for name, v in (("lo", lo), ("hi", hi)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise TypeError(f"{name} must be a number in [0, 1]; got {v!r}")
    if not (0 <= lo <= hi <= 1):
        raise ValueError(f"lo and hi must satisfy 0 <= lo <= hi <= 1; got lo={lo!r}, hi={hi!r}")
    p_hat = successes / n
    if p_hat < lo:
        pvalue = float(sps.binom.cdf(successes, n, lo))
        null = lo
    elif p_hat > hi:
        pvalue = float(sps.binom.sf(successes - 1, n, hi))
        null = hi
    else:
        pvalue, null = 1.0, p_hat
    return TestResult("share", p_hat, pvalue, alpha, pvalue < alpha, p_hat, math.sqrt(p_hat * (1 - p_hat) / n), null, int(n))


# ------------------------------------------------------------------ design


def _z_sum(alpha, beta):
    alpha, beta = check_alpha(alpha), check_alpha(beta, "beta")
    return float(-special.ndtri(alpha / 2) - special.ndtri(beta))


def detectable_discrepancy(n, *, sd, alpha, beta=1e-3):
    r"""Smallest shift :math:`|\theta - \theta_0|` a two-sided level-``alpha`` test detects with power ``1 - beta``.

    For an estimator with standard error :math:`sd/\sqrt n`:
    :math:`\delta = (z_{1-\alpha/2} + z_{1-\beta})\, sd/\sqrt n`.
    """
    if isinstance(n, bool) or not isinstance(n, (int, float, np.integer, np.floating)) or not n >= 2 or math.isinf(n):
        raise ValueError(f"n must be a finite number >= 2; got {n!r}")
    sd = check_positive(sd, "sd")
    return float(_z_sum(alpha, beta) * sd / math.sqrt(n))


def detectable_shift(se, *, alpha, beta=1e-3):
    r"""Smallest shift a two-sided level-``alpha`` test of an estimate with standard error ``se``
    detects with power ``1 - beta``: :math:`(z_{1-\alpha/2} + z_{1-\beta})\,\mathrm{se}`."""
    if isinstance(se, bool) or not isinstance(se, (int, float, np.integer, np.floating)) or not se >= 0 or math.isinf(se):
        raise ValueError(f"se must be a finite number >= 0; got {se!r}")
    shift = float(_z_sum(alpha, beta) * se)
    if not math.isfinite(shift):
        raise ValueError(f"se={se!r} at alpha={alpha!r} gives no finite shift")
    return shift


def required_sample_size(discrepancy, *, sd, alpha, beta=1e-3):
    """Smallest n at which :func:`detectable_discrepancy` is at most ``discrepancy``."""
    discrepancy = check_positive(discrepancy, "discrepancy")
    sd = check_positive(sd, "sd")
    n = (_z_sum(alpha, beta) * (sd / discrepancy)) ** 2 if sd / discrepancy < 1e150 else math.inf
    if not n < 2.0**62:
        raise ValueError(f"discrepancy={discrepancy:g} with sd={sd:g} needs more than 2^62 samples; no run can draw them")
    return max(2, math.ceil(n))


def detectable_ks_distance(n, *, alpha, beta=1e-3):
    r"""A sup-distance between CDFs that the KS test at level ``alpha`` detects with power >= ``1 - beta``.

    Critical value from the exact null law (``scipy.stats.kstwo``) plus the
    Dvoretzky-Kiefer-Wolfowitz margin :math:`\sqrt{\ln(2/\beta)/(2n)}` (Massart's constant),
    so the bound holds for every alternative.
    """
    from scipy import stats as sps

    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= 2**53:
        raise ValueError(f"n must be a positive integer (at most 2^53); got {n!r}")
    alpha, beta = check_alpha(alpha), check_alpha(beta, "beta")
    return float(sps.kstwo.isf(alpha, int(n)) + math.sqrt(math.log(2 / beta) / (2 * int(n))))


def required_ks_sample_size(distance, *, alpha, beta=1e-3):
    """The smallest n at which :func:`detectable_ks_distance` is at most ``distance``.

    Bisection on the exact critical value (``scipy.stats.kstwo``), which falls with n,
    started from the asymptotic Kolmogorov value.
    """
    if isinstance(distance, bool) or not isinstance(distance, (int, float)) or not 0 < distance < 1:
        raise ValueError(f"distance must lie in (0, 1); got {distance!r}")
    alpha, beta = check_alpha(alpha), check_alpha(beta, "beta")

    def ok(n):
        return detectable_ks_distance(n, alpha=alpha, beta=beta) <= distance

    z = math.sqrt(math.log(2 / alpha) / 2) + math.sqrt(math.log(2 / beta) / 2)
    hi = max(2, math.ceil((z / distance) ** 2))
    while not ok(hi):
        hi *= 2
    lo = max(1, hi // 2)
    while lo > 1 and ok(lo):
        lo //= 2
    # Invariant: ok(hi) and (lo == 1 or not ok(lo)).
    if lo == 1 and ok(2):
        return 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def holm_adjust(pvalues, *, family_size=None):
    """Holm's step-down adjusted p-values (family-wise error control under any dependence).

    ``family_size`` (default: the number of p-values) counts the family's members; those
    without a p-value here (a test that could not run on this machine) enter as p = 1, which
    keeps the others' adjusted values what they would be beside any p-value that large.
    """
    p = as_real_array(pvalues, "pvalues", dtype=np.float64)
    if p.ndim != 1:
        raise ValueError("pvalues must be one-dimensional")
    if not np.all((p >= 0) & (p <= 1)):  # also refuses NaN
        raise ValueError("pvalues must be probabilities in [0, 1] (no NaN)")
    k = p.size
    if family_size is not None:
        if isinstance(family_size, bool) or not isinstance(family_size, (int, np.integer)) or not k <= family_size <= 1 << 31:
            raise ValueError(f"family_size must be an integer from the number of p-values ({k}) to 2^31; got {family_size!r}")
        p = np.concatenate([p, np.ones(int(family_size) - k)])
    m = p.size
    order = np.argsort(p, kind="stable")
    adj = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adj
    return out[:k]
