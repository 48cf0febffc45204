"""Constructors for checks, so that the statement modules read like the text they test.

Each returns an instance of one kind of check (:mod:`stats.claims.checks`).
``expected`` is always a function of the formulas under test (``F``), and ``uses`` names
the fields it reads, so mutants of those fields re-evaluate the check.
"""

from __future__ import annotations

import math

from ..models.scores import score_cumulants, score_tail_index
from .checks import (CategoricalCheck, DistributionCheck, DocumentaryCheck, ExactCheck, IdentityCheck, IntervalCheck, MeanCheck, ProofCheck, RatioCheck, ShareCheck,
                     TwoSampleCheck, VarianceCheck)
from .measures import Erratum, Measure, Stated

__all__ = [
    "Erratum",
    "Measure",
    "Stated",
    "categorical",
    "distribution",
    "documentary",
    "exact",
    "identity",
    "interval",
    "mean",
    "no",
    "proof",
    "ratio",
    "score_kurtosis_sd",
    "score_sd",
    "share",
    "stated_exact",
    "two_sample",
    "variance",
    "yes",
]


def score_sd(sim, scale="none"):
    """Closed-form sd of a score simulation's statistic (times the scale), for the design."""
    k = score_cumulants(sim.d_k, sim.rho, sigma_q=sim.sigma_q, sigma_k=sim.sigma_k, entries=sim.entries, scale=scale)
    return math.sqrt(k[1])


def score_kurtosis_sd(sim):
    """sqrt(kurtosis - 1) of a score simulation: the per-row sd of the log sample variance."""
    k = score_cumulants(sim.d_k, sim.rho, sigma_q=sim.sigma_q, sigma_k=sim.sigma_k, entries=sim.entries, scale="none")
    if not all(math.isfinite(x) for x in k):
        return math.inf
    return math.sqrt(max(2.0 + k[3] / k[1] ** 2, 0.0))


def _score_tail(sim):
    if hasattr(sim, "entries") and hasattr(sim, "rho"):
        return score_tail_index(sim.entries, sim.rho)
    return math.inf


def mean(label, measure, expected, *, uses, target=0.01, relative=True, sd=None, tail_index=None, **kw):
    """The mean of ``measure`` equals ``expected(F)``; ``sd``: 'pilot', a closed form (callable) or a bound."""
    return MeanCheck(label, measure=measure, expected=expected, uses=uses, target=target, relative=relative, sd=sd,
                     tail_index=_score_tail(getattr(measure, 'sim', None)) if tail_index is None else tail_index, **kw)


def variance(label, measure, expected, *, uses, target=0.02, sd=None, tail_index=None, **kw):
    """The variance of ``measure`` equals ``expected(F)``; the design sd defaults to the score's kurtosis."""
    sim = getattr(measure, "sim", None)
    return VarianceCheck(label, measure=measure, expected=expected, uses=uses, target=target,
                         sd=sd if sd is not None else (lambda sim=sim: score_kurtosis_sd(sim)),
                         tail_index=_score_tail(sim) if tail_index is None else tail_index, **kw)


def ratio(label, denominator, numerator, expected, *, uses, target=0.02, **kw):
    """Var(numerator) / Var(denominator) equals ``expected(F)``."""
    a, b = getattr(denominator, "sim", None), getattr(numerator, "sim", None)
    return RatioCheck(label, measure=denominator, measure_b=numerator, expected=expected, uses=uses, target=target,
                      sd=lambda a=a, b=b: math.hypot(score_kurtosis_sd(a), score_kurtosis_sd(b)),
                      tail_index=min(_score_tail(a), _score_tail(b)), **kw)


def two_sample(label, measure, measure_b, *, target=0.01, relative=True, sd="pilot", tail_index=None, **kw):
    """Equal means of the same statistic under two simulations (a shortcut vs the direct recipe)."""
    return TwoSampleCheck(label, measure=measure, measure_b=measure_b, target=target, relative=relative, sd=sd,
                          tail_index=min(_score_tail(getattr(measure, 'sim', None)), _score_tail(getattr(measure_b, 'sim', None))) if tail_index is None else tail_index,
                          **kw)


def distribution(label, measure, expected, *, uses, target=0.02, **kw):
    """The rows of ``measure`` follow the exact law ``expected(F)`` (Kolmogorov-Smirnov)."""
    return DistributionCheck(label, measure=measure, expected=expected, uses=uses, target=target, **kw)


def categorical(label, measure, expected, *, categories, uses, target=0.03, **kw):
    """The rows of ``measure`` (categories 0..K-1) are drawn with probabilities ``expected(F)`` (chi-square)."""
    return CategoricalCheck(label, measure=measure, expected=expected, categories=categories, uses=uses, target=target, **kw)


def identity(label, measure, *, rows=None, **kw):
    """No row of ``measure`` (a normalised error) exceeds 1."""
    return IdentityCheck(label, measure=measure, rows=rows, **kw)


def interval(label, stated, *, measure=None, inputs=(), derive=None, target=0.005, relative=False, sd="pilot", **kw):
    """A Monte Carlo estimate (a measure's mean, or ``derive`` of several means) in ``stated``'s interval."""
    return IntervalCheck(label, stated=stated, measure=measure, inputs=tuple(inputs), derive=derive, target=target,
                         relative=relative, sd=sd, **kw)


def share(label, stated, measure, *, target=0.45, **kw):
    """The share of rows where ``measure`` (0 or 1) is 1 lies in ``stated``'s interval (exact binomial test)."""
    return ShareCheck(label, stated=stated, measure=measure, target=target, **kw)


def proof(label, derive, *, shapes="", **kw):
    """A displayed equation proved by computer algebra: ``derive(F)`` returns ``(derived, displayed)``."""
    return ProofCheck(label, derive=derive, shapes=shapes, uses=("equations",), **kw)


def exact(label, stated, value, *, uses, **kw):
    """A deterministic value (``value(F)`` returns it, or ``(value, error bound)``) in ``stated``'s interval."""
    return ExactCheck(label, stated=stated, expected=value, uses=uses, **kw)


def stated_exact(label, text, value, *, uses, unit=None, erratum=None, macro=None, **kw):
    """The text's number ``text`` at its own precision against an exact value."""
    return exact(label, Stated.parse(text, unit=unit), value, uses=uses, erratum=erratum, macro=macro, **kw)


def yes(text):
    """A yes/no statement the text makes, as the interval around 1 (a source that agrees gives 1)."""
    return Stated.between(text, 0.5, 1.5)


def no(text):
    """A statement that something is not so, as the interval around 0 (a source that agrees gives 0)."""
    return Stated.between(text, -0.5, 0.5)


def documentary(label, *, fact, stated, found, source, source_says, verdict="holds", erratum=None, **kw):
    """A fact read at its source (:class:`~stats.claims.checks.DocumentaryCheck`): the text's ``fact``
    as ``stated``, the source's value ``found``, the citation ``source`` and the ``verdict`` the record supports."""
    return DocumentaryCheck(label, fact=fact, stated=stated, found=found, source=source, source_says=source_says,
                            verdict=verdict, erratum=erratum, **kw)
