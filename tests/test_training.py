"""The trainer (stats.training): its gradients, optimisers, streams, divergence and
bad input; the exact share test behind the training claims; and the training mutants."""

import math

import numpy as np
import pytest

from stats import FORMULAS, MUTANTS, REGISTRY, evaluate, evaluate_mutants, plan, simulate
from stats.claims.checks.share import ShareCheck, share_sample_size
from stats.claims.measures import Measure, Stated
from stats.engine.executors import Job, run_simulations
from stats.inference import share_interval_test
from stats.training import (
    OPTIMIZERS,
    OUTCOMES,
    SCALINGS,
    Heads,
    TrainingSim,
    adafactor_update,
    adam_update,
    checkpoint_steps,
    retrieval_episodes,
    train_heads,
)


def rngs(n, seed=1):
    return [np.random.default_rng([seed, i]) for i in range(n)]


# ------------------------------------------------------------------ the trainer


@pytest.mark.parametrize("scaling", list(SCALINGS))
@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
def test_every_outcome_is_finite_and_the_step_identities_hold(scaling, optimizer):
    r = train_heads(rngs(3), d_k=8, d_model=12, scaling=scaling, optimizer=optimizer, lr=1e-2, steps=6)
    assert list(r) == list(OUTCOMES)
    for name, v in r.items():
        assert v.shape == (3,) and np.all(np.isfinite(v)), name
    assert np.all(r["gradient_error"] <= 1)
    assert np.all(r["adam_first_step"] <= 1) and np.all(r["adafactor_step"] <= 1)
    if optimizer != "adam":
        assert np.all(r["adam_first_step"] == 0)


def test_a_run_does_not_depend_on_the_runs_batched_with_it():
    together = train_heads(rngs(4), d_k=8, d_model=8, scaling="sqrt", optimizer="adam", lr=3e-2, steps=10)
    apart = [train_heads(rngs(4)[i:i + 1], d_k=8, d_model=8, scaling="sqrt", optimizer="adam", lr=3e-2, steps=10) for i in range(4)]
    for name in OUTCOMES:
        assert np.array_equal(together[name], np.concatenate([a[name] for a in apart])), name


def test_the_engine_gives_the_same_bytes_with_one_or_two_workers():
    sim = TrainingSim(8, "sqrt", "sgd", 1.0, 8, 8)
    a = run_simulations([Job(sim, 40)], seed=3, formulas=FORMULAS, workers=1)
    b = run_simulations([Job(sim, 40)], seed=3, formulas=FORMULAS, workers=2)
    for st in ("learned", "loss_8", "cosine_8"):
        assert a[sim.key].summary(st) == b[sim.key].summary(st)


def test_the_scaled_head_learns_and_the_unscaled_one_fails_at_the_scaled_rate():
    scaled = train_heads(rngs(6), d_k=64, d_model=64, scaling="sqrt", optimizer="sgd", lr=3.0, steps=60)
    unscaled = train_heads(rngs(6), d_k=64, d_model=64, scaling="none", optimizer="sgd", lr=3.0, steps=60)
    assert scaled["learned"].mean() == 1 and scaled["loss_8"].mean() < 0.05
    assert unscaled["learned"].mean() == 0
    assert np.all(scaled["max_weight_8"] > scaled["max_weight_0"])


