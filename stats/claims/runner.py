"""Run the claims registry: plan, simulate, evaluate -- the three steps, each in its own module.

1. **Plan** (:func:`~stats.claims.planning.plan`): the family, the level, each check's
   design and each simulation's size, from the whole registry.
2. **Simulate** (:func:`~stats.claims.simulating.simulate`): every simulation the plan
   needs, on the engine.
3. **Evaluate** (:func:`~stats.claims.evaluation.evaluate`): each check by its kind, Holm
   over the family, verdicts.

:func:`~stats.claims.mutant_runner.evaluate_mutants` re-runs the planted mistakes on the same
draws.  What a kind of check means lives in its class (:mod:`stats.claims.checks`).
"""

from __future__ import annotations

from ..formulas import FORMULAS
from .defaults import DEFAULT_SEED
from .simulating import simulate
from .evaluation import evaluate
from .planning import plan

__all__ = ["verify_claims"]


def verify_claims(claims=None, *, select=None, seed=DEFAULT_SEED, n_factor=1.0, formulas=FORMULAS, workers=1, scheduler=None,
                  progress=False):
    """Plan, simulate and evaluate; returns the tidy results table."""
    the_plan = plan(claims, select=select, seed=seed, n_factor=n_factor, workers=workers)
    results = simulate(the_plan, seed=seed, formulas=formulas, workers=workers, scheduler=scheduler, progress=progress)
    return evaluate(the_plan, results, formulas=formulas)
