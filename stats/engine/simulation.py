r"""The simulation protocol: what every simulated model provides to the engine.

A simulation is a frozen dataclass (its parameters) that subclasses :class:`Simulation`
and says

* ``key`` -- its stream key, spelled out field by field (:func:`~stats.engine.streams.stream_key`);
* ``statistics`` -- the names of the per-row statistics it yields;
* ``cost`` -- random numbers drawn per row (sizes tasks and pilots, drives progress bars);
* ``effort`` -- the work of a row in the same units, where it is not proportional to
  ``cost`` (default: ``cost``); it orders the tasks (largest first) and what a mutant
  re-draws (cheapest first), and changes no number;
* ``run_block(sim_seed, block, rows, formulas, chunk_size)`` -- the statistics of the
  ``rows`` rows of block ``block``, drawn from that block's streams, as a dict of 1-D
  float arrays of length ``rows``;
* ``uses`` -- the names of the :class:`~stats.formulas.Formulas` entries that
  ``run_block`` calls, so a mutant that replaces one of them re-runs exactly the
  simulations it affects.

A row is whatever the model draws independently: one score, one query with its keys,
one attention head.  ``run_block`` must compute each row's values independently of how
many rows the block holds or how it is cut into chunks, so that results depend on
``(seed, key, n)`` only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .streams import BLOCK_ROWS
from .summaries import RowSummary

__all__ = ["SimResult", "Simulation", "block_count", "block_rows_of"]


class Simulation:
    """Base class of the simulated models (see the module docstring)."""

    block_rows: ClassVar[int] = BLOCK_ROWS
    uses: ClassVar[tuple[str, ...]] = ()
    statistics: ClassVar[tuple[str, ...]] = ()

    @property
    def key(self) -> str:  # pragma: no cover - every model defines it
        raise NotImplementedError

    @property
    def cost(self) -> float:  # pragma: no cover
        raise NotImplementedError

    @property
    def effort(self) -> float:
        """A row's work in units of ``cost`` (the default: ``cost``).  A model whose rows carry
        fixed work that ``cost`` leaves out says so here; ``cost`` itself also sizes pilots, so
        it cannot change without changing the numbers."""
        return float(self.cost)

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):  # pragma: no cover
        raise NotImplementedError

    def central_moments(self, statistic):
        """Exact central moments (mu_2, ..., mu_6) of one row's ``statistic`` where the model
        knows them in closed form, else ``None``.  Used to design tests (their tail error),
        never as a value under test."""
        return None

    def __str__(self):
        return self.key


def block_count(sim, n):
    """Number of blocks holding ``n`` rows of ``sim``."""
    return -(-int(n) // sim.block_rows)


def block_rows_of(sim, n, block):
    """Rows in block ``block`` of an ``n``-row run of ``sim``."""
    return min(sim.block_rows, int(n) - block * sim.block_rows)


@dataclass(frozen=True)
class SimResult:
    """What the engine returns for one simulation: per-statistic summaries and kept rows."""

    sim: Simulation
    n: int
    summaries: dict[str, RowSummary]
    samples: dict[str, np.ndarray] = field(default_factory=dict)
    seconds: float = 0.0  # CPU time of the threads that ran its tasks, summed (not wall time; a child process is not counted)

    def summary(self, statistic) -> RowSummary:
        try:
            return self.summaries[statistic]
        except KeyError:
            raise KeyError(f"simulation {self.sim.key} yields {sorted(self.summaries)}, not {statistic!r}") from None

    def rows(self, statistic) -> np.ndarray:
        try:
            return self.samples[statistic]
        except KeyError:
            raise KeyError(f"rows of {statistic!r} were not kept for {self.sim.key}") from None
