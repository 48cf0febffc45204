"""The adaptive learning-rate search (:mod:`stats.lr_search`): reproducible from its seed, each stage
on draws of its own, its choice interior or flagged, and -- with a criterion of known shape in
place of training -- finding the known optimum to a quarter decade, inside or beyond its first grid."""

import dataclasses
import json
import math

import numpy as np
import pytest

from stats import lr_search
from stats.lr_search import RatePoint

#: A cell cheap enough for the fast tier: 16 wide, 20 steps, 8 keys, a few runs a stage.
CHEAP = dict(d_k=16, scaling="sqrt", optimizer="adam", seed=7, start=0.01, options=dict(steps=20, n_keys=8),
             coarse_runs=2, refine_runs=2, confirm_runs=3)


#: A cell whose runs stop once they learn, in a few to a hundred steps below its cliff and never above
#: it: the refine and confirm stages have rates to give up on.
STOPPING = dict(d_k=32, scaling="sqrt", optimizer="adam", seed=7, start=0.01,
                options=dict(steps=200, stop_when_learned=True, dtype="float32"), coarse_runs=2, refine_runs=3, confirm_runs=4)


#: The same on the transformer's MQAR (``task="recall"``): one pair in sequences of 8, solved in 25 to
#: 150 steps below its cliff; its runs always stop once solved.
RECALL_STOPPING = dict(d_k=16, scaling="sqrt", optimizer="adam", seed=7, start=0.01, task="recall",
                       options=dict(steps=200, vocab=8, length=8, pairs=1, batch=16, warmup=5), coarse_runs=2,
                       refine_runs=3, confirm_runs=4)


def _stages_json(search, names):
    return json.dumps([s for s in search.to_json()["stages"] if s["name"] in names], sort_keys=True)


def test_the_same_seed_gives_the_same_record_and_another_seed_another():
    a, b = lr_search.search_rate(**CHEAP), lr_search.search_rate(**CHEAP)
    assert a == b and json.dumps(a.to_json()) == json.dumps(b.to_json())
    assert [s.name for s in a.stages] == ["coarse", "refine", "confirm"]
    assert lr_search.search_rate(**{**CHEAP, "seed": 8}).to_json()["stages"] != a.to_json()["stages"]
    assert lr_search.RateSearch.from_json(json.loads(json.dumps(a.to_json()))) == a


def test_a_stage_draws_on_its_own_stream():
    """More confirm runs leave the coarse and refine stages' numbers as they were, byte for byte;
    the confirm stage's first runs are its own draws, not shifted by the earlier stages."""
    base = lr_search.search_rate(**CHEAP)
    more = lr_search.search_rate(**{**CHEAP, "confirm_runs": 5})
    assert _stages_json(more, ("coarse", "refine")) == _stages_json(base, ("coarse", "refine"))
    for p, q in zip(base.stage("confirm").points, more.stage("confirm").points):
        assert p.lr == q.lr and q.steps_rows[:3] == p.steps_rows and q.n == 5
    refine_more = lr_search.search_rate(**{**CHEAP, "refine_runs": 3})
    assert _stages_json(refine_more, ("coarse",)) == _stages_json(base, ("coarse",))
    # every rate of a stage shares its draws (the same initialisations: the same step-0 probe losses);
    # the stages do not
    for stage in base.stages:
        assert len({p.initial_rows for p in stage.points}) == 1
    firsts = [s.points[0].initial_rows[:2] for s in base.stages]
    assert len(set(firsts)) == 3


def test_the_chosen_rate_is_interior_or_flagged():
    search = lr_search.search_rate(**CHEAP)
    confirm = search.stage("confirm")
    assert search.rate == confirm.best and search.interior == (search.bound == 0)
    if search.interior:
        assert confirm.rates[0] < search.rate < confirm.rates[-1]
    rates = [p.lr for p in confirm.points]
    assert rates == sorted(rates) and all(p.n == CHEAP["confirm_runs"] for p in confirm.points)


def _scripted(steps_at, loss_at=lambda lr: 0.1):
    """A stand-in for training: every run at rate lr takes ``steps_at(lr)`` steps and ends at loss ``loss_at(lr)``."""
    calls = []

    def draw(cell, lr, runs, stage_seed, **kwargs):
        calls.append(lr)
        s, loss = float(steps_at(lr)), float(loss_at(lr))
        return RatePoint(lr, runs, s, 0.0, loss, 0.0, (s,) * runs, (loss,) * runs, (0.7,) * runs)

    draw.calls = calls
    return draw


