r"""Saturation of a fresh head's softmax, simulated (section "Saturation, measured").

A row is one query with ``n_keys`` keys, unit-variance entries, scores
:math:`s_j = c\,q\cdot k_j` with c from the scaling (``"none"``: 1, ``"sqrt"``:
:math:`1/\sqrt{d_k}`, ``"mup"``: :math:`1/d_k`), and weights :math:`a = \mathrm{softmax}(s)`.
Per row the model records

=================  ============================================================
``max_weight``     :math:`\max_j a_j`
``trace``          :math:`1 - \lVert a\rVert^2`, the trace of the softmax Jacobian
``tr_j2``          :math:`\operatorname{tr}J^2 = \sum a_i^2 - 2\sum a_i^3 + (\sum a_i^2)^2`
``entropy``        :math:`-\sum_j a_j \log a_j`
``one_hot_90``     1 if :math:`\max_j a_j > 0.9` (the row is nearly one-hot), else 0
``one_hot_99``     1 if :math:`\max_j a_j > 0.99`
``winner_bound``   identity: :math:`\max_j a_j \ge e^{g}/(e^{g} + T - 1)` with g the
                   gap between the two largest scores (normalised violation)
``trace_bound``    identity: :math:`1 - \lVert a\rVert^2 \le 1 - 1/T` (normalised violation)
``winner``         the index of the largest weight, :math:`\arg\max_j s_j` (a category 0..T-1;
                   a tie goes to the lowest index, so with entries that tie with positive
                   probability -- Rademacher -- it is biased towards 0: :attr:`SaturationSim.ties_possible`)
=================  ============================================================

Two methods, each exact for the laws it accepts:

``"direct"``
    the section's own recipe for any entry law: draw q and the keys, form the scores,
    take the softmax; a row costs :math:`(n_{keys} + 1)\,d_k` random numbers.
``"exact"`` (Gaussian entries)
    given q the scores are i.i.d. :math:`N(0, c^2\lVert q\rVert^2)` with
    :math:`\lVert q\rVert^2 \sim \chi^2(d_k)`: one chi-square and ``n_keys`` normals a row.

The identities' tolerance is :math:`4(T + 4)u`, u the float64 unit roundoff: the largest
weight :math:`1/\sum_j e^{s_j - m}` and the bound each carry at most :math:`(T + 2)u`
relative rounding error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .._validation import as_real_array, check_choice, check_d_k, check_finite, check_generator, check_integer, check_positive
from ..engine.simulation import Simulation
from ..engine.scratch import scratch
from ..engine.streams import block_generator, stream_key
from ..exact.formats import UNIT_ROUNDOFF
from .laws import EntryLaw, entry_law
from .sampling import draw_entries
from ..training.scalings import SCORE_SCALINGS, scaling_named
from .scores import score_scale

__all__ = [
    "SATURATION_METHODS",
    "SATURATION_STATISTICS",
    "SaturationSim",
    "SmallScoreSim",
    "exact_saturation_scores",
    "row_trace",
    "saturation_row_statistics",
    "winner_bound",
]

SATURATION_METHODS = ("auto", "direct", "exact")
SATURATION_STATISTICS = ("max_weight", "trace", "entropy", "one_hot_90", "one_hot_99")
_ROW_STATISTICS = SATURATION_STATISTICS + ("tr_j2", "winner_bound", "trace_bound", "winner")


def row_trace(a):
    r"""Trace of the softmax Jacobian of each row of weights: :math:`1 - \lVert a\rVert^2`."""
    a = check_finite(as_real_array(a, "a"), "a")
    if a.ndim == 0 or a.shape[-1] == 0:
        raise ValueError(f"a must hold at least one weight along its last axis; got shape {a.shape}")
    return 1.0 - np.vecdot(a, a)


def winner_bound(gap, n_keys):
    r"""The largest weight's lower bound :math:`e^{g}/(e^{g} + T - 1) = 1/(1 + (T - 1)e^{-g})` for a gap g."""
    gap = as_real_array(gap, "gap", dtype=np.float64)
    if np.any(np.isnan(gap)):
        raise ValueError("gap contains NaN")
    n_keys = check_integer(n_keys, "n_keys", maximum=1 << 24)
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + (n_keys - 1) * np.exp(-gap))


def exact_saturation_scores(q_rng, k_rng, rows, d_k, n_keys, c):
    r"""Scores of ``rows`` rows for Gaussian entries without drawing q or k:
    :math:`s_j = c\,\lVert q\rVert\,w_j` with :math:`\lVert q\rVert^2 \sim \chi^2(d_k)`, :math:`w_j \sim N(0, 1)`."""
    check_generator(q_rng, "q_rng")
    check_generator(k_rng, "k_rng")
    rows = check_integer(rows, "rows", maximum=1 << 24)
    d_k = check_d_k(d_k)
    n_keys = check_integer(n_keys, "n_keys", maximum=1 << 24)
    c = check_positive(c, "c")
    r = np.sqrt(q_rng.chisquare(d_k, size=rows))
    w = k_rng.standard_normal((rows, n_keys))
    w *= (c * r)[:, None]
    return w


