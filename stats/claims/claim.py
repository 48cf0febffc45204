r"""A claim: each quantitative statement of section 4.3 as an executable claim.

A :class:`Claim` carries an id, the section heading it comes from, a paraphrase, the
closed form it asserts, and its checks -- one per tested value.  A check is an instance of
one kind, a class each in :mod:`stats.claims.checks` (registered in
:data:`~stats.claims.checks.KINDS`, whose class docstrings say what each decides): the
Monte Carlo tests of a mean, a variance, a ratio of variances, two means, an interval and
a law, which are members of the Holm family, and the identity and exact checks, decided
outright.

A check names what it measures (a :class:`Measure`: a per-row statistic of a
simulation), what it expects (a function of the :class:`~stats.formulas.Formulas` under
test, so planted mutants run against the same draws) and how its sample size is designed
(a :class:`~stats.claims.checks.DesignSD`: closed form, bound or pilot run).

A statement the evidence refutes is a finding about the text, recorded as an
:class:`Erratum` on the check it refutes; the runner then demands that it stays
refuted, like a strict xfail, and tests the erratum's corrected value as a check of its
own, which must pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .checks import Check
from .measures import Erratum, Measure, Stated

__all__ = ["Check", "Claim", "Erratum", "Measure", "Stated"]


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
        for c in self.checks:
            if not isinstance(c, Check):
                raise TypeError(f"claim {self.id!r}: its checks must be Check instances (a kind of check); got {type(c).__name__}")
