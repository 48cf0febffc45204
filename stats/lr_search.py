r"""An adaptive learning-rate search for one training cell: coarse, refine, confirm, on a quarter-decade lattice.

A module of its own beside :mod:`stats.tuning` (which runs fixed-grid pilots over many cells):
one idea, a staged search for one cell, with its own record and cache.

The rates are the lattice :math:`\eta_k = 10^{k/4}` (three significant digits; :func:`lattice_rate`).
For a cell (``d_k``, ``d_model``, ``scaling``, ``optimizer`` and any other
:class:`~stats.training.simulations.TrainingSim` fields in ``options``):

1. **coarse**: ``coarse_runs`` runs at every other lattice rate (half a decade apart), ``coarse_width``
   of them centred on ``start``; while the best is at an end, one more rate half a decade beyond
   it, at most ``max_extensions`` times.  A best still at an end is a *bound*: the search stops
   there and says so (``interior`` False, ``bound`` +1 or -1), never passing it off as an optimum.
2. **refine**: ``refine_runs`` runs at the coarse best and its lattice neighbours a quarter and a
   half decade either side (extended a quarter decade at a time the same way).
3. **confirm**: ``confirm_runs`` runs at the refined best and its two quarter-decade neighbours;
   should a neighbour do better, the next rate beyond it is added (at most ``max_extensions``
   times).  The chosen rate is the confirm stage's best; it is interior when it has a rate on
   each side there.

**The rule** (every stage): the smallest restricted mean of ``steps_to_accuracy`` (steps to sustained
90% accuracy on the held-out probe, censored at ``steps + 1``); a tie -- as when no run of either
rate learns -- goes to the smaller mean final probe loss, each run's loss capped at its initial
loss (a diverged run counts as one that learned nothing, as in Wortsman et al.'s LR sensitivity),
and a tie of both to the smaller rate.

**Giving up** (``give_up``, refine and confirm; runs that stop once they learn): a stage draws the
previous stage's best first, then the other rates nearest first.  Once a rate has drawn, a rate
drawn after it gives up (:func:`~stats.training.trainer.train_heads`' ``give_up_after``) on every
run that has not learned by step :math:`c = S^* - (n - 1)`, with :math:`S^*` the smallest sum of
restricted steps among the stage's rates drawn so far and :math:`n` runs a rate: such a run's steps
would exceed :math:`c` and each other run's are at least 1, so the rate's sum would exceed
:math:`S^*`, and by the rule it cannot be the stage's best.  Its abandoned runs count ``steps + 1``,
which keeps it behind.  So giving up changes no stage's best, no extension and no chosen rate: only
what the rates that cannot be chosen cost, and their rows (the point says how many runs it gave up
on, and after which step).  The coarse stage never gives up: its final losses make the LR window
and sensitivity (:func:`stats.inference.lr_window.lr_window`).

**What is trained** (``task``): ``"head"``, the single head of the training claims
(:class:`~stats.training.simulations.TrainingSim`; a run learns at sustained 90% probe accuracy), or
``"recall"``, the small transformer on Zoology's multi-query associative recall
(:class:`~stats.training.transformer_simulations.RecallSim`, one head a layer unless ``options`` say
otherwise, so ``d_k = d_model / n_heads``; Adam only; a run learns when it solves the task, read at its
checkpoints, and its loss is the held-out loss).  The rule, the stages and giving up are the same.

**Seeds**: stage ``i`` (0 coarse, 1 refine, 2 confirm) draws on the ``i``-th child of ``seed``
(:class:`numpy.random.SeedSequence` spawn keys), so more runs in one stage change no other stage's
draws; inside a stage every rate draws on the cell's one stream (common random numbers: the
same initialisations and episodes at every rate).  The numbers do not depend on ``workers`` or on
a Dask ``scheduler``.  :func:`cached_rate_search` keeps a search on disk like the pilots
(:func:`stats.tuning.cache_dir`), keyed by every argument, the sources below the claims and
numpy's version.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import numbers
from dataclasses import asdict, dataclass, fields
from typing import Mapping

import numpy as np

from .engine.executors import Job, default_workers, run_simulations
from .engine.streams import as_seed_sequence, canonical, stream_key
from .formulas import FORMULAS
from .io import locked_cache, write_text
from .settings import training as _training
from .settings.decisive import SEARCH_START
from .training.diagnostics import CHECKPOINTS
from .training.stopping import HOLD_STEPS
from .training.simulations import TrainingSim
from .training.transformer_simulations import RecallSim
from .tuning import cache_dir, source_digest

__all__ = ["RatePoint", "RateSearch", "SearchStage", "cached_rate_search", "draw_searches", "lattice_rate", "profile_search",
           "profile_searches", "search_rate"]

STAGES = ("coarse", "refine", "confirm")
#: The cell's own fields: the search sets them, ``options`` may not.
_CELL_FIELDS = ("d_k", "d_model", "scaling", "optimizer", "lr")
#: Bumped when the cache file's layout changes.
_CACHE_FORMAT = 3
#: The largest lattice index either way (rates 1e-8 to 1e8).
_MAX_INDEX = 32


def lattice_rate(k):
    r""":math:`10^{k/4}` to three significant digits: the search's rate number ``k`` (an int)."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or abs(k) > _MAX_INDEX:
        raise ValueError(f"k must be an integer from {-_MAX_INDEX} to {_MAX_INDEX}; got {k!r}")
    return float(f"{10.0 ** (int(k) / 4):.3g}")


