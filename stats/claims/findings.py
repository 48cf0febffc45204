"""What the evidence says about a sentence of the text: the finding classes (``docs/findings.md``).

* ``holds`` -- the check passes as the text states it, its estimate inside the interval the text states;
* ``unsettled`` -- the check is not refuted, yet its estimate lies outside the interval the text
  states (:func:`unsettled`): the evidence leans against the text without refuting it at the
  family's level (the row's ``detectable`` says what it could have refuted), so it is not
  printed as holding;
* ``caveat`` -- the text's sentence is true under its own premise (another claim confirms it),
  and a consequence drawn from it fails in practice: recorded as an
  :class:`~stats.claims.measures.Erratum` of kind ``"caveat"``, with the measured
  qualification and the sentence the text could print instead;
* ``erratum`` -- a statement false under its own premise and plain reading: a number outside
  its interval under every reasonable reading of the experiment (a check's ``reading``), a
  comparison false under the protocol the sentence implies (:data:`PROTOCOLS`); graded by
  :func:`erratum_grade`.

That is the grading rule of ``docs/findings.md``; a finding it moved says why in one line
(``Erratum.regraded``).

A check's run verdict (:mod:`stats.claims.verdicts`) says whether the suite's run passed;
the finding says what that run found about the text.
"""

from __future__ import annotations

import math

__all__ = [
    "CAVEAT", "ERRATUM", "OWN_BEST", "PROTOCOLS", "SHARED_RATE", "FALSE_AS_STATED", "FINDINGS", "GRADES", "HOLDS", "LAST_DIGIT", "ROUNDING_SLIP", "SLIP_DIGITS",
    "UNSETTLED", "WRONG_NUMBER", "digits_off", "erratum_grade", "unsettled", "worst_finding",
]

HOLDS, UNSETTLED, CAVEAT, ERRATUM = "holds", "unsettled", "caveat", "erratum"
#: In order of gravity: a claim's finding is the gravest of its checks'.
FINDINGS = (HOLDS, UNSETTLED, CAVEAT, ERRATUM)

#: The two comparison protocols of a training comparison (``docs/findings.md``): every setting
#: at its own best learning rate, or every setting at one shared rate -- the best rate of the
#: setting the text recommends (the head divided by sqrt(d_k)).
OWN_BEST, SHARED_RATE = "own best rate", "shared rate"
PROTOCOLS = (OWN_BEST, SHARED_RATE)

ROUNDING_SLIP = "rounding slip"
LAST_DIGIT = "last digit"
WRONG_NUMBER = "wrong number"
FALSE_AS_STATED = "false as stated"
#: An erratum's grades, mildest first.
GRADES = (ROUNDING_SLIP, LAST_DIGIT, WRONG_NUMBER, FALSE_AS_STATED)
#: A stated number whose true value lies within this many units of its last digit of the
#: interval it claims was rounded the wrong way at a boundary (0.954903 written 0.96).
SLIP_DIGITS = 0.1


def _is_number(stated):
    """Whether ``stated`` is a number as the text writes it (a finite interval around a value)."""
    return all(math.isfinite(x) for x in (stated.value, stated.lo, stated.hi)) and stated.hi > stated.lo


def digits_off(stated, value):
    """How far ``value`` lies outside a stated number's rounding interval ``[lo, hi)``, in units of
    the number's last digit (``hi - lo``): 0 inside it; ``None`` for a statement that is not a
    number (an inequality, a range) or a value that is not finite."""
    if not _is_number(stated) or value is None or not math.isfinite(value):
        return None
    return max(stated.lo - value, value - stated.hi, 0.0) / (stated.hi - stated.lo)


def unsettled(stated, estimate):
    """Whether a check that was not refuted is *unsettled*: its finite ``estimate`` lies outside the
    closed interval ``[lo, hi]`` of what the text ``stated`` (None: a check that states no interval,
    an identity or a distribution, is never unsettled).  The ends count as inside: "at most 0.1"
    is stored as ``[-inf, 0.1)``, and an estimate of exactly 0.1 agrees with it."""
    if stated is None or estimate is None or not math.isfinite(estimate):
        return False
    return not stated.lo <= estimate <= stated.hi


def erratum_grade(stated, value):
    """``(grade, digits)`` of a refuted statement: a number by :func:`digits_off` -- at most
    :data:`SLIP_DIGITS` a ``rounding slip``, at most 1 its ``last digit``, beyond that a
    ``wrong number``; any other statement ``false as stated`` (``digits`` ``None``)."""
    d = digits_off(stated, value)
    if d is None:
        return FALSE_AS_STATED, None
    return (ROUNDING_SLIP if d <= SLIP_DIGITS else LAST_DIGIT if d <= 1 else WRONG_NUMBER), d


def worst_finding(findings):
    """The gravest of ``findings`` (:data:`FINDINGS` order); empty strings (nothing decided) are skipped,
    and nothing decided at all gives ``""``."""
    ranked = [FINDINGS.index(f) for f in findings if f in FINDINGS]
    return FINDINGS[max(ranked)] if ranked else ""
