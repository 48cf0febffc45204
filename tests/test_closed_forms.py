"""Closed forms and the exact score law, each against an independent derivation."""

import itertools
import math

import mpmath as mp
import numpy as np
import pytest
from scipy import integrate, special
from scipy import stats as sps

from stats import (
    diff_chi2,
    entry_law,
    law_moment,
    scaled_score_moments,
    score_cumulants,
    score_distribution,
    score_scale,
    score_tail_index,
)

LAWS = ["gaussian", "rademacher", "uniform", "student_t"]


@pytest.mark.parametrize("r", range(0, 9))
def test_law_moments_match_scipy(r):
    assert law_moment("gaussian", r) == pytest.approx(sps.norm.moment(r), abs=1e-12)
    s3 = math.sqrt(3)
    assert law_moment("uniform", r) == pytest.approx(sps.uniform(-s3, 2 * s3).moment(r), rel=1e-10, abs=1e-12)
    assert law_moment("rademacher", r) == (1.0 if r % 2 == 0 else 0.0)
    df = 10.0
    # scipy integrates t moments numerically (8 digits at r = 8); mpmath gives 30.
    density = lambda x: mp.gamma((df + 1) / 2) / (mp.sqrt(df * mp.pi) * mp.gamma(df / 2)) * (1 + x**2 / df) ** (-(df + 1) / 2)
    t_moment = float(mp.quad(lambda x: x**r * density(x), [-mp.inf, 0, mp.inf])) * ((df - 2) / df) ** (r / 2)
    assert law_moment("student_t", r) == pytest.approx(t_moment, rel=1e-12, abs=1e-12)


def test_heavy_tail_moments_diverge_past_the_tail_index():
    law = entry_law("student_t", df=5)
    assert math.isinf(law_moment(law, 6)) and math.isfinite(law_moment(law, 4))
    assert score_tail_index(law, 0.0) == 5 and score_tail_index(law, 0.3) == 2.5
    assert math.isinf(score_cumulants(4, 0.3, entries=law)[2])


@pytest.mark.parametrize("d_k", [1, 3, 64])
@pytest.mark.parametrize("rho", [0.0, 0.4, -0.8, 1.0])
@pytest.mark.parametrize("scale", ["sqrt", "mup", "none"])
def test_gaussian_moments_equal_the_exact_laws(d_k, rho, scale):
    mean, var = scaled_score_moments(d_k, rho, scale=scale)
    law = score_distribution(d_k, rho, scale=scale)
    assert mean == pytest.approx(law.mean(), abs=1e-12)
    assert var == pytest.approx(law.var(), rel=1e-12)
    k = score_cumulants(d_k, rho, scale=scale)
    _, _, skew, kurt = law.stats(moments="mvsk")
    assert k[2] / k[1] ** 1.5 == pytest.approx(skew, abs=1e-12)
    assert k[3] / k[1] ** 2 == pytest.approx(kurt, abs=1e-12)


@pytest.mark.parametrize("rho", [0.0, 0.3, -0.7])
def test_rademacher_moments_by_exhaustive_enumeration(rho):
    """Every sign pattern of q and z at d_k = 2, weighted equally: the exact law."""
    s = math.sqrt(1 - rho * rho)
    scores = []
    for signs in itertools.product((-1.0, 1.0), repeat=4):
        q, z = np.array(signs[:2]), np.array(signs[2:])
        scores.append(q @ (rho * q + s * z))
    scores = np.array(scores)
    mean, var = scaled_score_moments(2, rho, entries="rademacher", scale="none")
    assert mean == pytest.approx(scores.mean(), abs=1e-12)
    assert var == pytest.approx(scores.var(), abs=1e-12)


@pytest.mark.parametrize("law", ["uniform", "student_t", "gaussian"])
def test_product_variance_by_numerical_integration(law):
    """Var(q_m k_m) at rho = 0.6 from quadrature over the entry density.

    E[(rho x^2 + s x y)^2] = rho^2 E[x^4] + s^2 E[x^2] E[y^2] (the cross term has odd y), with
    each moment integrated numerically from the density, not taken from ``law_moment``.
    """
    rho, s = 0.6, 0.8
    pdf = {
        "uniform": sps.uniform(-math.sqrt(3), 2 * math.sqrt(3)).pdf,
        "student_t": sps.t(10, scale=math.sqrt(0.8)).pdf,
        "gaussian": sps.norm.pdf,
    }[law]

    def moment(r):
        return integrate.quad(lambda x: x**r * pdf(x), -np.inf, np.inf, limit=400, epsabs=1e-13)[0]

    e_p2 = rho**2 * moment(4) + s**2 * moment(2) ** 2
    _, var = scaled_score_moments(1, rho, entries=law, scale="none")
    assert var == pytest.approx(e_p2 - rho**2, rel=1e-8)