def _lattice_index(lr, name="start"):
    if isinstance(lr, bool) or not isinstance(lr, (int, float)):
        raise TypeError(f"{name} must be a positive learning rate; got {lr!r}")
    if not (math.isfinite(lr) and 10.0 ** (-_MAX_INDEX / 4) <= lr <= 10.0 ** (_MAX_INDEX / 4)):
        raise ValueError(f"{name} must be a learning rate from 1e-8 to 1e8; got {lr!r}")
    return int(round(4 * math.log10(lr)))


@dataclass(frozen=True)
class RatePoint:
    """One rate of a stage: its runs' restricted mean steps to accuracy (censored at steps + 1) and
    mean capped final probe loss, each with its standard error, the rows behind them, and each
    run's probe loss at initialisation (the same at every rate of a stage: common random numbers).
    Per run too, read off the probe: ``frozen_rows``, the share of its queries on the key they chose
    at step 0 at each checkpoint (:func:`~stats.training.diagnostics.checkpoint_steps`; a run that
    stopped, having learned, keeps its value at the stop), and its final mean target logit
    (``logit_rows``) and query--target-key cosine (``cosine_rows``).  ``give_up_after`` is the step
    after which its runs that had not learned were abandoned (None: none was; module docstring) and
    ``abandoned`` how many were: their steps count ``steps + 1`` and their other rows are read where
    they were abandoned, so a point with ``abandoned`` runs says only that it cannot be chosen."""

    lr: float
    n: int
    steps_mean: float
    steps_se: float
    loss_mean: float
    loss_se: float
    steps_rows: tuple
    loss_rows: tuple
    initial_rows: tuple
    frozen_rows: tuple = ()
    logit_rows: tuple = ()
    cosine_rows: tuple = ()
    give_up_after: int | None = None
    abandoned: int = 0

    def order(self):
        """The rule's sort key: restricted steps (their exact sum), then capped loss, then the rate."""
        return (float(np.sum(self.steps_rows)), self.loss_mean, self.lr)


@dataclass(frozen=True)
class SearchStage:
    """A stage: its name, runs a rate, points in increasing rate, its best rate and whether that is
    interior (-1/+1: at the bottom/top end after the stage's extensions)."""

    name: str
    runs: int
    points: tuple
    best: float
    edge: int

    @property
    def rates(self):
        return tuple(p.lr for p in self.points)

    def losses(self):
        """``(rates, losses, initial)`` for :func:`~stats.inference.lr_window.lr_window` and
        :func:`~stats.inference.lr_window.lr_sensitivity`: the stage's rates (evenly spaced in log
        rate), its capped final probe losses (rates, runs) and each run's initial probe loss."""
        return (self.rates, np.array([p.loss_rows for p in self.points]), np.array(self.points[0].initial_rows))


