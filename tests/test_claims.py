"""The claims registry end to end: every claim holds, every mutant is caught, verdicts
cannot be fooled (NaN gives ERROR), errata behave like strict xfails per check, a
selection draws exactly what the full run draws, and the CLI reports and exits as
documented."""

import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from stats import (
    FORMULAS,
    MUTANTS,
    REGISTRY,
    Claim,
    DistributionCheck,
    Erratum,
    Measure,
    SaturationSim,
    ScoreSim,
    Stated,
    entry_law,
    evaluate,
    evaluate_mutants,
    passed,
    plan,
    select_claims,
    simulate,
)
from stats.claims import check_builders as build
from stats.claims import COLUMNS
from stats.claims.checks import identity_rows
from stats.claims.sentences import NOT_SETTLED

WORKERS = 2


@pytest.fixture(scope="module")
def full_run():
    the_plan = plan(REGISTRY, seed=20261201, workers=WORKERS)
    return the_plan, simulate(the_plan, seed=20261201, workers=WORKERS)


@pytest.mark.slow
def test_every_claim_holds_at_the_default_sample_sizes(full_run):
    the_plan, results = full_run
    table = evaluate(the_plan, results)
    assert list(table.columns) == COLUMNS
    bad = table[~table["verdict"].isin(["pass", "untestable", "erratum confirmed", "caveat confirmed"])]
    assert bad.empty, bad[["claim", "check", "expected", "estimate", "p_holm", "note"]].to_string()
    # The corrected sentences' rows (after the checks') are no checks: no estimate, no detectable shift.
    sentences = table[table["test"] == "sentence"]
    assert len(sentences) and (sentences["verdict"] != "REJECTED").all()
    tested = table[(table["verdict"] != "untestable") & (table["test"] != "sentence")]
    statistical = tested[tested["test"].isin(["mean", "variance", "ratio", "two_sample", "interval"])]
    assert statistical["mcse"].notna().all() and (statistical["mcse"] > 0).all()
    assert (tested["detectable"] >= 0).all()
    # Every erratum's corrected value is its own row, and it passes.
    corrected = table[table["check"].str.endswith("[corrected]")]
    assert len(corrected) == table["verdict"].isin(["erratum confirmed", "caveat confirmed"]).sum() >= 5
    assert (corrected["verdict"] == "pass").all()


@pytest.mark.slow
def test_the_findings_are_graded_and_every_caveat_holds_as_written(full_run):
    the_plan, results = full_run
    table = evaluate(the_plan, results)
    rows = table.set_index(["claim", "check"])
    # The table's two numbers miss the expectation, but a reasonable reading of the measurement
    # prints them (saturation-procedure): caveats, by the grading rule.
    assert rows.loc[("saturation-table", "unscaled max weight, d_k=4"), "finding"] == "caveat"
    assert rows.loc[("saturation-table", "unscaled max weight, d_k=1024"), "finding"] == "caveat"
    assert (rows.loc["real-model-head-width", "grade"] == "wrong number").any()
    assert (rows.loc["training-t5-differs", "finding"] == "erratum").any()
    assert (rows.loc["gradient-to-projections", "finding"] == "caveat").any()
    assert (rows.loc["training-unscaled-cannot-learn", "finding"] == "erratum").any()
    # A caveat is true as written: the claims it names hold (their errata's corrections too).
    for c in REGISTRY:
        for ch in c.checks:
            if ch.erratum is not None and ch.erratum.kind == "caveat":
                named = table[table["claim"].isin(ch.erratum.confirmed_by)]
                assert len(named) and named["verdict"].isin(["pass", "untestable", "erratum confirmed", "caveat confirmed"]).all()
                assert (named["finding"] == "holds").any(), (c.id, ch.label)
    decided = table[(table["verdict"] != "untestable") & (table["test"] != "sentence")]
    assert set(decided["finding"]) <= {"holds", "unsettled", "caveat", "erratum"}
    # A sentence row says whether a corrected sentence rests on its checks: it finds nothing about the
    # text, but is unsettled where a check it rests on does not establish its word.
    sentence = table[table["test"] == "sentence"]
    assert sentence["finding"].isin(["", "unsettled"]).all()
    assert (sentence["finding"] == "unsettled").eq(sentence["note"].str.startswith(NOT_SETTLED)).all()


