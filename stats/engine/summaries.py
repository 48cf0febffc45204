r"""Per-statistic block summaries that merge exactly.

A block of a simulation yields, for each per-row statistic, a vector of at most
``block_rows`` values; :func:`summarize_rows` reduces it to a :class:`RowSummary` (count,
mean, central power sums :math:`M_2, M_3, M_4`, extremes and two counts), and
:func:`merge_row_summaries` combines the summaries of consecutive blocks with Pébay's
formulas.  The runner always merges in block order, so the result is the same bytes
whichever worker computed which block.

Non-finite values are not dropped: they propagate into the mean and power sums (a NaN
statistic gives a NaN estimate, which the runner reports as ``ERROR``, never as a pass),
and ``n_nonfinite`` counts them.  ``n_above_one`` counts rows whose value is not ``<= 1``
(NaN included): identity checks store a normalised error ``|error| / tolerance`` per
row, so this is their number of violating rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import as_real_array

from ..inference.estimators import MomentSummary, merge_power_sums

__all__ = ["RowSummary", "merge_row_summaries", "summarize_block", "summarize_rows"]


@dataclass(frozen=True)
class RowSummary:
    """Count, mean, central power sums, extremes and counts of one statistic's rows."""

    n: int
    mean: float
    m2: float
    m3: float
    m4: float
    minimum: float
    maximum: float
    n_nonfinite: int
    n_above_one: int

    def moments(self) -> MomentSummary:
        """The :class:`~stats.inference.estimators.MomentSummary` the tests take."""
        return MomentSummary(self.n, np.float64(self.mean), np.float64(self.m2), np.float64(self.m3), np.float64(self.m4))


def summarize_rows(x):
    """:class:`RowSummary` of a one-dimensional array of finite per-row values (two passes)."""
    x = as_real_array(x, "x", dtype=np.float64)
    if x.ndim == 1 and x.size and not np.all(np.isfinite(x)):
        raise ValueError("x contains NaN or inf; a row summary of user data needs finite values")
    return _summarize_rows(x)


def _summarize_rows(x):
    """As :func:`summarize_rows`, but counting non-finite rows (``n_nonfinite``) instead of
    refusing them: the engine's path, so that a simulation producing NaN is reported as an
    ERROR by the runner rather than crashing a worker."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"a block statistic must be a non-empty 1-D array; got shape {x.shape}")
    finite = np.isfinite(x)
    with np.errstate(invalid="ignore", over="ignore"):
        mean = x.mean()
        d = x - mean
        d2 = d * d
        m2, m3, m4 = d2.sum(), (d2 * d).sum(), (d2 * d2).sum()
    n_fin = int(finite.sum())
    lo = float(x[finite].min()) if n_fin else np.nan
    hi = float(x[finite].max()) if n_fin else np.nan
    return RowSummary(
        int(x.size), float(mean), float(m2), float(m3), float(m4), lo, hi, int(x.size - n_fin), int(np.sum(~(x <= 1.0)))
    )


def summarize_block(stats, names):
    """``{name: RowSummary of stats[name]}`` for one block of a simulation, non-finite rows counted
    (not refused) as the engine needs; in one pass over a stacked array when every statistic
    has the block's length (the same bits: each row of the stack is reduced along its own
    contiguous axis as a vector is), else statistic by statistic."""
    try:
        x = np.array([np.asarray(stats[name], dtype=np.float64) for name in names], dtype=np.float64)
    except ValueError:  # ragged: the per-statistic path says which shape is wrong
        x = None
    if x is None or x.ndim != 2 or x.shape[1] == 0:
        return {name: _summarize_rows(stats[name]) for name in names}
    rows = x.shape[1]
    finite = np.isfinite(x)
    with np.errstate(invalid="ignore", over="ignore"):
        mean = x.mean(axis=1)
        d = x - mean[:, None]
        d2 = d * d
        m2, m3, m4 = d2.sum(axis=1), (d2 * d).sum(axis=1), (d2 * d2).sum(axis=1)
    n_fin = finite.sum(axis=1)
    lo = np.where(finite, x, np.inf).min(axis=1)
    hi = np.where(finite, x, -np.inf).max(axis=1)
    above = np.sum(~(x <= 1.0), axis=1)
    return {
        name: RowSummary(rows, float(mean[i]), float(m2[i]), float(m3[i]), float(m4[i]),
                         float(lo[i]) if n_fin[i] else np.nan, float(hi[i]) if n_fin[i] else np.nan,
                         int(rows - n_fin[i]), int(above[i]))
        for i, name in enumerate(names)
    }


def merge_row_summaries(a: RowSummary, b: RowSummary) -> RowSummary:
    """Exact summary of the rows of ``a`` followed by those of ``b`` (:func:`~stats.inference.estimators.merge_power_sums`)."""
    for name, m in (("a", a), ("b", b)):
        if not isinstance(m, RowSummary):
            raise TypeError(f"{name} must be a RowSummary; got {type(m).__name__}")
    with np.errstate(invalid="ignore", over="ignore"):
        n, mean, m2, m3, m4 = merge_power_sums((a.n, a.mean, a.m2, a.m3, a.m4), (b.n, b.mean, b.m2, b.m3, b.m4))
    return RowSummary(
        n,
        float(mean),
        float(m2),
        float(m3),
        float(m4),
        float(np.fmin(a.minimum, b.minimum)),
        float(np.fmax(a.maximum, b.maximum)),
        a.n_nonfinite + b.n_nonfinite,
        a.n_above_one + b.n_above_one,
    )
