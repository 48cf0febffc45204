r"""Evaluate a plan's checks on drawn results: each kind decides its own numbers, then the
family is Holm-adjusted and every row gets its verdict (:mod:`stats.claims.verdicts`).

Where a check's normal approximation could not be calibrated at its level by raising n
(its tail error at the design level above :data:`~stats.inference.tails.TAIL_FRACTION`),
its p-value is made conservative (:func:`~stats.inference.tails.conservative_pvalue`)
and its detectable discrepancy widened to the level that leaves.
"""

from __future__ import annotations

import math

from scipy import special

from ..formulas import FORMULAS
from ..inference.significance import UntestableError, holm_adjust
from ..inference.tails import TAIL_FRACTION, conservative_pvalue, tail_error
from .checks import EvaluationContext, SimulationError
from .defaults import FALSE_PASS, FAMILY_ALPHA
from .findings import CAVEAT, ERRATUM, FALSE_AS_STATED, HOLDS, UNSETTLED, erratum_grade, unsettled
from .sentences import sentence_rows
from .verdicts import CONFIRMED, ERROR, OK_VERDICTS, REJECTED, STALE, UNTESTABLE, verdict

__all__ = ["COLUMNS", "evaluate", "failing", "passed", "statistical_rows"]

COLUMNS = [
    "claim",
    "section",
    "statement",
    "check",
    "reading",
    "protocol",
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
    "finding",
    "grade",
    "digits_off",
    "note",
]


def _cache_key(p, ctx):
    """What determines a check's numbers in one run (one seed): the check, the level, the
    results it reads -- each by its simulation's key, its rows and the formulas the
    simulation called -- and the formulas its expected value calls.  Never object ids."""
    reads = []
    for ms in p.check.measures:
        res = ctx.results.get(ms.sim.key)
        sim_formulas = tuple((name, getattr(ctx.formulas, name)) for name in getattr(ms.sim, "uses", ()))
        reads.append((ms.sim.key, type(res).__name__, getattr(res, "n", None), sim_formulas))
    used = tuple((name, getattr(ctx.formulas, name)) for name in p.check.uses)
    return (p.claim.id, p.check.label, ctx.per_test, ctx.beta, tuple(reads), used)


def _outcome(p, ctx):
    """``(numbers, state, notes)`` of one planned check, its exceptions turned into errors."""
    try:
        numbers, state, notes = p.check.evaluate(ctx, p.design_sd)
    except SimulationError as exc:
        return {}, "error", [f"the simulation raised {exc}"]
    except UntestableError as exc:  # pragma: no cover - screened in plan()
        return {}, "error", [str(exc)]
    except (ValueError, TypeError, ZeroDivisionError, FloatingPointError) as exc:
        return {}, "error", [f"{type(exc).__name__}: {exc}"]
    return numbers, state, notes


def _tail_corrected(row, p, per_test, beta):
    """Where n could not be raised, the normal tail may be too thin: a conservative p-value
    keeps the false-fail rate, at the cost of a larger detectable shift."""
    e = tail_error(row["n"], alpha=per_test, a1=p.edgeworth[0], a2=p.edgeworth[1])
    row["tail_error"] = e
    if e > TAIL_FRACTION and 0 <= row["p_value"] <= 1:
        row["p_value"] = conservative_pvalue(row["p_value"], row["n"], a1=p.edgeworth[0], a2=p.edgeworth[1])
        z_b = -special.ndtri(beta)  # scipy.special, not scipy.stats: once per row per evaluation
        widen = (-special.ndtri(per_test / (2 * (1 + e))) + z_b) / (-special.ndtri(per_test / 2) + z_b)
        row["detectable"] = row["detectable"] * widen
        row["note"] = "; ".join(x for x in (row["note"], f"p-value x (1 + tail error), {e:.2g} at the design level") if x)


