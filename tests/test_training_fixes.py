"""The fixes in training: T5's folding as a reparameterisation, QK-norm's logit bound, muP's rates, the paired sweep."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from stats import FORMULAS, FoldingSim, LRSweepSim, TrainingSim, fold_gaps, train_heads
from stats.claims.mutants import MUTANTS

MUTANT = {m.name: m.formulas for m in MUTANTS}


def rngs(n, seed=11):
    return [np.random.default_rng([seed, i]) for i in range(n)]


@pytest.mark.parametrize("optimizer, lr", [("sgd", 0.3), ("adam", 1e-2), ("adafactor", 1e-1)])
def test_folded_run_is_the_divided_run_with_another_query_rate(optimizer, lr):
    # sqrt(16) = 4: every difference between the two runs is a power of two, so they agree bit for bit.
    r = fold_gaps(rngs(3), rngs(3), d_k=16, d_model=16, optimizer=optimizer, lr=lr, steps=12, n_keys=8)
    assert np.all(r["fold_gap_query"] == 0) and np.all(r["fold_gap_key"] == 0)
    np.testing.assert_array_equal(r["loss_folded"], r["loss_divided"])


def test_folding_identity_can_fail():
    # Adam with the same eps on both runs is not the identity: the gap is eps's, far above rounding.
    r = fold_gaps(rngs(3), rngs(3), d_k=16, d_model=16, optimizer="adam", lr=1e-2, steps=12, n_keys=8, match_eps=False)
    assert np.all(r["fold_gap_query"] > 1)
    # T5's folding without its sqrt(d_k) is an unscaled head: the identity fails at once.
    m = fold_gaps(rngs(3), rngs(3), d_k=16, d_model=16, optimizer="sgd", lr=0.3, steps=3, n_keys=8,
                  formulas=MUTANT["t5-fold-without-sqrt"])
    assert np.all(m["fold_gap_query"] > 1e6)


def test_qknorm_logits_never_exceed_the_gain_and_the_mutant_does():
    kw = dict(d_k=16, d_model=16, scaling="qknorm", optimizer="adam", lr=1.0, steps=10, n_keys=8, track_logits=True)
    r = train_heads(rngs(4), **kw)
    assert np.all(r["logit_over_gain"] <= 1) and np.all(r["logit_over_gain"] > 0.3)
    bad = train_heads(rngs(4), **kw, formulas=MUTANT["qknorm-only-q"])
    assert np.all(bad["logit_over_gain"] > 1)


def test_mup_learning_rate_factor_and_its_mutant():
    sim = TrainingSim(64, "mup", "adam", 1e-2, 5, mup_base=16)
    assert sim.lr_factors(FORMULAS) == {"WQ": 0.25, "WK": 0.25}
    assert sim.lr_factors(MUTANT["mup-lr-unscaled"]) == {"WQ": 1.0, "WK": 1.0}
    assert "mup_lr_multiplier" in sim.uses and "mup_lr_multiplier" not in TrainingSim(64, "mup").uses
    # The factor reaches Adam's step: the first step of W_Q is lr * factor * g / (|g| + eps).
    a = train_heads(rngs(2), d_k=8, d_model=8, lr=1e-2, steps=1, lr_factors={"WQ": 0.25, "WK": 0.25})
    b = train_heads(rngs(2), d_k=8, d_model=8, lr=2.5e-3, steps=1)
    np.testing.assert_allclose(a["first_step_logit_change"], b["first_step_logit_change"], rtol=1e-12)


def test_factor_one_and_default_eps_leave_every_bit():
    base = train_heads(rngs(3), d_k=8, d_model=8, scaling="sqrt", optimizer="adam", lr=3e-2, steps=6)
    same = train_heads(rngs(3), d_k=8, d_model=8, scaling="sqrt", optimizer="adam", lr=3e-2, steps=6,
                       lr_factors={"WQ": 1.0}, adam_eps=1e-8)
    for k in base:
        np.testing.assert_array_equal(base[k], same[k], err_msg=k)


def test_unstable_runs_are_counted_with_their_step_never_nan():
    r = train_heads(rngs(4), d_k=16, d_model=16, scaling="sqrt", optimizer="adam", lr=3.0, steps=12, track_logits=True)
    assert np.all(r["unstable"] == 1) and np.all(r["unstable_step"] <= 12)
    assert np.all(r["max_logit_train"] > 100) and np.all(r["large_logit"] == 1)
    for k, v in r.items():
        assert np.all(np.isfinite(v)), k
    calm = train_heads(rngs(4), d_k=16, d_model=16, scaling="sqrt", optimizer="adam", lr=1e-2, steps=12)
    assert np.all(calm["unstable"] == 0) and np.all(calm["unstable_step"] == 13)


def test_lr_sweep_rows_train_every_rate_on_the_same_draws():
    sweep = LRSweepSim(8, (1e-2, 1e-1), "sqrt", "adam", 6, n_keys=8)
    seed = np.random.SeedSequence(5)
    r = sweep.run_block(seed, 0, 3, FORMULAS, 0)
    one = TrainingSim(8, "sqrt", "adam", 1e-1, 6, n_keys=8).run_block(seed, 0, 3, FORMULAS, 0)
    np.testing.assert_array_equal(r["loss_at_1"], one["loss_8"])
    np.testing.assert_array_equal(r["best_is_0"] + r["best_is_1"], np.ones(3))
    assert set(np.round(r["best_log_lr"], 12)) <= {-2.0, -1.0}


@pytest.mark.parametrize("lrs, match", [((), "non-empty"), ((0.1, 0.01), "increasing"), ((0.01, 0.01), "increasing"),
                                        ((0.0, 0.1), "positive"), ((-1.0,), "positive"), ((np.inf,), "positive"),
                                        ((np.nan,), "positive"), ("0.1", "tuple")])
def test_lr_grid_refusals_name_lrs(lrs, match):
    with pytest.raises(ValueError, match=f"lrs.*{match}|{match}.*lrs|lrs must"):
        LRSweepSim(8, lrs)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(gain_lr=0.0, scaling="qknorm"), ValueError, "gain_lr"),
    (dict(gain_lr=-1.0, scaling="qknorm"), ValueError, "gain_lr"),
    (dict(gain_lr=0.1, scaling="sqrt"), ValueError, "gain_lr"),
    (dict(optimizer="rmsprop"), ValueError, "optimizer"),
    (dict(scaling="cosine"), ValueError, "scaling"),
    (dict(mup_base=0), ValueError, "mup_base"),
    (dict(track_logits=1), TypeError, "track_logits"),
])
def test_training_sim_refusals(kwargs, error, match):
    with pytest.raises(error, match=match):
        TrainingSim(**(dict(d_k=8) | kwargs))


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(adam_eps=-1e-8), ValueError, "adam_eps"),
    (dict(adam_eps={"WQ": float("nan")}), ValueError, "adam_eps"),
    (dict(lr_factors={"WV": 2.0}), ValueError, "lr_factors"),
    (dict(lr_factors=0.0), ValueError, "lr_factors"),
    (dict(lr_factors="x"), TypeError, "lr_factors"),
    (dict(optimizer="lion"), ValueError, "optimizer"),
])
def test_train_heads_refusals(kwargs, error, match):
    with pytest.raises(error, match=match):
        train_heads(rngs(2), **(dict(d_k=8, d_model=8, lr=0.01, steps=2) | kwargs))


def test_folding_sim_refusals():
    with pytest.raises(ValueError, match="optimizer"):
        FoldingSim(8, "rmsprop")
    with pytest.raises(TypeError, match="match_eps"):
        FoldingSim(8, match_eps="yes")
    with pytest.raises(ValueError, match="same length"):
        fold_gaps(rngs(2), rngs(3), d_k=8, d_model=8, optimizer="sgd", lr=0.1, steps=2)
    assert dataclasses.replace(FoldingSim(8), match_eps=False).key != FoldingSim(8).key