def saturation_row_statistics(s, formulas=None):
    """Per-row saturation statistics (module docstring) of a ``(rows, T)`` array of scores.

    ``formulas`` supplies the ``row_trace`` and ``winner_bound`` under test; without it this
    module's own are used (the fields' defaults in :class:`stats.formulas.Formulas`).
    """
    trace_of = row_trace if formulas is None else formulas.row_trace
    bound_of = winner_bound if formulas is None else formulas.winner_bound
    s = as_real_array(s, "s")
    if s.ndim != 2 or s.shape[0] < 1 or s.shape[1] < 1:
        raise ValueError(f"s must be a (rows, T) array with rows, T >= 1; got shape {s.shape}")
    check_finite(s, "s")
    T = s.shape[1]
    win = s.argmax(axis=1)[:, None]
    with np.errstate(over="ignore"):  # a gap past the largest double is -inf: its weight is 0 all the same
        sm = s - np.take_along_axis(s, win, axis=1)
    e = np.exp(sm)
    Z = e.sum(axis=1)
    a = e * (1.0 / Z)[:, None]
    max_w = 1.0 / Z
    trace = trace_of(a)
    a2 = 1.0 - trace if trace_of is row_trace else np.vecdot(a, a)
    tr_j2 = a2 - 2.0 * np.vecdot(a * a, a) + a2 * a2
    with np.errstate(invalid="ignore"):
        weighted_gap = np.vecdot(a, sm)
    lost = np.isnan(weighted_gap)  # 0 * -inf: a gap of -inf has weight 0 and adds nothing (0 log 0 = 0)
    if lost.any():
        weighted_gap[lost] = np.vecdot(a[lost], np.where(a[lost] > 0, sm[lost], 0.0))
    entropy = np.log(Z) - weighted_gap
    np.put_along_axis(sm, win, -np.inf, axis=1)
    runner_up = sm.max(axis=1)  # the winner's entry is 0; the runner-up's gap is -runner_up
    tol = 4 * (T + 4) * UNIT_ROUNDOFF
    bound = bound_of(-runner_up, T)
    return {
        "max_weight": max_w,
        "trace": trace,
        "entropy": entropy,
        "one_hot_90": (max_w > 0.9).astype(np.float64),
        "one_hot_99": (max_w > 0.99).astype(np.float64),
        "tr_j2": tr_j2,
        "winner_bound": np.maximum(bound - max_w, 0.0) / tol,
        "trace_bound": np.maximum(trace - (1.0 - 1.0 / T), 0.0) / tol,
        "winner": win[:, 0].astype(np.float64),
    }


def check_scaling(scaling):
    """``scaling`` if it is one of :data:`~stats.training.scalings.SCORE_SCALINGS`, else a ValueError naming it."""
    scaling_named(scaling, among=SCORE_SCALINGS)
    return scaling


def resolve_saturation_method(method, law):
    """The sampler ``method`` stands for with entries ``law``: ``"auto"`` is the exact chi-square
    shortcut for Gaussian entries and the direct recipe otherwise; a ValueError names a bad one."""
    if not isinstance(law, EntryLaw):
        raise TypeError(f"law must be an EntryLaw (stats.entry_law(name)); got {type(law).__name__}")
    check_choice(method, "method", SATURATION_METHODS)
    if method == "auto":
        return "exact" if law.name == "gaussian" else "direct"
    if method == "exact" and law.name != "gaussian":
        raise ValueError(f"method='exact' is exact for Gaussian entries only; got entries={law.label!r} (use 'direct')")
    return method


