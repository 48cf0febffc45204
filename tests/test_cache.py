"""The cache on disk (stats/cache.py): a persistent value is what calling its function again would
give, under the sources it was computed from, and a cache it cannot use is passed over."""

from __future__ import annotations

import os

import pytest

from stats import cache
from stats.models.saturation_quadrature import saturation_exact


def _counted(kind="test-values"):
    calls = []

    @cache.persistent(kind)
    def square(x, label=""):
        calls.append((x, label))
        return {"x": x, "square": x * x, "label": label}

    return square, calls


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.setenv("SDPA_CACHE", str(tmp_path))
    return tmp_path


def test_a_value_is_computed_once_and_read_back_by_the_next_process(here):
    square, calls = _counted()
    assert square(3, "a") == {"x": 3, "square": 9, "label": "a"} and calls == [(3, "a")]
    assert square(3, "a") == square(3, "a") and len(calls) == 1  # memory
    square.cache_clear()  # as a new process would start
    assert square(3, "a") == {"x": 3, "square": 9, "label": "a"} and len(calls) == 1  # disk
    assert square(3, "b")["label"] == "b" and square(3.0, "a")["square"] == 9.0 and len(calls) == 3  # other keys
    assert len(list((here / "values").rglob("*.pkl"))) == 3


def test_other_sources_get_other_entries_and_theirs_are_removed(here, monkeypatch):
    square, calls = _counted()
    square(2)
    [old] = list((here / "values").iterdir())
    monkeypatch.setattr(cache, "_values_digest", lambda: "f" * 64)
    square.cache_clear()
    square(2)
    assert len(calls) == 2  # not read from the other sources' entry
    assert [p.name for p in (here / "values").iterdir()] == ["f" * 24] and not old.exists()


def test_an_unreadable_entry_is_computed_again(here):
    square, calls = _counted()
    square(5)
    [entry] = list((here / "values").rglob("*.pkl"))
    entry.write_bytes(b"not a pickle")
    square.cache_clear()
    assert square(5)["square"] == 25 and len(calls) == 2
    square.cache_clear()
    assert square(5)["square"] == 25 and len(calls) == 2  # and stored again


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_cache_that_cannot_be_written_is_passed_over(here):
    here.chmod(0o500)
    try:
        square, calls = _counted()
        assert square(4)["square"] == 16 and square(4)["square"] == 16 and len(calls) == 1
    finally:
        here.chmod(0o700)


def test_a_cache_folder_that_is_a_file_is_passed_over(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("SDPA_CACHE", str(blocker))
    square, calls = _counted()
    assert square(4)["square"] == 16 and len(calls) == 1


def test_arguments_whose_repr_does_not_say_their_value_are_refused(here):
    square, _ = _counted()
    with pytest.raises(TypeError, match="numbers, strings and tuples"):
        square([1, 2])
    with pytest.raises(TypeError, match="numbers, strings and tuples"):
        square((1, object()))
    with pytest.raises(ValueError, match="kind must be"):
        cache.persistent("a/b")


def test_the_exact_values_are_the_same_cold_and_warm(here):
    """saturation_exact through its persistent quadrature: the warm value is the cold one, exactly."""
    from stats.models.saturation_quadrature import _exact_cached

    _exact_cached.cache_clear()
    cold = saturation_exact(64, 16, scaling="none")
    _exact_cached.cache_clear()
    warm = saturation_exact(64, 16, scaling="none")
    assert cold.equals(warm) and any((here / "values").rglob("*.pkl"))


def test_an_error_of_the_function_s_own_is_raised_as_it_is_and_nothing_is_kept(here):
    @cache.persistent("test-errors")
    def refuse(x):
        raise ValueError(f"x must be positive; got {x}")

    with pytest.raises(ValueError, match="x must be positive") as info:
        refuse(-1)
    assert info.value.__context__ is None  # not "during handling of" the cache's own miss
    assert not list((here / "values").rglob("*.pkl"))


@cache.persistent("test-concurrent")
def _slow_logged(log, x):
    with open(log, "a") as f:
        f.write(f"{x}\n")
    import time

    time.sleep(0.5)
    return x * 2


def test_processes_asking_at_once_compute_a_value_once(here):
    """Two processes (the claims and a study, side by side in make reports) ask for one value at once: one
    computes it under its lock, the other waits and reads it."""
    import multiprocessing

    log = here / "computed.log"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_slow_logged, args=(str(log), 21)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=30)
    assert [p.exitcode for p in procs] == [0, 0]
    assert log.read_text().split() == ["21"] and _slow_logged(str(log), 21) == 42
