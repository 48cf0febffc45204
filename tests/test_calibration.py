"""``make calibrate``'s per-seed work (:mod:`stats.claims.calibration`) draws only what its
numbers read: the null checks' simulations, and each mutant's touched ones tier by tier, stopping
at a deterministic catch.  Held here to the plain computation it replaces -- every simulation of
the plan drawn under the true formulas, every mutant evaluated on all its affected checks -- on a
small plan: the null p-values, the catches, the deterministic catches and, for a mutant not
caught deterministically, its shifts and the checks' MCSEs, are the same numbers."""

from __future__ import annotations

import re

import numpy as np
import pytest

import stats.claims.calibration as calibration
from stats.claims.evaluation import evaluate, failing, statistical_rows
from stats.claims.mutant_runner import affected_checks, touched_simulations
from stats.claims.mutants import MUTANTS
from stats.claims.planning import plan
from stats.claims.simulating import simulate
from stats.claims.verdicts import ERROR

CLAIMS = ("raw-variance-width,correlated-variance,jacobian-properties,training-t5-folding,"
          "mostly-one-hot,saturated-jacobian-vanishes,jacobian-spectrum,asymptotic-laws-vs-mc")  # interval checks too
# The exact sampler's two mutants are not caught deterministically, and the checks they move mix
# ones whose shift declares a power with ones whose shift does not, in either order.
MUTANT_NAMES = ("variance-off-2pct", "variance-dk-squared", "jacobian-plus-aat", "t5-adam-ratio-dk", "proof-ds-sign",
                "exact-sampler-no-chi", "exact-sampler-winner-first")


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
    numbers = table[["p_value", "estimate", "mcse"]].to_numpy(dtype=float).T[:, null]
    return numbers, np.array(caught), shift, np.array(exact), mcse


def test_a_seed_draws_only_what_its_numbers_read_and_gets_the_same_numbers():
    the_plan = plan(select=CLAIMS, n_factor=0.02)
    mutants = tuple(m for m in MUTANTS if m.name in MUTANT_NAMES)
    assert len(mutants) == len(MUTANT_NAMES)
    null = calibration._null_checks(the_plan)
    root = calibration.calibration_seeds(7, 2)[1]
    calibration._STATE = (the_plan, mutants, null, None)
    try:
        (pv, caught, shift, exact, mcse), _ = calibration._one_seed((root, True))
    finally:
        calibration._STATE = None
    ref_pv, ref_caught, ref_shift, ref_exact, ref_mcse = _drawing_everything(the_plan, mutants, null, root)
    assert len(null) > 0 and exact.any() and not exact.all()  # the plan tests both paths
    assert {the_plan.checks[i].check.calibration for i in null} == {"monte-carlo", "interval"}
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
        (_, caught, _, exact, _), _ = calibration._one_seed((calibration.calibration_seeds(7, 2)[0], True))
    finally:
        calibration._STATE = None
    assert caught.tolist() == [True] and exact.tolist() == [True]


def test_a_calibration_stopped_after_some_seeds_resumes_from_them_to_the_same_bytes(tmp_path, monkeypatch):
    """Each finished seed is kept; a run that finds some of its seeds kept draws only the others, and
    its tables are the same bytes as a run that drew every seed.  A file cut short is drawn again, and
    so is a seed drawn for the null checks alone when a later run asks it for the mutants too."""
    the_plan = plan(select="raw-variance-width,jacobian-properties", n_factor=0.02)
    monkeypatch.setattr(calibration, "plan", lambda **_: the_plan)  # planned once for the runs
    kw = dict(seeds=4, mutant_seeds=2, n_factor=0.02,
              mutants=tuple(m for m in MUTANTS if m.name in ("variance-off-2pct", "jacobian-plus-aat", "proof-ds-sign")))
    whole = calibration.calibrate(**kw)
    first = calibration.calibrate(**kw, resume=tmp_path)
    roots = calibration.calibration_seeds(kw.get("seed", calibration.DEFAULT_SEED), 4)
    folder, = {f.parent for f in tmp_path.rglob("*.npz")}
    files = [folder / f"{r}.npz" for r in roots]
    assert all(f.exists() for f in files)
    files[1].unlink()  # a mutant seed, as if stopped before it
    files[2].write_bytes(files[2].read_bytes()[:40])  # a null seed's file cut short by the stop
    drawn = []
    one_seed = calibration._one_seed
    monkeypatch.setattr(calibration, "_one_seed", lambda task: drawn.append(task) or one_seed(task))
    resumed = calibration.calibrate(**kw, resume=tmp_path)
    assert drawn == [(roots[1], True), (roots[2], False)]
    for a, b, c in zip(whole[:4], first[:4], resumed[:4]):
        assert a.to_csv() == b.to_csv() == c.to_csv()
    assert whole.levels == resumed.levels and sum(whole.levels.values()) == sum(not p.untestable for p in the_plan.checks)
    assert (whole.mutants["seeds"] == 2).all() and (whole.checks["seeds"] == 4).all()
    # Asked for more mutant seeds, the run draws the null-only seeds it now needs with the mutants, no other.
    drawn.clear()
    more = calibration.calibrate(**{**kw, "mutant_seeds": 3}, resume=tmp_path)
    assert drawn == [(roots[2], True)]
    assert more.checks.to_csv() == whole.checks.to_csv() and (more.mutants["seeds"] == 3).all()
    by = whole.mutants.set_index("mutant")["by_check"]
    assert by["jacobian-plus-aat"].startswith("a deterministic check")
    assert by["variance-off-2pct"].startswith("raw-variance-width [")
    # The proof it breaks is not in this plan, so no check it moves shifts a mean: the row says so,
    # never the name of an arbitrary check (the arg-max of an all-zero signal).
    assert by["proof-ds-sign"] == calibration.NO_DECLARED_POWER
    assert np.isnan(whole.mutants.set_index("mutant").loc["proof-ds-sign", "detectable_shortfall"])


