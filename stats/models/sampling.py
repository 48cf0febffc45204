r"""Reproducible, memory-bounded draws of queries, keys, their scores and cosines.

Queries have i.i.d. entries :math:`q_m = \sigma_q x_m`; each key is
:math:`k = \rho(\sigma_k/\sigma_q)\,q + \sigma_k\sqrt{1-\rho^2}\,z`, with x and z i.i.d.
from a standardized entry law (:mod:`stats.models.laws`).  The raw score is therefore
:math:`q^\top k = \sigma_q\sigma_k(\rho\lVert x\rVert^2 + \sqrt{1-\rho^2}\; x\cdot z)`.

Streams (:mod:`stats.engine.streams`): block b of a simulation draws the queries from
its stream 0 and the key noise from its stream 1, each in row order, so the numbers
depend on ``(seed, key, n)`` and never on ``chunk_size``.

Methods (``method=``), each exact for the laws it accepts:

``"direct"``
    the section's recipe for any law: draw x and z, take the dot products.  The
    reference every other method is cross-checked against (``claims`` section
    "Engine fast paths").
``"chi2"`` (Gaussian entries)
    given x, :math:`x\cdot z \sim N(0, \lVert x\rVert^2)` and
    :math:`\lVert x\rVert^2 \sim \chi^2(d_k)`, so a row costs one chi-square and one
    normal per key instead of :math:`(1 + n_{keys})\,d_k` normals.
``"bitpacked"`` (Rademacher entries)
    signs packed 64 to a word: :math:`x\cdot z = d_k - 2\,\mathrm{popcount}(x \oplus z)`
    and :math:`\lVert x\rVert^2 = d_k`; one 64-bit random word carries 64 entries.
``"mixture"`` (Student-t entries)
    a unit-variance t variate is :math:`x = Z\sqrt{(\nu - 2)/V}`, :math:`V \sim \chi^2_\nu`,
    a scale mixture of normals; given q and the keys' scales :math:`w_m`, the noise term
    :math:`\sum_m x_m w_m Z'_m` is exactly :math:`N(0, \sum_m x_m^2 w_m^2)`.  The keys then
    cost one gamma variate per entry instead of a t variate, plus one normal per row.
``"float32"`` (Gaussian or uniform entries)
    entries drawn and multiplied in float32.  The dot product of length d carries a
    relative error of at most :math:`\gamma_d = d u/(1 - d u)`, :math:`u = 2^{-24}`, of
    :math:`\sum_m |x_m z_m|`, about :math:`2.4\cdot10^{-4}\sqrt{d}` score standard
    deviations at d = 4096 in the worst case and :math:`u\sqrt d` typically -- far below
    the detectable discrepancies of the claims that may use it (see ``make bench`` for
    whether it is faster on a given machine).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .._validation import MAX_ROWS, check_d_k, check_generator, check_integer, check_positive, check_rho
from ..engine.simulation import Simulation
from ..engine.scratch import scratch
from ..engine.streams import BLOCK_ROWS, as_seed_sequence, block_generator, simulation_seed, stream_key
from ..inference.estimators import MomentSummary, merge_moments, moment_summary
from .laws import EntryLaw, entry_law, law_moment
from .scores import score_central_moments, score_cumulants, score_scale
__all__ = [
    "CosineSim",
    "DEFAULT_CHUNK_SIZE",
    "SCORE_METHODS",
    "ScoreSim",
    "draw_entries",
    "sample_queries_keys",
    "sample_scores",
    "score_chunks",
    "score_summary",
    "square_mean_variance",
]

DEFAULT_CHUNK_SIZE = 1 << 20  # random numbers held at once (8 MiB of float64)
SCORE_METHODS = ("direct", "chi2", "bitpacked", "mixture", "float32")
_METHOD_LAWS = {"chi2": ("gaussian",), "bitpacked": ("rademacher",), "mixture": ("student_t",), "float32": ("gaussian", "uniform")}


def draw_entries(rng, law, shape, out=None):
    """Standardized i.i.d. entries of ``law`` (mean 0, variance 1) from generator ``rng``.

    ``out`` may be float64 or float32 (the float32 path draws in float32 directly).
    """
    check_generator(rng)
    law = entry_law(law)
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, tuple) or not all(
        isinstance(k, (int, np.integer)) and not isinstance(k, bool) and 0 <= k <= MAX_ROWS for k in shape
    ):
        raise ValueError(f"shape must be a tuple of non-negative integers; got {shape!r}")
    if law.name == "student_t":
        x = rng.standard_t(law.df, size=shape)
        x *= math.sqrt((law.df - 2.0) / law.df)
        if out is None:
            return x
        out[...] = x
        return out
    buf = np.empty(shape) if out is None else out
    if law.name == "gaussian":
        return rng.standard_normal(out=buf, dtype=buf.dtype)
    rng.random(out=buf, dtype=buf.dtype)
    if law.name == "rademacher":
        np.subtract(buf, buf.dtype.type(0.5), out=buf)
        return np.copysign(buf.dtype.type(1.0), buf, out=buf)  # copysign of +0.0 is +1: never a zero entry
    # uniform on (-sqrt 3, sqrt 3)
    np.multiply(buf, buf.dtype.type(2.0 * math.sqrt(3.0)), out=buf)
    return np.subtract(buf, buf.dtype.type(math.sqrt(3.0)), out=buf)


def check_method(method, law):
    """``method`` checked against :data:`SCORE_METHODS` and the laws it is exact for."""
    if method not in SCORE_METHODS:
        raise ValueError(f"method must be one of {SCORE_METHODS}; got {method!r}")
    allowed = _METHOD_LAWS.get(method)
    if allowed is not None and law.name not in allowed:
        raise ValueError(f"method={method!r} is exact only for entries in {allowed}; got {law.label}")
    return method


@dataclass(frozen=True)
class ScoreSim(Simulation):
    r"""Raw scores ``q.k`` of independent rows.

    Statistic ``"score"``: one score a row (the first key's).  With ``n_keys = K > 1`` also
    ``"square_mean"``, :math:`r = \frac1K\sum_j s_j^2` over the row's K keys, which share
    its query: for :math:`\rho = 0` its mean is :math:`E[s^2] = \operatorname{Var}(s)`
    exactly, the rows stay independent, and a row costs :math:`(1 + K)d_k` numbers for K
    scores instead of :math:`2Kd_k` (see :func:`square_mean_variance`).
    """

    d_k: int
    rho: float = 0.0
    sigma_q: float = 1.0
    sigma_k: float = 1.0
    entries: EntryLaw = field(default_factory=lambda: entry_law("gaussian"))
    method: str = "direct"
    n_keys: int = 1

    @property
    def statistics(self):
        return ("score",) if self.n_keys == 1 else ("score", "square_mean")

    def __post_init__(self):
        # Normalised field values: the stream key must not depend on how a number was written (0 vs 0.0).
        object.__setattr__(self, "d_k", check_d_k(self.d_k))
        object.__setattr__(self, "rho", check_rho(self.rho))
        object.__setattr__(self, "sigma_q", check_positive(self.sigma_q, "sigma_q"))
        object.__setattr__(self, "sigma_k", check_positive(self.sigma_k, "sigma_k"))
        object.__setattr__(self, "entries", entry_law(self.entries))
        check_method(self.method, self.entries)
        object.__setattr__(self, "n_keys", check_integer(self.n_keys, "n_keys"))

    @property
    def key(self):
        return stream_key(
            "scores",
            d_k=self.d_k,
            rho=self.rho,
            entries=self.entries,
            sigma_q=self.sigma_q,
            sigma_k=self.sigma_k,
            method=self.method,
            n_keys=self.n_keys,
        )

    @property
    def cost(self):
        keys = self.n_keys
        if self.method == "chi2":
            return 1 + keys
        if self.method == "bitpacked":
            return (1 + keys) * math.ceil(self.d_k / 64)
        if self.method == "mixture":
            return 3 * ((1 + keys) * self.d_k + keys)  # a gamma draw costs about two normals
        return (1 + (keys if self.rho != 1.0 else 0)) * self.d_k

    def central_moments(self, statistic):
        if statistic != "score":
            return None
        return score_central_moments(
            self.d_k, self.rho, sigma_q=self.sigma_q, sigma_k=self.sigma_k, entries=self.entries, scale="none"
        )

    def block_chunks(self, sim_seed, block, rows, chunk_size=DEFAULT_CHUNK_SIZE):
        """Yield the block's raw scores, ``(rows_in_chunk, n_keys)`` at a time."""
        return _score_block_chunks(self, sim_seed, block, rows, chunk_size)

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):
        s = np.concatenate(list(self.block_chunks(sim_seed, block, rows, chunk_size)))
        if self.n_keys == 1:
            return {"score": s[:, 0]}
        return {"score": s[:, 0], "square_mean": np.mean(s * s, axis=1)}


