"""The kinds of check: each owns its validation, design and evaluation; the orchestration is
the same for all, so a new kind is one class and one registration line (the worked example
of docs/adding-a-check.md runs here); the family and every designed n do not depend on
whether PyTorch is installed; caches are keyed on what determines a result, so the mutants'
table does not depend on their order."""

import math
from dataclasses import dataclass
from typing import Callable, ClassVar

import numpy as np
import pandas as pd
import pytest

from stats import MUTANTS, REGISTRY, Claim, DropoutSim, Measure, ScoreSim, evaluate, evaluate_mutants, plan, simulate
from stats.claims import check_builders as build
from stats.claims.checks import (
    KINDS,
    BoundSD,
    Check,
    ClosedFormSD,
    ExactCheck,
    MeanCheck,
    Outcome,
    PilotSD,
    SizedCheck,
    design_sd,
)
from stats.claims.checks import base as checks_base
from stats.inference import detectable_discrepancy, proportion_test, required_sample_size

WORKERS = 2


def test_every_kind_is_registered_under_its_own_name():
    assert all(name == cls.kind and issubclass(cls, Check) for name, cls in KINDS.items())
    assert set(KINDS) >= {"mean", "variance", "ratio", "distribution", "two_sample", "interval", "identity", "exact"}
    used = {ch.test for claim in REGISTRY for ch in claim.checks}
    assert used <= set(KINDS)


def test_the_base_class_is_not_a_kind():
    with pytest.raises(TypeError, match="base class"):
        Check("x")


def test_a_check_without_a_design_sd_is_refused_naming_it():
    # Before the kinds were classes, a mean check without sd crashed the plan with
    # "could not convert string to float: 'closed'".
    with pytest.raises(ValueError, match="needs sd"):
        build.mean("no sd", Measure(ScoreSim(4), "score"), lambda F: 0.0, uses=())
    with pytest.raises(TypeError, match="sd must be"):
        build.mean("bad sd", Measure(ScoreSim(4), "score"), lambda F: 0.0, uses=(), sd="closed")


def test_the_design_sd_is_a_typed_value():
    assert isinstance(design_sd("pilot", label="x"), PilotSD)
    closed = design_sd(lambda: 2.0, label="x")
    assert isinstance(closed, ClosedFormSD) and closed.value() == 2.0
    bound = design_sd(0.5, label="x")
    assert isinstance(bound, BoundSD) and bound.value() == 0.5
    assert design_sd(bound, label="x") is bound
    with pytest.raises(ValueError, match="positive"):
        design_sd(-1.0, label="x")
    for bad in ("closed", None, True):
        with pytest.raises(TypeError, match="sd must be"):
            design_sd(bad, label="x")


