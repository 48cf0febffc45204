r"""Reproducible, memory-bounded draws of queries, keys and their scores.

Queries have i.i.d. entries :math:`q_m = \sigma_q x_m`; each key is
:math:`k = \rho(\sigma_k/\sigma_q)\,q + \sigma_k\sqrt{1-\rho^2}\,z`, with x and z i.i.d.
from a standardized entry law (:mod:`stats.laws`).

Reproducibility.  Rows (one query and its key or keys) are grouped in fixed blocks of
:data:`BLOCK_ROWS`.  Block b draws from two streams spawned from
``SeedSequence(seed).spawn_key + (b,)``, one for the queries and one for the key noise,
each consumed in row order.  Chunks only cut a block into pieces, and numpy's
generators give the same numbers whether an array is drawn at once or in pieces, so the
result depends on ``(seed, n, parameters)`` and never on ``chunk_size``.  Blocks are
independent streams that can be addressed directly, which is what a parallel run needs.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ._validation import check_d_k, check_integer, check_positive, check_rho
from .closed_forms import score_scale
from .estimators import MomentSummary, merge_moments, moment_summary
from .laws import entry_law

__all__ = [
    "BLOCK_ROWS",
    "DEFAULT_CHUNK_SIZE",
    "as_seed_sequence",
    "draw_entries",
    "sample_queries_keys",
    "sample_scores",
    "score_chunks",
    "score_summary",
]

BLOCK_ROWS = 8192
DEFAULT_CHUNK_SIZE = 1 << 20  # random numbers held at once (8 MiB of float64)


def as_seed_sequence(seed):
    """``seed`` as a :class:`numpy.random.SeedSequence` (an int or a SeedSequence; never None)."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise TypeError(f"seed must be a non-negative int or a numpy SeedSequence; got {seed!r}")
    return np.random.SeedSequence(int(seed))


def draw_entries(rng, law, shape, out=None):
    """Standardized i.i.d. entries of ``law`` (mean 0, variance 1) from generator ``rng``."""
    law = entry_law(law)
    if law.name == "student_t":
        x = rng.standard_t(law.df, size=shape)
        x *= math.sqrt((law.df - 2.0) / law.df)
        if out is None:
            return x
        out[...] = x
        return out
    buf = np.empty(shape) if out is None else out
    if law.name == "gaussian":
        return rng.standard_normal(out=buf)
    rng.random(out=buf)
    if law.name == "rademacher":
        np.subtract(buf, 0.5, out=buf)
        return np.copysign(1.0, buf, out=buf)  # copysign of +0.0 is +1: never a zero entry
    # uniform on (-sqrt 3, sqrt 3)
    np.multiply(buf, 2.0 * math.sqrt(3.0), out=buf)
    return np.subtract(buf, math.sqrt(3.0), out=buf)


def _check_common(n, d_k, rho, sigma_q, sigma_k, entries, n_keys):
    if n_keys is not None:
        check_integer(n_keys, "n_keys", what="a positive integer or None")
    return (
        check_integer(n, "n"),
        check_d_k(d_k),
        check_rho(rho),
        check_positive(sigma_q, "sigma_q"),
        check_positive(sigma_k, "sigma_k"),
        entry_law(entries),
    )


def _block_generators(root, b):
    block = np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, b))
    q_seq, z_seq = block.spawn(2)
    return np.random.Generator(np.random.PCG64(q_seq)), np.random.Generator(np.random.PCG64(z_seq))