def test_mutant_seeds_out_of_range_are_refused_by_name():
    for bad in (0, 3, 1.5, True):
        with pytest.raises(ValueError, match="mutant_seeds"):
            calibration.calibrate(seeds=2, mutant_seeds=bad)


def test_a_resume_folder_that_is_not_a_path_is_refused_by_name():
    with pytest.raises(TypeError, match="resume"):
        calibration.calibrate(seeds=2, resume=3)


# ------------------------------------------------------------------ the checks exact by construction


def _share(lo, hi):
    from stats import DropoutSim, Measure
    from stats.claims.checks import ShareCheck
    from stats.claims.measures import Stated

    return ShareCheck("share", stated=Stated("s", (lo + hi) / 2, lo, hi),
                      measure=Measure(DropoutSim(0.1, 32, "numpy"), "first_ratio"))


@pytest.mark.parametrize("lo,hi", [(0.0, 0.5), (0.5, 1.0), (0.0, 0.1), (0.9, 1.0), (0.3, 0.6), (0.45, 0.55)])
def test_a_share_checks_size_is_its_test_enumerated_and_within_its_level(lo, hi):
    """The exact binomial interval test's size, from ``ShareCheck.exact_size``, against the test itself
    enumerated over every outcome and the true share swept across the interval: the computed size bounds
    the largest rejection probability, equals it when one end is 0 or 1, and is then at most the level
    (at most twice it when both ends can reject: each end's tail is at most the level)."""
    from scipy import stats as sps

    from stats.inference.significance import share_interval_test

    check = _share(lo, hi)
    for n in (1, 5, 30, 120, 400):
        for alpha in (0.05, 1e-3, 2e-6):
            k = np.arange(n + 1)
            reject = np.array([share_interval_test(int(x), n, lo, hi, alpha=alpha).reject for x in k])
            swept = max(sps.binom.pmf(k, n, p)[reject].sum() for p in np.linspace(lo, hi, 201))
            size = check.exact_size(n, alpha)
            assert swept <= size + 1e-12
            if lo == 0 or hi == 1:
                assert size == pytest.approx(swept, rel=1e-9, abs=1e-300) and size <= alpha
            else:
                assert size <= 2 * alpha


def test_exact_levels_are_computed_for_the_plans_share_checks():
    the_plan = plan(select="training-t5-folding,training-unscaled-cannot-learn", n_factor=0.02)
    table = calibration.exact_levels(the_plan)
    shares = [p for p in the_plan.checks if p.check.test == "share" and not p.untestable]
    assert len(table) == len(shares) > 0 and (table["test"] == "share").all()
    assert table["holds"].all() and (table["size"] <= table["level"]).all() and (table["size"] >= 0).all()
    assert (table["size_at_design"] <= table["level"]).all() and (table["n_design"] >= table["n"]).all()
    assert (table["n_design"] > table["n"]).any()  # a calibration's plan is smaller than the design
    assert (table["level"] == the_plan.per_test).all()


def test_what_a_seed_count_can_detect_is_where_the_binomial_test_reaches_its_power():
    """The detectable rejection rate and shortfall are the first points where the calibration's own
    exact binomial tests flag with probability 0.9; just inside them they do not."""
    from scipy import stats as sps

    n, alpha = 200, 1e-3 / 265
    r = calibration.rejection_rate_detectable(n, alpha=alpha)
    k = np.arange(n + 1)
    reject = np.array([sps.binomtest(int(x), n, 0.05).pvalue < alpha for x in k])
    assert sps.binom.pmf(k, n, r)[reject].sum() >= 0.9 > sps.binom.pmf(k, n, r - 0.001)[reject].sum()
    # Declared 1: flagged at any miss, so the shortfall s has 1 - (1 - s)^n >= 0.9.
    s = calibration.shortfall_detectable(12, 1.0, alpha=1e-3 / 50)
    assert 1 - (1 - s) ** 12 >= 0.9 > 1 - (1 - s + 0.001) ** 12
    assert np.isnan(calibration.shortfall_detectable(12, 1e-6, alpha=1e-3 / 50))