def _valley(optimum):
    return lambda lr: 10.0 + 40.0 * abs(math.log10(lr) - math.log10(optimum))


@pytest.mark.parametrize("optimum, start", [(0.0178, 0.01), (0.025, 0.01), (0.7, 0.3), (0.01, 1.0), (1.0, 0.01)])
def test_a_known_valley_is_found_to_a_quarter_decade(monkeypatch, optimum, start):
    """Optima on and off the lattice, inside the first grid (0.0178, 0.025, 0.7) and beyond it
    (0.01 from a grid 0.1-10 around 1, 1.0 from 1e-3-0.1 around 0.01: three extensions each)."""
    monkeypatch.setattr(lr_search, "_draw", _scripted(_valley(optimum)))
    search = lr_search.search_rate(**{**CHEAP, "start": start})
    assert search.interior and search.bound == 0 and len(search.stages) == 3
    assert abs(math.log10(search.rate) - math.log10(optimum)) <= 1 / 8 + 1e-3  # the nearest quarter-decade rate
    coarse = search.stage("coarse")
    assert coarse.rates[0] < coarse.best < coarse.rates[-1]
    assert len(coarse.rates) <= CHEAP.get("coarse_width", 5) + 3


def test_a_best_past_the_extensions_is_a_bound_not_an_optimum(monkeypatch):
    monkeypatch.setattr(lr_search, "_draw", _scripted(lambda lr: 100.0 / (1.0 + lr)))  # ever faster
    up = lr_search.search_rate(**CHEAP)
    assert not up.interior and up.bound == 1 and [s.name for s in up.stages] == ["coarse"]
    assert up.rate == up.stage("coarse").rates[-1] and len(up.stage("coarse").rates) == 5 + 3
    monkeypatch.setattr(lr_search, "_draw", _scripted(lambda lr: 9.0))  # a tie everywhere: the smaller rate
    tied = lr_search.search_rate(**CHEAP)
    assert tied.bound == -1 and tied.rate == tied.stage("coarse").rates[0] == lr_search.lattice_rate(-18)


def test_where_nothing_learns_the_final_loss_decides(monkeypatch):
    # Every run censored (21 = steps + 1) at every rate: the capped final loss, smallest at 0.1, decides.
    draw = _scripted(lambda lr: 21.0, loss_at=lambda lr: 0.2 + abs(math.log10(lr) + 1.0))
    monkeypatch.setattr(lr_search, "_draw", draw)
    search = lr_search.search_rate(**CHEAP)
    assert search.rate == 0.1 and search.interior


def test_the_steps_rule_comes_before_the_loss():
    fast = RatePoint(0.1, 2, 5.0, 0.0, 0.4, 0.0, (5.0, 5.0), (0.4, 0.4), (0.7, 0.7))
    slow = RatePoint(0.01, 2, 6.0, 0.0, 0.1, 0.0, (6.0, 6.0), (0.1, 0.1), (0.7, 0.7))
    assert min([slow, fast], key=RatePoint.order) is fast
    tie = RatePoint(0.3, 2, 5.0, 0.0, 0.4, 0.0, (5.0, 5.0), (0.4, 0.4), (0.7, 0.7))
    assert min([tie, fast], key=RatePoint.order) is fast  # a tie of both: the smaller rate


def test_the_lattice_is_quarter_decades():
    assert [lr_search.lattice_rate(k) for k in range(-8, -3)] == [0.01, 0.0178, 0.0316, 0.0562, 0.1]
    assert lr_search.lattice_rate(0) == 1.0 and lr_search.lattice_rate(2) == 3.16


def test_a_cached_search_is_what_running_it_gives_and_is_not_run_again(tmp_path, monkeypatch):
    monkeypatch.setenv("SDPA_CACHE", str(tmp_path))
    lr_search._cached.cache_clear()
    try:
        cold = lr_search.cached_rate_search(**CHEAP)
        assert cold == lr_search.search_rate(**CHEAP)
        assert len(list((tmp_path / "lr-search").glob("*.json"))) == 1
        lr_search._cached.cache_clear()

        def refuse(**kwargs):
            raise AssertionError("a cached search was run again")

        monkeypatch.setattr(lr_search, "search_rate", refuse)
        assert lr_search.cached_rate_search(**CHEAP) == cold
        with pytest.raises(AssertionError, match="run again"):  # another option is another entry
            lr_search.cached_rate_search(**{**CHEAP, "options": dict(steps=21, n_keys=8)})
    finally:
        lr_search._cached.cache_clear()


