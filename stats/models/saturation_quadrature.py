r"""Exact saturation statistics: the softmax of T i.i.d. Gaussian scores, by quadrature.

For scores :math:`X_1..X_T` i.i.d. :math:`N(0, \sigma^2)` with weights
:math:`a_j = e^{X_j}/Z`, :math:`Z = \sum_j e^{X_j}`, the identities
:math:`1/Z = \int e^{-m} e^{-e^{-m}Z}\,dm` and :math:`1/Z^2 = \int e^{-2m} e^{-e^{-m}Z}\,dm`
(substitute :math:`t = e^{-m}` in :math:`\int_0^\infty e^{-tZ}dt` and
:math:`\int_0^\infty t e^{-tZ}dt`) factor the expectations over the independent scores.
With the kernels :math:`K_k(y) = e^{ky} e^{-e^y}` and

.. math::

    \psi_k(m) = E\,K_k(X - m), \qquad \phi(m) = \psi_0(m), \qquad
    G(m, x) = E[K_0(X - m);\, X < x], \qquad H(m, x) = \phi(m) - G(m, x),

one gets (:math:`m` plays the role of :math:`\log Z`)

.. math::

    1 = T\!\int\!\psi_1\phi^{T-1}dm, \qquad
    E[1 - \lVert a\rVert^2] = T\!\int (\psi_1 - \psi_2)\,\phi^{T-1}\,dm,

.. math::

    E[1 - \max_j a_j] = T\!\int dm\; E_{X_1}\!\Bigl[K_1(X_1 - m)\bigl(\phi(m)^{T-1} - G(m, X_1)^{T-1}\bigr)\Bigr],

a 2-dimensional and a 3-dimensional integral over one score's law (the cumulative
integral G is the third dimension).  The first identity is evaluated too: its distance
from 1 (``unit_mass_error``) is a by-product accuracy check.

For a head of width :math:`d_k` the scale is random, :math:`\sigma = c\lVert q\rVert`
with :math:`\lVert q\rVert \sim \chi(d_k)` (unit-variance entries; c = 1, 1/sqrt(d_k) or
1/d_k), and one more integral, over the chi law on its normal-score scale
(Gauss-Hermite), gives the finite-width value.

Numerics.  Two formulations of the inner integrals, chosen by :math:`\sigma`:

* :math:`\sigma \ge 1.5`: integrate over the kernel variable :math:`y = x - m`, where
  every kernel lives on a fixed window (:math:`K_1, K_2 \le e^{y}` on the left,
  :math:`K_0 \le e^{-e^{y}}` on the right), using
  :math:`\phi(m) = \Phi(m/\sigma) - \int_{y<0}(1 - K_0)N + \int_{y>0}K_0 N`;
* :math:`\sigma < 1.5`: integrate over the standardized score :math:`z = x/\sigma` on
  [-10, 10], where the kernels are smooth on the scale :math:`1/\sigma`.

Both use composite Chebyshev-Lobatto panels whose cumulative integrals are spectral
integration matrices (:math:`H` is computed directly from the right, never as a
difference), and composite Gauss-Legendre panels in m.  Accuracy, measured in
``tests/test_saturation.py``: doubling every node count changes no value by more than
2e-10; the two formulations agree to about 1e-12 where both apply; for
T = 2, where :math:`\max a = 1/(1 + e^{-|X_1 - X_2|})` is a one-dimensional integral,
the values agree with 30-digit mpmath quadrature to about 1.5e-10; and a Monte Carlo run
with MCSE below 2e-5 agrees within its error.  The stated accuracy, 1e-9, is the
largest of these with margin.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.polynomial import chebyshev as C
from numpy.polynomial import hermite_e as He
from scipy import special

from .._validation import MAX_KEYS, as_real_array, check_d_k, check_integer
from ..cache import persistent
from ..training.scalings import SCORE_SCALINGS, scaling_named
from .scores import score_scale

__all__ = [
    "EXACT_ACCURACY",
    "saturation_exact",
    "saturation_given_scale",
    "saturation_limit",
]

EXACT_ACCURACY = 1e-9  # stated absolute accuracy of every value (see the module docstring)
_Y_LO, _Y_HI = -46.0, 4.6  # kernel window: K_1, K_2 <= e^y < 1e-20 left of it, K_0 < 1e-43 right of it
_Z_MAX = 10.0  # the standard normal has mass 1.5e-23 beyond +-10
_SWITCH = 1.5  # sigma at which the kernel-variable formulation takes over
_BATCH = 6  # scales evaluated together on one grid


# ------------------------------------------------------------------ quadrature building blocks


@functools.lru_cache(maxsize=None)
def _lobatto(n):
    """Chebyshev-Lobatto nodes on [-1, 1] (ascending), Clenshaw-Curtis weights, and the
    left and right cumulative integration matrices of the degree n-1 interpolant."""
    t = -np.cos(np.pi * np.arange(n) / (n - 1))
    vinv = np.linalg.inv(C.chebvander(t, n - 1))
    eye = np.eye(n)
    left = np.stack([C.chebint(eye[j], lbnd=-1) for j in range(n)], axis=1)
    right = np.stack([C.chebint(eye[j], lbnd=1) for j in range(n)], axis=1)
    V1 = C.chebvander(t, n)
    L = V1 @ left @ vinv
    R = -(V1 @ right @ vinv)
    return t, L[-1].copy(), L, R


@functools.lru_cache(maxsize=None)
def _legendre(n):
    return np.polynomial.legendre.leggauss(n)


def _cheb_grid(breaks, n):
    """Composite Chebyshev grid on ``breaks``: nodes, weights, left/right cumulative matrices."""
    t, w, L, R = _lobatto(n)
    breaks = np.asarray(breaks, dtype=np.float64)
    P = len(breaks) - 1
    N = P * n
    x = np.empty(N)
    W = np.empty(N)
    Lg = np.zeros((N, N))
    Rg = np.zeros((N, N))
    half = 0.5 * np.diff(breaks)
    for p in range(P):
        sl = slice(p * n, (p + 1) * n)
        x[sl] = 0.5 * (breaks[p] + breaks[p + 1]) + half[p] * t
        W[sl] = half[p] * w
    for p in range(P):
        sl = slice(p * n, (p + 1) * n)
        Lg[sl, sl] = half[p] * L
        Rg[sl, sl] = half[p] * R
        for q in range(p):
            Lg[sl, q * n : (q + 1) * n] = W[q * n : (q + 1) * n]
        for q in range(p + 1, P):
            Rg[sl, q * n : (q + 1) * n] = W[q * n : (q + 1) * n]
    return x, W, Lg, Rg


def _gl_grid(breaks, n):
    """Composite Gauss-Legendre nodes and weights on ``breaks``."""
    u, w = _legendre(n)
    breaks = np.asarray(breaks, dtype=np.float64)
    mid = 0.5 * (breaks[1:] + breaks[:-1])
    half = 0.5 * np.diff(breaks)
    return (mid[:, None] + half[:, None] * u).ravel(), (half[:, None] * w).ravel()


def _steps(a, b, width):
    """Breakpoints from a to b with panels no wider than ``width``."""
    k = max(1, math.ceil((b - a) / width))
    return np.linspace(a, b, k + 1)


def _growing(a, b, first, factor=1.4):
    """Breakpoints from a to b, the first panel ``first`` wide, each next ``factor`` times wider."""
    out, x, w = [a], a, first
    while x + w < b:
        x += w
        out.append(x)
        w *= factor
    out.append(b)
    return np.array(out)


# ------------------------------------------------------------------ the two formulations


def _combine(T, Wm, phi, psi1, psi12, k1_weighted, H):
    """Shared final step: unit mass, trace and 1 - max from the inner integrals.

    ``phi, psi1, psi12`` have shape (S, M); ``k1_weighted`` (S, M, N) is the outer
    integrand's weight for X_1 at each inner node; ``H`` (S, M, N) the mass above X_1.
    """
    with np.errstate(under="ignore", divide="ignore", invalid="ignore"):
        phi = np.clip(phi, 0.0, 1.0)
        powT = np.where(phi > 0, np.exp((T - 1) * np.log(np.where(phi > 0, phi, 1.0))), 0.0)
        ratio = np.where(phi[..., None] > 0, np.clip(H / phi[..., None], 0.0, 1.0), 1.0)
        # phi^(T-1) - G^(T-1) = -phi^(T-1) expm1((T-1) log1p(-H/phi)), without cancellation.
        drop = -np.expm1((T - 1) * np.log1p(-np.minimum(ratio, 1.0 - 1e-300)))
        drop = np.where(ratio >= 1.0, 1.0, drop)
    inner_max = np.sum(k1_weighted * drop, axis=-1)
    unit = T * np.sum(Wm * powT * psi1, axis=-1)
    trace = T * np.sum(Wm * powT * psi12, axis=-1)
    one_minus_max = T * np.sum(Wm * powT * inner_max, axis=-1)
    return unit, trace, one_minus_max


def _m_width(T):
    # phi(m)^(T-1) steepens like the maximum of T normals, whose spread is ~ 1/sqrt(2 ln T).
    return min(1.0, 2.0 / math.sqrt(2.0 * math.log(max(T, 2))))


@functools.lru_cache(maxsize=64)
def _y_grids(sig_lo, sig_hi, T, n_panel, n_m):
    neg = np.concatenate(
        [_steps(_Y_LO, -3.0, min(1.2 * sig_lo, 6.0))[:-1], np.array([-3.0, -2.0, -1.2, -0.6, 0.0])]
    )
    pos = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 2.4, 2.8, 3.2, 3.6, 4.0, _Y_HI])
    yn = _cheb_grid(neg, n_panel)
    yp = _cheb_grid(pos, n_panel)
    # m is a log-normaliser, never below the largest score; the largest of T standard
    # normals lies below -x_T with probability Phi(-x_T)^T = 1e-17.
    x_T = -special.ndtri(1e-17 ** (1.0 / T))  # Phi^{-1}, as scipy.stats.norm.ppf computes it
    m_lo, m_hi = -x_T * sig_hi - 6.0, max(9.0 * sig_hi, 46.0 + 0.5 * sig_hi**2)
    m, Wm = _gl_grid(_steps(m_lo, m_hi, 1.2 * sig_lo * _m_width(T)), n_m)
    return yn, yp, m, Wm


def _by_kernel_variable(sig, T, n_panel, n_m):
    """sigma >= 1.5: inner integrals over y = x - m on the fixed kernel window."""
    (yn, Wn, _, Rn), (yp, Wp, _, Rp), m, Wm = _y_grids(float(sig.min()), float(sig.max()), T, n_panel, n_m)
    s = sig[:, None, None]
    with np.errstate(under="ignore"):
        Nn = np.exp(-0.5 * ((m[None, :, None] + yn) / s) ** 2) / (s * math.sqrt(2 * math.pi))
        Np = np.exp(-0.5 * ((m[None, :, None] + yp) / s) ** 2) / (s * math.sqrt(2 * math.pi))
        K0n, K0p = np.exp(-np.exp(yn)), np.exp(-np.exp(yp))
    K1n, K1p = np.exp(yn) * K0n, np.exp(yp) * K0p
    K2n, K2p = np.exp(yn) * K1n, np.exp(yp) * K1p
    # 1 - K_0 = -expm1(-e^y), accurate where e^y is tiny.
    one_minus_K0n = -np.expm1(-np.exp(yn))
    phi = special.ndtr(m[None, :] / sig[:, None]) - (Nn * one_minus_K0n) @ Wn + (Np * K0p) @ Wp
    psi1 = (Nn * K1n) @ Wn + (Np * K1p) @ Wp
    psi12 = (Nn * (K1n - K2n)) @ Wn + (Np * (K1p - K2p)) @ Wp
    # H(m, y1) = int_{y1}^inf K_0 N dy, from the right on each side.
    fn, fp = Nn * K0n, Np * K0p
    Hp = fp @ Rp.T
    Hn = fn @ Rn.T + (fp @ Wp)[..., None]
    k1w = np.concatenate([Wn * K1n * Nn, Wp * K1p * Np], axis=-1)
    H = np.concatenate([Hn, Hp], axis=-1)
    return _combine(T, Wm, phi, psi1, psi12, k1w, H)


@functools.lru_cache(maxsize=64)
def _z_grids(sig_hi, T, n_panel, n_m):
    z = _cheb_grid(_steps(-_Z_MAX, _Z_MAX, 1.2 * min(1.0, 1.0 / sig_hi) * _m_width(T)), n_panel)
    lt = math.log(T)
    core_lo, core_hi = lt - 8.0 - 10.0 * sig_hi, lt + 8.0 + 10.0 * sig_hi
    right = _growing(core_hi, lt + 46.0 + 10.0 * sig_hi, 1.2)
    m, Wm = _gl_grid(np.concatenate([_steps(core_lo, core_hi, 1.2 * _m_width(T))[:-1], right]), n_m)
    return z, m, Wm


def _by_standard_score(sig, T, n_panel, n_m):
    """sigma < 1.5: inner integrals over the standardized score z = x / sigma."""
    (z, Wz, _, Rz), m, Wm = _z_grids(float(sig.max()), T, n_panel, n_m)
    y = sig[:, None, None] * z - m[None, :, None]  # the kernel argument x - m
    nz = np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
    with np.errstate(under="ignore", over="ignore"):
        ey = np.exp(y)
        K0 = np.exp(-ey)
    K1 = ey * K0
    K2 = ey * K1
    phi = (nz * K0) @ Wz
    psi1 = (nz * K1) @ Wz
    psi12 = (nz * (K1 - K2)) @ Wz
    H = (nz * K0) @ Rz.T
    return _combine(T, Wm, phi, psi1, psi12, Wz * nz * K1, H)


# Chebyshev nodes per panel of the inner variable, Gauss-Legendre nodes per panel in m:
# (12, 10) is within 1.5e-10 of the converged (48, 36) everywhere tested, at half the cost of (16, 12).
_NODES = (12, 10)


def _given_scales(sig, T, refine):
    """(unit, trace, one_minus_max) for each scale in the 1-D array ``sig``."""
    n_panel, n_m = _NODES[0] * refine, _NODES[1] * refine
    out = np.empty((3, sig.size))
    order = np.argsort(sig)
    i = 0
    while i < sig.size:
        lo = sig[order[i]]
        j = i + 1
        while j < sig.size and j - i < _BATCH and sig[order[j]] <= 1.5 * lo and (sig[order[j]] < _SWITCH) == (lo < _SWITCH):
            j += 1
        idx = order[i:j]
        f = _by_standard_score if lo < _SWITCH else _by_kernel_variable
        out[:, idx] = np.array(f(sig[idx], T, n_panel, n_m))
        i = j
    return out


def saturation_given_scale(sigma, n_keys=32, *, refine=1):
    r"""Exact ``E[max a]``, ``E[1 - ||a||^2]`` for the softmax of ``n_keys`` i.i.d. :math:`N(0, \sigma^2)` scores.

    ``sigma`` is a positive number or array.  Returns a dict of arrays (floats for a
    scalar ``sigma``): ``max_weight``, ``trace``, ``one_minus_max`` (computed directly,
    accurate in relative terms as ``max_weight`` nears 1) and ``unit_mass_error``
    (``|T int psi_1 phi^(T-1) dm - 1|``, a by-product accuracy check).  ``refine``
    multiplies every node count (accuracy studies).
    """
    T = check_integer(n_keys, "n_keys", minimum=2, maximum=MAX_KEYS, what="an integer >= 2")
    refine = check_integer(refine, "refine", maximum=64)
    arr = as_real_array(sigma, "sigma", dtype=np.float64)
    if not np.all(np.isfinite(arr) & (arr > 0) & (arr <= 1e6)):
        raise ValueError("sigma must be positive and finite, at most 1e6 (beyond it every row is one-hot to 1e-300)")
    if arr.size == 0 or not np.all(np.isfinite(arr)) or not np.all(arr > 0):
        raise ValueError(f"sigma must be positive and finite; got {sigma!r}")
    flat = arr.ravel()
    unit, trace, omm = _given_scales(flat, T, refine)
    shape = arr.shape
    res = dict(
        max_weight=(1.0 - omm).reshape(shape),
        trace=trace.reshape(shape),
        one_minus_max=omm.reshape(shape),
        unit_mass_error=np.abs(unit - 1.0).reshape(shape),
    )
    if arr.ndim == 0:
        res = {k: float(v) for k, v in res.items()}
    return res


@functools.lru_cache(maxsize=None)
def _chi_nodes(d_k, n):
    """Nodes r_i and weights of E[f(R)], R ~ chi(d_k), on the normal-score scale (Gauss-Hermite)."""
    from scipy import stats as sps  # here, not at import (~0.5 s of every start-up)

    z, w = He.hermegauss(n)
    w = w / math.sqrt(2 * math.pi)
    law = sps.chi(d_k)
    r = np.where(z <= 0, law.ppf(special.ndtr(np.minimum(z, 0))), law.isf(special.ndtr(-np.maximum(z, 0))))
    keep = w > 1e-300
    return r[keep], w[keep]


def _chi_node_count(d_k):
    # Enough Gauss-Hermite nodes for 1e-10: the chi law is skewed at small d_k and nearly
    # normal beyond (doubling the count changes no value by more than 2e-10 at d_k = 1,
    # 1e-11 at d_k = 4 and 1e-14 from d_k = 16 on, where the law is narrow enough for 6
    # nodes from d_k = 1024 on (within 1.3e-11 of 32); tests/test_saturation.py).
    return 64 if d_k <= 2 else 32 if d_k <= 8 else 16 if d_k < 1024 else 6


@persistent("saturation-exact")
def _exact_cached(d_k, T, scaling, refine):
    c = score_scale(d_k, scaling)
    r, w = _chi_nodes(d_k, _chi_node_count(d_k) * refine)
    unit, trace, omm = _given_scales(c * r, T, refine)
    return (
        float(1.0 - w @ omm),
        float(w @ trace),
        float(w @ omm),
        float(np.max(np.abs(unit - 1.0))),
    )


def saturation_exact(d_k, n_keys=32, *, scaling="sqrt", refine=1):
    r"""Exact mean largest weight and mean trace :math:`1 - \lVert a\rVert^2` of a fresh head.

    Gaussian queries and keys with unit-variance entries, ``n_keys`` keys, scores
    :math:`c\,q\cdot k_j` with c from ``scaling`` (``"none"``, ``"sqrt"``: 1/sqrt(d_k),
    ``"mup"``: 1/d_k).  Given q the scores are i.i.d. :math:`N(0, c^2\lVert q\rVert^2)`;
    the value is :func:`saturation_given_scale` averaged over :math:`\lVert q\rVert \sim \chi(d_k)`.
    Returns a pandas Series: ``max_weight``, ``trace``, ``one_minus_max``,
    ``unit_mass_error``, ``accuracy`` (the stated absolute accuracy) and the arguments.
    """
    import pandas as pd

    d_k = check_d_k(d_k)
    T = check_integer(n_keys, "n_keys", minimum=2, maximum=MAX_KEYS, what="an integer >= 2")
    scaling_named(scaling, among=SCORE_SCALINGS)
    refine = check_integer(refine, "refine")
    mw, tr, omm, unit = _exact_cached(d_k, T, scaling, refine)
    return pd.Series(
        dict(
            max_weight=mw,
            trace=tr,
            one_minus_max=omm,
            unit_mass_error=unit,
            accuracy=EXACT_ACCURACY,
            d_k=d_k,
            n_keys=T,
            scaling=scaling,
        ),
        name="saturation_exact",
    )


def saturation_limit(n_keys=32):
    """The scaled head's limit as d_k -> inf: i.i.d. N(0, 1) scores (:func:`saturation_given_scale` at 1)."""
    return saturation_given_scale(1.0, n_keys)
