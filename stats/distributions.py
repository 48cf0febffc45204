r"""The exact law of the attention score for Gaussian queries and keys.

With :math:`(q_m, k_m)` bivariate normal with correlation :math:`\rho`, write
:math:`q_m k_m = \tfrac14\bigl((q_m + k_m)^2 - (q_m - k_m)^2\bigr)`.  The two sums are
independent normals with variances :math:`2(1 \pm \rho)`, so

.. math::

    c\,q^\top k \;\overset{d}{=}\; s_1 \chi^2_{d_k} - s_2 \chi'^2_{d_k},\qquad
    s_{1,2} = c\,\sigma_q\sigma_k\,\frac{1 \pm \rho}{2},

a difference of two independent scaled chi-square variables (a variance-gamma law; at
:math:`d_k = 1,\ \rho = 0` it is the product-normal density :math:`K_0(|x|)/\pi`).

:data:`diff_chi2` is that family as a ``scipy.stats`` distribution.  Its CDF conditions on
the chi-square with the larger scale and integrates the other's regularized incomplete
gamma function with Gauss--Legendre quadrature on the normal-score scale (see
:func:`_nodes_above`).  Against 30-digit mpmath quadrature the CDF is within 5e-7
everywhere tested and within about 1e-12 away from x = 0 at d_k = 1 (where the density
has a logarithmic singularity).  Each evaluation costs about 50 microseconds.
"""

from __future__ import annotations

import numpy as np
from scipy import special
from scipy.stats import gamma, norm, rv_continuous

from ._validation import check_d_k, check_positive, check_rho
from .closed_forms import score_scale

__all__ = ["diff_chi2", "score_distribution"]

_QUAD_ORDER = 64
_u, _w = np.polynomial.legendre.leggauss(_QUAD_ORDER)
_Z_MAX = 9.0  # normal scores beyond +-9 carry mass < 1e-18


def _inc(lam, y, upper):
    """Regularized incomplete gamma P(lam, y), or Q(lam, y) when ``upper`` (erf forms at lam = 1/2, d_k = 1)."""
    if lam == 0.5:
        r = np.sqrt(y)
        return special.erfc(r) if upper else special.erf(r)
    return special.gammaincc(lam, y) if upper else special.gammainc(lam, y)


def _nodes_above(lam, x, tb):
    """Quadrature nodes and weights for E[h(G); tb*G > x], G ~ Gamma(lam).

    The integral runs over the normal-score scale z = Phi^{-1}(F_G(g)), on which the Gamma
    quantile is a smooth function of z for every lam (on the plain quantile scale it
    behaves like u^{1/lam} near 0, which spoils the quadrature).  The lower limit is the
    score of g* = x/tb (or -Z_MAX where x <= 0); Gauss-Legendre nodes, squared towards
    the lower limit, carry the weight phi(z) dz.  Returns ``(g, w)``, shape ``(len(x), order)``.
    """
    x = np.asarray(x, dtype=np.float64)
    z_lo = np.full(x.shape, -_Z_MAX)
    pos = x > 0
    lower = _inc(lam, x[pos] / tb, False)  # u* = P(G <= g*), its score from the nearer tail
    z_lo[pos] = np.maximum(-_Z_MAX, np.where(lower < 0.5, norm.ppf(lower), norm.isf(_inc(lam, x[pos] / tb, True))))
    z_hi = np.maximum(_Z_MAX, z_lo + 6.0)
    # z = z_lo + L t^2 clusters the nodes at the cut, where the integrand starts like
    # (z - z_lo)^lam (a square root for d_k = 1) and, for rho near +-1, falls off steeply.
    L = (z_hi - z_lo)[:, None]
    t = 0.5 * (_u + 1.0)
    z = z_lo[:, None] + L * t * t
    w = L * t * _w * norm.pdf(z)
    g = np.empty_like(z)
    left = z < 0  # invert from the nearer tail to keep precision in both
    g[left] = special.gammaincinv(lam, norm.cdf(z[left]))
    g[~left] = _upper_quantile(lam, norm.sf(z[~left]))
    return g, w


def _upper_quantile(lam, p):
    """G with P(Gamma(lam) > G) = p; closed forms for d_k = 1 and 2 (gammainccinv is slow)."""
    if lam == 0.5:
        return special.erfcinv(p) ** 2
    if lam == 1.0:
        return -np.log(p)
    return special.gammainccinv(lam, p)


def _big_minus_small(x, lam, tb, ts, what):
    """cdf, sf or pdf of Y = tb*G_b - ts*G_s (G ~ Gamma(lam), independent) with tb >= ts > 0.

    Conditioning on the big term: P(Y > x) = E[P(ts G_s < tb G_b - x)].  The integrand is
    smooth on tb G_b > x and, because tb >= ts, decays at least as fast as the weight, so
    Gauss-Legendre on the quantile scale converges geometrically.
    """
    g, w = _nodes_above(lam, x, tb)
    y = np.maximum(tb * g - x[:, None], 0.0) / ts
    if what == "pdf":
        return np.sum(gamma.pdf(y, lam) / ts * w, axis=1)
    below = np.sum(_inc(lam, y, True) * w, axis=1)  # P(Y <= x) restricted to tb G_b > x
    if what == "sf":
        return np.clip(np.sum(_inc(lam, y, False) * w, axis=1), 0.0, 1.0)
    mass_below = np.where(x > 0, _inc(lam, np.maximum(x, 0) / tb, False), 0.0)  # tb G_b <= x
    return np.clip(mass_below + below, 0.0, 1.0)