@dataclass(frozen=True)
class RateSearch:
    """A search's record: the cell (its options included), seed, stages run (coarse only when its
    best was a bound), the chosen rate, and whether it is interior; ``bound`` is +1 (the best rate
    is at least ``rate``) or -1 (at most) when it is not, else 0; ``task`` what was trained
    (module docstring)."""

    cell: tuple
    seed: int
    stages: tuple
    rate: float
    interior: bool
    bound: int
    task: str = "head"

    def stage(self, name):
        """The stage called ``name`` (coarse, refine or confirm)."""
        for s in self.stages:
            if s.name == name:
                return s
        raise ValueError(f"name must be a stage this search ran ({', '.join(s.name for s in self.stages)}); got {name!r}")

    def to_json(self):
        return asdict(self)

    @classmethod
    def from_json(cls, data):
        rows = ("steps_rows", "loss_rows", "initial_rows", "logit_rows", "cosine_rows")
        stages = tuple(SearchStage(**{**s, "points": tuple(RatePoint(**{**p, **{r: tuple(p[r]) for r in rows},
                                                                        "frozen_rows": tuple(map(tuple, p["frozen_rows"]))})
                                                             for p in s["points"])}) for s in data["stages"])
        cell = (*data["cell"][:4], tuple(tuple(o) for o in data["cell"][4]))
        return cls(cell, data["seed"], stages, data["rate"], data["interior"], data["bound"], data.get("task", "head"))


_LOSS_FINAL, _LOSS_INITIAL = f"loss_{CHECKPOINTS - 1}", "loss_0"
_FROZEN = tuple(f"frozen_{k}" for k in range(CHECKPOINTS))
_LOGIT_FINAL, _COSINE_FINAL = f"target_logit_{CHECKPOINTS - 1}", f"cosine_{CHECKPOINTS - 1}"


class _HeadRuns:
    """What a search of the single head trains (:class:`~stats.training.simulations.TrainingSim`): a
    run has learned ``HOLD_STEPS`` after its ``steps_to_accuracy`` (its accuracy must hold that long).
    ``probe_lr`` is a rate every optimiser takes, at which a cell's options are validated."""

    sim_class, lag, stream_name, probe_lr = TrainingSim, HOLD_STEPS, "lr-search", 1e-2
    steps_row, loss_final, loss_initial, logit_final = "steps_to_accuracy", _LOSS_FINAL, _LOSS_INITIAL, _LOGIT_FINAL
    frozen, cosine = _FROZEN, (_COSINE_FINAL,)

    def defaults(self):
        return {"steps": _training.STEPS, "n_keys": _training.N_KEYS}

    def sim(self, cell, lr, give_up_after):
        d_k, d_model, scaling, optimizer, options = cell
        return TrainingSim(d_k=d_k, d_model=d_model, scaling=scaling, optimizer=optimizer, lr=lr, **dict(options),
                           give_up_after=give_up_after)

    def stops(self, sim):
        return sim.stop_when_learned


class _RecallRuns:
    """What a search of the transformer on MQAR trains (:class:`~stats.training.transformer_simulations.RecallSim`):
    a run stops once it has solved the task, read at its checkpoints (no lag), under Adam only."""

    sim_class, lag, stream_name, probe_lr = RecallSim, 0, "lr-search-recall", 1e-3
    steps_row, loss_final, loss_initial, logit_final = "steps_to_solve", "loss_end", "loss_0", "max_logit_end"
    frozen, cosine = (), ()

    def defaults(self):
        return {}

    def sim(self, cell, lr, give_up_after):
        d_k, d_model, scaling, optimizer, options = cell
        if optimizer != "adam":
            raise ValueError(f"optimizer must be 'adam' for task 'recall' (RecallSim trains with Adam); got {optimizer!r}")
        sim = RecallSim(d_model=d_model, scaling=scaling, lr=lr, **dict(options), give_up_after=give_up_after)
        if d_k * sim.n_heads != d_model:
            raise ValueError(f"d_k must be d_model / n_heads = {d_model} / {sim.n_heads} for task 'recall'; got {d_k}")
        return sim

    def stops(self, sim):
        return True


