"""What a check reads and what the text states: a simulation's statistic, a stated number's
interval, and an erratum's correction.  Plain values; the kinds of check use them
(:mod:`stats.claims.checks`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

__all__ = ["Erratum", "Measure", "Stated"]


@dataclass(frozen=True)
class Measure:
    """A per-row statistic of a simulation, times a constant ``factor`` (e.g. a score scale)."""

    sim: Any
    statistic: str
    factor: float = 1.0

    def __post_init__(self):
        if not (hasattr(self.sim, "statistics") and hasattr(self.sim, "key")):
            raise TypeError(f"sim must be a simulation (a stats.Simulation); got {type(self.sim).__name__}")
        if self.statistic not in self.sim.statistics:
            raise ValueError(f"{self.sim.key} yields {self.sim.statistics}, not {self.statistic!r}")
        f = self.factor
        if isinstance(f, bool) or not isinstance(f, (int, float)) or not math.isfinite(f) or f == 0:
            raise ValueError(f"factor must be a finite non-zero number; got {f!r}")


@dataclass(frozen=True)
class Stated:
    """A number as the text states it, and the half-open interval ``[lo, hi)`` that claims.

    ``Stated.parse("0.35")`` is [0.345, 0.355): the text's precision is its last digit.
    ``unit`` overrides the precision ("163,000" written for e^12 is ``unit=1000``), and
    ``lo``/``hi`` may be given directly for inequalities ("more than tenfold": lo=10).
    """

    text: str
    value: float
    lo: float
    hi: float

    @classmethod
    def parse(cls, text, *, unit=None):
        if not isinstance(text, str):
            raise TypeError(f"text must be the number as the text writes it, a string; got {text!r}")
        clean = text.replace(",", "").replace("about ", "").strip()
        try:
            v = Decimal(clean)
        except InvalidOperation:
            raise ValueError(f"text must be a number as the text writes it (e.g. '0.35', '163,000'); got {text!r}") from None
        if not v.is_finite():
            raise ValueError(f"text must be a finite number; got {text!r}")
        step = Decimal(unit) if unit is not None else Decimal(1).scaleb(v.as_tuple().exponent)
        return cls(text, float(v), float(v - step / 2), float(v + step / 2))

    @classmethod
    def at_least(cls, text, lo, *, strict=True):
        """An inequality ``value > lo`` (``strict``) or ``>= lo``."""
        return cls(text, lo, math.nextafter(lo, math.inf) if strict else lo, math.inf)

    @classmethod
    def at_most(cls, text, hi):
        return cls(text, hi, -math.inf, hi)

    @classmethod
    def between(cls, text, lo, hi):
        """An interval ``lo <= value < hi`` with no single stated value."""
        if not lo < hi:
            raise ValueError(f"between needs lo < hi; got lo={lo!r}, hi={hi!r}")
        return cls(text, float("nan"), lo, hi)

    def contains(self, x):
        return self.lo <= x < self.hi

    def describe(self):
        lo = "-inf" if self.lo == -math.inf else f"{self.lo:.6g}"
        hi = "inf" if self.hi == math.inf else f"{self.hi:.6g}"
        return f"[{lo}, {hi})"


#: The kinds of recorded finding (:mod:`stats.claims.findings`).
ERRATUM_KINDS = ("erratum", "caveat")


@dataclass(frozen=True)
class Erratum:
    """A statement the evidence refutes, recorded: the corrected figure (tested, must pass) and
    the sentence the text could print instead.

    ``kind="erratum"``: the text's statement is false (a number outside its rounding interval,
    or false under its plain reading).  ``kind="caveat"``: the refuted check is a consequence
    the text draws, while its statement is true as written -- ``as_written`` says what holds,
    and ``confirmed_by`` names the claims (registry ids) that show it.

    ``support`` ties the sentence's quantitative and universal words to the checks that show them:
    ``(phrase, reference)`` pairs, ``phrase`` a piece of ``sentence`` and ``reference`` a check of the
    registry, ``"claim-id [check label]"``, or ``"corrected"`` for this erratum's own corrected check
    (the audit, :mod:`stats.claims.sentences`).  ``regraded`` says in one line why the finding's
    class changed under the grading rule (``docs/findings.md``), empty when it did not.
    """

    corrected: Stated
    sentence: str
    kind: str = "erratum"
    as_written: str = ""
    confirmed_by: tuple = ()
    support: tuple = ()
    regraded: str = ""

    def __post_init__(self):
        if not isinstance(self.corrected, Stated):
            raise TypeError(f"corrected must be a Stated; got {type(self.corrected).__name__}")
        if not isinstance(self.sentence, str) or not self.sentence.strip():
            raise ValueError("sentence must be the sentence the text could print instead, a non-empty string")
        if self.kind not in ERRATUM_KINDS:
            raise ValueError(f"kind must be one of {ERRATUM_KINDS}; got {self.kind!r}")
        if isinstance(self.confirmed_by, str) or not all(isinstance(c, str) and c for c in self.confirmed_by):
            raise TypeError(f"confirmed_by must be a tuple of claim ids; got {self.confirmed_by!r}")
        object.__setattr__(self, "confirmed_by", tuple(self.confirmed_by))
        if self.kind == "caveat" and not (isinstance(self.as_written, str) and self.as_written.strip() and self.confirmed_by):
            raise ValueError("a caveat says what holds as written (as_written) and names the claims that show it "
                             "(confirmed_by)")
        if self.kind == "erratum" and (self.as_written or self.confirmed_by):
            raise ValueError("an erratum's statement is false: as_written and confirmed_by belong to a caveat")
        if isinstance(self.support, (str, bytes)) or not isinstance(self.support, (tuple, list)) or not all(
                isinstance(p, tuple) and len(p) == 2 and all(isinstance(x, str) and x.strip() for x in p)
                for p in self.support):
            raise TypeError("support must be a tuple of (phrase, reference) pairs of non-empty strings; "
                            f"got {self.support!r}")
        missing = [phrase for phrase, _ in self.support if phrase not in self.sentence]
        if missing:
            raise ValueError(f"support: the phrase {missing[0]!r} is not in the sentence")
        object.__setattr__(self, "support", tuple(self.support))
        if not isinstance(self.regraded, str) or "\n" in self.regraded:
            raise TypeError(f"regraded must be one line of text (why the grade changed), or empty; got {self.regraded!r}")
