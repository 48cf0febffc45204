r"""The suite's own error rates, measured: every claim re-run over many independent seeds.

One plan (designed once, at a reduced size ``n_factor``) is simulated and evaluated under
``seeds`` independent root seeds, spawned from one :class:`numpy.random.SeedSequence`.
How a check's false-fail rate is known is its kind's ``calibration``
(:data:`~stats.claims.checks.CALIBRATIONS`).  A kind exact by construction (the share
checks' exact binomial test) is not simulated: :func:`exact_levels` computes each such check's
size at the sizes used.  A deterministic kind has no p-value.  Per ``"monte-carlo"`` check (a
p-value resting on an approximation) whose null is true by construction (no erratum):

* its p-values must be uniform on [0, 1]: Kolmogorov-Smirnov against U(0, 1)
  (``scipy.stats.kstest``);
* its rejection rate at 0.05 must be consistent with 0.05: exact two-sided binomial test
  (``scipy.stats.binomtest``).

Both families are Holm-corrected over the checks at :data:`CALIBRATION_ALPHA`; a check
whose corrected p-value falls below it is *miscalibrated*.  A conservative check (p-values
piling up near 1, as the tail correction of :func:`~stats.inference.tails.conservative_pvalue`
can make them at small n) is reported as such and is not a failure: its false-fail rate is
below its level, which is the promise a check makes.

Per mutant (a planted mistake), the share of seeds in which some check fails must reach
its *declared power*: 1 where a deterministic check catches it (an exact check, an
identity violated on the rows, or an ``ERROR`` from a NaN); otherwise the power, at the
calibration's sizes, of its most sensitive mean, variance, ratio or two-sample check
against the shift the mutant introduces (the mean over seeds of its estimate minus
expected value beyond the true formulas', in units of the check's MCSE, at the design
level).  A mutant caught only by a Kolmogorov-Smirnov check gets no declared power from
that check (its shift is not a mean), which can leave its row testing nothing (its
``detectable_shortfall`` is then NaN).  A one-sided exact binomial
test at :data:`CALIBRATION_ALPHA` (Holm over mutants) decides.

The mutants run on the first ``mutant_seeds`` seeds only (they are most of the cost: a
training mutant re-draws every run it touches), the null checks on all ``seeds``; each table
says what its seed count can detect (``detectable_rejection_rate``, ``detectable_shortfall``).
A seed draws only what these numbers read (:func:`_one_seed`): the null checks' simulations,
and each mutant's touched ones in the verify's tiers, stopping at a deterministic catch.  A
mutant that a check drawing nothing catches (a proof, an exact value) is caught on every seed
alike, and is evaluated once (:func:`_caught_without_draws`).
"""

from __future__ import annotations

import math
import os
import time
import warnings
import zipfile
from typing import Any, NamedTuple

import numpy as np

# pandas and scipy.stats are imported where they are used (see stats/models/__init__.py).
from .._validation import check_alpha
from ..engine.executors import pool_context
from ..inference.significance import holm_adjust
from .checks import CORRECTION_SUFFIX
from .defaults import CALIBRATION_MUTANT_SEEDS, CALIBRATION_SEEDS, DEFAULT_SEED
from .simulating import simulate
from .evaluation import evaluate, failing, statistical_rows
from .mutant_runner import affected_checks, mutant_tiers, touched_simulations
from .planning import plan
from .verdicts import ERROR

__all__ = [
    "CALIBRATION_ALPHA",
    "CALIBRATION_LEVEL",
    "CALIBRATION_MUTANT_SEEDS",
    "CALIBRATION_POWER",
    "Calibration",
    "calibrate",
    "calibration_passed",
    "calibration_seeds",
    "exact_levels",
    "level_counts",
    "rejection_rate_detectable",
    "shortfall_detectable",
]

CALIBRATION_LEVEL = 0.05  # the level whose rejection rate is checked
#: A mutant's ``by_check`` when no check it moves shifts a mean at the calibration's sizes (its
#: declared power is then the level's, about 0, and its row tests nothing).
NO_DECLARED_POWER = "none: no check's mean moves at these sizes"
CALIBRATION_ALPHA = 1e-3  # family-wise level of the calibration's own tests
#: The probability at which a table's "detectable" discrepancy is flagged.
CALIBRATION_POWER = 0.9


