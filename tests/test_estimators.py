"""Streaming estimators: exact merges and honest standard errors."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from stats import (
    mean_estimate,
    merge_moments,
    moment_summary,
    proportion_estimate,
    quantile_estimate,
    scale_moments,
    variance_estimate,
)

samples = arrays(np.float64, st.integers(4, 60), elements=st.floats(-1e3, 1e3))


@given(samples, st.data())
def test_merge_equals_summary_of_the_union(x, data):
    cuts = sorted(data.draw(st.lists(st.integers(1, x.size - 1), max_size=4, unique=True)))
    parts = np.split(x, cuts)
    total = moment_summary(parts[0])
    for p in parts[1:]:
        total = merge_moments(total, moment_summary(p))
    whole = moment_summary(x)
    assert total.n == whole.n
    scale = max(1.0, float(np.max(np.abs(x - x.mean()))))
    np.testing.assert_allclose(total.mean, whole.mean, atol=1e-9 * scale)
    for p, a, b in ((2, total.m2, whole.m2), (3, total.m3, whole.m3), (4, total.m4, whole.m4)):
        np.testing.assert_allclose(a, b, atol=1e-8 * x.size * scale**p)


def test_scaled_summary_is_summary_of_scaled_sample(rng):
    x = rng.normal(size=1000)
    a, b = scale_moments(moment_summary(x), -2.5), moment_summary(-2.5 * x)
    for u, v in ((a.mean, b.mean), (a.m2, b.m2), (a.m3, b.m3), (a.m4, b.m4)):
        np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-9)


def test_mcse_formulas(rng):
    x = rng.normal(2.0, 3.0, size=1_000_000)
    m = mean_estimate(x)
    assert m.mcse == pytest.approx(x.std(ddof=1) / 1000, rel=1e-12)
    v = variance_estimate(x)
    # For a Gaussian, sd(s^2) = sigma^2 sqrt(2/(n-1)); the plug-in fourth moment has relative
    # sd about 3.3/sqrt(n), so 2% is over 5 of its standard deviations.
    assert v.mcse == pytest.approx(9.0 * np.sqrt(2 / (x.size - 1)), rel=0.02)


def test_mcse_matches_the_spread_across_replications(rng):
    """The MCSE predicts the sd of the estimate over 2000 replications (within 10%: the
    sd of a 2000-replication sd is 1.6% for a near-Gaussian estimator, so 10% is > 6 sd)."""
    x = rng.standard_t(10, size=(2000, 5000))
    v = np.array([variance_estimate(r).value for r in x])
    se = np.array([variance_estimate(r).mcse for r in x])
    assert np.sqrt(np.mean(se**2)) == pytest.approx(v.std(ddof=1), rel=0.10)


def test_proportion_and_quantile(rng):
    p = proportion_estimate(30, 100)
    assert p.value == 0.3 and p.mcse == pytest.approx(np.sqrt(0.21 / 100))
    x = rng.normal(size=100_000)
    q = quantile_estimate(x, 0.975)
    assert abs(q.value - 1.959964) < 6 * q.mcse  # false-fail ~2e-9 for a normal MCSE
    assert 0 < q.mcse < 0.02


def test_estimators_refuse_too_few_samples():
    with pytest.raises(ValueError, match="n must be at least 2"):
        mean_estimate([1.0])
    with pytest.raises(ValueError, match="n must be at least 4"):
        variance_estimate([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="q"):
        quantile_estimate([1.0, 2.0], 1.5)