@dataclass(frozen=True)
class SaturationSim(Simulation):
    """Rows of one query against ``n_keys`` keys: the statistics of the module docstring."""

    d_k: int
    n_keys: int = 32
    scaling: str = "sqrt"
    entries: EntryLaw = field(default_factory=lambda: entry_law("gaussian"))
    method: str = "exact"

    statistics: ClassVar[tuple[str, ...]] = _ROW_STATISTICS
    uses: ClassVar[tuple[str, ...]] = ("row_trace", "winner_bound", "saturation_sampler")

    def __post_init__(self):
        check_d_k(self.d_k)
        check_integer(self.n_keys, "n_keys", minimum=2, maximum=1 << 24, what="an integer >= 2")
        check_scaling(self.scaling)
        object.__setattr__(self, "entries", entry_law(self.entries))
        if self.method == "auto":
            raise ValueError("a SaturationSim needs a concrete method: 'direct' or 'exact'")
        resolve_saturation_method(self.method, self.entries)

    @property
    def ties_possible(self):
        """Whether two scores of a row tie with positive probability (entries with atoms, drawn
        directly), which makes ``winner``'s lowest-index tie-break a bias."""
        return self.method == "direct" and self.entries.name == "rademacher"

    @property
    def key(self):
        return stream_key(
            "saturation", d_k=self.d_k, n_keys=self.n_keys, scaling=self.scaling, entries=self.entries, method=self.method
        )

    @property
    def cost(self):
        # Random numbers drawn, plus the row statistics' work in the same units (softmax, sort,
        # logs: measured at about 8 numbers' worth per key).
        draws = 1 + self.n_keys if self.method == "exact" else (1 + self.n_keys) * self.d_k
        return draws + 8 * self.n_keys

    def scores(self, sim_seed, block, rows, formulas, chunk_size):
        """The block's scores, ``(rows, n_keys)``."""
        c = score_scale(self.d_k, self.scaling)
        q_rng, k_rng = block_generator(sim_seed, block, 0), block_generator(sim_seed, block, 1)
        if self.method == "exact":
            return formulas.saturation_sampler(q_rng, k_rng, rows, self.d_k, self.n_keys, c)
        out = np.empty((rows, self.n_keys))
        step = max(1, min(rows, chunk_size // ((1 + self.n_keys) * self.d_k)))
        # Pooled buffers: fresh ones would cost a page fault per page on every block (engine/scratch.py).
        with scratch((step, self.d_k)) as x_buf, scratch((step, self.n_keys, self.d_k)) as z_buf:
            for start in range(0, rows, step):
                r = min(step, rows - start)
                x = draw_entries(q_rng, self.entries, (r, self.d_k), out=x_buf[:r])
                z = draw_entries(k_rng, self.entries, (r, self.n_keys, self.d_k), out=z_buf[:r])
                out[start : start + r] = c * np.vecdot(z, x[:, None, :])
        return out

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):
        return saturation_row_statistics(self.scores(sim_seed, block, rows, formulas, chunk_size), formulas)


@dataclass(frozen=True)
class SmallScoreSim(Simulation):
    r"""The mirror image: scores :math:`\varepsilon z_j`, :math:`z_j` i.i.d. N(0, 1), and an upstream gradient g ~ N(0, I).

    Statistics per row (T = ``n_keys``):

    ``trace_defect``
        :math:`(\lVert a\rVert^2 - 1/T)/\varepsilon^2 = \sum_j (a_j - 1/T)^2/\varepsilon^2`,
        whose mean is :math:`(T - 1)/T^2 + O(\varepsilon^2)` by the second-order expansion;
    ``score_grad``
        :math:`T^2\lVert ds\rVert^2/(T - 1)` with :math:`ds = a \odot (g - (a\cdot g)\mathbf 1)`,
        mean :math:`1 + O(\varepsilon^2)`: each score's gradient is of order 1/T;
    ``uniform_bound``
        identity: :math:`\max_j |a_j - 1/T| \le (e^{\varepsilon(\max z - \min z)} - 1)/T`
        (normalised violation), the weights are within :math:`O(\varepsilon)` of 1/T.
    """

    epsilon: float
    n_keys: int = 32

    statistics: ClassVar[tuple[str, ...]] = ("trace_defect", "score_grad", "uniform_bound")
    uses: ClassVar[tuple[str, ...]] = ("softmax_vjp",)

    def __post_init__(self):
        if isinstance(self.epsilon, bool) or not (isinstance(self.epsilon, (int, float)) and 0 < self.epsilon <= 1):
            raise ValueError(f"epsilon must lie in (0, 1]; got {self.epsilon!r}")
        object.__setattr__(self, "epsilon", float(self.epsilon))
        check_integer(self.n_keys, "n_keys", minimum=2, what="an integer >= 2")

    @property
    def key(self):
        return stream_key("small-scores", epsilon=self.epsilon, n_keys=self.n_keys)

    @property
    def cost(self):
        return 2 * self.n_keys

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):
        T, eps = self.n_keys, self.epsilon
        z = block_generator(sim_seed, block, 0).standard_normal((rows, T))
        g = block_generator(sim_seed, block, 1).standard_normal((rows, T))
        s = eps * z
        e = np.exp(s - s.max(axis=1, keepdims=True))
        a = e / e.sum(axis=1, keepdims=True)
        dev = a - 1.0 / T
        ds = formulas.softmax_vjp(a, g)
        spread = z.max(axis=1) - z.min(axis=1)
        bound = np.expm1(eps * spread) / T
        tol = 4 * (T + 4) * UNIT_ROUNDOFF
        return {
            "trace_defect": np.vecdot(dev, dev) / eps**2,
            "score_grad": T * T * np.vecdot(ds, ds) / (T - 1),
            "uniform_bound": np.maximum(np.abs(dev).max(axis=1) - bound * (1 + 8 * T * UNIT_ROUNDOFF), 0.0) / tol,
        }
