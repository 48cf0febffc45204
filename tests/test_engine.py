"""The engine: results depend on (seed, key, n) only -- not on workers, chunking or which
other simulations run -- and merged block summaries equal the summary of all rows."""

import numpy as np
import pytest

from stats import (
    FORMULAS,
    Job,
    SaturationSim,
    ScoreSim,
    SimFailure,
    entry_law,
    moment_summary,
    run_simulation,
    run_simulations,
    simulation_seed,
    stream_key,
    summarize_rows,
    merge_row_summaries,
)
from stats.engine.streams import BLOCK_ROWS, canonical, key_words


def _summaries(res):
    return {k: tuple(getattr(v, f) for f in ("n", "mean", "m2", "m3", "m4", "minimum", "maximum")) for k, v in res.summaries.items()}


@pytest.mark.parametrize("sim", [
    ScoreSim(16, 0.3, entries=entry_law("student_t")),
    ScoreSim(16, 0.3, entries=entry_law("student_t"), n_keys=3, method="mixture"),
    ScoreSim(16, 0.3, entries=entry_law("rademacher"), n_keys=3, method="bitpacked"),
    ScoreSim(16, 0.3, n_keys=3, method="chi2"),
    ScoreSim(16, 0.3, entries=entry_law("uniform"), n_keys=3, method="float32"),
    SaturationSim(8, 16, "none", method="direct"),
], ids=lambda s: s.key)
def test_workers_and_chunk_size_change_no_bit(sim):
    n = 3 * BLOCK_ROWS + 77
    ref = run_simulation(sim, n, seed=9, workers=1)
    for kwargs in (dict(workers=2), dict(workers=1, chunk_size=16 * 16 * 3 + 5), dict(workers=2, chunk_size=1 << 16)):
        other = run_simulation(sim, n, seed=9, **kwargs)
        assert _summaries(other) == _summaries(ref)  # exact equality: the same bytes


def test_task_size_changes_no_bit_and_is_validated():
    # task_numbers=1: one block per task (the bench's scheduler-overhead measurement).
    sim = ScoreSim(16, 0.3, n_keys=3, method="chi2")
    jobs = [Job(sim, 3 * BLOCK_ROWS + 77)]
    ref = run_simulations(jobs, seed=9, formulas=FORMULAS)[sim.key]
    for workers in (1, 2):
        one = run_simulations(jobs, seed=9, formulas=FORMULAS, workers=workers, task_numbers=1)[sim.key]
        assert _summaries(one) == _summaries(ref)
    for bad in (0, -1, 1.5, True, "1"):
        with pytest.raises(ValueError, match="task_numbers"):
            run_simulations(jobs, seed=9, formulas=FORMULAS, task_numbers=bad)


def test_merged_blocks_equal_the_summary_of_all_rows():
    rng = np.random.default_rng(0)
    x = rng.standard_t(5, size=5 * 1000 + 3)
    parts = [summarize_rows(x[i : i + 1000]) for i in range(0, x.size, 1000)]
    total = parts[0]
    for p in parts[1:]:
        total = merge_row_summaries(total, p)
    ref = moment_summary(x)
    for a, b in ((total.mean, ref.mean), (total.m2, ref.m2), (total.m3, ref.m3), (total.m4, ref.m4)):
        assert a == pytest.approx(float(b), rel=1e-11, abs=1e-9)
    assert total.minimum == x.min() and total.maximum == x.max() and total.n == x.size


def test_nan_rows_propagate_and_are_counted():
    from stats.engine.summaries import _summarize_rows

    # The engine's path counts a simulation's NaN rows (the runner turns them into ERROR)...
    s = _summarize_rows(np.array([0.5, np.nan, 2.0]))
    assert np.isnan(s.mean) and s.n_nonfinite == 1 and s.n_above_one == 2  # NaN counts as a violation
    # ...while the public function refuses a user's NaN instead of answering NaN.
    with pytest.raises(ValueError, match="NaN"):
        summarize_rows(np.array([0.5, np.nan, 2.0]))


@pytest.mark.parametrize("rows", [1, 2, 7, 8, 9, 16, 33, 200])
def test_a_block_is_summarised_in_one_pass_with_the_same_bits(rows):
    from stats.engine.summaries import _summarize_rows, summarize_block

    rng = np.random.default_rng(rows)
    stats = {"normal": rng.standard_normal(rows) * 1e3, "share": (rng.random(rows) < 0.3), "count": rng.integers(0, 9, rows),
             "heavy": rng.standard_cauchy(rows), "with_nan": np.where(rng.random(rows) < 0.4, np.nan, rng.random(rows) * 2),
             "with_inf": np.where(rng.random(rows) < 0.4, -np.inf, rng.random(rows)), "all_nan": np.full(rows, np.nan)}
    together = summarize_block(stats, tuple(stats))
    for name, x in stats.items():
        assert together[name] == _summarize_rows(x) or repr(together[name]) == repr(_summarize_rows(x)), name


def test_a_malformed_block_statistic_is_refused_as_before():
    from stats.engine.summaries import summarize_block

    with pytest.raises(ValueError, match="1-D"):
        summarize_block({"a": np.zeros(3), "b": np.zeros((3, 2))}, ("a", "b"))
    with pytest.raises(ValueError, match="non-empty"):
        summarize_block({"a": np.zeros(0)}, ("a",))