def calibration_seeds(seed, count):
    """``count`` independent root seeds spawned from ``SeedSequence(seed)`` (64-bit integers)."""
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 2:
        raise ValueError(f"seeds must be an integer >= 2; got {count!r}")
    return [int(s.generate_state(1, np.uint64)[0]) for s in np.random.SeedSequence(seed).spawn(int(count))]


def _null_checks(the_plan):
    """Indices of the checks the calibration simulates: the ``"monte-carlo"`` ones whose null is
    true by construction (no erratum), then the ``"interval"`` ones (the text's own, not their
    corrections), whose p-values it centres on their mean over seeds (:func:`_interval_pvalues`)."""
    def wanted(p, kind):
        return (not p.untestable and p.check.calibration == kind and not p.check.label.endswith(CORRECTION_SUFFIX)
                and (kind == "interval" or p.check.erratum is None))

    return ([i for i, p in enumerate(the_plan.checks) if wanted(p, "monte-carlo")]
            + [i for i, p in enumerate(the_plan.checks) if wanted(p, "interval")])


def _interval_pvalues(the_plan, null, numbers):
    """Each null check's p-value per seed from ``numbers`` (seeds x (p-value, estimate, MCSE) x
    checks): the check's own for a ``"monte-carlo"`` check; for an ``"interval"`` check, whose null
    is an interval around a true value nobody knows, the two-sided normal p-value of its estimate
    against the mean of its estimates over the seeds, in units of its MCSE -- the normal (or
    delta-method) approximation its test rests on, calibrated where the truth is estimated from
    all the seeds (the estimate's own share of that mean, 1/seeds, is left in)."""
    from scipy import stats as sps

    pv = numbers[:, 0, :].copy()
    for c, i in enumerate(null):
        if the_plan.checks[i].check.calibration == "interval":
            est, se = numbers[:, 1, c], numbers[:, 2, c]
            ok = np.isfinite(est) & np.isfinite(se) & (se > 0)
            pv[:, c] = np.nan
            if ok.sum() >= 2:
                pv[ok, c] = 2 * sps.norm.sf(np.abs(est[ok] - est[ok].mean()) / se[ok])
    return pv


class Calibration(NamedTuple):
    """What :func:`calibrate` returns: its tables, and how many of the plan's checks each way of
    knowing a false-fail rate covers (``levels``: calibration kind -> checks)."""

    checks: Any
    mutants: Any
    pvalues: Any
    exact: Any
    levels: dict


def level_counts(the_plan):
    """How many testable checks of the plan each kind of calibration covers
    (:data:`~stats.claims.checks.CALIBRATIONS`), in that order."""
    from .checks import CALIBRATIONS

    counts = dict.fromkeys(CALIBRATIONS, 0)
    for p in the_plan.checks:
        if not p.untestable:
            counts[p.check.calibration] += 1
    return counts


