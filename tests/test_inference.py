"""The tests themselves: agreement with scipy, calibration under the null, power, refusals.

Calibration checks draw many replications under a true null and test the p-values for
uniformity (KS, alpha = 1e-3) and the rejection rate at 0.01 (exact binomial, alpha = 1e-3):
each such check has false-fail rate 1e-3.  With 1000 replications the KS check sees a
sup-distance of about 0.07 and the binomial check a rejection rate above about 0.026
(2.6x nominal) with power 0.9.
"""

import math

import numpy as np
import pytest
from scipy import stats as sps

from stats import (
    UntestableError,
    detectable_discrepancy,
    detectable_ks_distance,
    distribution_test,
    holm_adjust,
    mean_test,
    proportion_test,
    required_ks_sample_size,
    required_sample_size,
    sample_scores,
    scaled_score_moments,
    score_distribution,
    score_tail_index,
    variance_ratio_test,
    variance_test,
)

REPS = 1000


def assert_calibrated(pvalues):
    p = np.asarray(pvalues)
    assert sps.kstest(p, "uniform").pvalue > 1e-3, "p-values are not uniform under the null"
    assert not proportion_test(int(np.sum(p < 0.01)), p.size, 0.01, alpha=1e-3).reject, "rejection rate at 0.01"


def null_scores(n, d_k, entries, rho=0.0, seed=0):
    x = sample_scores(REPS * n, d_k, rho=rho, entries=entries, scale="none", seed=seed)
    return x.reshape(REPS, n)


def test_mean_test_agrees_with_scipy(rng):
    x = rng.normal(0.1, 1.0, size=500)
    ours = mean_test(x, 0.0, alpha=0.05)
    ref = sps.ttest_1samp(x, 0.0)
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-10)


def test_distribution_and_proportion_tests_agree_with_scipy(rng):
    x = rng.normal(size=300)
    assert distribution_test(x, sps.norm, alpha=0.05).pvalue == pytest.approx(sps.kstest(x, sps.norm.cdf).pvalue)
    assert distribution_test(x, sps.norm.cdf, alpha=0.05, method="cvm").pvalue == pytest.approx(
        sps.cramervonmises(x, sps.norm.cdf).pvalue
    )
    assert proportion_test(13, 100, 0.2, alpha=0.05).pvalue == pytest.approx(sps.binomtest(13, 100, 0.2).pvalue)


@pytest.mark.parametrize(
    "d_k, entries, rho, n",
    [(1, "gaussian", 0.0, 2000), (1, "student_t", 0.0, 2000), (4, "student_t", 0.5, 2000), (64, "rademacher", 0.9, 500)],
)
def test_mean_test_is_calibrated(d_k, entries, rho, n):
    mean, _ = scaled_score_moments(d_k, rho, entries=entries, scale="none")
    tail = score_tail_index(entries, rho)
    x = null_scores(n, d_k, entries, rho, seed=1)
    assert_calibrated([mean_test(r, mean, alpha=0.01, tail_index=tail).pvalue for r in x])


@pytest.mark.parametrize(
    "d_k, entries, n",
    # d_k = 1: the raw score is a product of two entries, kurtosis 9 (Gaussian) and 16
    # (student_t, df 10); the test is claimed calibrated from n ~ 10^4 on at such kurtosis.
    [(1, "gaussian", 16_000), (1, "student_t", 16_000), (16, "gaussian", 2000), (8, "uniform", 2000)],
)
def test_variance_test_is_calibrated(d_k, entries, n):
    _, var = scaled_score_moments(d_k, entries=entries, scale="none")
    x = null_scores(n, d_k, entries, seed=2)
    assert_calibrated([variance_test(r, var, alpha=0.01, tail_index=score_tail_index(entries)).pvalue for r in x])


def test_chi_square_variance_test_would_be_miscalibrated_at_d1():
    """Why variance_test exists: the Gaussian chi-square test rejects a true variance far too
    often for kurtosis-9 products (this is a fact about that test, asserted at 5x nominal)."""
    x = null_scores(2000, 1, "gaussian", seed=3)
    stat = (x.shape[1] - 1) * x.var(axis=1, ddof=1) / 1.0
    cdf = sps.chi2.cdf(stat, x.shape[1] - 1)
    p = 2 * np.minimum(cdf, 1 - cdf)
    assert np.mean(p < 0.01) > 0.05


def test_variance_ratio_test_is_calibrated():
    a = null_scores(1000, 8, "gaussian", seed=4)
    b = null_scores(1000, 16, "gaussian", seed=5)
    assert_calibrated([variance_ratio_test(rb, ra, 2.0, alpha=0.01).pvalue for ra, rb in zip(a, b)])


