"""Pilots that choose a setting: the training claims' best learning rates, computed, never pasted.

A pilot is a simulation like any other, drawn on the engine from a seed of its own
(:attr:`~stats.settings.training.RatePilot.seed`, not the build's ``--seed``, so what it
chooses does not move with ``--seed``), with the implementations of
:data:`~stats.formulas.FORMULAS` whatever mutant a run plants (it chooses what is run, it
is not under test).  Its definition is a table in :mod:`stats.settings.training`.

:func:`best_rates` runs a pilot once and caches its result on disk, keyed by the pilot's
definition, the sources of every ``stats`` module below the claims and numpy's version:
a cache can only hold what running the pilot again would give, so no output depends on
whether it was warm.  The cache is ``$SDPA_CACHE``, else ``reports/.cache`` of the checkout
(whatever ``--out`` a build writes to), else the user's cache folder; processes that need a
pilot at once (``make reports`` runs the claims and the studies side by side) wait for the
first to finish it (a file lock) instead of drawing it twice.
"""

from __future__ import annotations

import functools
import hashlib
import json
from typing import NamedTuple

import numpy as np

from .cache import cache_dir, hash_sources, source_digest
from .io import locked_cache, write_text
from .engine.executors import Job, default_workers, run_simulations
from .engine.streams import stream_key
from .formulas import FORMULAS
from .training.simulations import LRSweepSim, TrainingSim
from .settings import fixes as _fixes
from .settings import training as _training
from .settings.training import RatePilot

__all__ = ["BaseRate", "RatePilotResult", "best_rates", "cache_dir", "half_decade", "mup_base_rates", "pilot_result",
           "run_rate_pilot", "source_digest", "t5_best_lr",
           "training_best_lr"]

#: Bumped when the cache file's layout changes.
_CACHE_FORMAT = 2


def half_decade(lr, direction):
    """The rate half a decade above (``direction`` +1) or below (-1) ``lr`` on the 1-3-10 series
    of the grids: 3 -> 10 -> 30 up, 0.03 -> 0.01 -> 0.003 down (a factor of 3 or 10/3)."""
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not (np.isfinite(lr) and lr > 0):
        raise ValueError(f"lr must be a positive finite number; got {lr!r}")
    if direction not in (1, -1):
        raise ValueError(f"direction must be +1 (up) or -1 (down); got {direction!r}")
    mantissa = lr / 10.0 ** np.floor(np.log10(lr))
    low = mantissa < 2  # on the 1s of the series, else on the 3s
    factor = (3.0 if low else 10.0 / 3.0) if direction == 1 else (0.3 if low else 1.0 / 3.0)
    return float(f"{lr * factor:.6g}")


class RatePilotResult:
    """A pilot's outcome: per cell, every rate's restricted mean (and its standard error), the
    grid as extended at its edges, and the rate the pilot's rule chose."""

    def __init__(self, pilot, points):
        #: ``{cell: [{"lr", "mean", "se", "n", "rows"}, ...]}`` in increasing rate (the grid and its extensions).
        self.pilot, self.points = pilot, points

    def extended(self, cell):
        """The rates the pilot added to ``cell``'s grid at its edges (none when the best was interior)."""
        grid = set(self.pilot.grid(cell[2]))
        return [p["lr"] for p in self.points[cell] if p["lr"] not in grid]

    def interior(self, cell):
        """Whether ``cell``'s best rate has a rate on each side (else it is a bound: the extension's cap was reached)."""
        lrs = [p["lr"] for p in self.points[cell]]
        return 0 < lrs.index(self.best[cell]) < len(lrs) - 1

    def edge(self, cell):
        """+1 when the best rate is the largest tried, -1 when the smallest, 0 when interior."""
        lrs = [p["lr"] for p in self.points[cell]]
        i = lrs.index(self.best[cell])
        return 1 if i == len(lrs) - 1 else -1 if i == 0 else 0

    @property
    def best(self):
        """``{cell: best rate}``: the smallest restricted mean, a tie to the smaller rate."""
        out = {}
        for cell, pts in self.points.items():
            # The rows are whole numbers of steps: their sums compare exactly (same n at every rate).
            sums = [float(np.sum(p["rows"])) for p in pts]
            out[cell] = pts[sums.index(min(sums))]["lr"]
        return out

    def paired_se(self, cell, lr_a, lr_b):
        """Standard error of the difference of two rates' restricted means (same draws at every rate)."""
        pts = {p["lr"]: np.asarray(p["rows"], dtype=float) for p in self.points[cell]}
        d = pts[lr_a] - pts[lr_b]
        return float(np.std(d, ddof=1) / np.sqrt(d.size))

    def to_json(self):
        return {str(_cell_text(c)): [{k: p[k] for k in ("lr", "mean", "se", "n", "rows")} for p in pts]
                for c, pts in self.points.items()}

    @classmethod
    def from_json(cls, pilot, data):
        points = {}
        for cell in pilot.cells:
            pts = data[_cell_text(cell)]
            lrs, grid = [p["lr"] for p in pts], list(pilot.grid(cell[2]))
            start = lrs.index(grid[0]) if grid[0] in lrs else -1
            if start < 0 or lrs[start:start + len(grid)] != grid or len(lrs) > len(grid) + pilot.max_extensions:
                raise ValueError("a cached pilot does not match its grid")
            points[cell] = [dict(p, rows=[float(v) for v in p["rows"]]) for p in pts]
        return cls(pilot, points)


