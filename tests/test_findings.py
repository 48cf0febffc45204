"""Finding classes (docs/findings.md): an erratum's grade from its distance to the rounding
interval, caveats that must name what holds as written, verdicts by the recorded kind, and
the registry's caveats pointing at claims that exist."""

import math

import pytest

from stats import REGISTRY, Claim, Erratum, Measure, ScoreSim, Stated, evaluate, plan, simulate
from stats.claims import check_builders as build
from stats.claims.findings import (
    CAVEAT, ERRATUM, FALSE_AS_STATED, HOLDS, LAST_DIGIT, ROUNDING_SLIP, UNSETTLED, WRONG_NUMBER, digits_off, erratum_grade,
    unsettled, worst_finding,
)
from stats.claims.verdicts import CAVEAT_CONFIRMED, CAVEAT_STALE, ERRATUM_CONFIRMED, OK_VERDICTS, PASS, REJECTED, verdict


def test_digits_off_is_the_distance_from_the_rounding_interval_in_last_digits():
    assert digits_off(Stated.parse("0.96"), 0.954903) == pytest.approx(0.0097)
    assert digits_off(Stated.parse("0.35"), 0.3426) == pytest.approx(0.24)
    assert digits_off(Stated.parse("0.35"), 0.35) == 0.0
    assert digits_off(Stated.parse("163,000", unit=1000), 162754.79) == 0.0
    assert digits_off(Stated.parse("163,000", unit=1000), 160000.0) == pytest.approx(2.5)
    assert digits_off(Stated.at_most("less than half", 0.5), 0.9) is None
    assert digits_off(Stated.between("within a factor 2", 0.5, 2.0), 8.0) is None
    assert digits_off(Stated.parse("0.35"), math.nan) is None


def test_the_grades_of_the_saturation_table_and_beyond():
    assert erratum_grade(Stated.parse("0.96"), 0.954903) == (ROUNDING_SLIP, pytest.approx(0.0097))
    assert erratum_grade(Stated.parse("0.35"), 0.3426) == (LAST_DIGIT, pytest.approx(0.24))
    assert erratum_grade(Stated.parse("0.35"), 0.3351)[0] == LAST_DIGIT  # 0.99 of a digit
    assert erratum_grade(Stated.parse("0.35"), 0.30)[0] == WRONG_NUMBER
    assert erratum_grade(Stated.at_least("learns: > 1/2", 0.5), 0.0) == (FALSE_AS_STATED, None)


def test_worst_finding_ranks_erratum_over_caveat_over_unsettled_over_holds():
    assert worst_finding([HOLDS, CAVEAT, HOLDS]) == CAVEAT
    assert worst_finding([HOLDS, UNSETTLED, HOLDS]) == UNSETTLED
    assert worst_finding([UNSETTLED, CAVEAT]) == CAVEAT
    assert worst_finding([HOLDS, ERRATUM, CAVEAT]) == ERRATUM
    assert worst_finding(["", HOLDS]) == HOLDS
    assert worst_finding(["", ""]) == ""


def test_unsettled_is_an_estimate_outside_the_closed_interval_stated():
    at_most = Stated.at_most("cannot learn: share <= 0.1", 0.1)
    assert unsettled(at_most, 0.22) and not unsettled(at_most, 0.05)
    assert not unsettled(at_most, 0.1)  # "at most 0.1" is stored as [-inf, 0.1); its end agrees with it
    more = Stated.at_least("learns: > 1/2", 0.5)
    assert unsettled(more, 0.5) and unsettled(more, 0.27) and not unsettled(more, 0.51)  # "more than" is strict
    assert unsettled(Stated.parse("0.35"), 0.3426) and not unsettled(Stated.parse("0.35"), 0.352)
    assert not unsettled(None, 5.0) and not unsettled(at_most, math.nan) and not unsettled(at_most, None)


def test_a_check_not_refuted_with_its_estimate_outside_the_text_is_unsettled_not_holding():
    """Share checks "at most h" on one saturation share, h across [0, 1]: a refuted row is an
    erratum; a row not refuted holds when its estimate is at most h and is unsettled when above.
    The grid puts some h just below the estimate, where the rows cannot refute it: those are the
    unsettled rows, and without the rule they would read ``holds``."""
    from stats.models.saturation import SaturationSim

    measure = Measure(SaturationSim(64, scaling="none"), "one_hot_90")
    checks = tuple(build.share(f"at most {h:.3f}", Stated.at_most(f"share <= {h:.3f}", h), measure, target=0.3)
                   for h in [k / 40 for k in range(2, 39)])
    the_plan = plan((Claim("toy-share", "test", "a share at most h", "-", checks),), seed=5)
    table = evaluate(the_plan, simulate(the_plan, seed=5))
    refuted = table["verdict"] == REJECTED
    above = table["estimate"] > [float(label.split()[-1]) for label in table["check"]]
    assert (table.loc[refuted, "finding"] == ERRATUM).all()
    assert (table.loc[~refuted & above, "finding"] == UNSETTLED).all() and (~refuted & above).any()
    assert (table.loc[~refuted & ~above, "finding"] == HOLDS).all() and (~refuted & ~above).any()
    assert (table.loc[~refuted, "verdict"] == PASS).all()  # the run passes: a finding, not a failure


