r"""A check's sample size: its kind's power design, raised until the normal approximation
is trusted at the per-test level.

The kind (:meth:`~stats.claims.checks.Check.power_design`) gives the n that detects its
target discrepancy with probability 1 - beta at level alpha.  For a test on a normal
approximation (``tail_test``), the first-order Edgeworth expansion bounds the relative
error of its tail at alpha (:func:`~stats.inference.tails.tail_error`); n is raised until
that error is at most :data:`~stats.inference.tails.TAIL_FRACTION`, within a budget of
random numbers.  Past the budget the check keeps the largest affordable n with a
conservative p-value and the power stated at the level that leaves; if even that n leaves
an error above :data:`~stats.inference.tails.TAIL_LIMIT`, the check is untestable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..inference.tails import TAIL_FRACTION, TAIL_LIMIT, edgeworth_coefficients, tail_error, tail_sample_size
from .defaults import TAIL_BUDGET

__all__ = ["Design", "TailUntestable", "design_check", "edgeworth_bound"]


@dataclass(frozen=True)
class Design:
    """A check's design: rows per simulation it reads, the per-row sd behind them (log
    scale for variances; NaN when none), how they were found, and the Edgeworth
    coefficients ``(A1, A2)`` bounding its statistic (``None`` without a normal approximation)."""

    n: int
    sd: float
    how: str
    edgeworth: tuple | None = None


class TailUntestable(Exception):
    """No affordable n makes the check's normal approximation trustworthy at its level."""


def edgeworth_bound(check, ctx):
    r"""``((A1, A2), source)`` bounding the Edgeworth coefficients of the check's studentized statistic.

    One measure: its own coefficients, from closed-form central moments or, for a mean,
    from a pilot's skewness plus :math:`z_{1-\beta}\sqrt{6/n}` (its normal-theory error).
    Several (two-sample, ratio, derived): a weighted combination with weights of unit
    square sum, so :math:`|A_2| \le \max_i |A_{2,i}|` and :math:`|A_1| \le \sqrt2 \max_i |A_{1,i}|`.
    """
    from scipy import stats as sps

    coefs, sources = [], set()
    for ms in check.measures:
        mom = ms.sim.central_moments(ms.statistic)
        if mom is None:
            p = ctx.pilot(ms.sim)[ms.statistic]
            mom = (1.0, abs(p.skewness) + sps.norm.isf(ctx.beta) * math.sqrt(6.0 / p.n))
            sources.add("pilot skewness")
        else:
            sources.add("closed-form moments")
        coefs.append(edgeworth_coefficients(mom, test=check.tail_test))
    if len(coefs) == 1:
        return coefs[0], " and ".join(sorted(sources))
    a1 = max(abs(c[0]) for c in coefs) * math.sqrt(2.0)
    a2 = max(abs(c[1]) for c in coefs)
    return (a1, a2), " and ".join(sorted(sources))


def design_check(check, ctx, alpha):
    """The :class:`Design` of one check at per-test level ``alpha`` (module docstring)."""
    n, sd, how = check.power_design(ctx, alpha)
    if check.tail_test is None:
        return Design(n, sd, how)
    (a1, a2), source = edgeworth_bound(check, ctx)
    n_tail = tail_sample_size(alpha=alpha, a1=a1, a2=a2)
    if n_tail <= n:
        return Design(n, sd, how, (a1, a2))
    per_row = sum(float(ms.sim.cost) for ms in check.measures)
    affordable = max(n, int(TAIL_BUDGET // per_row))
    if affordable >= n_tail:
        how += f"; raised from {n} for a tail error <= {TAIL_FRACTION:g} of the level (Edgeworth, {source})"
        return Design(n_tail, sd, how, (a1, a2))
    e = tail_error(max(affordable, 2), alpha=alpha, a1=a1, a2=a2)
    if e > TAIL_LIMIT:
        raise TailUntestable(
            f"the normal approximation's tail error at the design level {alpha:.2g} would be {e:.2g} of it "
            f"at the n={affordable} the budget of {TAIL_BUDGET:.2g} random numbers affords (Edgeworth, "
            f"{source}); {TAIL_FRACTION:g} needs n={n_tail}"
        )
    if affordable > n:
        how += f"; raised from {n} to the tail budget's {affordable} (Edgeworth, {source}; {TAIL_FRACTION:g} needs n={n_tail})"
        n = affordable
    # The p-value will be inflated by (1 + e): keep the stated power at the level that
    # leaves, alpha / (1 + e).  e falls as n grows, so this settles in a few rounds.
    for _ in range(20):
        e = tail_error(max(n, 2), alpha=alpha, a1=a1, a2=a2)
        n_power = check.power_design(ctx, alpha / (1 + e))[0]
        if n_power <= n:
            break
        n = n_power
    else:  # pragma: no cover - the iteration is a contraction for any finite e
        raise TailUntestable(f"no n keeps the power at the tail-corrected level {alpha:.2g}")
    if n > affordable:
        how += f"; {n} for the power at the corrected level"
    return Design(n, sd, how, (a1, a2))