def test_learned_means_the_held_out_probe_stays_at_the_target(monkeypatch):
    """Scripted probe accuracies (per probed step, one per run): ``learned`` needs the probe at 90% at
    the last two checkpoints (steps 35 and 40 of 40) and at every probe between; its step is where
    the last stretch at 90% began; a run that reached 90% once and fell back is counted from its return."""
    import stats.training.trainer as trainer

    steps = 40
    marks = checkpoint_steps(steps)
    script = {  # run -> accuracy as a function of the step
        0: lambda t: 0.95 if t >= 6 else 0.5,  # learns at step 6 and stays
        1: lambda t: 0.95 if 6 <= t < 21 or t >= 30 else 0.5,  # falls back at 21, back from 30
        2: lambda t: 0.95 if t < 40 else 0.5,  # drops at the very end
        3: lambda t: 0.95 if t >= 36 else 0.5,  # only after the second-last checkpoint
        4: lambda t: 0.89,  # just below, always
    }
    now = [0]  # the step being taken (0 while the trainer is built)
    real_step = trainer.Trainer.step

    def step(self, t):
        now[0] = t
        return real_step(self, t)

    monkeypatch.setattr(trainer.Trainer, "step", step)
    monkeypatch.setattr(trainer, "probe_accuracy", lambda heads, episodes: np.array([script[r](now[0]) for r in range(5)]))
    out = train_heads(rngs(5), d_k=4, d_model=4, scaling="sqrt", optimizer="sgd", lr=0.1, steps=steps)
    assert marks[-2:] == (35, 40)
    assert out["learned"].tolist() == [1, 1, 0, 0, 0]
    every = trainer.PROBE_EVERY
    first_probe_from = lambda s: next(t for t in range(s, steps + 1) if t % every == 0 or t in marks)  # noqa: E731
    assert out["steps_to_accuracy"].tolist() == [first_probe_from(6), first_probe_from(30), steps + 1, steps + 1, steps + 1]
    assert out["learned_by_4"].tolist() == [1, 0, 0, 0, 0]  # checkpoint 4 is step 20: run 1 left 90% after it
    assert out["learned_by_8"].tolist() == [1, 1, 0, 0, 0]
    assert out["probe_accuracy_final"].tolist() == [0.95, 0.95, 0.5, 0.95, 0.89]


def test_the_lenient_criterion_is_kept_and_the_sustained_one_implies_a_probe_at_the_target():
    r = train_heads(rngs(8), d_k=16, d_model=16, scaling="sqrt", optimizer="adam", lr=3e-2, steps=60)
    assert np.all(r["probe_accuracy_final"][r["learned"] == 1] >= 0.9)
    assert np.all(r["steps_to_accuracy"][r["learned"] == 0] == 61)
    assert set(np.unique(r["learned_episode"])) <= {0.0, 1.0}
    assert np.all((r["learned_episode"] == 1) == (r["steps_to_episode_accuracy"] <= 60))


def test_a_diverging_run_is_counted_with_its_step_and_leaves_no_nan():
    r = train_heads(rngs(3), d_k=8, d_model=8, scaling="none", optimizer="sgd", lr=1e12, steps=10)
    assert r["diverged"].tolist() == [1.0, 1.0, 1.0]
    assert np.all((r["divergence_step"] >= 1) & (r["divergence_step"] <= 10))
    assert all(np.all(np.isfinite(v)) for v in r.values())
    ok = train_heads(rngs(3), d_k=8, d_model=8, scaling="sqrt", optimizer="sgd", lr=1.0, steps=10)
    assert ok["diverged"].sum() == 0 and np.all(ok["divergence_step"] == 11)


def test_checkpoints_cover_the_budget():
    assert checkpoint_steps(150) == (0, 19, 38, 56, 75, 94, 112, 131, 150)
    assert checkpoint_steps(1) == (0, 0, 0, 0, 0, 1, 1, 1, 1)
    r = train_heads(rngs(2), d_k=8, d_model=8, scaling="sqrt", optimizer="adam", lr=1e-2, steps=1)
    assert np.array_equal(r["loss_0"], r["loss_4"]) and not np.array_equal(r["loss_0"], r["loss_5"])