def _evaluate(x, df, s1, s2, what):
    """cdf, sf or pdf of X = s1*X1 - s2*X2, X_i ~ chi2(df), for scalar parameters."""
    lam = 0.5 * df
    t1, t2 = 2.0 * s1, 2.0 * s2  # Gamma(lam) scales
    x = np.asarray(x, dtype=np.float64)
    flip = {"cdf": "sf", "sf": "cdf", "pdf": "pdf"}
    if t2 == 0.0 or t1 == 0.0:  # a single scaled chi-square, possibly negated
        t, sign = (t1, 1.0) if t2 == 0.0 else (t2, -1.0)
        y = sign * x
        kind = what if sign > 0 else flip[what]
        if kind == "pdf":
            return gamma.pdf(y, lam, scale=t)
        return np.where(y > 0, _inc(lam, np.maximum(y, 0) / t, kind == "sf"), 0.0 if kind == "cdf" else 1.0)
    if what == "pdf" and lam == 0.5:
        # d_k = 1: closed-form K_0 density (the integrand is singular at x = 0 here), with
        # alpha = (r1 + r2)/2, beta = (r2 - r1)/2, sqrt(alpha^2 - beta^2) = sqrt(r1 r2), r_i = 1/t_i.
        r1, r2 = 1.0 / t1, 1.0 / t2
        a, b = 0.5 * (r1 + r2), 0.5 * (r2 - r1)
        with np.errstate(divide="ignore"):
            return np.sqrt(r1 * r2) * special.k0e(a * np.abs(x)) * np.exp(b * x - a * np.abs(x)) / np.pi
    if t1 >= t2:
        return _big_minus_small(x, lam, t1, t2, what)
    # -X = t2 G2 - t1 G1 has the big term first: P(X <= x) = P(-X >= -x).
    return _big_minus_small(-x, lam, t2, t1, flip[what])


def _per_parameter(fn, x, df, s1, s2, what):
    """Evaluate ``fn`` for each distinct (df, s1, s2) that scipy broadcast against x."""
    x, df, s1, s2 = np.broadcast_arrays(x, df, s1, s2)
    params = np.stack([df.ravel(), s1.ravel(), s2.ravel()], axis=1)
    uniq, inv = np.unique(params, axis=0, return_inverse=True)
    flat = x.ravel()
    out = np.empty(flat.shape)
    for k, (d, a, b) in enumerate(uniq):
        sel = inv.ravel() == k
        out[sel] = fn(flat[sel], d, a, b, what)
    return out.reshape(x.shape)


class diff_chi2_gen(rv_continuous):
    r"""Difference of scaled chi-squares: :math:`X = s_1 \chi^2_{df} - s_2 \chi'^2_{df}`.

    Shapes ``df > 0``, ``s1 >= 0``, ``s2 >= 0`` (not both zero).  Cumulants:
    :math:`\kappa_n = 2^{n-1}(n-1)!\,df\,(s_1^n + (-s_2)^n)`.
    """

    def _argcheck(self, df, s1, s2):
        return (df > 0) & (s1 >= 0) & (s2 >= 0) & (s1 + s2 > 0)

    def _pdf(self, x, df, s1, s2):
        return _per_parameter(_evaluate, x, df, s1, s2, "pdf")

    def _cdf(self, x, df, s1, s2):
        return _per_parameter(_evaluate, x, df, s1, s2, "cdf")

    def _sf(self, x, df, s1, s2):
        return _per_parameter(_evaluate, x, df, s1, s2, "sf")

    def _get_support(self, df, s1, s2):
        return np.where(s2 == 0, 0.0, -np.inf), np.where(s1 == 0, 0.0, np.inf)

    def _rvs(self, df, s1, s2, size=None, random_state=None):
        return s1 * random_state.chisquare(df, size) - s2 * random_state.chisquare(df, size)

    def _stats(self, df, s1, s2):
        k2 = 2 * df * (s1**2 + s2**2)
        k3 = 8 * df * (s1**3 - s2**3)
        k4 = 48 * df * (s1**4 + s2**4)
        return df * (s1 - s2), k2, k3 / k2**1.5, k4 / k2**2


diff_chi2 = diff_chi2_gen(name="diff_chi2", shapes="df, s1, s2")


def score_distribution(d_k, rho=0.0, *, sigma_q=1.0, sigma_k=1.0, scale="sqrt"):
    """Exact law of the score ``c q.k`` for Gaussian entries, as a frozen scipy distribution.

    ``c q.k ~ s1 chi2(d_k) - s2 chi2(d_k)`` with ``s1, s2 = c sigma_q sigma_k (1 +- rho)/2``.
    """
    d_k = check_d_k(d_k)
    rho = check_rho(rho)
    unit = score_scale(d_k, scale) * check_positive(sigma_q, "sigma_q") * check_positive(sigma_k, "sigma_k")
    return diff_chi2(df=d_k, s1=unit * (1 + rho) / 2, s2=unit * (1 - rho) / 2)

