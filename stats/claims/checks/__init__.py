"""The kinds of check: one class each, registered here.

A kind owns its validation, its sample-size design and its evaluation (see
:mod:`stats.claims.checks.base` for the protocol); the runner only orchestrates.  Adding a
kind is one new class and one line in :data:`KINDS` (``docs/adding-a-check.md`` walks
through an example).
"""

from .base import (
    CALIBRATIONS,
    CORRECTION_SUFFIX,
    FORMULA_FIELDS,
    REQUIREMENTS,
    BoundSD,
    Check,
    ClosedFormSD,
    DesignContext,
    DesignSD,
    EvaluationContext,
    Outcome,
    PilotSD,
    PilotStats,
    SimulationError,
    design_sd,
    requirement_met,
)
from .categorical import CategoricalCheck
from .documentary import SOURCE_KINDS, DocumentaryCheck, PaperSource, RepoSource
from .deterministic import IDENTITY_RATE, ExactCheck, IdentityCheck, identity_rows
from .distribution import DistributionCheck
from .interval import IntervalCheck
from .moments import MeanCheck, RatioCheck, SizedCheck, TwoSampleCheck, VarianceCheck
from .proof import ProofCheck
from .share import ShareCheck

#: Every kind of check, by the name ``claims.csv`` writes in its ``test`` column.
KINDS = {
    cls.kind: cls
    for cls in (
        MeanCheck,
        VarianceCheck,
        RatioCheck,
        DistributionCheck,
        TwoSampleCheck,
        IntervalCheck,
        IdentityCheck,
        ExactCheck,
        ShareCheck,
        ProofCheck,
        CategoricalCheck,
        DocumentaryCheck,
    )
}

__all__ = [
    "CALIBRATIONS",
    "CORRECTION_SUFFIX",
    "FORMULA_FIELDS",
    "IDENTITY_RATE",
    "KINDS",
    "REQUIREMENTS",
    "BoundSD",
    "CategoricalCheck",
    "Check",
    "ClosedFormSD",
    "DesignContext",
    "DesignSD",
    "DistributionCheck",
    "DocumentaryCheck",
    "EvaluationContext",
    "ExactCheck",
    "IdentityCheck",
    "IntervalCheck",
    "MeanCheck",
    "Outcome",
    "PilotSD",
    "PaperSource",
    "PilotStats",
    "ProofCheck",
    "RatioCheck",
    "RepoSource",
    "SOURCE_KINDS",
    "SimulationError",
    "ShareCheck",
    "SizedCheck",
    "TwoSampleCheck",
    "VarianceCheck",
    "design_sd",
    "identity_rows",
    "requirement_met",
]