def _cell_text(cell):
    (d_k, d_model), scaling, optimizer = cell
    return f"d_k={d_k}/d_model={d_model}/scaling={scaling}/optimizer={optimizer}"


def _cell_stream(pilot, cell):
    """The stream of one cell: the same draws at every rate of its grid (common random numbers)."""
    (d_k, d_model), scaling, optimizer = cell
    return stream_key(f"pilot/{pilot.name}", d_k=d_k, d_model=d_model, scaling=scaling, optimizer=optimizer,
                      steps=pilot.steps, n_keys=pilot.n_keys)


def _sim(pilot, cell, lr):
    (d_k, d_model), scaling, optimizer = cell
    return TrainingSim(d_k, scaling, optimizer, lr, pilot.steps, d_model, pilot.n_keys)


def _draw(pilot, cell_rates, *, workers, progress, desc):
    """One engine call: each cell's runs at one rate, on the cell's stream.  ``{cell: point}``."""
    jobs = [Job(_sim(pilot, cell, lr), pilot.runs, frozenset({pilot.statistic}), stream=_cell_stream(pilot, cell))
            for cell, lr in cell_rates]
    res = run_simulations(jobs, seed=pilot.seed, formulas=FORMULAS, workers=workers, progress=progress, desc=desc)
    out = {}
    for (cell, _), job in zip(cell_rates, jobs):
        rows = res[job.key].rows(pilot.statistic)
        out[cell] = dict(lr=float(job.sim.lr), mean=float(np.mean(rows)), se=float(np.std(rows, ddof=1) / np.sqrt(rows.size)),
                         n=int(rows.size), rows=[float(v) for v in rows])
    return out


def run_rate_pilot(pilot, *, workers=1, progress=False):
    """Run ``pilot`` (a :class:`~stats.settings.training.RatePilot`): its ``runs`` seeds a cell at
    every rate of the cell's grid; then, while a cell's best rate is at an edge of what it
    tried, one rate half a decade beyond that edge (:func:`half_decade`), at most
    ``pilot.max_extensions`` times (past the cap the best is a bound: :meth:`RatePilotResult.interior`).
    Every rate draws on the cell's one stream of the pilot's seed.  Returns a
    :class:`RatePilotResult`; the numbers do not depend on ``workers``."""
    if not isinstance(pilot, RatePilot):
        raise TypeError(f"pilot must be a RatePilot; got {type(pilot).__name__}")
    points = {cell: [] for cell in pilot.cells}
    depth = max(len(pilot.grid(cell[2])) for cell in pilot.cells)
    # One engine call per grid position: a call's jobs need streams of their own, and every rate
    # of a cell draws on the cell's one stream.
    for i in range(depth):
        cells = [cell for cell in pilot.cells if i < len(pilot.grid(cell[2]))]
        drawn = _draw(pilot, [(cell, pilot.grid(cell[2])[i]) for cell in cells], workers=workers, progress=progress,
                      desc=f"pilot {pilot.name} ({i + 1}/{depth})")
        for cell in cells:
            points[cell].append(drawn[cell])
    for k in range(pilot.max_extensions):
        result = RatePilotResult(pilot, points)
        edges = [(cell, result.edge(cell)) for cell in pilot.cells if result.edge(cell)]
        if not edges:
            break
        lrs = [(cell, half_decade(points[cell][-1 if e == 1 else 0]["lr"], e)) for cell, e in edges]
        drawn = _draw(pilot, lrs, workers=workers, progress=progress, desc=f"pilot {pilot.name} (extension {k + 1})")
        for (cell, e), (_, lr) in zip(edges, lrs):
            if e == 1:
                points[cell].append(drawn[cell])
            else:
                points[cell].insert(0, drawn[cell])
    return RatePilotResult(pilot, points)


