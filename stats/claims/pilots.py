"""Pilot runs: a small draw of a simulation, on a stream of its own, that sizes the real one.

A check whose design sd comes from a pilot (:class:`~stats.claims.checks.PilotSD`), or
whose Edgeworth bound needs a statistic's skewness, reads the pilot of each simulation it
measures.  Pilots are drawn on the stream ``pilot/<key>``, so they never share draws with
the run they size, and a pilot's size depends only on the simulation's cost and the run's
``n_factor``.
"""

from __future__ import annotations

from ..engine.executors import Job, run_simulations
from .checks import PilotStats
from .defaults import CHUNK_NUMBERS, DRAFT_PILOT_MIN_ROWS, DRAFT_ROW_NUMBERS

__all__ = ["Pilots", "pilot_rows"]


def pilot_rows(sim, n_factor=1.0):
    """Rows of ``sim``'s pilot: about 4 million random numbers, fewer for a quick run (never
    below 200 rows; in a draft, ``n_factor < 1``, a costly simulation's pilot holds
    :data:`~stats.claims.defaults.DRAFT_ROW_NUMBERS` numbers' worth of rows, never below
    :data:`~stats.claims.defaults.DRAFT_PILOT_MIN_ROWS`).  The design takes an upper confidence
    bound on the pilot's sd, so a small pilot only makes n larger, never the check weaker."""
    cost = max(1.0, float(sim.cost))
    budget = (1 << 22) * min(1.0, 5.0 * n_factor)
    rows = min(20_000, max(200, budget // cost))
    if n_factor < 1:
        rows = min(rows, max(DRAFT_PILOT_MIN_ROWS, DRAFT_ROW_NUMBERS // cost))
    return int(rows)


class Pilots:
    """The pilot runs of one plan (one seed, one ``n_factor``), drawn once each and kept,
    keyed by the simulation's key and the pilot's rows (what determines its draws)."""

    def __init__(self, *, seed, formulas, n_factor=1.0, workers=1):
        self.seed, self.formulas, self.n_factor, self.workers = seed, formulas, n_factor, workers
        self._stats = {}

    def _key(self, sim):
        return sim.key, pilot_rows(sim, self.n_factor)

    def run(self, sims, *, after_submit=None):
        """Draw the pilots of every simulation in ``sims`` not drawn yet, all at once."""
        todo = {}
        for sim in sims:
            if self._key(sim) not in self._stats:
                todo[self._key(sim)] = Job(sim, pilot_rows(sim, self.n_factor), stream=f"pilot/{sim.key}")
        if not todo:
            if after_submit is not None:
                after_submit()
            return
        res = run_simulations(
            list(todo.values()), seed=self.seed, formulas=self.formulas, workers=self.workers, desc="pilot runs",
            after_submit=after_submit, chunk_size=CHUNK_NUMBERS,
        )
        for key, job in todo.items():
            self._stats[key] = {name: PilotStats.from_summary(s) for name, s in res[job.key].summaries.items()}

    def of(self, sim):
        """``{statistic: PilotStats}`` of ``sim``'s pilot (drawn now if it was not)."""
        self.run([sim])
        return self._stats[self._key(sim)]
