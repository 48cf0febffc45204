r"""Monte Carlo tests of moments: a mean, a variance, a ratio of variances, two means.

Each is sized from a per-row standard deviation (:class:`~.base.DesignSD`) to detect its
``target`` discrepancy (relative to the expected value when ``relative``) with false-pass
``beta`` at the per-test level, and refuses, as *untestable*, a law whose tails are too
heavy for its normal approximation (``tail_index``, the supremum of the orders of finite
moments of one row's statistic).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, ClassVar

from ...inference.significance import (
    MEAN_TEST_MIN_TAIL_INDEX,
    VARIANCE_TEST_MIN_TAIL_INDEX,
    detectable_discrepancy,
    mean_test,
    required_sample_size,
    two_sample_test,
    variance_ratio_test,
    variance_test,
)
from ..measures import Measure
from .base import Check, ClosedFormSD, Outcome, PilotSD, design_sd, finite

__all__ = ["MeanCheck", "RatioCheck", "SizedCheck", "TwoSampleCheck", "VarianceCheck"]


@dataclass(frozen=True, kw_only=True)
class SizedCheck(Check):
    """A statistical check sized from a per-row sd (the shared part of the moment tests and intervals)."""

    target: float = 0.02
    relative: bool = True
    sd: Any = None
    tail_index: float = math.inf

    statistical: ClassVar[bool] = True
    power_from_shift: ClassVar[bool] = True
    tail_test: ClassVar[str | None] = "mean"
    min_tail_index: ClassVar[float] = MEAN_TEST_MIN_TAIL_INDEX

    def validate(self):
        if isinstance(self.target, bool) or not isinstance(self.target, (int, float)) or not 0 < self.target < math.inf:
            raise ValueError(f"check {self.label!r}: target must be a positive finite number; got {self.target!r}")
        if not isinstance(self.relative, bool):
            raise TypeError(f"check {self.label!r}: relative must be True or False; got {self.relative!r}")
        t = self.tail_index
        if isinstance(t, bool) or not isinstance(t, (int, float)) or math.isnan(t) or t <= 0:
            raise ValueError(f"check {self.label!r}: tail_index must be a positive number or inf (the supremum of the "
                             f"orders of finite moments); got {t!r}")
        if self.sd is None:
            raise ValueError(f"check {self.label!r}: a {self.kind} check needs sd: 'pilot', a closed form (a callable) "
                             "or a bound (a number)")
        object.__setattr__(self, "sd", design_sd(self.sd, label=self.label))

    def need_measures(self, *names):
        """Refuse the check unless each field in ``names`` holds a :class:`Measure`."""
        for name in names:
            m = getattr(self, name)
            if m is None:
                raise ValueError(f"check {self.label!r}: a {self.kind} check needs {name}, a Measure")
            if not isinstance(m, Measure):
                raise TypeError(f"check {self.label!r}: {name} must be a Measure; got {type(m).__name__}")

    def untestable_reason(self):
        need = self.min_tail_index
        if not self.tail_index > need:
            sim = self.measures[0].sim
            law = getattr(sim, "entries", None)
            if law is None:
                return (f"{self.kind} test needs finite moments beyond order {need:g}; the rows of {sim.key} have them "
                        f"only below order {self.tail_index:g}")
            return (
                f"{self.kind} test needs finite moments beyond order {need:g}; with {law.label} "
                f"entries and rho={getattr(sim, 'rho', 0.0):g} they are finite only below order {self.tail_index:g}"
            )
        return None

    def pilot_measures(self):
        """Its measures when its sd comes from a pilot, or when its Edgeworth bound needs a
        pilot's skewness (a mean-type statistic without closed-form moments)."""
        by_sd = isinstance(self.sd, PilotSD)
        by_tail = self.tail_test == "mean" and any(ms.sim.central_moments(ms.statistic) is None for ms in self.measures)
        return self.measures if by_sd or by_tail else ()

    def sd_of(self, ctx, measure):
        """``(per-row sd of the measure, its pilot mean or None, how)`` for the design."""
        if isinstance(self.sd, PilotSD):
            from scipy import stats as sps

            p = ctx.pilot(measure.sim)[measure.statistic]
            # An upper (1 - beta) confidence bound on the sd, so the pilot's own error cannot shrink n.
            sd_up = p.sd * math.exp(0.5 * sps.norm.isf(ctx.beta) * math.sqrt(max(p.kurtosis - 1.0, 0.5) / p.n))
            return sd_up * abs(measure.factor), p.mean * measure.factor, f"pilot run ({p.n} rows on its own stream)"
        return self.sd.value(), None, self.sd.how

    def shift(self, center):
        """The discrepancy to detect: ``target`` times ``|center|`` when relative (1 without a center)."""
        delta = self.target * abs(center if center is not None else 1.0) if self.relative else self.target
        if not delta > 0 or not math.isfinite(delta):
            raise ValueError(f"check {self.label!r}: its target discrepancy is {delta}; a relative target needs a non-zero center")
        return delta

    @staticmethod
    def tested(numbers, notes, result, expected, detectable):
        """The outcome of a moment test's :class:`~stats.inference.significance.TestResult`."""
        numbers.update(expected=expected, estimate=result.estimate, mcse=result.mcse, p_value=result.pvalue,
                       n=result.n, detectable=detectable)
        if not finite(result.pvalue) or not finite(result.estimate):
            return Outcome(numbers, "error", notes + ["the test returned a NaN p-value or estimate"])
        return Outcome(numbers, "tested", notes)


