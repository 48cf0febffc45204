"""The claims: what a check reads (:mod:`.measures`), the kinds of check (:mod:`.checks`) and
the constructors the statements build them with (:mod:`.check_builders`), a claim
(:mod:`.claim`), the statements grouped by the section's headings (:mod:`.statements`), the
registry, the statements no claim can test (:mod:`.unchecked`), the planted mutants
(:mod:`.mutants`), and the run -- plan (:mod:`.planning`), simulate (:mod:`.simulating`),
evaluate (:mod:`.evaluation`), audit the corrected sentences (:mod:`.sentences`), re-run the mutants (:mod:`.mutant_runner`) -- with its
settings (:mod:`.defaults`) and verdicts (:mod:`.verdicts`).

The registry and the mutants are built on first access (``stats.REGISTRY``), not when
``stats`` is imported.
"""

import importlib as _importlib

from .checks import (
    KINDS,
    BoundSD,
    CategoricalCheck,
    Check,
    ClosedFormSD,
    DistributionCheck,
    DocumentaryCheck,
    ExactCheck,
    IdentityCheck,
    IntervalCheck,
    MeanCheck,
    PaperSource,
    PilotSD,
    RepoSource,
    ShareCheck,
    RatioCheck,
    TwoSampleCheck,
    VarianceCheck,
)
from .defaults import DEFAULT_SEED, FALSE_PASS, FAMILY_ALPHA
from .simulating import simulate
from .evaluation import COLUMNS, evaluate, passed
from .measures import Erratum, Measure, Stated
from .mutant_runner import evaluate_mutants
from .planning import Plan, PlannedCheck, plan, select_claims
from .runner import verify_claims
from .sentences import audit_sentence, establishes, flagged_words, static_audit
from .claim import Claim
from .unchecked import NOT_CHECKABLE, Unchecked
from .verdicts import OK_VERDICTS

#: Names served on first access (PEP 562): building them imports every statement module.
LAZY_NAMES = {"REGISTRY": ".registry", "SECTIONS": ".registry", "MUTANTS": ".mutants", "Mutant": ".mutants"}

__all__ = sorted([
    "COLUMNS", "DEFAULT_SEED", "FALSE_PASS", "FAMILY_ALPHA", "KINDS", "NOT_CHECKABLE", "OK_VERDICTS",
    "BoundSD", "CategoricalCheck", "Check", "Claim", "ClosedFormSD", "DistributionCheck", "DocumentaryCheck", "Erratum", "ExactCheck", "IdentityCheck",
    "IntervalCheck", "MeanCheck", "Measure", "PaperSource", "PilotSD", "RepoSource", "ShareCheck", "Plan", "PlannedCheck", "RatioCheck", "Stated",
    "TwoSampleCheck", "Unchecked", "VarianceCheck",
    "audit_sentence", "establishes", "evaluate", "evaluate_mutants", "flagged_words", "passed", "plan", "select_claims", "simulate",
    "static_audit", "verify_claims",
    *LAZY_NAMES,
])


def __getattr__(name):
    if name in LAZY_NAMES:
        return getattr(_importlib.import_module(LAZY_NAMES[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *LAZY_NAMES})
