"""The sampler: reproducible from (seed, n, parameters) alone, bounded memory, right law."""

import numpy as np
import pytest

from stats import (
    draw_entries,
    entry_law,
    mean_test,
    moment_summary,
    sample_queries_keys,
    sample_scores,
    score_chunks,
    score_summary,
    variance_test,
)
from stats.engine.streams import BLOCK_ROWS

LAWS = ["gaussian", "rademacher", "uniform", "student_t"]


@pytest.mark.parametrize("law", LAWS)
@pytest.mark.parametrize("n_keys", [None, 3])
def test_chunk_size_changes_nothing(law, n_keys):
    n = 2 * BLOCK_ROWS + 123  # crosses block boundaries
    kw = dict(rho=0.4, entries=law, n_keys=n_keys, seed=7, sigma_q=1.3, sigma_k=0.7)
    keys = n_keys or 1
    reference = sample_scores(n, 5, chunk_size=5 * keys * BLOCK_ROWS, **kw)
    for chunk_size in (5 * keys, 5 * keys * 7, 5 * keys * 1000 + 3):
        np.testing.assert_array_equal(sample_scores(n, 5, chunk_size=chunk_size, **kw), reference)


def test_same_seed_same_numbers_other_seed_other_numbers():
    a = sample_scores(1000, 8, seed=1)
    np.testing.assert_array_equal(a, sample_scores(1000, 8, seed=1))
    np.testing.assert_array_equal(a, sample_scores(1000, 8, seed=np.random.SeedSequence(1)))
    assert not np.array_equal(a, sample_scores(1000, 8, seed=2))


def test_prefix_property():
    """The first m rows of a longer run are the rows of the shorter run."""
    np.testing.assert_array_equal(sample_scores(5000, 4, seed=3), sample_scores(20000, 4, seed=3)[:5000])


def test_no_chunk_exceeds_chunk_size():
    chunk_size = 6 * 4 * 10 + 5
    for chunk in score_chunks(3000, 6, n_keys=4, seed=0, chunk_size=chunk_size):
        assert chunk.shape[0] * 6 * 4 <= chunk_size


def test_materialized_queries_and_keys_reproduce_the_scores():
    Q, K = sample_queries_keys(3000, 6, rho=0.5, sigma_q=2.0, sigma_k=0.5, n_keys=2, seed=9)
    S = sample_scores(3000, 6, rho=0.5, sigma_q=2.0, sigma_k=0.5, n_keys=2, seed=9, scale="none")
    np.testing.assert_allclose(np.einsum("nd,nkd->nk", Q, K), S, rtol=1e-12, atol=1e-12)


def test_streamed_summary_equals_summary_of_all_draws():
    s = score_summary(50_000, 16, rho=0.3, seed=4, chunk_size=16 * 999)
    t = moment_summary(sample_scores(50_000, 16, rho=0.3, seed=4))
    for a, b in ((s.mean, t.mean), (s.m2, t.m2), (s.m3, t.m3), (s.m4, t.m4)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("law", LAWS)
def test_entries_are_standardized(law):
    """Mean 0 and variance 1 at n = 10^6; each test has false-fail rate 1e-6 and detects a
    variance off by about 1.3% (mean off by 0.006)."""
    x = draw_entries(np.random.default_rng(np.random.SeedSequence(11)), law, (1_000_000,))
    tail = entry_law(law).tail_index
    assert not mean_test(x, 0.0, alpha=1e-6, tail_index=tail).reject
    assert not variance_test(x, 1.0, alpha=1e-6, tail_index=tail).reject


def test_rademacher_entries_are_signs_never_zero():
    x = draw_entries(np.random.default_rng(0), "rademacher", (100_000,))
    assert set(np.unique(x)) == {-1.0, 1.0}


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(n=0), "n"),
        (dict(n=10, d_k=0), "d_k"),
        (dict(n=10, rho=1.5), "rho"),
        (dict(n=10, entries="cauchy"), "entries"),
        (dict(n=10, n_keys=0), "n_keys"),
        (dict(n=10, chunk_size=3), "chunk_size"),
        (dict(n=10, sigma_q=-1.0), "sigma_q"),
    ],
)
def test_bad_arguments_name_themselves(kwargs, match):
    args = dict(n=10, d_k=4, seed=0) | kwargs
    n, d_k = args.pop("n"), args.pop("d_k")
    with pytest.raises(ValueError, match=match):
        sample_scores(n, d_k, **args)


def test_seed_is_required_and_checked():
    with pytest.raises(TypeError):
        sample_scores(10, 4)
    with pytest.raises(TypeError, match="seed"):
        sample_scores(10, 4, seed=None)