#: What a search can train, by its ``task`` name (module docstring).
_TASKS = {"head": _HeadRuns(), "recall": _RecallRuns()}


def _runs_of(task):
    if not isinstance(task, str) or task not in _TASKS:
        raise ValueError(f"task must be one of {', '.join(map(repr, _TASKS))}; got {task!r}")
    return _TASKS[task]


def _check_options(options, task="head"):
    """``options`` as a sorted tuple of (field, value): fields of ``task``'s simulation other than the cell's."""
    kind = _runs_of(task)
    sim_name = kind.sim_class.__name__
    if options is None:
        options = {}
    if not isinstance(options, Mapping):
        raise TypeError(f"options must be a mapping of {sim_name} fields; got {type(options).__name__}")
    allowed = {f.name for f in fields(kind.sim_class)} - set(_CELL_FIELDS) - {"give_up_after"}
    for name in options:
        if name not in allowed:
            raise ValueError(f"options may hold {sim_name} fields other than the cell's ({', '.join(sorted(allowed))}); "
                             f"got {name!r}")
    merged = {**kind.defaults(), **options}
    return tuple(sorted(merged.items()))


def _sim(cell, lr, give_up_after=None, task="head"):
    return _runs_of(task).sim(cell, lr, give_up_after)


def _stream(cell, task="head"):
    """The cell's stream in a stage: every rate, every option, but not the rate (common random numbers)."""
    d_k, d_model, scaling, optimizer, options = cell
    return stream_key(_runs_of(task).stream_name, d_k=d_k, d_model=d_model, scaling=scaling, optimizer=optimizer,
                      **{name: canonical(v) for name, v in options})


def _stage_seed(seed, stage):
    """The ``stage``-th child of ``seed`` (what ``SeedSequence(seed).spawn(3)[stage]`` gives, without
    spawn's counter: the same child however often it is asked for)."""
    root = as_seed_sequence(seed)
    return np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, stage))


def _draw(cell, lr, runs, stage_seed, *, give_up_after=None, task="head", workers, scheduler, progress):
    """``runs`` runs of ``cell`` at ``lr`` on the stage's stream, giving up after ``give_up_after``
    (None: never): a :class:`RatePoint`."""
    kind = _runs_of(task)
    sim = _sim(cell, lr, give_up_after, task)
    rows = {kind.steps_row, "abandoned", kind.loss_final, kind.loss_initial, kind.logit_final, *kind.frozen, *kind.cosine}
    job = Job(sim, runs, frozenset(rows), stream=_stream(cell, task))
    res = run_simulations([job], seed=stage_seed, formulas=FORMULAS, workers=workers, scheduler=scheduler,
                          progress=progress, desc=f"lr search {lr:g}")[job.key]
    steps = res.rows(kind.steps_row).astype(float)
    init = res.rows(kind.loss_initial).astype(float)
    final = res.rows(kind.loss_final).astype(float)
    # A diverged run's loss (inf or nan) counts as its initial loss, as every worse one does.
    loss = np.where(np.isfinite(final), np.minimum(final, init), init)
    n = steps.size
    se = (lambda x: float(np.std(x, ddof=1) / math.sqrt(n))) if n > 1 else (lambda x: math.inf)
    frozen = (np.column_stack([res.rows(name).astype(float) for name in kind.frozen]) if kind.frozen else ())
    return RatePoint(float(lr), int(n), float(steps.mean()), se(steps), float(loss.mean()), se(loss),
                     tuple(float(v) for v in steps), tuple(float(v) for v in loss), tuple(float(v) for v in init),
                     tuple(tuple(float(v) for v in run) for run in frozen),
                     tuple(float(v) for v in res.rows(kind.logit_final)),
                     tuple(float(v) for name in kind.cosine for v in res.rows(name)),
                     give_up_after, int(res.rows("abandoned").sum()))


