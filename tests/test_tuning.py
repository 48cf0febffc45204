"""The pilots that choose a setting (:mod:`stats.tuning`): reproducible from their own seed,
the same for any number of workers, cached by their definition, and read by the claims and the
training study."""

import json
import math

import pytest

from stats import tuning
from stats.settings import training as settings
from stats.settings.training import RatePilot

#: A pilot small enough for the fast tests: two cells of narrow heads, two rates each, a few steps.
#: It ranks rates by the final probe loss: in 8 steps no such head reaches 90% accuracy by either
#: criterion, and a pilot whose every rate is censored would not show its seed or its workers in
#: its numbers.
TINY = RatePilot(name="tiny", seed=11, cells=(((8, 8), "sqrt", "adam"), ((8, 8), "none", "sgd")),
                 grids=(("adam", (1e-2, 1e-1)), ("sgd", (0.3, 3.0))), runs=4, steps=8, n_keys=8,
                 statistic="loss_8")


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
        lrs, grid = [p["lr"] for p in pts], list(TINY.grid(cell[2]))
        assert lrs == sorted(lrs) and grid[0] in lrs and lrs[lrs.index(grid[0]):][:len(grid)] == grid
        assert lrs == grid or not one.interior(cell) or one.extended(cell)  # extended only at an edge
        assert all(p["n"] == TINY.runs for p in pts)
        assert all(0 < v < math.inf for p in pts for v in p["rows"])  # final probe losses, finite


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


def test_the_mup_base_rates_are_cached_as_drawn_and_drawn_again_when_damaged(tmp_path, monkeypatch):
    """The muP base-rate pilot (every process that builds the registry asks for it) is drawn once:
    the cache gives what drawing gives, exactly, and a damaged cache is drawn again."""
    monkeypatch.setenv("SDPA_CACHE", str(tmp_path))
    tuning.mup_base_rates.cache_clear()
    try:
        cold = tuning.mup_base_rates()
        assert cold == tuning._draw_mup_base_rates(tuning._mup_pilot_jobs())
        (path,) = (tmp_path / "pilots").glob("mup-base-rates-*.json")
        tuning.mup_base_rates.cache_clear()

        def no_draw(pilots):
            raise AssertionError("the cached muP base rates were drawn again")

        with monkeypatch.context() as m:
            m.setattr(tuning, "_draw_mup_base_rates", no_draw)
            assert tuning.mup_base_rates() == cold
        path.write_text("{not json")
        tuning.mup_base_rates.cache_clear()
        assert tuning.mup_base_rates() == cold and json.loads(path.read_text())["rates"]
    finally:
        tuning.mup_base_rates.cache_clear()


def test_the_claims_best_rates_are_the_pilots(monkeypatch):
    monkeypatch.setattr(tuning, "best_rates", lambda pilot: {"chosen by": pilot.name})
    assert tuning.training_best_lr() == {"chosen by": settings.RATE_PILOT.name}


def test_the_claims_and_the_study_read_the_rates_the_pilot_chooses():
    from analyses import training as study
    from stats.claims.statements import training as statements

    rates = tuning.training_best_lr()
    assert statements.BEST_LR == rates and set(rates) == set(settings.RATE_PILOT.cells) == set(settings.BEST_LR_CELLS)
    result = tuning.pilot_result(settings.RATE_PILOT)
    for cell, lr in rates.items():  # a rate the pilot tried: its grid's, or one of its extensions
        assert lr in [p["lr"] for p in result.points[cell]]
        assert lr in settings.GRIDS[cell[2]] or lr in result.extended(cell)
    wide = [s for s in study.cells(quick=False) if s.d_model == 256 and s.scaling in settings.CURVE_SCALINGS]
    assert {s.lr for s in wide if study.runs(s, quick=False) == settings.STUDY_WIDE_RUNS} >= {
        lr for ((d_k, d_model), sc, opt), lr in rates.items() if (d_k, d_model) == (256, 256)}