@pytest.mark.slow
def test_every_mutant_is_caught(full_run):
    the_plan, results = full_run
    table = evaluate_mutants(the_plan, results, MUTANTS, seed=20261201, workers=WORKERS)
    assert table["caught"].all(), table[~table["caught"]].to_string()
    assert table["mutant"].tolist() == [m.name for m in MUTANTS]  # one row per mutant: none skipped
    nan_mutant = table.set_index("mutant").loc["nan-mean"]
    assert "ERROR" in nan_mutant["verdicts"]  # NaN is an error, never a pass or a plain rejection


def test_every_mutant_replaces_a_formula_and_has_its_own_name():
    """A mutant that replaced nothing could never be caught; two of one name would share a row's meaning."""
    import dataclasses

    names = [m.name for m in MUTANTS]
    assert names and len(names) == len(set(names))
    for m in MUTANTS:
        replaced = [f.name for f in dataclasses.fields(FORMULAS) if getattr(m.formulas, f.name) is not getattr(FORMULAS, f.name)]
        assert replaced, f"mutant {m.name} replaces no formula"
        assert m.description.strip(), m.name


def test_mutant_tiers_start_with_the_cheapest_check_and_double_in_cost():
    from types import SimpleNamespace as NS

    from stats.claims.mutant_runner import mutant_tiers

    costs = dict(a=1.0, b=2.0, c=4.0, d=8.0, e=16.0, f=1.0)
    reads = dict(X="c", Y="ab", Z="de", W="ae")  # f is touched but read by no check
    the_plan = NS(jobs={k: NS(n=1, sim=NS(effort=c)) for k, c in costs.items()},
                  checks=[NS(claim=NS(id="claim"), check=NS(label=lab, measures=[NS(sim=NS(key=k)) for k in ks]))
                          for lab, ks in reads.items()])
    # Checks by cost: Y (3), X (4), W (17, of which a is drawn already), Z (24).  Budgets 3, 6, 12.
    assert mutant_tiers(the_plan, set(costs)) == [["a", "b"], ["c", "e"], ["d"]]
    assert mutant_tiers(the_plan, {"c", "d"}) == [["c"], ["d"]]  # of Z, d alone is touched
    assert mutant_tiers(the_plan, {"f"}) == [[]]
    assert mutant_tiers(the_plan, set()) == [[]]


def test_a_training_run_s_effort_counts_its_fixed_work():
    """Measured (stats/training/simulations.py, STEP_OVERHEAD): 6905 one-step runs of a 16-wide head
    cost 3-8 s, 48 runs of 150 steps 1.4 s; by ``cost`` alone the one-step runs read cheaper, so
    a mutant of the training path re-drew them first (and 10 simulations, 22 s, to be caught)."""
    from stats.training import LRSweepSim, TrainingSim

    one_step, long = TrainingSim(16, "sqrt", "adam", 1e-2, 1, 16, 8), TrainingSim(16, "sqrt", "adam", 1e-2, 150, 16, 32)
    assert 6905 * one_step.cost < 48 * long.cost
    assert 6905 * one_step.effort > 48 * long.effort
    assert long.effort > long.cost
    sweep = LRSweepSim(16, (1e-2, 1e-1), "sqrt", "adam", 40)
    assert sweep.effort == 2 * sweep.point(0).effort


@pytest.mark.slow
def test_detectable_discrepancy_meets_each_target(full_run):
    the_plan, results = full_run
    table = evaluate(the_plan, results).set_index(["claim", "check"])
    for p in the_plan.checks:
        ch = p.check
        if p.untestable or ch.test in ("identity", "exact", "interval", "two_sample", "proof", "documentary"):
            continue
        row = table.loc[(p.claim.id, ch.label)]
        if ch.test == "distribution":  # a sup-distance: an absolute target
            assert row["detectable"] <= ch.target * 1.0001, (p.claim.id, ch.label)
        elif ch.test == "categorical":  # Cohen's w as target, w^2 on the table's scale
            assert row["detectable"] <= ch.target**2 * 1.0002, (p.claim.id, ch.label)
        elif ch.test == "share":  # searched on a grid of 1/200
            assert row["detectable"] <= ch.target + 0.005, (p.claim.id, ch.label)
        elif ch.test == "mean":
            limit = ch.target * (abs(row["expected"]) if ch.relative else 1.0)
            assert row["detectable"] <= limit * 1.0001, (p.claim.id, ch.label)
        else:  # variance and ratio: relative targets
            assert row["detectable"] <= ch.target * abs(row["expected"]) * 1.0001, (p.claim.id, ch.label)


