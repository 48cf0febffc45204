"""A statistic's whole law against an exact one: Kolmogorov-Smirnov on the kept rows."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, ClassVar

from ...inference.significance import detectable_ks_distance, distribution_test, required_ks_sample_size
from ..measures import Measure
from .base import Check, Outcome, finite

__all__ = ["DistributionCheck"]


@dataclass(frozen=True, kw_only=True)
class DistributionCheck(Check):
    """The rows of ``measure`` follow ``expected(F)``, a frozen scipy distribution; sized so that a
    sup-distance ``target`` between the CDFs is detected with probability 1 - beta (DKW)."""

    measure: Measure = None
    expected: Callable = None
    target: float = 0.02

    kind: ClassVar[str] = "distribution"
    statistical: ClassVar[bool] = True
    calibration: ClassVar[str] = "monte-carlo"  # KS at finite n against an exact law; its distance is no mean shift
    keeps_rows: ClassVar[bool] = True

    def validate(self):
        if not isinstance(self.measure, Measure):
            raise ValueError(f"check {self.label!r}: a {self.kind} check needs a measure")
        if not callable(self.expected):
            raise ValueError(f"check {self.label!r}: a {self.kind} check needs an expected value (a function of the formulas)")
        if isinstance(self.target, bool) or not isinstance(self.target, (int, float)) or not 0 < self.target < 1:
            raise ValueError(f"check {self.label!r}: target must be a sup-distance in (0, 1); got {self.target!r}")
        sim = self.measure.sim
        entries = getattr(sim, "entries", None)
        if entries is None or entries.name != "gaussian" or getattr(sim, "method", "direct") != "direct":
            raise ValueError(
                f"check {self.label!r}: the exact chi-square law applies to Gaussian entries drawn directly only; "
                f"got {sim.key}"
            )


    def power_design(self, ctx, alpha):
        return required_ks_sample_size(self.target, alpha=alpha, beta=ctx.beta), math.nan, "KS design"

    def evaluate(self, ctx, design_sd):
        law = self.expected(ctx.formulas)
        x = ctx.result(self.measure).rows(self.measure.statistic) * self.measure.factor
        r = distribution_test(x, law, alpha=ctx.per_test)
        shape = ", ".join(f"{k}={v:.4g}" for k, v in getattr(law, "kwds", {}).items())
        notes = [f"estimate is the KS distance to the exact CDF ({getattr(getattr(law, 'dist', None), 'name', '?')}: {shape})"]
        numbers = dict(estimate=r.statistic, p_value=r.pvalue, n=r.n,
                       detectable=detectable_ks_distance(r.n, alpha=ctx.per_test, beta=ctx.beta))
        if not (finite(r.pvalue) and finite(r.statistic)):
            return Outcome(numbers, "error", notes + ["the test returned a NaN p-value or statistic"])
        return Outcome(numbers, "tested", notes)