def _scripted(steps_at):
    """A stand-in for the pilot's engine call: every run of a cell at rate lr takes ``steps_at(lr)`` steps."""
    def draw(pilot, cell_rates, **kwargs):
        return {cell: dict(lr=lr, mean=steps_at(lr), se=0.0, n=pilot.runs, rows=[steps_at(lr)] * pilot.runs)
                for cell, lr in cell_rates}
    return draw


def test_a_best_rate_at_the_grid_top_is_extended_until_interior(monkeypatch):
    # Fastest at 10: the grid (0.3, 3) puts the best at its top; one extension (10) is still the
    # top; the second (30) brings 10 inside.
    monkeypatch.setattr(tuning, "_draw", _scripted(lambda lr: 5.0 + abs(math.log10(lr) - 1.0)))
    result = tuning.run_rate_pilot(TINY)
    cell = TINY.cells[1]  # the SGD cell, grid (0.3, 3.0)
    assert [p["lr"] for p in result.points[cell]] == [0.3, 3.0, 10.0, 30.0]
    assert result.best[cell] == 10.0 and result.interior(cell) and result.extended(cell) == [10.0, 30.0]


def test_an_extension_is_capped_and_its_best_reported_as_a_bound(monkeypatch):
    monkeypatch.setattr(tuning, "_draw", _scripted(lambda lr: 100.0 / (1.0 + lr)))  # ever faster: no optimum
    result = tuning.run_rate_pilot(TINY)
    cell = TINY.cells[1]
    assert result.extended(cell) == [10.0, 30.0, 100.0] and len(result.extended(cell)) == TINY.max_extensions
    assert result.best[cell] == 100.0 and not result.interior(cell) and result.edge(cell) == 1
    # and at the bottom: ever slower, so the smallest rate wins and the grid grows downwards
    monkeypatch.setattr(tuning, "_draw", _scripted(lambda lr: 1.0 + lr))
    low = tuning.run_rate_pilot(TINY)
    assert low.extended(TINY.cells[0]) == [3e-4, 1e-3, 3e-3]
    assert low.edge(TINY.cells[0]) == -1 and not low.interior(TINY.cells[0])


def test_an_interior_best_is_not_extended(monkeypatch):
    monkeypatch.setattr(tuning, "_draw", _scripted(lambda lr: 9.0))  # a tie everywhere: the smaller rate
    tied = tuning.run_rate_pilot(TINY)
    assert all(tied.edge(c) == -1 for c in TINY.cells)  # a tie goes to the bottom edge, which is extended
    wide = RatePilot(**{**TINY.__dict__, "grids": (("adam", (1e-3, 1e-2, 1e-1)), ("sgd", (0.3, 1.0, 3.0)))})
    monkeypatch.setattr(tuning, "_draw", _scripted(lambda lr: 5.0 + abs(math.log10(lr) + 2.0) if lr < 0.2
                                                   else 5.0 + abs(math.log10(lr))))
    result = tuning.run_rate_pilot(wide)
    assert all(result.interior(c) and result.extended(c) == [] for c in wide.cells)


@pytest.mark.parametrize("lr, direction, match", [(0.0, 1, "lr"), (float("nan"), 1, "lr"), ("3", 1, "lr"),
                                                  (3.0, 2, "direction"), (3.0, 0, "direction")])
def test_half_decade_names_the_bad_argument(lr, direction, match):
    with pytest.raises((ValueError, TypeError), match=match):
        tuning.half_decade(lr, direction)


def test_half_decade_walks_the_grids_series():
    assert [tuning.half_decade(v, 1) for v in (3.0, 10.0, 0.1, 0.03)] == [10.0, 30.0, 0.3, 0.1]
    assert [tuning.half_decade(v, -1) for v in (0.03, 0.01, 1e-3, 3.0)] == [0.01, 3e-3, 3e-4, 1.0]


def test_the_t5_claims_read_the_t5_pilot():
    from stats.claims.statements import training_fixes
    from stats.settings import fixes

    for opt in fixes.T5_OPTIMIZERS:
        for sc in ("t5", "sqrt"):
            assert training_fixes.t5_rate(sc, opt)[0] == tuning.t5_best_lr()[(fixes.T5_WIDTH, fixes.T5_WIDTH), sc, opt]
