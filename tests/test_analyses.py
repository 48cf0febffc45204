"""Studies write tidy data, then render figures from that data alone."""

import math
import subprocess
import sys

import numpy as np
import pytest

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


def test_the_training_study_spends_its_runs_where_its_figures_read():
    """Runs are cut only where no figure reads them: at each width a cell a figure reads (the
    registry's best rate, or Adam's alignment rate) trains the most runs there; a wider cell never
    trains more runs than a narrower one; every best-rate cell of the study's shapes is trained;
    1/d_k only at the alignment rate (its rate curves are the muP study's); a draft trains fewer
    runs a cell than the full build, on fewer shapes."""
    from analyses import training
    from stats.tuning import training_best_lr

    BEST_LR = training_best_lr()

    cells = training.cells(quick=False)
    runs = {(s.d_k, s.d_model, s.scaling, s.optimizer, s.lr): training.runs(s, quick=False) for s in cells}
    assert {lr for (_, _, sc, _, lr) in runs if sc == "mup"} == {training.ALIGNMENT_LR}

    def read(d_k, d_model, sc, opt, lr):
        return BEST_LR.get(((d_k, d_model), sc, opt)) == lr or (opt == "adam" and lr == training.ALIGNMENT_LR)

    widths = sorted({d_model for (_, d_model, *_) in runs})
    most = {w: max(n for (_, d_model, *_), n in runs.items() if d_model == w) for w in widths}
    for cell, n in runs.items():
        if read(*cell):
            assert n == most[cell[1]], (cell, n, most[cell[1]])
    assert any(n < most[cell[1]] for cell, n in runs.items()), "no cell is cut: the budget test has nothing to check"
    assert all(most[a] >= most[b] for a, b in zip(widths, widths[1:])), most
    for ((d_k, d_model), sc, opt), lr in BEST_LR.items():  # every cell the curves figure reads is trained
        if (d_k, d_model) in training.SHAPES:
            assert (d_k, d_model, sc, opt, lr) in runs
    assert (256, 256) in training.SHAPES and all(d_k == d_model for d_k, d_model in training.SHAPES)
    draft = training.cells(quick=True)
    assert max(training.runs(s, quick=True) for s in draft) < min(runs.values())
    assert {(s.d_k, s.d_model) for s in draft} < set(training.SHAPES)


def test_the_mup_study_trains_each_parameterisation_on_its_own_grid():
    """Five rates half a decade apart a parameterisation, each cell on its parameterisation's grid,
    and the grid table the figures read says which rates each one trained."""
    from analyses import mup_transfer

    assert set(mup_transfer.GRIDS) == set(mup_transfer.NAMES)
    ladder = (1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1, 1.0)  # half a decade a step
    for grid in mup_transfer.GRIDS.values():
        start = ladder.index(grid[0])
        assert grid == ladder[start:start + 5]
    for quick in (True, False):
        for sim in mup_transfer.cells(quick=quick):
            assert sim.lrs == mup_transfer.GRIDS[f"{sim.scaling}/{sim.mup_base}"]


def test_the_readings_study_tabulates_every_printed_number_and_renders(tmp_path, monkeypatch):
    """At a toy size: one row per (printed number, reading, N), the Gaussian readings at both widths and the
    other laws at d_k = 4 only; the share of nearly one-hot rows falls with T; both figures render."""
    from analyses import saturation_readings as sr
    from stats.settings.saturation import PROCEDURE_NS, PROCEDURE_READINGS

    monkeypatch.setattr(sr, "PROCEDURE_QUICK_SIZE", dict(key_sets=12, inner=64))
    monkeypatch.setattr(sr, "ONE_HOT_QUICK_ROWS", 50_000)
    monkeypatch.setattr(sr, "DRAWS", 400)
    sr.simulate(tmp_path, seed=3, quick=True)
    iv = read_table(tmp_path, sr.STUDY, "intervals")
    per_width = {4: len(PROCEDURE_READINGS), 1024: 2}
    assert len(iv) == sum(per_width[d] for _, _, d, _ in sr.PRINTED) * len(PROCEDURE_NS)
    assert (iv["q_lo"] <= iv["median"]).all() and (iv["median"] <= iv["q_hi"]).all()
    assert set(iv.loc[iv["d_k"] == 1024, "entries"]) == {"gaussian"}
    hot = read_table(tmp_path, sr.STUDY, "one_hot").sort_values("n_keys")
    for thr in (0.9, 0.99):
        share = hot.loc[hot["threshold"] == thr, "share"].to_numpy()
        assert share[0] > share[-1]
    for path in render(tmp_path, sr.STUDY):
        assert path.stat().st_size > 0


