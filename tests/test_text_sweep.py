"""The text runs as the claims and the study use them: the bigram floor
(:func:`stats.bigram_loss`), the encoded plays (:func:`stats.shakespeare_ids`), and a row of
:class:`stats.TextSweepSim` -- one seed at every rate of its grid, scored against that floor."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

import stats
from stats.engine.streams import block_seed_sequence
from stats.training.corpus import bigram_loss, shakespeare_ids, split_plays, shakespeare_plays
from stats.training.language_model import LM_OPTIMIZERS, train_language_model, train_transformer, validation_windows
from stats.training.mup_rules import mup_lr_multipliers
from stats.training.optimizers import adam_update
from stats.training.schedule import warmed_lr
from stats.training.transformer import Transformer, TransformerConfig
from stats.training.transformer_simulations import TEXT_VALIDATION_WINDOWS, TextSweepSim


def test_bigram_loss_is_the_counted_conditional_probability():
    """Against a count by hand: p(b | a) = (n_ab + alpha) / (n_a + V alpha) on the training pairs,
    averaged over every (t, t+1) of every window."""
    train = np.array([0, 1, 0, 1, 1, 2, 0, 2, 2, 1])
    windows = np.array([[0, 1, 2], [2, 2, 0]])
    pairs, firsts = Counter(zip(train[:-1], train[1:])), Counter(train[:-1])
    for alpha in (0.5, 1.0):
        want = -np.mean([math.log((pairs[(a, b)] + alpha) / (firsts[a] + 3 * alpha))
                         for w in windows for a, b in zip(w[:-1], w[1:])])
        assert bigram_loss(train, windows, vocab=3, alpha=alpha) == pytest.approx(want, rel=1e-12)


def test_bigram_loss_refuses_what_it_cannot_score():
    with pytest.raises(ValueError, match="windows"):
        bigram_loss(np.arange(5), np.array([[0, 9]]), vocab=5)
    with pytest.raises(ValueError, match="train_ids"):
        bigram_loss(np.array([1]), np.array([[0, 1]]), vocab=5)
    with pytest.raises(ValueError, match="alpha"):
        bigram_loss(np.arange(5), np.array([[0, 1]]), vocab=5, alpha=0.0)


def test_the_plays_encode_once_and_the_current_character_predicts_the_next():
    """The ids are the split plays over one vocabulary, read-only; and the bigram floor is below
    the unigram model's on the held-out windows (the floor the claims use carries information)."""
    train_ids, val_ids, vocabulary = shakespeare_ids()
    train, val = split_plays(shakespeare_plays())
    assert train_ids.size < sum(map(len, train.values())) and val_ids.size < sum(map(len, val.values()))  # Markdown stripped
    assert not train_ids.flags.writeable and shakespeare_ids()[0] is train_ids
    assert max(train_ids.max(), val_ids.max()) == len(vocabulary) - 1
    windows = validation_windows(val_ids, n_ctx=32, count=TEXT_VALIDATION_WINDOWS)
    counts = np.bincount(train_ids, minlength=len(vocabulary)) + 1.0
    unigram = float(-np.mean(np.log(counts / counts.sum())[windows[:, 1:]]))
    assert bigram_loss(train_ids, windows, vocab=len(vocabulary)) < unigram - 0.5


def test_a_function_of_the_model_gives_its_rates():
    """lr_multipliers as muP's rules (a function of the drawn model) trains as the mapping they return."""
    train_ids, val_ids, vocabulary = shakespeare_ids()
    config = TransformerConfig(len(vocabulary), 16, 64, 2, scaling="mup", mup_base=32)
    seed = np.random.SeedSequence(3)
    rates = mup_lr_multipliers(Transformer(config, np.random.default_rng(seed.spawn(2)[0])))
    kw = dict(steps=3, lr=1e-2, batch=2, val_windows=2)
    a = train_language_model(config, train_ids, val_ids, seed=np.random.SeedSequence(3), lr_multipliers=mup_lr_multipliers, **kw)
    b = train_language_model(config, train_ids, val_ids, seed=np.random.SeedSequence(3), lr_multipliers=rates, **kw)
    c = train_language_model(config, train_ids, val_ids, seed=np.random.SeedSequence(3), **kw)
    assert a == b and a.val_loss[-1] != c.val_loss[-1]


