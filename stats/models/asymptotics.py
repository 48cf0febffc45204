r"""Asymptotic laws of saturation, beyond the text (derivation in ``docs/asymptotics.md``).

**Unscaled, d_k -> inf** (T keys, Gaussian entries).  Given :math:`\sigma = \lVert q\rVert`
the scores are :math:`\sigma z_j`; only keys within :math:`O(1/\sigma)` of the winner carry
weight.  With :math:`G = z_{(1)} - z_{(2)}` and :math:`U = \sigma G`, two keys give
:math:`1 - \max a = 1/(1 + e^U)` and :math:`1 - \lVert a\rVert^2 = 2p(1 - p)`,
:math:`p = 1/(1 + e^{-U})`, whose integrals over :math:`U \ge 0` are :math:`\ln 2` and 1.  So

.. math::

    1 - E\max a = \frac{C_{\max}}{\sqrt{d_k}} + \frac{D_{\max}}{d_k} + O(d_k^{-3/2}),\qquad
    E[1 - \lVert a\rVert^2] = \frac{C_{tr}}{\sqrt{d_k}} + \frac{D_{tr}}{d_k} + O(d_k^{-3/2}),

with :math:`C_{\max} = f_G(0)\ln 2`, :math:`C_{tr} = f_G(0)`, the gap density at zero
:math:`f_G(0) = T(T-1)\int\phi^2\Phi^{T-2}`, and the 1/d_k coefficients
:math:`D = f_G'(0)\int_0^\infty u\,h_2(u)\,du + f_3(0,0)\,I_3` -- the slope of the gap
density (:math:`\int u h_2 = \pi^2/12` for the largest weight, :math:`2\ln 2` for the trace)
plus near-ties of three keys (:math:`f_3(0, 0) = T(T-1)(T-2)\int\phi^3\Phi^{T-3}`, the
joint density of the two top gaps at 0, times the two-dimensional integral :math:`I_3` of
the three-key statistic less its two-key approximation).

**Scaled, d_k -> inf.**  :math:`\sigma = \lVert q\rVert/\sqrt{d_k}` has
:math:`E[\sigma - 1] = -1/(4d_k) + O(d_k^{-2})` and :math:`E[(\sigma - 1)^2] = 1/(2d_k) + O(d_k^{-2})`,
so with :math:`f(\sigma)` the value for i.i.d. :math:`N(0, \sigma^2)` scores,

.. math::

    E f(\sigma) = f(1) + \frac{f''(1) - f'(1)}{4 d_k} + O(d_k^{-2}).

:func:`saturation_asymptotics` returns every constant; the derivatives of f come from a
Chebyshev interpolant of the exact quadrature on [0.75, 1.25].
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.polynomial import chebyshev as C

from .._validation import MAX_KEYS, check_d_k, check_integer
from ..cache import persistent
from .saturation_quadrature import saturation_given_scale

__all__ = ["gap_density", "saturation_asymptotic_value", "saturation_asymptotics"]


def _normal_integral(f):
    """:math:`\\int f(x)\\,dx` over the real line for the integrands below (smooth, Gaussian tails)."""
    from scipy import integrate  # here, not at import: stats' start-up does not need it

    val, _ = integrate.quad(f, -12.0, 12.0, epsabs=1e-15, epsrel=1e-13, limit=400)
    return val


def gap_density(n_keys):
    r"""``(f_G(0), f_G'(0), f_3(0, 0))`` for the top gaps of ``n_keys`` i.i.d. standard normals.

    :math:`f_G(0) = T(T-1)\int\phi^2\Phi^{T-2}`,
    :math:`f_G'(0) = T(T-1)\int(x\phi^2\Phi^{T-2} - (T-2)\phi^3\Phi^{T-3})`,
    :math:`f_3(0,0) = T(T-1)(T-2)\int\phi^3\Phi^{T-3}`.
    """
    T = check_integer(n_keys, "n_keys", minimum=2, maximum=MAX_KEYS, what="an integer >= 2")
    return _gap_density(T)


@functools.lru_cache(maxsize=None)
def _gap_density(T):
    phi = lambda x: math.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)  # noqa: E731
    Phi = lambda x: 0.5 * math.erfc(-x / math.sqrt(2))  # noqa: E731
    f0 = T * (T - 1) * _normal_integral(lambda x: phi(x) ** 2 * Phi(x) ** (T - 2))
    f1 = T * (T - 1) * _normal_integral(
        lambda x: x * phi(x) ** 2 * Phi(x) ** (T - 2) - (T - 2) * phi(x) ** 3 * (Phi(x) ** (T - 3) if T > 2 else 0.0)
    )
    f3 = T * (T - 1) * (T - 2) * _normal_integral(lambda x: phi(x) ** 3 * Phi(x) ** (T - 3)) if T > 2 else 0.0
    return f0, f1, f3


def _three_key_integrals():
    """I_3 for the largest weight and for the trace: three keys at 0, -u1, -u1-u2 against two."""
    from scipy import integrate

    def stats(w):
        z = sum(w)
        a = [x / z for x in w]
        return 1.0 - a[0], 1.0 - sum(x * x for x in a)

    def diff(u2, u1, which):
        three = stats([1.0, math.exp(-u1), math.exp(-u1 - u2)])
        two = stats([1.0, math.exp(-u1)])
        return three[which] - two[which]

    out = []
    for which in (0, 1):
        v, _ = integrate.dblquad(lambda u2, u1: diff(u2, u1, which), 0.0, 60.0, 0.0, 60.0, epsabs=1e-13, epsrel=1e-11)
        out.append(v)
    return tuple(out)


_I3 = None


def _i3():
    global _I3
    if _I3 is None:
        _I3 = _three_key_integrals()
    return _I3


@functools.lru_cache(maxsize=None)
def _scaled_derivatives(T):

    n = 24
    t = np.cos(np.pi * (np.arange(n) + 0.5) / n)
    lo, hi = 0.75, 1.25
    s = 0.5 * (hi + lo) + 0.5 * (hi - lo) * t
    v = saturation_given_scale(s, T)
    out = {}
    for key in ("max_weight", "trace"):
        c = C.chebfit(t, v[key], n - 1)
        d1 = C.chebder(c, 1) * (2 / (hi - lo))
        d2 = C.chebder(c, 2) * (2 / (hi - lo)) ** 2
        out[key] = (float(C.chebval(0.0, d1)), float(C.chebval(0.0, d2)))
    return out


def saturation_asymptotics(n_keys=32):
    """The constants of the asymptotic laws (module docstring) for ``n_keys`` keys.

    Returns a dict: ``gap_density_at_zero`` (f_G(0)), ``gap_density_slope`` (f_G'(0)),
    ``triple_density_at_zero`` (f_3(0, 0)); the unscaled laws' ``C_max``, ``C_trace``,
    ``D_max``, ``D_trace``; the scaled head's limits ``limit_max_weight``,
    ``limit_trace`` (i.i.d. N(0, 1) scores, accurate to 1e-9) and 1/d_k coefficients
    ``B_max_weight``, ``B_trace``.
    """
    T = check_integer(n_keys, "n_keys", minimum=2, maximum=MAX_KEYS, what="an integer >= 2")
    return dict(_asymptotics(T))


@persistent("saturation-asymptotics")
def _asymptotics(T):

    f0, f1, f3 = _gap_density(T)
    i3_max, i3_trace = _i3()
    lim = saturation_given_scale(1.0, T)
    der = _scaled_derivatives(T)
    return tuple(
        dict(
            n_keys=T,
            gap_density_at_zero=f0,
            gap_density_slope=f1,
            triple_density_at_zero=f3,
            C_max=f0 * math.log(2.0),
            C_trace=f0,
            D_max=f1 * math.pi**2 / 12 + f3 * i3_max,
            D_trace=f1 * 2 * math.log(2.0) + f3 * i3_trace,
            limit_max_weight=lim["max_weight"],
            limit_trace=lim["trace"],
            B_max_weight=(der["max_weight"][1] - der["max_weight"][0]) / 4,
            B_trace=(der["trace"][1] - der["trace"][0]) / 4,
        ).items()
    )


def saturation_asymptotic_value(d_k, n_keys=32, *, scaling="none", statistic=None, terms=2, constants=None):
    """The asymptotic law's value at width ``d_k``: ``terms`` = 1 (leading) or 2 (with the 1/d_k term).

    ``statistic`` is ``"one_minus_max"`` (the default) or ``"trace"`` for ``scaling="none"``,
    and ``"max_weight"`` (the default) or ``"trace"`` for ``scaling="sqrt"``.
    """
    d_k = check_d_k(d_k)
    if scaling not in ("none", "sqrt"):
        raise ValueError(f"scaling must be 'none' or 'sqrt'; got {scaling!r}")
    if statistic is None:
        statistic = "one_minus_max" if scaling == "none" else "max_weight"
    allowed = ("one_minus_max", "trace") if scaling == "none" else ("max_weight", "trace")
    if statistic not in allowed:
        raise ValueError(f"statistic must be one of {allowed} for scaling={scaling!r}; got {statistic!r}")
    if terms not in (1, 2) or isinstance(terms, bool):
        raise ValueError(f"terms must be 1 or 2; got {terms!r}")
    k = constants if constants is not None else saturation_asymptotics(n_keys)
    d = float(d_k)
    if scaling == "none":
        c, dd = {"one_minus_max": (k["C_max"], k["D_max"]), "trace": (k["C_trace"], k["D_trace"])}[statistic]
        return c / math.sqrt(d) + (dd / d if terms == 2 else 0.0)
    lim, b = {"max_weight": (k["limit_max_weight"], k["B_max_weight"]), "trace": (k["limit_trace"], k["B_trace"])}[statistic]
    return lim + (b / d if terms == 2 else 0.0)
