"""A check proved, not sampled: a displayed equation (or one step of a derivation) against
the same quantity derived from first principles, decided by computer algebra for all inputs
(:func:`stats.exact.symbolic.decide`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, ClassVar

from .base import Check, Outcome

__all__ = ["ProofCheck"]


@dataclass(frozen=True, kw_only=True)
class ProofCheck(Check):
    """``derive(F)`` returns ``(derived, displayed)`` -- SymPy expressions or matrices -- and the
    check holds when they are identical, is refuted by a counterexample (or by shapes that do
    not agree), and is ``untestable``, with the reason, when SymPy can decide neither.

    ``estimate`` is 0 when proved and 1 when refuted; there is no sample (``n`` = 0).
    """

    derive: Callable = None
    shapes: str = ""

    kind: ClassVar[str] = "proof"
    calibration: ClassVar[str] = "deterministic"
    draws: ClassVar[bool] = False

    def validate(self):
        if not callable(self.derive):
            raise ValueError(f"check {self.label!r}: a {self.kind} check needs derive, a function of the formulas "
                             "returning (derived, displayed)")
        if not isinstance(self.shapes, str):
            raise TypeError(f"check {self.label!r}: shapes must be a string saying where it is proved; got {self.shapes!r}")

    def power_design(self, ctx, alpha):
        return 0, math.nan, "proof"

    def evaluate(self, ctx, design_sd):
        from sympy.matrices.exceptions import ShapeError

        from ...exact.symbolic import decide

        numbers = dict(expected=0.0, estimate=math.nan, mcse=0.0, detectable=0.0)
        where = [self.shapes] if self.shapes else []
        try:
            derived, displayed = self.derive(ctx.formulas)
        except ShapeError as exc:
            return Outcome(dict(numbers, estimate=1.0), "refuted", where + [f"the displayed step's shapes do not agree ({exc})"])
        d = decide(derived, displayed)
        if d.holds is True:
            return Outcome(dict(numbers, estimate=0.0), "holds", where + ["proved for all inputs (SymPy)"])
        if d.holds is False:
            return Outcome(dict(numbers, estimate=1.0), "refuted", where + [f"refuted: {d.reason}"])
        return Outcome(numbers, "untestable", where + [f"SymPy decides neither way: {d.reason}"])
