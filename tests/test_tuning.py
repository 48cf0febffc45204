"""The pilots that choose a setting (:mod:`stats.tuning`): reproducible from their own seed,
the same for any number of workers, cached by their definition, and read by the claims and the
training study."""

import json

import pytest

from stats import tuning
from stats.settings import training as settings
from stats.settings.training import RatePilot

#: A pilot small enough for the fast tests: two cells of narrow heads, two rates each, a few steps.
TINY = RatePilot(name="tiny", seed=11, cells=(((8, 8), "sqrt", "adam"), ((8, 8), "none", "sgd")),
                 grids=(("adam", (1e-2, 1e-1)), ("sgd", (0.3, 3.0))), runs=4, steps=8, n_keys=8)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache of this test's own, and no result kept in this process from another test."""
    monkeypatch.setenv("SDPA_CACHE", str(tmp_path))
    tuning._cached_result.cache_clear()
    yield tmp_path / "pilots"
    tuning._cached_result.cache_clear()


def test_a_pilot_is_the_same_for_any_number_of_workers():
    one, two = tuning.run_rate_pilot(TINY, workers=1), tuning.run_rate_pilot(TINY, workers=2)
    assert one.to_json() == two.to_json()
    assert set(one.best) == set(TINY.cells)
    for cell, pts in one.points.items():
        assert [p["lr"] for p in pts] == list(TINY.grid(cell[2])) and all(p["n"] == TINY.runs for p in pts)
        assert all(1 <= v <= TINY.steps + 1 for p in pts for v in p["rows"])  # steps to accuracy, censored at steps + 1


def test_a_pilot_draws_on_its_own_seed():
    other = tuning.run_rate_pilot(RatePilot(**{**TINY.__dict__, "seed": TINY.seed + 1}))
    assert other.to_json() != tuning.run_rate_pilot(TINY).to_json()


def test_the_rule_takes_the_smallest_restricted_mean_and_a_tie_to_the_smaller_rate():
    cell = TINY.cells[0]
    pts = lambda *rows: {cell: [dict(lr=lr, rows=list(r)) for lr, r in zip(TINY.grid("adam"), rows)]}  # noqa: E731
    assert tuning.RatePilotResult(TINY, pts((5.0, 7.0), (4.0, 6.0))).best == {cell: 1e-1}
    assert tuning.RatePilotResult(TINY, pts((5.0, 7.0), (6.0, 7.0))).best == {cell: 1e-2}
    assert tuning.RatePilotResult(TINY, pts((9.0, 9.0), (9.0, 9.0))).best == {cell: 1e-2}


def test_a_cached_pilot_gives_what_running_it_gives_and_is_not_drawn_again(cache, monkeypatch):
    cold = tuning.best_rates(TINY)
    files = list(cache.glob("tiny-*.json"))
    assert len(files) == 1 and json.loads(files[0].read_text())["best"]
    assert cold == tuning.run_rate_pilot(TINY).best
    tuning._cached_result.cache_clear()

    def no_run(*args, **kwargs):
        raise AssertionError("the cached pilot was drawn again")

    monkeypatch.setattr(tuning, "run_rate_pilot", no_run)
    assert tuning.best_rates(TINY) == cold


def test_another_definition_is_another_cache_entry(cache, monkeypatch):
    tuning.best_rates(TINY)
    first = {p.name for p in cache.glob("tiny-*.json")}
    longer = RatePilot(**{**TINY.__dict__, "steps": TINY.steps + 1})
    tuning.best_rates(longer)
    second = {p.name for p in cache.glob("tiny-*.json")}
    assert len(second) == 1 and second != first  # the stale entry goes


def test_a_damaged_cache_is_drawn_again(cache):
    cold = tuning.best_rates(TINY)
    (path,) = cache.glob("tiny-*.json")
    path.write_text("{not json")
    tuning._cached_result.cache_clear()
    assert tuning.best_rates(TINY) == cold
    assert json.loads(path.read_text())["best"]


def test_the_claims_best_rates_are_the_pilots(monkeypatch):
    monkeypatch.setattr(tuning, "best_rates", lambda pilot: {"chosen by": pilot.name})
    assert tuning.training_best_lr() == {"chosen by": settings.RATE_PILOT.name}


def test_the_claims_and_the_study_read_the_rates_the_pilot_chooses():
    from analyses import training as study
    from stats.claims.statements import training as statements

    rates = tuning.training_best_lr()
    assert statements.BEST_LR == rates and set(rates) == set(settings.RATE_PILOT.cells) == set(settings.BEST_LR_CELLS)
    for cell, lr in rates.items():
        assert lr in settings.GRIDS[cell[2]]
    wide = [s for s in study.cells(quick=False) if s.d_model == 256 and s.scaling in settings.CURVE_SCALINGS]
    assert {s.lr for s in wide if study.runs(s, quick=False) == settings.STUDY_WIDE_RUNS} >= {
        lr for ((d_k, d_model), sc, opt), lr in rates.items() if (d_k, d_model) == (256, 256)}
