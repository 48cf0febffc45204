"""Training in float32 against float64 (:mod:`stats.training.precision`, the ``dtype`` option).

A float32 run draws what the float64 run of its seed draws and rounds it, so the two are one
run at two precisions: these tests train both and compare what the training claims read.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from stats import MUTANTS, REGISTRY, Heads, SCALINGS, Trainer, TrainingSim, evaluate_mutants, plan, precision_gaps, simulate, train_heads

MUTANT = {m.name: m.formulas for m in MUTANTS}["adam-float32-moments-in-half"]


def _rngs(n, seed):
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(n)]


def test_a_float32_run_holds_float32_arrays_from_the_float64_draws_and_checks_its_gradient_in_float64():
    common = dict(d_k=16, d_model=16, scaling="qknorm", optimizer="adam", lr=0.01, steps=3)
    t32, t64 = Trainer(_rngs(3, 1), dtype="float32", **common), Trainer(_rngs(3, 1), **common)
    for name, w in t32.heads.params.items():  # the same draws, rounded once
        assert w.dtype == np.float32 and np.array_equal(w, t64.heads.params[name].astype(np.float32))
    assert t32.heads.WV.dtype == np.float32 and t64.heads.WV.dtype == np.float64
    for t in (1, 2, 3):
        t32.step(t)
    for name, w in t32.heads.params.items():
        assert w.dtype == np.float32, name
        assert all(a.dtype == np.float32 for a in t32.states[name].values() if isinstance(a, np.ndarray)), name
    out = t32.outcomes()
    # The directional check demands agreement to 1e-6, which float32's 6e-8 rounding of a loss
    # difference at h = 1e-6 |W| cannot meet: <= 1 means it ran in float64.
    assert np.all(out["gradient_error"] <= 1)
    assert np.all(out["adam_first_step"] <= 1)  # Adam's first-step identity, to float32's own rounding


def test_the_default_is_float64_with_the_same_bytes_and_streams():
    common = dict(d_k=8, d_model=8, scaling="sqrt", optimizer="adam", lr=0.01, steps=4)
    a, b = train_heads(_rngs(2, 3), **common), train_heads(_rngs(2, 3), dtype="float64", **common)
    assert all(a[k].tobytes() == b[k].tobytes() for k in a)
    sim = TrainingSim(8, "sqrt", "adam", 0.01, 4)
    assert sim.key == TrainingSim(8, "sqrt", "adam", 0.01, 4, dtype="float64").key and "dtype" not in sim.key
    assert TrainingSim(8, "sqrt", "adam", 0.01, 4, dtype="float32").key == sim.key + "/dtype=float32"
    with pytest.raises(ValueError, match="dtype must be one of"):
        train_heads(_rngs(1, 0), dtype="float16", **common)


def test_float32_softmax_stays_max_subtracted_where_exp_would_overflow():
    """Logits of several hundred (an unscaled head with large weights): exp overflows float32 past 88.7."""
    heads = Heads(_rngs(2, 4), d_model=64, d_k=64, scaling=SCALINGS["none"], n_keys=32, dtype="float32")
    heads.params = {k: 4 * w for k, w in heads.params.items()}
    rng = np.random.default_rng(5)
    X = rng.standard_normal((2, 32, 64))
    Xq, perm = X[:, ::-1].copy(), np.tile(np.arange(32)[::-1], (2, 1))
    seen = {}
    loss, right, grads = heads.loss_and_grads(X, Xq, perm, heads.formulas, seen, logits=True)
    assert seen["max_logit"].min() > 200 and seen["A"].dtype == np.float32
    assert np.all(np.isfinite(loss)) and np.allclose(seen["A"].sum(axis=2), 1, atol=1e-5)
    assert all(np.all(np.isfinite(g)) for g in grads.values())


#: Cells at a moderate width: the scaled head under Adam (every run learns) and the unscaled head under SGD
#: over a short budget, where about half the runs learn and rounding makes the runs' paths drift apart.
CELLS = ((64, "sqrt", "adam", 0.01, 40), (64, "none", "sgd", 0.3, 60))
RUNS = 32
#: The shares' difference is the mean of paired differences d_i in {-1, 0, 1}, whose variance is at most the
#: discordant share q; at the claim's bound q = 0.05 the tolerance 3.29 sqrt(q / n) is the normal test's
#: two-sided false-fail rate 0.001 (less where q is smaller: the cells here measure q <= 1/16).
SHARE_TOLERANCE = 3.29 * math.sqrt(0.05 / RUNS)


@pytest.mark.parametrize("cell", CELLS, ids=lambda c: f"{c[1]}-{c[2]}")
def test_float32_and_float64_runs_of_one_seed_agree(cell):
    d, scaling, optimizer, lr, steps = cell
    out = precision_gaps(_rngs(RUNS, 11), _rngs(RUNS, 11), d_k=d, d_model=d, scaling=scaling, optimizer=optimizer, lr=lr,
                         steps=steps)
    # Run by run, away from the margin of the accuracy target: the same verdict, and no divergence of one alone.
    assert out["learned_differs_clear"].sum() == 0, out["marginal"]
    assert out["diverged_differs"].sum() == 0
    assert abs(out["learned_32"].mean() - out["learned_64"].mean()) <= SHARE_TOLERANCE


def test_the_float32_mutant_changes_float32_runs_only_and_the_float32_claim_catches_it():
    common = dict(d_k=16, d_model=16, scaling="sqrt", optimizer="adam", lr=0.01, steps=20)
    a, b = train_heads(_rngs(2, 6), **common), train_heads(_rngs(2, 6), formulas=MUTANT, **common)
    assert all(np.array_equal(a[k], b[k], equal_nan=True) for k in a)  # float64 runs untouched
    assert train_heads(_rngs(2, 6), formulas=MUTANT, dtype="float32", **common)["diverged"].all()
    the_plan = plan(REGISTRY, select="fast-path-float32-training", seed=5, n_factor=0.25, workers=1)
    results = simulate(the_plan, seed=5, workers=1)
    table = evaluate_mutants(the_plan, results, [m for m in MUTANTS if m.name == "adam-float32-moments-in-half"],
                             seed=5, workers=1)
    assert len(table) == 1 and table["caught"].all(), table.to_string()


@pytest.mark.slow
@pytest.mark.parametrize("cell", (("none", "adam", 3e-3), ("none", "sgd", 0.3), ("sqrt", "adam", 1e-2)),
                         ids=lambda c: f"{c[0]}-{c[1]}")
def test_float32_at_d_k_512_neither_overflows_nor_moves_the_share_that_learns(cell):
    """At d_k = d_model = 512 the unscaled head's logits reach several hundred in training (about
    sqrt(512) |q||k|; exp overflows float32 past 88.7): float32 must not overflow, nor diverge where
    float64 does not, and the share that learns must agree.  Run by run the unscaled head does not:
    its training is chaotic enough that rounding flips a run's outcome now and then even away from
    the margin (1 run in 8 on this seed, under Adam and under SGD), so for it the test is of the share:
    the paired differences' mean within 3.29 of its MCSE (two-sided false-fail 0.001 under the
    normal approximation).  The scaled head agrees run by run away from the margin."""
    scaling, optimizer, lr = cell
    out = precision_gaps(_rngs(8, 12), _rngs(8, 12), d_k=512, d_model=512, scaling=scaling, optimizer=optimizer, lr=lr,
                         steps=150)
    assert out["diverged_differs"].sum() == 0
    assert np.all(np.isfinite(out["loss_gap"])) and np.all(np.isfinite(out["max_logit_gap"]))
    paired = out["learned_32"] - out["learned_64"]
    assert abs(paired.mean()) <= 3.29 * paired.std(ddof=1) / math.sqrt(len(paired))
    if scaling == "sqrt":
        assert out["learned_differs_clear"].sum() == 0
