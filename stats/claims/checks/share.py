r"""The share of rows where a 0/1 statistic is 1, inside a stated interval: the exact binomial test.

For outcomes of whole runs -- did a training run reach its accuracy, did its pattern stay
put -- the share is often near 0 or 1, where a normal approximation fails exactly at the
small levels the family tests at.  The binomial test needs none
(:func:`~stats.inference.significance.share_interval_test`), so the design needs no pilot:
n is the smallest at which the exact test, at the per-test level, rejects with probability
at least :math:`1 - \beta` when the share lies ``target`` beyond the interval's nearer end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...inference.significance import share_interval_test
from ..measures import Measure, Stated
from .base import Check, Outcome, finite

__all__ = ["ShareCheck", "share_sample_size"]

#: The largest n the design searches (a share that needs more is refused at planning).
MAX_SHARE_ROWS = 1 << 16


def _rejection_region(n, lo, hi, alpha):
    """``(k, below, above)``: the outcomes 0..n and where the exact interval test
    (:func:`~stats.inference.significance.share_interval_test`) rejects at level ``alpha``,
    below the interval's lower end and above its upper end (an end at 0 or 1 rejects nowhere)."""
    from scipy import stats as sps

    k = np.arange(int(n) + 1)
    below = (k / n < lo) & (sps.binom.cdf(k, n, lo) < alpha) if lo > 0 else np.zeros(k.size, dtype=bool)
    above = (k / n > hi) & (sps.binom.sf(k - 1, n, hi) < alpha) if hi < 1 else np.zeros(k.size, dtype=bool)
    return k, below, above


def _powers(n, lo, hi, alternatives, alpha):
    """P(the exact interval test rejects at level alpha) at each true share in ``alternatives``
    (one rejection region, every share at once): the region's tail below ``lo`` for a share
    below it, the tail above ``hi`` otherwise."""
    from scipy import stats as sps

    k, below, above = _rejection_region(n, lo, hi, alpha)
    a = np.asarray(alternatives, dtype=np.float64)
    out = np.zeros(a.size)
    for tail, which in ((below, a < lo), (above, a >= lo)):
        if which.any():
            out[which] = sps.binom.pmf(k[tail][None, :], n, a[which][:, None]).sum(axis=1)
    return out


def _power(n, lo, hi, alternative, alpha):
    """P(the exact interval test rejects at level alpha) when the true share is ``alternative``."""
    return float(_powers(n, lo, hi, [alternative], alpha)[0])


