"""The section's saturation numbers on the law of what its measurement prints: for each printed
number, the average over N queries under each reading of what was drawn (fresh keys for every
query or one key set per width; Gaussian, +-1 or uniform entries) at a few N, with the printed
value's rounding interval and the expectation; and "most rows are nearly one-hot" at d_k = 512
against the number of keys.

Section "Saturation, measured" (and the opening).  The model: :mod:`stats.models.saturation_procedure`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from stats.engine.streams import simulation_seed
from stats.models.saturation import exact_saturation_scores
from stats.models.saturation_procedure import (
    central_interval,
    largest_consistent_n,
    printed_value_mass,
    procedure_expectation,
    procedure_sample,
    statistic_draws,
)
from stats.engine.streams import block_generator
from stats.settings.saturation import (
    ONE_HOT_KEYS,
    ONE_HOT_QUICK_ROWS,
    ONE_HOT_ROWS,
    PROCEDURE_ALPHA as ALPHA,
    PROCEDURE_LAW_WIDTHS,
    PROCEDURE_NS,
    PROCEDURE_QUICK_SIZE,
    PROCEDURE_READINGS,
    PROCEDURE_SIZE,
    PROCEDURE_WIDTHS,
    ROW_WIDTH,
    STATED_TABLE,
    T,
)

from ._data import StudyWriter, read_table

STUDY = "saturation_readings"
#: The printed numbers graded: (statistic, scaling, d_k, text) at the two ends of the table.
PRINTED = tuple((s, sc, d, text) for s, sc, d, text, _ in STATED_TABLE if d in PROCEDURE_WIDTHS)
#: Draws of the printed average a (number, reading, N) for its quartiles.
DRAWS = 20_000
FIGURES = {
    "saturation_readings": dict(
        width="full",
        caption="Each number the section prints from its saturation measurement (shaded: its rounding interval) against "
        "the law of what the measurement prints, the average over N random queries at 32 keys, under each reading of "
        "what was drawn: fresh keys for every query (F) or one key set per width shared by all queries (S), with "
        "Gaussian, +-1 or uniform entries, at N = 32, 1000 and 100000 (bars: the central 95% interval; boxes: the quartiles).  Dashed: the "
        "expectation (Gaussian entries, exact).  A number is an erratum only if it misses the 95% bar under every "
        "reading; 0.35 and 0.96 miss the expectation but not what the measurement prints under Gaussian entries.",
        claims=("saturation-procedure", "saturation-procedure-graded", "saturation-table"),
    ),
    "one_hot_keys": dict(
        width="column",
        caption="Share of nearly one-hot rows (largest weight above 0.9 or 0.99) of an unscaled head at d_k = 512 "
        "against the number of keys T (Monte Carlo, 2 MCSE bars).  Above 0.9 most rows stay nearly one-hot up to "
        "4096 keys; above 0.99 the share falls below one half between 512 and 1024 keys.",
        claims=("mostly-one-hot-by-keys", "mostly-one-hot"),
    ),
}


def _readings(d):
    return tuple((k, law) for k, law in PROCEDURE_READINGS if law == "gaussian" or d in PROCEDURE_LAW_WIDTHS)


def simulate(out, *, seed, quick=False, workers=1, scheduler=None):
    w = StudyWriter(out, STUDY, seed=seed, quick=quick)
    size = PROCEDURE_QUICK_SIZE if quick else PROCEDURE_SIZE
    rows, best = [], []
    for stat, sc, d, text in PRINTED:
        lo, hi = float(text) - 0.005, float(text) + 0.005
        exact = procedure_expectation(d, scaling=sc, n_keys=T, statistic=stat)
        for keys, law in _readings(d):
            r = procedure_sample(d_k=d, scaling=sc, entries=law, keys=keys, n_keys=T, seed=seed, **size)[stat]
            mean = exact if law == "gaussian" else None
            for n in PROCEDURE_NS:
                (q_lo, q_lo_se), (q_hi, q_hi_se) = central_interval(rows=r, n_queries=n, keys=keys, alpha=ALPHA, mean=mean)
                dseed = simulation_seed(seed, f"{STUDY}/draws/{stat}/{sc}/{d}/{keys}/{law}/{n}")
                x = statistic_draws(rows=r, n_queries=n, keys=keys, size=DRAWS, seed=dseed, mean=mean)
                q25, q50, q75 = np.quantile(x, (0.25, 0.5, 0.75))
                tau, tau_se = printed_value_mass(lo=lo, hi=hi, rows=r, n_queries=n, keys=keys, mean=mean)
                rows.append(dict(statistic=stat, scaling=sc, d_k=d, printed=text, keys=keys, entries=law, n_queries=n,
                                 q_lo=q_lo, q_lo_mcse=q_lo_se, q25=q25, median=q50, q75=q75, q_hi=q_hi, q_hi_mcse=q_hi_se,
                                 tau=tau, tau_mcse=tau_se, inside=bool(tau >= ALPHA), expectation=exact,
                                 row_mean=float(r.mean()), row_mean_mcse=float(r.mean(axis=1).std(ddof=1) / math.sqrt(r.shape[0]))))
            best.append(dict(statistic=stat, scaling=sc, d_k=d, printed=text, keys=keys, entries=law,
                             largest_n=largest_consistent_n(lo=lo, hi=hi, rows=r, keys=keys, alpha=ALPHA, mean=mean)))
    w.table("intervals", pd.DataFrame(rows))
    w.table("largest_n", pd.DataFrame(best))
    budget = ONE_HOT_QUICK_ROWS if quick else ONE_HOT_ROWS
    hot = []
    for k in ONE_HOT_KEYS:
        n = max(200, int(budget // k))
        ss = simulation_seed(seed, f"{STUDY}/one_hot/{ROW_WIDTH}/{k}")
        s = exact_saturation_scores(block_generator(ss, 0, 0), block_generator(ss, 0, 1), n, ROW_WIDTH, k, 1.0)
        m = 1.0 / np.exp(s - s.max(axis=1, keepdims=True)).sum(axis=1)
        for thr in (0.9, 0.99):
            p = float((m > thr).mean())
            hot.append(dict(d_k=ROW_WIDTH, n_keys=k, threshold=thr, share=p, mcse=math.sqrt(p * (1 - p) / n), n=n))
    w.table("one_hot", pd.DataFrame(hot))
    return w.close()


_LAW_SHORT = {"gaussian": "Gauss", "rademacher": "±1", "uniform": "unif"}
_N_COLORS = {32: "#999999", 1000: "#0072b2", 100_000: "#d55e00"}


def figures(out):
    from ._style import figure, setup

    setup()
    figs = {}
    iv = read_table(out, STUDY, "intervals")
    fig, axes = figure("full", height=5.0, nrows=2, ncols=3)
    for ax, (stat, sc, d, text) in zip(axes.ravel(), PRINTED):
        g = iv[(iv["statistic"] == stat) & (iv["scaling"] == sc) & (iv["d_k"] == d)]
        readings = list(dict.fromkeys(zip(g["keys"], g["entries"])))
        lo, hi = float(text) - 0.005, float(text) + 0.005
        ax.axhspan(lo, hi, color="#f0e442", alpha=0.45, lw=0, label="the printed value's rounding interval")
        ax.axhline(float(g["expectation"].iloc[0]), color="black", lw=0.8, ls="--", label="expectation (exact)")
        for i, (keys, law) in enumerate(readings):
            for j, n in enumerate(PROCEDURE_NS):
                r = g[(g["keys"] == keys) & (g["entries"] == law) & (g["n_queries"] == n)].iloc[0]
                x = i + (j - 1) * 0.25
                c = _N_COLORS[n]
                ax.plot([x, x], [r["q_lo"], r["q_hi"]], color=c, lw=1.0, label=f"N = {n}" if i == 0 else None)
                ax.add_patch(_box(x, r["q25"], r["q75"], c))
                ax.plot(x, r["median"], "_", color="white" if n != 32 else "black", ms=3, mew=0.8)
        ax.set_xticks(range(len(readings)), [f"{'F' if k == 'fresh' else 'S'}\n{_LAW_SHORT[law]}" for k, law in readings],
                      fontsize=6)
        side = "unscaled" if sc == "none" else r"$1/\sqrt{d_k}$"
        what = "max weight" if stat == "max_weight" else "trace"
        ax.set_title(f"{what}, {side}, $d_k = {d}$: text {text}", fontsize=6.5)
        ax.set_xlim(-0.6, len(readings) - 0.4)
    axes[0, 0].set_ylabel("printed average $S_N$")
    axes[1, 0].set_ylabel("printed average $S_N$")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    # the legend in the panel with two readings, below its bars (its y range extended to make room)
    ax = axes[0, 1]
    y0, y1 = ax.get_ylim()
    ax.set_ylim(y0 - 0.9 * (y1 - y0), y1)
    ax.legend(handles, labels, loc="lower center", ncol=1, frameon=True, fontsize=5.5)
    figs["saturation_readings"] = fig

    hot = read_table(out, STUDY, "one_hot")
    fig, ax = figure("column", height=2.4)
    for thr, ls in ((0.9, "-"), (0.99, "--")):
        g = hot[hot["threshold"] == thr].sort_values("n_keys")
        ax.errorbar(g["n_keys"], g["share"], yerr=2 * g["mcse"], fmt="o", ls=ls, ms=2.5, color="#d55e00",
                    label=rf"$\max_j a_j > {thr}$")
    ax.axhline(0.5, color="0.5", lw=0.7, ls=":")
    ax.axvline(T, color="0.7", lw=0.7)
    ax.text(T * 1.1, 0.95, "the section's 32 keys", fontsize=6.5, color="0.4", va="top")
    ax.set_xscale("log", base=2)
    ax.set(xlabel="number of keys $T$", ylabel=rf"share of rows, $d_k = {ROW_WIDTH}$, unscaled", ylim=(0, 1.02))
    ax.legend(loc="lower right", frameon=True)
    figs["one_hot_keys"] = fig
    return figs


def _box(x, lo, hi, color):
    from matplotlib.patches import Rectangle

    return Rectangle((x - 0.08, lo), 0.16, hi - lo, facecolor=color, edgecolor=color, lw=0.5)
