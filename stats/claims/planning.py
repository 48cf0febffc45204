r"""Plan a run: which checks, in which family, at which level, drawing how many rows.

Checks that no machine can test (a moment the simulated law lacks, a degenerate
statistic, a normal approximation no affordable n calibrates) are *untestable* with the
reason.  Every other statistical check of the **whole registry** is a member of one family
of size m with family-wise false-fail rate ``alpha`` (Holm) -- including a check that
needs an optional part not installed *here* (PyTorch), which keeps its place, so the
family, the level and every designed n are the same on every machine.  Each check's n is
the smallest that detects its target discrepancy with false-pass ``beta`` at the
Bonferroni level alpha/m (Holm rejects whatever Bonferroni rejects, so the power
statement holds), raised where its normal approximation needs it
(:mod:`stats.claims.design`).  A simulation is drawn once, with the largest n any check of
the whole registry asks of it -- so ``--only`` draws exactly what the full run draws for
the checks it selects, and their numbers equal the full run's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .._validation import MAX_ROWS
from ..engine.executors import Job
from ..formulas import FORMULAS
from .checks import DesignContext
from .defaults import DEFAULT_SEED, DRAFT_MIN_ROWS, DRAFT_ROW_NUMBERS, FALSE_PASS, FAMILY_ALPHA, MIN_ROWS
from .design import TailUntestable, design_check
from .simulating import Warming
from .pilots import Pilots

__all__ = ["Plan", "PlannedCheck", "all_checks", "plan", "select_claims"]


@dataclass(frozen=True)
class PlannedCheck:
    """A check of the selection with its design: ``n`` rows per simulation it reads (0 when
    untestable or deterministic), the per-row ``design_sd`` behind n (log scale for
    variances, NaN when none), how n was designed, why it is untestable (``None`` when it is
    not), whether that reason is only this machine's (``untestable_here``: an optional part
    missing; the check stays in the family), the Edgeworth coefficients of its statistic, and
    ``design_n``, the rows its design asks (above ``n`` only in a draft)."""

    claim: object
    check: object
    n: int
    design_sd: float
    design: str
    untestable: str | None = None
    edgeworth: tuple | None = None
    untestable_here: bool = False
    design_n: int = 0

    @property
    def statistical(self):
        return self.check.statistical and not self.untestable

    @property
    def below_design(self):
        """True for a drawn check given fewer rows than its design asks (only in a draft)."""
        return 0 < self.n < self.design_n


@dataclass
class Plan:
    """The planned checks (the selection), the simulations they need and the design level."""

    checks: list
    jobs: dict  # stream key -> Job
    per_test: float  # Bonferroni design level alpha / m of the whole registry
    family_size: int
    n_factor: float = 1.0
    selection: str | None = None
    pilots: object = field(default=None, repr=False)

    def part(self, checks):
        """The same plan restricted to ``checks`` (a subset of its own, e.g. what a mutant can move)."""
        return Plan(list(checks), self.jobs, self.per_test, self.family_size, self.n_factor, self.selection, self.pilots)


def _floor(check, n_factor):
    """The fewest rows of a drawn check (:data:`~stats.claims.defaults.MIN_ROWS`; in a draft,
    fewer for costly rows: :func:`_draft_rows`)."""
    if n_factor >= 1:
        return MIN_ROWS
    return min(MIN_ROWS, max(_draft_rows(ms.sim) for ms in check.measures))


def _draft_rows(sim):
    """A draft's floor for ``sim``: one block, and at most ``DRAFT_ROW_NUMBERS`` random numbers'
    worth of rows, but never below ``DRAFT_MIN_ROWS``."""
    affordable = math.ceil(DRAFT_ROW_NUMBERS / max(1.0, float(sim.cost)))
    return max(DRAFT_MIN_ROWS, min(int(sim.block_rows), affordable))


def select_claims(patterns=None, claims=None):
    """Claims whose id matches any of the comma-separated ``patterns``: a plain id matches that claim
    only, a glob (``*``, ``?``, ``[``) every id it matches.  A pattern that matches no claim is a
    ``ValueError`` naming it (a typo must not drop a claim from a run silently)."""
    from fnmatch import fnmatchcase

    if claims is None:
        from .registry import REGISTRY as claims
    claims = _claim_tuple(claims, "claims")
    if patterns is None:
        return claims
    if not isinstance(patterns, str):
        raise TypeError(f"patterns must be a string of comma-separated claim ids or globs; got {patterns!r}")
    pats = [p.strip() for p in patterns.split(",") if p.strip()]
    if not pats:
        raise ValueError(f"patterns {patterns!r} names no claim; give claim ids or globs, e.g. 'exact-law,mup-*'")
    unmatched = [p for p in pats if not any(fnmatchcase(c.id, p) for c in claims)]
    if unmatched:
        raise ValueError(f"patterns: {', '.join(repr(p) for p in unmatched)} matches no claim; "
                         "`python -m stats list` shows the ids (a plain id matches that claim only; use a glob "
                         "such as 'mup-*' for several)")
    return tuple(c for c in claims if any(fnmatchcase(c.id, p) for p in pats))


def _claim_tuple(claims, name):
    """``claims`` (any iterable of claims, read once) as a tuple; a TypeError naming ``name`` otherwise."""
    from .claim import Claim

    if isinstance(claims, (str, bytes)):
        raise TypeError(f"{name} must be an iterable of Claim objects; got a string {claims!r}")
    try:
        out = tuple(claims)
    except TypeError:
        raise TypeError(f"{name} must be an iterable of Claim objects; got {type(claims).__name__}") from None
    bad = next((c for c in out if not isinstance(c, Claim)), None)
    if bad is not None:
        raise TypeError(f"{name} must hold Claim objects (the registry's); got {bad!r}")
    return out


def all_checks(claims):
    """``(claim, check)`` for every check, with each erratum's corrected check right after it."""
    for claim in claims:
        for check in claim.checks:
            yield claim, check
            if check.erratum is not None:
                yield claim, check.corrected()


def plan(claims=None, *, select=None, seed=DEFAULT_SEED, n_factor=1.0, alpha=FAMILY_ALPHA, beta=FALSE_PASS, workers=1):
    """Design the registry and return the :class:`Plan` of the selected claims.

    ``claims`` is the registry (default :data:`~stats.claims.registry.REGISTRY`);
    ``select`` a tuple of its claims, or a pattern for :func:`select_claims` (default:
    all).  The family, the per-test level and every simulation's size come from the
    whole registry, whatever the selection and whatever is installed.
    """
    if claims is None:
        from .registry import REGISTRY as claims
    claims = _claim_tuple(claims, "claims")
    if isinstance(select, str):
        chosen = select_claims(select, claims)
    elif select is None:
        chosen = claims
    else:
        chosen = _claim_tuple(select, "select")
        if not chosen:
            raise ValueError("select must name at least one claim (None: all of them)")
    if not (isinstance(n_factor, (int, float)) and math.isfinite(n_factor) and n_factor > 0):
        raise ValueError(f"n_factor must be a positive finite number; got {n_factor!r}")
    everything = list(all_checks(claims))
    intrinsic = [ch.untestable_reason() for _, ch in everything]
    here = [ch.missing_requirement() for _, ch in everything]
    m = sum(1 for (_, ch), why in zip(everything, intrinsic) if ch.statistical and not why)
    per_test = alpha / max(m, 1)
    chosen_ids = {c.id for c in chosen}
    runnable = [not (a or b) for a, b in zip(intrinsic, here)]
    needed = {ms.sim.key for (cl, ch), ok in zip(everything, runnable) if ok and cl.id in chosen_ids for ms in ch.measures}
    relevant = [
        i for i, (cl, ch) in enumerate(everything)
        if not intrinsic[i] and (cl.id in chosen_ids or any(ms.sim.key in needed for ms in ch.measures))
        # A check missing an optional part here is designed only when that needs no draw of its own
        # simulations, so its share of a drawn simulation's size is the same on every machine.
        and (runnable[i] or not ch.pilot_measures())
    ]
    pilots = Pilots(seed=seed, formulas=FORMULAS, n_factor=n_factor, workers=workers)
    # The pilots run in worker processes; meanwhile this process computes the exact values
    # the design and evaluation will ask for (cached).
    with Warming([everything[i][1] for i in relevant if everything[i][0].id in chosen_ids], FORMULAS) as warm:
        pilots.run([ms.sim for i in relevant if runnable[i] for ms in everything[i][1].pilot_measures()],
                   after_submit=warm.start if workers > 1 else None)
    ctx = DesignContext(FORMULAS, beta, pilots.of)
    designs, tail_reasons = {}, {}
    sizes, keeps, sims = {}, {}, {}
    for i in relevant:
        ch = everything[i][1]
        try:
            d = design_check(ch, ctx, per_test)
        except TailUntestable as exc:
            tail_reasons[i] = str(exc)
            continue
        except (ValueError, TypeError, ArithmeticError) as exc:
            # A statement that cannot be designed is a mistake in the registry: stop, and say where.
            raise ValueError(f"claim {everything[i][0].id!r}, check {ch.label!r}: its design failed: {exc}") from exc
        if ch.draws and d.n * n_factor > MAX_ROWS:
            raise ValueError(f"n_factor = {n_factor:g} asks {d.n * n_factor:.3g} rows of claim {everything[i][0].id!r}, "
                             f"check {ch.label!r}: more than {MAX_ROWS} (no run could finish)")
        n = max(_floor(ch, n_factor), math.ceil(d.n * n_factor), ch.least_rows(per_test)) if ch.draws else 0
        designs[i] = (n, d)
        for ms in ch.measures:
            sims[ms.sim.key] = ms.sim
            sizes[ms.sim.key] = max(sizes.get(ms.sim.key, 0), n)
            if ch.keeps_rows:
                keeps.setdefault(ms.sim.key, set()).add(ms.statistic)
    planned = []
    for i, (cl, ch) in enumerate(everything):
        if cl.id not in chosen_ids:
            continue
        why = intrinsic[i] or tail_reasons.get(i)
        if why or here[i]:
            planned.append(PlannedCheck(cl, ch, 0, math.nan, "", why or here[i], untestable_here=not why))
            continue
        n, d = designs[i]
        planned.append(PlannedCheck(cl, ch, n, d.sd, d.how, edgeworth=d.edgeworth, design_n=d.n if ch.draws else 0))
    jobs = {key: Job(sims[key], sizes[key], frozenset(keeps.get(key, ()))) for key in sorted(needed) if key in sizes}
    selection = None if chosen == claims else ",".join(c.id for c in chosen)
    return Plan(planned, jobs, per_test, m, float(n_factor), selection, pilots)
