r"""A Monte Carlo estimate inside an interval: a number stated at the text's precision, or an inequality.

The estimate is a measure's mean, or ``derive`` of several measures' means (a ratio of two
expected norms, say) with its delta-method standard error.  The interval null
:math:`\theta \in [lo, hi)` is tested at its closest point
(:func:`~stats.inference.significance.interval_test`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, ClassVar

import numpy as np

from ...inference.estimators import delta_method, mean_estimate
from ...inference.significance import detectable_shift, interval_test, required_sample_size
from ..measures import Measure, Stated
from .base import Outcome, PilotSD, finite
from .moments import SizedCheck

__all__ = ["IntervalCheck"]


@dataclass(frozen=True, kw_only=True)
class IntervalCheck(SizedCheck):
    """``stated``'s interval holds the mean of ``measure``, or ``derive(means of inputs)``."""

    stated: Stated = None
    measure: Measure = None
    inputs: tuple = ()
    derive: Callable = None
    target: float = 0.005
    relative: bool = False
    sd: object = PilotSD()

    kind: ClassVar[str] = "interval"
    # Its null is the text's interval, not an exact value: no uniform p-values to expect,
    # and no mean shift to declare a mutant's power from.
    calibration: ClassVar[str] = "interval"
    power_from_shift: ClassVar[bool] = False

    def validate(self):
        if not isinstance(self.stated, Stated):
            raise ValueError(f"check {self.label!r}: an {self.kind} check needs a stated interval (a Stated)")
        if not isinstance(self.inputs, (tuple, list)) or any(not isinstance(m, Measure) for m in self.inputs):
            raise TypeError(f"check {self.label!r}: inputs must be a tuple of Measures; got {self.inputs!r}")
        object.__setattr__(self, "inputs", tuple(self.inputs))
        if self.inputs:
            if self.measure is not None:
                raise ValueError(f"check {self.label!r}: give measure (one mean) or inputs (derive of several), not both")
            if not callable(self.derive):
                raise ValueError(f"check {self.label!r}: an interval check of several inputs needs derive, a function of their means")
        else:
            if self.derive is not None:
                raise ValueError(f"check {self.label!r}: derive applies to inputs, and none are given")
            self.need_measures("measure")
        super().validate()


    def power_design(self, ctx, alpha):
        if self.inputs:
            return self._derived_design(ctx, alpha)
        sd, pilot_mean, how = self.sd_of(ctx, self.measure)
        center = (pilot_mean if pilot_mean is not None else self.stated.value) if self.relative else None
        return required_sample_size(self.shift(center), sd=sd, alpha=alpha, beta=ctx.beta), sd, how

    def _derived_design(self, ctx, alpha):
        r"""Each input drawn n times: the delta method at the pilot means,
        :math:`sd_f^2 = \sum_i (\partial f/\partial\mu_i)^2 sd_i^2`."""
        mus, sds = [], []
        for ms in self.inputs:
            sd, mu, _ = self.sd_of(ctx, ms)
            mus.append(mu if mu is not None else 1.0)
            sds.append(sd)
        mu = np.array(mus, dtype=np.float64)
        value, sd_f = delta_method(self.derive, mu, sds, step_floor=np.zeros(mu.size))
        delta = self.target * (abs(value) if self.relative else 1.0)
        if not (sd_f > 0 and delta > 0 and math.isfinite(sd_f)):
            raise ValueError(f"check {self.label!r}: cannot design from sd {sd_f} and target {delta}")
        # Without a pilot there are no means: the gradient is then taken at 1 for each input.
        how = f"delta method on {'pilot runs' if isinstance(self.sd, PilotSD) else 'the ' + self.sd.how + ' sds'} of its {mu.size} inputs"
        return required_sample_size(delta, sd=sd_f, alpha=alpha, beta=ctx.beta), sd_f, how

    def estimate(self, ctx):
        """``(estimate, its standard error, n)``."""
        if self.inputs:
            means = [mean_estimate(ctx.summary(ms)) for ms in self.inputs]
            value, se = delta_method(self.derive, [e.value for e in means], [e.mcse for e in means])
            return value, se, min(e.n for e in means)
        e = mean_estimate(ctx.summary(self.measure))
        return e.value, e.mcse, e.n

    def evaluate(self, ctx, design_sd):
        est, se, n = self.estimate(ctx)
        numbers = dict(expected=self.stated.value, estimate=est, mcse=se, n=n)
        notes = [f"claims {self.stated.describe()}"]
        if not (finite(est) and finite(se)):
            return Outcome(numbers, "error", notes + ["the estimate is NaN or infinite"])
        numbers["p_value"] = interval_test(est, se, self.stated.lo, self.stated.hi, alpha=ctx.per_test).pvalue
        numbers["detectable"] = detectable_shift(se, alpha=ctx.per_test, beta=ctx.beta)
        return Outcome(numbers, "tested", notes)