@pytest.mark.torch
def test_the_hand_derived_training_gradient_matches_autograd():
    torch = pytest.importorskip("torch")
    for scaling in ("sqrt", "none", "qknorm", "t5", "additive"):
        gens = rngs(2, seed=4)
        heads = Heads(gens, d_model=12, d_k=8, scaling=SCALINGS[scaling], n_keys=6)
        X, Xq, perm = retrieval_episodes(gens, 6, 12, 0.5)
        loss, _, grads = heads.loss_and_grads(X, Xq, perm, FORMULAS)
        t = {k: torch.tensor(v, requires_grad=True) for k, v in heads.params.items()}
        Xt, Xqt, WV = (torch.tensor(a) for a in (X, Xq, heads.WV))
        Q, K, V = Xqt @ t["WQ"], Xt @ t["WK"], Xt @ WV
        if scaling == "qknorm":
            Q = t["gain"][:, None, None] * Q / Q.norm(dim=2, keepdim=True)
            K = K / K.norm(dim=2, keepdim=True)
        if scaling == "additive":
            S = torch.einsum("rijd,rd->rij", torch.tanh(Q[:, :, None, :] + K[:, None, :, :]), t["v"])
        else:
            S = heads.scale * Q @ K.transpose(1, 2)
        O = torch.softmax(S, dim=2) @ V
        target = V[torch.arange(2)[:, None], torch.tensor(perm)]
        L = 0.5 * ((O - target) ** 2).sum(dim=(1, 2)) / (6 * 8)
        L.sum().backward()
        np.testing.assert_allclose(L.detach().numpy(), loss, rtol=1e-12)
        for k in t:
            np.testing.assert_allclose(grads[k], t[k].grad.numpy(), rtol=1e-9, atol=1e-14, err_msg=f"{scaling} {k}")


@pytest.mark.torch
def test_adam_matches_torch_for_several_steps():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    w = rng.standard_normal((2, 3, 4))
    p = torch.tensor(w.copy(), requires_grad=True)
    opt = torch.optim.Adam([p], lr=1e-2, betas=(0.9, 0.999), eps=1e-8)
    state = {}
    for t in range(1, 6):
        g = rng.standard_normal(w.shape)
        w = w + adam_update(g, state, t, 1e-2)
        p.grad = torch.tensor(g)
        opt.step()
        np.testing.assert_allclose(w, p.detach().numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("lr_shape", [(), (16, 1, 1), (16, 300, 200)])
def test_adam_in_cache_blocks_is_the_textbook_formula_to_the_bit(lr_shape):
    # 16 x 300 x 200 entries span several cache blocks, the last one partial.
    rng = np.random.default_rng(3)
    lr = 1e-2 * np.exp(rng.uniform(-1, 1, lr_shape)) if lr_shape else 1e-2
    state, m, v = {}, 0.0, 0.0
    for t in range(1, 4):
        g = rng.standard_normal((16, 300, 200))
        step = adam_update(g, state, t, lr)
        m = m * 0.9 + g * (1 - 0.9)
        v = v * 0.999 + (g * g) * (1 - 0.999)
        expected = m / (np.sqrt(v) * (1.0 / math.sqrt(1 - 0.999**t)) + 1e-8) * (-lr / (1 - 0.9**t))
        assert np.array_equal(step, expected)


def test_the_step_applied_in_blocks_reports_each_runs_extremes_and_its_nan():
    from stats.training.arrays import apply_step

    rng = np.random.default_rng(4)
    w, g = rng.standard_normal((2, 5, 300, 100))
    g[3, 299, 99] = np.nan  # in the last block of run 3
    lr = np.arange(1, 6, dtype=float).reshape(5, 1, 1)
    new, lo, hi = apply_step(w, g, np.empty_like(w), scale=-lr)
    expected = w + g * -lr
    assert np.array_equal(new, expected, equal_nan=True)
    assert np.isnan(lo[3]) and np.isnan(hi[3])
    keep = [0, 1, 2, 4]
    assert np.array_equal(lo[keep], expected[keep].reshape(4, -1).min(axis=1))
    assert np.array_equal(hi[keep], expected[keep].reshape(4, -1).max(axis=1))


def test_adafactor_steps_are_relative_and_clipped():
    rng = np.random.default_rng(1)
    for scale in (1e-2, 1.0, 30.0):
        w = scale * rng.standard_normal((3, 5, 4))
        state = {}
        for t in range(1, 5):
            g = rng.standard_normal(w.shape) * 10.0 ** rng.integers(-6, 6)
            step = adafactor_update(g, w, state, t, np.full(3, 0.1))
            rms = np.sqrt((step**2).mean(axis=(1, 2)))
            bound = 0.1 * np.maximum(1e-3, np.sqrt((w**2).mean(axis=(1, 2))))
            assert np.all(rms <= bound * (1 + 1e-12))
            # the step does not depend on the gradient's scale
            assert np.allclose(adafactor_update(g * 1e3, w, {}, 1, np.full(3, 0.1)), adafactor_update(g, w, {}, 1, np.full(3, 0.1)))
            w = w + step
    # Factored second moment: exact for a rank-one g^2 (Shazeer & Stern 2018, section 3).
    a, b = rng.random(5) + 0.1, rng.random(4) + 0.1
    g = np.sqrt(np.outer(a, b))[None]
    step = adafactor_update(g, np.ones_like(g), {}, 1, np.array([1.0]))
    assert np.allclose(np.abs(step), 1.0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(lr=0.0), "lr"), (dict(lr=-1.0), "lr"), (dict(lr=math.nan), "lr"), (dict(lr=math.inf), "lr"),
        (dict(lr="0.1"), "lr"), (dict(lr=[0.1, 0.2]), "lr"), (dict(steps=0), "steps"), (dict(steps=2.5), "steps"),
        (dict(d_k=0), "d_k"), (dict(d_model=0), "d_model"), (dict(scaling="bogus"), "scaling"),
        (dict(optimizer="rmsprop"), "optimizer"), (dict(noise=-1.0), "noise"), (dict(n_keys=1), "n_keys"),
    ],
)
def test_train_heads_names_the_bad_argument(kwargs, match):
    args = dict(d_k=8, d_model=8, scaling="sqrt", optimizer="sgd", lr=0.1, steps=2) | kwargs
    with pytest.raises((ValueError, TypeError), match=match):
        train_heads(rngs(3), **args)


