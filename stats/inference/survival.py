r"""Survival of a run to an event (a head learning) under a step budget: Kaplan--Meier with
Greenwood standard errors.

A run that has not learned within its budget of ``steps`` is *censored*: its time to
accuracy is recorded as ``steps + 1`` (:func:`~stats.training.trainer.train_heads`), known only
to exceed ``steps``.  The Kaplan--Meier estimate of the survival :math:`S(t) = P(T > t)` is

.. math::

    \hat S(t) = \prod_{t_j \le t} \Bigl(1 - \frac{d_j}{n_j}\Bigr),

over the distinct event times :math:`t_j`, with :math:`d_j` runs learning at :math:`t_j` of
the :math:`n_j` still at risk there; Greenwood's formula gives its variance,
:math:`\widehat{\operatorname{Var}}\,\hat S(t) = \hat S(t)^2 \sum_{t_j \le t} d_j/(n_j(n_j - d_j))`.
The *restricted mean* time to accuracy up to a horizon :math:`\tau` is
:math:`\hat\mu_\tau = \int_0^\tau \hat S(t)\,dt` (the mean of :math:`\min(T, \tau)`), with variance
:math:`\sum_j A_j^2 d_j/(n_j(n_j - d_j))`, :math:`A_j = \int_{t_j}^\tau \hat S(t)\,dt`
(Klein & Moeschberger 2003, section 4.5).  The point estimates are scipy's
(:func:`scipy.stats.ecdf` on :class:`scipy.stats.CensoredData`); the variances are the
sums above, which scipy does not return.
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np

from .._validation import as_real_array, check_finite, check_integer, is_finite_real
from .estimators import Estimate

__all__ = ["Survival", "survival_to_accuracy"]


class Survival(NamedTuple):
    """The share of runs that has learned by step ``by`` (:math:`1 - \\hat S(by)`) and the
    restricted mean time to accuracy up to ``horizon``, each an :class:`Estimate` with its
    Greenwood standard error as its MCSE; and how many runs were censored."""

    share_learned: Estimate
    restricted_mean: Estimate
    by: float
    horizon: float
    censored: int


def survival_to_accuracy(steps_to_accuracy, *, steps, by=None, horizon=None) -> Survival:
    """Kaplan--Meier from per-run ``steps_to_accuracy`` under a budget of ``steps``: a value
    above ``steps`` (``steps + 1``, the trainer's convention) is censored there.

    ``by`` (default ``steps``) is the step at which the share learned is read, in [0, steps];
    ``horizon`` (default ``steps + 1``, where the restricted mean equals the mean of
    ``steps_to_accuracy`` when every censored run ran the whole budget) in (0, steps + 1].
    """
    steps = check_integer(steps, "steps", maximum=10**9)
    t = check_finite(as_real_array(steps_to_accuracy, "steps_to_accuracy", dtype=np.float64), "steps_to_accuracy")
    if t.ndim != 1 or t.size < 2:
        raise ValueError(f"steps_to_accuracy must be a 1-D array of at least 2 runs; got shape {t.shape}")
    if np.any(t < 0) or np.any(t > steps + 1):
        raise ValueError(f"steps_to_accuracy must lie in [0, steps + 1] = [0, {steps + 1}] (steps + 1: censored); "
                         f"got values from {t.min()} to {t.max()}")
    by = _check_point(steps if by is None else by, "by", 0, steps)
    horizon = _check_point(steps + 1 if horizon is None else horizon, "horizon", 0, steps + 1)
    if horizon == 0:
        raise ValueError("horizon must be > 0 (the restricted mean of a zero-length window is 0)")
    events = t <= steps
    times, d, n_at_risk = _risk_table(t, events)
    km = 1.0 - _km_cdf(t, events, times)  # S at each event time
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(n_at_risk > d, d / (n_at_risk * (n_at_risk - d)), 0.0)
    # The share learned by `by`.
    upto = times <= by
    s_by = km[upto][-1] if upto.any() else 1.0
    share_se = s_by * np.sqrt(terms[upto].sum()) if s_by > 0 else 0.0
    # The restricted mean: the integral of the step function S from 0 to the horizon.
    inside = times < horizon
    edges = np.concatenate(([0.0], times[inside], [horizon]))
    levels = np.concatenate(([1.0], km[inside]))
    pieces = levels * np.diff(edges)
    mean = float(pieces.sum())
    tail = np.cumsum(pieces[::-1])[::-1][1:]  # A_j: the integral from t_j to the horizon
    mean_se = float(np.sqrt(np.sum(tail * tail * terms[inside])))
    n = t.size
    return Survival(Estimate(float(1.0 - s_by), float(share_se), n), Estimate(mean, mean_se, n), float(by),
                    float(horizon), int(n - events.sum()))


def _check_point(x, name, lo, hi):
    if isinstance(x, bool) or not isinstance(x, numbers.Real) or not is_finite_real(x):
        raise TypeError(f"{name} must be a finite number in [{lo}, {hi}]; got {x!r}")
    if not lo <= x <= hi:
        raise ValueError(f"{name} must lie in [{lo}, {hi}]; got {x!r}")
    return float(x)


def _risk_table(t, events):
    """The distinct event times, the events at each, and the runs at risk there (time >= it)."""
    times, d = np.unique(t[events], return_counts=True)
    n_at_risk = t.size - np.searchsorted(np.sort(t), times, side="left")
    return times, d.astype(np.float64), n_at_risk.astype(np.float64)


def _km_cdf(t, events, times):
    """scipy's Kaplan--Meier CDF at ``times`` (1 - S)."""
    if times.size == 0:
        return np.zeros(0)
    from scipy.stats import CensoredData, ecdf  # on first use: importing stats leaves scipy.stats out (tests/test_imports.py)

    data = CensoredData(uncensored=t[events], right=t[~events])
    return np.asarray(ecdf(data).cdf.evaluate(times), dtype=np.float64)