def _definition_digest(pilot):
    """What a pilot's numbers depend on: its definition, the engine's streams for it, the code
    below the claims that draws it, and numpy's version."""
    h = hashlib.sha256()
    definition = dict(format=_CACHE_FORMAT, pilot={k: getattr(pilot, k) for k in pilot.__dataclass_fields__},
                      streams=[_cell_stream(pilot, c) for c in pilot.cells],
                      sims=[_sim(pilot, c, lr).key for c in pilot.cells for lr in pilot.grid(c[2])], numpy=np.__version__)
    h.update(json.dumps(definition, sort_keys=True, default=list).encode())
    hash_sources(h)
    return h.hexdigest()


@functools.lru_cache(maxsize=None)
def _cached_result(pilot):
    folder = cache_dir() / "pilots"
    digest = _definition_digest(pilot)
    path = folder / f"{pilot.name}-{digest[:20]}.json"

    def read():
        try:
            data = json.loads(path.read_text())
            if data.get("digest") == digest:
                return RatePilotResult.from_json(pilot, data["points"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
        return None

    def store(result):
        text = json.dumps(dict(pilot=pilot.name, digest=digest, best={_cell_text(c): lr for c, lr in result.best.items()},
                               points=result.to_json()), indent=1) + "\n"
        for old in folder.glob(f"{pilot.name}-*.json"):
            old.unlink()
        write_text(text, path)

    return locked_cache(folder / f"{pilot.name}.lock", read,
                        lambda: run_rate_pilot(pilot, workers=default_workers(), progress=True), store)


def best_rates(pilot):
    """``{cell: rate}`` that ``pilot`` chooses: drawn once per checkout (or per change of the code
    below the claims) and cached (module docstring)."""
    return dict(_cached_result(pilot).best)


def pilot_result(pilot):
    """The cached :class:`RatePilotResult` of ``pilot`` (drawn now if it is not cached)."""
    return _cached_result(pilot)


def training_best_lr():
    """The training claims' best grid rate per (shape, scaling, optimiser): what the pilot
    :data:`~stats.settings.training.RATE_PILOT` chooses (run once, then cached)."""
    return best_rates(_training.RATE_PILOT)


def t5_best_lr():
    """The T5 claims' best grid rate per (shape, scaling, optimiser): the folded head's own and
    the divided head's, over their runs' steps (:data:`~stats.settings.fixes.T5_RATE_PILOT`)."""
    return best_rates(_fixes.T5_RATE_PILOT)


class BaseRate(NamedTuple):
    """A parameterisation's base-width rate, chosen by :func:`mup_base_rates`: the rate, the
    bracket of it and its two grid neighbours that the transfer claims train, the runner-up
    rate, and the runner-up's mean final loss minus the rate's (paired over the pilot's seeds)
    with its standard error."""

    rate: float
    bracket: tuple
    runner_up: float
    margin: float
    se: float
    runs: int


def _mup_pilot_jobs():
    """``{(scaling, mup_base): (sim, job)}``: the muP base-rate pilot's sweeps, one per parameterisation."""
    grids = {(scaling, base): _fixes.MUP_STUDY_GRIDS[f"{scaling}/{base}"] for _, scaling, base in _fixes.PARAMETERISATIONS}
    out = {}
    for key, grid in grids.items():
        sim = LRSweepSim(_fixes.MUP_BASE, grid, key[0], "adam", _fixes.MUP_STEPS, mup_base=key[1])
        losses = frozenset(f"loss_at_{i}" for i in range(len(sim.lrs)))
        out[key] = sim, Job(sim, _fixes.MUP_PILOT_RUNS, losses,
                            stream=stream_key("pilot/mup-base-rate", scaling=key[0], base=str(key[1])))
    return out


def _draw_mup_base_rates(pilots):
    """:func:`mup_base_rates` drawn now from ``pilots`` (:func:`_mup_pilot_jobs`)."""
    res = run_simulations([job for _, job in pilots.values()], seed=_fixes.MUP_PILOT_SEED, formulas=FORMULAS,
                          workers=default_workers())
    out = {}
    for key, (sim, job) in pilots.items():
        rows = np.array([res[job.key].rows(f"loss_at_{i}") for i in range(len(sim.lrs))])
        means = rows.mean(axis=1)
        best = int(np.argmin(means))
        if best in (0, len(sim.lrs) - 1):
            raise RuntimeError(f"the muP base-rate pilot's best rate for {key} is its grid's edge ({sim.lrs[best]:g}); "
                               "widen MUP_STUDY_GRIDS so the optimum is interior")
        second = int(np.argsort(means)[1])
        diff = rows[second] - rows[best]
        out[key] = BaseRate(float(sim.lrs[best]), tuple(float(v) for v in sim.lrs[best - 1:best + 2]), float(sim.lrs[second]),
                            float(diff.mean()), float(diff.std(ddof=1) / np.sqrt(diff.size)), int(diff.size))
    return out


@functools.lru_cache(maxsize=None)
def mup_base_rates():
    """``{(scaling, mup_base): BaseRate}`` for the muP claims' parameterisations
    (:data:`~stats.settings.fixes.PARAMETERISATIONS`): each one's own best rate at the base width
    :data:`~stats.settings.fixes.MUP_BASE`, from a pilot on its own seed
    (:data:`~stats.settings.fixes.MUP_PILOT_SEED`; :data:`~stats.settings.fixes.MUP_PILOT_RUNS`
    seeds, every grid rate on the same draws).  Drawn once and cached on disk like the rate pilots
    (module docstring): every process that builds the registry (the claims, the report's numbers,
    page and findings) asks for it, and drawing it in each cost a draft seconds apiece
    (docs/performance.md).  A best rate at its
    grid's edge has no bracket: that is refused (the grid in
    :data:`~stats.settings.fixes.MUP_STUDY_GRIDS` must be widened)."""
    pilots = _mup_pilot_jobs()
    h = hashlib.sha256()
    definition = dict(format=_CACHE_FORMAT, seed=_fixes.MUP_PILOT_SEED, numpy=np.__version__,
                      jobs=[(job.sim.key, job.n, sorted(job.keep), job.stream) for _, job in pilots.values()])
    h.update(json.dumps(definition, sort_keys=True, default=str).encode())
    hash_sources(h)
    digest = h.hexdigest()
    folder = cache_dir() / "pilots"
    path = folder / f"mup-base-rates-{digest[:20]}.json"

    def read():
        try:
            data = json.loads(path.read_text())
            if data.get("digest") == digest:
                return {(scaling, base): BaseRate(rate, tuple(bracket), runner_up, margin, se, runs)
                        for scaling, base, (rate, bracket, runner_up, margin, se, runs) in data["rates"]}
        except (OSError, ValueError, KeyError, TypeError):
            pass
        return None

    def store(result):
        rates = [[scaling, base, list(rate)] for (scaling, base), rate in result.items()]
        for old in folder.glob("mup-base-rates-*.json"):
            old.unlink()
        write_text(json.dumps(dict(digest=digest, rates=rates), indent=1) + "\n", path)

    return locked_cache(folder / "mup-base-rates.lock", read, lambda: _draw_mup_base_rates(pilots), store)


def _table(result):
    """Lines of text: each cell's grid (and whether it was extended), the rate the pilot chooses
    (and whether it is interior), the restricted mean steps (and standard error) at every rate,
    and the paired difference from the runner-up."""
    lines = []
    for cell, pts in result.points.items():
        best = result.best[cell]
        ext = result.extended(cell)
        where = "interior" if result.interior(cell) else (
            f"AT THE EDGE after {len(ext)} extensions: a bound, best {'>=' if result.edge(cell) == 1 else '<='} {best:g}")
        grid = ", ".join(f"{p['lr']:g}" for p in pts)
        lines.append(_cell_text(cell) + f": best {best:g} ({where}); grid {grid}"
                     + (f"; extended by {', '.join(f'{v:g}' for v in ext)}" if ext else "; not extended"))
        for p in pts:
            lines.append(f"  lr={p['lr']:<8g} {p['mean']:8.2f} +- {p['se']:.2f}  (n={p['n']}) {'*' if p['lr'] == best else ''}")
        others = sorted((p for p in pts if p["lr"] != best), key=lambda p: p["mean"])
        if others and others[0]["mean"] < result.pilot.steps + 1:
            second = others[0]["lr"]
            diff = next(p["mean"] for p in pts if p["lr"] == best) - others[0]["mean"]
            lines.append(f"  runner-up {second:g}: {best:g} minus {second:g} = {diff:.2f} +- "
                         f"{result.paired_se(cell, best, second):.2f} (paired)")
    return lines


def main(argv=None):
    """``python -m stats.tuning``: run (or read from the cache) the training claims' rate pilot and
    print what it chooses, with every grid rate's restricted mean steps to accuracy."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m stats.tuning", description=main.__doc__)
    parser.parse_args(argv)
    for pilot in (_training.RATE_PILOT, _training.SMALL_FIX_PILOT, _fixes.T5_RATE_PILOT):
        result = pilot_result(pilot)
        print(f"pilot {pilot.name}: seed {pilot.seed}, {pilot.runs} runs a rate, {pilot.steps} steps, {pilot.rule}, "
              f"edges extended half a decade at a time (at most {pilot.max_extensions}); restricted mean steps to "
              f"sustained accuracy (censored at {pilot.steps + 1}); cache {cache_dir()}")
        print("\n".join(_table(result)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
