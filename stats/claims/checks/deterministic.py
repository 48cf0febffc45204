"""Checks decided without a p-value: an identity on every simulated row, and a stated number
against a deterministic value (an exact integral, a threshold, a closed-form count)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, ClassVar

from ..measures import Measure, Stated
from .base import Check, Outcome, finite

__all__ = ["IDENTITY_RATE", "ExactCheck", "IdentityCheck", "identity_rows"]

IDENTITY_RATE = 1e-3  # identities are sized to reveal a violation this common with probability 1 - beta


def identity_rows(rate=IDENTITY_RATE, beta=1e-3):
    """Rows that reveal a violation occurring in a share ``rate`` of rows with probability 1 - beta."""
    return math.ceil(math.log(beta) / math.log1p(-rate))


@dataclass(frozen=True, kw_only=True)
class IdentityCheck(Check):
    """No row of ``measure`` violates an identity: the statistic is a normalised error
    ``|error| / tolerance`` per row, and a row violates when it exceeds 1 (or is NaN)."""

    measure: Measure = None
    rows: int | None = None

    kind: ClassVar[str] = "identity"
    calibration: ClassVar[str] = "deterministic"

    def validate(self):
        if not isinstance(self.measure, Measure):
            raise ValueError(f"check {self.label!r}: an {self.kind} check needs a measure")
        if self.rows is not None and (isinstance(self.rows, bool) or not isinstance(self.rows, int) or self.rows < 1):
            raise ValueError(f"check {self.label!r}: rows must be a positive integer or None; got {self.rows!r}")


    def power_design(self, ctx, alpha):
        return (self.rows or identity_rows(beta=ctx.beta)), math.nan, f"identity rows (violation share {IDENTITY_RATE:g})"

    def evaluate(self, ctx, design_sd):
        s = ctx.result(self.measure).summary(self.measure.statistic)
        numbers = dict(expected=0.0, estimate=float(s.n_above_one), n=s.n, detectable=1.0 - ctx.beta ** (1.0 / s.n))
        notes = [f"largest normalised violation {s.maximum:.3g} (a row violates when > 1)"]
        if s.n_nonfinite:
            return Outcome(numbers, "error", notes + [f"{s.n_nonfinite} rows gave NaN or inf"])
        return Outcome(numbers, ("refuted" if s.n_above_one else "holds"), notes)


@dataclass(frozen=True, kw_only=True)
class ExactCheck(Check):
    """``expected(F)`` -- a value, or ``(value, error bound)`` -- lies in ``stated``'s interval:
    holds when the whole error interval does, refuted when none of it does, else undecidable."""

    stated: Stated = None
    expected: Callable = None

    kind: ClassVar[str] = "exact"
    calibration: ClassVar[str] = "deterministic"
    draws: ClassVar[bool] = False

    def validate(self):
        if not isinstance(self.stated, Stated):
            raise ValueError(f"check {self.label!r}: an {self.kind} check needs a stated interval (a Stated)")
        if not callable(self.expected):
            raise ValueError(f"check {self.label!r}: an {self.kind} check needs an expected value (a function of the formulas)")

    def power_design(self, ctx, alpha):
        return 0, math.nan, "exact"

    def evaluate(self, ctx, design_sd):
        got = self.expected(ctx.formulas)
        value, err = got if isinstance(got, tuple) else (got, 0.0)
        st = self.stated
        numbers = dict(expected=st.value, estimate=float(value), mcse=float(err), detectable=float(err))
        notes = [f"claims {st.describe()}"]
        if not (finite(value) and finite(err)):
            return Outcome(numbers, "error", notes + ["the computed value is NaN or infinite"])
        if err < 0:
            return Outcome(numbers, "error", notes + [f"the value's error bound is negative ({err!r})"])
        if st.contains(value - err) and st.contains(value + err) or (err == 0 and st.contains(value)):
            return Outcome(numbers, "holds", notes)
        if value + err < st.lo or value - err >= st.hi:
            return Outcome(numbers, "refuted", notes)
        return Outcome(numbers, "error", notes + ["undecidable: the value's error bound straddles an end of the interval"])
