r"""The claims schema: each quantitative statement of section 4.3 as an executable claim.

A :class:`Claim` carries an id, the section heading it comes from, a paraphrase, the
closed form it asserts, and its :class:`Check` s -- one per tested value.  A check names
what it measures (a :class:`Measure`: a per-row statistic of a simulation), what it
expects (a function of the :class:`~stats.formulas.Formulas` under test, so planted
mutants can be run against the same draws) and how its sample size is designed.

Kinds of check (``Check.test``):

==============  =============================================================  ===========
test            what is decided                                                 family
==============  =============================================================  ===========
``mean``        one-sample t-test of a statistic's mean                         Holm
``variance``    log-variance test (valid for non-Gaussian rows)                 Holm
``ratio``       ratio of two simulations' variances                             Holm
``distribution`` Kolmogorov-Smirnov against an exact law                        Holm
``two_sample``  equality of two simulations' means (cross-checks of shortcuts)  Holm
``interval``    a Monte Carlo estimate (or a function of several) lies in an    Holm
                interval: a number stated at the text's precision, or an
                inequality; the p-value is that of the closest point
``identity``    no simulated row violates an identity (count = 0)               --
``exact``       a deterministic value (an exact integral, a threshold, a        --
                closed-form count) lies in an interval
==============  =============================================================  ===========

Design (``Check.sd``): the per-draw standard deviation behind a check's sample size comes
from a closed form (a callable evaluated with the true formulas, never a mutant's), a
bound (a number: a statistic in [0, 1] has sd <= 1/2), or a pilot run on its own stream
(``"pilot"``); the runner states which in the row's ``note``.

A statement the evidence refutes is a finding about the text, recorded as an
:class:`Erratum` on the check it refutes; the runner then demands that it stays
refuted, like a strict xfail, and tests the erratum's corrected value as a check of its
own, which must pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any, Callable

__all__ = [
    "DETERMINISTIC_TESTS",
    "STATISTICAL_TESTS",
    "TESTS",
    "Check",
    "Claim",
    "Erratum",
    "Measure",
    "Stated",
    "corrected_check",
]

STATISTICAL_TESTS = ("mean", "variance", "ratio", "distribution", "two_sample", "interval")
DETERMINISTIC_TESTS = ("identity", "exact")
TESTS = STATISTICAL_TESTS + DETERMINISTIC_TESTS


@dataclass(frozen=True)
class Measure:
    """A per-row statistic of a simulation, times a constant ``factor`` (e.g. a score scale)."""

    sim: Any
    statistic: str
    factor: float = 1.0

    def __post_init__(self):
        if self.statistic not in self.sim.statistics:
            raise ValueError(f"{self.sim.key} yields {self.sim.statistics}, not {self.statistic!r}")


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
        clean = text.replace(",", "").replace("about ", "").strip()
        v = Decimal(clean)
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
        return cls(text, float("nan"), lo, hi)

    def contains(self, x):
        return self.lo <= x < self.hi

    def describe(self):
        lo = "-inf" if self.lo == -math.inf else f"{self.lo:.6g}"
        hi = "inf" if self.hi == math.inf else f"{self.hi:.6g}"
        return f"[{lo}, {hi})"


@dataclass(frozen=True)
class Erratum:
    """A refuted statement: the corrected figure (tested, must pass) and the corrected sentence."""

    corrected: Stated
    sentence: str


@dataclass(frozen=True)
class Check:
    """One tested value of a claim (see the module docstring for the kinds and fields)."""

    label: str
    test: str
    measure: Measure | None = None
    measure_b: Measure | None = None
    inputs: tuple[Measure, ...] = ()
    expected: Callable | None = None
    uses: tuple[str, ...] = ()
    derive: Callable | None = None
    stated: Stated | None = None
    target: float = 0.02
    relative: bool = True
    sd: Any = "closed"
    tail_index: float = math.inf
    rows: int | None = None
    erratum: Erratum | None = None
    requires: tuple[str, ...] = ()
    note: str = ""
    macro: str | None = None
    corrected: bool = False

    def __post_init__(self):
        if self.test not in TESTS:
            raise ValueError(f"check {self.label!r}: test must be one of {TESTS}; got {self.test!r}")
        needs_measure = self.test in ("mean", "variance", "ratio", "distribution", "two_sample", "identity")
        if needs_measure and self.measure is None:
            raise ValueError(f"check {self.label!r}: a {self.test} check needs a measure")
        if self.test in ("ratio", "two_sample") and self.measure_b is None:
            raise ValueError(f"check {self.label!r}: a {self.test} check needs measure_b")
        if self.test in ("interval", "exact") and self.stated is None:
            raise ValueError(f"check {self.label!r}: an {self.test} check needs a stated interval")
        if self.test == "interval" and not (self.inputs or self.measure):
            raise ValueError(f"check {self.label!r}: an interval check needs a measure or inputs")
        if self.test != "identity" and self.expected is None and self.test not in ("interval",):
            raise ValueError(f"check {self.label!r}: a {self.test} check needs an expected value")
        if self.test == "distribution":
            entries = getattr(self.measure.sim, "entries", None)
            if entries is None or entries.name != "gaussian" or getattr(self.measure.sim, "method", "direct") != "direct":
                raise ValueError(
                    f"check {self.label!r}: the exact chi-square law applies to Gaussian entries drawn directly only; "
                    f"got {self.measure.sim.key}"
                )

    @property
    def measures(self):
        """Every measure the check reads, in order."""
        if self.inputs:
            return tuple(self.inputs)
        return tuple(m for m in (self.measure, self.measure_b) if m is not None)

    @property
    def keeps_rows(self):
        """Whether the test needs the rows themselves, not just their summary."""
        return self.test == "distribution"


def corrected_check(check: Check) -> Check:
    """The check of an erratum's corrected value: same measure, corrected interval, no erratum."""
    e = check.erratum
    test = check.test
    return replace(
        check,
        label=f"{check.label} [corrected]",
        stated=e.corrected,
        erratum=None,
        corrected=True,
        macro=None if check.macro is None else check.macro,
        test=test,
    )


@dataclass(frozen=True)
class Claim:
    id: str
    section: str
    statement: str
    closed_form: str
    checks: tuple[Check, ...] = field(default_factory=tuple)

    def __post_init__(self):
        labels = [c.label for c in self.checks]
        if len(labels) != len(set(labels)):
            raise ValueError(f"claim {self.id!r} has duplicate check labels")
        if not self.checks:
            raise ValueError(f"claim {self.id!r} has no checks")
