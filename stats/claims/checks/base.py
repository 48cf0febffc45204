r"""What every kind of check shares: the base class, the typed design sd, and the two contexts.

A kind of check is one subclass of :class:`Check` (see :mod:`stats.claims.checks`, which
registers them).  It owns three things and nothing else does:

* **validation** (:meth:`Check.validate`, run on construction): what its fields must be;
* **design** (:meth:`Check.power_design`): the rows per simulation that give its test the
  stated power at the per-test level -- paired with its test, as
  :func:`~stats.inference.significance.required_sample_size` is paired with
  :func:`~stats.inference.significance.detectable_discrepancy`;
* **evaluation** (:meth:`Check.evaluate`): its estimate, p-value or decision, from the
  simulations' summaries.

Class attributes say how the orchestration treats it: ``kind`` (the ``test`` column of
``claims.csv``), ``statistical`` (a member of the Holm family), ``tail_test`` (which
Edgeworth expansion bounds its normal approximation, if any), ``keeps_rows`` (whether
it needs the rows themselves, not just their summary), ``draws`` (whether it reads a
simulation at all), and for the calibration ``calibration`` (how its false-fail rate is
known, one of :data:`CALIBRATIONS`: every kind must say) and ``power_from_shift``.
``docs/adding-a-check.md`` walks through adding one.
"""

from __future__ import annotations

import functools
import importlib.util
import math
from dataclasses import KW_ONLY, dataclass, fields, replace
from typing import Any, Callable, ClassVar, NamedTuple

from ...engine.executors import SimFailure
from ...formulas import Formulas
from ...inference.estimators import scale_moments
from ..findings import PROTOCOLS
from ..measures import Erratum, Measure

__all__ = [
    "CALIBRATIONS",
    "CORRECTION_SUFFIX",
    "FORMULA_FIELDS",
    "BoundSD",
    "Check",
    "ClosedFormSD",
    "DesignContext",
    "DesignSD",
    "EvaluationContext",
    "Outcome",
    "PilotSD",
    "PilotStats",
    "REQUIREMENTS",
    "SimulationError",
    "design_sd",
    "finite",
    "requirement_met",
]


#: How a kind of check's false-fail rate is known: its ``calibration`` class attribute, which
#: ``make calibrate`` asks (:mod:`stats.claims.calibration`).
CALIBRATIONS = {
    "monte-carlo": "its p-value rests on an approximation (normal, Welch, delta method, the Edgeworth tail "
                   "bound, KS or chi-square at finite n): where its null is true by construction (no erratum), "
                   "make calibrate measures its p-values' uniformity and rejection rate over independent seeds",
    "exact": "its level holds by construction (an exact test): make calibrate computes its size at the sizes "
             "used instead of simulating it (the kind's exact_size)",
    "interval": "an interval null around a true value nobody knows: conservative inside the interval, and at "
                "its nearer end the one-sided normal (or delta-method) test of a mean; make calibrate calibrates "
                "that approximation with its estimates centred on their mean over the seeds",
    "deterministic": "no p-value: it fails only where its identity, value, proof or source does, whatever the seed",
}


# ------------------------------------------------------------------ the design's standard deviation


class DesignSD:
    """The per-row standard deviation behind a check's sample size: one of three kinds."""

    how: ClassVar[str]


@dataclass(frozen=True)
class ClosedFormSD(DesignSD):
    """From a closed form: ``function()`` (evaluated with the true formulas, never a mutant's)."""

    function: Callable[[], float]
    how: ClassVar[str] = "closed form"

    def value(self):
        return float(self.function())


@dataclass(frozen=True)
class BoundSD(DesignSD):
    """An upper bound known in advance (a statistic in [0, 1] has sd <= 1/2)."""

    bound: float
    how: ClassVar[str] = "bound"

    def __post_init__(self):
        if isinstance(self.bound, bool) or not isinstance(self.bound, (int, float)) or not self.bound > 0:
            raise ValueError(f"a bound sd must be a positive number; got {self.bound!r}")

    def value(self):
        return float(self.bound)


