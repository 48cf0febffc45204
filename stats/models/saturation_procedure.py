r"""The section's saturation measurement as a procedure: the law of the number it prints.

"Saturation, measured" draws random queries and 32 random keys, computes the weights and
prints the *average* over the queries of each row's largest weight and of the trace
:math:`1 - \lVert a\rVert^2`.  That average over N queries, :math:`S_N`, is a random
number; its law depends on what was drawn:

``keys="fresh"``
    every query meets its own T keys: the rows are i.i.d., :math:`S_N` has mean
    :math:`\mu = E\max a` (the quadrature's value for Gaussian entries) and sd
    :math:`\sigma/\sqrt N`, :math:`\sigma` the sd of one row's statistic;
``keys="shared"``
    one key set K per width serves all N queries: given K the rows are i.i.d. with mean
    :math:`m(K) = E[\max a \mid K]` and variance :math:`v(K)`, so
    :math:`S_N \to m(K)` as N grows -- a random limit, whose spread does not shrink.

and on the entry law (any mean-0, variance-1 law the text's assumptions allow: Gaussian,
Rademacher, uniform on :math:`[-\sqrt3, \sqrt3]`).  The mean of :math:`S_N` is
:math:`\mu` under both key readings (the tower rule); its spread is not.

How the law is computed (:func:`procedure_sample`).  One simulation draws ``key_sets``
outer units of ``inner`` queries each.  Under shared keys a unit is one key set K with
``inner`` queries against it; under fresh keys every row has its own keys.  For
:math:`N \le` ``inner`` the law of :math:`S_N` is sampled exactly: the averages of
disjoint runs of N rows within a unit.  For larger N it is the mixture of normals
:math:`\frac1M\sum_i N(\hat m_i, \hat v_i/N)` -- conditionally on K a mean of N i.i.d.
bounded rows, normal by the CLT to error :math:`O(N^{-1/2})` in the skew, which at
N > ``inner`` (2048 at full size) is below the Monte Carlo error -- with the unit means
shrunk towards their average so that their spread estimates :math:`\mathrm{Var}\,m(K)`
and not :math:`\mathrm{Var}\,m(K) + E v(K)/\text{inner}` (method of moments).  Under fresh
keys :math:`m(K)` is constant, and the mixture is the one normal :math:`N(\mu, \sigma^2/N)`.

Given K a Gaussian query's scores are :math:`N(0, c^2 KK^\top)`; for :math:`d_k > T` they
are drawn as :math:`cLz` with L the Cholesky factor of :math:`KK^\top` (T numbers a query
whatever the width), else as :math:`cKq`.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special

from .._validation import as_real_array, check_d_k, check_integer
from ..engine.streams import as_seed_sequence, block_generator, simulation_seed, stream_key
from .laws import entry_law
from .sampling import draw_entries
from .saturation import check_scaling, saturation_row_statistics
from .saturation_quadrature import saturation_exact
from .scores import score_scale

__all__ = [
    "KEY_READINGS",
    "PROCEDURE_STATISTICS",
    "central_interval",
    "grade_by_readings",
    "largest_consistent_n",
    "printed_value_mass",
    "procedure_expectation",
    "procedure_sample",
    "quantile_with_mcse",
    "ratio_exceeds",
    "statistic_draws",
]

KEY_READINGS = ("fresh", "shared")
PROCEDURE_STATISTICS = ("max_weight", "trace")
_UNIT_CHUNK = 1 << 18  # rows (queries) simulated at once


def _check_keys(keys):
    if not isinstance(keys, str) or keys not in KEY_READINGS:
        raise ValueError(f"keys must be one of {KEY_READINGS}; got {keys!r}")
    return keys


def _check_statistic(statistic):
    if not isinstance(statistic, str) or statistic not in PROCEDURE_STATISTICS:
        raise ValueError(f"statistic must be one of {PROCEDURE_STATISTICS}; got {statistic!r}")
    return statistic


def _rows_of_unit(rng, law, d_k, n_keys, c, inner, keys):
    """Scores (inner, n_keys) of one outer unit."""
    if keys == "fresh":
        if law.name == "gaussian":  # given q the scores are i.i.d. N(0, c^2 |q|^2)
            r = np.sqrt(rng.chisquare(d_k, size=inner))
            return rng.standard_normal((inner, n_keys)) * (c * r)[:, None]
        q = draw_entries(rng, law, (inner, d_k))
        k = draw_entries(rng, law, (inner, n_keys, d_k))
        return c * np.einsum("nd,ntd->nt", q, k)
    K = draw_entries(rng, law, (n_keys, d_k))
    if law.name == "gaussian" and d_k > n_keys:
        L = np.linalg.cholesky(K @ K.T)
        return c * (rng.standard_normal((inner, n_keys)) @ L.T)
    q = draw_entries(rng, law, (inner, d_k))
    return c * (q @ K.T)


@functools.lru_cache(maxsize=256)
def _simulate(d_k, n_keys, scaling, law_name, keys, key_sets, inner, seed_entropy, seed_spawn):
    law = entry_law(law_name)
    c = score_scale(d_k, scaling)
    root = np.random.SeedSequence(seed_entropy, spawn_key=seed_spawn)
    sim_seed = simulation_seed(root, stream_key("saturation_procedure", d_k=d_k, n_keys=n_keys, scaling=scaling,
                                                entries=law, keys=keys, inner=inner))
    out = {s: np.empty((key_sets, inner)) for s in PROCEDURE_STATISTICS}
    for unit in range(key_sets):
        rng = block_generator(sim_seed, unit)
        for start in range(0, inner, _UNIT_CHUNK):
            n = min(_UNIT_CHUNK, inner - start)
            st = saturation_row_statistics(_rows_of_unit(rng, law, d_k, n_keys, c, n, keys))
            for s in PROCEDURE_STATISTICS:
                out[s][unit, start : start + n] = st[s]
    for v in out.values():
        v.setflags(write=False)
    return out


def procedure_sample(*, d_k, scaling="none", entries="gaussian", keys="fresh", n_keys=32, key_sets=400,
                     inner=2048, seed):
    """The rows of the procedure: a dict statistic -> array (key_sets, inner) of per-row values.

    Row ``[i, j]`` is query j of outer unit i: under ``keys="shared"`` unit i is one key set
    met by all its ``inner`` queries; under ``"fresh"`` every row has its own keys.  Seeded
    from ``seed`` (an int or SeedSequence) by a stream named after every argument; block i
    is unit i, so a larger run extends a smaller one.  Cached; the arrays are read-only.
    """
    d_k = check_d_k(d_k)
    check_scaling(scaling)
    law = entry_law(entries)
    if law.name == "student_t":
        raise ValueError("entries must be gaussian, rademacher or uniform here (bounded-moment laws the study grades)")
    _check_keys(keys)
    n_keys = check_integer(n_keys, "n_keys", minimum=2, maximum=1 << 16, what="an integer >= 2")
    key_sets = check_integer(key_sets, "key_sets", minimum=2, maximum=1 << 20, what="an integer >= 2")
    inner = check_integer(inner, "inner", minimum=2, maximum=1 << 24, what="an integer >= 2")
    if law.name != "gaussian" and key_sets * inner * d_k * (n_keys if keys == "fresh" else 1) > 2e9:
        raise ValueError("too large: a non-Gaussian fresh-key run draws key_sets * inner * n_keys * d_k entries (<= 2e9)")
    ss = as_seed_sequence(seed)
    return _simulate(d_k, n_keys, scaling, law.name, keys, key_sets, inner, ss.entropy, tuple(ss.spawn_key))


def _check_n(n_queries):
    return check_integer(n_queries, "n_queries", minimum=1, maximum=1 << 40, what="a positive integer")


def _mixture(rows, mean=None):
    """Unit means (shrunk to estimate Var m(K), centred on ``mean`` when it is known) and unit
    variances of a (units, inner) array."""
    m = rows.mean(axis=1)
    v = rows.var(axis=1, ddof=1)
    inner = rows.shape[1]
    centre = float(m.mean()) if mean is None else float(mean)
    between = m.var(ddof=1)
    within = float(v.mean()) / inner
    lam = math.sqrt(max(between - within, 0.0) / between) if between > 0 else 0.0
    return centre + lam * (m - m.mean()), v


def _components(rows, keys, mean):
    """The normal mixture's centres and per-row variances (module docstring)."""
    if keys == "fresh":
        flat = rows.ravel()
        mu = float(flat.mean()) if mean is None else float(mean)
        return np.array([mu]), np.array([float(flat.var(ddof=1))])
    return _mixture(rows, mean)