def _tiny_profile():
    from stats.settings.decisive import DecisiveProfile

    # Two shapes: one under every variant (10 searches), one under the warm-up Adam alone (3).
    return DecisiveProfile(name="tiny", shapes=((8, 8), (8, 16)), budget=64, dtype="float32", coarse_runs=2,
                           refine_runs=2, confirm_runs=2, seed=11, practice_only=((8, 16),))


def _clear():
    lr_search._cached.cache_clear()
    lr_search.profile_search.cache_clear()


def test_a_profile_drawn_side_by_side_is_the_profile_drawn_one_search_at_a_time(tmp_path, monkeypatch):
    """The searches drawn on two processes are, search for search, the ones drawn in turn in this
    process (a fresh cache each), and a second call reads the cache without drawing again."""
    profile = _tiny_profile()
    _clear()
    try:
        monkeypatch.setenv("SDPA_CACHE", str(tmp_path / "side"))
        side = lr_search.profile_searches(profile, workers=2)
        assert list(side) == list(profile.searches()) and len(side) == 13
        assert len(list((tmp_path / "side" / "lr-search").glob("*.json"))) == 13
        _clear()
        monkeypatch.setenv("SDPA_CACHE", str(tmp_path / "turn"))
        turn = {key: lr_search.profile_search(profile, key[0], key[3], key[1], key[2]) for key in profile.searches()}
        assert side == turn
        _clear()
        monkeypatch.setattr(lr_search, "search_rate", lambda **kw: (_ for _ in ()).throw(AssertionError("drawn again")))
        assert lr_search.profile_searches(profile, workers=2) == turn
    finally:
        _clear()


def test_recall_searches_drawn_side_by_side_are_the_ones_drawn_alone(tmp_path, monkeypatch):
    """``draw_searches`` draws what is not cached, whatever it trains (two recall searches and a head's
    here, on two processes), and each is then the search run alone; drawn again, nothing is."""
    sets = [RECALL_STOPPING, dict(RECALL_STOPPING, seed=8), dict(CHEAP)]
    _clear()
    try:
        monkeypatch.setenv("SDPA_CACHE", str(tmp_path))
        # one missing search is left to cached_rate_search (all cores inside the search): none drawn here
        assert lr_search.draw_searches(sets[:1], workers=2) == 0
        assert lr_search._cache_io(lr_search._frozen(sets[0]))[2]() is None
        assert lr_search.draw_searches(sets + sets[:1], workers=2) == 3
        for arguments in sets:
            assert lr_search.cached_rate_search(**arguments) == lr_search.search_rate(**arguments)
        _clear()
        assert lr_search.draw_searches(sets, workers=2) == 0
    finally:
        _clear()


@pytest.mark.parametrize("workers", [0, -1, 1.5, True, "2"])
def test_profile_searches_refuses_a_bad_worker_count(workers):
    with pytest.raises(ValueError, match="workers"):
        lr_search.profile_searches(_tiny_profile(), workers=workers)
    with pytest.raises(ValueError, match="workers"):
        lr_search.draw_searches([RECALL_STOPPING], workers=workers)


def test_a_rate_keeps_each_runs_probe_over_time():
    """Per run: the share of queries on their step-0 key at every checkpoint (1 at step 0), and the
    final target logit and q-k cosine, as the trainer reports them for the same runs."""
    from stats.engine.executors import Job, run_simulations
    from stats.formulas import FORMULAS
    from stats.training.diagnostics import CHECKPOINTS

    search = lr_search.search_rate(**CHEAP)
    stage = search.stage("coarse")
    p = stage.points[0]
    assert len(p.frozen_rows) == p.n and all(len(r) == CHECKPOINTS and r[0] == 1.0 for r in p.frozen_rows)
    assert all(0.0 <= v <= 1.0 for r in p.frozen_rows for v in r)
    assert len(p.logit_rows) == len(p.cosine_rows) == p.n and all(-1.0 <= c <= 1.0 for c in p.cosine_rows)
    cell = search.cell
    job = Job(lr_search._sim(cell, p.lr), p.n, frozenset({"frozen_3", "target_logit_8", "cosine_8"}),
              stream=lr_search._stream(cell))
    res = run_simulations([job], seed=lr_search._stage_seed(CHEAP["seed"], 0), formulas=FORMULAS)[job.key]
    assert [r[3] for r in p.frozen_rows] == list(res.rows("frozen_3"))
    assert p.logit_rows == tuple(res.rows("target_logit_8")) and p.cosine_rows == tuple(res.rows("cosine_8"))