def evaluate(the_plan, results, *, formulas=FORMULAS, alpha=FAMILY_ALPHA, beta=FALSE_PASS, cache=None):
    """Test every planned check against ``formulas``; one tidy row per check (:data:`COLUMNS`).

    ``cache`` (a dict) keeps each check's numbers between calls on results of the same
    seed (a mutant re-evaluates only what it can move); its keys are what determines them.

    The first rows are the plan's checks, in its order; after them, one row per recorded corrected
    sentence of the planned claims (``test`` = ``sentence``, :mod:`stats.claims.sentences`): not
    statistical, outside the Holm family, ``REJECTED`` when a flagged word lacks passing support.
    """
    import pandas as pd

    cache = {} if cache is None else cache
    per_test = the_plan.per_test
    ctx = EvaluationContext(results, formulas, per_test, beta)
    rows, states = [], []
    for p in the_plan.checks:
        ch, cl = p.check, p.claim
        row = dict(
            claim=cl.id, section=cl.section, statement=cl.statement, check=ch.label, reading=ch.reading,
            protocol=ch.protocol, test=ch.test,
            closed_form=cl.closed_form, expected=math.nan, estimate=math.nan, mcse=math.nan, p_value=math.nan,
            p_holm=math.nan, detectable=math.nan, tail_error=math.nan, n=0, verdict=UNTESTABLE, finding="", grade="",
            digits_off=math.nan, note=p.untestable or "",
        )
        state = "untestable"
        if not p.untestable:
            key = _cache_key(p, ctx)
            if key not in cache:
                cache[key] = _outcome(p, ctx)
            numbers, state, notes = cache[key]
            row.update(numbers)
            prefix = [x for x in (ch.note, p.design and f"n by {p.design}") if x]
            row["note"] = "; ".join(x for x in prefix + list(notes) if x)
            if p.edgeworth is not None and row["n"] >= 2 and state == "tested":
                _tail_corrected(row, p, per_test, beta)
        rows.append(row)
        states.append(state)
    tested = [i for i, s in enumerate(states) if s == "tested"]
    # Holm over the registry's family: a member without a p-value in this table (not selected,
    # missing an optional part here, or erring) counts as p = 1.  Holm's adjusted p-values
    # rise with each input, so this is never below what the whole family's p-values give.
    if tested:
        adjusted = holm_adjust([rows[i]["p_value"] for i in tested], family_size=max(the_plan.family_size, len(tested)))
        for i, adj in zip(tested, adjusted):
            rows[i]["p_holm"] = float(adj)
            states[i] = "refuted" if adj < alpha else "holds"
    for p, row, state in zip(the_plan.checks, rows, states):
        if state == "untestable":
            continue
        if state == "error":
            row["verdict"] = ERROR
            continue
        e = p.check.erratum
        if e is not None and state == "holds" and p.below_design:
            # A draft's few rows that do not refute the text say nothing of a recorded finding:
            # not stale, not confirmed; the build, at the design's rows, grades it.
            row["note"] = "; ".join(x for x in (f"a draft's {row['n']} of the {p.design_n} rows its design asks do "
                                                f"not refute the text: not graded here (the build grades it)",
                                                row["note"]) if x)
            continue
        row["verdict"] = verdict(state == "refuted", erratum=e)
        row.update(_finding(p.check, state == "refuted", row["estimate"]))
        if e is not None:  # a check with an erratum tests a stated interval (Check.validate)
            why = f"regraded: {e.regraded}; " if e.regraded else ""
            row["note"] = (f"text: {p.check.stated.text}; corrected: {e.corrected.text}; {why}graded by the rule of "
                           f"docs/findings.md; {row['note']}")
    blank = dict(reading="", protocol="", closed_form="", expected=math.nan, estimate=math.nan, mcse=math.nan,
                 p_value=math.nan, p_holm=math.nan, detectable=math.nan, tail_error=math.nan, n=0, finding="", grade="",
                 digits_off=math.nan)
    rows += [{**blank, **r} for r in sentence_rows(the_plan.checks, rows, formulas=formulas)]
    return pd.DataFrame(rows, columns=COLUMNS)


def _finding(check, refuted, estimate):
    """What a decided check found about the text (:mod:`stats.claims.findings`): not refuted,
    ``holds``, or ``unsettled`` when its estimate lies outside the interval stated; refuted, a
    recorded caveat's class, else an erratum graded by how far the estimate lies from what the
    text states (a refutation nobody recorded is graded too)."""
    stated = getattr(check, "stated", None)
    if not refuted:
        return dict(finding=UNSETTLED if unsettled(stated, estimate) else HOLDS)
    e = check.erratum
    if e is not None and e.kind == "caveat":
        return dict(finding=CAVEAT)
    if stated is None:  # an identity or a distribution: the statement as a whole is false
        return dict(finding=ERRATUM, grade=FALSE_AS_STATED)
    grade, digits = erratum_grade(stated, estimate)
    return dict(finding=ERRATUM, grade=grade, digits_off=math.nan if digits is None else digits)


def passed(table):
    """True when every row's verdict is acceptable (pass, confirmed erratum, untestable)."""
    return bool(table["verdict"].isin(OK_VERDICTS).all())


def statistical_rows(table, the_plan):
    """Per row of ``evaluate(the_plan, ...)``: whether it is a statistical check (the plan's checks
    come first, in order; the sentence rows after them are not statistical)."""
    flags = [p.check.statistical for p in the_plan.checks]
    return flags + [False] * (len(table) - len(flags))


def failing(table, the_plan):
    """Rows of ``evaluate(the_plan, ...)`` that fail on a partial evaluation: errors, stale
    errata, refuted identities, exact checks and sentences, and statistical checks whose own p-value is
    below the family's Bonferroni level (stricter than Holm, so a partial run never catches
    more easily)."""
    import pandas as pd

    per_test = the_plan.per_test
    statistical = pd.Series(statistical_rows(table, the_plan), index=table.index, dtype=bool)
    hard = table["verdict"].isin([ERROR, *STALE])
    refuted_det = ~statistical & table["verdict"].isin([REJECTED])
    refuted_stat = statistical & (table["p_value"] < per_test) & ~table["verdict"].isin([*CONFIRMED, UNTESTABLE])
    return table[hard | refuted_det | refuted_stat]