def test_scales_relate_as_stated():
    for law in LAWS:
        m_raw, v_raw = scaled_score_moments(256, 0.3, sigma_q=1.5, sigma_k=0.8, entries=law, scale="none")
        m_s, v_s = scaled_score_moments(256, 0.3, sigma_q=1.5, sigma_k=0.8, entries=law, scale="sqrt")
        m_p, v_p = scaled_score_moments(256, 0.3, sigma_q=1.5, sigma_k=0.8, entries=law, scale="mup")
        assert m_s == pytest.approx(m_raw / 16) and v_s == pytest.approx(v_raw / 256)
        assert m_p == pytest.approx(0.3 * 1.5 * 0.8) and v_p == pytest.approx(v_raw / 256**2)
    assert scaled_score_moments(100, 0.0, sigma_q=1.5, sigma_k=0.8, scale="none") == pytest.approx((0.0, 100 * 1.44))
    assert score_scale(16, "sqrt") == 0.25 and score_scale(16, "mup") == 1 / 16 and score_scale(16, "none") == 1


# ------------------------------------------------------------------ exact law

mp.mp.dps = 30


def reference_cdf(d_k, rho, x):
    """F(x) = E[P(s1 X1 <= x + s2 X2)] by mpmath quadrature at 30 digits."""
    c = 1 / mp.sqrt(d_k)
    t1, t2 = c * (1 + rho), c * (1 - rho)
    lam = mp.mpf(d_k) / 2
    x = mp.mpf(x)

    def f(g):
        return mp.exp((lam - 1) * mp.log(g) - g - mp.loggamma(lam)) * mp.gammainc(lam, 0, max((x + t2 * g) / t1, 0), regularized=True)

    lo = max(0, -x / t2)
    return float(mp.quad(f, [lo, lo + lam / 4, lo + lam, lo + 4 * lam + 10, mp.inf]))


@pytest.mark.parametrize("d_k,rho", [(1, 0.0), (1, 0.6), (3, -0.9), (4, 0.6), (16, 0.95), (256, 0.3)])
def test_cdf_matches_high_precision_reference(d_k, rho):
    law = score_distribution(d_k, rho)
    sd = law.std()
    for z in (-4, -1.5, -0.2, 0.05, 1.0, 3.5):
        x = law.mean() + z * sd
        assert law.cdf(x) == pytest.approx(reference_cdf(d_k, rho, x), abs=5e-7)


def test_product_normal_density_at_d1():
    law = score_distribution(1, 0.0, scale="none")
    x = np.array([-3.0, -0.5, 0.01, 0.7, 4.0])
    np.testing.assert_allclose(law.pdf(x), special.k0(np.abs(x)) / np.pi, rtol=1e-12)


@pytest.mark.parametrize("d_k,rho", [(2, 0.3), (5, -0.5), (64, 0.6)])
def test_pdf_is_the_derivative_of_the_cdf(d_k, rho):
    law = score_distribution(d_k, rho)
    x = law.mean() + law.std() * np.array([-2.0, -0.3, 0.4, 2.5])
    h = 1e-5 * law.std()
    np.testing.assert_allclose((law.cdf(x + h) - law.cdf(x - h)) / (2 * h), law.pdf(x), rtol=1e-6)


def test_cdf_plus_sf_is_one_and_ppf_inverts():
    law = score_distribution(8, 0.6)
    x = np.linspace(-3, 6, 13)
    np.testing.assert_allclose(law.cdf(x) + law.sf(x), 1.0, atol=1e-14)
    q = np.array([1e-6, 0.1, 0.5, 0.9, 1 - 1e-6])
    np.testing.assert_allclose(law.cdf(law.ppf(q)), q, rtol=1e-8)


def test_perfect_correlation_is_a_scaled_chi_square():
    law = score_distribution(5, 1.0, scale="none")
    x = np.array([0.5, 3.0, 9.0])
    np.testing.assert_allclose(law.cdf(x), sps.chi2(5).cdf(x), rtol=1e-12)
    assert law.cdf(-1.0) == 0.0 and law.support() == (0.0, np.inf)
    anti = score_distribution(5, -1.0, scale="none")
    np.testing.assert_allclose(anti.cdf(-x), sps.chi2(5).sf(x), rtol=1e-12)


def test_exact_sampler_draws_the_law(rng):
    law = diff_chi2(df=3, s1=0.4, s2=0.1)
    x = law.rvs(size=20_000, random_state=rng)
    # KS at alpha = 1e-4 (false-fail 1e-4); detects a sup-distance of about 0.02 at n = 20000.
    assert sps.kstest(x, law.cdf).pvalue > 1e-4
