"""Studies write tidy data, then render figures from that data alone."""

import subprocess
import sys

import numpy as np

from analyses import overflow, render
from analyses._data import read_table
from stats import exp_overflow_threshold


def test_overflow_study_finds_the_thresholds(tmp_path):
    overflow.simulate(tmp_path, seed=20240917)
    data = read_table(tmp_path, overflow.STUDY, "sweep")
    assert {"dtype", "method", "max_score", "finite", "max_abs_error"} <= set(data.columns)
    t = read_table(tmp_path, overflow.STUDY, "thresholds").set_index(["dtype", "method"])
    for dtype in ("float16", "float32"):
        assert t.loc[(dtype, "naive"), "first_nonfinite"] == float(exp_overflow_threshold(dtype))
        assert np.isnan(t.loc[(dtype, "stable"), "first_wrong"])  # the stable softmax never fails
    # A full row of large scores overflows the float16 denominator before exp(max) does.
    assert t.loc[("float16", "naive"), "first_wrong"] < t.loc[("float16", "naive"), "first_nonfinite"]
    assert t.loc[("float16", "naive"), "first_nonfinite"] < 12


def test_render_needs_only_the_data(tmp_path):
    overflow.simulate(tmp_path, seed=20240917)
    for path in render(tmp_path, overflow.STUDY):
        assert path.stat().st_size > 10_000
    assert (tmp_path / "figures" / "overflow.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "figures" / "overflow.pdf").read_bytes()[:4] == b"%PDF"


def test_cli_rejects_unknown_analysis():
    r = subprocess.run([sys.executable, "-m", "analyses", "nope"], capture_output=True, text=True)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
