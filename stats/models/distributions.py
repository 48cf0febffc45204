r"""The exact law of the attention score for Gaussian queries and keys.

With :math:`(q_m, k_m)` bivariate normal with correlation :math:`\rho`, write
:math:`q_m k_m = \tfrac14\bigl((q_m + k_m)^2 - (q_m - k_m)^2\bigr)`.  The two sums are
independent normals with variances :math:`2(1 \pm \rho)`, so

.. math::

    c\,q^\top k \;\overset{d}{=}\; s_1 \chi^2_{d_k} - s_2 \chi'^2_{d_k},\qquad
    s_{1,2} = c\,\sigma_q\sigma_k\,\frac{1 \pm \rho}{2},

a difference of two independent scaled chi-square variables (a variance-gamma law; at
:math:`d_k = 1,\ \rho = 0` it is the product-normal density :math:`K_0(|x|)/\pi`).

:data:`diff_chi2` is that family as a ``scipy.stats`` distribution, built on first use
(importing scipy.stats takes about half a second, which a verify run's workers should not
wait for before they simulate; see :func:`__getattr__`).  Its CDF conditions on
the chi-square with the larger scale and integrates the other's regularized incomplete
gamma function with Gauss--Legendre quadrature on the normal-score scale (see
:func:`_nodes_above`).  Against 30-digit mpmath quadrature the CDF is within 5e-7
everywhere tested and within about 1e-12 away from x = 0 at d_k = 1 (where the density
has a logarithmic singularity).  Each evaluation costs about 50 microseconds.
"""

from __future__ import annotations

import threading

import numpy as np
from scipy import special

from .._validation import check_d_k, check_positive, check_rho
from .scores import score_scale

__all__ = ["diff_chi2", "score_distribution"]

_QUAD_ORDER = 128  # 64 nodes left errors up to 1e-5 at d_k = 512, rho = 0.6; 128 converge to 1e-14
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
    from scipy.stats import norm

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
    from scipy.stats import gamma

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
            from scipy.stats import gamma

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


def _log_kv(nu, z):
    r"""log K_nu(z) for z > 0 without overflow.

    ``scipy.special.kve`` where it is finite; otherwise (large orders at small arguments,
    where :math:`K_\nu(z) \sim \Gamma(\nu)2^{\nu-1}z^{-\nu}` overflows) Debye's uniform
    expansion :math:`K_\nu(\nu w) \sim \sqrt{\pi/(2\nu)}\,e^{-\nu\eta}(1 + w^2)^{-1/4}
    \sum_k (-1)^k u_k(t)/\nu^k`, :math:`t = (1 + w^2)^{-1/2}`, to four terms (relative
    error about :math:`u_4/\nu^4`, below 1e-9 for the orders where it is used, nu >= 20),
    and for small orders the leading small-argument term.
    """
    z = np.asarray(z, dtype=np.float64)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        v = special.kve(nu, z)
        out = np.log(v) - z
    bad = ~np.isfinite(out) & (z > 0)
    if bad.any():
        zb = z[bad]
        if nu >= 20:
            w = zb / nu
            sq = np.sqrt(1.0 + w * w)
            t = 1.0 / sq
            eta = sq + np.log(w / (1.0 + sq))
            u1 = (3 * t - 5 * t**3) / 24
            u2 = (81 * t**2 - 462 * t**4 + 385 * t**6) / 1152
            u3 = (30375 * t**3 - 369603 * t**5 + 765765 * t**7 - 425425 * t**9) / 414720
            series = 1.0 - u1 / nu + u2 / nu**2 - u3 / nu**3
            out[bad] = 0.5 * np.log(np.pi / (2 * nu)) - nu * eta - 0.25 * np.log1p(w * w) + np.log(series)
        elif nu > 0:
            out[bad] = special.gammaln(nu) + (nu - 1) * np.log(2.0) - nu * np.log(zb)
    return out


def _vg_logpdf(x, lam, t1, t2):
    r"""Log density of t1 G1 - t2 G2 (G ~ Gamma(lam)), the variance-gamma law:
    :math:`f(x) = \frac{(r_1r_2)^\lambda}{\Gamma(\lambda)\sqrt\pi}\bigl(\tfrac{|x|}{2\alpha}\bigr)^{\lambda-1/2}
    K_{\lambda-1/2}(\alpha|x|)\,e^{\beta x}`, :math:`r_i = 1/t_i`, :math:`\alpha = (r_1 + r_2)/2`, :math:`\beta = (r_2 - r_1)/2`."""
    r1, r2 = 1.0 / t1, 1.0 / t2
    a, b = 0.5 * (r1 + r2), 0.5 * (r2 - r1)
    ax = np.abs(x)
    with np.errstate(divide="ignore"):
        return (
            lam * np.log(r1 * r2)
            - special.gammaln(lam)
            - 0.5 * np.log(np.pi)
            + (lam - 0.5) * np.log(ax / (2 * a))
            + _log_kv(abs(lam - 0.5), a * ax)
            + b * x
        )


