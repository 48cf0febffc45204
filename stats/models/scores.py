r"""Closed forms for the moments of attention scores (section "Why dot products grow with the
width" and "The assumption behind the argument, and when it fails").

Model: query entries :math:`q_m = \sigma_q x_m`, keys
:math:`k_m = \sigma_k(\rho x_m + \sqrt{1-\rho^2}\, y_m)` with :math:`x_m, y_m` i.i.d. from a
standardized symmetric entry law with fourth moment :math:`\mu_4` (this is the issue's
``k = rho (sigma_k/sigma_q) q + sigma_k sqrt(1 - rho^2) z``).  One coordinate's product
:math:`p = q_m k_m` has

.. math::

    E[p] = \rho\,\sigma_q\sigma_k, \qquad
    \operatorname{Var}(p) = \sigma_q^2\sigma_k^2\,\bigl(1 + \rho^2(\mu_4 - 2)\bigr)

(expand :math:`(\rho x^2 + \sqrt{1-\rho^2}\,xy)^2`: the cross term has mean 0 and
:math:`E[x^2y^2] = 1`).  The score :math:`c\,q^\top k` is a sum of :math:`d_k` i.i.d.
copies times the scale c, so its j-th cumulant is :math:`c^j d_k \kappa_j(p)`.  For
Gaussian entries (:math:`\mu_4 = 3`) the variance is :math:`c^2 d_k(1 + \rho^2)`; for
Rademacher entries it is :math:`c^2 d_k (1 - \rho^2)` -- the law matters once
:math:`\rho \ne 0` (Exercise 4.3d).
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_d_k, check_positive, check_rho
from ..training.scalings import SCORE_SCALINGS, scaling_named
from .laws import entry_law, law_moment

__all__ = ["score_central_moments", "score_cumulants", "score_scale", "score_tail_index", "scaled_score_moments"]

def score_scale(d_k, scale="sqrt"):
    """The factor c multiplying ``q.k``: ``1/sqrt(d_k)`` ("sqrt"), ``1/d_k`` ("mup", muP) or 1 ("none")."""
    d_k = check_d_k(d_k)
    return scaling_named(scale, among=SCORE_SCALINGS, argument="scale").factor(d_k)


def _checked(d_k, rho, sigma_q, sigma_k, entries, scale):
    """The score model's arguments, validated: (d_k, rho, sigma_q, sigma_k, law, c)."""
    d_k = check_d_k(d_k)
    return (
        d_k,
        check_rho(rho),
        check_positive(sigma_q, "sigma_q"),
        check_positive(sigma_k, "sigma_k"),
        entry_law(entries),
        score_scale(d_k, scale),
    )


def _product_raw_moment(law, rho, k):
    r""":math:`E[(\rho x^2 + s x y)^k]` with :math:`s = \sqrt{1-\rho^2}`."""
    s = math.sqrt(max(0.0, 1.0 - rho * rho))
    total = 0.0
    for j in range(k + 1):
        coef = math.comb(k, j) * rho**j * s ** (k - j)
        if coef == 0.0 or (k - j) % 2:
            continue  # odd powers of the symmetric y vanish
        total += coef * law_moment(law, k + j) * law_moment(law, k - j)
    return total


def _cumulants_from_raw(m):
    """Cumulants kappa_1..kappa_r from raw moments m_0 = 1, m_1..m_r (the standard recursion)."""
    kappa = []
    for n in range(1, len(m)):
        k = m[n] - sum(math.comb(n - 1, j - 1) * kappa[j - 1] * m[n - j] for j in range(1, n))
        kappa.append(k)
    return kappa


def score_cumulants(d_k, rho=0.0, *, sigma_q=1.0, sigma_k=1.0, entries="gaussian", scale="sqrt", order=4):
    """The first ``order`` (1 to 6) cumulants :math:`\\kappa_1..\\kappa_{order}` of the score ``c q.k``.

    The score is a sum of d_k i.i.d. products, so each is d_k times the product's.  An
    entry is ``inf`` when the moment it needs diverges (heavy-tailed laws).
    """
    d_k, rho, sq, sk, law, c = _checked(d_k, rho, sigma_q, sigma_k, entries, scale)
    if isinstance(order, bool) or order not in (1, 2, 3, 4, 5, 6):
        raise ValueError(f"order must be an integer from 1 to 6; got {order!r}")
    m = [1.0] + [_product_raw_moment(law, rho, k) for k in range(1, order + 1)]
    finite = 1
    while finite < len(m) and np.isfinite(m[finite]):
        finite += 1
    kappa = _cumulants_from_raw(m[:finite]) + [math.inf] * (len(m) - finite)
    unit = c * sq * sk
    return np.array(
        [math.inf if not np.isfinite(kj) else d_k * kj * unit ** (j + 1) for j, kj in enumerate(kappa)]
    )


def score_central_moments(d_k, rho=0.0, *, sigma_q=1.0, sigma_k=1.0, entries="gaussian", scale="sqrt"):
    r"""Central moments :math:`(\mu_2, \dots, \mu_6)` of the score ``c q.k``, from its cumulants:
    :math:`\mu_4 = \kappa_4 + 3\kappa_2^2`, :math:`\mu_5 = \kappa_5 + 10\kappa_3\kappa_2`,
    :math:`\mu_6 = \kappa_6 + 15\kappa_4\kappa_2 + 10\kappa_3^2 + 15\kappa_2^3` (``inf`` where one diverges)."""
    _, k2, k3, k4, k5, k6 = score_cumulants(
        d_k, rho, sigma_q=sigma_q, sigma_k=sigma_k, entries=entries, scale=scale, order=6
    )
    with np.errstate(invalid="ignore"):
        mus = (k2, k3, k4 + 3 * k2**2, k5 + 10 * k3 * k2, k6 + 15 * k4 * k2 + 10 * k3**2 + 15 * k2**3)
    return tuple(math.inf if not np.isfinite(m) else float(m) for m in mus)


def scaled_score_moments(d_k, rho=0.0, *, sigma_q=1.0, sigma_k=1.0, entries="gaussian", scale="sqrt"):
    r"""``(mean, variance)`` of the score :math:`c\, q^\top k`.

    .. math::

        E = c\,\rho\, d_k\,\sigma_q\sigma_k, \qquad
        \operatorname{Var} = c^2 d_k\,\sigma_q^2\sigma_k^2\,\bigl(1 + \rho^2(\mu_4 - 2)\bigr)

    with c from :func:`score_scale`.  For ``rho = 0`` and ``scale="none"`` this is the
    section's :math:`d_k\sigma_q^2\sigma_k^2`; with ``scale="sqrt"`` the mean is
    :math:`\rho\sqrt{d_k}` (unit sigmas) and with ``scale="mup"`` it is :math:`\rho` while
    the variance falls like :math:`1/d_k`.
    """
    d_k, rho, sq, sk, law, c = _checked(d_k, rho, sigma_q, sigma_k, entries, scale)
    mu4 = law_moment(law, 4)
    mean = c * rho * d_k * sq * sk
    var = c * c * d_k * sq * sq * sk * sk * (1.0 + rho * rho * (mu4 - 2.0))
    return float(mean), float(var)


def score_tail_index(entries="gaussian", rho=0.0):
    r"""Supremum of the orders r with :math:`E|q^\top k|^r < \infty`.

    With independent factors (``rho = 0``) the product :math:`xy` keeps the entries' tail
    index; with ``rho != 0`` the term :math:`\rho x^2` halves it.
    """
    law = entry_law(entries)
    rho = check_rho(rho)
    return law.tail_index if rho == 0 else law.tail_index / 2