def share_sample_size(lo, hi, target, *, alpha, beta):
    """Smallest n at which the exact test of ``[lo, hi]`` detects a share ``target`` beyond an
    end (or at 0 or 1, where that is nearer) with power ``1 - beta``, at both ends."""
    alternatives = [a for a, room in ((max(0.0, lo - target), lo > 0), (min(1.0, hi + target), hi < 1)) if room]
    if not alternatives:
        raise ValueError(f"the interval [{lo}, {hi}] holds every share: it leaves nothing to detect")
    n_max = 0
    for a in alternatives:
        n = 1
        while _power(n, lo, hi, a, alpha) < 1 - beta:
            n = n * 2 if n < 64 else n + max(1, n // 16)
            if n > MAX_SHARE_ROWS:
                raise ValueError(f"a share {target} beyond [{lo}, {hi}] needs more than {MAX_SHARE_ROWS} rows at level {alpha:g}")
        # The doubling overshoots: step back down to the smallest n that still has the power.
        while n > 1 and _power(n - 1, lo, hi, a, alpha) >= 1 - beta:
            n -= 1
        n_max = max(n_max, n)
    return n_max


@dataclass(frozen=True, kw_only=True)
class ShareCheck(Check):
    """``stated``'s interval holds the share of rows where ``measure`` (0 or 1 per row) is 1."""

    stated: Stated = None
    measure: Measure = None
    target: float = 0.45

    kind: ClassVar[str] = "share"
    statistical: ClassVar[bool] = True
    # An interval null, tested exactly and conservatively: its size is computed (exact_size).
    calibration: ClassVar[str] = "exact"
    power_from_shift: ClassVar[bool] = False

    def validate(self):
        if not isinstance(self.stated, Stated):
            raise ValueError(f"check {self.label!r}: a share check needs a stated interval (a Stated)")
        if not isinstance(self.measure, Measure):
            raise ValueError(f"check {self.label!r}: a share check needs a measure (a 0/1 statistic)")
        if self.measure.factor != 1.0:
            raise ValueError(f"check {self.label!r}: a share is of a 0/1 statistic; its measure takes no factor")
        lo, hi = max(0.0, self.stated.lo), min(1.0, self.stated.hi)
        if not lo <= hi:
            raise ValueError(f"check {self.label!r}: the stated interval must meet [0, 1]; got [{self.stated.lo}, {self.stated.hi})")
        t = self.target
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 < t < 1:
            raise ValueError(f"check {self.label!r}: target must be a share in (0, 1); got {t!r}")

    def _bounds(self):
        return max(0.0, self.stated.lo), min(1.0, self.stated.hi)

    def power_design(self, ctx, alpha):
        n = share_sample_size(*self._bounds(), self.target, alpha=alpha, beta=ctx.beta)
        return n, 0.5, "exact binomial power"

    def exact_size(self, n, alpha, formulas=None):
        r"""The test's size with ``n`` rows at level ``alpha``: the rejection region R of
        :func:`~stats.inference.significance.share_interval_test` enumerated, then
        :math:`P_{lo}(R_{below}) + P_{hi}(R_{above})`.  Each tail's rejection probability is
        monotone in the share, so this is the supremum over the interval when only one end can
        reject (an end at 0 or 1) and an upper bound on it otherwise; by construction at most
        ``2 alpha``, and at most ``alpha`` when one end is 0 or 1."""
        from scipy import stats as sps

        lo, hi = self._bounds()
        k, below, above = _rejection_region(n, lo, hi, alpha)
        size = (sps.binom.pmf(k[below], n, lo).sum() if below.any() else 0.0) + \
            (sps.binom.pmf(k[above], n, hi).sum() if above.any() else 0.0)
        return float(min(1.0, size))

    def least_rows(self, alpha):
        """With an erratum recorded, the fewest rows at which the text's interval can be refuted at
        all: the most extreme outcome's exact p-value, :math:`(1 - lo)^n` or :math:`hi^n`, must fall
        below ``alpha`` (an erratum is a strict xfail, and a test that cannot fail confirms nothing).
        Without one, the draft may read ``pass`` at no power, as ``detectable`` then says."""
        if self.erratum is None:
            return 0
        lo, hi = self._bounds()
        q = max(1.0 - lo if lo > 0 else 0.0, hi if hi < 1 else 0.0)
        return math.ceil(math.log(alpha) / math.log(q)) if 0 < q < 1 else 0

    def evaluate(self, ctx, design_sd):
        s = ctx.summary(self.measure)
        numbers = dict(expected=self.stated.value, estimate=float(s.mean), mcse=float("nan"), n=int(s.n))
        notes = [f"claims {self.stated.describe()}"]
        successes = float(s.mean) * int(s.n)
        if not finite(successes) or abs(successes - round(successes)) > 1e-6 * max(1.0, s.n):
            return Outcome(numbers, "error", notes + ["the statistic is not 0/1 on every row"])
        r = share_interval_test(int(round(successes)), int(s.n), *self._bounds(), alpha=ctx.per_test)
        lo, hi = self._bounds()
        numbers.update(mcse=r.mcse, p_value=r.pvalue)
        # The smallest distance beyond an end that this n detects with power 1 - beta.
        numbers["detectable"] = _detectable(int(s.n), lo, hi, ctx.per_test, ctx.beta)
        return Outcome(numbers, "tested", notes)


def _detectable(n, lo, hi, alpha, beta, steps=200):
    """At each end of the interval that can be passed, the smallest distance beyond it (on a grid
    of ``1/steps``, closed by the share 0 or 1 beyond that end, which the design may have to reach:
    :func:`share_sample_size`) at which the test has power ``1 - beta``; the larger of the two (inf
    when no share in [0, 1] beyond an end gives it)."""
    worst = 0.0
    for end, sign in ((lo, -1), (hi, 1)):
        grid = [end + sign * i / steps for i in range(1, steps + 1) if 0 <= end + sign * i / steps <= 1]
        extreme = 0.0 if sign < 0 else 1.0
        if (extreme < end if sign < 0 else extreme > end) and extreme not in grid:
            grid.append(extreme)
        if not grid:
            continue
        powered = np.flatnonzero(_powers(n, lo, hi, grid, alpha) >= 1 - beta)
        worst = max(worst, abs(grid[powered[0]] - end) if powered.size else float("inf"))
    return worst