@pytest.mark.parametrize("scaling, base", [("sqrt", None), ("mup", 32)])
def test_a_sweep_row_is_its_seed_trained_at_every_rate(scaling, base):
    """Each grid point of a row is train_language_model at that rate from the row's seed (common random
    numbers); the best point is the arg-min; beating the bigram floor is read off the same windows."""
    sim = TextSweepSim(32, scaling, (1e-3, 3e-2), steps=4, mup_base=base, n_ctx=16, batch=2, warmup=1)
    sim_seed = np.random.SeedSequence(11)
    out = sim.run_block(sim_seed, 0, 1, stats.FORMULAS, 1)
    assert set(out) == set(sim.statistics)
    train_ids, val_ids, vocabulary = shakespeare_ids()
    floor = bigram_loss(train_ids, validation_windows(val_ids, n_ctx=16, count=TEXT_VALIDATION_WINDOWS), vocab=len(vocabulary))
    losses = []
    for i, lr in enumerate(sim.lrs):
        run = train_language_model(sim.config, train_ids, val_ids, steps=4, lr=lr, batch=2, warmup=1,
                                   seed=block_seed_sequence(sim_seed, 0, 0), val_windows=TEXT_VALIDATION_WINDOWS,
                                   lr_multipliers=mup_lr_multipliers if base else None, ends_only=True)
        assert run.steps == (0, 4)
        losses.append(run.final_val_loss)
        assert out[f"loss_at_{i}"][0] == run.final_val_loss
        assert out[f"logit_at_{i}"][0] == max(run.max_logit[-1])
        assert out[f"cosine_at_{i}"][0] == np.mean(run.alignment[-1]) and len(run.alignment[-1]) == 2
        assert out[f"beats_bigram_at_{i}"][0] == float(run.final_val_loss < floor)
        assert out[f"diverged_at_{i}"][0] == 0.0
    best = int(np.argmin(losses))
    assert out["best_log_lr"][0] == math.log10(sim.lrs[best]) and out["best_loss"][0] == min(losses)
    assert out["logit_best"][0] == out[f"logit_at_{best}"][0] and out["gradient_error"][0] <= 1
    assert out["cosine_best"][0] == out[f"cosine_at_{best}"][0] and out["initial_cosine"][0] == np.mean(run.alignment[0])


def test_a_diverged_rate_scores_the_step_0_loss_never_a_nan():
    """At Adam's largest rate the unscaled model diverges within 20 steps: that point scores its
    step-0 loss (it learned nothing), does not beat the floor, and the best is another rate."""
    sim = TextSweepSim(32, "none", (1e-3, 1.0), steps=20, n_ctx=16, batch=2, warmup=1)
    out = sim.run_block(np.random.SeedSequence(2), 0, 1, stats.FORMULAS, 1)
    assert out["diverged_at_1"][0] == 1.0 and out["diverged_at_0"][0] == 0.0
    assert out["loss_at_1"][0] == out["initial_loss"][0] and out["beats_bigram_at_1"][0] == 0.0
    assert out["best_log_lr"][0] == -3.0 and all(np.isfinite(v).all() for v in out.values())