@dataclass(frozen=True, kw_only=True)
class MeanCheck(SizedCheck):
    """One-sample t-test of a statistic's mean against ``expected(F)``."""

    measure: Measure = None
    expected: Callable = None

    kind: ClassVar[str] = "mean"
    calibration: ClassVar[str] = "monte-carlo"

    def validate(self):
        self.need_measures("measure")
        if not callable(self.expected):
            raise ValueError(f"check {self.label!r}: a {self.kind} check needs an expected value (a function of the formulas)")
        super().validate()

    def power_design(self, ctx, alpha):
        sd, _, how = self.sd_of(ctx, self.measure)
        center = self.expected(ctx.formulas) if self.relative else None
        return required_sample_size(self.shift(center), sd=sd, alpha=alpha, beta=ctx.beta), sd, how

    def evaluate(self, ctx, design_sd):
        """The closed form, then the kind's test (:meth:`run_test`) and what it could detect (:meth:`detectable`)."""
        numbers, notes = {}, []
        expected, failed = self.expected_or_error(ctx.formulas, numbers, notes)
        if failed:
            return failed
        r = self.run_test(ctx, expected)
        return self.tested(numbers, notes, r, expected, self.detectable(r.n, expected, design_sd, ctx))

    def run_test(self, ctx, expected):
        """The :class:`~stats.inference.significance.TestResult` of this kind's test."""
        return mean_test(ctx.summary(self.measure), expected, alpha=ctx.per_test, tail_index=self.tail_index)

    def detectable(self, n, expected, design_sd, ctx):
        """The smallest discrepancy the test detected with power 1 - beta at its n."""
        return detectable_discrepancy(n, sd=design_sd, alpha=ctx.per_test, beta=ctx.beta)


@dataclass(frozen=True, kw_only=True)
class VarianceCheck(MeanCheck):
    """Log-variance test of a statistic's variance against ``expected(F)`` (valid for non-Gaussian rows);
    ``target`` is relative, and the design sd is that of the log sample variance per row."""

    kind: ClassVar[str] = "variance"
    calibration: ClassVar[str] = "monte-carlo"
    tail_test: ClassVar[str | None] = "log_variance"
    min_tail_index: ClassVar[float] = VARIANCE_TEST_MIN_TAIL_INDEX

    def untestable_reason(self):
        why = super().untestable_reason()
        if why:
            return why
        missing = [ms.sim.key for ms in self.measures if ms.sim.central_moments(ms.statistic) is None]
        if missing:
            return (f"{self.kind} test: no closed-form moments up to the sixth for {missing[0]}, so its tail error "
                    "cannot be bounded")
        if isinstance(self.sd, ClosedFormSD) and self.sd.value() < 1e-6:
            sim = self.measure.sim
            if getattr(sim, "entries", None) is None:
                return f"degenerate: the squared deviations of {sim.key} are constant, so the sample variance has no normal limit"
            return (f"degenerate: with {sim.entries.label} entries at d_k={sim.d_k} the squared score is constant, so the "
                    "sample variance has no normal limit to test against")
        return None

    def power_design(self, ctx, alpha):
        sd, _, how = self.sd_of(ctx, self.measure)
        return required_sample_size(math.log1p(self.target), sd=sd, alpha=alpha, beta=ctx.beta), sd, how

    def detectable(self, n, expected, design_sd, ctx):
        # The design's sd is on the log scale: a relative discrepancy, back on the variance's scale.
        return abs(expected) * math.expm1(super().detectable(n, expected, design_sd, ctx))

    def run_test(self, ctx, expected):
        return variance_test(ctx.summary(self.measure), expected, alpha=ctx.per_test, tail_index=self.tail_index)


@dataclass(frozen=True, kw_only=True)
class RatioCheck(VarianceCheck):
    """Test of Var(``measure_b``) / Var(``measure``) = ``expected(F)`` on two independent simulations."""

    measure_b: Measure = None

    kind: ClassVar[str] = "ratio"
    calibration: ClassVar[str] = "monte-carlo"

    def validate(self):
        self.need_measures("measure_b")
        super().validate()

    def run_test(self, ctx, expected):
        s = ctx.summary(self.measure)
        return variance_ratio_test(ctx.summary(self.measure_b), s, expected, alpha=ctx.per_test, tail_index=self.tail_index)


def _no_difference(F):
    return 0.0


@dataclass(frozen=True, kw_only=True)
class TwoSampleCheck(MeanCheck):
    r"""Welch's test that two simulations' means of a statistic differ by ``expected(F)`` (0: a
    shortcut against the direct recipe).  Made for two recipes of one law, whose rows have
    the same sd under the null: the design takes ``measure``'s sd for both, so the
    difference of two means of n rows each has sd :math:`\sqrt2\,sd/\sqrt n`."""

    measure_b: Measure = None
    expected: Callable = _no_difference

    kind: ClassVar[str] = "two_sample"
    calibration: ClassVar[str] = "monte-carlo"

    def validate(self):
        self.need_measures("measure_b")
        super().validate()

    def power_design(self, ctx, alpha):
        sd, pilot_mean, how = self.sd_of(ctx, self.measure)
        sd = sd * math.sqrt(2.0)  # the difference of two independent means of equal n
        center = (pilot_mean if pilot_mean is not None else self.expected(ctx.formulas)) if self.relative else None
        return required_sample_size(self.shift(center), sd=sd, alpha=alpha, beta=ctx.beta), sd, how

    def run_test(self, ctx, expected):
        s = ctx.summary(self.measure)
        return two_sample_test(s, ctx.summary(self.measure_b), expected, alpha=ctx.per_test, tail_index=self.tail_index)