def test_the_text_study_reads_every_parameterisation_at_one_shared_rate():
    """The trained-logit figure compares parameterisations at one rate: in the build every grid holds
    it exactly; a draft's grids (every other rate) read the rate nearest it, half a decade away at most."""
    from analyses import text_transfer
    from stats.settings.model import TEXT_SHARED_LR

    for sim in text_transfer.cells(quick=False):
        assert sim.lrs[text_transfer.shared_point(sim.lrs)] == pytest.approx(TEXT_SHARED_LR, rel=1e-12)
    for sim in text_transfer.cells(quick=True):
        lr = sim.lrs[text_transfer.shared_point(sim.lrs)]
        assert abs(math.log10(lr / TEXT_SHARED_LR)) <= 0.5 + 1e-12
        assert all(abs(math.log10(lr / TEXT_SHARED_LR)) <= abs(math.log10(r / TEXT_SHARED_LR)) for r in sim.lrs)


def test_the_text_widths_study_reads_both_protocols_off_the_same_runs_and_renders(tmp_path):
    """A draft (the narrowest width, a third of the steps, every other rate, two seeds): a row per run and rate;
    the shared rate is the grid rate where the scaled model's mean loss is least, and each model's share there is
    its runs' mean at that rate; its own-best share is each seed's at the rate with that seed's least loss."""
    from analyses import text_widths
    from stats.settings.model import TEXT_HEAD_GRID, TEXT_HEAD_QUICK_WIDTHS, TEXT_QUICK_RUNS

    text_widths.simulate(tmp_path, seed=5, quick=True)
    runs = read_table(tmp_path, text_widths.STUDY, "runs")
    protocols = read_table(tmp_path, text_widths.STUDY, "protocols").set_index(["model", "d_k", "protocol"])
    grid = TEXT_HEAD_GRID[::2]
    assert len(runs) == len(text_widths.NAMES) * len(TEXT_HEAD_QUICK_WIDTHS) * TEXT_QUICK_RUNS * len(grid)
    assert set(runs["model"]) == set(text_widths.NAMES.values()) and np.allclose(sorted(set(runs["lr"])), grid)
    for d in TEXT_HEAD_QUICK_WIDTHS:
        at = runs[runs["d_k"] == d]
        scaled = at[at["model"] == "scaled"].groupby("lr")["loss"].mean()
        shared = scaled.idxmin()
        for model, r in at.groupby("model"):
            row = protocols.loc[(model, d, "shared rate")]
            assert row["lr"] == pytest.approx(shared)
            assert row["mean"] == pytest.approx(r[r["lr"] == shared]["beats_bigram"].mean())
            own = r.loc[r.groupby("seed")["loss"].idxmin()]
            np.testing.assert_allclose(own["lr"], own["best_lr"], rtol=1e-9)
            assert protocols.loc[(model, d, "own best rate"), "mean"] == pytest.approx(own["beats_bigram"].mean())
    for path in render(tmp_path, text_widths.STUDY):
        assert path.stat().st_size > 10_000
    # The shared rate is the scaled model's best at each width, whatever the others' best.
    losses = {("sqrt", 64): [3.0, 2.0, 2.5], ("none", 64): [2.4, 2.6, 2.8], ("t5", 64): [2.9, 2.8, 2.0],
              ("sqrt", 256): [2.1, 2.2, 2.3], ("none", 256): [2.9, 2.0, 2.8]}
    assert text_widths.shared_points(losses) == {64: 1, 256: 0}


def test_the_recall_study_tabulates_each_seed_and_the_cells_mean_and_renders(tmp_path):
    """A draft (the narrowest width, a few steps, two seeds): a row per run and per (model, width, outcome),
    the cells' means those of the runs, additive attention beside the three dot products; the figure renders."""
    from analyses import recall_widths
    from stats.settings.model import RECALL_QUICK_STEPS, RECALL_QUICK_WIDTHS
    from stats.training import RECALL_OUTCOMES

    recall_widths.simulate(tmp_path, seed=5, quick=True)
    runs = read_table(tmp_path, recall_widths.STUDY, "runs")
    cells = read_table(tmp_path, recall_widths.STUDY, "cells")
    assert set(runs["model"]) == set(recall_widths.NAMES.values()) and set(runs["d_k"]) == set(RECALL_QUICK_WIDTHS)
    assert len(runs) == 2 * len(recall_widths.NAMES) * len(RECALL_QUICK_WIDTHS) and (runs["steps"] == RECALL_QUICK_STEPS).all()
    assert len(cells) == len(runs) // 2 * len(RECALL_OUTCOMES)
    for stat in RECALL_OUTCOMES:
        mean = cells[cells["statistic"] == stat].set_index(["model", "d_k"])["mean"]
        np.testing.assert_allclose(runs.groupby(["model", "d_k"])[stat].mean().loc[mean.index], mean)
    assert ((runs["accuracy"] >= 0) & (runs["accuracy"] <= 1)).all() and (runs["steps_to_solve"] <= runs["steps"] + 1).all()
    for path in render(tmp_path, recall_widths.STUDY):
        assert path.stat().st_size > 10_000