@dataclass(frozen=True)
class PilotSD(DesignSD):
    """From a pilot run on its own stream: an upper (1 - beta) confidence bound on its sd."""

    how: ClassVar[str] = "pilot run"


def design_sd(sd, *, label):
    """A :class:`DesignSD` from what a statement module writes: ``"pilot"``, a callable
    (closed form), a positive number (bound) or a :class:`DesignSD` itself."""
    if isinstance(sd, DesignSD):
        return sd
    if isinstance(sd, str) and sd == "pilot":
        return PilotSD()
    if callable(sd):
        return ClosedFormSD(sd)
    if isinstance(sd, (int, float)) and not isinstance(sd, bool):
        return BoundSD(float(sd))
    raise TypeError(
        f"check {label!r}: sd must be 'pilot', a callable closed form, a positive number (a bound) or a DesignSD; "
        f"got {sd!r}"
    )


# ------------------------------------------------------------------ contexts


class SimulationError(Exception):
    """A simulation a check reads raised: the check's verdict is ``ERROR``, with this message."""


@dataclass(frozen=True)
class PilotStats:
    """One statistic of a pilot run: mean, sd, plug-in kurtosis, rows and skewness."""

    mean: float
    sd: float
    kurtosis: float
    n: int
    skewness: float

    @classmethod
    def from_summary(cls, s):
        """From a :class:`~stats.engine.summaries.RowSummary` (a Gaussian's 3 and 0 when the rows are constant)."""
        return cls(
            s.mean,
            math.sqrt(s.m2 / (s.n - 1)),
            s.n * s.m4 / s.m2**2 if s.m2 > 0 else 3.0,
            s.n,
            math.sqrt(s.n) * s.m3 / s.m2**1.5 if s.m2 > 0 else 0.0,
        )


@dataclass(frozen=True)
class DesignContext:
    """What a check's design may ask: the true formulas, the false-pass rate, and pilot runs
    (``pilot(sim)`` returns ``{statistic: PilotStats}`` from a run on the stream ``pilot/<key>``)."""

    formulas: Any
    beta: float
    pilot: Callable[[Any], dict]


@dataclass(frozen=True)
class EvaluationContext:
    """What a check's evaluation reads: the simulations' results, the formulas under test
    (the true ones or a mutant), the per-test level and the false-pass rate."""

    results: dict
    formulas: Any
    per_test: float
    beta: float

    def result(self, measure):
        res = self.results[measure.sim.key]
        if isinstance(res, SimFailure):
            raise SimulationError(res.message)
        return res

    def summary(self, measure):
        """The :class:`~stats.inference.estimators.MomentSummary` of ``measure`` (its factor applied)."""
        s = self.result(measure).summary(measure.statistic).moments()
        return scale_moments(s, measure.factor) if measure.factor != 1.0 else s


class Outcome(NamedTuple):
    """A check's evaluation: the row's numeric columns, its state -- ``tested`` (a p-value for
    the family), ``holds``, ``refuted`` or ``error`` -- and the check's own notes."""

    numbers: dict
    state: str
    notes: list


def finite(x):
    """Whether ``x`` is a finite real number (``False`` for None, NaN, inf, non-numbers)."""
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


@functools.cache
def _found(module):
    # Found, not imported: the plan asks this of every check in the family, and importing
    # PyTorch costs ~1 s that a selection without PyTorch checks should not pay.  A broken
    # installation then fails loudly in the checks that import it.
    return importlib.util.find_spec(module) is not None


#: The end of the label of an erratum's corrected check.
CORRECTION_SUFFIX = " [corrected]"

#: The fields of :class:`~stats.formulas.Formulas` a check may name in ``uses``.
FORMULA_FIELDS = tuple(f.name for f in fields(Formulas))

