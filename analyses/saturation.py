"""Saturation of a fresh head: exact curves over the width and the number of keys, Monte
Carlo markers, the section's stated numbers, and example rows at d_k = 512.

Section "Saturation, measured" (and the opening of the section: "most rows are nearly
one-hot").
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from stats.engine.streams import block_generator, simulation_seed
from stats.formulas import FORMULAS
from stats.models.saturation import SaturationSim
from stats.models.saturation_quadrature import saturation_exact
from stats.models.scores import score_scale

from stats.settings.saturation import (EXAMPLE_ROWS, ROW_WIDTH, STATED_TABLE, STUDY_KEYS as KEYS, STUDY_MC_ROWS,
                                       STUDY_MC_WIDTHS as MC_WIDTHS, STUDY_QUICK_KEYS, STUDY_QUICK_MC_ROWS, STUDY_QUICK_WIDTHS,
                                       STUDY_WIDTHS as WIDTHS, T)

from ._common import mean_row, run
from ._data import StudyWriter, read_table

STUDY = "saturation"
#: The section's stated numbers at the two ends of its table, as the figure marks them:
#: (statistic, scaling, d_k, the text's number), from the registry's one copy.
STATED = tuple((stat, sc, d, float(text)) for stat, sc, d, text, _ in STATED_TABLE if d in (4, 1024))
FIGURES = {
    "saturation_width": dict(
        width="full",
        caption="Largest weight and trace 1 - ||a||^2 of a fresh head's softmax (32 keys, Gaussian entries) against the "
        "key width, without scaling and with 1/sqrt(d_k): exact values (lines), Monte Carlo (markers, 2 MCSE bars) and "
        "the numbers the section states (crosses; two miss the expectation, 0.35 and 0.96 for 0.34 and 0.95, but not "
        "what the section's measurement prints: see the saturation_readings figure).",
        claims=("saturation-table", "saturation-exact-vs-mc"),
    ),
    "saturation_keys": dict(
        width="full",
        caption="The same statistics against the number of keys T at d_k = 512 (exact values), and the share of nearly "
        "one-hot rows (largest weight above 0.9 or 0.99, Monte Carlo, 2 MCSE bars) without scaling: more keys make "
        "near ties likelier, so 'most rows are nearly one-hot' holds for 32 keys at both thresholds but, at the "
        "stricter one, only up to about 500 keys (0.51 at 512, 0.49 at 1024).",
        claims=("mostly-one-hot",),
    ),
    "attention_rows": dict(
        width="full",
        caption="Twelve random attention rows of a fresh head at d_k = 512 with 32 keys, without scaling (left: most rows "
        "are nearly one-hot, a few keep a sizeable second weight; weights below 1e-6 share the lightest colour) and with 1/sqrt(d_k) (right: soft). Each row's keys are sorted by weight.",
        claims=("mostly-one-hot", "saturation-table"),
    ),
}


def _exact_row(args):
    d, k, sc = args
    r = saturation_exact(d, k, scaling=sc)
    return dict(d_k=d, n_keys=k, scaling=sc, max_weight=float(r["max_weight"]), trace=float(r["trace"]))


def exact_rows(points, workers):
    """Exact saturation values (quadrature) at ``points`` ``(d_k, T, scaling)``, on a process pool (each is
    independent): one dict a point, ``d_k``, ``n_keys``, ``scaling``, ``max_weight``, ``trace``.  This
    study and the asymptotics study tabulate them."""
    if workers <= 1:
        return [_exact_row(p) for p in points]
    from concurrent.futures import ProcessPoolExecutor

    from stats.engine.executors import pool_context

    with ProcessPoolExecutor(max_workers=workers, mp_context=pool_context()) as pool:
        return list(pool.map(_exact_row, points))


def simulate(out, *, seed, quick=False, workers=1, scheduler=None):
    w = StudyWriter(out, STUDY, seed=seed, quick=quick)
    widths = STUDY_QUICK_WIDTHS if quick else WIDTHS  # a draft draws every other width, up to 2^12
    keys = STUDY_QUICK_KEYS if quick else KEYS
    w.table("exact_width", pd.DataFrame(exact_rows([(d, T, sc) for sc in ("none", "sqrt") for d in widths], workers)))
    w.table("exact_keys", pd.DataFrame(exact_rows([(ROW_WIDTH, k, sc) for sc in ("none", "sqrt") for k in keys], workers)))
    n = STUDY_QUICK_MC_ROWS if quick else STUDY_MC_ROWS
    mc_sims = [SaturationSim(d, T, sc) for sc in ("none", "sqrt") for d in MC_WIDTHS]
    key_sims = [SaturationSim(ROW_WIDTH, k, "none") for k in KEYS]
    res = run([(s, n) for s in mc_sims + key_sims], seed=seed, workers=workers, scheduler=scheduler)
    rows = []
    for s in mc_sims + key_sims:
        for stat in ("max_weight", "trace", "one_hot_90", "one_hot_99"):
            rows.append(dict(d_k=s.d_k, n_keys=s.n_keys, scaling=s.scaling, statistic=stat, **mean_row(res[s.key].summary(stat))))
    w.table("monte_carlo", pd.DataFrame(rows))
    w.table("stated", pd.DataFrame(STATED, columns=["statistic", "scaling", "d_k", "stated"]))
    ex_rows = []
    for sc in ("none", "sqrt"):
        sim = SaturationSim(ROW_WIDTH, T, sc)
        ss = simulation_seed(seed, "example-rows/" + sim.key)
        s = FORMULAS.saturation_sampler(block_generator(ss, 0, 0), block_generator(ss, 0, 1), EXAMPLE_ROWS, ROW_WIDTH, T,
                                        score_scale(ROW_WIDTH, sc))
        e = np.exp(s - s.max(axis=1, keepdims=True))
        a = np.sort(e / e.sum(axis=1, keepdims=True), axis=1)[:, ::-1]
        for r in range(EXAMPLE_ROWS):
            for j in range(T):
                ex_rows.append(dict(scaling=sc, row=r, rank=j, weight=a[r, j]))
    w.table("example_rows", pd.DataFrame(ex_rows))
    return w.close()


def figures(out):
    from matplotlib.colors import LogNorm

    from ._style import SCALING_COLORS, SCALING_LABELS, figure, setup

    setup()
    figs = {}
    ex = read_table(out, STUDY, "exact_width")
    mc = read_table(out, STUDY, "monte_carlo")
    st = read_table(out, STUDY, "stated")
    fig, axes = figure("full", height=2.5, ncols=2)
    for ax, stat, label in zip(axes, ("max_weight", "trace"), (r"mean largest weight $E\,\max_j a_j$", r"mean trace $E[1 - \|a\|^2]$")):
        for sc in ("none", "sqrt"):
            g = ex[ex["scaling"] == sc]
            ax.plot(g["d_k"], g[stat], color=SCALING_COLORS[sc], lw=1.1, label=f"exact, {SCALING_LABELS[sc]}")
            m = mc[(mc["scaling"] == sc) & (mc["statistic"] == stat) & (mc["n_keys"] == T)]
            ax.errorbar(m["d_k"], m["mean"], yerr=2 * m["mcse"], fmt="o", ms=3, color=SCALING_COLORS[sc], mfc="white", mew=0.9,
                        label=f"Monte Carlo, {SCALING_LABELS[sc]}")
            s = st[(st["statistic"] == stat) & (st["scaling"] == sc)]
            ax.plot(s["d_k"], s["stated"], "x", ms=5, mew=1.2, color="black", label="stated in the text" if sc == "none" else None)
        ax.set_xscale("log", base=2)
        ax.set(xlabel=r"key width $d_k$", ylabel=label, ylim=(0, 1.02))
    axes[0].axhline(1 / T, color="0.6", lw=0.7, ls=":")
    axes[0].text(1.1, 1 / T + 0.015, "uniform 1/T", fontsize=6.5, color="0.4")
    axes[0].legend(loc="center right", frameon=True)
    figs["saturation_width"] = fig

    keys = read_table(out, STUDY, "exact_keys")
    fig, axes = figure("full", height=2.4, ncols=3)
    for ax, stat, label in zip(axes[:2], ("max_weight", "trace"), (r"$E\,\max_j a_j$", r"$E[1 - \|a\|^2]$")):
        for sc in ("none", "sqrt"):
            g = keys[keys["scaling"] == sc]
            ax.plot(g["n_keys"], g[stat], "-o", ms=2.5, color=SCALING_COLORS[sc], label=SCALING_LABELS[sc])
        ax.set_xscale("log", base=2)
        ax.set(xlabel="number of keys $T$", ylabel=label + rf", $d_k = {ROW_WIDTH}$", ylim=(0, 1.02))
    axes[0].legend(loc="center right", frameon=True)
    ax = axes[2]
    for stat, thr, ls in (("one_hot_90", "0.9", "-"), ("one_hot_99", "0.99", "--")):
        m = mc[(mc["statistic"] == stat) & (mc["d_k"] == ROW_WIDTH) & (mc["scaling"] == "none")].sort_values("n_keys")
        ax.errorbar(m["n_keys"], m["mean"], yerr=2 * m["mcse"], fmt="o", ls=ls, ms=2.5, color=SCALING_COLORS["none"],
                    label=rf"$\max_j a_j > {thr}$")
    ax.axhline(0.5, color="0.5", lw=0.7, ls=":")
    ax.text(2.2, 0.52, "half the rows", fontsize=6.5, color="0.4")
    ax.set_xscale("log", base=2)
    ax.set(xlabel="number of keys $T$", ylabel=rf"share of rows, $d_k = {ROW_WIDTH}$, unscaled", ylim=(0, 1.02))
    ax.legend(loc="lower left", frameon=True)
    figs["saturation_keys"] = fig

    rows = read_table(out, STUDY, "example_rows")
    fig, axes = figure("full", height=2.2, ncols=3, gridspec_kw=dict(width_ratios=[1, 1, 0.035]))
    for ax, sc in zip(axes[:2], ("none", "sqrt")):
        g = rows[rows["scaling"] == sc].pivot(index="row", columns="rank", values="weight").to_numpy()
        im = ax.imshow(np.maximum(g, 1e-6), aspect="auto", cmap="viridis", norm=LogNorm(vmin=1e-6, vmax=1), interpolation="nearest")
        ax.set_title(rf"{SCALING_LABELS[sc]}, $d_k = {ROW_WIDTH}$")
        ax.set(xlabel="keys, sorted by weight", ylabel="row")
        ax.grid(False)
    cb = fig.colorbar(im, cax=axes[2])
    cb.set_label("attention weight (log scale)")
    figs["attention_rows"] = fig
    return figs
