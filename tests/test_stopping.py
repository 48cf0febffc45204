"""Early stopping on sustained accuracy (runs taken out of their batch), the learning rate's
warm-up, and the Kaplan-Meier survival to accuracy with Greenwood standard errors."""

import math

import numpy as np
import pytest

from stats.inference import survival_to_accuracy
from stats.training import HOLD_STEPS, OUTCOMES, PROBE_STATISTICS, Trainer, TrainingSim, checkpoint_steps, train_heads


def rngs(n, seed=1):
    return [np.random.default_rng([seed, i]) for i in range(n)]


# A batch whose runs stop at different steps, and two that never do (d_k = 16, Adam, 200 steps).
STOPPING = dict(d_k=16, d_model=16, scaling="sqrt", optimizer="adam", lr=3e-2, steps=200)


def trained(runs, **options):
    trainer = Trainer(runs, **{**STOPPING, **options})
    for t in range(1, trainer.steps + 1):
        if not trainer.running:
            break
        trainer.step(t)
    return trainer, trainer.outcomes()


# ------------------------------------------------------------------ stopping


def test_a_stopped_run_gives_the_same_outcomes_alone_and_in_a_batch_that_stops_at_other_times():
    trainer, together = trained(rngs(6), stop_when_learned=True)
    stops = trainer.stopped_at[trainer.stopped_at <= 200]
    assert len(set(stops.tolist())) >= 2 and trainer.stopped_at.max() == 201  # not vacuous: staggered stops and a censored run
    for i in range(6):
        alone = train_heads(rngs(6)[i:i + 1], **STOPPING, stop_when_learned=True)
        for name in OUTCOMES:
            assert np.array_equal(together[name][i:i + 1], alone[name]), (i, name)


def test_stopped_runs_leave_the_batch_and_the_loop_ends_when_none_is_left():
    trainer = Trainer(rngs(6), **STOPPING, stop_when_learned=True)
    sizes = []
    for t in range(1, 201):
        trainer.step(t)
        sizes.append(trainer.heads.params["WQ"].shape[0])
        assert trainer.states["WQ"]["m"].shape[0] == trainer.running == len(trainer.rngs) == len(trainer.held_out[0][0])
    assert sizes[0] == 6 and sizes[-1] == 6 - np.sum(trainer.stopped_at <= 200) < 6
    assert np.array_equal(trainer.steps_run, np.minimum(trainer.stopped_at, 200))
    # A batch where every run stops: the loop stops with the last of them.
    easy = Trainer(rngs(4, seed=3), d_k=64, d_model=64, scaling="sqrt", optimizer="sgd", lr=3.0, steps=200, stop_when_learned=True)
    t = 0
    while easy.running and t < 200:
        t += 1
        easy.step(t)
    assert t == easy.stopped_at.max() < 200 and easy.running == 0


def test_a_stopped_run_is_learned_from_its_stretch_and_keeps_its_statistics_at_the_stop():
    trainer, out = trained(rngs(6), stop_when_learned=True)
    free = train_heads(rngs(6), **STOPPING)
    marks = checkpoint_steps(200)
    stopped = trainer.stopped_at <= 200
    assert np.array_equal(out["learned"] == 1, stopped)
    assert np.all(out["steps_to_accuracy"][~stopped] == 201)
    assert np.all(trainer.stopped_at[stopped] - out["steps_to_accuracy"][stopped] >= HOLD_STEPS)
    for i in np.flatnonzero(stopped):
        stop = int(trainer.stopped_at[i])
        # The same run trained to its stop without stopping: its last checkpoint is the stop.
        at_stop = train_heads(rngs(6)[i:i + 1], **{**STOPPING, "steps": stop})
        for k, m in enumerate(marks):
            for name in PROBE_STATISTICS:
                want = free[f"{name}_{k}"][i] if m <= stop else at_stop[f"{name}_8"][0]
                assert out[f"{name}_{k}"][i] == want, (i, k, name)
        for name in ("max_logit_final", "q_square_final", "k_square_final", "onehot_final", "probe_accuracy_final"):
            assert out[name][i] == at_stop[name][0], (i, name)