def test_identity_rows_reveal_a_rare_violation():
    n = identity_rows(1e-3, 1e-3)
    assert (1 - 1e-3) ** n <= 1e-3 < (1 - 1e-3) ** (n - 1)


# ------------------------------------------------------------------ verdicts cannot be fooled


def _toy(check, claim_id="toy"):
    honest = build.mean("mean zero", Measure(ScoreSim(4), "score"), lambda F: 0.0, uses=(), target=0.05, relative=False,
                        sd=lambda: 2.0)
    return (Claim(claim_id, "test", "a toy claim", "-", (check,)), Claim("toy-honest", "test", "honest", "-", (honest,)))


def _run(claims, **kw):
    the_plan = plan(claims, seed=3, **kw)
    return evaluate(the_plan, simulate(the_plan, seed=3)).set_index("check")


def test_nan_expected_value_is_an_error_not_a_pass():
    check = build.mean("nan mean", Measure(ScoreSim(4), "score"), lambda F: math.nan, uses=(), target=0.05,
                       relative=False, sd=lambda: 2.0)
    table = _run(_toy(check))
    assert table.loc["nan mean", "verdict"] == "ERROR"
    assert "NaN" in table.loc["nan mean", "note"]
    assert not passed(table.reset_index())


def test_infinite_expected_value_and_nan_statistic_are_errors():
    inf = build.mean("inf mean", Measure(ScoreSim(4), "score"), lambda F: math.inf, uses=(), target=0.05, relative=False,
                     sd=lambda: 2.0)
    assert _run(_toy(inf)).loc["inf mean", "verdict"] == "ERROR"
    nan_exact = build.exact("nan value", Stated.parse("1.0"), lambda F: math.nan, uses=())
    assert _run(_toy(nan_exact)).loc["nan value", "verdict"] == "ERROR"


def test_a_simulation_that_raises_makes_its_checks_errors():
    def broken(*a, **k):
        raise RuntimeError("planted")

    check = build.identity("broken", Measure(SaturationSim(4, 8, "sqrt"), "winner_bound"))
    the_plan = plan(_toy(check), seed=1)
    from dataclasses import replace

    bad = replace(FORMULAS, winner_bound=broken)
    table = evaluate(the_plan, simulate(the_plan, seed=1, formulas=bad), formulas=bad).set_index("check")
    assert table.loc["broken", "verdict"] == "ERROR" and "planted" in table.loc["broken", "note"]


def test_stated_numbers_claim_the_texts_precision():
    s = Stated.parse("0.35")
    assert (s.lo, s.hi) == pytest.approx((0.345, 0.355))
    assert s.contains(0.345) and not s.contains(0.355)
    assert Stated.parse("163,000", unit=1000).contains(162754.79)
    assert Stated.parse("0.9986").contains(math.exp(10) / (math.exp(10) + 31))
    assert not Stated.at_least("more than tenfold", 10.0).contains(10.0)


def _stated(text, value, erratum=None):
    return build.exact("stated", Stated.parse(text), lambda F: (value, 1e-9), uses=(), erratum=erratum)


def test_a_refuted_stated_number_fails_unless_recorded_and_its_correction_is_tested():
    assert _run(_toy(_stated("0.35", 0.3426))).loc["stated", "verdict"] == "REJECTED"
    table = _run(_toy(_stated("0.35", 0.3426, Erratum(Stated.parse("0.34"), "corrected sentence"))))
    assert table.loc["stated", "verdict"] == "erratum confirmed"
    assert table.loc["stated [corrected]", "verdict"] == "pass"
    wrong_fix = _run(_toy(_stated("0.35", 0.3426, Erratum(Stated.parse("0.33"), "a wrong correction"))))
    assert wrong_fix.loc["stated [corrected]", "verdict"] == "REJECTED"