@pytest.mark.parametrize("kwargs, match", [
    (dict(target=0.0), "target"),
    (dict(target=math.inf), "target"),
    (dict(requires=("cuda",)), "requires"),
])
def test_malformed_checks_name_the_field(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MeanCheck("x", measure=Measure(ScoreSim(4), "score"), expected=lambda F: 0.0, sd=1.0, **kwargs)


def test_an_erratum_needs_a_stated_interval():
    from stats import Erratum, Stated

    with pytest.raises(ValueError, match="erratum"):
        MeanCheck("x", measure=Measure(ScoreSim(4), "score"), expected=lambda F: 0.0, sd=1.0,
                  erratum=Erratum(Stated.parse("1"), "s"))


# ------------------------------------------------------------------ a new kind: the worked example


@dataclass(frozen=True, kw_only=True)
class ProportionCheck(SizedCheck):
    """The share of rows where a 0/1 statistic is 1 equals ``expected(F)``: the exact binomial test."""

    measure: Measure = None
    expected: Callable = None

    kind: ClassVar[str] = "proportion"
    tail_test: ClassVar[str | None] = None  # an exact test: no normal approximation to calibrate
    calibration: ClassVar[str] = "exact"  # its size is computed (exact_size), not simulated

    def validate(self):
        if not callable(self.expected):
            raise ValueError(f"check {self.label!r}: a proportion check needs an expected probability")
        super().validate()

    def power_design(self, ctx, alpha):
        p = self.expected(ctx.formulas)
        sd = math.sqrt(p * (1 - p))
        return required_sample_size(self.target, sd=sd, alpha=alpha, beta=ctx.beta), sd, "binomial sd"

    def evaluate(self, ctx, design_sd):
        expected = self.expected(ctx.formulas)
        s = ctx.summary(self.measure)
        r = proportion_test(int(round(float(s.mean) * s.n)), s.n, expected, alpha=ctx.per_test)
        det = detectable_discrepancy(r.n, sd=design_sd, alpha=ctx.per_test, beta=ctx.beta)
        return Outcome(dict(expected=expected, estimate=r.estimate, mcse=r.mcse, p_value=r.pvalue, n=r.n, detectable=det),
                       "tested", [])


    def exact_size(self, n, alpha, formulas):
        from scipy import stats as sps

        p, k = self.expected(formulas), np.arange(n + 1)
        reject = np.array([proportion_test(int(x), n, p, alpha=alpha).reject for x in k])
        return float(sps.binom.pmf(k, n, p)[reject].sum())


def _kept_share(p):
    # (1 - p) dropout(a)_1 / a_1 is 1 when the first weight is kept, 0 when dropped.
    return Measure(DropoutSim(p, 32, "numpy"), "first_ratio", factor=1 - p)


def test_a_new_kind_is_one_class_and_one_registration(monkeypatch):
    monkeypatch.setitem(KINDS, ProportionCheck.kind, ProportionCheck)  # the registration line
    p = 0.1
    right = ProportionCheck("kept share is 1 - p", measure=_kept_share(p), expected=lambda F: 1 - p, sd=0.3,
                            target=0.01, relative=False)
    wrong = ProportionCheck("kept share is 1 - p/2", measure=_kept_share(p), expected=lambda F: 1 - p / 2, sd=0.3,
                            target=0.01, relative=False)
    claims = (Claim("dropout-keeps", "In PyTorch", "dropout keeps a share 1 - p of the weights", "P(kept) = 1 - p",
                    (right, wrong)),)
    the_plan = plan(claims, seed=3, workers=1)
    assert the_plan.family_size == 2 and [pc.design for pc in the_plan.checks] == ["binomial sd"] * 2
    table = evaluate(the_plan, simulate(the_plan, seed=3)).set_index("check")
    assert (table["test"] == "proportion").all()
    assert table.loc["kept share is 1 - p", "verdict"] == "pass"
    assert table.loc["kept share is 1 - p/2", "verdict"] == "REJECTED"
    assert table.loc["kept share is 1 - p", "estimate"] == pytest.approx(0.9, abs=5 * table.loc["kept share is 1 - p", "mcse"])


def test_every_kind_says_how_its_false_fail_rate_is_known():
    """Each registered kind declares its calibration in its own body (not inherited); one that does
    not, or an exact one that cannot compute its size, is refused when the class is made."""
    for kind, cls in KINDS.items():
        assert cls.__dict__.get("calibration") in checks_base.CALIBRATIONS, kind
        if cls.calibration in ("monte-carlo", "exact", "interval"):
            assert cls.statistical, kind
    assert ProportionCheck.calibration == "exact"
    with pytest.raises(TypeError, match="calibration"):
        type("Silent", (MeanCheck,), {"kind": "silent", "__annotations__": {}})
    with pytest.raises(TypeError, match="exact_size"):
        type("NoSize", (MeanCheck,), {"kind": "no-size", "calibration": "exact"})
    with pytest.raises(TypeError, match="statistical"):
        type("NoPValue", (ExactCheck,), {"kind": "no-p-value", "calibration": "monte-carlo"})
    type("Fine", (MeanCheck,), {"kind": "fine", "calibration": "monte-carlo"})  # a shared base's subclass that says


def test_the_proportion_example_is_exact_at_its_level():
    check = ProportionCheck("p", measure=_kept_share(0.1), expected=lambda F: 0.9, sd=0.3, target=0.01, relative=False)
    for n in (1, 7, 40, 200):
        assert 0 <= check.exact_size(n, 0.05, None) <= 0.05


# ------------------------------------------------------------------ the family does not depend on what is installed


def _small_registry_run():
    """The whole registry at 0.02 of its sizes, seed 5: its plan and its draws."""
    the_plan = plan(REGISTRY, seed=5, n_factor=0.02, workers=WORKERS)
    return the_plan, simulate(the_plan, seed=5, workers=WORKERS)


@pytest.fixture(scope="module")
def small_run():
    """:func:`_small_registry_run`, drawn once for the module's two slow tests."""
    return _small_registry_run()


@pytest.fixture(scope="module")
def with_and_without_torch(small_run):
    if not checks_base.requirement_met("torch"):
        pytest.skip("PyTorch is not installed here, so there is no run with it to compare (`make torch` adds it)")
    the_plan, results = small_run
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(checks_base, "requirement_met", lambda name: False)
        hidden_plan, hidden_results = _small_registry_run()
        hidden = hidden_plan, evaluate(hidden_plan, hidden_results)
    return (the_plan, evaluate(the_plan, results)), hidden


@pytest.mark.slow
def test_without_pytorch_the_family_sizes_and_other_rows_are_the_same(with_and_without_torch):
    (plan_a, a), (plan_b, b) = with_and_without_torch
    assert plan_b.family_size == plan_a.family_size and plan_b.per_test == plan_a.per_test
    # The planned checks' rows, then one row per corrected sentence (no sentence rests on PyTorch).
    assert len(a) == len(b) > len(plan_a.checks)
    torch_rows = np.zeros(len(a), dtype=bool)
    torch_rows[:len(plan_a.checks)] = [bool(pc.check.requires) for pc in plan_a.checks]
    assert torch_rows.sum() >= 3
    assert (b.loc[torch_rows, "verdict"] == "untestable").all()
    assert b.loc[torch_rows, "note"].str.contains("needs PyTorch").all()
    # Every job of the run with PyTorch is drawn without it at the same size, but the PyTorch ones.
    torch_sims = {ms.sim.key for pc in plan_a.checks if pc.check.requires for ms in pc.check.measures}
    assert {k: j.n for k, j in plan_b.jobs.items()} == {k: j.n for k, j in plan_a.jobs.items() if k not in torch_sims}
    other_a, other_b = a[~torch_rows].reset_index(drop=True), b[~torch_rows].reset_index(drop=True)
    pd.testing.assert_frame_equal(other_a.drop(columns="p_holm"), other_b.drop(columns="p_holm"))
    # Holm counts the absent checks as p = 1: no adjusted p-value can fall, and each row whose own
    # p-value is below every absent one keeps its adjusted value exactly.
    absent_p = a.loc[torch_rows & a["p_value"].notna().to_numpy(), "p_value"].min()
    both = other_a["p_holm"].notna()
    assert (other_b.loc[both, "p_holm"] >= other_a.loc[both, "p_holm"]).all()
    below = both & (other_a["p_value"] < absent_p)
    assert below.sum() > 0
    assert (other_b.loc[below, "p_holm"] == other_a.loc[below, "p_holm"]).all()


# ------------------------------------------------------------------ caches keyed on content, not identity


@pytest.mark.slow
def test_every_mutant_twice_in_another_order_gives_the_same_table(small_run):
    """Every mutant, then every mutant again in the reverse order, in one evaluation: the second
    pass runs each mutant after all the others (a patch left behind, or a stream shared between
    mutants, would show) and in another order, and must give the first pass's rows."""
    the_plan, results = small_run
    twice = evaluate_mutants(the_plan, results, MUTANTS + MUTANTS[::-1], seed=11, workers=WORKERS)
    n = len(MUTANTS)
    first_pass = twice.iloc[:n].reset_index(drop=True)
    reversed_second_pass = twice.iloc[n:].iloc[::-1].reset_index(drop=True)
    assert len(first_pass) == n and first_pass["mutant"].tolist() == [m.name for m in MUTANTS]
    pd.testing.assert_frame_equal(first_pass, reversed_second_pass)