def calibrate(*, seeds=CALIBRATION_SEEDS, mutant_seeds=None, n_factor=0.02, seed=DEFAULT_SEED, mutants=None, workers=1, scheduler=None,
              progress=False, select=None, resume=None):
    """Run the calibration study; returns a :class:`Calibration`: ``(checks, mutants, pvalues,
    exact, levels)``.

    ``checks``: one row per null check (KS and binomial p-values, Holm-corrected, the
    rejection rate, ``calibrated``), over all ``seeds``.  ``mutants``: one row per mutant (catch
    rate, declared power, ``meets``, the shortfall its seed count detects), over the first
    ``mutant_seeds`` seeds (default :data:`CALIBRATION_MUTANT_SEEDS`, at most ``seeds``).
    ``pvalues``: tidy (check, seed, p_value), for the QQ figure.  ``exact``: the checks exact by
    construction, with their sizes computed (:func:`exact_levels`), not simulated.
    ``select`` restricts the plan to some claims (as :func:`~stats.claims.planning.plan`'s).
    ``resume`` (a folder, or None) keeps each seed's numbers there as it finishes and takes
    the ones already there (from a run of the same sources, plan and mutants) instead of
    drawing them again: a calibration stopped after k seeds resumes from them, and its tables
    are the same bytes as an uninterrupted run's.
    """
    import pandas as pd

    if resume is not None and not isinstance(resume, (str, os.PathLike)):
        raise TypeError(f"resume must be a folder (a str or a path) or None; got {type(resume).__name__}")
    roots = calibration_seeds(seed, seeds)
    if mutant_seeds is None:
        mutant_seeds = min(CALIBRATION_MUTANT_SEEDS, len(roots))
    if isinstance(mutant_seeds, bool) or not isinstance(mutant_seeds, (int, np.integer)) or not 1 <= mutant_seeds <= len(roots):
        raise ValueError(f"mutant_seeds must be an integer from 1 to seeds ({len(roots)}); got {mutant_seeds!r}")
    mutant_seeds = int(mutant_seeds)
    if mutants is None:
        from .mutants import MUTANTS as mutants
    the_plan = plan(select=select, seed=seed, n_factor=n_factor, workers=workers)
    null = _null_checks(the_plan)
    mutants = tuple(mutants)
    # A catch by a check that draws nothing (a proof, an exact value) is the same on every seed.
    everywhere = [_caught_without_draws(the_plan, m) for m in mutants]
    seeded = [j for j, e in enumerate(everywhere) if not e]
    store = None if resume is None else _SeedStore(resume, the_plan, mutants, seeded)
    # The mutants' seeds first: they are most of the work, and each phase's bar then times its own kind of seed.
    phases = (("calibration seeds with the mutants", [(r, True) for r in roots[:mutant_seeds]]),
              ("calibration seeds, null checks only", [(r, False) for r in roots[mutant_seeds:]]))
    done = {}
    todos = [_not_stored(tasks, store, done) for _, tasks in phases]
    global _STATE
    _STATE = (the_plan, tuple(mutants[j] for j in seeded), null, scheduler)
    try:
        null_seconds = []
        for (desc, tasks), todo, later in zip(phases, todos, (len(todos[1]), 0)):
            _run_phase(tasks, todo, done, store, desc=desc, workers=workers, scheduler=scheduler, progress=progress,
                       later=later, null_seconds=null_seconds)
    finally:
        _STATE = None
    parts = [done[r] for r in roots]
    pv = _interval_pvalues(the_plan, null, np.array([p[0] for p in parts]))
    mparts = parts[:mutant_seeds]
    k = len(mparts)
    caught = np.ones((k, len(mutants)), dtype=bool)
    caught[:, seeded] = np.array([p[1] for p in mparts]).reshape(k, len(seeded))
    shift = np.zeros((k, len(mutants), len(the_plan.checks)))
    shift[:, seeded] = np.array([p[2] for p in mparts]).reshape(k, len(seeded), len(the_plan.checks))
    exact_fail = np.array(everywhere)
    exact_fail[seeded] = np.any(np.array([p[3] for p in mparts]).reshape(k, len(seeded)), axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # checks without an MCSE (exact, identity) stay NaN
        mcse = np.nanmean(np.array([p[4] for p in mparts]), axis=0)
    checks = _check_table(the_plan, null, pv)
    muts = _mutant_table(the_plan, mutants, caught, shift, mcse, exact_fail)
    pvalues = pd.DataFrame(
        [(the_plan.checks[i].claim.id, the_plan.checks[i].check.label, r, pv[r, c]) for c, i in enumerate(null) for r in range(len(roots))],
        columns=["claim", "check", "seed_index", "p_value"],
    )
    return Calibration(checks, muts, pvalues, exact_levels(the_plan), level_counts(the_plan))


def _not_stored(tasks, store, done):
    """The ``tasks`` ((root, with mutants) pairs) whose numbers ``store`` lacks; the others' go into ``done``."""
    todo = []
    for root, with_mutants in tasks:
        part = None if store is None else store.load(root, with_mutants=with_mutants)
        if part is None:
            todo.append((root, with_mutants))
        else:
            done[root] = part
    return todo


def _run_phase(tasks, todo, done, store, *, desc, workers, scheduler, progress, later, null_seconds):
    """Draw ``todo`` (of ``tasks``) into ``done``, keeping each seed in ``store`` as it finishes.

    The bar's rate and time left are this phase's (its seeds cost alike); where ``later``
    null-only seeds follow, it also estimates the whole run's time left from them, at the null
    checks' measured share of each seed (``null_seconds``, filled as seeds finish)."""
    from tqdm.auto import tqdm

    if not tasks:
        return
    bar = tqdm(total=len(tasks), initial=len(tasks) - len(todo), desc=desc, unit="seed",
               disable=None if progress else True)
    parallel = workers > 1 and scheduler is None and len(todo) > 1
    start, drawn = time.perf_counter(), 0

    def keep(task, result):
        nonlocal drawn
        part, seconds = result
        if store is not None:
            store.save(task[0], part)
        done[task[0]] = part
        null_seconds.append(seconds)
        drawn += 1
        if later and drawn < len(todo):
            # The first seeds of a pool finish together, each having taken a worker the whole time.
            per_seed = (time.perf_counter() - start) / max(drawn, min(workers, len(todo)) if parallel else 1)
            left = per_seed * (len(todo) - drawn) + later * float(np.mean(null_seconds)) / (workers if parallel else 1)
            bar.set_postfix_str(f"whole run about {math.ceil(left / 60)} min left")
        bar.update()

    if parallel:
        from concurrent.futures import ProcessPoolExecutor

        # Seeds are independent: one per worker process (forked, so the plan is shared, not pickled).
        with ProcessPoolExecutor(max_workers=workers, mp_context=pool_context()) as pool:
            for task, result in zip(todo, pool.map(_one_seed, todo)):
                keep(task, result)
    else:
        for task in todo:
            keep(task, _one_seed(task))
    bar.close()


_STATE = None
#: Bumped when what a seed's file holds changes.
_SEED_FORMAT = 3


class _SeedStore:
    """Each seed's numbers, one compressed file a seed under ``folder``/<digest>, where the digest
    covers what they depend on: every source of ``stats`` (the claims and settings too), numpy's
    version, the plan (its checks, level and every simulation's rows) and the mutants drawn per seed."""

    def __init__(self, folder, the_plan, mutants, seeded):
        import hashlib
        import json
        from pathlib import Path

        from ..tuning import source_digest

        h = hashlib.sha256(source_digest(claims=True).encode())
        h.update(json.dumps(dict(
            format=_SEED_FORMAT, numpy=np.__version__, per_test=the_plan.per_test, n_factor=the_plan.n_factor,
            checks=[(p.claim.id, p.check.label, p.untestable or "") for p in the_plan.checks],
            jobs=sorted((str(k), int(j.n)) for k, j in the_plan.jobs.items()),
            mutants=[m.name for m in mutants], seeded=list(seeded)), sort_keys=True, default=str).encode())
        self.folder = Path(folder) / h.hexdigest()[:20]
        self.mutants_per_seed = len(seeded)

    def _path(self, root):
        return self.folder / f"{root}.npz"

    def load(self, root, *, with_mutants):
        """The seed's five arrays, or None where there is no readable file, or where the mutants
        are asked for and the file (a seed drawn for the null checks only) has none."""
        try:
            with np.load(self._path(root)) as f:
                part = tuple(f[f"arr_{i}"] for i in range(5))
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):  # missing, or cut short: draw it again
            return None
        if with_mutants and len(part[1]) != self.mutants_per_seed:
            return None
        return part if with_mutants else _without_mutants(part)

    def save(self, root, part):
        """Write the seed's arrays whole or not at all (a temporary file, then renamed)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.folder / f".{root}.{os.getpid()}.npz"
        with open(tmp, "wb") as f:
            np.savez_compressed(f, *part)
        os.replace(tmp, self._path(root))


def _caught_without_draws(the_plan, mutant):
    """Whether a check of the plan that draws nothing (:attr:`~stats.claims.checks.Check.draws`) fails
    deterministically under ``mutant``: then it does on every seed, and no seed need show it."""
    touched = touched_simulations(the_plan, mutant.formulas)
    free = [p for p in affected_checks(the_plan, mutant.formulas, touched) if not p.check.draws]
    if not free:
        return False
    part = the_plan.part(free)
    table = evaluate(part, {}, formulas=mutant.formulas).iloc[:len(free)]  # the checks' rows, not the sentences'
    return _fails_deterministically(table, part)[1]


def _fails_deterministically(table, part):
    """``(failing rows, whether one is deterministic)`` of ``evaluate(part, ...)``'s ``table``: an
    exact check, an identity violated on the rows, a sentence, or an ``ERROR`` (a NaN)."""
    bad = failing(table, part)
    decided = ~np.array(statistical_rows(table, part), dtype=bool)[bad.index.to_numpy()]
    return bad, bool((decided | (bad["verdict"] == ERROR).to_numpy()).any())


def _without_mutants(part):
    """A seed's numbers as a seed drawn for the null checks only has them (no mutant's)."""
    numbers, _, shift, _, mcse = part
    return numbers, np.zeros(0, dtype=bool), np.zeros((0, shift.shape[1])), np.zeros(0, dtype=bool), np.full(mcse.shape, np.nan)


def _one_seed(task):
    """One seed's p-values of the null checks, and per mutant: caught, shift per check, exact failure;
    and the seconds its null checks took (for the time-left estimate, not kept).

    ``task`` is ``(root, with_mutants)``; without the mutants, their arrays are empty.

    Only what the numbers read is drawn: the null checks' simulations, and for each mutant the
    touched simulations tier by tier, cheapest check first (:func:`mutant_tiers`), with the
    untouched ones its checks read drawn once under the true formulas when first needed.  A
    mutant stops at the first tier where a deterministic check (exact, identity, a sentence, or
    an ``ERROR``) fails: it is caught on this seed, and its declared power is 1 whatever its
    shifts.  A mutant not caught that way is evaluated on all its affected checks, as a full
    draw would, for its catch and its shifts; so every number is the one the whole plan's draw
    gives, without drawing what no number reads.
    """
    start = time.perf_counter()
    root, with_mutants = task
    the_plan, mutants, null, scheduler = _STATE
    if not with_mutants:
        mutants = ()
    drawn = {}

    def truth(checks):
        """This seed's draws under the true formulas of what ``checks`` read (drawn when first needed)."""
        missing = {ms.sim.key for p in checks for ms in p.check.measures} - drawn.keys()
        if missing:
            drawn.update(simulate(the_plan, seed=root, workers=1, scheduler=scheduler, only=missing))
        return drawn

    cache = {}
    null_part = the_plan.part([the_plan.checks[i] for i in null])
    table = evaluate(null_part, truth(null_part.checks), cache=cache).iloc[:len(null)]
    numbers = table[["p_value", "estimate", "mcse"]].to_numpy(dtype=float).T  # (p-value, estimate, MCSE) x checks
    null_seconds = time.perf_counter() - start
    shiftable = np.array([p.check.power_from_shift for p in the_plan.checks])
    index = {(p.claim.id, p.check.label): i for i, p in enumerate(the_plan.checks)}
    caught = np.zeros(len(mutants), dtype=bool)
    exact_fail = np.zeros(len(mutants), dtype=bool)
    shift = np.zeros((len(mutants), len(the_plan.checks)))
    mcse = np.full(len(the_plan.checks), np.nan)
    for j, m in enumerate(mutants):
        touched = touched_simulations(the_plan, m.formulas)
        affected = affected_checks(the_plan, m.formulas, touched)
        mutated, done = {}, set()
        for tier in mutant_tiers(the_plan, touched):
            if tier:
                mutated.update(simulate(the_plan, seed=root, formulas=m.formulas, workers=1, scheduler=scheduler,
                                        only=set(tier)))
                done |= set(tier)
            ready = [p for p in affected if all(ms.sim.key not in touched or ms.sim.key in done for ms in p.check.measures)]
            part = the_plan.part(ready)
            untouched = [p for p in ready if any(ms.sim.key not in touched for ms in p.check.measures)]
            mt = evaluate(part, {**truth(untouched), **mutated}, formulas=m.formulas, cache=cache)
            bad, deterministic = _fails_deterministically(mt, part)
            if deterministic:
                caught[j] = exact_fail[j] = True
                break
        else:
            caught[j] = len(bad) > 0
            # What the mutant moves: its estimate-minus-expected beyond the true formulas' own, read
            # on the checks whose shift declares a power only (the others' true draws feed no number).
            at = [c for c, p in enumerate(part.checks) if shiftable[index[p.claim.id, p.check.label]]]
            if not at:
                continue
            sub = the_plan.part([part.checks[c] for c in at])
            true_table = evaluate(sub, truth(sub.checks), cache=cache)
            rows = np.array([index[p.claim.id, p.check.label] for p in sub.checks], dtype=int)
            n = len(rows)
            d = ((mt["estimate"].to_numpy(dtype=float)[at] - mt["expected"].to_numpy(dtype=float)[at])
                 - (true_table["estimate"] - true_table["expected"]).to_numpy(dtype=float)[:n])
            shift[j, rows] = np.where(np.isfinite(d), d, 0.0)
            mcse[rows] = true_table["mcse"].to_numpy(dtype=float)[:n]
    return (numbers, caught, shift, exact_fail, mcse), null_seconds