def _scripted_run(monkeypatch, script, steps, **options):
    """Four runs (d_k = 4, SGD) whose held-out probe reads ``script[i](t)`` at step t for run i,
    trained to ``steps`` with ``stop_when_learned`` and ``options``: the trainer and its outcomes."""
    import stats.training.trainer as trainer

    now, ident = [0], {}
    real_step = trainer.Trainer.step

    def step(self, t):
        now[0] = t
        return real_step(self, t)

    def accuracy(heads, episodes):
        if not ident:
            ident.update({w: i for i, w in enumerate(heads.WV[:, 0, 0])})
        return np.array([script[ident[w]](now[0]) for w in heads.WV[:, 0, 0]])

    monkeypatch.setattr(trainer.Trainer, "step", step)
    monkeypatch.setattr(trainer, "probe_accuracy", accuracy)
    t = Trainer(rngs(len(script)), d_k=4, d_model=4, scaling="sqrt", optimizer="sgd", lr=0.1, steps=steps,
                stop_when_learned=True, **options)
    for s in range(1, steps + 1):
        if not t.running:
            break
        t.step(s)
    return t, t.outcomes()


def test_the_stop_rule_follows_a_scripted_probe(monkeypatch):
    """Scripted probe accuracies: a run stops at the first probe HOLD_STEPS after its stretch began;
    a stretch that breaks before that does not stop it; one that begins too late is censored."""
    from stats.training.diagnostics import PROBE_EVERY as every

    steps = 120
    script = [
        lambda t: 0.95 if t >= 6 else 0.5,  # learns at 6, stops at 36
        lambda t: 0.95 if 6 <= t < 30 or t >= 45 else 0.5,  # breaks at 30 (before the hold), learns from 45
        lambda t: 0.95 if t >= 100 else 0.5,  # too late to hold 30 steps
        lambda t: 0.89,
    ]
    t, out = _scripted_run(monkeypatch, script, steps)
    assert HOLD_STEPS % every == 0 and 6 % every == 0 and 45 % every == 0
    assert t.stopped_at.tolist() == [6 + HOLD_STEPS, 45 + HOLD_STEPS, steps + 1, steps + 1]
    assert out["learned"].tolist() == [1, 1, 0, 0]
    assert out["steps_to_accuracy"].tolist() == [6, 45, steps + 1, steps + 1]
    assert out["probe_accuracy_final"].tolist() == [0.95, 0.95, 0.95, 0.89]


# ------------------------------------------------------------------ giving up

# Unscaled, 16 wide: runs learn from about step 100 to past the budget, so give-up steps cut some.
GIVING_UP = dict(d_k=16, d_model=16, scaling="none", optimizer="adam", lr=1e-2, steps=300, stop_when_learned=True)


