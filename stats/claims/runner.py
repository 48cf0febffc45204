r"""Run the claims registry: design the sample sizes, simulate, test, correct, report.

1. **Plan** (:func:`plan`).  Checks that cannot be tested (a moment the simulated law
   lacks, a degenerate statistic, PyTorch missing) are marked *untestable* with the
   reason.  The remaining statistical checks of the **whole registry** form one family
   of size m with family-wise false-fail rate ``alpha`` (Holm); each check's sample size
   is the smallest that detects its target discrepancy with false-pass ``beta`` at the
   Bonferroni level alpha/m (Holm rejects whatever Bonferroni rejects, so the power
   statement holds).  A simulation is drawn once, with the largest n any check of the
   whole registry asks of it -- so ``--only`` draws exactly what the full run draws for
   the checks it selects, and their numbers equal the full run's.  Identities get the
   rows that reveal a violation occurring in a share 1e-3 of rows with probability
   1 - beta.
2. **Simulate** (:func:`simulate`) on the engine: one stream per simulation key, blocks
   on any number of workers or a Dask cluster, merged in block order.
3. **Evaluate** (:func:`evaluate`) each check against a :class:`~stats.formulas.Formulas`,
   Holm-adjust the statistical checks of the selection, and assign verdicts:
   ``pass``, ``REJECTED``, ``ERROR`` (NaN or infinite expected value, NaN p-value or
   statistic, a simulation that raised), ``erratum confirmed``, ``erratum stale``,
   ``untestable``.
"""

from __future__ import annotations

import functools
import importlib.util
import math
from dataclasses import dataclass, field

import numpy as np
from scipy import special

# scipy.stats and pandas are imported where they are used (see stats/models/__init__.py).
from ..engine.executors import Job, SimFailure, run_simulations
from ..formulas import FORMULAS
from ..inference.estimators import scale_moments
from ..inference.tails import TAIL_FRACTION, TAIL_LIMIT, conservative_pvalue, edgeworth_coefficients, tail_error, tail_sample_size
from ..inference.significance import (
    MEAN_TEST_MIN_TAIL_INDEX,
    VARIANCE_TEST_MIN_TAIL_INDEX,
    UntestableError,
    detectable_discrepancy,
    detectable_ks_distance,
    distribution_test,
    holm_adjust,
    mean_test,
    required_ks_sample_size,
    required_sample_size,
    variance_ratio_test,
    variance_test,
)
from .schema import STATISTICAL_TESTS, Check, Claim, corrected_check

__all__ = [
    "COLUMNS",
    "DEFAULT_SEED",
    "FALSE_PASS",
    "FAMILY_ALPHA",
    "IDENTITY_RATE",
    "OK_VERDICTS",
    "Plan",
    "PlannedCheck",
    "evaluate",
    "evaluate_mutants",
    "passed",
    "plan",
    "select_claims",
    "simulate",
    "verify_claims",
]

DEFAULT_SEED = 4_3_2026
FAMILY_ALPHA = 1e-3
FALSE_PASS = 1e-3
IDENTITY_RATE = 1e-3  # identities are sized to reveal a violation this common with probability 1 - FALSE_PASS
MIN_ROWS = 16
COLUMNS = [
    "claim",
    "section",
    "statement",
    "check",
    "test",
    "closed_form",
    "expected",
    "estimate",
    "mcse",
    "p_value",
    "p_holm",
    "detectable",
    "tail_error",
    "n",
    "verdict",
    "note",
]
OK_VERDICTS = ("pass", "erratum confirmed", "untestable")


@dataclass(frozen=True)
class PlannedCheck:
    claim: Claim
    check: Check
    n: int  # rows the design asks for (0 when untestable or deterministic)
    design_sd: float  # per-row sd behind n (log scale for variances), nan when none
    design: str  # how n was designed, for the note
    untestable: str | None = None
    edgeworth: tuple | None = None  # (A1, A2) of the test statistic, for its tail error at n

    @property
    def statistical(self):
        return self.check.test in STATISTICAL_TESTS and not self.untestable


@dataclass
class Plan:
    """The planned checks (the selection), the simulations they need and the design level."""

    checks: list
    jobs: dict  # stream key -> Job
    per_test: float  # Bonferroni design level alpha / m of the whole registry
    family_size: int
    n_factor: float = 1.0
    selection: str | None = None
    pilots: dict = field(default_factory=dict)


def select_claims(patterns=None, claims=None):
    """Claims whose id matches any of the comma-separated glob ``patterns`` (substring if no glob)."""
    from fnmatch import fnmatchcase

    if claims is None:
        from .registry import REGISTRY as claims
    if patterns is None:
        return tuple(claims)
    if not isinstance(patterns, str):
        raise TypeError(f"patterns must be a string of comma-separated claim ids or globs; got {patterns!r}")
    pats = [p.strip() for p in patterns.split(",") if p.strip()]
    if not pats:
        raise ValueError(f"--only {patterns!r} names no claim; give claim ids or globs, e.g. 'exact-law,mup-*'")
    pats = [p if any(ch in p for ch in "*?[") else f"*{p}*" for p in pats]
    chosen = tuple(c for c in claims if any(fnmatchcase(c.id, p) for p in pats))
    if not chosen:
        raise ValueError(f"--only {patterns!r} matches no claim; `python -m stats list` shows the ids")
    return chosen