def _sampled(rows, n_queries, keys):
    """Exact draws of S_N from disjoint runs of N rows, shape (units, per unit)."""
    units, inner = rows.shape
    per = inner // n_queries
    return rows[:, : per * n_queries].reshape(units, per, n_queries).mean(axis=2)


def _law_terms(rows, n_queries, keys, lo, hi, mean=None):
    """Per-draw (or per-component) probabilities P(S_N >= lo) and P(S_N < hi)."""
    if n_queries <= rows.shape[1]:
        s = _sampled(rows, n_queries, keys)
        if keys == "shared":  # draws within a unit share K: one term per unit, the unit's share
            return (s >= lo).mean(axis=1), (s < hi).mean(axis=1)
        s = s.ravel()
        return (s >= lo).astype(float), (s < hi).astype(float)
    m, v = _components(rows, keys, mean)
    se = np.sqrt(v / n_queries)
    with np.errstate(divide="ignore"):
        return special.ndtr((m - lo) / se), special.ndtr((hi - m) / se)


def _check_rows(rows, name="rows"):
    rows = as_real_array(rows, name, dtype=np.float64)
    if rows.ndim != 2 or rows.shape[0] < 2 or rows.shape[1] < 2 or not np.all(np.isfinite(rows)):
        raise ValueError(f"{name} must be a finite (units, inner) array with both >= 2; got shape {rows.shape}")
    return rows


