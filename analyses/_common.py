"""What the studies share: sample sizes at book and draft quality, and summaries as rows."""

from __future__ import annotations

import math

import numpy as np

from stats.engine.executors import Job, run_simulations
from stats.formulas import FORMULAS
from stats.inference.estimators import mean_estimate

__all__ = ["drift", "mean_row", "rows_for", "run", "variance_row"]


def rows_for(sim, *, quick, numbers=2e7, cap=200_000, floor=64):
    """Rows of ``sim`` for about ``numbers`` random numbers (a tenth in a draft), within [floor, cap]."""
    budget = numbers / (10 if quick else 1)
    return int(max(floor, min(cap / (4 if quick else 1), budget // max(1.0, float(sim.cost)))))


def run(sims_and_rows, *, seed, workers, keep=None, desc="simulating", scheduler=None):
    """Run ``[(sim, n), ...]`` on the engine (on the Dask cluster at ``scheduler``, when given);
    returns ``{sim.key: SimResult}``."""
    keep = keep or {}
    jobs = [Job(sim, n, frozenset(keep.get(sim.key, ()))) for sim, n in sims_and_rows]
    return run_simulations(jobs, seed=seed, formulas=FORMULAS, workers=workers, scheduler=scheduler, progress=True, desc=desc)


def mean_row(summary, factor=1.0):
    """Mean and its MCSE (:func:`stats.inference.mean_estimate`) of a statistic's row summary, times ``factor``."""
    e = mean_estimate(summary.moments())
    return dict(mean=factor * e.value, mcse=abs(factor) * e.mcse, n=e.n)


def variance_row(summary, factor=1.0):
    """Variance and its MCSE (from the fourth central moment) of a statistic, times ``factor`` squared.

    The formula of :func:`stats.inference.variance_estimate`, written out: that function
    groups :math:`\frac{n-3}{n-1} s^4` as ``c * var**2``, this table as ``c * var * var``,
    which differ in the last bits, and the study's tables are kept byte for byte.
    """
    n = summary.n
    var = summary.m2 / (n - 1)
    m4 = summary.m4 / n
    se = math.sqrt(max(m4 - (n - 3) / (n - 1) * var * var, 0.0) / n)
    return dict(variance=factor * factor * var, mcse=factor * factor * se, n=n)


def drift(best, *, width="d_k"):
    """Weighted least-squares slope of the mean best log10 rate (``best``'s ``mean``, ``mcse``) on
    log2 of its ``width`` column -- decades per doubling -- and its standard error."""
    x = np.log2(best[width].to_numpy(dtype=float))
    y, se = best["mean"].to_numpy(), best["mcse"].to_numpy()
    w = 1.0 / np.maximum(se, 0.05) ** 2  # a cell whose seeds all agree has MCSE 0: floor it at the grid's resolution
    xm = np.sum(w * x) / np.sum(w)
    slope = np.sum(w * (x - xm) * (y - np.sum(w * y) / np.sum(w))) / np.sum(w * (x - xm) ** 2)
    return float(slope), float(np.sqrt(1.0 / np.sum(w * (x - xm) ** 2)))