_GL8 = np.polynomial.legendre.leggauss(8)
_SORTED_MIN = 512  # below this, point-by-point evaluation is as fast
_CUMULATIVE_TOL = 1e-9  # the cumulative CDF must meet the exact one at its last point to this


def _cdf_sorted(x, df, s1, s2):
    """CDF at sorted points: exact values at anchors (the first point and the points either side
    of 0, where the density may be singular) plus Gauss-Legendre integrals of the Bessel
    density between neighbours.  Checked against the exact CDF at the last point; returns
    None when that check fails (the caller then evaluates point by point)."""
    lam, t1, t2 = 0.5 * df, 2.0 * s1, 2.0 * s2
    out = np.empty(x.size)
    neg = x < 0
    groups = [np.flatnonzero(neg), np.flatnonzero(~neg)]
    u, w = _GL8
    for idx in groups:
        if idx.size == 0:
            continue
        xs = x[idx]
        start = xs[0] if xs[0] >= 0 else xs[0]
        anchor = _evaluate(np.array([start]), df, s1, s2, "cdf")[0]
        lo, hi = xs[:-1], xs[1:]
        mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
        nodes = mid[:, None] + half[:, None] * u
        dens = np.exp(_vg_logpdf(nodes, lam, t1, t2))
        inc = half * (dens @ w)
        out[idx] = anchor + np.concatenate([[0.0], np.cumsum(inc)])
    # The negative group ends short of 0 and the positive group starts at its own anchor,
    # so no integral ever touches the possibly singular point x = 0.
    last = _evaluate(x[-1:], df, s1, s2, "cdf")[0]
    if not np.all(np.isfinite(out)) or abs(out[-1] - last) > _CUMULATIVE_TOL:
        return None
    return np.clip(out, 0.0, 1.0)


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


def _define_diff_chi2_gen():
    from scipy.stats import rv_continuous

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
            # Many sorted points (a KS test) with one parameter set and two chi-squares: integrate
            # the density between neighbours instead of running the quadrature at every point.
            xa = np.asarray(x, dtype=np.float64)
            if (
                xa.ndim == 1
                and xa.size >= _SORTED_MIN
                and np.size(np.unique(df)) == 1
                and np.size(np.unique(s1)) == 1
                and np.size(np.unique(s2)) == 1
                and float(np.ravel(s1)[0]) > 0
                and float(np.ravel(s2)[0]) > 0
                and np.all(np.diff(xa) >= 0)
            ):
                fast = _cdf_sorted(xa, float(np.ravel(df)[0]), float(np.ravel(s1)[0]), float(np.ravel(s2)[0]))
                if fast is not None:
                    return fast
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

    # Pickled (a frozen law sent to a worker) by this module-level name, which __getattr__
    # serves.  The price: inspect.getsource finds the methods' source but not the class's.
    diff_chi2_gen.__qualname__ = "diff_chi2_gen"
    return diff_chi2_gen


_LAZY_NAMES = ("diff_chi2", "diff_chi2_gen")
_BUILT = {}  # both, once built
# Two threads' first accesses at once must build one class, not two (the second would be
# a class that neither isinstance nor pickle recognises).
_BUILD_LOCK = threading.Lock()


def _built(name):
    """``diff_chi2`` or ``diff_chi2_gen``: both are built at the first call, once."""
    with _BUILD_LOCK:
        if not _BUILT:
            gen = _define_diff_chi2_gen()
            _BUILT.update(diff_chi2_gen=gen, diff_chi2=gen(name="diff_chi2", shapes="df, s1, s2"))
        return _BUILT[name]


def __getattr__(name):
    """``diff_chi2`` and its class, built at the first access (PEP 562): subclassing
    ``rv_continuous`` needs scipy.stats, which nothing before the tests of a verify run does."""
    if name in _LAZY_NAMES:
        return _built(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *_LAZY_NAMES})


def score_distribution(d_k, rho=0.0, *, sigma_q=1.0, sigma_k=1.0, scale="sqrt"):
    """Exact law of the score ``c q.k`` for Gaussian entries, as a frozen scipy distribution.

    ``c q.k ~ s1 chi2(d_k) - s2 chi2(d_k)`` with ``s1, s2 = c sigma_q sigma_k (1 +- rho)/2``.
    """
    d_k = check_d_k(d_k)
    rho = check_rho(rho)
    unit = score_scale(d_k, scale) * check_positive(sigma_q, "sigma_q") * check_positive(sigma_k, "sigma_k")
    return _built("diff_chi2")(df=d_k, s1=unit * (1 + rho) / 2, s2=unit * (1 - rho) / 2)