def test_train_heads_refuses_bad_generators():
    with pytest.raises(TypeError, match="rngs"):
        train_heads([], d_k=8, d_model=8, lr=0.1, steps=2)
    with pytest.raises(TypeError, match="rngs"):
        train_heads([1, 2], d_k=8, d_model=8, lr=0.1, steps=2)


@pytest.mark.parametrize(
    "kwargs, match",
    [(dict(lr=0.0), "lr"), (dict(lr=math.nan), "lr"), (dict(lr=True), "lr"), (dict(steps=0), "steps"),
     (dict(scaling="x"), "scaling"), (dict(optimizer="x"), "optimizer"), (dict(d_model=0), "d_model")],
)
def test_training_sim_names_the_bad_argument(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        TrainingSim(**(dict(d_k=8) | kwargs))


def test_training_sim_uses_only_its_optimisers_update():
    assert "adam_update" in TrainingSim(8, optimizer="adam").uses
    assert "adam_update" not in TrainingSim(8, optimizer="sgd").uses
    assert "adafactor_update" in TrainingSim(8, optimizer="adafactor").uses
    assert TrainingSim(8).d_model == 8


# ------------------------------------------------------------------ the exact share test


@pytest.mark.parametrize("alpha", [1e-2, 3.2e-6])
@pytest.mark.parametrize("n", [16, 47, 200])
def test_share_test_level_is_at_most_alpha_on_the_whole_null(n, alpha):
    from scipy import stats as sps

    lo, hi = 0.1, 0.5
    k = np.arange(n + 1)
    pvals = np.array([share_interval_test(int(i), n, lo, hi, alpha=alpha).pvalue for i in k])
    for p in np.linspace(lo, hi, 9):
        size = sps.binom.pmf(k, n, p)[pvals < alpha].sum()
        assert size <= alpha * (1 + 1e-9), (p, size)


def test_share_design_has_the_power_it_claims_and_no_smaller_n_does():
    from scipy import stats as sps

    alpha, beta = 3.2e-6, 1e-3
    n = share_sample_size(0.5, 1.0, 0.45, alpha=alpha, beta=beta)

    def power(m):
        k = np.arange(m + 1)
        rej = np.array([share_interval_test(int(i), m, 0.5, 1.0, alpha=alpha).pvalue < alpha for i in k])
        return sps.binom.pmf(k, m, 0.05)[rej].sum()

    assert power(n) >= 1 - beta > power(n - 1)


@pytest.mark.parametrize("n, lo, hi, alpha", [(32, 0.0, 0.1, 1e-3), (48, 0.5, 1.0, 1e-3), (100, 0.1, 0.5, 1e-3),
                                               (16, 0.0, 0.1, 1e-3),
                                               # only 0 of 33 refutes "more than a third", and only a share of
                                               # 0 itself, off the grid, gives that the power
                                               (33, 1 / 3, 1.0, 2e-6)])
def test_a_share_checks_detectable_distance_is_where_the_test_itself_reaches_its_power(n, lo, hi, alpha):
    """``detectable`` (the smallest distance beyond an end, on a 1/200 grid closed by the share 0 or 1,
    with power 1 - beta there) against the rejections of the test itself, enumerated outcome by outcome."""
    from scipy import stats as sps

    from stats.claims.checks.share import _detectable

    beta = 0.1
    k = np.arange(n + 1)
    rejects = np.array([share_interval_test(int(i), n, lo, hi, alpha=alpha).pvalue < alpha for i in k])
    worst = 0.0
    for end, sign in ((lo, -1), (hi, 1)):
        grid = [end + sign * i / 200 for i in range(1, 201) if 0 <= end + sign * i / 200 <= 1]
        extreme = 0.0 if sign < 0 else 1.0
        if extreme != end and extreme not in grid:
            grid.append(extreme)
        tail = rejects & ((k / n < lo) if sign < 0 else (k / n > hi))
        hits = [abs(a - end) for a in grid if sps.binom.pmf(k, n, a)[tail].sum() >= 1 - beta]
        if grid:
            worst = max(worst, hits[0] if hits else math.inf)
    assert _detectable(n, lo, hi, alpha, beta) == pytest.approx(worst, abs=1e-12)
    assert 0 < worst < math.inf  # every case here can detect something


def test_an_erratum_share_check_gets_the_rows_that_can_refute_it():
    """A recorded finding's share check gets, even in a draft, the fewest rows whose most extreme
    outcome refutes the text's interval (0.5^19 < 2.8e-6 < 0.5^18): a test that cannot fail
    confirms nothing.  Below its design (a draft), it is graded only where it refutes
    (test_a_draft_grades_a_recorded_finding_only_where_its_rows_refute_the_text)."""
    from stats import Erratum

    sim = TrainingSim(8, steps=2, n_keys=4)
    alpha = 2.8e-6
    plain = ShareCheck("x", stated=Stated.at_least("s", 0.5), measure=Measure(sim, "learned"))
    wrong = ShareCheck("x", stated=Stated.at_least("s", 0.5), measure=Measure(sim, "learned"),
                       erratum=Erratum(Stated.at_most("c", 0.5), "c"))
    low = ShareCheck("x", stated=Stated.at_most("s", 0.1), measure=Measure(sim, "learned"),
                     erratum=Erratum(Stated.at_least("c", 0.5), "c"))
    assert plain.least_rows(alpha) == 0
    assert wrong.least_rows(alpha) == 19 and 0.5**19 < alpha < 0.5**18
    assert low.least_rows(alpha) == 6 and 0.1**6 < alpha < 0.1**5
    the_plan = plan(REGISTRY, select="training-t5-differs", seed=2, n_factor=0.02)
    full = plan(REGISTRY, select="training-t5-differs", seed=2)
    designed = {p.check.label: p.n for p in full.checks if p.check.erratum is not None}
    rows = {p.check.label: p for p in the_plan.checks if p.check.erratum is not None}
    assert rows and rows.keys() == designed.keys()
    for label, p in rows.items():
        assert p.check.least_rows(the_plan.per_test) <= p.n < designed[label] == p.design_n and p.below_design
    assert not any(p.below_design for p in full.checks)
    assert all(p.n == 16 for p in the_plan.checks if p.check.erratum is None)


def test_a_draft_grades_a_recorded_finding_only_where_its_rows_refute_the_text():
    """In a draft a recorded finding drawn below its design is confirmed when its rows already
    refute the text, and otherwise not graded (``untestable``, saying why), never ``stale``: a
    few rows that do not refute say nothing of it.  The build, at its design, grades it: here
    ``stale``, as the text's interval holds (no head learns in 2 steps)."""
    from stats import Claim, Erratum

    sim = TrainingSim(8, steps=2, n_keys=4)
    holds = ShareCheck("text holds", stated=Stated.at_most("s", 0.5), measure=Measure(sim, "learned"), target=0.1,
                       erratum=Erratum(Stated.at_least("c", 0.5), "c"))
    wrong = ShareCheck("text wrong", stated=Stated.at_least("s", 0.5), measure=Measure(sim, "learned"), target=0.1,
                       erratum=Erratum(Stated.at_most("c", 0.5), "c"))
    claims = (Claim("toy", "test", "a toy claim", "-", (holds, wrong)),)

    def table(**kw):
        the_plan = plan(claims, seed=3, **kw)
        t = evaluate(the_plan, simulate(the_plan, seed=3)).set_index("check")
        return t, {p.check.label: p for p in the_plan.checks}

    draft, planned = table(n_factor=0.02)
    assert all(p.below_design for p in planned.values())
    assert draft.loc["text holds", "verdict"] == "untestable" and draft.loc["text holds", "finding"] == ""
    n, design = planned["text holds"].n, planned["text holds"].design_n
    assert f"a draft's {n} of the {design} rows its design asks do not refute the text" in draft.loc["text holds", "note"]
    assert draft.loc["text wrong", "verdict"] == "erratum confirmed" and draft.loc["text wrong", "n"] < design
    build, planned = table()
    assert not any(p.below_design for p in planned.values())
    assert build.loc["text holds", "verdict"] == "erratum stale"
    assert build.loc["text wrong", "verdict"] == "erratum confirmed"


def test_a_draft_pilots_a_costly_simulation_on_fewer_rows_and_a_build_on_its_own():
    """A build's pilot holds at least 200 rows; a draft's pilot of a costly simulation holds
    DRAFT_ROW_NUMBERS numbers' worth of rows, at least DRAFT_PILOT_MIN_ROWS (the muP sweeps at
    d_k = 128 drew 200-row pilots, about 60 of a warm draft's 94 s, for checks drawn at 16-19
    rows); a cheap simulation's draft pilot is not capped."""
    from stats.claims.defaults import DRAFT_PILOT_MIN_ROWS, DRAFT_ROW_NUMBERS
    from stats.claims.pilots import pilot_rows
    from stats.training import LRSweepSim

    sweep = LRSweepSim(128, (0.01, 0.03, 0.1), "sqrt", "adam", 40)
    wide = TrainingSim(256, steps=1, d_model=256)
    cheap = TrainingSim(8, steps=2, n_keys=4)
    assert pilot_rows(sweep) == pilot_rows(wide) == 200
    assert pilot_rows(sweep, 0.02) == DRAFT_PILOT_MIN_ROWS < 200 and sweep.cost * DRAFT_PILOT_MIN_ROWS > DRAFT_ROW_NUMBERS
    assert DRAFT_PILOT_MIN_ROWS < pilot_rows(wide, 0.02) == int(DRAFT_ROW_NUMBERS // wide.cost) < 200
    assert pilot_rows(cheap, 0.02) == max(200, int((1 << 22) * 0.1 // cheap.cost)) < pilot_rows(cheap)  # uncapped


def test_a_draft_draws_few_of_the_costliest_runs_and_a_full_run_its_design():
    """``MIN_ROWS`` (16) bounds a drawn check's rows from below; in a draft, where a block of the
    simulation holds fewer rows (8 runs of d_k = d_model = 256), at most one block, and where a
    run costs more than 2^28 / 16 random numbers (150 steps with d_model = 256), as many runs as
    2^28 numbers buy, at least 4: those runs were two thirds of a draft's simulation cost.  A
    full run is never below the floor or its design."""
    from stats import Claim
    from stats.claims.defaults import DRAFT_MIN_ROWS, DRAFT_ROW_NUMBERS

    wide, narrow = TrainingSim(256, steps=1, d_model=256), TrainingSim(64, steps=1, d_model=64)
    long_wide, long_mixed = TrainingSim(256, steps=150, d_model=256), TrainingSim(64, steps=150, d_model=256)
    assert (wide.block_rows, narrow.block_rows, long_mixed.block_rows) == (8, 16, 16)
    assert long_wide.cost > DRAFT_ROW_NUMBERS / DRAFT_MIN_ROWS > long_mixed.cost > DRAFT_ROW_NUMBERS / 5
    sims = {"256": wide, "64": narrow, "256 long": long_wide, "64/256 long": long_mixed}
    checks = tuple(ShareCheck(label, stated=Stated.at_least("s", 0.5), measure=Measure(s, "learned"))
                   for label, s in sims.items())
    claim = Claim("draft-floor", "The section's opening (before \"The formula, piece by piece\")", "s", "s", checks)
    draft = {p.check.label: p.n for p in plan((claim,), seed=2, n_factor=0.02).checks}
    full = {p.check.label: p.n for p in plan((claim,), seed=2).checks}
    assert draft == {"256": 8, "64": 16, "256 long": 4, "64/256 long": 5}
    assert set(full.values()) == {share_sample_size(0.5, 1.0, 0.45, alpha=1e-3 / 4, beta=1e-3)} and full["256"] > 16


def test_share_check_refuses_a_bad_definition():
    sim = TrainingSim(8, steps=2)
    with pytest.raises(ValueError, match="stated"):
        ShareCheck("x", measure=Measure(sim, "learned"))
    with pytest.raises(ValueError, match="factor"):
        ShareCheck("x", stated=Stated.at_least("s", 0.5), measure=Measure(sim, "learned", 2.0))
    with pytest.raises(ValueError, match="target"):
        ShareCheck("x", stated=Stated.at_least("s", 0.5), measure=Measure(sim, "learned"), target=1.5)


def test_share_check_of_a_non_binary_statistic_is_an_error():
    from stats import Claim

    sim = TrainingSim(8, steps=2)
    check = ShareCheck("loss is not 0/1", stated=Stated.at_most("s", 0.5), measure=Measure(sim, "loss_8"))
    claim = Claim("share-of-loss", "The section's opening (before \"The formula, piece by piece\")", "s", "s", (check,))
    the_plan = plan((claim,), seed=2)
    table = evaluate(the_plan, simulate(the_plan, seed=2))
    assert table["verdict"].tolist() == ["ERROR"]


# ------------------------------------------------------------------ mutants in the training path


@pytest.mark.slow
def test_the_training_claims_alone_catch_every_training_path_mutant():
    """The planted errors in the training path (the backward pass without D, Adam without
    bias correction, Adafactor's absolute step, targets from the wrong key), caught by the
    training claims alone, not only by the exact half's checks."""
    names = ("ds-without-d-term", "dk-as-c-ds-q", "adam-without-bias-correction", "adafactor-absolute-step", "targets-from-wrong-key")
    mutants = [m for m in MUTANTS if m.name in names]
    the_plan = plan(REGISTRY, select="training-scaled-head-learns,training-gradient-check,training-optimizer-steps", seed=5, n_factor=0.5, workers=2)
    results = simulate(the_plan, seed=5, workers=2)
    table = evaluate_mutants(the_plan, results, mutants, seed=5, workers=2)
    assert len(table) == len(names) and table["caught"].all(), table.to_string()


def test_the_worked_examples_of_adding_a_scaling_and_an_optimiser_run():
    """docs/adding-a-scaling.md's Python blocks, run in order: a scaling and an optimiser are
    each one class and one registry entry, and the trainer and the simulations take them."""
    import pathlib
    import re

    from stats.training import OPTIMIZERS, SCALINGS

    text = (pathlib.Path(__file__).parents[1] / "docs" / "adding-a-scaling.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 4
    before = (dict(SCALINGS), dict(OPTIMIZERS))
    namespace = {}
    try:
        for block in blocks:
            exec(compile(block, "docs/adding-a-scaling.md", "exec"), namespace)
        assert "softcap" in SCALINGS and "momentum" in OPTIMIZERS
    finally:
        SCALINGS.clear(), SCALINGS.update(before[0])
        OPTIMIZERS.clear(), OPTIMIZERS.update(before[1])