def exact_levels(the_plan, *, formulas=None):
    """One row per check of the plan whose kind is exact by construction (``calibration ==
    "exact"``): its ``level`` (the plan's per-test level), its rows here ``n`` and the rows its own
    design asks ``n_design`` (what a full build draws for it at least), and at each the test's
    ``size``, the probability that it rejects when its null holds, computed from the test
    (:meth:`~stats.claims.checks.Check.exact_size`) -- not simulated.  ``holds`` says whether
    both sizes are at most the level."""
    import pandas as pd

    from ..formulas import FORMULAS

    formulas = FORMULAS if formulas is None else formulas
    rows = []
    for p in the_plan.checks:
        if p.untestable or p.check.calibration != "exact":
            continue
        n = max(int(the_plan.jobs[ms.sim.key].n) for ms in p.check.measures)
        n_design = max(n, int(p.design_n))
        size = p.check.exact_size(n, the_plan.per_test, formulas)
        at_design = size if n_design == n else p.check.exact_size(n_design, the_plan.per_test, formulas)
        worst = max(size, at_design)
        rows.append(dict(claim=p.claim.id, check=p.check.label, test=p.check.test, level=the_plan.per_test, n=n, size=size,
                         n_design=n_design, size_at_design=at_design, size_over_level=worst / the_plan.per_test,
                         holds=worst <= the_plan.per_test))
    return pd.DataFrame(rows, columns=["claim", "check", "test", "level", "n", "size", "n_design", "size_at_design",
                                       "size_over_level", "holds"])