#: What each optional requirement needs, and how a user gets it.
REQUIREMENTS = {"torch": ("torch", "PyTorch", "`make torch` adds the CPU build")}


def requirement_met(name):
    """Whether the optional part ``name`` (a key of :data:`REQUIREMENTS`) is installed here."""
    return _found(REQUIREMENTS[name][0])


# ------------------------------------------------------------------ the base class


@dataclass(frozen=True)
class Check:
    """One tested value of a claim; a subclass per kind (module docstring).

    Common fields: ``label`` (unique within its claim), ``uses`` (the fields of
    :class:`~stats.formulas.Formulas` its expected value calls, so a mutant of one of them
    re-evaluates it), ``requires`` (optional parts, e.g. ``"torch"``: without them the
    check is untestable *here* but keeps its place in the family), ``note``, ``macro``
    (the LaTeX macro that quotes its value in ``numbers.tex``), ``erratum``, and for a check of
    a sentence open to more than one reading or comparison, ``reading`` (which reading of the
    text's experiment it tests, e.g. "fresh keys for every query") and ``protocol`` (which
    comparison protocol, :data:`stats.claims.findings.PROTOCOLS`); both are columns of
    ``claims.csv`` (``docs/findings.md``).
    """

    label: str
    _: KW_ONLY
    uses: tuple = ()
    requires: tuple = ()
    note: str = ""
    macro: str | None = None
    erratum: Any = None
    reading: str = ""
    protocol: str = ""

    kind: ClassVar[str] = ""
    statistical: ClassVar[bool] = False
    tail_test: ClassVar[str | None] = None
    keeps_rows: ClassVar[bool] = False
    draws: ClassVar[bool] = True
    #: For ``make calibrate``: how the kind's false-fail rate is known (a key of
    #: :data:`CALIBRATIONS`; a class that names a ``kind`` must say, in its own body), and
    #: whether its estimate minus expected value, in MCSE units, gives a mutant's declared power.
    calibration: ClassVar[str] = ""
    power_from_shift: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "kind" not in cls.__dict__ or not cls.kind:
            return  # a shared base (SizedCheck), not a kind
        if "calibration" not in cls.__dict__ or cls.calibration not in CALIBRATIONS:
            raise TypeError(f"check kind {cls.kind!r} ({cls.__name__}) must say how its false-fail rate is known: "
                            f"a class attribute calibration, one of {sorted(CALIBRATIONS)}; got "
                            f"{cls.__dict__.get('calibration', 'none')!r}")
        if cls.calibration == "exact" and cls.exact_size is Check.exact_size:
            raise TypeError(f"check kind {cls.kind!r} ({cls.__name__}) is exact by construction, so it must compute "
                            "its size: define exact_size(n, alpha, formulas)")
        if cls.calibration in ("exact", "interval", "monte-carlo") and not cls.statistical:
            raise TypeError(f"check kind {cls.kind!r} ({cls.__name__}): a {cls.calibration!r} kind has a p-value, "
                            "so it must be statistical")

    def __post_init__(self):
        if type(self) is Check:
            raise TypeError("Check is the base class of the kinds of check; build a MeanCheck, ExactCheck, ... "
                            "(stats.claims.checks.KINDS lists them)")
        if not isinstance(self.label, str) or not self.label:
            raise ValueError(f"a check's label must be a non-empty string; got {self.label!r}")
        for name, allowed, what in (("uses", FORMULA_FIELDS, "fields of stats.Formulas"),
                                    ("requires", tuple(REQUIREMENTS), "optional parts")):
            value = getattr(self, name)
            if isinstance(value, str) or not isinstance(value, (tuple, list)):
                raise TypeError(f"check {self.label!r}: {name} must be a tuple of {what}; got {value!r}")
            unknown = [v for v in value if v not in allowed]
            if unknown:
                raise ValueError(f"check {self.label!r}: {name} must name {what} among {sorted(allowed)}; got {unknown[0]!r}")
            object.__setattr__(self, name, tuple(value))
        for name in ("reading", "protocol"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"check {self.label!r}: {name} must be a string; got {getattr(self, name)!r}")
        if self.protocol and self.protocol not in PROTOCOLS:
            raise ValueError(f"check {self.label!r}: protocol must be one of {PROTOCOLS} or empty; got {self.protocol!r}")
        for name in ("note", "macro"):
            value = getattr(self, name)
            if not (isinstance(value, str) or (name == "macro" and value is None)):
                raise TypeError(f"check {self.label!r}: {name} must be a string{' or None' if name == 'macro' else ''}; "
                                f"got {value!r}")
        if self.erratum is not None:
            if not isinstance(self.erratum, Erratum):
                raise TypeError(f"check {self.label!r}: erratum must be an Erratum; got {type(self.erratum).__name__}")
            if not hasattr(self, "stated"):
                raise ValueError(f"check {self.label!r}: an erratum corrects a stated number, and a {self.kind} check "
                                 "tests none (it has no 'stated' field)")
        if self.macro is not None and not hasattr(self, "stated"):
            raise ValueError(f"check {self.label!r}: a macro quotes a stated number, and a {self.kind} check tests none")
        self.validate()
        found = []
        for f in fields(self):
            v = getattr(self, f.name)
            found.extend([v] if isinstance(v, Measure) else [m for m in v if isinstance(m, Measure)] if isinstance(v, tuple) else [])
        object.__setattr__(self, "_measures", tuple(found))

    # -- what a kind defines

    def validate(self):
        """Raise ``ValueError``/``TypeError`` naming the field when the check is malformed."""

    @property
    def test(self):
        """The kind's name, as ``claims.csv`` writes it."""
        return self.kind

    @property
    def measures(self):
        """Every measure the check reads: its :class:`Measure` fields and tuples of them, in field order."""
        return self._measures

    def untestable_reason(self):
        """Why the registry cannot test this check on any machine (a moment the law lacks,
        a degenerate statistic), or ``None``.  Checks with a reason leave the family."""
        return None

    def pilot_measures(self):
        """The measures whose simulations need a pilot run before the design."""
        return ()

    def power_design(self, ctx: DesignContext, alpha):
        """``(n, design sd, how)``: rows per simulation it reads at per-test level ``alpha``."""
        raise NotImplementedError

    def exact_size(self, n, alpha, formulas):
        """For a kind exact by construction: the largest probability, over the values its null
        allows, that its test at level ``alpha`` rejects with ``n`` rows (computed, not simulated)."""
        raise NotImplementedError(f"a {self.kind} check is not exact by construction")

    def least_rows(self, alpha):
        """The fewest rows at which the check can decide what it must at level ``alpha``, whatever
        ``n_factor`` scales the design to (0: no floor beyond the planner's own)."""
        return 0

    def evaluate(self, ctx: EvaluationContext, design_sd) -> Outcome:
        """The check's :class:`Outcome` on ``ctx``'s results and formulas."""
        raise NotImplementedError

    # -- shared behaviour

    def missing_requirement(self):
        """Why this machine cannot run the check (an optional part not installed), or ``None``."""
        for req in self.requires:
            if not requirement_met(req):
                _, name, how = REQUIREMENTS[req]
                return f"needs {name}, which is not installed here ({how})"
        return None

    def corrected(self):
        """The check of an erratum's corrected value: same measures, corrected interval, no erratum."""
        return replace(self, label=f"{self.label}{CORRECTION_SUFFIX}", stated=self.erratum.corrected, erratum=None)

    def expected_or_error(self, formulas, numbers, notes):
        """``(expected, None)``, or ``(None, Outcome)`` with an error when the closed form is NaN or infinite."""
        expected = self.expected(formulas)
        if not finite(expected):
            numbers["expected"] = float("nan") if expected is None else expected
            return None, Outcome(numbers, "error", notes + [
                f"expected value is {expected!r}: a closed form that is NaN or infinite decides nothing"])
        return expected, None