def test_a_caveat_must_say_what_holds_and_which_claims_show_it():
    fix = Stated.parse("0.34")
    with pytest.raises(ValueError, match="as_written"):
        Erratum(fix, "a sentence", kind="caveat")
    with pytest.raises(ValueError, match="as_written"):
        Erratum(fix, "a sentence", kind="caveat", as_written="true as written")
    with pytest.raises(ValueError, match="kind"):
        Erratum(fix, "a sentence", kind="typo")
    with pytest.raises(ValueError, match="sentence"):
        Erratum(fix, "  ")
    with pytest.raises(TypeError, match="confirmed_by"):
        Erratum(fix, "a sentence", kind="caveat", as_written="x", confirmed_by="one-claim")
    with pytest.raises(ValueError, match="caveat"):
        Erratum(fix, "a sentence", as_written="an erratum is false as written")
    with pytest.raises(TypeError, match="corrected"):
        Erratum(0.34, "a sentence")


def test_verdicts_name_the_recorded_kind():
    caveat = Erratum(Stated.parse("0.34"), "s", kind="caveat", as_written="x", confirmed_by=("c",))
    assert verdict(True, erratum=caveat) == CAVEAT_CONFIRMED and verdict(False, erratum=caveat) == CAVEAT_STALE
    assert verdict(True, erratum=Erratum(Stated.parse("0.34"), "s")) == ERRATUM_CONFIRMED
    assert verdict(True) == REJECTED and verdict(False) == PASS
    assert CAVEAT_CONFIRMED in OK_VERDICTS and CAVEAT_STALE not in OK_VERDICTS


def _toy_table(erratum, value=0.3426, text="0.35"):
    check = build.exact("stated", Stated.parse(text), lambda F: (value, 1e-9), uses=(), erratum=erratum)
    honest = build.mean("mean zero", Measure(ScoreSim(4), "score"), lambda F: 0.0, uses=(), target=0.05, relative=False,
                        sd=lambda: 2.0)
    claims = (Claim("toy", "test", "a toy claim", "-", (check,)), Claim("toy-honest", "test", "honest", "-", (honest,)))
    the_plan = plan(claims, seed=3)
    return evaluate(the_plan, simulate(the_plan, seed=3)).set_index("check")


def test_claims_csv_carries_the_finding_and_grade():
    table = _toy_table(Erratum(Stated.parse("0.34"), "the corrected sentence"))
    row = table.loc["stated"]
    assert (row["verdict"], row["finding"], row["grade"]) == (ERRATUM_CONFIRMED, ERRATUM, LAST_DIGIT)
    assert row["digits_off"] == pytest.approx(0.24)
    assert table.loc["stated [corrected]", "finding"] == HOLDS
    caveat = _toy_table(Erratum(Stated.parse("0.34"), "s", kind="caveat", as_written="x", confirmed_by=("toy-honest",)))
    assert (caveat.loc["stated", "verdict"], caveat.loc["stated", "finding"]) == (CAVEAT_CONFIRMED, CAVEAT)
    assert caveat.loc["stated", "grade"] == ""
    # A refutation nobody recorded fails the run, and is graded so the author sees how far off it is.
    unrecorded = _toy_table(None, value=0.954903, text="0.96").loc["stated"]
    assert (unrecorded["verdict"], unrecorded["finding"], unrecorded["grade"]) == (REJECTED, ERRATUM, ROUNDING_SLIP)


def test_every_recorded_finding_names_claims_that_exist_and_carries_a_sentence():
    ids = {c.id for c in REGISTRY}
    recorded = [(c.id, ch) for c in REGISTRY for ch in c.checks if ch.erratum is not None]
    kinds = {ch.erratum.kind for _, ch in recorded}
    assert kinds == {"erratum", "caveat"}
    for cid, ch in recorded:
        e = ch.erratum
        assert e.sentence.strip().endswith("."), (cid, ch.label)
        assert set(e.confirmed_by) <= ids, (cid, ch.label, e.confirmed_by)
