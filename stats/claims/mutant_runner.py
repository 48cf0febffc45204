"""Run the planted mistakes (:mod:`stats.claims.mutants`) on the same draws as the true formulas.

A mutant replaces fields of :class:`~stats.formulas.Formulas`; the simulations that call
one of them are drawn again (same streams, so the same random numbers), and the checks
that read them or call a replaced formula are evaluated again.  Every other check keeps
its numbers (the evaluation's cache is keyed on what determines them).
"""

from __future__ import annotations

import math

from ..engine.executors import pool_context
from ..engine.malloc import tune_malloc
from ..formulas import FORMULAS, changed_fields
from .defaults import DEFAULT_SEED
from .simulating import simulate
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
    cost (the plan's rows times each simulation's ``effort`` model, ties by claim and label: never
    a measured time, so that a mutant's row is the same on every run and any number of
    workers), and their simulations in that order.
    The first tier holds the cheapest check's simulations, and each later tier about twice
    the cost of the one before (the last takes what is left): a mutant that the cheapest
    check catches draws that check's simulations only, and one that only the costliest catch
    draws everything once, no more.  A touched simulation no check reads is never drawn.
    No simulation: one empty tier (the mutant can still fail a check that calls the field).
    """
    def cost(key):
        return _redraw_effort(the_plan, [key])

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


def _redraw_effort(the_plan, keys):
    """What re-drawing the plan's simulations ``keys`` costs: rows times each one's ``effort``."""
    return sum(float(the_plan.jobs[k].n * float(the_plan.jobs[k].sim.effort)) for k in keys)


def evaluate_mutants(the_plan, results, mutants, *, seed=DEFAULT_SEED, workers=1, scheduler=None, progress=False):
    """Run each mutant on the same draws; one row per mutant (caught when a check fails).

    A mutant re-draws only the simulations that call a field it replaces, in tiers that start
    with the cheapest check's and double in cost (:func:`mutant_tiers`), and stops after the
    first tier that makes some check fail: ``checks_failing`` counts the failures seen by then.  Checks it
    cannot affect keep their cached numbers.  The result does not depend on the order of
    ``mutants``, nor on ``workers``: with several local workers the mutants themselves run
    side by side, each in one worker process (a tier is often one small simulation, which a
    pool of its own would run on one core, after starting the pool).
    """
    import pandas as pd

    mutants = list(mutants)
    cache = {}
    evaluate(the_plan, results, cache=cache)  # the true formulas' numbers, shared by every mutant
    if scheduler is None and workers > 1 and len(mutants) > 1 and pool_context().get_start_method() == "fork":
        rows = _rows_side_by_side(the_plan, results, mutants, seed, workers, cache)
    else:
        rows = [_mutant_row(the_plan, results, m, seed=seed, workers=workers, scheduler=scheduler, progress=progress,
                            cache=cache) for m in mutants]
    return pd.DataFrame(rows)


def _mutant_row(the_plan, results, m, *, seed, workers, scheduler, progress, cache):
    """The row of mutant ``m`` (:func:`evaluate_mutants`)."""
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
    return dict(
        mutant=m.name,
        description=m.description,
        claim=";".join(sorted(set(bad["claim"]))),
        checks_failing=int(len(bad)),
        verdicts=";".join(sorted(set(bad["verdict"]))),
        min_p_value=float(table["p_value"].min()) if table["p_value"].notna().any() else math.nan,
        simulations_rerun=len(done),
        caught=bool(len(bad)),
    )


#: What the forked workers of :func:`_rows_side_by_side` read (inherited, never pickled: the
#: plan and the results are large).  Set only while its pool runs.
_SHARED = {}


def _shared_row(i):
    the_plan, results, mutants, seed, cache = _SHARED["args"]
    return i, _mutant_row(the_plan, results, mutants[i], seed=seed, workers=1, scheduler=None, progress=False, cache=cache)


def _rows_side_by_side(the_plan, results, mutants, seed, workers, cache):
    """Every mutant's row, ``workers`` mutants at a time, the costliest first tier first."""
    from concurrent.futures import ProcessPoolExecutor, as_completed

    def first_tier(m):
        return _redraw_effort(the_plan, mutant_tiers(the_plan, touched_simulations(the_plan, m.formulas))[0])

    order = sorted(range(len(mutants)), key=lambda i: (-first_tier(mutants[i]), i))
    rows = {}
    _SHARED["args"] = (the_plan, results, mutants, seed, cache)
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=pool_context(), initializer=tune_malloc) as pool:
            futures = [pool.submit(_shared_row, i) for i in order]
            try:
                for f in as_completed(futures):
                    i, row = f.result()
                    rows[i] = row
            except BaseException:
                for f in futures:
                    f.cancel()
                raise
    finally:
        _SHARED.clear()
    return [rows[i] for i in range(len(mutants))]