@pytest.mark.parametrize("scaling, base, lrs", [("sqrt", None, (3e-3, 3e-2, 3e-1)), ("mup", 16, (1e-2, 1e-1, 1.0))])
def test_a_narrow_row_compares_each_rate_s_trained_logits_across_the_widths(scaling, base, lrs):
    """With narrow set, a row is the wide sweep's row unchanged, beside the same seed's sweep at the
    narrow width (the same batches): each rate's trained logits wide over narrow, and each width's at
    its own best rate, flat within a factor 2 and grows past it.  (At these rates some row's best rate
    differs between the widths, so "its own best" is each width's.)"""
    kw = dict(scaling=scaling, lrs=lrs, steps=6, mup_base=base, n_ctx=16, batch=2, warmup=1)
    sim_seed = np.random.SeedSequence(12)
    paired = TextSweepSim(64, narrow=32, **kw).run_block(sim_seed, 0, 2, stats.FORMULAS, 1)
    wide = TextSweepSim(64, **kw).run_block(sim_seed, 0, 2, stats.FORMULAS, 1)
    narrow = TextSweepSim(32, **kw).run_block(sim_seed, 0, 2, stats.FORMULAS, 1)
    assert set(paired) == set(TextSweepSim(64, narrow=32, **kw).statistics) and set(wide) < set(paired)
    for name, rows in wide.items():
        np.testing.assert_array_equal(paired[name], rows)
    assert (wide["best_log_lr"] != narrow["best_log_lr"]).any()
    def diverged(sweep, i):
        """The sweep's diverged flags at grid point i, per row (i an index or one per row)."""
        return np.choose(np.broadcast_to(i, (2,)), [sweep[f"diverged_at_{k}"] for k in range(3)])

    def best_index(sweep):
        return np.argmin([sweep[f"loss_at_{k}"] for k in range(3)], axis=0)

    pairs = [(f"at_{i}", wide[f"logit_at_{i}"], narrow[f"logit_at_{i}"], diverged(wide, i) + diverged(narrow, i)) for i in range(3)]
    best = ("best", wide["logit_best"], narrow["logit_best"],
            diverged(wide, best_index(wide)) + diverged(narrow, best_index(narrow)))
    for at, w, n, gone in pairs + [best]:
        ratio, kept = w / n, gone == 0
        np.testing.assert_array_equal(paired[f"logit_diverged_{at}"], (~kept).astype(float))
        np.testing.assert_array_equal(paired[f"logit_flat_{at}"], (kept & (ratio >= 0.5) & (ratio <= 2)).astype(float))
        np.testing.assert_array_equal(paired[f"logit_grows_{at}"], (kept & (ratio > 2)).astype(float))