def test_a_simulation_does_not_depend_on_its_companions():
    a = ScoreSim(8)
    b = ScoreSim(8, 0.5)
    alone = run_simulations([Job(a, 5000)], seed=4, formulas=FORMULAS)[a.key]
    both = run_simulations([Job(b, 7000), Job(a, 5000)], seed=4, formulas=FORMULAS, workers=2)[a.key]
    assert _summaries(alone) == _summaries(both)


def test_a_pilot_stream_is_independent_of_the_main_one():
    sim = ScoreSim(8)
    main = run_simulations([Job(sim, 3000)], seed=4, formulas=FORMULAS)[sim.key]
    pilot = run_simulations([Job(sim, 3000, stream=f"pilot/{sim.key}")], seed=4, formulas=FORMULAS)[f"pilot/{sim.key}"]
    assert main.summary("score").mean != pilot.summary("score").mean


def test_prefix_property_across_blocks():
    sim = ScoreSim(4)
    small = run_simulation(sim, BLOCK_ROWS, seed=2, keep=("score",))
    big = run_simulation(sim, 3 * BLOCK_ROWS, seed=2, keep=("score",))
    np.testing.assert_array_equal(small.rows("score"), big.rows("score")[:BLOCK_ROWS])


def test_failures_are_recorded_or_raised():
    class Broken(ScoreSim):
        def run_block(self, *a, **k):
            raise ValueError("planted failure")

    sim = Broken(4)
    out = run_simulations([Job(sim, 100)], seed=1, formulas=FORMULAS, record_errors=True)[sim.key]
    assert isinstance(out, SimFailure) and "planted failure" in out.message
    with pytest.raises(RuntimeError, match="planted failure"):
        run_simulations([Job(sim, 100)], seed=1, formulas=FORMULAS)


def test_stream_keys_are_canonical_and_hash_stably():
    assert stream_key("x", a=1, b=0.5, c=-0.0, law=entry_law("student_t", df=10)) == "x/a=1/b=0.5/c=0.0/law=student_t(df=10)"
    assert canonical(True) == "true" and canonical(None) == "none"
    # The digest of a fixed key is fixed forever: a change here changes every number in the suite.
    assert key_words("scores/d_k=1") == (2764587866, 1352428859, 2471023578, 3120906642)
    with pytest.raises(ValueError):
        canonical(float("nan"))
    with pytest.raises(TypeError):
        canonical(object())
    s1, s2 = simulation_seed(7, "a"), simulation_seed(7, "b")
    assert s1.spawn_key != s2.spawn_key


def test_duplicate_jobs_are_refused():
    with pytest.raises(ValueError, match="one job"):
        run_simulations([Job(ScoreSim(4), 10), Job(ScoreSim(4), 20)], seed=1, formulas=FORMULAS)


# ------------------------------------------------------------------ scratch buffers


def test_scratch_reuses_one_buffer_and_lends_it_to_one_borrower_at_a_time():
    import threading

    from stats.engine.scratch import _free_list, scratch

    _free_list().clear()  # earlier tests in this thread leave buffers that would fit too
    with scratch((1000, 8)) as first:
        pass  # `first` stays referenced, so a fresh allocation cannot reuse its address
    with scratch((1000, 8)) as a:  # the pooled buffer again
        assert a.shape == (1000, 8) and a.dtype == np.float64 and a.flags.c_contiguous
        assert np.shares_memory(a, first)
        with scratch((1000, 8)) as b:  # nested: must not alias the lent buffer
            assert not np.shares_memory(a, b)
    with scratch((500, 3), np.float32) as c:  # smaller, other dtype: pooled memory again
        assert c.shape == (500, 3) and c.dtype == np.float32
        assert np.shares_memory(c, first) or np.shares_memory(c, b)
    seen = []
    t = threading.Thread(target=lambda: seen.append(scratch((1000, 8)).__enter__()))
    t.start()
    t.join()
    with scratch((1000, 8)) as d:  # another thread has a pool of its own
        assert not np.shares_memory(d, seen[0])
    with scratch((0, 5)) as e:
        assert e.shape == (0, 5)


def test_scratch_pool_is_bounded():
    from stats.engine import scratch as mod

    with mod.scratch((mod.MAX_POOLED_BYTES // 8 // 2 + 1,)), mod.scratch((mod.MAX_POOLED_BYTES // 8 // 2 + 1,)):
        pass
    assert sum(b.nbytes for b in mod._free_list()) <= mod.MAX_POOLED_BYTES or len(mod._free_list()) == 1


@pytest.mark.parametrize("method,entries", [("direct", "gaussian"), ("mixture", "student_t"), ("float32", "uniform")])
def test_interleaved_chunk_generators_equal_sequential_ones(method, entries):
    # Two generators of the same sampler advanced in turn share one thread's scratch pool;
    # their draws must be those each gives alone.
    from stats import sample_scores, score_chunks

    kw = dict(entries=entries, method=method, n_keys=4, chunk_size=64 * 4 * 16)
    ref_a = sample_scores(3000, 64, seed=1, **kw)
    ref_b = sample_scores(3000, 64, seed=2, **kw)
    ga, gb = score_chunks(3000, 64, seed=1, **kw), score_chunks(3000, 64, seed=2, **kw)
    got_a, got_b = [], []
    for ca, cb in zip(ga, gb):
        got_a.append(ca)
        got_b.append(cb)
    np.testing.assert_array_equal(np.concatenate(got_a), ref_a)
    np.testing.assert_array_equal(np.concatenate(got_b), ref_b)