def rejection_rate_detectable(seeds, *, level=CALIBRATION_LEVEL, alpha, power=CALIBRATION_POWER):
    """The smallest rejection rate above ``level`` that the calibration's two-sided exact binomial
    test at ``alpha`` flags with probability ``power`` over ``seeds`` seeds (1.0 where none is)."""
    from scipy import stats as sps

    n = _seed_count(seeds)
    level, alpha, power = check_alpha(level, "level"), check_alpha(alpha), check_alpha(power, "power")
    k = np.arange(n + 1)
    reject = np.array([sps.binomtest(int(x), n, level).pvalue < alpha for x in k])
    for r in np.arange(level, 1.0, 0.001)[1:]:
        if sps.binom.pmf(k, n, r)[reject].sum() >= power:
            return float(round(r, 3))
    return 1.0


def shortfall_detectable(seeds, declared, *, alpha, power=CALIBRATION_POWER):
    """The smallest shortfall of a mutant's catch rate below its ``declared`` power that the
    calibration's one-sided exact binomial test at ``alpha`` flags with probability ``power`` over
    ``seeds`` seeds; NaN when no shortfall is (a declared power near 0 tests nothing)."""
    from scipy import stats as sps

    n = _seed_count(seeds)
    alpha, power = check_alpha(alpha), check_alpha(power, "power")
    if isinstance(declared, bool) or not isinstance(declared, (int, float, np.floating)) or not 0 <= declared <= 1:
        raise ValueError(f"declared must be a power in [0, 1]; got {declared!r}")
    if not declared > 0:
        return math.nan
    k = np.arange(n + 1)
    reject = (k < n) if declared >= 1 else sps.binom.cdf(k, n, declared) < alpha
    for d in np.arange(0.0, declared, 0.001)[1:]:
        if sps.binom.pmf(k, n, declared - d)[reject].sum() >= power:
            return float(round(d, 3))
    return float(declared) if sps.binom.pmf(0, n, 0.0) * reject[0] >= power else math.nan