def _is_number(x):
    return isinstance(x, (int, float, np.floating, np.integer)) and not isinstance(x, (bool, np.bool_)) and math.isfinite(x)


def _check_mean(mean):
    if mean is not None and not _is_number(mean):
        raise ValueError(f"mean must be a finite number (the exact mean of a row) or None; got {mean!r}")
    return mean


def printed_value_mass(*, lo, hi, rows, n_queries, keys, mean=None):
    r"""How far out a printed value's rounding interval [lo, hi) lies in the law of :math:`S_N`:
    ``(tau, mcse)`` with :math:`\tau = \min(P(S_N \ge lo), P(S_N < hi))`.

    The interval meets the central :math:`1 - 2\alpha` interval of :math:`S_N` exactly when
    :math:`\tau \ge \alpha` (for a continuous law): the printed value is one a reader who ran
    the procedure with N queries gets at least as often as the law's outer :math:`\alpha` tail.
    ``rows`` is an array (units, inner) of :func:`procedure_sample`.  The MCSE is over the
    outer units (independent); under fresh keys at N > inner it is the delta-method error of
    the estimated mean and sd.  ``mean``: the row statistic's exact mean where known (the
    quadrature's, Gaussian entries), which centres the normal law used at N > inner.
    """
    n = _check_n(n_queries)
    _check_keys(keys)
    rows = _check_rows(rows)
    _check_mean(mean)
    if not _is_number(lo):
        raise ValueError(f"lo must be a finite number; got {lo!r}")
    if not (_is_number(hi) and lo < hi):
        raise ValueError(f"hi must be a finite number above lo; got lo={lo!r}, hi={hi!r}")
    a, b = _law_terms(rows, n, keys, lo, hi, mean)
    pa, pb = float(a.mean()), float(b.mean())
    t = a if pa <= pb else b
    tau = min(pa, pb)
    if keys == "fresh" and n > rows.shape[1]:
        flat = rows.ravel()
        mu, sd = (float(flat.mean()) if mean is None else float(mean)), float(flat.std(ddof=1))
        edge = lo if pa <= pb else hi
        z = abs(edge - mu) / (sd / math.sqrt(n))
        dens = math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
        # tau = Phi(-z), z = |edge - mu| sqrt(N) / sd: d tau/d mu = dens sqrt(N)/sd, d tau/d sd = dens z/sd,
        # times the MCSE of each (the sd's from the fourth moment; the mean's is 0 when it is exact)
        se_mu = sd / math.sqrt(flat.size) if mean is None else 0.0
        k4 = float(np.mean(np.square(np.square((flat - mu) / sd))))  # not ** 4: numpy's pow is 20x slower
        se_sd = sd * math.sqrt(max(k4 - 1.0, 0.0) / (4 * flat.size))
        mcse = dens / sd * math.hypot(math.sqrt(n) * se_mu, z * se_sd)
        return tau, mcse
    return tau, float(t.std(ddof=1) / math.sqrt(t.size))