# ------------------------------------------------------------------------ planning

# Random numbers a sampler holds at once (1 MiB of float64), below the engine's default of
# 2^20: a 25 s verify selection ran 5-10% faster so under glibc's adaptive malloc (the L2
# cache or fewer fresh pages: not told apart); with the suite's malloc, chunks of 2^14 to
# 2^18 numbers were within the run-to-run spread of each other.  The numbers do not depend
# on it (tests/test_engine.py); every registry simulation's row fits in it (the widest,
# d_k = 4096 with 16 keys, holds 65536).
CHUNK_NUMBERS = 1 << 17


@functools.lru_cache(maxsize=None)
def _torch_available():
    # Found, not imported: the plan asks this of every check in the family, and importing
    # PyTorch costs ~1 s that a selection without PyTorch checks should not pay.  A broken
    # installation then fails loudly in the checks that import it.
    return importlib.util.find_spec("torch") is not None


def _untestable_reason(check: Check):
    for req in check.requires:
        if req == "torch" and not _torch_available():
            return "needs PyTorch, which is not installed here (`make torch` adds the CPU build)"
    tail = check.tail_index
    need = {"mean": MEAN_TEST_MIN_TAIL_INDEX, "two_sample": MEAN_TEST_MIN_TAIL_INDEX, "interval": MEAN_TEST_MIN_TAIL_INDEX}
    need |= {"variance": VARIANCE_TEST_MIN_TAIL_INDEX, "ratio": VARIANCE_TEST_MIN_TAIL_INDEX}
    if check.test in need and not tail > need[check.test]:
        law = getattr(check.measure.sim, "entries", None)
        rho = getattr(check.measure.sim, "rho", 0.0)
        return (
            f"{check.test} test needs finite moments beyond order {need[check.test]:g}; with "
            f"{getattr(law, 'label', '?')} entries and rho={rho:g} they are finite only below order {tail:g}"
        )
    if check.test in ("variance", "ratio"):
        missing = [ms.sim.key for ms in check.measures if ms.sim.central_moments(ms.statistic) is None]
        if missing:
            return (
                f"{check.test} test: no closed-form moments up to the sixth for {missing[0]}, so its tail error "
                "cannot be bounded"
            )
    if check.test in ("variance", "ratio") and callable(check.sd) and check.sd() < 1e-6:
        sim = check.measure.sim
        return (
            f"degenerate: with {sim.entries.label} entries at d_k={sim.d_k} the squared score is constant, so the "
            "sample variance has no normal limit to test against"
        )
    return None


def identity_rows(rate=IDENTITY_RATE, beta=FALSE_PASS):
    """Rows that reveal a violation occurring in a share ``rate`` of rows with probability 1 - beta."""
    return math.ceil(math.log(beta) / math.log1p(-rate))