@pytest.mark.parametrize("change, match", [
    (dict(options=dict(lr=0.1)), "options"), (dict(options=dict(bogus=1)), "options"), (dict(options=[1]), "options"),
    (dict(start=0.0), "start"), (dict(start=math.nan), "start"), (dict(start="0.1"), "start"),
    (dict(coarse_runs=1), "coarse_runs"), (dict(confirm_runs=2.5), "confirm_runs"), (dict(coarse_width=2), "coarse_width"),
    (dict(max_extensions=-1), "max_extensions"), (dict(seed=-1), "seed"), (dict(seed=np.random.SeedSequence(1)), "seed"),
    (dict(d_k=0), "d_k"), (dict(scaling="cube"), "scaling"), (dict(options=dict(steps=0)), "steps"),
])
def test_bad_arguments_are_refused_by_name(change, match):
    with pytest.raises((ValueError, TypeError), match=match):
        lr_search.search_rate(**{**CHEAP, **change})


@pytest.mark.parametrize("k", [0.5, 33, True, "1"])
def test_lattice_rate_refuses_what_is_not_a_lattice_index(k):
    with pytest.raises(ValueError, match="k must"):
        lr_search.lattice_rate(k)


def test_a_stage_not_run_is_refused_by_name(monkeypatch):
    monkeypatch.setattr(lr_search, "_draw", _scripted(lambda lr: 100.0 / (1.0 + lr)))
    with pytest.raises(ValueError, match="name"):
        lr_search.search_rate(**CHEAP).stage("confirm")
    with pytest.raises(TypeError, match="workers"):
        lr_search.cached_rate_search(**CHEAP, workers=2)


def test_a_stage_gives_the_window_its_losses():
    """Each stage's rates are evenly spaced in log rate (whatever its extensions), so its losses
    feed the learning-rate window and the LR sensitivity directly."""
    from stats import lr_sensitivity, lr_window

    search = lr_search.search_rate(**CHEAP)
    for stage in search.stages:
        rates, losses, initial = stage.losses()
        assert losses.shape == (len(rates), stage.runs) and initial.shape == (stage.runs,)
        assert np.all(losses <= initial[None, :])  # capped at each run's initial loss
        win = lr_window(rates, losses, initial)
        assert rates[0] <= win.low <= win.high <= rates[-1] and math.isfinite(win.mcse)
        assert lr_sensitivity(rates, losses, initial).value >= 0


