"""``python -m benchmarks.early_stopping PART``: the measurements behind early stopping and warm-up.

Seeded (``numpy.random.SeedSequence([SEED, tag]).spawn(n)``, one stream a run); every share and
mean is printed with its MCSE.  PART is one of

* ``agree``: the stop rule against the budget-relative rule on the same seeds, at the claims'
  budgets (600 steps at d = 16, 150 at d = 64), for hold windows of 15 to 150 steps;
* ``save``: steps run over a 600-step budget at d = 64 and 256 (scaled head, Adam at its best
  rate from the pilots: 0.03 at d = 64, the T5 pilot's divided head; 0.01 at d = 256, the
  claims' pilot), with the Kaplan--Meier summary of steps to accuracy;
* ``wall``: the d = 256 runs of ``save`` timed with and without stopping, and the budget rule's verdict;
* ``warm``: the unscaled head at d = 64 under Adam at the scaled head's best rate (0.03),
  150 steps, with warm-ups of 0, 10 and 30 steps.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import stats.training.trainer as trainer_module
from stats.inference import mean_estimate, proportion_estimate, survival_to_accuracy
from stats.training import HOLD_STEPS, Trainer, train_heads

SEED = 20261205
N_RUNS = 48


def gens(n, *tag):
    return [np.random.default_rng(s) for s in np.random.SeedSequence([SEED, *tag]).spawn(n)]


def est(x):
    e = mean_estimate(np.asarray(x, dtype=float))
    return f"{e.value:.4f} +- {e.mcse:.4f}"


def agree():
    cells = [(16, "sqrt", "adam", 0.03, 600, (15, 30, 45, 60, 90, 150)), (16, "sqrt", "adam", 0.01, 600, (30, 60, 150)),
             (16, "sqrt", "sgd", 1.0, 600, (15, 30, 45, 60)), (64, "sqrt", "adam", 0.03, 150, (15, 30, 45, 60)),
             (64, "none", "adam", 0.01, 150, (15, 30, 45, 60)), (64, "sqrt", "sgd", 3.0, 150, (15, 30, 45, 60)),
             (64, "none", "sgd", 0.3, 150, (15, 30, 45, 60))]
    n = N_RUNS
    for i, (d, sc, opt, lr, steps, holds) in enumerate(cells):
        kw = dict(d_k=d, d_model=d, scaling=sc, optimizer=opt, lr=lr, steps=steps)
        budget = train_heads(gens(n, 300 + i), **kw)
        for hold in holds:
            # A measurement of other windows: the trainer reads HOLD_STEPS from its module.
            trainer_module.HOLD_STEPS = hold
            stop = train_heads(gens(n, 300 + i), **kw, stop_when_learned=True)
            a = int(((stop["learned"] == 1) & (budget["learned"] == 0)).sum())
            b = int(((stop["learned"] == 0) & (budget["learned"] == 1)).sum())
            c = int(((stop["learned"] == 1) & (budget["learned"] == 1)
                     & (stop["steps_to_accuracy"] != budget["steps_to_accuracy"])).sum())
            print(f"d={d} {sc} {opt} lr={lr} steps={steps} hold={hold}: learned budget {int(budget['learned'].sum())}/{n}, "
                  f"stop {int(stop['learned'].sum())}/{n}; disagree: stop only {a}, budget only {b}, other step {c}; "
                  f"any {a + b + c}/{n}; final probe {est(budget['probe_accuracy_final'])}", flush=True)
        trainer_module.HOLD_STEPS = HOLD_STEPS


def save():
    for i, (d, lr, n) in enumerate(((64, 0.03, 32), (256, 0.01, 16))):
        tr = Trainer(gens(n, 100 + i), d_k=d, d_model=d, scaling="sqrt", optimizer="adam", lr=lr, steps=600,
                     stop_when_learned=True)
        for t in range(1, 601):
            if not tr.running:
                break
            tr.step(t)
        out = tr.outcomes()
        sv = survival_to_accuracy(out["steps_to_accuracy"], steps=600)
        print(f"d={d} sqrt adam lr={lr} 600 steps, {n} runs: learned {int(out['learned'].sum())}/{n}; steps run / budget "
              f"{est(tr.steps_run / 600)} ({tr.steps_run.sum()} of {600 * n}); KM share by 600 {sv.share_learned.value:.3f} +- "
              f"{sv.share_learned.mcse:.3f}, restricted mean {sv.restricted_mean.value:.1f} +- {sv.restricted_mean.mcse:.1f}",
              flush=True)


def wall():
    n = 16
    for stop in (True, False):
        t0 = time.perf_counter()
        out = train_heads(gens(n, 101), d_k=256, d_model=256, scaling="sqrt", optimizer="adam", lr=0.01, steps=600,
                          stop_when_learned=stop)
        print(f"d=256 stop_when_learned={stop}: wall {time.perf_counter() - t0:.1f}s, learned {int(out['learned'].sum())}/{n}, "
              f"steps_to_accuracy {est(out['steps_to_accuracy'])}", flush=True)


def warm():
    n = N_RUNS
    for w in (0, 10, 30):
        out = train_heads(gens(n, 200), d_k=64, d_model=64, scaling="none", optimizer="adam", lr=0.03, steps=150, warmup=w)
        p = proportion_estimate(int(out["learned"].sum()), n)
        sv = survival_to_accuracy(out["steps_to_accuracy"], steps=150)
        print(f"d=64 none adam lr=0.03, 150 steps, warmup={w}: learned {p.value:.3f} +- {p.mcse:.3f} "
              f"({int(out['learned'].sum())}/{n}); unstable {int(out['unstable'].sum())}; restricted mean "
              f"{sv.restricted_mean.value:.1f} +- {sv.restricted_mean.mcse:.1f}", flush=True)


PARTS = {"agree": agree, "save": save, "wall": wall, "warm": warm}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in PARTS:
        raise SystemExit(f"usage: python -m benchmarks.early_stopping {{{','.join(PARTS)}}}")
    PARTS[sys.argv[1]]()
