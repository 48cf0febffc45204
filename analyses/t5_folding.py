"""T5's folded initialisation in training, per optimiser.

The section (under "The assumption behind the argument, and when it fails") says the
folded and divided heads "differ slightly" during training, because Adam's steps ignore a
weight's scale.  The folded run is the divided run with W_Q's learning rate multiplied by
d_k (SGD), sqrt(d_k) (Adam, with eps/sqrt(d_k)) or 1 (Adafactor's relative step;
Shazeer & Stern 2018, Algorithm 4 with beta_1 = 0, T5's optimiser): the registry checks
that identity step for step.  This study measures (1) how far apart the two heads end at
the *same* learning rate, across widths, and (2) how far the identity's two runs drift
apart through rounding where sqrt(d_k) is not a power of two (and, under Adam, when both
keep the same eps instead of the matched eps/sqrt(d_k)).
"""

from __future__ import annotations

import pandas as pd

from stats.training import FoldingSim, TrainingSim
from stats.settings.fixes import (FOLD_LRS, FOLD_STEPS, FOLD_STUDY_QUICK_WIDTHS as QUICK_GAP_WIDTHS, FOLD_STUDY_WIDTHS as GAP_WIDTHS,
                                  T5_STEPS, T5_STUDY_QUICK_RUNS as QUICK_RUNS, T5_STUDY_QUICK_WIDTHS as QUICK_WIDTHS,
                                  T5_STUDY_RATES as RATES, T5_STUDY_RUNS as RUNS, T5_STUDY_WIDE_RUNS as WIDE_RUNS,
                                  T5_STUDY_WIDTHS as WIDTHS)

from ._common import mean_row, run
from ._data import StudyWriter, read_table

STUDY = "t5_folding"
STATS = ("loss_8", "accuracy_8", "learned", "steps_to_accuracy", "unstable")
OPT_LABELS = {"sgd": "SGD", "adam": "Adam", "adafactor": "Adafactor"}
OPT_COLORS = {"sgd": "#d55e00", "adam": "#0072b2", "adafactor": "#009e73"}
FIGURES = {
    "t5_folding": dict(
        width="full",
        caption=f"T5's folded head against the divided head at the same learning rate (SGD 3, Adam 0.01, Adafactor 0.1; "
        f"{T5_STEPS} steps), against the width d_k = d_model: the probe loss at the end (left) and the mean steps to 90% "
        "accuracy, censored at 61 (middle); solid divided, dashed folded; 16 runs a point (4 at 256), bars 2 MCSE. "
        "Under Adafactor the two are the same run (the curves coincide); under SGD the folded query weights learn d_k "
        "times faster and the head diverges; under Adam sqrt(d_k) times faster. Right: the largest relative difference "
        f"between the folded run and the divided run that equals it, over {FOLD_STEPS} steps: 0 (not drawn) where "
        "sqrt(d_k) is a power of two, rounding elsewhere; under Adam with the same eps on both (instead of eps/sqrt(d_k)) "
        "the difference is eps's.",
        claims=("training-t5-folding", "training-t5-differs"),
    ),
}


def cells(*, quick):
    same_rate = [TrainingSim(d, sc, opt, lr, T5_STEPS) for opt, lr in RATES.items() for d in (QUICK_WIDTHS if quick else WIDTHS)
                 for sc in ("sqrt", "t5")]
    gaps = [FoldingSim(d, opt, lr, FOLD_STEPS, match_eps=m) for opt, lr in FOLD_LRS.items()
            for d in (QUICK_GAP_WIDTHS if quick else GAP_WIDTHS) for m in ((True, False) if opt == "adam" else (True,))]
    return same_rate, gaps


def runs(sim, *, quick):
    """Runs a cell trains: 16 (4 at d_k = 256, where a run costs 16 times one at 64), 4 in a draft."""
    return QUICK_RUNS if quick else (WIDE_RUNS if sim.d_k >= 256 else RUNS)


def simulate(out, *, seed, quick=False, workers=1, scheduler=None):
    w = StudyWriter(out, STUDY, seed=seed, quick=quick)
    same_rate, gaps = cells(quick=quick)
    res = run([(s, runs(s, quick=quick)) for s in same_rate + gaps], seed=seed, workers=workers, desc=STUDY, scheduler=scheduler)
    w.table("same_rate", pd.DataFrame([dict(d_k=s.d_k, optimizer=s.optimizer, lr=s.lr, scaling=s.scaling, statistic=st,
                                            **mean_row(res[s.key].summary(st))) for s in same_rate for st in STATS]))
    w.table("gaps", pd.DataFrame([dict(d_k=s.d_k, optimizer=s.optimizer, lr=s.lr, match_eps=s.match_eps, statistic=st,
                                       **mean_row(res[s.key].summary(st)))
                                  for s in gaps for st in ("fold_relative_query", "fold_gap_query", "fold_gap_key")]))
    return w.close()


def figures(out):
    from ._style import figure, setup

    setup()
    same = read_table(out, STUDY, "same_rate")
    gaps = read_table(out, STUDY, "gaps")
    fig, axes = figure("full", height=2.4, ncols=3)
    for opt in RATES:
        for sc, ls in (("sqrt", "-"), ("t5", "--")):
            for ax, st in zip(axes[:2], ("loss_8", "steps_to_accuracy")):
                g = same[(same["optimizer"] == opt) & (same["scaling"] == sc) & (same["statistic"] == st)].sort_values("d_k")
                ax.errorbar(g["d_k"], g["mean"], yerr=2 * g["mcse"], ls=ls, marker="o", ms=2.4, lw=1.0, capsize=1.5,
                            color=OPT_COLORS[opt], label=f"{OPT_LABELS[opt]}, {'divided' if sc == 'sqrt' else 'folded'}")
        for m, ls in ((True, "-"), (False, ":")):
            g = gaps[(gaps["optimizer"] == opt) & (gaps["match_eps"] == m) & (gaps["statistic"] == "fold_relative_query")]
            g = g[g["mean"] > 0].sort_values("d_k")
            if len(g):
                axes[2].plot(g["d_k"], g["mean"], ls, marker="o", ms=2.4, lw=1.0, color=OPT_COLORS[opt],
                             label=f"{OPT_LABELS[opt]}{'' if m else ', same eps'}")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xlabel(r"$d_k$ ($d_{model} = d_k$)")
    axes[0].set_ylabel(f"probe loss after {T5_STEPS} steps")
    axes[1].set_ylabel("steps to 90% accuracy")
    axes[2].set_yscale("log")
    axes[2].set_ylabel(r"max $|\sqrt{d_k}V_Q - W_Q|$ / max $|W_Q|$")
    axes[0].legend(fontsize=5, loc="best")
    axes[2].legend(fontsize=5, loc="best")
    return {"t5_folding": fig}
