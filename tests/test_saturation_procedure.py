"""The section's measurement as a procedure (stats.models.saturation_procedure): the law of the
printed average under each reading, its quantiles' MCSE, and the grading rule."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special
from scipy import stats as sps

from stats import (
    central_interval,
    grade_by_readings,
    largest_consistent_n,
    printed_value_mass,
    procedure_expectation,
    procedure_sample,
    quantile_with_mcse,
    ratio_exceeds,
    statistic_draws,
)

T = 32


def _rademacher_d1(stat):
    """Closed form at d_k = 1 with +-1 entries: given q the scores are +-1, i.i.d. fair; with B of them +1
    (B ~ Binomial(T, 1/2)) the largest weight is e / (B e + (T - B)/e), or 1/T when B = 0."""
    e = math.e
    total = 0.0
    for b in range(T + 1):
        z = b * e + (T - b) / e
        if stat == "max_weight":
            v = (e if b else 1 / e) / z
        else:
            v = 1.0 - (b * e * e + (T - b) / (e * e)) / (z * z)
        total += sps.binom.pmf(b, T, 0.5) * v
    return total


@pytest.mark.parametrize("keys", ["fresh", "shared"])
@pytest.mark.parametrize("stat", ["max_weight", "trace"])
def test_rademacher_width_one_matches_its_closed_form(keys, stat):
    rows = procedure_sample(d_k=1, entries="rademacher", keys=keys, key_sets=400, inner=256, seed=7)[stat]
    unit = rows.mean(axis=1)  # independent units: their sd gives the MCSE under either reading
    mcse = unit.std(ddof=1) / math.sqrt(unit.size)
    assert abs(unit.mean() - _rademacher_d1(stat)) < 4 * mcse + 1e-12


def test_shared_keys_have_the_fresh_keys_mean_and_a_spread_that_does_not_shrink():
    f = procedure_sample(d_k=4, keys="fresh", key_sets=400, inner=256, seed=3)["max_weight"]
    s = procedure_sample(d_k=4, keys="shared", key_sets=400, inner=256, seed=3)["max_weight"]
    exact = procedure_expectation(4, scaling="none")
    for rows in (f, s):
        unit = rows.mean(axis=1)
        assert abs(unit.mean() - exact) < 4 * unit.std(ddof=1) / math.sqrt(unit.size)
    # the fresh average's central interval shrinks like 1/sqrt(N); the shared one tends to the spread of E[max a | K]
    (flo, _), (fhi, _) = central_interval(rows=f, n_queries=100_000, keys="fresh", mean=exact)
    (slo, _), (shi, _) = central_interval(rows=s, n_queries=100_000, keys="shared", mean=exact)
    assert shi - slo > 20 * (fhi - flo)
    assert fhi - flo == pytest.approx(2 * 1.959964 * f.std() / math.sqrt(100_000), rel=0.05)


def test_printed_value_mass_of_a_normal_law_is_its_tail():
    rng = np.random.default_rng(0)
    rows = rng.standard_normal((200, 500))
    # N > inner: the normal law N(0, 1/N) with the exact mean 0; [lo, hi) = [0.01, 0.02) at N = 10000 is 1 sd out
    tau, mcse = printed_value_mass(lo=0.01, hi=0.02, rows=rows, n_queries=10_000, keys="fresh", mean=0.0)
    assert abs(tau - special.ndtr(-1.0)) < 4 * mcse + 1e-3
    assert mcse > 0


def test_the_normal_interval_s_mcse_is_the_delta_method_s_from_the_rows_kurtosis():
    """Fresh keys at N > inner: the interval's ends are mu + z_p sd/sqrt(N), their MCSE the hypot of the
    mean's (0 when the mean is exact) and z_p/sqrt(N) times the sd's, sd sqrt((k4 - 1)/(4 n)), k4 the rows'
    plug-in kurtosis (here of exponential rows, 9, far from a Gaussian's 3)."""
    rows = np.random.default_rng(2).exponential(size=(200, 500))
    flat, n = rows.ravel(), 4000
    sd, k4 = flat.std(ddof=1), sps.kurtosis(flat, fisher=False, bias=True)
    se_sd = sd * math.sqrt((k4 - 1) / (4 * flat.size))
    (lo, lo_se), (hi, hi_se) = central_interval(rows=rows, n_queries=n, keys="fresh", alpha=0.025, mean=1.0)
    z = special.ndtri(0.975)
    assert lo == pytest.approx(1.0 - z * sd / math.sqrt(n), rel=1e-9) and hi == pytest.approx(1.0 + z * sd / math.sqrt(n), rel=1e-9)
    assert lo_se == pytest.approx(z * se_sd / math.sqrt(n), rel=1e-3) and hi_se == pytest.approx(lo_se, rel=1e-9)


def test_the_normal_approximation_agrees_with_exact_sampling_where_both_apply():
    """Fresh keys, d_k = 4 unscaled: tau at N = 256 from exact draws (inner = 512) and from the normal law
    (the same rows cut to inner = 128 < N) agree within their errors: the CLT at N in the hundreds."""
    rows = procedure_sample(d_k=4, keys="fresh", key_sets=400, inner=512, seed=11)["max_weight"]
    exact = procedure_expectation(4, scaling="none")
    for lo in (0.345, 0.36):
        a, sa = printed_value_mass(lo=lo, hi=lo + 0.01, rows=rows, n_queries=256, keys="fresh")
        b, sb = printed_value_mass(lo=lo, hi=lo + 0.01, rows=rows.reshape(-1, 128), n_queries=256, keys="fresh", mean=exact)
        assert abs(a - b) < 4 * math.hypot(sa, sb) + 0.01


def test_quantile_mcse_matches_the_asymptotic_sd_of_a_quantile():
    """Uniform(0, 1) samples: the p-quantile's sd is sqrt(p (1 - p) / n); the order-statistic MCSE estimates it,
    and the quantile lies within 4 MCSE of the truth over many replicates."""
    rng = np.random.default_rng(5)
    n, p = 4000, 0.1
    errs, mcses = [], []
    for _ in range(200):
        q, m = quantile_with_mcse(rng.random(n), p)
        errs.append(q - p)
        mcses.append(m)
    assert np.mean(mcses) == pytest.approx(math.sqrt(p * (1 - p) / n), rel=0.1)
    assert np.std(errs) == pytest.approx(np.mean(mcses), rel=0.2)


@pytest.mark.parametrize("consistent, grade", [
    ({"a": True, "b": True}, "holds"),
    ({"a": False, "b": False, "c": False}, "erratum"),
    ({"a": False, "b": True}, "caveat"),
    ({"a": True, "b": False, "c": False}, "caveat"),
])
def test_the_grading_rule_calls_erratum_only_when_outside_under_every_reading(consistent, grade):
    assert grade_by_readings(consistent) == grade


def test_a_planted_number_far_from_every_reading_is_outside_and_a_near_one_inside():
    rows = procedure_sample(d_k=4, keys="shared", key_sets=200, inner=128, seed=2)["max_weight"]
    far = {n: printed_value_mass(lo=0.595, hi=0.605, rows=rows, n_queries=n, keys="shared")[0] for n in (32, 1000)}
    near = {n: printed_value_mass(lo=0.335, hi=0.345, rows=rows, n_queries=n, keys="shared")[0] for n in (32, 1000)}
    assert all(t < 0.025 for t in far.values()) and all(t >= 0.025 for t in near.values())
    assert largest_consistent_n(lo=0.595, hi=0.605, rows=rows, keys="shared", n_max=1 << 20) == 0
    assert largest_consistent_n(lo=0.335, hi=0.345, rows=rows, keys="shared", n_max=1 << 20) == 1 << 20


def test_streams_are_reproducible_and_draws_follow_the_law():
    a = procedure_sample(d_k=2, keys="shared", key_sets=4, inner=8, seed=9)["trace"]
    b = procedure_sample(d_k=2, keys="shared", key_sets=4, inner=8, seed=np.random.SeedSequence(9))["trace"]
    assert np.array_equal(a, b)
    rows = np.random.default_rng(1).random((50, 40))
    d = statistic_draws(rows=rows, n_queries=4000, keys="fresh", size=20_000, seed=1, mean=0.5)
    assert abs(d.mean() - 0.5) < 4 * d.std() / math.sqrt(d.size)
    assert d.std() == pytest.approx(rows.std() / math.sqrt(4000), rel=0.05)
    p, se = ratio_exceeds(num=rows + 1, den=rows, n_queries=8, keys="fresh", threshold=1.0, seed=1)
    assert p == 1.0 and se > 0


@pytest.mark.parametrize("scaling, stat", [("none", "max_weight"), ("sqrt", "trace")])
def test_shared_keys_past_T_wide_draw_the_scores_law(scaling, stat):
    """d_k = 64 > T: a shared key set's scores are drawn as c L z (L L^T = K K^T); their mean is the exact one."""
    rows = procedure_sample(d_k=64, scaling=scaling, keys="shared", key_sets=1000, inner=64, seed=4)[stat]
    unit = rows.mean(axis=1)
    exact = procedure_expectation(64, scaling=scaling, statistic=stat)
    assert abs(unit.mean() - exact) < 4 * unit.std(ddof=1) / math.sqrt(unit.size)


def test_the_shared_mixture_spreads_as_the_key_sets_means_do():
    """Units with means m_i ~ N(0, 0.1^2) and within-unit noise of sd 1 over 50 rows: as N grows the printed
    average tends to m(K), so the central 95% interval tends to +-1.96 x 0.1, not to the spread of the noisy
    unit averages (sqrt(0.01 + 1/50))."""
    rng = np.random.default_rng(8)
    m = 0.1 * rng.standard_normal(4000)
    rows = m[:, None] + rng.standard_normal((4000, 50))
    (lo, _), (hi, _) = central_interval(rows=rows, n_queries=10**8, keys="shared", mean=0.0)
    assert hi - lo == pytest.approx(2 * 1.959964 * 0.1, rel=0.06)