def test_ks_on_the_exact_law_is_calibrated():
    law = score_distribution(1, 0.6)
    x = null_scores(400, 1, "gaussian", rho=0.6, seed=6)
    assert_calibrated([distribution_test(r, law, alpha=0.01).pvalue for r in x])


def test_designed_sample_size_has_the_designed_power(rng):
    """At the designed n, a shift of exactly the designed size is rejected at level 0.01 with
    power >= 0.9: the observed rate must not fall significantly (alpha 1e-3) below 0.9."""
    sd, delta = 2.0, 0.1
    n = required_sample_size(delta, sd=sd, alpha=0.01, beta=0.1)
    assert detectable_discrepancy(n, sd=sd, alpha=0.01, beta=0.1) <= delta
    x = rng.normal(delta, sd, size=(REPS, n))
    rejected = sum(mean_test(r, 0.0, alpha=0.01).reject for r in x)
    assert sps.binomtest(rejected, REPS, 0.9, alternative="less").pvalue > 1e-3


def test_variance_design_has_its_power(rng):
    sd_log = math.sqrt(3 - 1)  # Gaussian samples: kurtosis 3
    target = 0.05
    n = required_sample_size(math.log1p(target), sd=sd_log, alpha=0.01, beta=0.1)
    x = rng.normal(0.0, math.sqrt(1 + target), size=(REPS, n))
    rejected = sum(variance_test(r, 1.0, alpha=0.01).reject for r in x)
    assert sps.binomtest(rejected, REPS, 0.9, alternative="less").pvalue > 1e-3


def test_ks_detectable_distance_is_detected(rng):
    n = 3000
    delta = detectable_ks_distance(n, alpha=0.01, beta=0.1)
    assert required_ks_sample_size(delta, alpha=0.01, beta=0.1) == n  # the smallest n, exactly
    shift = delta / sps.norm.pdf(0)  # a location shift moves the CDF by about shift * pdf(0)
    x = rng.normal(shift, 1.0, size=(300, n))
    rejected = sum(distribution_test(r, sps.norm, alpha=0.01).reject for r in x)
    assert sps.binomtest(rejected, 300, 0.9, alternative="less").pvalue > 1e-3


def test_tests_refuse_when_a_needed_moment_is_infinite(rng):
    x = rng.normal(size=100)
    with pytest.raises(UntestableError, match="order 8"):
        variance_test(x, 1.0, alpha=0.01, tail_index=score_tail_index("student_t", 0.5))  # t10, rho != 0: 5
    with pytest.raises(UntestableError, match="order 4"):
        mean_test(x, 0.0, alpha=0.01, tail_index=3.0)
    assert not variance_test(x, 1.0, alpha=1e-3, tail_index=score_tail_index("student_t", 0.0)).reject


@pytest.mark.parametrize("alpha", [0.0, 1.0, 1.5, -0.1])
def test_alpha_must_lie_in_the_open_unit_interval(alpha):
    with pytest.raises(ValueError, match="alpha"):
        mean_test([1.0, 2.0, 3.0], 0.0, alpha=alpha)


def test_sample_size_minimums_and_expected_values():
    with pytest.raises(ValueError, match="n must be at least 2"):
        mean_test([1.0], 0.0, alpha=0.01)
    with pytest.raises(ValueError, match="n must be at least 4"):
        variance_test([1.0, 2.0, 3.0], 1.0, alpha=0.01)
    with pytest.raises(ValueError, match="expected"):
        variance_test([1.0, 2.0, 3.0, 5.0], 0.0, alpha=0.01)
    with pytest.raises(ValueError, match="samples"):
        mean_test([1.0, np.nan, 2.0], 0.0, alpha=0.01)
    with pytest.raises(ValueError, match="expected"):
        proportion_test(3, 10, 1.5, alpha=0.01)


def test_holm():
    p = np.array([0.01, 0.04, 0.03, 0.005])
    np.testing.assert_allclose(holm_adjust(p), [0.03, 0.06, 0.06, 0.02])
    assert np.all(holm_adjust(p) >= p)


@pytest.mark.parametrize("distance, alpha, beta", [(0.3, 0.01, 0.1), (0.12, 1e-3, 1e-3), (0.05, 3.9e-6, 1e-3), (0.9, 0.5, 0.5)])
def test_required_ks_sample_size_is_the_smallest_n(distance, alpha, beta):
    """Against a brute-force scan of every n up to the answer."""
    n = required_ks_sample_size(distance, alpha=alpha, beta=beta)
    ok = [detectable_ks_distance(m, alpha=alpha, beta=beta) <= distance for m in range(1, n + 1)]
    assert ok[-1] and not any(ok[:-1])