def _rows_per_chunk(per_row, chunk_size):
    chunk_size = check_integer(chunk_size, "chunk_size", minimum=per_row, what=f"an integer >= d_k * n_keys = {per_row}")
    return min(BLOCK_ROWS, chunk_size // per_row)


def _score_block_chunks(sim, sim_seed, block, rows, chunk_size):
    d_k, keys, rho = sim.d_k, sim.n_keys, sim.rho
    c = sim.sigma_q * sim.sigma_k
    s = math.sqrt(max(0.0, 1.0 - rho * rho))
    q_rng = block_generator(sim_seed, block, 0)
    z_rng = block_generator(sim_seed, block, 1)
    method = sim.method
    if method == "chi2":
        # Exact for Gaussian entries: ||x||^2 ~ chi2(d_k) and, given x, x.z_j ~ N(0, ||x||^2).
        for start in range(0, rows, BLOCK_ROWS):
            r = min(BLOCK_ROWS, rows - start)
            r2 = q_rng.chisquare(d_k, size=r)
            score = np.zeros((r, keys))
            if rho != 0.0:
                score += rho * r2[:, None]
            if s > 0:
                w = z_rng.standard_normal((r, keys))
                score += s * np.sqrt(r2)[:, None] * w
            score *= c
            yield score
        return
    if method == "bitpacked":
        words = -(-d_k // 64)
        tail = d_k - 64 * (words - 1)
        mask = np.uint64((1 << tail) - 1) if tail < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
        per_row = max(1, (1 + keys) * words)
        step = max(1, min(BLOCK_ROWS, chunk_size // per_row))
        for start in range(0, rows, step):
            r = min(step, rows - start)
            xq = q_rng.bit_generator.random_raw(r * words).reshape(r, 1, words)
            score = np.full((r, keys), rho * d_k)
            if s > 0:
                xz = z_rng.bit_generator.random_raw(r * keys * words).reshape(r, keys, words)
                diff = np.bitwise_xor(xq, xz)
                diff[..., -1] &= mask
                dot = d_k - 2 * np.bitwise_count(diff).sum(axis=-1, dtype=np.int64)
                score += s * dot
            score *= c
            yield score
        return
    if method == "mixture":
        # Student-t keys as normal scale mixtures: x.z | x, scales ~ N(0, sum x_m^2 w_m^2).
        nu = sim.entries.df
        rows_per_chunk = _rows_per_chunk(d_k * keys, chunk_size)
        # The row normals come from a stream of their own: drawn from z_rng between the
        # chunks' gamma variates, they would make the numbers depend on the chunk size.
        w_rng = block_generator(sim_seed, block, 2)
        with scratch((rows_per_chunk, keys, d_k) if s > 0 else (0,)) as v_buf:
            done = 0
            while done < rows:
                r = min(rows_per_chunk, rows - done)
                x = draw_entries(q_rng, sim.entries, (r, d_k))
                score = np.zeros((r, keys))
                if rho != 0.0:
                    score += rho * np.vecdot(x, x)[:, None]
                if s > 0:
                    v = z_rng.standard_gamma(nu / 2.0, out=v_buf[:r])  # chi2_nu / 2
                    np.divide((nu - 2.0) / 2.0, v, out=v)  # w^2 = (nu - 2)/chi2_nu
                    var = np.vecdot(v, (x * x)[:, None, :])
                    score += s * np.sqrt(var) * w_rng.standard_normal((r, keys))
                score *= c
                done += r
                yield score
        return
    dtype = np.float32 if method == "float32" else np.float64
    law = sim.entries
    rows_per_chunk = _rows_per_chunk(d_k * keys, chunk_size)
    # Pooled buffers: fresh ones would cost a page fault per page on every block (scratch.py).
    with scratch((rows_per_chunk, d_k), dtype) as x_buf, scratch((rows_per_chunk, keys, d_k) if s > 0 else (0,), dtype) as z_buf:
        done = 0
        while done < rows:
            r = min(rows_per_chunk, rows - done)
            x = draw_entries(q_rng, law, (r, d_k), out=x_buf[:r])
            score = np.zeros((r, keys))
            if rho != 0.0:
                score += rho * np.vecdot(x, x)[:, None]
            if s > 0:
                z = draw_entries(z_rng, law, (r, keys, d_k), out=z_buf[:r])
                score += s * np.vecdot(z, x[:, None, :])
            score *= c
            done += r
            yield score


@dataclass(frozen=True)
class CosineSim(Simulation):
    r"""Cosine :math:`q\cdot k/(\lVert q\rVert\lVert k\rVert)` of a query and a correlated key (statistic ``"cosine"``).

    ``method="chi2"`` (Gaussian entries): with :math:`R^2 = \lVert x\rVert^2 \sim \chi^2(d_k)`,
    :math:`w \sim N(0, 1)` (the noise along x) and :math:`V \sim \chi^2(d_k - 1)` (the rest of
    :math:`\lVert z\rVert^2`), :math:`q\cdot k \propto \rho R^2 + s R w` and
    :math:`\lVert k\rVert^2 \propto \rho^2R^2 + 2\rho s R w + s^2(w^2 + V)` exactly.
    """

    d_k: int
    rho: float = 0.0
    entries: EntryLaw = field(default_factory=lambda: entry_law("gaussian"))
    method: str = "direct"

    statistics: ClassVar[tuple[str, ...]] = ("cosine",)

    def __post_init__(self):
        object.__setattr__(self, "d_k", check_d_k(self.d_k))
        object.__setattr__(self, "rho", check_rho(self.rho))
        object.__setattr__(self, "entries", entry_law(self.entries))
        if self.method not in ("direct", "chi2"):
            raise ValueError(f"method must be 'direct' or 'chi2'; got {self.method!r}")
        check_method(self.method, self.entries)

    @property
    def key(self):
        return stream_key("cosine", d_k=self.d_k, rho=self.rho, entries=self.entries, method=self.method)

    @property
    def cost(self):
        return 3 if self.method == "chi2" else 2 * self.d_k

    def central_moments(self, statistic):
        # rho = 0, Gaussian entries: cos^2 ~ Beta(1/2, (d - 1)/2), so E cos^(2j) = (2j-1)!! / (d (d+2) ... (d+2j-2)).
        if statistic != "cosine" or self.rho != 0.0 or self.entries.name != "gaussian":
            return None
        d = float(self.d_k)
        return (1 / d, 0.0, 3 / (d * (d + 2)), 0.0, 15 / (d * (d + 2) * (d + 4)))

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):
        d, rho = self.d_k, self.rho
        s = math.sqrt(max(0.0, 1.0 - rho * rho))
        q_rng, z_rng = block_generator(sim_seed, block, 0), block_generator(sim_seed, block, 1)
        if self.method == "chi2":
            r2 = q_rng.chisquare(d, size=rows)
            w = z_rng.standard_normal(rows)
            v = z_rng.chisquare(d - 1, size=rows) if d > 1 else np.zeros(rows)
            r = np.sqrt(r2)
            dot = rho * r2 + s * r * w
            kk = rho * rho * r2 + 2 * rho * s * r * w + s * s * (w * w + v)
            return {"cosine": dot / (r * np.sqrt(kk))}
        step = _rows_per_chunk(2 * d, chunk_size)
        out = np.empty(rows)
        for start in range(0, rows, step):
            r = min(step, rows - start)
            x = draw_entries(q_rng, self.entries, (r, d))
            k = rho * x
            if s > 0:
                k += s * draw_entries(z_rng, self.entries, (r, d))
            out[start : start + r] = np.vecdot(x, k) / np.sqrt(np.vecdot(x, x) * np.vecdot(k, k))
        return {"cosine": out}


def square_mean_variance(d_k, n_keys, *, sigma_q=1.0, sigma_k=1.0, entries="gaussian"):
    r"""Variance of :math:`r = \frac1K\sum_j s_j^2` for raw scores of K keys sharing a query, rho = 0.

    :math:`\operatorname{Var}(r) = \operatorname{Var}(s^2)/K + (1 - 1/K)\operatorname{Cov}(s_1^2, s_2^2)`
    with :math:`\operatorname{Var}(s^2) = \kappa_4 + 2\kappa_2^2` (s has mean 0) and
    :math:`\operatorname{Cov}(s_1^2, s_2^2) = \operatorname{Var}(E[s^2 | q]) = \sigma_q^4\sigma_k^4 d_k(\mu_4 - 1)`:
    keys sharing a query are nearly independent once :math:`d_k` is large.
    """

    k = score_cumulants(d_k, 0.0, sigma_q=sigma_q, sigma_k=sigma_k, entries=entries, scale="none")
    var_sq = k[3] + 2 * k[1] ** 2
    cov = sigma_q**4 * sigma_k**4 * d_k * (law_moment(entries, 4) - 1.0)
    return float(var_sq / n_keys + (1.0 - 1.0 / n_keys) * cov)


# --------------------------------------------------------------------- public samplers


def _score_sim(d_k, rho, sigma_q, sigma_k, entries, n_keys, method):
    if n_keys is not None:
        check_integer(n_keys, "n_keys", what="a positive integer or None")
    return ScoreSim(d_k, rho, sigma_q, sigma_k, entry_law(entries), method, 1 if n_keys is None else int(n_keys))


def score_chunks(
    n,
    d_k,
    *,
    rho=0.0,
    sigma_q=1.0,
    sigma_k=1.0,
    entries="gaussian",
    scale="sqrt",
    n_keys=None,
    seed,
    chunk_size=DEFAULT_CHUNK_SIZE,
    method="direct",
):
    r"""Yield the scores :math:`c\,q^\top k` of ``n`` independent rows, a chunk at a time.

    Each chunk has shape ``(rows,)``, or ``(rows, n_keys)`` with a batch of ``n_keys`` keys
    per query.  No array holds more than ``chunk_size`` random numbers.  The stream is
    the one the claims runner uses for the same :class:`ScoreSim` and ``seed``.
    """
    n = check_integer(n, "n")
    sim = _score_sim(d_k, rho, sigma_q, sigma_k, entries, n_keys, method)
    c = score_scale(sim.d_k, scale)
    sim_seed = simulation_seed(as_seed_sequence(seed), sim.key)
    if method in ("direct", "float32"):
        _rows_per_chunk(sim.d_k * sim.n_keys, chunk_size)  # validate before the first draw
    for b in range(-(-n // sim.block_rows)):
        rows = min(sim.block_rows, n - b * sim.block_rows)
        for chunk in sim.block_chunks(sim_seed, b, rows, chunk_size):
            chunk = chunk * c
            yield chunk[:, 0] if n_keys is None else chunk


def sample_scores(n, d_k, **kwargs):
    """All ``n`` scores of :func:`score_chunks` as one array (for tests that need every draw)."""
    return np.concatenate(list(score_chunks(n, d_k, **kwargs)), axis=0)


def score_summary(n, d_k, **kwargs) -> MomentSummary:
    """Streaming moment summary (:mod:`stats.inference.estimators`) of ``n`` scores, in bounded memory."""
    total = None
    for chunk in score_chunks(n, d_k, **kwargs):
        part = moment_summary(chunk)
        total = part if total is None else merge_moments(total, part)
    return total


def sample_queries_keys(n, d_k, *, rho=0.0, sigma_q=1.0, sigma_k=1.0, entries="gaussian", n_keys=None, seed):
    """Materialized queries ``(n, d_k)`` and keys ``(n, d_k)`` or ``(n, n_keys, d_k)``.

    Uses the same streams as the ``"direct"`` method of :func:`score_chunks`, so
    ``q @ k`` reproduces its raw scores.
    """
    n = check_integer(n, "n")
    sim = _score_sim(d_k, rho, sigma_q, sigma_k, entries, n_keys, "direct")
    sim_seed = simulation_seed(as_seed_sequence(seed), sim.key)
    d, keys = sim.d_k, sim.n_keys
    s = math.sqrt(max(0.0, 1.0 - sim.rho * sim.rho))
    Q = np.empty((n, d))
    K = np.empty((n, keys, d))
    for b in range(-(-n // BLOCK_ROWS)):
        rows = min(BLOCK_ROWS, n - b * BLOCK_ROWS)
        q_rng, z_rng = block_generator(sim_seed, b, 0), block_generator(sim_seed, b, 1)
        sl = slice(b * BLOCK_ROWS, b * BLOCK_ROWS + rows)
        x = draw_entries(q_rng, sim.entries, (rows, d))
        K[sl] = sim.rho * x[:, None, :]
        if s > 0:
            K[sl] += s * draw_entries(z_rng, sim.entries, (rows, keys, d))
        Q[sl] = x
    Q *= sim.sigma_q
    K *= sim.sigma_k
    return Q, (K[:, 0] if n_keys is None else K)
