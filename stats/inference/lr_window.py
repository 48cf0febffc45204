r"""How wide a learning rate works: Wortsman et al.'s LR sensitivity and the learning-rate window, with MCSE.

Both read a log-spaced grid of rates :math:`\eta_1 < \dots < \eta_m`, the final loss
:math:`\ell_r(\eta_i)` of each run ``r`` (an independent seed) at each rate, and each run's loss
at initialisation :math:`\ell_{0,r}`.  A run's loss is first capped at its initial loss,
:math:`c_r(\eta) = \min(\ell_r(\eta), \ell_{0,r})`, so that a run that diverged (``+inf``) counts
as one that learned nothing; the rate's loss is the mean over runs,
:math:`L(\eta) = \frac1n \sum_r c_r(\eta)`, and the best :math:`L^* = \min_i L(\eta_i)`.

* **LR sensitivity** (Wortsman et al. 2023, "Small-scale proxies for large-scale Transformer
  training instabilities", arXiv:2309.14322, section 2.2): the expectation, over the rates of
  a grid evenly spaced in :math:`\log\eta`, of :math:`\min(\ell(\eta), \ell_0) - \ell^*`; here
  :math:`S = \frac1m \sum_i L(\eta_i) - L^*`.  0 when every rate is as good as the best; up to
  :math:`\bar\ell_0 - L^*` when only one rate learns.
* **The window**: the span, in decades, :math:`\log_{10}(\eta_{hi}/\eta_{lo})`, of the unbroken run
  of grid rates around the best whose loss is within ``tolerance`` of the best's *share of the
  way to the initial loss*: :math:`L(\eta) - L^* \le \tau\,(\bar\ell_0 - L^*)` (default
  :math:`\tau = 0.1`: within a tenth of what the best rate gained over not training).  A window
  that reaches an end of the grid is a lower bound (``reaches_edge``).  Where no rate improves on
  the initial loss both are degenerate (S = 0, the window the whole grid): read them beside
  :math:`L^*`.

The MCSE is a seeded bootstrap over runs: the runs are independent seeds and every rate of a
run shares its draws (common random numbers), so a replicate resamples whole seeds -- the
column of every rate together -- which keeps the correlation between rates that the best-of-grid
and the differences rest on.  Not the delta method: :math:`L^*` is a minimum over rates, not
differentiable where two rates are close, and the window is a whole number of grid steps.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._validation import check_integer

__all__ = ["LRWindow", "lr_sensitivity", "lr_window"]

#: Bootstrap replicates of the MCSE: the standard error of a bootstrap standard error is about
#: ``1/sqrt(2 B)`` of it, 4% at 300.
BOOTSTRAP_REPLICATES = 300


class LRWindow(NamedTuple):
    """The learning-rate window: its span in decades with its bootstrap MCSE, the rates at its
    ends, the tolerance it used, whether it reaches an end of the grid (then it is a lower bound),
    and the number of runs."""

    decades: float
    mcse: float
    low: float
    high: float
    tolerance: float
    reaches_edge: bool
    n: int


def _inputs(lrs, losses, initial):
    """Validated (log10 rates, capped losses of shape (rates, runs), initial losses of shape (runs,))."""
    if not isinstance(lrs, (tuple, list, np.ndarray)):
        raise TypeError(f"lrs must be a sequence of learning rates; got {type(lrs).__name__}")
    try:
        rates = np.asarray(lrs, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"lrs must hold numbers; got {lrs!r}") from None
    if rates.ndim != 1 or rates.size < 2:
        raise ValueError(f"lrs must hold at least 2 learning rates; got shape {rates.shape}")
    if not (np.all(np.isfinite(rates)) and np.all(rates > 0)):
        raise ValueError(f"lrs must be positive finite numbers; got {lrs!r}")
    if np.any(np.diff(rates) <= 0):
        raise ValueError(f"lrs must be strictly increasing; got {lrs!r}")
    log = np.log10(rates)
    steps = np.diff(log)
    # The sensitivity is a mean over log rate; 1% allows for rates written to three significant digits.
    if np.ptp(steps) > 1e-2 * steps.mean():
        raise ValueError(f"lrs must be evenly spaced in log rate; got {lrs!r}")
    try:
        loss = np.asarray(losses, dtype=float)
        init = np.asarray(initial, dtype=float)
    except (TypeError, ValueError):
        raise TypeError("losses and initial must hold numbers") from None
    if loss.ndim != 2 or loss.shape[0] != rates.size or loss.shape[1] < 2:
        raise ValueError(f"losses must have shape (rates, runs) = ({rates.size}, n >= 2); got {loss.shape}")
    if np.any(np.isnan(loss)) or np.any(loss == -np.inf):
        raise ValueError("losses must not hold NaN or -inf (a diverged run is +inf, which counts as its initial loss)")
    if init.ndim == 0:
        init = np.full(loss.shape[1], float(init))
    if init.shape != (loss.shape[1],):
        raise ValueError(f"initial must be one loss or one per run ({loss.shape[1]}); got shape {init.shape}")
    if not np.all(np.isfinite(init)):
        raise ValueError("initial must hold finite losses")
    return log, np.minimum(loss, init), init


def _replicates(n, replicates, seed):
    """Bootstrap indices (replicates, n) over runs, from a seeded stream."""
    from numpy.random import Generator, SeedSequence, SFC64

    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer, SeedSequence)):
        raise TypeError(f"seed must be a non-negative int or a SeedSequence; got {seed!r}")
    if not isinstance(seed, SeedSequence) and seed < 0:
        raise ValueError(f"seed must be a non-negative int; got {seed}")
    replicates = check_integer(replicates, "replicates", minimum=2, maximum=100_000, what="an integer from 2 to 100000")
    rng = Generator(SFC64(seed if isinstance(seed, SeedSequence) else SeedSequence(int(seed))))
    return rng.integers(0, n, size=(replicates, n))


def _sensitivity(capped):
    """:math:`S` of capped losses (rates, runs[, ...]) over axis 1."""
    mean = capped.mean(axis=1)
    return mean.mean(axis=0) - mean.min(axis=0)


def _window(log, capped, init, tolerance):
    """(decades, low index, high index) of capped losses (rates, runs)."""
    mean = capped.mean(axis=1)
    best = int(np.argmin(mean))
    bar = mean[best] + tolerance * (init.mean() - mean[best])
    lo = hi = best
    while lo > 0 and mean[lo - 1] <= bar:
        lo -= 1
    while hi < mean.size - 1 and mean[hi + 1] <= bar:
        hi += 1
    return float(log[hi] - log[lo]), lo, hi


def lr_sensitivity(lrs, losses, initial, *, replicates=BOOTSTRAP_REPLICATES, seed=0):
    r"""Wortsman et al.'s LR sensitivity :math:`S = \frac1m\sum_i L(\eta_i) - L^*` (module docstring)
    of ``losses`` (shape (rates, runs): final losses, runs sharing their draws across rates) on the
    log-spaced grid ``lrs``, runs capped at their ``initial`` loss (one number or one per run);
    an :class:`~stats.inference.estimators.Estimate` whose MCSE is the standard deviation of
    ``replicates`` bootstrap resamples of the runs (seeded by ``seed``)."""
    from .estimators import Estimate

    _, capped, _ = _inputs(lrs, losses, initial)
    idx = _replicates(capped.shape[1], replicates, seed)
    boot = _sensitivity(np.moveaxis(capped[:, idx], 1, 2))  # (rates, runs, replicates)
    return Estimate(float(_sensitivity(capped)), float(np.std(boot, ddof=1)), int(capped.shape[1]))


def lr_window(lrs, losses, initial, *, tolerance=0.1, replicates=BOOTSTRAP_REPLICATES, seed=0):
    r"""The learning-rate window of ``losses`` on the grid ``lrs`` (module docstring): the span in
    decades of the unbroken run of rates around the best whose mean capped loss is within
    ``tolerance`` (a share, 0 to 1) of the way from the best loss to the mean initial loss; an
    :class:`LRWindow` whose MCSE is the standard deviation of ``replicates`` bootstrap resamples
    of the runs (seeded by ``seed``)."""
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)):
        raise TypeError(f"tolerance must be a number in [0, 1); got {tolerance!r}")
    if not (math.isfinite(tolerance) and 0 <= tolerance < 1):
        raise ValueError(f"tolerance must be in [0, 1); got {tolerance!r}")
    log, capped, init = _inputs(lrs, losses, initial)
    idx = _replicates(capped.shape[1], replicates, seed)
    decades, lo, hi = _window(log, capped, init, tolerance)
    boot = [_window(log, capped[:, i], init[i], tolerance)[0] for i in idx]
    rates = np.asarray(lrs, dtype=float)
    return LRWindow(decades, float(np.std(boot, ddof=1)), float(rates[lo]), float(rates[hi]), float(tolerance),
                    bool(lo == 0 or hi == rates.size - 1), int(capped.shape[1]))