# ------------------------------------------------------------------ the slow tier: the whole registry, a few seeds


@pytest.mark.slow
def test_a_small_calibration_of_the_whole_registry_passes():
    """The whole registry at the calibration's sizes over 100 seeds, the mutants over the first 2
    (about 6 minutes on 2 cores).  It sees what breaks the calibration or a check's p-value outright:
    a check alone rejecting in more than about a quarter of the seeds at 0.05 (an MCSE half its size
    rejects in a third), a mutant declared caught on every seed and missed on one of the two;
    `make calibrate` is the measurement."""
    from stats.engine.executors import default_workers

    result = calibration.calibrate(seeds=100, mutant_seeds=2, workers=min(2, default_workers()))
    assert calibration.rejection_rate_detectable(100, alpha=1e-3 / len(result.checks)) < 0.3
    assert len(result.checks) > 200 and len(result.mutants) == len(MUTANTS)
    assert result.levels["exact"] == len(result.exact) > 0
    assert calibration.calibration_passed(result), (
        result.checks.loc[~result.checks["calibrated"], ["claim", "check", "rejection_rate", "ks_p_holm"]].to_string(),
        result.mutants.loc[~result.mutants["meets"], ["mutant", "catch_rate", "declared_power"]].to_string())


def test_what_a_seed_count_can_detect_refuses_bad_input_by_name():
    for kw, name in ((dict(seeds=0, alpha=1e-3), "seeds"), (dict(seeds=2.5, alpha=1e-3), "seeds"),
                     (dict(seeds=10, alpha=0.0), "alpha"), (dict(seeds=10, alpha=1e-3, power=1.5), "power")):
        with pytest.raises(ValueError, match=name):
            calibration.rejection_rate_detectable(**kw)
    for declared in (-0.1, 1.5, float("nan"), "x"):
        with pytest.raises(ValueError, match="declared"):
            calibration.shortfall_detectable(10, declared, alpha=1e-3)


def test_an_interval_checks_p_values_are_centred_on_its_mean_over_the_seeds():
    """An interval check's null holds a true value nobody knows: its estimates are centred on their
    mean over the seeds and scaled by each seed's MCSE.  Estimates drawn with the MCSE they report
    give uniform p-values (KS at 1e-3, a false-fail rate of 1e-3); an MCSE reported half its true
    size -- the fault the calibration exists to catch -- does not.  A monte-carlo check's own
    p-values pass through untouched."""
    from scipy import stats as sps

    the_plan = plan(select="mostly-one-hot,raw-variance-width", n_factor=0.02)
    null = calibration._null_checks(the_plan)
    kinds = [the_plan.checks[i].check.calibration for i in null]
    c = kinds.index("interval")
    rng = np.random.default_rng(np.random.SeedSequence(20261206))
    seeds = 2000
    se = rng.uniform(0.5, 2.0, seeds)
    numbers = np.full((seeds, 3, len(null)), np.nan)
    numbers[:, 0, :] = rng.uniform(size=(seeds, len(null)))
    numbers[:, 1, c] = 3.0 + se * rng.standard_normal(seeds)
    numbers[:, 2, c] = se
    pv = calibration._interval_pvalues(the_plan, null, numbers)
    m = kinds.index("monte-carlo")
    np.testing.assert_array_equal(pv[:, m], numbers[:, 0, m])
    assert sps.kstest(pv[:, c], "uniform").pvalue > 1e-3
    numbers[:, 2, c] = se / 2
    assert sps.kstest(calibration._interval_pvalues(the_plan, null, numbers)[:, c], "uniform").pvalue < 1e-3


def test_the_mutant_phase_estimates_the_whole_runs_time_left(monkeypatch):
    """While the mutant seeds are drawn, the bar says how long the whole run has left, the null-only
    seeds after them included (at the null checks' measured share of a seed); the last phase's own
    time left is tqdm's."""
    import tqdm.auto

    said = []

    class Bar(tqdm.auto.tqdm):  # tqdm itself, recording what it is told to show
        def __init__(self, *args, **kwargs):
            self.label = kwargs.get("desc") or ""
            super().__init__(*args, **kwargs)

        def set_postfix_str(self, s="", refresh=True):
            said.append((self.label, s))
            super().set_postfix_str(s, refresh)

    monkeypatch.setattr(tqdm.auto, "tqdm", Bar)
    the_plan = plan(select="raw-variance-width", n_factor=0.02)
    monkeypatch.setattr(calibration, "plan", lambda **_: the_plan)
    calibration.calibrate(seeds=5, mutant_seeds=3, progress=True,
                          mutants=tuple(m for m in MUTANTS if m.name == "variance-off-2pct"))
    said = [(d, t) for d, t in said if d.startswith("calibration")]
    assert len(said) == 2 and all(d.endswith("with the mutants") for d, _ in said)
    assert all(re.fullmatch(r"whole run about \d+ min left", t) for _, t in said)