def test_an_erratum_that_no_longer_fails_is_stale():
    table = _run(_toy(_stated("0.34", 0.3426, Erratum(Stated.parse("0.34"), "nothing to correct"))))
    assert table.loc["stated", "verdict"] == "erratum stale"
    assert not passed(table.reset_index())


def test_an_error_bound_straddling_the_interval_is_undecidable():
    check = build.exact("edge", Stated.parse("0.35"), lambda F: (0.345, 1e-3), uses=())
    table = _run(_toy(check))
    assert table.loc["edge", "verdict"] == "ERROR" and "undecidable" in table.loc["edge", "note"]


def test_a_monte_carlo_interval_check_rejects_far_outside_and_passes_inside():
    m = Measure(SaturationSim(4, 32, "sqrt"), "max_weight")
    inside = build.interval("inside", Stated.parse("0.16"), measure=m, target=0.005)
    outside = build.interval("outside", Stated.parse("0.30"), measure=m, target=0.005)
    assert _run(_toy(inside)).loc["inside", "verdict"] == "pass"
    assert _run(_toy(outside)).loc["outside", "verdict"] == "REJECTED"


# ------------------------------------------------------------------ structure of the registry


def test_the_exact_law_is_refused_for_other_laws_and_shortcuts():
    with pytest.raises(ValueError, match="Gaussian entries drawn directly"):
        DistributionCheck("x", measure=Measure(ScoreSim(4, entries=entry_law("uniform")), "score"), expected=lambda F: None)
    with pytest.raises(ValueError, match="Gaussian entries drawn directly"):
        DistributionCheck("x", measure=Measure(ScoreSim(4, method="chi2"), "score"), expected=lambda F: None)


def test_stream_keys_are_explicit_and_normalised():
    a = ScoreSim(64, 0, 1, 1, "gaussian", "chi2")
    b = ScoreSim(64, 0.0, 1.0, 1.0, entry_law("gaussian"), "chi2")
    assert a.key == b.key == "scores/d_k=64/rho=0.0/entries=gaussian/sigma_q=1.0/sigma_k=1.0/method=chi2/n_keys=1"
    keys = [ms.sim.key for c in REGISTRY for ch in c.checks for ms in ch.measures]
    assert all("(" not in k or "student_t(df=" in k for k in keys)  # no dataclass reprs


def test_keeping_rows_follows_from_the_test():
    the_plan = plan(REGISTRY, select="exact-law", seed=1, n_factor=0.01)
    assert all(job.keep == frozenset({"score"}) for job in the_plan.jobs.values())
    the_plan = plan(REGISTRY, select="product-mean", seed=1, n_factor=0.01)
    assert all(not job.keep for job in the_plan.jobs.values())


def test_registry_ids_are_unique_and_cite_the_sections_headings():
    from stats.claims.headings import SECTION_HEADINGS, SUITE_HEADINGS
    from stats.claims.registry import SECTIONS

    ids = [c.id for c in REGISTRY]
    assert len(ids) == len(set(ids))
    assert all(c.section and c.statement and c.closed_form and c.checks for c in REGISTRY)
    # A module has one heading (SECTION), or several (HEADINGS: the facts read at their sources,
    # grouped by kind of source rather than by heading).
    headings = {h for m in SECTIONS for h in getattr(m, "HEADINGS", (m.SECTION,))}
    assert {c.section for c in REGISTRY} == headings  # every module's heading has a claim, and no claim cites another
    assert headings <= set(SECTION_HEADINGS) | set(SUITE_HEADINGS)  # each the text's heading or the suite's own


# ------------------------------------------------------------------ a selection draws what the full run draws


@pytest.fixture(scope="module")
def quick_full():
    the_plan = plan(REGISTRY, seed=11, n_factor=0.05, workers=WORKERS)
    return the_plan, evaluate(the_plan, simulate(the_plan, seed=11, workers=WORKERS))


def test_every_claim_runs_at_five_percent_without_an_error(quick_full):
    """The fast tier's one run of every claim end to end (the full-size run is the slow tier's):
    every claim has rows, and no check errs (a simulation that raises, a NaN, an undecidable bound)."""
    _, table = quick_full
    assert set(table["claim"]) == {c.id for c in REGISTRY}
    errors = table[table["verdict"] == "ERROR"]
    assert errors.empty, errors[["claim", "check", "note"]].to_string()


