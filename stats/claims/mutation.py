"""Run the planted mistakes (:mod:`stats.claims.mutants`) on the same draws as the true formulas.

A mutant replaces fields of :class:`~stats.formulas.Formulas`; the simulations that call
one of them are drawn again (same streams, so the same random numbers), and the checks
that read them or call a replaced formula are evaluated again.  Every other check keeps
its numbers (the evaluation's cache is keyed on what determines them).
"""

from __future__ import annotations

import math

from ..formulas import FORMULAS, changed_fields
from .defaults import DEFAULT_SEED
from .drawing import simulate
from .evaluation import evaluate, failing

__all__ = ["affected_checks", "evaluate_mutants", "mutant_tiers", "touched_simulations"]


def touched_simulations(the_plan, formulas, base=FORMULAS):
    """Keys of the plan's simulations that call a field in which ``formulas`` differs from ``base``."""
    changed = changed_fields(formulas, base)
    return {k for k, job in the_plan.jobs.items() if set(getattr(job.sim, "uses", ())) & changed}


def affected_checks(the_plan, formulas, touched, base=FORMULAS):
    """The plan's checks a mutant can move: those reading a touched simulation or calling a replaced formula."""
    changed = changed_fields(formulas, base)
    return [p for p in the_plan.checks if set(p.check.uses) & changed or any(ms.sim.key in touched for ms in p.check.measures)]


def mutant_tiers(the_plan, touched):
    """``touched`` (simulation keys) split into tiers to re-draw in turn, the checks that are
    cheapest to decide first.

    A check needs the touched simulations it reads; checks are taken in order of what those
    cost (the plan's rows times each simulation's cost model, ties by claim and label: never
    a measured time, so that a mutant's row is the same on every run and any number of
    workers), and their simulations in that order.
    The first tier holds the cheapest check's simulations, and each later tier about twice
    the cost of the one before (the last takes what is left): a mutant that the cheapest
    check catches draws that check's simulations only, and one that only the costliest catch
    draws everything once, no more.  A touched simulation no check reads is never drawn.
    No simulation: one empty tier (the mutant can still fail a check that calls the field).
    """
    def cost(key):
        return float(the_plan.jobs[key].n * float(the_plan.jobs[key].sim.cost))

    needs = []
    for p in the_plan.checks:
        keys = sorted({ms.sim.key for ms in p.check.measures} & set(touched))
        if keys:
            needs.append((sum(cost(k) for k in keys), p.claim.id, p.check.label, keys))
    order = []
    for *_, keys in sorted(needs):
        order.extend(k for k in keys if k not in order)
    if not order:
        return [[]]
    tiers, budget, current, spent = [], sorted(needs)[0][0], [], 0.0
    for k in order:
        current.append(k)
        spent += cost(k)
        if spent >= budget:
            tiers.append(current)
            current, spent, budget = [], 0.0, 2 * budget
    return tiers + ([current] if current else [])


def evaluate_mutants(the_plan, results, mutants, *, seed=DEFAULT_SEED, workers=1, scheduler=None, progress=False):
    """Run each mutant on the same draws; one row per mutant (caught when a check fails).

    A mutant re-draws only the simulations that call a field it replaces, in tiers that start
    with the cheapest check's and double in cost (:func:`mutant_tiers`), and stops after the
    first tier that makes some check fail: ``checks_failing`` counts the failures seen by then.  Checks it
    cannot affect keep their cached numbers.  The result does not depend on the order of
    ``mutants``.
    """
    import pandas as pd

    cache = {}
    evaluate(the_plan, results, cache=cache)  # the true formulas' numbers, shared by every mutant
    rows = []
    for m in mutants:
        touched = touched_simulations(the_plan, m.formulas)
        tiers = mutant_tiers(the_plan, touched)
        mutated, done, bad, table = dict(results), set(), None, None
        for tier in tiers:
            if tier:
                mutated.update(simulate(the_plan, seed=seed, formulas=m.formulas, workers=workers, scheduler=scheduler,
                                        progress=progress, only=set(tier)))
                done |= set(tier)
            ready = [p for p in the_plan.checks if all(ms.sim.key not in touched or ms.sim.key in done for ms in p.check.measures)]
            part = the_plan.part(ready)
            table = evaluate(part, mutated, formulas=m.formulas, cache=cache)
            bad = failing(table, part)
            if len(bad):
                break
        rows.append(
            dict(
                mutant=m.name,
                description=m.description,
                claim=";".join(sorted(set(bad["claim"]))),
                checks_failing=int(len(bad)),
                verdicts=";".join(sorted(set(bad["verdict"]))),
                min_p_value=float(table["p_value"].min()) if table["p_value"].notna().any() else math.nan,
                simulations_rerun=len(done),
                caught=bool(len(bad)),
            )
        )
    return pd.DataFrame(rows)