def _run_stage(name, ks, step, runs, max_extensions, draw, *, give_up=None, lag=HOLD_STEPS):
    """Points at lattice indices ``ks``; while the best is at an end (and extensions are left), one
    more ``step`` lattice steps beyond it.  With ``give_up`` (a stage's budget of steps: giving up
    is only worth it before it), ``ks[0]`` is drawn first, the others nearest it first, and each
    after the first gives up after step S* - (runs - 1) (module docstring); ``lag`` is how many steps
    after its step to accuracy a run is seen to have learned.  Returns (stage, best index)."""
    pts = {}

    def draw_at(k):
        drawn = [p for p in pts.values() if not p.abandoned]
        cap = None
        if give_up is not None and drawn:
            cap = int(min(sum(p.steps_rows) for p in drawn)) - (runs - 1)
            cap = cap if cap + lag < give_up else None  # a run the budget would end anyway: no cap
        pts[k] = draw(k, cap)

    for k in (sorted(ks, key=lambda k: (abs(k - ks[0]), k)) if give_up is not None else ks):
        draw_at(k)
    for i in range(max_extensions + 1):
        order = sorted(pts)
        best = min(order, key=lambda k: pts[k].order())
        edge = -1 if best == order[0] else 1 if best == order[-1] else 0
        if edge == 0 or i == max_extensions:
            break
        nxt = best + edge * step
        if abs(nxt) > _MAX_INDEX:
            break
        draw_at(nxt)
    order = sorted(pts)
    return SearchStage(name, runs, tuple(pts[k] for k in order), pts[best].lr, edge), best