@pytest.mark.parametrize("pattern", ["scaled-variance-width", "saturation-exact-vs-mc", "exact-law", "winner-bound"])
def test_only_gives_the_full_runs_numbers(quick_full, pattern):
    full_plan, full = quick_full
    the_plan = plan(REGISTRY, select=pattern, seed=11, n_factor=0.05, workers=WORKERS)
    assert the_plan.per_test == full_plan.per_test
    part = evaluate(the_plan, simulate(the_plan, seed=11, workers=WORKERS))
    chosen = {c.id for c in select_claims(pattern)}
    ref = full[full["claim"].isin(chosen)].reset_index(drop=True)
    assert len(part) == len(ref) > 0
    for col in ("check", "expected", "estimate", "mcse", "p_value", "n", "detectable"):
        pd.testing.assert_series_equal(part[col], ref[col], check_names=False)


def test_another_seed_gives_other_draws():
    a = plan(REGISTRY, select="product-mean", seed=5, n_factor=0.01)
    b = plan(REGISTRY, select="product-mean", seed=6, n_factor=0.01)
    ta, tb = evaluate(a, simulate(a, seed=5)), evaluate(b, simulate(b, seed=6))
    assert not np.allclose(ta["estimate"], tb["estimate"])
    assert passed(ta) and passed(tb)


def test_select_claims_patterns():
    assert [c.id for c in select_claims("exact-law")] == ["exact-law"]
    assert {c.id for c in select_claims("mup-*")} == {"mup-mean", "mup-variance"}
    with pytest.raises(ValueError, match="matches no claim"):
        select_claims("no-such-claim")
    with pytest.raises(ValueError, match="names no claim"):
        select_claims(" , ")
    # A plain id is that claim only (not every id it is a substring of), and one typo among good
    # patterns is refused, naming it, rather than dropped.
    assert [c.id for c in select_claims("winner-bound")] == ["winner-bound"]
    with pytest.raises(ValueError, match="'nope-\\*' matches no claim"):
        select_claims("mup-*,nope-*")


# ------------------------------------------------------------------ CLI


def run_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "stats", *args], capture_output=True, text=True, cwd=cwd)


def test_cli_verify_writes_a_selection_beside_the_table(tmp_path):
    r = run_cli("verify", "--only", "product-mean", "--n-factor", "0.01", "--no-progress", "--out", str(tmp_path), "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "claims.csv").exists()
    table = pd.read_csv(tmp_path / "claims-selection.csv")
    assert list(table.columns) == COLUMNS
    assert "all hold" in r.stdout
    assert (tmp_path / "claims-selection.run.json").exists()


def test_cli_mutants_fail_when_some_survive(tmp_path):
    # The exact-law claim alone cannot see wrong moment formulas: those mutants survive.
    r = run_cli("verify", "--only", "exact-law", "--n-factor", "0.3", "--mutants", "--no-progress", "--out", str(tmp_path))
    assert r.returncode == 1
    mutants = pd.read_csv(tmp_path / "mutants-selection.csv").set_index("mutant")
    assert mutants.loc["exact-law-scales-swapped", "caught"]
    assert not mutants.loc["variance-dk-squared", "caught"]


@pytest.mark.parametrize(
    "args",
    [
        ("verify", "--only", "nope"),
        ("verify", "--only", ""),
        ("verify", "--n-factor", "-1"),
        ("verify", "--n-factor", "inf"),
        ("verify", "--n-factor", "nan"),
        ("verify", "--seed", "x"),
        ("verify", "--workers", "0"),
        (),
        ("frobnicate",),
    ],
)
def test_cli_usage_errors_exit_2_with_one_line(args, tmp_path):
    r = run_cli(*args, "--out", str(tmp_path)) if args[:1] == ("verify",) else run_cli(*args)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not list(tmp_path.iterdir())


def test_cli_refuses_an_unwritable_out(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    for out in (f, f / "below"):
        r = run_cli("verify", "--only", "product-mean", "--out", str(out))
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
