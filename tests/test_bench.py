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


def test_bench_md_is_the_csv_s_rows_as_a_table():
    import numpy as np
    import pandas as pd

    rows = [bench.row("a ratio | piped", 1.234567, "<= 2", "ratio", "15 pairs\nalternating"),
            bench.row("a missed ratio", 3.0, "<= 2", "ratio", ""),
            bench.row("not timed", math.nan, ">= 0.9", "ratio", "dask not installed", meets=False),
            bench.row("a plain number", np.float64(0.5), "", "s", "")]
    frame = pd.DataFrame(rows, columns=["benchmark", "value", "target", "meets", "unit", "detail"])
    frame["cores"], frame["numpy"], frame["blas"], frame["machine"] = 2, "2.4.6", "openblas 0.3.31", "x86_64, Python 3.11.7"
    text = bench.bench_markdown(frame)
    lines = text.splitlines()
    assert lines[0] == "# Benchmarks" and "do not edit" in text and "docs/performance.md" in text
    assert "Machine: x86_64, Python 3.11.7; cores 2, numpy 2.4.6, blas openblas 0.3.31." in lines
    table = [line for line in lines if line.startswith("|")]
    assert table[0] == "| benchmark | value | unit | target | met | detail |"
    assert table[2:] == [
        "| a ratio \\| piped | 1.23 | ratio | <= 2 | yes | 15 pairs alternating |",
        "| a missed ratio | 3 | ratio | <= 2 | **missed** |  |",
        "| not timed | not timed | ratio | >= 0.9 | **missed** | dask not installed |",
        "| a plain number | 0.5 | s |  |  |  |",
    ]
