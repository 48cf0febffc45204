r"""How far the normal approximation behind a test is off in the tail where it is used.

``verify`` rejects at a per-test level near 1e-5, far in the tail, where a normal
approximation to a studentized statistic can be wrong by a large factor at sample sizes
that look generous.  The one-term Edgeworth expansion of a studentized statistic
:math:`T` (Hall, *The Bootstrap and Edgeworth Expansion*, 1992, §2.6) is

.. math::

    P(T \le x) = \Phi(x) - n^{-1/2}\bigl(A_1 + \tfrac{A_2}{6}(x^2 - 1)\bigr)\varphi(x) + O(n^{-1}),

where :math:`A_1/\sqrt n` is the mean of :math:`T` and :math:`A_2/\sqrt n` its third
cumulant, to first order.  With :math:`U` the influence of one row on the estimate and
:math:`V` its influence on the estimated variance of :math:`U`,

.. math::

    A_1 = -\tfrac12 b - \frac{\operatorname{Cov}(U, V)}{2 s_U^3}, \qquad
    A_2 = \gamma_U - 3 b - \frac{3\operatorname{Cov}(U, V)}{s_U^3},

with :math:`b` the curvature term of the estimate (0 for a mean; :math:`s_U` for the log
of a variance).  For the t statistic this gives :math:`A_1 = -\gamma/2`,
:math:`A_2 = -2\gamma`, the textbook :math:`\gamma(2x^2+1)/6`.  For the log-variance test of
:mod:`.significance` (sample variance, standard error from the sample kurtosis) the
coefficients need the central moments :math:`\mu_2 \dots \mu_6` of one row.

:func:`tail_error` is the first-order relative error of *one* tail at the two-sided level
``alpha``: :math:`\varphi(z)\,|A_1 + A_2 (z^2-1)/6| / (\sqrt n\, \Phi(-z))` with
:math:`z = z_{1-\alpha/2}`.  In a two-sided test the first-order terms of the two tails
cancel, so the two-sided error is of second order; bounding each tail keeps the test
honest in either direction (a "too small" and a "too large" verdict are both errors) and
makes the second-order remainder about the square of the bound.  The planner raises n
until the bound is at most :data:`TAIL_FRACTION` of the level.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special

from .._validation import check_alpha, check_choice

__all__ = [
    "TAIL_FRACTION",
    "TAIL_LIMIT",
    "conservative_pvalue",
    "edgeworth_coefficients",
    "tail_error",
    "tail_sample_size",
]

#: The largest first-order relative tail error the planner accepts at a check's own level.
TAIL_FRACTION = 0.1
#: Beyond this bound at its design level the first-order expansion itself is not trusted:
#: the planner marks the check untestable.
TAIL_LIMIT = 4.0


def _finite_moments(central, count, kind):
    if not isinstance(central, (tuple, list, np.ndarray)):
        raise TypeError(f"central must be a sequence of central moments (mu_2, mu_3, ...); got {type(central).__name__}")
    if len(central) < count:
        raise ValueError(f"a {kind} test needs the central moments mu_2..mu_{count + 1}; got {len(central)}")
    out = []
    for i, m in enumerate(central[:count]):
        if isinstance(m, bool) or not isinstance(m, (int, float)) and not hasattr(m, "__float__"):
            raise TypeError(f"central moment mu_{i + 2} must be a real number; got {type(m).__name__}")
        m = float(m)
        if math.isnan(m):
            raise ValueError(f"central moment mu_{i + 2} is NaN")
        out.append(m)
    if not out[0] > 0 or math.isinf(out[0]):
        raise ValueError(f"mu_2 must be positive and finite; got {out[0]}")
    return out


def edgeworth_coefficients(central, *, test):
    r"""``(A1, A2)`` of the studentized statistic of ``test`` from one row's central moments.

    ``test`` is ``"mean"`` (the t statistic; ``central = (mu2, mu3)``) or
    ``"log_variance"`` (log sample variance over its kurtosis-based standard error;
    ``central = (mu2, mu3, mu4, mu5, mu6)``, mu5 unused).  An infinite moment gives
    infinite coefficients (no finite n calibrates the test).
    """
    check_choice(test, "test", ("mean", "log_variance"))
    if test == "mean":
        mu2, mu3 = _finite_moments(central, 2, "mean")
        if math.isinf(mu3):
            return math.inf, math.inf
        g = mu3 / mu2**1.5
        return -0.5 * g, -2.0 * g
    if test == "log_variance":
        mu2, mu3, mu4, _, mu6 = _finite_moments(central, 5, "log_variance")
        if math.isinf(mu4) or math.isinf(mu6) or math.isinf(mu3):
            return math.inf, math.inf
        var_u = (mu4 - mu2 * mu2) / mu2**2  # U = ((X - mu)^2 - mu2) / mu2
        if not var_u > 0:
            raise ValueError("the squared deviations are constant (mu4 = mu2^2): the log-variance test does not apply")
        s_u = math.sqrt(var_u)
        gamma_u = (mu6 - 3 * mu2 * mu4 + 2 * mu2**3) / (mu4 - mu2 * mu2) ** 1.5
        # V: influence of m4/m2^2 - 1, the estimated variance of U (m4 centred at the sample mean).
        cov_uv = (mu6 - mu2 * mu4 - 4 * mu3 * mu3) / mu2**3 - 2 * mu4 * (mu4 - mu2 * mu2) / mu2**4
        c = cov_uv / s_u**3
        return -0.5 * s_u - 0.5 * c, gamma_u - 3 * s_u - 3 * c
    raise ValueError(f"test must be 'mean' or 'log_variance'; got {test!r}")


@functools.lru_cache(maxsize=4096)
def _tail_factor(alpha, a1, a2):
    # scipy.special's ufuncs, not scipy.stats' frozen methods: this runs once per check per evaluation.
    z = float(-special.ndtri(check_alpha(alpha) / 2))
    ratio = math.exp(-0.5 * z * z - 0.5 * math.log(2 * math.pi) - float(special.log_ndtr(-z)))  # phi(z)/Phi(-z)
    return ratio * abs(a1 + a2 * (z * z - 1) / 6)


def tail_error(n, *, alpha, a1, a2):
    """First-order relative error of one tail of the normal approximation at two-sided level ``alpha``."""
    if isinstance(n, bool) or not isinstance(n, (int, float)) or not n >= 2 or math.isinf(n):
        raise ValueError(f"n must be a finite number >= 2; got {n!r}")
    check_alpha(alpha)
    for name, a in (("a1", a1), ("a2", a2)):
        if isinstance(a, bool) or not isinstance(a, (int, float)) or math.isnan(a):
            raise ValueError(f"{name} must be a real number (inf allowed); got {a!r}")
    return _tail_factor(alpha, a1, a2) / math.sqrt(n)


def tail_sample_size(*, alpha, a1, a2, fraction=TAIL_FRACTION):
    """Smallest n at which :func:`tail_error` is at most ``fraction`` (``inf`` if none is)."""
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction < 1:
        raise ValueError(f"fraction must lie in (0, 1); got {fraction!r}")
    check_alpha(alpha)
    for name, a in (("a1", a1), ("a2", a2)):
        if isinstance(a, bool) or not isinstance(a, (int, float)) or math.isnan(a):
            raise ValueError(f"{name} must be a real number (inf allowed); got {a!r}")
    k = _tail_factor(alpha, a1, a2)
    if math.isinf(k):
        return math.inf
    return max(2, math.ceil((k / fraction) ** 2))


def conservative_pvalue(p, n, *, a1, a2):
    r"""``p`` times :math:`1 + e(p)`, with :math:`e(p)` = :func:`tail_error` at the level ``p`` itself.

    The normal tail beyond the observed statistic may be up to :math:`1 + e` times too thin
    (to first order), so this p-value keeps the false-fail rate at any level where n could
    not be raised far enough; far from the tail (large p) the correction fades, so under
    the null the p-values stay close to uniform (``python -m stats calibrate`` checks it).
    """
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
        raise ValueError(f"p must be a probability in [0, 1]; got {p!r}")
    if p in (0, 1):
        return float(p)
    return min(1.0, p * (1.0 + tail_error(n, alpha=p, a1=a1, a2=a2)))