def quantile_with_mcse(x, p, *, level=0.95):
    r"""The p-quantile of a sample and its MCSE from the order-statistic binomial interval.

    The interval :math:`[x_{(l)}, x_{(u)}]` with l, u the :math:`(1\mp\text{level})/2`
    quantiles of Binomial(n, p) covers the true quantile with probability about
    ``level`` (distribution-free); its half-width over the normal quantile is the MCSE.
    Returns ``(quantile, mcse)``.
    """
    x = np.sort(as_real_array(x, "x", dtype=np.float64).ravel())
    if x.size < 10 or not np.all(np.isfinite(x)):
        raise ValueError(f"x must hold at least 10 finite values; got {x.size}")
    if not (_is_number(p) and 0 < p < 1):
        raise ValueError(f"p must lie in (0, 1); got {p!r}")
    if not (_is_number(level) and 0 < level < 1):
        raise ValueError(f"level must lie in (0, 1); got {level!r}")
    from scipy import stats as sps

    n = x.size
    lo_i = int(sps.binom.ppf((1 - level) / 2, n, p))
    hi_i = int(sps.binom.ppf((1 + level) / 2, n, p))
    lo_i, hi_i = max(lo_i - 1, 0), min(hi_i, n - 1)  # ppf counts; order statistics are 0-based
    q = float(np.quantile(x, p))
    z = float(special.ndtri((1 + level) / 2))
    return q, float((x[hi_i] - x[lo_i]) / (2 * z))


def central_interval(*, rows, n_queries, keys, alpha=0.025, mean=None):
    """The central ``1 - 2 alpha`` interval of :math:`S_N` as ``((lo, mcse), (hi, mcse))``: quantiles of the
    sampled law at N <= inner (order-statistic MCSE), else of the normal mixture, found by bisection, with the
    delta-method MCSE sd(F_hat(x_p)) / f(x_p) over the outer units (fresh keys: from the sd's and the mean's MCSE)."""
    n = _check_n(n_queries)
    _check_keys(keys)
    if not (_is_number(alpha) and 0 < alpha < 0.5):
        raise ValueError(f"alpha must lie in (0, 0.5); got {alpha!r}")
    rows = _check_rows(rows)
    _check_mean(mean)
    if n <= rows.shape[1]:
        s = _sampled(rows, n, keys)
        # draws of one unit share K: the order-statistic MCSE assumes independent draws, so one a unit
        s = s[:, 0] if keys == "shared" else s.ravel()
        return quantile_with_mcse(s, alpha), quantile_with_mcse(s, 1 - alpha)
    m, v = _components(rows, keys, mean)
    se = np.sqrt(v / n)

    def solve(p):
        a, b = float((m - 10 * se).min()), float((m + 10 * se).max())
        for _ in range(100):
            mid = 0.5 * (a + b)
            a, b = (mid, b) if float(special.ndtr((mid - m) / se).mean()) < p else (a, mid)
        x = 0.5 * (a + b)
        if keys == "fresh":
            flat = rows.ravel()
            sd = math.sqrt(v[0])
            k4 = float(np.mean(np.square(np.square((flat - flat.mean()) / sd))))
            se_sd = sd * math.sqrt(max(k4 - 1.0, 0.0) / (4 * flat.size))
            se_mu = sd / math.sqrt(flat.size) if mean is None else 0.0
            z = float(special.ndtri(p))
            return x, math.hypot(se_mu, z * se_sd / math.sqrt(n))
        u = (x - m) / se
        terms = special.ndtr(u)
        dens = float(np.mean(np.exp(-0.5 * u * u) / (se * math.sqrt(2 * math.pi))))
        return x, float(terms.std(ddof=1) / math.sqrt(terms.size) / dens)

    return solve(alpha), solve(1 - alpha)