def test_the_command_prints_every_stage_and_its_window(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SDPA_CACHE", str(tmp_path))
    lr_search._cached.cache_clear()
    try:
        assert lr_search.main(["--d-k", "16", "--start", "0.01", "--steps", "20", "--seed", "7", "--coarse-runs", "2",
                               "--refine-runs", "2", "--confirm-runs", "3"]) == 0
    finally:
        lr_search._cached.cache_clear()
    out = capsys.readouterr().out
    assert "chosen rate" in out and all(f"{name}:" in out for name in ("coarse", "refine", "confirm"))
    assert out.count("LR sensitivity") == 3 and "steps=20" in out


def test_a_refined_best_past_its_extensions_is_a_bound(monkeypatch):
    """Coarse sees a valley at 0.01; the refine stage (its own draws) finds ever faster rates: it is
    extended a quarter decade at a time, three times, and the search stops with a bound."""
    def draw(cell, lr, runs, stage_seed, **kwargs):
        stage = stage_seed.spawn_key[-1]
        s = _valley(0.01)(lr) if stage == 0 else 100.0 / (1.0 + lr)
        return RatePoint(lr, runs, s, 0.0, 0.1, 0.0, (s,) * runs, (0.1,) * runs, (0.7,) * runs)

    monkeypatch.setattr(lr_search, "_draw", draw)
    search = lr_search.search_rate(**CHEAP)
    assert [s.name for s in search.stages] == ["coarse", "refine"] and search.stage("coarse").best == 0.01
    assert not search.interior and search.bound == 1
    assert search.stage("refine").rates == tuple(lr_search.lattice_rate(k) for k in range(-10, -2))
    assert search.rate == lr_search.lattice_rate(-3)


@pytest.mark.parametrize("cell, given_up", [(STOPPING, 3), (RECALL_STOPPING, 1)], ids=["head", "recall"])
def test_giving_up_changes_no_choice_and_only_the_rows_of_rates_that_cannot_be_chosen(cell, given_up):
    """The same search with and without giving up: the same stages, rates, bests and choice; a rate
    that gave up on none of its runs has the rows it has without; one that gave up on some is not
    its stage's best, and each run whose row changed would have learned after the give-up step."""
    full, cut = lr_search.search_rate(**cell, give_up=False), lr_search.search_rate(**cell)
    assert (cut.rate, cut.interior, cut.bound) == (full.rate, full.interior, full.bound)
    assert [(s.name, s.rates, s.best, s.edge) for s in cut.stages] == [(s.name, s.rates, s.best, s.edge) for s in full.stages]
    assert cut.stages[0] == full.stages[0]  # the coarse stage never gives up: the window reads its losses
    budget = cell["options"]["steps"]
    abandoned = 0
    for before, s_full, s_cut in zip(cut.stages, full.stages[1:], cut.stages[1:]):
        best = min(s_cut.points, key=RatePoint.order)
        # the previous stage's best is drawn first, with nothing to give up against
        assert next(q for q in s_cut.points if q.lr == before.best).give_up_after is None
        for p, q in zip(s_full.points, s_cut.points):
            assert p.give_up_after is None and p.abandoned == 0
            # sound: a run past the step puts the rate's sum (its other runs at >= 1 step each) past the best's
            assert q.give_up_after is None or q.give_up_after + 1 + (q.n - 1) > sum(best.steps_rows)
            if not q.abandoned:
                assert dataclasses.replace(q, give_up_after=None) == p
                continue
            abandoned += q.abandoned
            assert q.lr != s_cut.best and q.order() > best.order()
            changed = [i for i in range(q.n) if q.steps_rows[i] != p.steps_rows[i]]
            assert len(changed) <= q.abandoned
            assert all(q.steps_rows[i] == budget + 1 and p.steps_rows[i] > q.give_up_after for i in changed)
            # and the rate's sum, had it run on, is past the best's: the bound the give-up step rests on
            assert sum(p.steps_rows) > sum(best.steps_rows)
    assert abandoned >= given_up  # not vacuous: rates above the cliff were given up on


def test_a_recall_search_reads_the_recall_runs():
    """``task="recall"``: every point's rows are its runs' steps to solve (one past the budget when
    unsolved), held-out losses (capped at step 0's) and final largest logits, drawn on the cell's
    own stream; the record says what was trained, and survives JSON."""
    from stats.engine.executors import Job, run_simulations
    from stats.formulas import FORMULAS

    search = lr_search.search_rate(**RECALL_STOPPING, give_up=False)
    assert search.task == "recall" and lr_search.RateSearch.from_json(json.loads(json.dumps(search.to_json()))) == search
    cell, stage = search.cell, search.stages[0]
    p = stage.points[0]
    job = Job(lr_search._sim(cell, p.lr, task="recall"), p.n, frozenset({"steps_to_solve", "loss_end", "loss_0", "max_logit_end"}),
              stream=lr_search._stream(cell, "recall"))
    res = run_simulations([job], seed=lr_search._stage_seed(search.seed, 0), formulas=FORMULAS)[job.key]
    assert p.steps_rows == tuple(res.rows("steps_to_solve")) and p.initial_rows == tuple(res.rows("loss_0"))
    assert p.loss_rows == tuple(np.minimum(res.rows("loss_end"), res.rows("loss_0")))
    assert p.logit_rows == tuple(res.rows("max_logit_end")) and p.frozen_rows == () and p.cosine_rows == ()
    assert lr_search._stream(cell, "recall") != lr_search._stream(cell, "head")


@pytest.mark.parametrize("change, match", [
    (dict(task="mqar"), "task"), (dict(optimizer="sgd"), "optimizer"), (dict(d_k=8, d_model=16), "d_k"),
    (dict(options=dict(give_up_after=3)), "options"), (dict(options=dict(n_keys=8)), "options"),
    (dict(options=dict(RECALL_STOPPING["options"], pairs=9)), "pairs"),
])
def test_a_recall_search_refuses_what_the_recall_model_cannot_train(change, match):
    with pytest.raises((ValueError, TypeError), match=match):
        lr_search.search_rate(**{**RECALL_STOPPING, **change})


def test_a_search_whose_runs_do_not_stop_never_gives_up():
    search = lr_search.search_rate(**CHEAP)
    assert all(p.give_up_after is None and p.abandoned == 0 for s in search.stages for p in s.points)
    with pytest.raises(TypeError, match="give_up"):
        lr_search.search_rate(**CHEAP, give_up=1)
