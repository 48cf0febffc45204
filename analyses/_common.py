"""What the studies share: sample sizes at book and draft quality, and summaries as rows."""

from __future__ import annotations

import math

from stats.engine.executors import Job, run_simulations
from stats.formulas import FORMULAS

__all__ = ["mean_row", "rows_for", "run", "summary_rows"]


def rows_for(sim, *, quick, numbers=2e7, cap=200_000, floor=64):
    """Rows of ``sim`` for about ``numbers`` random numbers (a tenth in a draft), within [floor, cap]."""
    budget = numbers / (10 if quick else 1)
    return int(max(floor, min(cap / (4 if quick else 1), budget // max(1.0, float(sim.cost)))))


def run(sims_and_rows, *, seed, workers, keep=None, desc="simulating"):
    """Run ``[(sim, n), ...]`` on the engine; returns ``{sim.key: SimResult}``."""
    keep = keep or {}
    jobs = [Job(sim, n, frozenset(keep.get(sim.key, ()))) for sim, n in sims_and_rows]
    return run_simulations(jobs, seed=seed, formulas=FORMULAS, workers=workers, progress=True, desc=desc)


def mean_row(summary, factor=1.0):
    """Mean and its MCSE of a statistic's row summary, times ``factor``."""
    n = summary.n
    return dict(mean=factor * summary.mean, mcse=abs(factor) * math.sqrt(summary.m2 / (n - 1) / n), n=n)


def variance_row(summary, factor=1.0):
    """Variance and its MCSE (from the fourth central moment) of a statistic, times ``factor`` squared."""
    n = summary.n
    var = summary.m2 / (n - 1)
    m4 = summary.m4 / n
    se = math.sqrt(max(m4 - (n - 3) / (n - 1) * var * var, 0.0) / n)
    return dict(variance=factor * factor * var, mcse=factor * factor * se, n=n)


def summary_rows(result, statistics, **labels):
    return [dict(labels, statistic=s, **mean_row(result.summary(s))) for s in statistics]
