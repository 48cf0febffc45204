"""The synthetic task (:mod:`stats.training.recall`, Zoology's MQAR), the masked cross-entropy it
trains with, muP's per-group rules (:mod:`stats.training.mup_rules`) and the coordinate check."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from stats.exact.gradcheck import numerical_gradient
from stats.formulas import FORMULAS
from stats.training.mup_rules import MUP_RULES, coordinate_check, mup_lr_multipliers
from stats.training.recall import SOLVED_ACCURACY, recall_batch, train_recall_model
from stats.training.transformer import Transformer, TransformerConfig, cross_entropy
from stats.training.transformer_simulations import CoordinateCheckSim
from stats.engine.streams import simulation_seed

TASK = dict(vocab=16, length=24, pairs=3)


def test_a_recall_sequence_is_pairs_then_each_key_asked_once():
    tokens, scored = recall_batch(np.random.default_rng(0), batch=200, **TASK)
    assert tokens.shape == (200, 25) and scored.shape == (200, 24) and scored.dtype == bool
    assert (scored.sum(axis=1) == 3).all() and not scored[:, :6].any()
    half = TASK["vocab"] // 2
    for row, mask in zip(tokens, scored):
        keys, values = row[0:6:2], row[1:6:2]
        assert len(set(keys)) == 3 and len(set(values)) == 3
        assert ((1 <= keys) & (keys < half)).all() and (values >= half).all()
        where = np.flatnonzero(mask)
        assert (where % 2 == 0).all()  # even offsets after the pairs
        pairs = dict(zip(keys, values))
        assert sorted(row[where]) == sorted(keys)  # each key asked once
        assert all(row[p + 1] == pairs[row[p]] for p in where)  # the target is its value


def test_recall_gaps_are_drawn_as_numpy_draws_without_replacement():
    """The Gumbel top-k draw of the gaps has the law of sequential weighted sampling without
    replacement (numpy's ``choice(replace=False, p=...)``, what Zoology calls): the two samples'
    gap histograms (4000 sequences of 4 gaps each) agree by a chi-square test of homogeneity at
    a false-fail rate of 1e-3; a uniform draw, the mistake it guards against, is rejected."""
    from scipy.stats import chi2_contingency

    length, pairs = 64, 4
    space = (length - 2 * pairs) // 2
    _, scored = recall_batch(np.random.default_rng(1), batch=4000, vocab=64, length=length, pairs=pairs)
    ours = (np.nonzero(scored)[1] - 2 * pairs) // 2
    p = np.arange(1, space + 1) ** (0.01 - 1.0)
    ref_rng = np.random.default_rng(2)
    ref = np.concatenate([ref_rng.choice(space, size=pairs, replace=False, p=p / p.sum()) for _ in range(4000)])
    uniform = np.concatenate([ref_rng.choice(space, size=pairs, replace=False) for _ in range(4000)])
    counts = lambda g: np.bincount(g, minlength=space)  # noqa: E731
    assert ours.min() >= 0 and ours.max() < space
    assert chi2_contingency(np.stack([counts(ours), counts(ref)]))[1] > 1e-3
    assert chi2_contingency(np.stack([counts(uniform), counts(ref)]))[1] < 1e-3


def test_masked_cross_entropy_counts_only_the_scored_positions():
    rng = np.random.default_rng(4)
    z, y = rng.standard_normal((2, 3, 5)), rng.integers(0, 5, (2, 3))
    mask = np.array([[True, False, True], [False, False, True]])
    loss, dz = cross_entropy(z, y, scored=mask)
    full = -np.log(np.exp(z) / np.exp(z).sum(-1, keepdims=True))
    assert loss == pytest.approx(np.take_along_axis(full, y[..., None], -1)[..., 0][mask].mean(), rel=1e-12)
    assert not dz[~mask].any()
    np.testing.assert_allclose(dz, numerical_gradient(lambda v: cross_entropy(v, y, scored=mask)[0], z), rtol=1e-7, atol=1e-10)
    with pytest.raises(ValueError, match="scored"):
        cross_entropy(z, y, scored=np.zeros((2, 3), dtype=bool))
    with pytest.raises(TypeError, match="scored"):
        cross_entropy(z, y, scored=np.ones((2, 3)))


def test_recall_runs_are_seeded_checked_and_score_accuracy():
    config = TransformerConfig(vocab=16, n_ctx=24, d_model=16, n_heads=2, mlp=False)
    a = train_recall_model(config, pairs=3, steps=16, lr=1e-2, seed=3, batch=8, test_sequences=32)
    b = train_recall_model(config, pairs=3, steps=16, lr=1e-2, seed=3, batch=8, test_sequences=32)
    assert a == b and a.gradient_check <= 1 and a.diverged_at is None
    assert len(a.accuracy) == 9 and all(0 <= x <= 1 for x in a.accuracy)
    assert a.solved == (a.accuracy[-1] >= SOLVED_ACCURACY)
    with pytest.raises(ValueError, match="pairs"):
        train_recall_model(config, pairs=7, steps=4, lr=1e-2, seed=0)


@pytest.mark.parametrize("kw, name", [(dict(vocab=15), "vocab"), (dict(pairs=0), "pairs"), (dict(pairs=7), "pairs"),
                                      (dict(length=3), "length"), (dict(vocab=8, pairs=4), "pairs")])
def test_a_task_the_generator_cannot_draw_is_refused_by_name(kw, name):
    with pytest.raises((ValueError, TypeError), match=name):
        recall_batch(np.random.default_rng(0), batch=2, **{**TASK, **kw})


def test_mup_rules_scale_the_hidden_and_output_rates_only():
    config = TransformerConfig(vocab=16, n_ctx=8, d_model=64, n_heads=2, scaling="mup", mup_base=16)
    model = Transformer(config, np.random.default_rng(0))
    rates = mup_lr_multipliers(model)
    assert set(rates) == set(model.params)
    for name, r in rates.items():
        hidden = name == "unembed" or name.split(".")[-1] in ("wq", "wk", "wv", "wo", "w1", "w2")
        assert r == (0.25 if hidden else 1.0), name
    assert [row[0] for row in MUP_RULES] == ["input weights", "biases and gains", "hidden weights", "output weights"]
    with pytest.raises(ValueError, match="mup_base"):
        mup_lr_multipliers(Transformer(TransformerConfig(vocab=16, n_ctx=8, d_model=64, n_heads=2, scaling="mup"),
                                       np.random.default_rng(0)))
    with pytest.raises(ValueError, match="mup_base"):
        TransformerConfig(vocab=16, n_ctx=8, d_model=64, n_heads=2, scaling="sqrt", mup_base=16)


def test_mup_readout_variance_is_d0_over_d_squared():
    for d, base in ((64, 64), (256, 32)):
        config = TransformerConfig(vocab=64, n_ctx=8, d_model=d, n_heads=2, scaling="mup", mup_base=base)
        w = Transformer(config, np.random.default_rng(5)).params["unembed"].astype(np.float64)
        # The sample variance of d x 64 normal entries: relative sd sqrt(2/(64 d)) <= 2.2%; 5 sd.
        assert w.var() == pytest.approx(base / d**2, rel=5 * math.sqrt(2 / (64 * d)))


def test_coordinate_check_separates_the_parameterisations():
    """The check's direction on one seed: the standard model's residual move grows from width 32
    to 256 (about 14 times), muP's stays within a factor 2 (docs/results.md has the study)."""
    moves = {}
    for scaling, base in (("sqrt", None), ("mup", 32)):
        for d in (32, 256):
            config = TransformerConfig(vocab=64, n_ctx=32, d_model=d, n_heads=d // 32, scaling=scaling, mup_base=base)
            moves[scaling, d] = coordinate_check(config, lr=1e-2, steps=4, seed=1)["residual"]
            assert moves[scaling, d][0] == 0 and (moves[scaling, d][1:] > 0).all()
    assert moves["sqrt", 256][-1] / moves["sqrt", 32][-1] > 4
    assert 0.5 < moves["mup", 256][-1] / moves["mup", 32][-1] < 2


def test_coordinate_check_sim_rows_hold_the_gradient_check_and_the_moves():
    sim = CoordinateCheckSim(64, "mup", 32, steps=2, check_gradient=True)
    out = sim.run_block(simulation_seed(7, sim.key), 0, 2, FORMULAS, None)
    assert set(out) == set(sim.statistics) and all(len(v) == 2 for v in out.values())
    assert (out["gradient_error"] <= 1).all() and (out["residual_2"] > out["residual_1"]).all()
    with pytest.raises(ValueError, match="d_model"):
        CoordinateCheckSim(48)
    with pytest.raises(ValueError, match="narrow"):
        CoordinateCheckSim(64, narrow=64)


def test_a_seeds_move_at_two_widths_is_compared_in_its_row():
    """With ``narrow`` each row trains the same seed at both widths: its ratio is the wide move over
    the narrow one, and the flat and grows indicators read it."""
    sim = CoordinateCheckSim(64, "sqrt", narrow=32, steps=2)
    wide = CoordinateCheckSim(64, "sqrt", steps=2)
    seed = simulation_seed(7, sim.key)
    out, alone = sim.run_block(seed, 0, 2, FORMULAS, None), wide.run_block(seed, 0, 2, FORMULAS, None)
    np.testing.assert_array_equal(out["residual_2"], alone["residual_2"])  # the wide model is the same run
    narrow = CoordinateCheckSim(32, "sqrt", steps=2).run_block(seed, 0, 2, FORMULAS, None)
    # ... and the narrow one is what the same seed gives at the narrow width (the same probe and batches).
    np.testing.assert_allclose(out["residual_ratio"], alone["residual_2"] / narrow["residual_2"], rtol=1e-12)
    for what in ("residual", "logits"):
        r = out[f"{what}_ratio"]
        assert (r > 0).all()
        np.testing.assert_array_equal(out[f"{what}_flat"], ((r >= 0.5) & (r <= 2)).astype(float))
        np.testing.assert_array_equal(out[f"{what}_grows"], (r > 2).astype(float))
    with pytest.raises(ValueError, match="mup_base"):
        CoordinateCheckSim(64, "sqrt", 32)


def test_a_recall_run_stops_once_solved_and_keeps_its_numbers():
    """With stop_when_solved a run ends at the first checkpoint at 0.99 held-out accuracy and
    repeats it at the later ones; without it, the same seed trains on and its record up to that
    checkpoint is the same (the stop changes nothing before it)."""
    config = TransformerConfig(vocab=16, n_ctx=16, d_model=16, n_heads=1, mlp=False)
    kw = dict(pairs=1, steps=80, lr=3e-2, seed=0, batch=16, test_sequences=32, warmup=5)
    full = train_recall_model(config, **kw)
    stopped = train_recall_model(config, **kw, stop_when_solved=True)
    assert full.solved, full.accuracy  # one pair of 7 keys: solved within 80 steps on this seed
    first = next(i for i, a in enumerate(full.accuracy) if a >= SOLVED_ACCURACY)
    assert stopped.accuracy[:first + 1] == full.accuracy[:first + 1]
    assert stopped.accuracy[first:] == (full.accuracy[first],) * (len(full.accuracy) - first)
    assert stopped.steps == full.steps and stopped.solved


def test_a_recall_run_given_up_on_stops_at_the_first_checkpoint_past_the_step_and_keeps_its_numbers():
    """``give_up_after``: a run not solved by the first checkpoint at or after it (and before the
    budget) stops there, unsolved, and repeats that checkpoint; up to it the record is the run's
    own.  A solved run is not given up on, nor one whose first such checkpoint is the budget."""
    config = TransformerConfig(vocab=16, n_ctx=16, d_model=16, n_heads=1, mlp=False)
    kw = dict(pairs=1, steps=80, seed=0, batch=16, test_sequences=32, warmup=5, stop_when_solved=True)
    slow = dict(kw, lr=1e-4)  # learns nothing in 80 steps
    full = train_recall_model(config, **slow)
    assert not full.solved and full.abandoned_at is None
    cut = train_recall_model(config, **slow, give_up_after=25)
    at = full.steps.index(min(t for t in full.steps if t >= 25))
    assert cut.abandoned_at == full.steps[at] < 80 and not cut.solved
    assert cut.accuracy[:at + 1] == full.accuracy[:at + 1] and cut.steps == full.steps
    assert cut.accuracy[at:] == (full.accuracy[at],) * (len(full.steps) - at)
    assert train_recall_model(config, **slow, give_up_after=80).abandoned_at is None  # the budget ends it anyway
    fast = train_recall_model(config, **dict(kw, lr=3e-2))  # solved on this seed (the test above)
    solved_at = next(t for t, a in zip(fast.steps, fast.accuracy) if a >= SOLVED_ACCURACY)
    assert train_recall_model(config, **dict(kw, lr=3e-2), give_up_after=solved_at) == fast  # solved there: kept
    with pytest.raises(ValueError, match="stop_when_solved"):
        train_recall_model(config, **dict(slow, stop_when_solved=False), give_up_after=25)
    with pytest.raises(ValueError, match="give_up_after"):
        train_recall_model(config, **slow, give_up_after=81)


def test_recall_sim_rows_are_runs_and_bad_fields_are_refused():
    from stats.training.transformer_simulations import RecallSim

    sim = RecallSim(16, "sqrt", 3e-2, 40, warmup=5, vocab=16, length=16, pairs=1, batch=16)
    out = sim.run_block(simulation_seed(3, sim.key), 0, 1, FORMULAS, None)
    assert set(out) == set(sim.statistics) and out["gradient_error"][0] <= 1
    assert out["solved"][0] in (0.0, 1.0) and 0 < out["steps_to_solve"][0] <= 40
    assert out["abandoned"][0] == 0 and 0 < out["loss_end"][0] < out["loss_0"][0]
    # unsolved: censored one past the budget, as the single head's steps to accuracy; given up on, it says so
    slow = RecallSim(16, "sqrt", 1e-4, 40, warmup=5, vocab=16, length=16, pairs=1, batch=16, give_up_after=10)
    out = slow.run_block(simulation_seed(3, slow.key), 0, 1, FORMULAS, None)
    assert (out["solved"][0], out["steps_to_solve"][0], out["abandoned"][0]) == (0.0, 41.0, 1.0)
    assert slow.key != dataclasses.replace(slow, give_up_after=None).key
    for kw, name in ((dict(pairs=9), "pairs"), (dict(warmup=40), "warmup"), (dict(lr=2.0), "lr"), (dict(scaling="bilinear"), "scaling"),
                     (dict(give_up_after=41), "give_up_after"), (dict(give_up_after=0), "give_up_after")):
        with pytest.raises((ValueError, TypeError), match=name):
            RecallSim(16, **{**dict(vocab=16, length=16, pairs=1, steps=40), **kw})


def test_the_recall_claim_grades_both_protocols_at_the_searched_rates(stand_in_search):
    """EVIDENCE=full's recall claim, at each of its widths: each model at the rate its own search chose at
    that width, task and budget (own best rate), and the unscaled model at the scaled model's (shared
    rate); a bound is named as one."""
    from stats.claims.statements import model
    from stats.settings.model import RECALL_OWN_BEST, RECALL_STEPS, RECALL_WIDTHS

    claim = next(c for c in model.claims("full") if c.id == "model-recall-unscaled")
    recall = [kw for kw in stand_in_search if kw.get("task") == "recall"]
    assert [(kw["d_k"], kw["scaling"]) for kw in recall] == [(w, s) for w in RECALL_WIDTHS for s in RECALL_OWN_BEST]
    assert all(kw == model.recall_search_arguments(kw["scaling"], width=kw["d_k"]) for kw in recall)
    sims = [check.measures[0].sim for check in claim.checks]
    # the stand-in's rates: sqrt 0.01, none 0.001, t5 0.00316, at every width
    assert [(s.d_model, s.scaling, s.lr) for s in sims] == [
        (w, scaling, lr) for w in RECALL_WIDTHS
        for scaling, lr in (("sqrt", 0.01), ("none", 0.01), ("none", 0.001), ("t5", 0.00316))]
    assert [c.protocol for c in claim.checks] == ["", "shared rate", "own best rate", "own best rate"] * len(RECALL_WIDTHS)
    assert all(s.steps == RECALL_STEPS for s in sims)
    assert all(f"d_k={s.d_model}," in c.label for s, c in zip(sims, claim.checks))
    assert all("interior" in claim.checks[i].label for i in (0, 2, 3))
    assert "the scaled model's best lr=0.01 (the shared rate)" in claim.checks[1].label
    assert len({c.macro for c in claim.checks}) == len(claim.checks)

    # each width's checks follow that width's searches, not another's
    searches = model.recall_searches(widths=(64, 128))
    searches[128] = {s: dataclasses.replace(r, rate=r.rate / 10) for s, r in searches[128].items()}
    searches[128]["none"] = dataclasses.replace(searches[128]["none"], interior=False, bound=-1)
    searches[64]["sqrt"] = dataclasses.replace(searches[64]["sqrt"], rate=0.00562)
    checks = model.recall_claim(searches).checks
    assert [c.measures[0].sim.lr for c in checks] == pytest.approx([0.00562, 0.00562, 0.001, 0.00316, 0.001, 0.001, 0.0001, 0.000316])
    assert [c.measures[0].sim.d_model for c in checks] == [64] * 4 + [128] * 4
    assert "a bound: the best rate is at most this" in checks[6].label
    assert "interior" in checks[2].label
    assert [c.macro for c in checks[:2]] == ["recallScaledShareSixtyFour", "recallUnscaledShareSixtyFour"]
    assert checks[4].macro == "recallScaledShareOneTwentyEight"
    with pytest.raises(ValueError, match="searches"):
        model.recall_claim({64: {"none": searches[64]["none"]}})
    for width in (0, 10000):
        with pytest.raises(ValueError, match="widths"):
            model.recall_claim({width: searches[64]})
    with pytest.raises(TypeError, match="widths must be integers"):
        model.recall_claim({64.0: searches[64]})
    with pytest.raises(TypeError, match=r"searches\[64\]\['t5'\] must be a RateSearch"):
        model.recall_claim({64: {**searches[64], "t5": 0.001}})
    # a search filed under another width, or another model's, would grade at that one's rate
    with pytest.raises(ValueError, match=r"searches\[128\]\['sqrt'\] must be the recall search of .* \(128, 128, 'sqrt'\)"):
        model.recall_claim({128: searches[64]})
    with pytest.raises(ValueError, match=r"searches\[64\]\['none'\]"):
        model.recall_claim({64: {**searches[64], "none": searches[64]["t5"]}})
    with pytest.raises(ValueError, match="task 'head'"):
        model.recall_claim({64: {**searches[64], "sqrt": dataclasses.replace(searches[64]["sqrt"], task="head")}})
    with pytest.raises(TypeError, match="searches"):
        model.recall_claim(searches[64])
