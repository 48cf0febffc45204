"""Draw what a plan needs, on the engine: one stream per simulation key, blocks on any
number of workers or a Dask cluster, merged in block order (the numbers do not depend on
where they ran)."""

from __future__ import annotations

import threading

from ..engine.executors import run_simulations
from ..formulas import FORMULAS
from .defaults import CHUNK_NUMBERS, DEFAULT_SEED

__all__ = ["Warming", "simulate", "warm_values"]

#: Formulas whose values are exact integrals or asymptotic constants: slow the first time, cached after.
SLOW_FORMULAS = frozenset({"saturation_exact", "saturation_asymptotics"})


def warm_values(checks, formulas):
    """Import what the design and evaluation use beyond ``import stats`` (scipy.stats and
    pandas, ~0.9 s), then evaluate the deterministic expected values (exact integrals,
    asymptotic constants) once, so that their caches are warm when the design and
    the evaluation ask; errors are left for the evaluation to report.  Run in a thread
    while worker processes simulate, where both overlap their work instead of preceding it."""
    import pandas  # noqa: F401
    import scipy.stats  # noqa: F401

    for ch in checks:
        expected = getattr(ch, "expected", None)
        if expected is None or not (not ch.draws or SLOW_FORMULAS & set(ch.uses)):
            continue
        try:
            expected(formulas)
        except Exception:  # noqa: BLE001 - the evaluation recomputes and reports it
            pass


class Warming:
    """``with Warming(checks, formulas) as w: ...`` -- ``w.start()`` runs :func:`warm_values` in
    a thread (called by an executor once its workers exist: never before a fork); the block
    waits for it on exit."""

    def __init__(self, checks, formulas):
        self.checks, self.formulas, self.threads = checks, formulas, []

    def start(self):
        t = threading.Thread(target=warm_values, args=(self.checks, self.formulas), daemon=True)
        t.start()
        self.threads.append(t)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for t in self.threads:
            t.join()
        return False


def simulate(the_plan, *, seed=DEFAULT_SEED, formulas=FORMULAS, workers=1, scheduler=None, progress=False, only=None):
    """Draw every simulation the plan needs: ``{key: SimResult or SimFailure}``.

    ``only`` restricts to a set of simulation keys (mutants re-run the ones they touch).
    While worker processes simulate, this process, otherwise idle, computes the exact
    values that the evaluation will need (they are cached).
    """
    jobs = [j for k, j in the_plan.jobs.items() if only is None or k in only]
    parallel = (workers > 1 or scheduler is not None) and only is None
    with Warming([p.check for p in the_plan.checks if not p.untestable], formulas) as warm:
        return run_simulations(
            jobs, seed=seed, formulas=formulas, workers=workers, scheduler=scheduler, progress=progress, record_errors=True,
            after_submit=warm.start if parallel else None, chunk_size=CHUNK_NUMBERS,
        )