@pytest.mark.parametrize("kw, match", [
    (dict(narrow=64), "narrow"), (dict(d_model=64, narrow=33), "narrow"), (dict(d_model=64, narrow=16, mup_base=32, scaling="mup"), "mup_base"),
    (dict(narrow=0), "narrow"), (dict(narrow=16.0), "narrow"),
    (dict(lrs=()), "lrs"), (dict(lrs=(1e-2, 1e-3)), "lrs"), (dict(lrs=(2.0,)), "lrs"), (dict(lrs=tuple([1e-3] * 9)), "lrs"),
    (dict(steps=0), "steps"), (dict(warmup=200), "warmup"), (dict(n_heads=3), "n_heads"), (dict(mup_base=32), "mup_base"),
    (dict(n_ctx=1), "n_ctx"), (dict(batch=0), "batch"),
])
def test_a_sweep_refuses_what_it_cannot_honour_by_name(kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        TextSweepSim(**{**dict(d_model=32), **kw})


def test_the_text_claim_adds_the_own_best_protocol_and_the_control_under_the_full_profile():
    """The default build grades the shared-rate protocol; EVIDENCE=full adds the unscaled model and the
    folded control at their own best rates, the control carrying its recorded caveat, whose sentence
    passes the audit (every number and universal word tied to a check)."""
    from stats.claims.registry import REGISTRY
    from stats.claims.sentences import static_audit
    from stats.claims.statements import model

    default, full = model.text_claim("default"), model.text_claim("full")
    assert [c.protocol for c in default.checks] == ["", "shared rate"]
    assert [c.protocol for c in full.checks] == ["", "shared rate", "own best rate", "own best rate"]
    assert [c.erratum for c in full.checks[:3]] == [None] * 3 and full.checks[3].erratum.kind == "caveat"
    claims = tuple(c for c in REGISTRY if c.id != full.id) + (full,)
    assert [problems for cid, _, problems in static_audit(claims) if cid == full.id] == [[]]


def test_the_full_profile_decides_muP_s_trained_logits_under_both_protocols(stand_in_search):
    """EVIDENCE=full registers the trained-logit claim: the standard model and muP at the shared rate (a
    point of both grids), muP also at each width's own best rate; muP's checks read "flat", the standard
    model's "grows", and the default build registers none of it."""
    from stats.claims.statements import model
    from stats.settings.model import TEXT_SHARED_LR, TRAINED_NARROW, TRAINED_WIDE

    claim = model.trained_logit_claim()
    assert claim.id in model.EVIDENCE_ONLY and claim.id in {c.id for c in model.claims("full")}
    assert claim.id not in {c.id for c in model.claims("default")}
    seen = []
    for check in claim.checks:
        (measure,) = check.measures
        sim = measure.sim
        assert (sim.d_model, sim.narrow) == (TRAINED_WIDE, TRAINED_NARROW) and TEXT_SHARED_LR in sim.lrs
        at = f"at_{sim.lrs.index(TEXT_SHARED_LR)}" if check.protocol == "shared rate" else "best"
        assert measure.statistic == f"logit_{'flat' if sim.scaling == 'mup' else 'grows'}_{at}"
        seen.append((sim.scaling, check.protocol))
    assert sorted(seen) == sorted([("sqrt", "shared rate"), ("mup", "shared rate"), ("mup", "own best rate")])


def test_building_the_registry_does_not_read_the_plays():
    """Every process that builds the registry (the verify, each report step, each worker) would
    otherwise read and encode the plays, half a second each; a sweep reads them when it plans or trains."""
    import subprocess
    import sys

    code = ("import stats.claims.registry as r, stats.training.corpus as c; "
            "assert any(s.__class__.__name__ == 'TextSweepSim' for cl in r.REGISTRY for ch in cl.checks "
            "for s in (m.sim for m in ch.measures)), 'no text sweep in the registry'; "
            "print(c.shakespeare_ids.cache_info().currsize)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0"
    sim = TextSweepSim(32, "sqrt", (1e-2,))
    assert sim.config.vocab == len(shakespeare_ids()[2])


@pytest.mark.parametrize("optimizer", LM_OPTIMIZERS)
def test_training_takes_each_parameter_s_step_at_its_own_rate(optimizer):
    """train_transformer steps the parameters as one flat array per rate factor (the model's
    parameters become views of it): the same steps, bit for bit, as the optimiser's update taken
    parameter by parameter at that parameter's rate -- here muP's, whose hidden and read-out weights
    train at d_0/d_model times the rate of the embeddings, gains and biases, interleaved with them."""
    config = TransformerConfig(11, 6, 16, 2, scaling="mup", mup_base=8, dtype="float64")
    batches = np.random.default_rng(4).integers(0, 11, (5, 3, 7))
    model, reference = (Transformer(config, np.random.default_rng(0)) for _ in range(2))
    rates = mup_lr_multipliers(model)
    assert sorted({rates.get(k, 1.0) for k in model.params}) == [0.5, 1.0]
    drawn = iter(batches)
    train_transformer(model, lambda: (next(drawn), None), lambda m: 0.0, steps=5, lr=1e-2, optimizer=optimizer, warmup=2,
                      lr_multipliers=rates)
    state = {k: {} for k in reference.params}
    for t, tokens in enumerate(batches):
        _, grads, _ = reference.loss_and_grads(tokens)
        for k, g in grads.items():
            r = warmed_lr(1e-2, t + 1, 2) * rates.get(k, 1.0)
            step = adam_update(g, state[k], t + 1, r) if optimizer == "adam" else -r * g
            reference.params[k] = reference.params[k] + step
    for k, p in reference.params.items():
        assert np.array_equal(model.params[k], p), k