def _row_pieces(n, rows_per_chunk):
    """Yield ``(block, generators' first use?, rows)``: blocks of BLOCK_ROWS cut into chunks."""
    for b in range(-(-n // BLOCK_ROWS)):
        rows_in_block = min(BLOCK_ROWS, n - b * BLOCK_ROWS)
        done = 0
        while done < rows_in_block:
            rows = min(rows_per_chunk, rows_in_block - done)
            yield b, done == 0, rows
            done += rows


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
):
    r"""Yield the scores :math:`c\,q^\top k` of ``n`` independent rows, a chunk at a time.

    Each chunk has shape ``(rows,)``, or ``(rows, n_keys)`` with a batch of ``n_keys`` keys
    per query.  No array holds more than ``chunk_size`` random numbers.  The score is
    formed as :math:`\sigma_q\sigma_k(\rho\,\lVert x\rVert^2 + \sqrt{1-\rho^2}\;x\cdot z)`,
    which is :math:`q^\top k` without building k.
    """
    n, d_k, rho, sq, sk, law = _check_common(n, d_k, rho, sigma_q, sigma_k, entries, n_keys)
    c = score_scale(d_k, scale) * sq * sk
    root = as_seed_sequence(seed)
    keys = 1 if n_keys is None else int(n_keys)
    per_row = d_k * keys
    chunk_size = check_integer(chunk_size, "chunk_size", minimum=per_row, what=f"an integer >= d_k * n_keys = {per_row}")
    rows_per_chunk = min(BLOCK_ROWS, chunk_size // per_row)
    s = math.sqrt(max(0.0, 1.0 - rho * rho))
    x_buf = np.empty((rows_per_chunk, d_k))
    z_buf = np.empty((rows_per_chunk, keys, d_k)) if s > 0 else None
    for b, first, rows in _row_pieces(n, rows_per_chunk):
        if first:
            q_rng, z_rng = _block_generators(root, b)
        x = draw_entries(q_rng, law, (rows, d_k), out=x_buf[:rows])
        score = np.zeros((rows, keys))
        if rho != 0.0:
            score += rho * np.vecdot(x, x)[:, None]
        if s > 0:
            z = draw_entries(z_rng, law, (rows, keys, d_k), out=z_buf[:rows])
            score += s * np.vecdot(z, x[:, None, :])
        score *= c
        yield score[:, 0] if n_keys is None else score


def sample_scores(n, d_k, **kwargs):
    """All ``n`` scores of :func:`score_chunks` as one array (for tests that need every draw)."""
    return np.concatenate(list(score_chunks(n, d_k, **kwargs)), axis=0)


def score_summary(n, d_k, **kwargs) -> MomentSummary:
    """Streaming moment summary (:mod:`stats.estimators`) of ``n`` scores, in bounded memory."""
    total = None
    for chunk in score_chunks(n, d_k, **kwargs):
        part = moment_summary(chunk)
        total = part if total is None else merge_moments(total, part)
    return total


def sample_queries_keys(n, d_k, *, rho=0.0, sigma_q=1.0, sigma_k=1.0, entries="gaussian", n_keys=None, seed):
    """Materialized queries ``(n, d_k)`` and keys ``(n, d_k)`` or ``(n, n_keys, d_k)``.

    Uses the same streams as :func:`score_chunks`, so ``q @ k`` reproduces its raw scores.
    """
    n, d_k, rho, sq, sk, law = _check_common(n, d_k, rho, sigma_q, sigma_k, entries, n_keys)
    root = as_seed_sequence(seed)
    keys = 1 if n_keys is None else int(n_keys)
    s = math.sqrt(max(0.0, 1.0 - rho * rho))
    Q = np.empty((n, d_k))
    K = np.empty((n, keys, d_k))
    for b, _, rows in _row_pieces(n, BLOCK_ROWS):
        q_rng, z_rng = _block_generators(root, b)
        sl = slice(b * BLOCK_ROWS, b * BLOCK_ROWS + rows)
        x = draw_entries(q_rng, law, (rows, d_k))
        K[sl] = rho * x[:, None, :]
        if s > 0:
            K[sl] += s * draw_entries(z_rng, law, (rows, keys, d_k))
        Q[sl] = x
    Q *= sq
    K *= sk
    return Q, (K[:, 0] if n_keys is None else K)
