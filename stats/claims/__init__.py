"""The claims: the schema, the statements grouped by the section's headings
(:mod:`stats.claims.statements`), the registry, the planted mutants and the runner."""

from types import ModuleType as _ModuleType


from .mutants import MUTANTS, Mutant
from .registry import REGISTRY, SECTIONS
from .runner import (
    DEFAULT_SEED,
    OK_VERDICTS,
    Plan,
    PlannedCheck,
    evaluate,
    evaluate_mutants,
    passed,
    plan,
    select_claims,
    simulate,
    verify_claims,
)
from .schema import Check, Claim, Erratum, Measure, Stated

__all__ = [name for name, value in dict(globals()).items() if not name.startswith("_") and not isinstance(value, _ModuleType)]