def _pilot_rows(sim, n_factor=1.0):
    # About 4 million random numbers, fewer for a quick run (never below 200 rows): the
    # design takes an upper confidence bound on the pilot's sd, so a small pilot only
    # makes n larger, never the check weaker.
    budget = (1 << 22) * min(1.0, 5.0 * n_factor)
    return int(min(20_000, max(200, budget // max(1.0, float(sim.cost)))))


def _run_pilots(sims, seed, cache, workers, n_factor=1.0, after_submit=None):
    """Pilot runs, on their own streams (``pilot/<key>``), of every simulation not yet in ``cache``, all at once."""
    todo = {}
    for sim in sims:
        if (seed, sim.key) not in cache:
            todo[sim.key] = Job(sim, _pilot_rows(sim, n_factor), stream=f"pilot/{sim.key}")
    if not todo:
        if after_submit is not None:
            after_submit()
        return
    res = run_simulations(
        list(todo.values()), seed=seed, formulas=FORMULAS, workers=workers, desc="pilot runs", after_submit=after_submit,
        chunk_size=CHUNK_NUMBERS,
    )
    for key, job in todo.items():
        cache[(seed, key)] = {
            name: (
                s.mean,
                math.sqrt(s.m2 / (s.n - 1)),
                s.n * s.m4 / s.m2**2 if s.m2 > 0 else 3.0,
                s.n,
                math.sqrt(s.n) * s.m3 / s.m2**1.5 if s.m2 > 0 else 0.0,
            )
            for name, s in res[job.key].summaries.items()
        }


def _pilot(sim, seed, cache, workers):
    """(mean, sd, kurtosis, n) of every statistic of ``sim`` from a pilot run on its own stream."""
    _run_pilots([sim], seed, cache, workers)
    return cache[(seed, sim.key)]


def _sd_of(check, measure, seed, pilots, workers, beta):
    """(per-row sd of ``measure``'s statistic times its factor, mean for relative targets, how)."""
    from scipy import stats as sps

    if check.sd == "pilot":
        mean, sd, kurt, n, _ = _pilot(measure.sim, seed, pilots, workers)[measure.statistic]
        # An upper (1 - beta) confidence bound on the sd, so the pilot's own error cannot shrink n.
        sd_up = sd * math.exp(0.5 * sps.norm.isf(beta) * math.sqrt(max(kurt - 1.0, 0.5) / n))
        return sd_up * abs(measure.factor), mean * measure.factor, f"pilot run ({n} rows on its own stream)"
    if callable(check.sd):
        return float(check.sd()), None, "closed form"
    return float(check.sd), None, "bound"


#: Random numbers a check may draw to bring its tail error down to TAIL_FRACTION; past it
#: the check keeps the largest affordable n with a conservative p-value (and is untestable
#: only if even that n leaves a tail error above TAIL_LIMIT).
TAIL_BUDGET = float(1 << 27)
TAIL_TESTS = {"mean": "mean", "two_sample": "mean", "interval": "mean", "variance": "log_variance", "ratio": "log_variance"}


def _needs_tail_pilot(check):
    """A mean-type check whose statistic has no closed-form moments: its skewness comes from a pilot."""
    if TAIL_TESTS.get(check.test) != "mean":
        return False
    return any(ms.sim.central_moments(ms.statistic) is None for ms in (check.inputs or check.measures))


def _edgeworth(check, beta, seed, pilots, workers):
    r"""(A1, A2) bounding the Edgeworth coefficients of the check's studentized statistic, and how.

    One measure: its own coefficients, from closed-form central moments or, for a mean,
    from a pilot's skewness plus :math:`z_{1-\beta}\sqrt{6/n}` (its normal-theory error).
    Several (two-sample, ratio, derived): a weighted combination with weights of unit
    square sum, so :math:`|A_2| \le \max_i |A_{2,i}|` and :math:`|A_1| \le \sqrt2 \max_i |A_{1,i}|`.
    """
    from scipy import stats as sps

    kind = TAIL_TESTS[check.test]
    coefs, sources = [], set()
    for ms in check.inputs or check.measures:
        mom = ms.sim.central_moments(ms.statistic)
        if mom is None:
            _, _, _, n, skew = _pilot(ms.sim, seed, pilots, workers)[ms.statistic]
            mom = (1.0, abs(skew) + sps.norm.isf(beta) * math.sqrt(6.0 / n))
            sources.add("pilot skewness")
        else:
            sources.add("closed-form moments")
        coefs.append(edgeworth_coefficients(mom, test=kind))
    a1 = max(abs(c[0]) for c in coefs) * (math.sqrt(2.0) if len(coefs) > 1 else 1.0)
    a2 = max(abs(c[1]) for c in coefs)
    if len(coefs) == 1:
        a1, a2 = coefs[0]
    return (a1, a2), " and ".join(sorted(sources))


def _design(check, alpha, beta, seed, pilots, workers):
    """(n, design sd, how, edgeworth) for one check at per-test level alpha; n per simulation it
    reads, raised where needed until the normal approximation's tail error at alpha is at most
    :data:`~stats.inference.tails.TAIL_FRACTION`."""
    n, sd, how = _power_design(check, alpha, beta, seed, pilots, workers)
    if check.test not in TAIL_TESTS:
        return n, sd, how, None
    (a1, a2), source = _edgeworth(check, beta, seed, pilots, workers)
    n_tail = tail_sample_size(alpha=alpha, a1=a1, a2=a2)
    if n_tail > n:
        per_row = sum(float(ms.sim.cost) for ms in (check.inputs or check.measures))
        affordable = max(n, int(TAIL_BUDGET // per_row))
        if affordable >= n_tail:
            how += f"; raised from {n} for a tail error <= {TAIL_FRACTION:g} of the level (Edgeworth, {source})"
            n = n_tail
        else:
            e = tail_error(max(affordable, 2), alpha=alpha, a1=a1, a2=a2)
            if e > TAIL_LIMIT:
                raise _TailUntestable(
                    f"the normal approximation's tail error at the design level {alpha:.2g} would be {e:.2g} of it "
                    f"at the n={affordable} the budget of {TAIL_BUDGET:.2g} random numbers affords (Edgeworth, "
                    f"{source}); {TAIL_FRACTION:g} needs n={n_tail}"
                )
            if affordable > n:
                how += f"; raised from {n} to the tail budget's {affordable} (Edgeworth, {source}; {TAIL_FRACTION:g} needs n={n_tail})"
                n = affordable
            # The p-value will be inflated by (1 + e): keep the stated power at the level that
            # leaves, alpha / (1 + e).  e falls as n grows, so this settles in a few rounds.
            for _ in range(20):
                e = tail_error(max(n, 2), alpha=alpha, a1=a1, a2=a2)
                n_power = _power_design(check, alpha / (1 + e), beta, seed, pilots, workers)[0]
                if n_power <= n:
                    break
                n = n_power
            else:  # pragma: no cover - the iteration is a contraction for any finite e
                raise _TailUntestable(f"no n keeps the power at the tail-corrected level {alpha:.2g}")
            if n > affordable:
                how += f"; {n} for the power at the corrected level"
    return n, sd, how, (a1, a2)


class _TailUntestable(Exception):
    pass


def _power_design(check, alpha, beta, seed, pilots, workers):
    """(n, design sd, how) for one check at per-test level alpha; n per simulation it reads."""
    t = check.test
    if t == "identity":
        return (check.rows or identity_rows(beta=beta)), math.nan, f"identity rows (violation share {IDENTITY_RATE:g})"
    if t == "exact":
        return 0, math.nan, "exact"
    if t == "distribution":
        return required_ks_sample_size(check.target, alpha=alpha, beta=beta), math.nan, "KS design"
    if t == "interval" and check.inputs:
        return _derived_design(check, alpha, beta, seed, pilots, workers)
    measure = check.measures[0]
    sd, pilot_mean, how = _sd_of(check, measure, seed, pilots, workers, beta)
    if t in ("variance", "ratio"):
        return required_sample_size(math.log1p(check.target), sd=sd, alpha=alpha, beta=beta), sd, how
    if t == "two_sample":
        sd = sd * math.sqrt(2.0)  # the difference of two independent means of equal n
    center = None
    if check.relative:
        if t == "interval":
            center = pilot_mean if pilot_mean is not None else check.stated.value
        elif check.expected is not None:
            exp = check.expected(FORMULAS)
            center = exp if t != "two_sample" else (pilot_mean if pilot_mean is not None else exp)
        delta = check.target * abs(center if center is not None else 1.0)
    else:
        delta = check.target
    if not delta > 0 or not math.isfinite(delta):
        raise ValueError(f"check {check.label!r}: its target discrepancy is {delta}; a relative target needs a non-zero center")
    return required_sample_size(delta, sd=sd, alpha=alpha, beta=beta), sd, how


def _derived_design(check, alpha, beta, seed, pilots, workers):
    r"""n for an estimate f(means of several inputs), each input drawn n times: the delta
    method at the pilot means, :math:`sd_f^2 = \sum_i (\partial f/\partial\mu_i)^2 sd_i^2`."""
    mus, sds = [], []
    for ms in check.inputs:
        sd, mu, _ = _sd_of(check, ms, seed, pilots, workers, beta)
        mus.append(mu if mu is not None else 1.0)
        sds.append(sd)
    mu = np.array(mus, dtype=np.float64)
    grad = np.empty(mu.size)
    for i in range(mu.size):
        h = 1e-6 * max(abs(mu[i]), 1e-300)
        up, down = mu.copy(), mu.copy()
        up[i] += h
        down[i] -= h
        grad[i] = (check.derive(up) - check.derive(down)) / (2 * h)
    sd_f = float(math.sqrt(np.sum((grad * np.array(sds)) ** 2)))
    delta = check.target * (abs(check.derive(mu)) if check.relative else 1.0)
    if not (sd_f > 0 and delta > 0 and math.isfinite(sd_f)):
        raise ValueError(f"check {check.label!r}: cannot design from pilot sd {sd_f} and target {delta}")
    how = f"delta method on pilot runs of its {mu.size} inputs"
    return required_sample_size(delta, sd=sd_f, alpha=alpha, beta=beta), sd_f, how


def _all_checks(claims):
    """(claim, check) for every check, with each erratum's corrected check right after it."""
    for claim in claims:
        for check in claim.checks:
            yield claim, check
            if check.erratum is not None:
                yield claim, corrected_check(check)


def plan(claims=None, *, select=None, seed=DEFAULT_SEED, n_factor=1.0, alpha=FAMILY_ALPHA, beta=FALSE_PASS, workers=1):
    """Design the registry and return the :class:`Plan` of the selected claims.

    ``claims`` is the registry (default :data:`~stats.claims.registry.REGISTRY`);
    ``select`` a tuple of its claims, or a pattern for :func:`select_claims` (default:
    all).  The family, the per-test level and every simulation's size come from the
    whole registry, whatever the selection.
    """
    if claims is None:
        from .registry import REGISTRY as claims
    claims = tuple(claims)
    if isinstance(select, str):
        chosen = select_claims(select, claims)
    elif select is None:
        chosen = claims
    else:
        chosen = tuple(select)
    if not (isinstance(n_factor, (int, float)) and math.isfinite(n_factor) and n_factor > 0):
        raise ValueError(f"n_factor must be a positive finite number; got {n_factor!r}")
    everything = list(_all_checks(claims))
    reasons = {id(ch): _untestable_reason(ch) for _, ch in everything}
    m = sum(1 for _, ch in everything if ch.test in STATISTICAL_TESTS and not reasons[id(ch)])
    per_test = alpha / max(m, 1)
    chosen_ids = {c.id for c in chosen}
    needed = {ms.sim.key for cl, ch in everything if cl.id in chosen_ids and not reasons[id(ch)] for ms in ch.measures}
    pilots = {}
    relevant = [
        (cl, ch) for cl, ch in everything
        if not reasons[id(ch)] and (cl.id in chosen_ids or any(ms.sim.key in needed for ms in ch.measures))
    ]
    import threading

    warm = []

    def start_warming():
        # The pilots run in worker processes; meanwhile this process computes the exact values
        # the design and evaluation will ask for (cached).  Called once the workers exist.
        chosen_checks = [ch for cl, ch in relevant if cl.id in chosen_ids]
        t = threading.Thread(target=_warm_values, args=(chosen_checks, FORMULAS), daemon=True)
        t.start()
        warm.append(t)

    try:
        _run_pilots(
            [ms.sim for _, ch in relevant if ch.sd == "pilot" for ms in ch.measures]
            + [ms.sim for _, ch in relevant if _needs_tail_pilot(ch) for ms in (ch.inputs or ch.measures)],
            seed, pilots, workers, n_factor,
            after_submit=start_warming if workers > 1 else None,
        )
    finally:
        for t in warm:
            t.join()
    designs = {}
    sizes, keeps, sims = {}, {}, {}
    for cl, ch in relevant:
        try:
            n, sd, how, edge = _design(ch, per_test, beta, seed, pilots, workers)
        except _TailUntestable as exc:
            reasons[id(ch)] = str(exc)
            continue
        n = 0 if ch.test == "exact" else max(MIN_ROWS, math.ceil(n * n_factor))
        designs[id(ch)] = (n, sd, how, edge)
        for ms in ch.measures:
            sims[ms.sim.key] = ms.sim
            sizes[ms.sim.key] = max(sizes.get(ms.sim.key, 0), n)
            if ch.keeps_rows:
                keeps.setdefault(ms.sim.key, set()).add(ms.statistic)
    planned = []
    for cl, ch in everything:
        if cl.id not in chosen_ids:
            continue
        why = reasons[id(ch)]
        if why:
            planned.append(PlannedCheck(cl, ch, 0, math.nan, "", why))
            continue
        n, sd, how, edge = designs[id(ch)]
        planned.append(PlannedCheck(cl, ch, n, sd, how, edgeworth=edge))
    jobs = {
        key: Job(sims[key], sizes[key], frozenset(keeps.get(key, ())))
        for key in sorted(needed)
        if key in sizes
    }
    selection = None if chosen == claims else ",".join(c.id for c in chosen)
    return Plan(planned, jobs, per_test, m, float(n_factor), selection, pilots)


# ------------------------------------------------------------------------ simulation


def _warm_values(checks, formulas):
    """Import what the design and evaluation use beyond ``import stats`` (scipy.stats and
    pandas, ~0.9 s), then evaluate the deterministic expected values (exact integrals,
    asymptotic constants) once, so that their caches are warm when the design and
    :func:`evaluate` ask; errors are left for evaluate to report.  Run in a thread while
    worker processes simulate, where both overlap their work instead of preceding it."""
    import pandas  # noqa: F401
    import scipy.stats  # noqa: F401

    for ch in checks:
        if ch.expected is None or not (ch.test == "exact" or {"saturation_exact", "saturation_asymptotics"} & set(ch.uses)):
            continue
        try:
            ch.expected(formulas)
        except Exception:  # noqa: BLE001 - evaluate() recomputes and reports it
            pass


def _warm_exact_values(the_plan, formulas):
    _warm_values([p.check for p in the_plan.checks if not p.untestable], formulas)


def simulate(the_plan, *, seed=DEFAULT_SEED, formulas=FORMULAS, workers=1, scheduler=None, progress=False, only=None):
    """Draw every simulation the plan needs: ``{key: SimResult or SimFailure}``.

    ``only`` restricts to a set of simulation keys (mutants re-run the ones they touch).
    While worker processes simulate, this process, otherwise idle, computes the exact
    values that :func:`evaluate` will need (they are cached).
    """
    import threading

    jobs = [j for k, j in the_plan.jobs.items() if only is None or k in only]
    warm = []

    def start_warming():
        # Called by the executor once its workers exist (never before a fork).
        t = threading.Thread(target=_warm_exact_values, args=(the_plan, formulas), daemon=True)
        t.start()
        warm.append(t)

    parallel = (workers > 1 or scheduler is not None) and only is None
    try:
        return run_simulations(
            jobs, seed=seed, formulas=formulas, workers=workers, scheduler=scheduler, progress=progress, record_errors=True,
            after_submit=start_warming if parallel else None, chunk_size=CHUNK_NUMBERS,
        )
    finally:
        for t in warm:
            t.join()


# ------------------------------------------------------------------------ evaluation


def _summary(results, measure):
    res = results[measure.sim.key]
    if isinstance(res, SimFailure):
        raise _SimError(res.message)
    s = res.summary(measure.statistic).moments()
    return scale_moments(s, measure.factor) if measure.factor != 1.0 else s, res


class _SimError(Exception):
    pass


def _finite(x):
    try:
        return math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def _interval_p(est, se, stated):
    """p-value of the interval null ``value in [lo, hi)``: that of its closest point (two-sided, conservative)."""
    from scipy import stats as sps

    dist = max(stated.lo - est, est - stated.hi, 0.0)
    if dist == 0.0:
        return 1.0
    if se == 0:
        return 0.0
    return float(min(1.0, 2.0 * sps.norm.sf(dist / se)))


def _derived(check, results):
    """Estimate and delta-method standard error of ``check.derive`` over its inputs' means."""
    means, ses, ns = [], [], []
    for ms in check.inputs:
        s, _ = _summary(results, ms)
        means.append(float(s.mean))
        ses.append(math.sqrt(float(s.m2) / (s.n - 1) / s.n))
        ns.append(s.n)
    mu = np.array(means)
    f = check.derive
    value = float(f(mu))
    grad = np.empty(mu.size)
    for i in range(mu.size):
        h = 1e-6 * max(abs(mu[i]), ses[i], 1e-300)
        up, down = mu.copy(), mu.copy()
        up[i] += h
        down[i] -= h
        grad[i] = (f(up) - f(down)) / (2 * h)
    se = float(math.sqrt(np.sum((grad * np.array(ses)) ** 2)))
    return value, se, min(ns)


def _test_one(p: PlannedCheck, results, formulas, per_test, beta):
    """One check's numbers: dict(expected, estimate, mcse, p_value, detectable, n, decided, note)."""
    from scipy import stats as sps

    ch = p.check
    t = ch.test
    out = dict(expected=math.nan, estimate=math.nan, mcse=math.nan, p_value=math.nan, detectable=math.nan, n=0)
    notes = [ch.note] if ch.note else []
    if p.design:
        notes.append(f"n by {p.design}")
    expected = None
    if ch.expected is not None and t not in ("interval",):
        expected = ch.expected(formulas)
        if t in ("exact",):
            value, err = expected if isinstance(expected, tuple) else (expected, 0.0)
            out.update(expected=ch.stated.value, estimate=float(value), mcse=float(err), detectable=float(err))
            notes.append(f"claims {ch.stated.describe()}")
            if not (_finite(value) and _finite(err)):
                return out, "error", notes + ["the computed value is NaN or infinite"]
            if ch.stated.contains(value - err) and ch.stated.contains(value + err) or (err == 0 and ch.stated.contains(value)):
                return out, "holds", notes
            if value + err < ch.stated.lo or value - err >= ch.stated.hi:
                return out, "refuted", notes
            return out, "error", notes + ["undecidable: the value's error bound straddles an end of the interval"]
        if t != "distribution" and not _finite(expected):
            out["expected"] = float("nan") if expected is None else expected
            return out, "error", notes + [f"expected value is {expected!r}: a closed form that is NaN or infinite decides nothing"]
    if t == "identity":
        res = results[ch.measure.sim.key]
        if isinstance(res, SimFailure):
            raise _SimError(res.message)
        s = res.summary(ch.measure.statistic)
        out.update(expected=0.0, estimate=float(s.n_above_one), n=s.n, detectable=1.0 - FALSE_PASS ** (1.0 / s.n))
        notes.append(f"largest normalised violation {s.maximum:.3g} (a row violates when > 1)")
        if s.n_nonfinite:
            return out, "error", notes + [f"{s.n_nonfinite} rows gave NaN or inf"]
        return out, ("refuted" if s.n_above_one else "holds"), notes
    if t == "distribution":
        res = results[ch.measure.sim.key]
        if isinstance(res, SimFailure):
            raise _SimError(res.message)
        x = res.rows(ch.measure.statistic) * ch.measure.factor
        r = distribution_test(x, expected, alpha=per_test)
        shape = ", ".join(f"{k}={v:.4g}" for k, v in getattr(expected, "kwds", {}).items())
        notes.append(f"estimate is the KS distance to the exact CDF ({getattr(getattr(expected, 'dist', None), 'name', '?')}: {shape})")
        out.update(estimate=r.statistic, p_value=r.pvalue, n=r.n, detectable=detectable_ks_distance(r.n, alpha=per_test, beta=beta))
        return out, "tested", notes
    if t == "interval":
        if ch.inputs:
            est, se, n = _derived(ch, results)
        else:
            s, _ = _summary(results, ch.measure)
            est, se, n = float(s.mean), math.sqrt(float(s.m2) / (s.n - 1) / s.n), s.n
        out.update(expected=ch.stated.value, estimate=est, mcse=se, n=n)
        notes.append(f"claims {ch.stated.describe()}")
        if not (_finite(est) and _finite(se)):
            return out, "error", notes + ["the estimate is NaN or infinite"]
        out["p_value"] = _interval_p(est, se, ch.stated)
        out["detectable"] = (sps.norm.isf(per_test / 2) + sps.norm.isf(beta)) * se
        return out, "tested", notes
    s, _ = _summary(results, ch.measure)
    if t == "mean":
        r = mean_test(s, expected, alpha=per_test, tail_index=ch.tail_index)
        det = detectable_discrepancy(r.n, sd=p.design_sd, alpha=per_test, beta=beta)
    elif t == "variance":
        r = variance_test(s, expected, alpha=per_test, tail_index=ch.tail_index)
        det = abs(expected) * math.expm1(detectable_discrepancy(r.n, sd=p.design_sd, alpha=per_test, beta=beta))
    elif t == "ratio":
        sb, _ = _summary(results, ch.measure_b)
        r = variance_ratio_test(sb, s, expected, alpha=per_test, tail_index=ch.tail_index)
        det = abs(expected) * math.expm1(detectable_discrepancy(r.n, sd=p.design_sd, alpha=per_test, beta=beta))
    elif t == "two_sample":
        sb, _ = _summary(results, ch.measure_b)
        ma, mb = float(s.mean), float(sb.mean)
        va, vb = float(s.m2) / (s.n - 1), float(sb.m2) / (sb.n - 1)
        w = sps.ttest_ind_from_stats(ma, math.sqrt(va), s.n, mb + expected, math.sqrt(vb), sb.n, equal_var=False)
        se = math.sqrt(va / s.n + vb / sb.n)
        out.update(expected=expected, estimate=ma - mb, mcse=se, p_value=float(w.pvalue), n=min(s.n, sb.n))
        out["detectable"] = detectable_discrepancy(min(s.n, sb.n), sd=p.design_sd, alpha=per_test, beta=beta)
        if not _finite(out["p_value"]):
            return out, "error", notes + ["the test returned a NaN p-value"]
        return out, "tested", notes
    else:  # pragma: no cover - TESTS is closed
        raise ValueError(t)
    out.update(expected=expected, estimate=r.estimate, mcse=r.mcse, p_value=r.pvalue, n=r.n, detectable=det)
    if not _finite(r.pvalue) or not _finite(r.estimate):
        return out, "error", notes + ["the test returned a NaN p-value or estimate"]
    return out, "tested", notes


def _cache_key(p, results, formulas):
    sims = tuple(id(results.get(ms.sim.key)) for ms in p.check.measures)
    used = tuple(getattr(formulas, name) for name in p.check.uses)
    return (id(p), sims, used)


def evaluate(the_plan, results, *, formulas=FORMULAS, alpha=FAMILY_ALPHA, beta=FALSE_PASS, cache=None):
    """Test every planned check against ``formulas``; one tidy row per check (:data:`COLUMNS`)."""
    import pandas as pd

    cache = {} if cache is None else cache
    per_test = the_plan.per_test
    rows, decided = [], []
    for p in the_plan.checks:
        ch, cl = p.check, p.claim
        row = dict(
            claim=cl.id,
            section=cl.section,
            statement=cl.statement,
            check=ch.label,
            test=ch.test,
            closed_form=cl.closed_form,
            expected=math.nan,
            estimate=math.nan,
            mcse=math.nan,
            p_value=math.nan,
            p_holm=math.nan,
            detectable=math.nan,
            tail_error=math.nan,
            n=0,
            verdict="untestable",
            note=p.untestable or "",
        )
        state = "untestable"
        if not p.untestable:
            key = _cache_key(p, results, formulas)
            if key not in cache:
                try:
                    cache[key] = _test_one(p, results, formulas, per_test, beta)
                except _SimError as exc:
                    cache[key] = ({}, "error", [f"the simulation raised {exc}"])
                except UntestableError as exc:  # pragma: no cover - screened in plan()
                    cache[key] = ({}, "error", [str(exc)])
                except (ValueError, TypeError, ZeroDivisionError, FloatingPointError) as exc:
                    cache[key] = ({}, "error", [f"{type(exc).__name__}: {exc}"])
            numbers, state, notes = cache[key]
            row.update(numbers)
            row["note"] = "; ".join(x for x in notes if x)
            if p.edgeworth is not None and row["n"] >= 2 and state == "tested":
                e = tail_error(row["n"], alpha=per_test, a1=p.edgeworth[0], a2=p.edgeworth[1])
                row["tail_error"] = e
                if e > TAIL_FRACTION and 0 <= row["p_value"] <= 1:
                    # The normal tail may be too thin where n could not be raised: a conservative
                    # p-value keeps the false-fail rate, at the cost of a larger detectable shift.
                    row["p_value"] = conservative_pvalue(row["p_value"], row["n"], a1=p.edgeworth[0], a2=p.edgeworth[1])
                    z_b = -special.ndtri(beta)  # scipy.special, not scipy.stats: once per row per evaluation
                    widen = (-special.ndtri(per_test / (2 * (1 + e))) + z_b) / (-special.ndtri(per_test / 2) + z_b)
                    row["detectable"] = row["detectable"] * widen
                    row["note"] = "; ".join(
                        x for x in (row["note"], f"p-value x (1 + tail error), {e:.2g} at the design level") if x
                    )
        rows.append(row)
        decided.append(state)
    testable = [i for i, s in enumerate(decided) if s == "tested"]
    adjusted = holm_adjust([rows[i]["p_value"] for i in testable]) if testable else []
    for i, adj in zip(testable, adjusted):
        rows[i]["p_holm"] = float(adj)
        decided[i] = "refuted" if adj < alpha else "holds"
    for p, row, state in zip(the_plan.checks, rows, decided):
        if state == "untestable":
            continue
        if state == "error":
            row["verdict"] = "ERROR"
            continue
        refuted = state == "refuted"
        e = p.check.erratum
        if e is None:
            row["verdict"] = "REJECTED" if refuted else "pass"
        else:
            row["verdict"] = "erratum confirmed" if refuted else "erratum stale"
            row["note"] = f"text: {p.check.stated.text if p.check.stated else '?'}; corrected: {e.corrected.text}; {row['note']}"
    return pd.DataFrame(rows, columns=COLUMNS)


def passed(table):
    """True when every row's verdict is acceptable (pass, confirmed erratum, untestable)."""
    return bool(table["verdict"].isin(OK_VERDICTS).all())


def verify_claims(claims=None, *, select=None, seed=DEFAULT_SEED, n_factor=1.0, formulas=FORMULAS, workers=1, scheduler=None, progress=False):
    """Plan, simulate and evaluate; returns the tidy results table."""
    the_plan = plan(claims, select=select, seed=seed, n_factor=n_factor, workers=workers)
    results = simulate(the_plan, seed=seed, formulas=formulas, workers=workers, scheduler=scheduler, progress=progress)
    return evaluate(the_plan, results, formulas=formulas)


def _failing(table, per_test):
    """Rows that fail on a partial evaluation: errors, stale errata, refuted identities and exact
    checks, and statistical checks whose own p-value is below the full family's Bonferroni
    level (stricter than Holm on the subset, so a partial run never catches more easily)."""
    from .schema import STATISTICAL_TESTS

    statistical = table["test"].isin(STATISTICAL_TESTS)
    hard = table["verdict"].isin(["ERROR", "erratum stale"])
    refuted_det = ~statistical & table["verdict"].isin(["REJECTED"])
    refuted_stat = statistical & (table["p_value"] < per_test) & ~table["verdict"].isin(["erratum confirmed", "untestable"])
    return table[hard | refuted_det | refuted_stat]


def evaluate_mutants(the_plan, results, mutants, *, seed=DEFAULT_SEED, workers=1, scheduler=None, progress=False):
    """Run each mutant on the same draws; one row per mutant (caught when a check fails).

    A mutant re-runs only the simulations that call a field it replaces (same streams, so
    the same random numbers), cheapest first in three tiers, and stops at the first tier
    after which some check fails: ``checks_failing`` counts the failures seen by then.
    Checks it cannot affect keep their cached results.
    """
    import pandas as pd
    from ..formulas import changed_fields

    cache = {}
    evaluate(the_plan, results, cache=cache)  # the true formulas' results, shared by every mutant
    rows = []
    for m in mutants:
        changed = changed_fields(m.formulas)
        touched = sorted(
            (k for k, job in the_plan.jobs.items() if set(getattr(job.sim, "uses", ())) & changed),
            key=lambda k: the_plan.jobs[k].n * float(the_plan.jobs[k].sim.cost),
        )
        tiers = [t for t in (touched[: max(1, len(touched) // 3)], touched[max(1, len(touched) // 3):]) if t] or [[]]
        mutated, done, bad, table = dict(results), set(), None, None
        for tier in tiers:
            if tier:
                mutated.update(simulate(the_plan, seed=seed, formulas=m.formulas, workers=workers, scheduler=scheduler,
                                        progress=progress, only=set(tier)))
                done |= set(tier)
            ready = [p for p in the_plan.checks if all(ms.sim.key not in touched or ms.sim.key in done for ms in p.check.measures)]
            part = Plan(ready, the_plan.jobs, the_plan.per_test, the_plan.family_size, the_plan.n_factor, the_plan.selection)
            table = evaluate(part, mutated, formulas=m.formulas, cache=cache)
            bad = _failing(table, the_plan.per_test)
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
