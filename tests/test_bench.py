"""``python -m benchmarks``: the whole-run times are judged in units of the reference workload (no timing here)."""

import math

import pytest

import benchmarks.__main__ as bench


def test_whole_run_time_is_divided_by_the_reference():
    budget, seconds = bench.REFERENCE_TARGETS["verify-full"]
    took = 1.5 * seconds  # over the target on the targets' machine, within it on one twice as slow
    rows = [bench.row("a ratio", 1.0, "<= 2", "ratio", ""),
            bench.absolute_row("verify, full", took, "verify-full", "default sample sizes")]
    reference, ref_rows = bench.reference_rows(1.9, 2.1)  # a machine twice as slow as the targets' one
    assert reference == pytest.approx(2.0)
    assert [r["value"] for r in ref_rows] == [1.9, 2.1, pytest.approx(2.0)]
    plain, verify = bench.restate_absolute(rows, reference)
    assert plain is rows[0]
    assert verify["value"] == pytest.approx(took / 2) and verify["target"] == f"<= {budget}" and verify["meets"] is True
    assert verify["unit"] == "references" and f"{took:.2f} s" in verify["detail"] and "reference 2.000 s" in verify["detail"]
    assert "reference_key" not in verify
    # the same time on a machine as fast as the targets' one misses the target
    (missed,) = bench.restate_absolute(rows[1:], bench.REFERENCE_AT_TARGETS)
    assert missed["meets"] is False


def test_targets_are_the_old_seconds_over_the_reference_there():
    for key, (budget, seconds) in bench.REFERENCE_TARGETS.items():
        assert budget == pytest.approx(seconds / bench.REFERENCE_AT_TARGETS, rel=0.05), key


def test_reference_workload_is_deterministic():
    run = bench.reference_workload(blocks=2, products=2)
    a, b = run(), run()
    assert a == b and math.isfinite(a)
    assert bench.time_reference(repeats=1, blocks=1, products=1) > 0


def test_a_baseline_commit_that_is_not_here_is_a_reason_not_a_crash(tmp_path):
    why = bench._baseline_tree("0" * 40, tmp_path)
    assert isinstance(why, str) and "no commit" in why
    assert not (tmp_path / "baseline").exists()