def _seed_count(seeds):
    if isinstance(seeds, bool) or not isinstance(seeds, (int, np.integer)) or seeds < 1:
        raise ValueError(f"seeds must be a positive integer; got {seeds!r}")
    return int(seeds)


def _holm(p):
    p = np.asarray(p, dtype=float)
    ok = np.isfinite(p)
    out = np.full(p.shape, np.nan)
    if ok.any():
        out[ok] = holm_adjust(p[ok])
    return out


def _check_table(the_plan, null, pv):
    import pandas as pd
    from scipy import stats as sps

    rows = []
    for c, i in enumerate(null):
        p = pv[:, c]
        p = p[np.isfinite(p)]
        k = int((p < CALIBRATION_LEVEL).sum())
        ks = sps.kstest(p, "uniform") if p.size >= 2 else None
        test = sps.binomtest(k, p.size, CALIBRATION_LEVEL) if p.size else None
        ci = test.proportion_ci(0.95) if test else None  # the rejection rate's exact (Clopper-Pearson) interval
        rows.append(dict(
            claim=the_plan.checks[i].claim.id,
            check=the_plan.checks[i].check.label,
            test=the_plan.checks[i].check.test,
            # "interval": its p-values are centred on its mean over the seeds (_interval_pvalues).
            calibration=the_plan.checks[i].check.calibration,
            seeds=int(p.size),
            rejection_rate=k / p.size if p.size else math.nan,
            rate_low=float(ci.low) if ci else math.nan,
            rate_high=float(ci.high) if ci else math.nan,
            binomial_p=float(test.pvalue) if test else math.nan,
            ks_distance=float(ks.statistic) if ks else math.nan,
            ks_p=float(ks.pvalue) if ks else math.nan,
            mean_p=float(p.mean()) if p.size else math.nan,
        ))
    t = pd.DataFrame(rows)
    t["binomial_p_holm"] = _holm(t["binomial_p"])
    t["ks_p_holm"] = _holm(t["ks_p"])
    off = (t["binomial_p_holm"] < CALIBRATION_ALPHA) | (t["ks_p_holm"] < CALIBRATION_ALPHA)
    # Off the uniform law towards large p-values and rejecting no more than the level: conservative.
    conservative = off & (t["mean_p"] > 0.5) & (t["rejection_rate"] <= CALIBRATION_LEVEL)
    t["calibrated"] = ~off | conservative
    # What these seeds can see: a check alone (Holm's first step) rejecting this often is flagged.
    t["detectable_rejection_rate"] = rejection_rate_detectable(pv.shape[0], alpha=CALIBRATION_ALPHA / max(len(t), 1))
    t["verdict"] = np.where(~off, "calibrated", np.where(conservative, "conservative", "MISCALIBRATED"))
    return t


