"""``make calibrate``'s per-seed work (:mod:`stats.claims.calibration`) draws only what its
numbers read: the null checks' simulations, and each mutant's touched ones tier by tier, stopping
at a deterministic catch.  Held here to the plain computation it replaces -- every simulation of
the plan drawn under the true formulas, every mutant evaluated on all its affected checks -- on a
small plan: the null p-values, the catches, the deterministic catches and, for a mutant not
caught deterministically, its shifts and the checks' MCSEs, are the same numbers."""

from __future__ import annotations

import numpy as np
import pytest

import stats.claims.calibration as calibration
from stats.claims.evaluation import evaluate, failing, statistical_rows
from stats.claims.mutant_runner import affected_checks, touched_simulations
from stats.claims.mutants import MUTANTS
from stats.claims.planning import plan
from stats.claims.simulating import simulate
from stats.claims.verdicts import ERROR

CLAIMS = "raw-variance-width,correlated-variance,jacobian-properties,training-t5-folding"
MUTANT_NAMES = ("variance-off-2pct", "variance-dk-squared", "jacobian-plus-aat", "t5-adam-ratio-dk", "proof-ds-sign")


def _drawing_everything(the_plan, mutants, null, root):
    """The reference: the whole plan drawn under the true formulas; each mutant on all its checks."""
    results = simulate(the_plan, seed=root, workers=1)
    table = evaluate(the_plan, results).iloc[:len(the_plan.checks)]
    shiftable = np.array([p.check.power_from_shift for p in the_plan.checks])
    true_shift = (table["estimate"] - table["expected"]).to_numpy(dtype=float)
    index = {(p.claim.id, p.check.label): i for i, p in enumerate(the_plan.checks)}
    caught, exact, shift = [], [], np.zeros((len(mutants), len(the_plan.checks)))
    for j, m in enumerate(mutants):
        touched = touched_simulations(the_plan, m.formulas)
        mutated = {**results, **(simulate(the_plan, seed=root, formulas=m.formulas, workers=1, only=touched) if touched else {})}
        part = the_plan.part(affected_checks(the_plan, m.formulas, touched))
        mt = evaluate(part, mutated, formulas=m.formulas)
        bad = failing(mt, part)
        decided = ~np.array(statistical_rows(mt, part), dtype=bool)[bad.index.to_numpy()]
        caught.append(len(bad) > 0)
        exact.append(bool((decided | (bad["verdict"] == ERROR).to_numpy()).any()))
        rows = np.array([index[p.claim.id, p.check.label] for p in part.checks], dtype=int)
        d = (mt["estimate"] - mt["expected"]).to_numpy(dtype=float)[:len(rows)] - true_shift[rows]
        shift[j, rows] = np.where(shiftable[rows] & np.isfinite(d), d, 0.0)
    mcse = np.where(shiftable, table["mcse"].to_numpy(dtype=float), np.nan)
    return table["p_value"].to_numpy(dtype=float)[null], np.array(caught), shift, np.array(exact), mcse


def test_a_seed_draws_only_what_its_numbers_read_and_gets_the_same_numbers():
    the_plan = plan(select=CLAIMS, n_factor=0.02)
    mutants = tuple(m for m in MUTANTS if m.name in MUTANT_NAMES)
    assert len(mutants) == len(MUTANT_NAMES)
    null = calibration._null_checks(the_plan)
    root = calibration.calibration_seeds(7, 2)[1]
    calibration._STATE = (the_plan, mutants, null, None)
    try:
        pv, caught, shift, exact, mcse = calibration._one_seed(root)
    finally:
        calibration._STATE = None
    ref_pv, ref_caught, ref_shift, ref_exact, ref_mcse = _drawing_everything(the_plan, mutants, null, root)
    assert len(null) > 0 and exact.any() and not exact.all()  # the plan tests both paths
    np.testing.assert_array_equal(pv, ref_pv)
    np.testing.assert_array_equal(caught, ref_caught)
    np.testing.assert_array_equal(exact, ref_exact)
    for j in np.flatnonzero(~exact):  # a deterministic catch declares power 1: its shifts are not read
        np.testing.assert_array_equal(shift[j], ref_shift[j])
        moved = shift[j] != 0
        np.testing.assert_array_equal(mcse[moved], ref_mcse[moved])


def test_a_catch_by_a_check_that_draws_nothing_is_taken_once_for_every_seed():
    """A planted mistake in the backward pass fails a SymPy proof, which draws nothing: the calibration
    takes that catch once, and it is what a seed's own evaluation finds; a mistake only drawn checks
    can see is left to the seeds."""
    the_plan = plan(select="proof-backward,raw-variance-width", n_factor=0.02)
    by_name = {m.name: m for m in MUTANTS}
    assert calibration._caught_without_draws(the_plan, by_name["proof-ds-sign"])
    assert not calibration._caught_without_draws(the_plan, by_name["variance-off-2pct"])
    assert not calibration._caught_without_draws(the_plan, by_name["variance-dk-squared"])  # caught, but by draws
    calibration._STATE = (the_plan, (by_name["proof-ds-sign"],), calibration._null_checks(the_plan), None)
    try:
        _, caught, _, exact, _ = calibration._one_seed(calibration.calibration_seeds(7, 2)[0])
    finally:
        calibration._STATE = None
    assert caught.tolist() == [True] and exact.tolist() == [True]


def test_a_calibration_stopped_after_some_seeds_resumes_from_them_to_the_same_bytes(tmp_path, monkeypatch):
    """Each finished seed is kept; a run that finds some of its seeds kept draws only the others, and
    its three tables are the same bytes as a run that drew every seed.  A file cut short is drawn again."""
    the_plan = plan(select="raw-variance-width,jacobian-properties", n_factor=0.02)
    monkeypatch.setattr(calibration, "plan", lambda **_: the_plan)  # planned once for the three runs
    kw = dict(seeds=3, n_factor=0.02,
              mutants=tuple(m for m in MUTANTS if m.name in ("variance-off-2pct", "jacobian-plus-aat", "proof-ds-sign")))
    whole = calibration.calibrate(**kw)
    first = calibration.calibrate(**kw, resume=tmp_path)
    files = sorted(tmp_path.rglob("*.npz"))
    assert len(files) == 3
    files[0].unlink()  # as if stopped before its last seed
    files[1].write_bytes(files[1].read_bytes()[:40])  # a file cut short by the stop
    drawn = []
    one_seed = calibration._one_seed
    monkeypatch.setattr(calibration, "_one_seed", lambda root: drawn.append(root) or one_seed(root))
    resumed = calibration.calibrate(**kw, resume=tmp_path)
    assert len(drawn) == 2
    for a, b, c in zip(whole, first, resumed):
        assert a.to_csv() == b.to_csv() == c.to_csv()
    by = whole[1].set_index("mutant")["by_check"]
    assert by["jacobian-plus-aat"].startswith("a deterministic check")
    assert by["variance-off-2pct"].startswith("raw-variance-width [")
    # The proof it breaks is not in this plan, so no check it moves shifts a mean: the row says so,
    # never the name of an arbitrary check (the arg-max of an all-zero signal).
    assert by["proof-ds-sign"] == calibration.NO_DECLARED_POWER


def test_a_resume_folder_that_is_not_a_path_is_refused_by_name():
    with pytest.raises(TypeError, match="resume"):
        calibration.calibrate(seeds=2, resume=3)