def search_rate(*, d_k, scaling, optimizer, seed, start, d_model=None, options=None, coarse_runs=4, refine_runs=8,
                confirm_runs=24, coarse_width=5, max_extensions=3, give_up=True, task="head", workers=1, scheduler=None,
                progress=False):
    """Search one cell's learning rate (module docstring): coarse, refine, confirm.  ``start`` is a
    rate near which to centre the coarse grid (snapped to the lattice); ``task`` what is trained
    (``"head"`` or ``"recall"``) and ``options`` any other fields of its simulation
    (:class:`~stats.training.simulations.TrainingSim`, whose ``steps`` and ``n_keys`` default to the
    training claims' :data:`~stats.settings.training.STEPS` and ``N_KEYS``, or
    :class:`~stats.training.transformer_simulations.RecallSim`).  ``give_up`` lets the refine and
    confirm stages give up on a rate that can no longer be chosen, where runs stop once they learn
    (``stop_when_learned`` in a head's ``options``; a recall run always does; module docstring): the
    chosen rate is the same either way.  Returns a :class:`RateSearch`, the same for any
    ``workers``/``scheduler``."""
    d_model = d_k if d_model is None else d_model
    kind = _runs_of(task)
    opts = _check_options(options, task)
    cell = (d_k, d_model, scaling, optimizer, opts)
    probe = _sim(cell, kind.probe_lr, task=task)  # validates the cell and its options
    as_seed_sequence(seed)
    if isinstance(seed, np.random.SeedSequence):
        raise TypeError("seed must be a non-negative int (a search's record and cache name it); got a SeedSequence")
    k0 = _lattice_index(start)
    runs = {}
    for name, value, minimum in (("coarse_runs", coarse_runs, 2), ("refine_runs", refine_runs, 2),
                                 ("confirm_runs", confirm_runs, 2), ("coarse_width", coarse_width, 3),
                                 ("max_extensions", max_extensions, 0)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not minimum <= value <= 100_000:
            raise ValueError(f"{name} must be an integer from {minimum} to 100000; got {value!r}")
        runs[name] = int(value)
    if not isinstance(give_up, bool):
        raise TypeError(f"give_up must be True or False; got {give_up!r}")
    budget = probe.steps if give_up and kind.stops(probe) else None
    if abs(k0) + runs["coarse_width"] > _MAX_INDEX:
        raise ValueError(f"start and coarse_width reach past the lattice (1e-8 to 1e8); got {start!r}, {coarse_width!r}")
    pool = dict(workers=workers, scheduler=scheduler, progress=progress)

    def drawer(stage, n):
        stage_seed = _stage_seed(seed, stage)
        return lambda k, cap: _draw(cell, lattice_rate(k), n, stage_seed, give_up_after=cap, task=task, **pool)

    half = runs["coarse_width"] // 2
    coarse_ks = [k0 + 2 * (j - half) for j in range(runs["coarse_width"])]
    coarse, kc = _run_stage("coarse", coarse_ks, 2, runs["coarse_runs"], runs["max_extensions"], drawer(0, runs["coarse_runs"]))
    if coarse.edge:
        return RateSearch(cell, int(seed), (coarse,), coarse.best, False, coarse.edge, task)
    refine, kr = _run_stage("refine", [kc + j for j in (0, -2, -1, 1, 2)], 1, runs["refine_runs"], runs["max_extensions"],
                            drawer(1, runs["refine_runs"]), give_up=budget, lag=kind.lag)
    if refine.edge:
        return RateSearch(cell, int(seed), (coarse, refine), refine.best, False, refine.edge, task)
    confirm, _ = _run_stage("confirm", [kr, kr - 1, kr + 1], 1, runs["confirm_runs"], runs["max_extensions"],
                            drawer(2, runs["confirm_runs"]), give_up=budget, lag=kind.lag)
    return RateSearch(cell, int(seed), (coarse, refine, confirm), confirm.best, confirm.edge == 0, confirm.edge, task)


def _digest(arguments):
    h = hashlib.sha256()
    h.update(json.dumps(dict(format=_CACHE_FORMAT, arguments=arguments, numpy=np.__version__), sort_keys=True,
                        default=canonical).encode())
    h.update(source_digest().encode())
    return h.hexdigest()


def _cache_io(frozen_arguments):
    """A search's arguments and its cache file's lock, reader and writer (``cache_dir()/lr-search``)."""
    arguments = dict(frozen_arguments)
    arguments["options"] = dict(arguments["options"]) if arguments["options"] is not None else None
    folder = cache_dir() / "lr-search"
    digest = _digest({k: (sorted(v.items()) if isinstance(v, dict) else v) for k, v in arguments.items()})
    path = folder / f"{digest[:24]}.json"

    def read():
        try:
            data = json.loads(path.read_text())
            if data.get("digest") == digest:
                return RateSearch.from_json(data["search"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
        return None

    def store(result):
        write_text(json.dumps(dict(digest=digest, search=result.to_json()), indent=1) + "\n", path)

    return arguments, folder / f"{digest[:24]}.lock", read, store


def _search_cached(frozen_arguments, *, workers, progress):
    arguments, lock, read, store = _cache_io(frozen_arguments)
    return locked_cache(lock, read, functools.partial(search_rate, **arguments, workers=workers, progress=progress), store)


@functools.lru_cache(maxsize=None)
def _cached(frozen_arguments):
    return _search_cached(frozen_arguments, workers=default_workers(), progress=True)


def _frozen(arguments):
    """``cached_rate_search``'s arguments, checked, as a hashable key."""
    for name in ("workers", "scheduler", "progress"):
        if name in arguments:
            raise TypeError(f"{name} is not an argument of cached_rate_search (the search runs on all cores)")
    arguments = {"d_model": None, "options": None, **arguments}
    options = arguments["options"]
    if options is not None and not isinstance(options, Mapping):
        raise TypeError(f"options must be a mapping of TrainingSim fields; got {type(options).__name__}")
    return tuple(sorted((k, tuple(sorted(v.items())) if isinstance(v, Mapping) else v) for k, v in arguments.items()))


def cached_rate_search(**arguments):
    """:func:`search_rate` run once per checkout (per change of its arguments, the sources below the
    claims or numpy's version) and kept in ``cache_dir()/lr-search`` (no ``workers``: the cache's
    numbers do not depend on them, and it runs on all this process's cores)."""
    return _cached(_frozen(arguments))


def _profile_arguments(profile, shape, scaling, optimizer, warmup):
    return dict(d_k=shape[0], d_model=shape[1], scaling=scaling, optimizer=optimizer, seed=profile.seed,
                start=SEARCH_START[optimizer], options=profile.run_options(warmup), coarse_runs=profile.coarse_runs,
                refine_runs=profile.refine_runs, confirm_runs=profile.confirm_runs)


@functools.lru_cache(maxsize=None)
def profile_search(profile, shape, scaling, optimizer, warmup):
    """The search of one cell of an evidence profile (:class:`~stats.settings.decisive.DecisiveProfile`):
    ``shape`` (d_k, d_model), the head's ``scaling``, the ``optimizer`` and its ``warmup``, on the
    profile's seed, runs a stage and run options, from :data:`~stats.settings.decisive.SEARCH_START`
    (cached on disk by :func:`cached_rate_search`, in memory here: the claims and the study read it)."""
    return cached_rate_search(**_profile_arguments(profile, shape, scaling, optimizer, warmup))


def _step_cost(frozen_arguments):
    """What a training step of the search's cell costs, up to a constant: d_k d_model."""
    arguments = dict(frozen_arguments)
    return arguments["d_k"] * (arguments["d_model"] or arguments["d_k"])


def _draw_search(frozen_arguments):
    """One search drawn in a worker process, on that process alone (its cache file is the result)."""
    _search_cached(frozen_arguments, workers=1, progress=False)


def _remote_search(frozen_arguments):
    """One search drawn on a Dask worker, on that worker's one core: its record as JSON (the caller keeps it)."""
    arguments, _, _, _ = _cache_io(frozen_arguments)
    return search_rate(**arguments, workers=1).to_json()


def _searches_on_cluster(missing, scheduler, bar):
    """The ``missing`` searches, one Dask task each, kept in this machine's cache as they finish."""
    from distributed import Client, as_completed as completed

    client = Client(scheduler) if isinstance(scheduler, str) else scheduler
    try:
        futures = {client.submit(_remote_search, f, pure=False, priority=_step_cost(f)): f for f in missing}
        for future in completed(futures):
            _, lock, read, store = _cache_io(futures[future])
            locked_cache(lock, read, lambda done=future: RateSearch.from_json(done.result()), store)
            bar.update()
    finally:
        if isinstance(scheduler, str):
            client.close()


def draw_searches(argument_sets, *, workers=None, scheduler=None, desc="rate searches"):
    """Draw the searches of ``argument_sets`` (each :func:`cached_rate_search`'s keyword arguments) that
    are not cached yet, side by side: one search a process on ``workers`` processes (default: all
    cores), or one search a task on the Dask cluster at ``scheduler`` (an address or a
    ``distributed.Client``), each kept in this machine's cache as it finishes, so that
    :func:`cached_rate_search` then reads it.  A search's stages and rates run one after another and
    a small cell's draw is one block, so searches drawn one at a time would hold one core; the numbers
    are those of :func:`cached_rate_search`, whatever ``workers`` or ``scheduler``.  A lone missing
    search, or any with one worker, is left to :func:`cached_rate_search`, which runs it on all cores
    when it is asked for.  Returns how many were drawn here."""
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from tqdm.auto import tqdm

    from .engine.executors import pool_context
    from .engine.malloc import tune_malloc

    workers = default_workers() if workers is None else workers
    if isinstance(workers, bool) or not isinstance(workers, numbers.Integral) or workers < 1:
        raise ValueError(f"workers must be a positive integer; got {workers!r}")
    frozen = [_frozen(arguments) for arguments in argument_sets]
    missing = [f for f in dict.fromkeys(frozen) if _cache_io(f)[2]() is None]
    missing.sort(key=_step_cost, reverse=True)  # the widest first, so the pool drains evenly
    if missing and scheduler is not None:
        with tqdm(total=len(missing), desc=desc, unit="search") as bar:
            _searches_on_cluster(missing, scheduler, bar)
        return len(missing)
    if len(missing) > 1 and workers > 1:
        # The engine's malloc settings in every worker, as its own pool has them: a worker forked from a
        # caller that did not set them maps and faults in its arrays afresh (stats.engine.malloc).
        with ProcessPoolExecutor(max_workers=min(workers, len(missing)), mp_context=pool_context(),
                                 initializer=tune_malloc) as pool:
            futures = [pool.submit(_draw_search, f) for f in missing]  # all submitted before the bar starts its thread
            for future in tqdm(as_completed(futures), total=len(missing), desc=desc, unit="search"):
                future.result()
        return len(missing)
    return 0


def profile_searches(profile, *, workers=None, scheduler=None):
    """``{(shape, optimizer, warmup, scaling): RateSearch}`` for every search of ``profile``
    (:meth:`~stats.settings.decisive.DecisiveProfile.searches`), the ones not cached yet drawn side
    by side (:func:`draw_searches`); the numbers are those of :func:`profile_search`, whatever
    ``workers`` or ``scheduler``."""
    keys = profile.searches()
    draw_searches([_profile_arguments(profile, key[0], key[3], key[1], key[2]) for key in keys], workers=workers,
                  scheduler=scheduler, desc=f"rate searches ({profile.name} profile)")
    return {key: profile_search(profile, key[0], key[3], key[1], key[2]) for key in keys}


def _table(search):
    """Lines of text: each stage's rates with their restricted mean steps and capped final loss
    (standard errors), the stage's best, and its LR sensitivity and window with their MCSE."""
    from .inference.lr_window import lr_sensitivity, lr_window

    where = "interior" if search.interior else f"A BOUND: the best rate is {'>=' if search.bound == 1 else '<='} {search.rate:g}"
    lines = [f"chosen rate {search.rate:g} ({where})"]
    for stage in search.stages:
        lines.append(f"{stage.name}: {stage.runs} runs a rate, best {stage.best:g}"
                     + ("" if stage.edge == 0 else f" (at the {'top' if stage.edge == 1 else 'bottom'} end)"))
        for p in stage.points:
            lines.append(f"  lr={p.lr:<8g} steps {p.steps_mean:7.2f} +- {p.steps_se:5.2f}   final loss {p.loss_mean:.4f} +- "
                         f"{p.loss_se:.4f}{'  *' if p.lr == stage.best else ''}"
                         + (f"  (gave up on {p.abandoned} of {p.n} runs after step {p.give_up_after}: cannot be chosen)"
                            if p.abandoned else ""))
        rates, losses, initial = stage.losses()
        s, w = lr_sensitivity(rates, losses, initial, seed=search.seed), lr_window(rates, losses, initial, seed=search.seed)
        lines.append(f"  LR sensitivity {s.value:.4f} +- {s.mcse:.4f}; window {w.decades:.2f} +- {w.mcse:.2f} decades "
                     f"[{w.low:g}, {w.high:g}]{' (reaches the grid end: a lower bound)' if w.reaches_edge else ''}")
    return lines


def main(argv=None):
    """``python -m stats.lr_search``: search one cell's learning rate (or read it from the cache) and
    print every stage's statistics, with the LR sensitivity and window of each stage's grid."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m stats.lr_search", description=main.__doc__)
    parser.add_argument("--d-k", type=int, required=True)
    parser.add_argument("--d-model", type=int, default=None)
    parser.add_argument("--scaling", default="sqrt")
    parser.add_argument("--optimizer", default="adam")
    parser.add_argument("--start", type=float, required=True, help="a rate to centre the coarse grid on")
    parser.add_argument("--seed", type=int, default=_training.LR_SEARCH_SEED)
    parser.add_argument("--steps", type=int, default=_training.STEPS)
    parser.add_argument("--coarse-runs", type=int, default=4)
    parser.add_argument("--refine-runs", type=int, default=8)
    parser.add_argument("--confirm-runs", type=int, default=24)
    args = parser.parse_args(argv)
    search = cached_rate_search(d_k=args.d_k, d_model=args.d_model, scaling=args.scaling, optimizer=args.optimizer,
                                seed=args.seed, start=args.start, options={"steps": args.steps},
                                coarse_runs=args.coarse_runs, refine_runs=args.refine_runs, confirm_runs=args.confirm_runs)
    d_k, d_model, scaling, optimizer, options = search.cell
    print(f"d_k={d_k}/d_model={d_model}/scaling={scaling}/optimizer={optimizer} "
          + " ".join(f"{k}={v}" for k, v in options) + f"; seed {search.seed}; cache {cache_dir()}")
    print("\n".join(_table(search)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