def _mutant_table(the_plan, mutants, caught, shift, mcse, exact_fail):
    import pandas as pd
    from scipy import stats as sps

    z = sps.norm.isf(the_plan.per_test / 2)
    rows = []
    for j, m in enumerate(mutants):
        mean_shift = shift[:, j, :].mean(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            snr = np.abs(mean_shift) / mcse
        snr = np.where(np.isfinite(snr), snr, 0.0)
        best = int(np.argmax(snr)) if snr.size else 0
        declared = float(sps.norm.cdf(snr[best] - z)) if snr.size else 0.0
        # Where no check's mean moves, the arg-max is an arbitrary check: say so instead of naming it.
        by = (f"{the_plan.checks[best].claim.id} [{the_plan.checks[best].check.label}]" if snr.size and snr[best] > 0
              else NO_DECLARED_POWER)
        if exact_fail[j]:
            declared, by = 1.0, "a deterministic check (exact, identity or ERROR)"
        k = int(caught[:, j].sum())
        n = caught.shape[0]
        p = float(sps.binomtest(k, n, declared, alternative="less").pvalue) if 0 < declared < 1 else (1.0 if k == n or declared == 0 else 0.0)
        rows.append(dict(
            mutant=m.name,
            seeds=n,
            catch_rate=k / n,
            declared_power=declared,
            by_check=by,
            binomial_p=p,
        ))
    t = pd.DataFrame(rows)
    t["binomial_p_holm"] = _holm(t["binomial_p"])
    t["meets"] = ~(t["binomial_p_holm"] < CALIBRATION_ALPHA)
    alpha = CALIBRATION_ALPHA / max(len(t), 1)
    t["detectable_shortfall"] = [shortfall_detectable(caught.shape[0], d, alpha=alpha) for d in t["declared_power"]]
    return t


def calibration_passed(result):
    """Whether a :class:`Calibration` found every null check calibrated (or conservative), every
    exact check's size at most its level, and every mutant caught at least as often as declared."""
    return bool(result.checks["calibrated"].all() and result.mutants["meets"].all() and result.exact["holds"].all())