def largest_consistent_n(*, lo, hi, rows, keys, alpha=0.025, n_max=1 << 30, mean=None):
    """The largest N (a power of two from 32 to ``n_max``) at which [lo, hi) still meets the central interval
    (``tau >= alpha``, :func:`printed_value_mass`), 0 if none, ``n_max`` if every one."""
    n_max = check_integer(n_max, "n_max", minimum=32, maximum=1 << 40, what="an integer >= 32")
    if not (_is_number(alpha) and 0 < alpha < 0.5):
        raise ValueError(f"alpha must lie in (0, 0.5); got {alpha!r}")
    best = 0
    n = 32
    while n <= n_max:
        tau, _ = printed_value_mass(lo=lo, hi=hi, rows=rows, n_queries=n, keys=keys, mean=mean)
        if tau >= alpha:
            best = n
        n *= 2
    return best


def procedure_expectation(d_k, *, scaling="none", n_keys=32, statistic="max_weight"):
    """The N -> infinity value under fresh Gaussian keys: :func:`saturation_exact` (quadrature)."""
    _check_statistic(statistic)
    return float(saturation_exact(d_k, n_keys, scaling=scaling)[statistic])


def statistic_draws(*, rows, n_queries, keys, size, seed, mean=None):
    """``size`` draws of :math:`S_N`: resampled from the exact draws at N <= inner (one a unit under shared
    keys, whose draws within a unit are dependent), else from the normal mixture (module docstring)."""
    n = _check_n(n_queries)
    _check_keys(keys)
    rows = _check_rows(rows)
    _check_mean(mean)
    size = check_integer(size, "size", minimum=1, maximum=1 << 26, what="a positive integer")
    rng = np.random.Generator(np.random.SFC64(as_seed_sequence(seed)))
    if n <= rows.shape[1]:
        s = _sampled(rows, n, keys)
        s = s[:, 0] if keys == "shared" else s.ravel()
        return s[rng.integers(0, s.size, size)] if size != s.size else s.copy()
    m, v = _components(rows, keys, mean)
    i = rng.integers(0, m.size, size)
    return m[i] + np.sqrt(v[i] / n) * rng.standard_normal(size)


def grade_by_readings(consistent):
    """The team's rule for a printed number: ``consistent`` maps each reading to whether the printed
    value lies inside the stated central interval of the statistic under it (at some plausible N).
    ``"holds"`` when inside under every reading, ``"erratum"`` when outside under every one, else
    ``"caveat"`` (true under the readings named by the True entries, false under the others)."""
    if not isinstance(consistent, dict) or not consistent:
        raise ValueError("consistent must be a non-empty dict reading -> bool")
    if not all(isinstance(k, str) and isinstance(v, (bool, np.bool_)) for k, v in consistent.items()):
        raise TypeError("consistent must map reading names (str) to bools")
    vals = [bool(v) for v in consistent.values()]
    return "holds" if all(vals) else "erratum" if not any(vals) else "caveat"


def ratio_exceeds(*, num, den, n_queries, keys, threshold, size=20_000, seed, mean_num=None, mean_den=None):
    r"""``(p, mcse)``: the probability that the ratio of two independent printed averages
    :math:`S_N^{num}/S_N^{den}` (two widths, each from its own :func:`procedure_sample` rows)
    exceeds ``threshold``, from ``size`` paired draws of :func:`statistic_draws` (binomial MCSE)."""
    num, den = _check_rows(num, "num"), _check_rows(den, "den")
    if not (_is_number(threshold) and threshold > 0):
        raise ValueError(f"threshold must be a positive finite number; got {threshold!r}")
    ss = as_seed_sequence(seed).spawn(2)
    a = statistic_draws(rows=num, n_queries=n_queries, keys=keys, size=size, seed=ss[0], mean=mean_num)
    b = statistic_draws(rows=den, n_queries=n_queries, keys=keys, size=size, seed=ss[1], mean=mean_den)
    with np.errstate(divide="ignore"):
        hit = (a > threshold * b).astype(float)
    p = float(hit.mean())
    return p, math.sqrt(max(p * (1 - p), 1.0 / size) / size)