@pytest.mark.parametrize("give_up_after", [10, 150, 200])
def test_giving_up_abandons_only_runs_that_would_have_learned_after_its_step(give_up_after):
    """Each run with and without the give-up step: a run not abandoned has every outcome it has
    without; an abandoned one would have learned after the step (or not at all), is abandoned at the
    first probe HOLD_STEPS past it, and is recorded as not learned, censored."""
    free = train_heads(rngs(12), **GIVING_UP)
    trainer = Trainer(rngs(12), **GIVING_UP, give_up_after=give_up_after)
    for t in range(1, trainer.steps + 1):
        if not trainer.running:
            break
        trainer.step(t)
    cut = trainer.outcomes()
    out = cut["abandoned"] == 1
    assert 0 < out.sum() < 12 or give_up_after == 10 and out.all()  # not vacuous
    assert np.all(free["steps_to_accuracy"][out] > give_up_after)
    for name in OUTCOMES:
        if name != "abandoned":
            assert np.array_equal(cut[name][~out], free[name][~out]), name
    first_probe = -(-(give_up_after + HOLD_STEPS) // 3) * 3
    assert np.all(trainer.abandoned_at[out] == first_probe) and np.all(trainer.abandoned_at[~out] == 301)
    assert np.all(cut["learned"][out] == 0) and np.all(cut["steps_to_accuracy"][out] == 301)
    assert np.array_equal(trainer.steps_run, np.where(out, first_probe, np.minimum(trainer.stopped_at, 300)))


def test_the_give_up_rule_follows_a_scripted_probe(monkeypatch):
    """A stretch that begins at the give-up step itself stops its run (learned) at the probe where
    the others are abandoned; one that begins a probe later is abandoned there."""
    steps, cap = 120, 15
    script = [lambda t: 0.95 if t >= 6 else 0.5, lambda t: 0.95 if t >= cap else 0.5,
              lambda t: 0.95 if t >= cap + 3 else 0.5, lambda t: 0.5]
    t, out = _scripted_run(monkeypatch, script, steps, give_up_after=cap)
    assert t.stopped_at.tolist() == [6 + HOLD_STEPS, cap + HOLD_STEPS, steps + 1, steps + 1]
    assert t.abandoned_at.tolist() == [steps + 1, steps + 1, cap + HOLD_STEPS, cap + HOLD_STEPS]
    assert out["learned"].tolist() == [1, 1, 0, 0] and out["abandoned"].tolist() == [0, 0, 1, 1]
    assert out["steps_to_accuracy"].tolist() == [6, cap, steps + 1, steps + 1]


@pytest.mark.parametrize("change, error", [
    (dict(give_up_after=0), ValueError), (dict(give_up_after=1.5), ValueError), (dict(give_up_after=True), ValueError),
    (dict(give_up_after=301), ValueError), (dict(give_up_after=50, stop_when_learned=False), ValueError),
])
def test_a_give_up_step_the_run_cannot_honour_is_refused_by_name(change, error):
    with pytest.raises(error, match="give_up_after"):
        train_heads(rngs(2), **{**GIVING_UP, **change})
    with pytest.raises(error, match="give_up_after"):
        TrainingSim(16, "none", "adam", 1e-2, 300, **{"stop_when_learned": True, **change})


def test_a_budget_shorter_than_the_hold_cannot_stop_a_run_and_is_refused():
    with pytest.raises(ValueError, match="steps must be at least"):
        train_heads(rngs(2), **{**STOPPING, "steps": HOLD_STEPS}, stop_when_learned=True)
    with pytest.raises(TypeError, match="stop_when_learned"):
        train_heads(rngs(2), **STOPPING, stop_when_learned=1)


def test_the_new_options_at_their_defaults_keep_the_stream_key():
    sim = TrainingSim(16, "sqrt", "adam", 0.03, 150)
    assert "stop" not in sim.key and "warmup" not in sim.key
    assert TrainingSim(16, "sqrt", "adam", 0.03, 150, stop_when_learned=True).key != sim.key
    assert TrainingSim(16, "sqrt", "adam", 0.03, 150, warmup=10).key != sim.key
    stop = TrainingSim(16, "sqrt", "adam", 0.03, 150, stop_when_learned=True)
    assert TrainingSim(16, "sqrt", "adam", 0.03, 150, stop_when_learned=True, give_up_after=None).key == stop.key
    assert TrainingSim(16, "sqrt", "adam", 0.03, 150, stop_when_learned=True, give_up_after=20).key != stop.key


# ------------------------------------------------------------------ warm-up


@pytest.mark.parametrize("optimizer", ["sgd", "adam", "adafactor"])
def test_warm_up_trains_step_t_at_lr_t_over_w(optimizer):
    """Step t of a warm-up of w steps is the step a cold run at lr t/w takes from the same state."""
    w, lr = 4, 0.08
    warm = Trainer(rngs(3), **{**STOPPING, "optimizer": optimizer, "lr": lr}, warmup=w)
    for t in range(1, 7):
        before = {k: v.copy() for k, v in warm.heads.params.items()}
        states = {k: {s: np.copy(a) for s, a in v.items()} for k, v in warm.states.items()}
        rates = [np.random.default_rng(0) for _ in range(3)]  # placeholders: the copy gets the warm run's streams
        cold = Trainer(rates, **{**STOPPING, "optimizer": optimizer, "lr": lr * min(t, w) / w})
        cold.heads.params, cold.heads.WV, cold.states = before, warm.heads.WV, states
        cold.rngs = [np.random.Generator(type(r.bit_generator)()) for r in warm.rngs]
        for c, r in zip(cold.rngs, warm.rngs):
            c.bit_generator.state = r.bit_generator.state
        warm.step(t)
        cold.step(t)
        for k in before:
            np.testing.assert_allclose(warm.heads.params[k], cold.heads.params[k], rtol=1e-14, atol=0, err_msg=f"{t} {k}")


def test_adams_first_step_is_lr_over_w_with_a_warm_up():
    warm = train_heads(rngs(3), **STOPPING, warmup=5)
    assert np.all(warm["adam_first_step"] <= 1)
    # The identity measured against the warmed rate: the step of a cold run at lr/5 is the same bits.
    first = Trainer(rngs(3), **STOPPING, warmup=5)
    cold = Trainer(rngs(3), **{**STOPPING, "lr": STOPPING["lr"] / 5})
    first.step(1)
    cold.step(1)
    for k in first.heads.params:
        assert np.array_equal(first.heads.params[k], cold.heads.params[k])


@pytest.mark.parametrize("warmup, error", [(-1, ValueError), (200, ValueError), (2.5, TypeError), (True, TypeError)])
def test_a_warm_up_the_budget_cannot_honour_is_refused(warmup, error):
    with pytest.raises(error, match="warmup"):
        train_heads(rngs(2), **STOPPING, warmup=warmup)
    with pytest.raises(error, match="warmup"):
        TrainingSim(16, steps=200, warmup=warmup)


# ------------------------------------------------------------------ survival


def test_kaplan_meier_and_greenwood_on_a_hand_computed_case():
    # Budget 10: learned at 1, 2, 2, 5; two censored (11).  At risk 6, 5, 3; events 1, 2, 1.
    s = survival_to_accuracy([1, 2, 2, 5, 11, 11], steps=10, by=2)
    assert s.censored == 2
    assert s.share_learned.value == pytest.approx(1 - 5 / 6 * 3 / 5, rel=1e-15)
    assert s.share_learned.mcse == pytest.approx(math.sqrt(0.25 * (1 / 30 + 2 / 15)), rel=1e-14)
    s_curve = [(0, 1, 1.0), (1, 2, 5 / 6), (2, 5, 1 / 2), (5, 11, 1 / 3)]
    assert s.restricted_mean.value == pytest.approx(sum((b - a) * v for a, b, v in s_curve), rel=1e-14)
    tails = {1: 5 / 6 + 1.5 + 2.0, 2: 1.5 + 2.0, 5: 2.0}  # the integral of S from each event time to 11
    var = tails[1] ** 2 * 1 / (6 * 5) + tails[2] ** 2 * 2 / (5 * 3) + tails[5] ** 2 * 1 / (3 * 2)
    assert s.restricted_mean.mcse == pytest.approx(math.sqrt(var), rel=1e-14)
    # Censored only at the budget's end: the restricted mean to steps + 1 is the plain mean, with its
    # plug-in standard error.
    x = np.array([3.0, 5, 5, 9, 11, 7, 11])
    r = survival_to_accuracy(x, steps=10)
    assert r.restricted_mean.value == pytest.approx(x.mean(), rel=1e-14)
    assert r.restricted_mean.mcse == pytest.approx(x.std() / math.sqrt(x.size), rel=1e-12)
    assert r.share_learned.value == pytest.approx(5 / 7, rel=1e-15)


def test_kaplan_meier_recovers_exponential_times_and_its_standard_errors_are_calibrated():
    mean_time, steps, by, n, reps = 40.0, 100, 50, 200, 300
    truth_share = 1 - math.exp(-by / mean_time)
    truth_mean = mean_time * (1 - math.exp(-(steps + 1) / mean_time))
    streams = np.random.SeedSequence(20261205).spawn(reps)
    shares, means, share_se, mean_se = [], [], [], []
    for seq in streams:
        t = np.random.default_rng(seq).exponential(mean_time, n)
        s = survival_to_accuracy(np.where(t <= steps, t, steps + 1), steps=steps, by=by)
        shares.append(s.share_learned.value)
        means.append(s.restricted_mean.value)
        share_se.append(s.share_learned.mcse)
        mean_se.append(s.restricted_mean.mcse)
    for est, se, truth in ((shares, share_se, truth_share), (means, mean_se, truth_mean)):
        est, se = np.asarray(est), np.asarray(se)
        # Unbiased within 4 MCSE of the mean over the replicates ...
        assert abs(est.mean() - truth) < 4 * est.std(ddof=1) / math.sqrt(reps)
        # ... and the Greenwood SE matches the spread of the estimates (the sd's own MCSE is sd/sqrt(2 reps), 4%).
        assert abs(np.mean(se) / est.std(ddof=1) - 1) < 0.15
