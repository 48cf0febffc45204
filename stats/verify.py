r"""Run the claims registry: design the sample sizes, simulate, test, correct, report.

1. **Plan.**  Checks whose test needs a moment the simulated law lacks are marked
   *untestable* up front.  The remaining m checks form one family with family-wise
   false-fail rate ``alpha`` (Holm); each check's sample size is the smallest that detects
   its target discrepancy with false-pass ``beta`` at the Bonferroni level alpha/m (Holm
   rejects at least whatever Bonferroni rejects, so the power statement holds).  The
   design uses the true closed-form cumulants of the score, computed before any draw.
2. **Simulate.**  Every :class:`~stats.claims.SimSpec` is drawn once, with the largest n
   its checks need, from a stream keyed by (seed, spec): a claim's numbers do not depend
   on which other claims run.
3. **Test** each check against the closed form of a :class:`~stats.claims.Formulas`, then
   Holm-adjust the p-values across the family.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .claims import REGISTRY, Check, Claim, Formulas, SimSpec
from .closed_forms import score_cumulants, score_scale, score_tail_index
from .estimators import moment_summary, scale_moments
from .inference import (
    MEAN_TEST_MIN_TAIL_INDEX,
    VARIANCE_TEST_MIN_TAIL_INDEX,
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
from .sampling import sample_scores, score_summary

__all__ = ["DEFAULT_SEED", "PlannedCheck", "evaluate", "plan", "select_claims", "simulate", "verify_claims"]

DEFAULT_SEED = 4_3_2026
FAMILY_ALPHA = 1e-3
FALSE_PASS = 1e-3
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
    "n",
    "verdict",
    "note",
]
OK_VERDICTS = ("pass", "erratum confirmed", "untestable")


@dataclass(frozen=True)
class PlannedCheck:
    claim: Claim
    check: Check
    n: int  # draws the design asks for (0 when untestable)
    design_sd: float  # per-draw sd of the test's estimator (log scale for variances)
    untestable: str | None = None


def select_claims(patterns=None, claims=REGISTRY):
    """Claims whose id matches any of the comma-separated glob ``patterns`` (substring if no glob)."""
    from fnmatch import fnmatchcase

    if not patterns:
        return tuple(claims)
    pats = [p.strip() for p in patterns.split(",") if p.strip()]
    pats = [p if any(ch in p for ch in "*?[") else f"*{p}*" for p in pats]
    chosen = tuple(c for c in claims if any(fnmatchcase(c.id, p) for p in pats))
    if not chosen:
        raise ValueError(f"--only {patterns!r} matches no claim; ids are: {', '.join(c.id for c in claims)}")
    return chosen


def _kappa(sim: SimSpec, scale):
    return score_cumulants(
        sim.d_k, sim.rho, sigma_q=sim.sigma_q, sigma_k=sim.sigma_k, entries=sim.entries, scale=scale
    )


def _log_var_sd(sim):
    k = _kappa(sim, "none")
    return math.sqrt(2.0 + k[3] / k[1] ** 2)  # sqrt(kurtosis - 1)


def _untestable_reason(check: Check):
    sims = [check.sim] + ([check.sim_b] if check.sim_b else [])
    need = {"mean": MEAN_TEST_MIN_TAIL_INDEX, "distribution": 0.0}.get(check.quantity, VARIANCE_TEST_MIN_TAIL_INDEX)
    for s in sims:
        tail = score_tail_index(s.entries, s.rho)
        if not tail > need:
            return (
                f"{check.quantity} test needs finite score moments beyond order {need:g}; with {s.entries.label} "
                f"entries and rho={s.rho:g} they are finite only below order {tail:g}"
            )
    if check.quantity in ("variance", "variance_ratio"):
        for s in sims:
            if _log_var_sd(s) < 1e-6:
                return (
                    f"degenerate: with {s.entries.label} entries at d_k={s.d_k} the squared score is constant, so the "
                    "sample variance has no normal limit to test against"
                )
    return None


def _design(check: Check, alpha, beta):
    """(n, sd) for one check at per-test level alpha."""
    if check.quantity == "distribution":
        return required_ks_sample_size(check.target, alpha=alpha, beta=beta), math.nan
    if check.quantity == "mean":
        k = _kappa(check.sim, check.scale)
        sd = math.sqrt(k[1])
        delta = check.target * (abs(k[0]) if check.relative else sd)
        if delta == 0:
            raise ValueError(f"check {check.label!r}: a relative target needs a non-zero mean")
        return required_sample_size(delta, sd=sd, alpha=alpha, beta=beta), sd
    sd = _log_var_sd(check.sim)
    if check.quantity == "variance_ratio":
        sd = math.hypot(sd, _log_var_sd(check.sim_b))
    return required_sample_size(math.log1p(check.target), sd=sd, alpha=alpha, beta=beta), sd


def plan(claims=REGISTRY, *, alpha=FAMILY_ALPHA, beta=FALSE_PASS, n_factor=1.0):
    """Planned checks and the per-test Bonferroni level used for their design."""
    if not n_factor > 0:
        raise ValueError(f"n_factor must be positive; got {n_factor}")
    pending = [(c, ch, _untestable_reason(ch)) for c in claims for ch in c.checks]
    m = sum(1 for *_, why in pending if why is None)
    if m == 0:
        raise ValueError("no testable check in the selected claims")
    per_test = alpha / m
    out = []
    for claim, check, why in pending:
        if why:
            out.append(PlannedCheck(claim, check, 0, math.nan, why))
            continue
        n, sd = _design(check, per_test, beta)
        out.append(PlannedCheck(claim, check, max(16, math.ceil(n * n_factor)), sd))
    return out, per_test


def _spec_seed(seed, spec: SimSpec):
    digest = hashlib.sha256(repr(spec).encode()).digest()
    words = tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))
    return np.random.SeedSequence(seed, spawn_key=words)


def simulation_sizes(planned):
    """Draws per simulation: the largest n any of its checks asks for."""
    sizes = {}
    for p in planned:
        if p.untestable:
            continue
        for s in (p.check.sim, p.check.sim_b):
            if s is not None:
                sizes[s] = max(sizes.get(s, 0), p.n)
    return sizes


def simulate(planned, *, seed=DEFAULT_SEED, progress=False):
    """Draw every simulation the plan needs: ``{spec: (MomentSummary, samples or None)}``."""
    from tqdm.auto import tqdm

    sizes = simulation_sizes(planned)
    results = {}
    total = sum(n * s.cost for s, n in sizes.items())
    with tqdm(total=total, unit="draw", unit_scale=True, disable=None if progress else True, desc="simulating", leave=False) as bar:
        for spec, n in sizes.items():
            kw = dict(rho=spec.rho, sigma_q=spec.sigma_q, sigma_k=spec.sigma_k, entries=spec.entries, scale="none")
            kw["seed"] = _spec_seed(seed, spec)
            if spec.keep_samples:
                x = sample_scores(n, spec.d_k, **kw)
                results[spec] = (moment_summary(x), x)
            else:
                results[spec] = (score_summary(n, spec.d_k, **kw), None)
            bar.update(n * spec.cost)
    return results


def _run_test(p: PlannedCheck, sims, formulas, alpha):
    ch = p.check
    summary, samples = sims[ch.sim]
    c = score_scale(ch.sim.d_k, ch.scale)
    expected = ch.expected(formulas)
    tail = score_tail_index(ch.sim.entries, ch.sim.rho)
    if ch.quantity == "distribution":
        return distribution_test(samples * c, expected, alpha=alpha), expected  # expected is the frozen law
    if ch.quantity in ("mean", "variance"):
        test = mean_test if ch.quantity == "mean" else variance_test
        return test(scale_moments(summary, c), expected, alpha=alpha, tail_index=tail), expected
    summary_b, _ = sims[ch.sim_b]
    c_b = score_scale(ch.sim_b.d_k, ch.scale)
    tail = min(tail, score_tail_index(ch.sim_b.entries, ch.sim_b.rho))
    r = variance_ratio_test(scale_moments(summary_b, c_b), scale_moments(summary, c), expected, alpha=alpha, tail_index=tail)
    return r, expected


def _detectable(p: PlannedCheck, n, expected, alpha, beta):
    ch = p.check
    if ch.quantity == "distribution":
        return detectable_ks_distance(n, alpha=alpha, beta=beta)
    delta = detectable_discrepancy(n, sd=p.design_sd, alpha=alpha, beta=beta)
    if ch.quantity == "mean":
        return delta
    return abs(expected) * math.expm1(delta)  # the log-scale shift, in the expected value's units


def evaluate(planned, sims, *, formulas=Formulas(), alpha=FAMILY_ALPHA, beta=FALSE_PASS, cache=None):
    """Test every planned check against ``formulas``; one tidy row per check.

    ``cache`` (a dict, optional) memoizes test results by (check, formula used), so
    mutants that leave a check's formula alone do not re-run its test.
    """
    cache = {} if cache is None else cache
    testable = [p for p in planned if not p.untestable]
    per_test = alpha / len(testable)
    rows, pvalues = [], []
    for p in planned:
        ch, cl = p.check, p.claim
        row = dict(
            claim=cl.id,
            section=cl.section,
            statement=cl.statement,
            check=ch.label,
            test=ch.quantity,
            closed_form=cl.closed_form,
            expected=math.nan,
            estimate=math.nan,
            mcse=math.nan,
            p_value=math.nan,
            p_holm=math.nan,
            detectable=math.nan,
            n=0,
            verdict="untestable",
            note=p.untestable or "",
        )
        if not p.untestable:
            used = formulas.distribution if ch.quantity == "distribution" else formulas.moments
            key = (id(p), used)
            if key not in cache:
                cache[key] = _run_test(p, sims, formulas, alpha)
            result, expected = cache[key]
            shown = result.statistic if ch.quantity == "distribution" else result.estimate
            is_law = ch.quantity == "distribution"
            row.update(
                expected=math.nan if is_law else expected,
                estimate=shown,
                mcse=result.mcse,
                p_value=result.pvalue,
                n=result.n,
                detectable=_detectable(p, result.n, expected, per_test, beta),
            )
            if is_law:
                shape = ", ".join(f"{k}={v:.4g}" for k, v in getattr(expected, "kwds", {}).items())
                row["note"] = f"estimate is the KS distance to the closed-form CDF ({expected.dist.name}: {shape})"
            pvalues.append(result.pvalue)
        rows.append(row)
    adjusted = iter(holm_adjust(pvalues))
    for p, row in zip(planned, rows):
        if p.untestable:
            continue
        row["p_holm"] = next(adjusted)
        rejected = row["p_holm"] < alpha
        if p.claim.erratum is None:
            row["verdict"] = "REJECTED" if rejected else "pass"
        else:
            row["verdict"] = "erratum confirmed" if rejected else "erratum stale"
            row["note"] = f"text: {p.claim.erratum.stated}; holds instead: {p.claim.erratum.corrected}"
    return pd.DataFrame(rows, columns=COLUMNS)


def verify_claims(claims=REGISTRY, *, seed=DEFAULT_SEED, n_factor=1.0, formulas=Formulas(), progress=False):
    """Plan, simulate and evaluate ``claims``; returns the tidy results table."""
    planned, _ = plan(claims, n_factor=n_factor)
    return evaluate(planned, simulate(planned, seed=seed, progress=progress), formulas=formulas)


def passed(table):
    """True when every row's verdict is acceptable (pass, confirmed erratum, untestable)."""
    return bool(table["verdict"].isin(OK_VERDICTS).all())
