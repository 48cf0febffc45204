r"""Random problems for the exact half: each row is one small attention problem, and every
statistic is an identity's normalised violation (violated when > 1; see
:mod:`stats.engine.summaries`).

* :class:`JacobianSim` -- rows of scores at random temperatures, including exactly
  one-hot and exactly uniform rows: the softmax Jacobian's properties (section "The
  Jacobian of softmax, and what saturation does to it").
* :class:`BackwardSim` -- random (Q, K, V, dO, mask): the forward pass against the
  section's three equations, the hand-derived backward pass against central finite
  differences of an independent reference forward, masked entries' score gradient, and
  :math:`D_i = dO_i\cdot O_i` (section "The backward pass of attention").
* :class:`TiledSim` -- tiled (FlashAttention-style) forward and backward against the
  dense ones, with key counts that are not multiples of the tile.
* :class:`FlopSim` -- random shapes: the matrix-product FLOPs the code actually performs,
  forward and backward, against the closed-form count (``formulas.attention_flops``).
* :class:`StableSoftmaxSim` -- rows of large scores in float16, bfloat16 or float32: the
  stable softmax stays finite, its denominator is at least 1, its weights sum to 1.

Tolerances are derived from the float format's unit roundoff u and stated where they
are computed.  Finite differences use step :math:`h = 10^{-5}` in float64, whose error
is :math:`O(h^2) + O(u/h)`, about 1e-10 of the gradient's scale; the tolerance is 1e-7.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._validation import MAX_ROWS, check_integer
from ..engine.simulation import Simulation
from ..engine.streams import block_generator, stream_key
from ..exact.attention import attention_backward, scaled_dot_product_attention, softmax
from ..exact.cost import attention_matmul_flops, count_matmuls
from ..exact.formats import FORMATS, UNIT_ROUNDOFF, float_format, format_max, softmax_terms, unit_roundoff
from ..exact.tiled import tiled_attention_backward, tiled_attention_forward

__all__ = [
    "BackwardSim",
    "FlopSim",
    "JacobianSim",
    "StableSoftmaxSim",
    "TiledSim",
    "attention_flops",
    "reference_attention",
]

_FD_STEP = 1e-5
_FD_TOL = 1e-7


def attention_flops(T_q, T_k, d_k, d_v):
    r"""Closed-form matrix-product FLOPs ``(forward, backward)`` of one head.

    Forward: :math:`QK^\top` and :math:`AV`, :math:`2T_qT_k(d_k + d_v)`.  Backward:
    :math:`dO\,V^\top`, :math:`A^\top dO` (:math:`2T_qT_kd_v` each), :math:`dS\,K` and
    :math:`dS^\top Q` (:math:`2T_qT_kd_k` each), :math:`4T_qT_k(d_k + d_v)`: exactly twice
    the forward, for any :math:`d_v`, not only :math:`d_v = d_k`.
    """
    T_q, T_k, d_k, d_v = (check_integer(v, k, maximum=MAX_ROWS) for k, v in (("T_q", T_q), ("T_k", T_k), ("d_k", d_k), ("d_v", d_v)))
    fwd = 2 * T_q * T_k * (d_k + d_v)
    return fwd, 2 * fwd


def reference_attention(Q, K, V, c, keep=None):
    """Output of the section's three equations, written independently of :mod:`stats.exact`."""
    S = c * np.einsum("...id,...jd->...ij", Q, K)
    if keep is not None:
        S = np.where(keep, S, -np.inf)
    m = S.max(axis=-1, keepdims=True)
    e = np.exp(S - m)
    A = e / e.sum(axis=-1, keepdims=True)
    return np.einsum("...ij,...jv->...iv", A, V)


@dataclass(frozen=True)
class JacobianSim(Simulation):
    r"""Softmax-Jacobian identities on rows at random temperatures (module docstring).

    Row r has scores :math:`\tau z` with :math:`\log_{10}\tau` uniform on [-3, 3]; every
    8th row is exactly one-hot (its winner's score 0, the others below -10^4, whose
    exponentials underflow to 0) and every 8th + 1 row is exactly uniform (:math:`\tau = 0`).

    ``shift_invariance``: the section's softmax of :math:`s + b\mathbf 1` against that of
    :math:`s`, for a shift b with :math:`\log_{10}|b|` uniform on [-3, 3] and a random sign
    (a naive softmax overflows at such shifts).  Rounding :math:`s_j + b` moves each exponent
    by at most :math:`u(|s_j| + |b|)`, and a weight's relative error is at most twice the
    largest such move, so the tolerance is :math:`4((T + 4) + 3(\max|s| + |b|))u`.
    """

    n_keys: int = 8

    statistics: ClassVar[tuple[str, ...]] = (
        "symmetric",
        "rows_sum_zero",
        "psd",
        "trace",
        "quadratic_form",
        "vjp",
        "one_hot_zero",
        "uniform_trace",
        "shift_invariance",
    )
    uses: ClassVar[tuple[str, ...]] = ("softmax_jacobian", "softmax_vjp", "row_trace")

    def __post_init__(self):
        check_integer(self.n_keys, "n_keys", minimum=2, what="an integer >= 2")

    @property
    def key(self):
        return stream_key("jacobian-properties", n_keys=self.n_keys)

    @property
    def cost(self):
        return 3 * self.n_keys + self.n_keys**2

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):
        n = self.n_keys
        rng0, rng1 = block_generator(sim_seed, block, 0), block_generator(sim_seed, block, 1)
        z = rng0.standard_normal((rows, n))
        tau = 10.0 ** rng0.uniform(-3, 3, size=rows)
        idx = np.arange(rows) + block * self.block_rows
        one_hot, uniform = idx % 8 == 0, idx % 8 == 1
        tau = np.where(uniform, 0.0, tau)
        g = rng1.standard_normal((rows, n))
        u = rng1.standard_normal((rows, n))
        s = tau[:, None] * z
        winner = np.argmax(z, axis=1)
        hot = np.full((rows, n), -1e4) * (1.0 + np.abs(z))
        np.put_along_axis(hot, winner[:, None], 0.0, axis=1)
        s = np.where(one_hot[:, None], hot, s)
        e = np.exp(s - s.max(axis=1, keepdims=True))
        a = e / e.sum(axis=1, keepdims=True)
        J = formulas.softmax_jacobian(a)
        tol = 16 * n * UNIT_ROUNDOFF
        lam_min = np.linalg.eigvalsh(J)[:, 0]
        Jg = np.einsum("rij,rj->ri", J, g)
        quad = np.einsum("ri,rij,rj->r", u, J, u)
        wvar = np.vecdot(a, u * u) - np.vecdot(a, u) ** 2
        scale_u = np.vecdot(a, u * u) + np.vecdot(a, np.abs(u)) ** 2
        diag_sum = np.trace(J, axis1=1, axis2=2)
        # The shift's own stream (2), so the other statistics keep their draws.
        rng2 = block_generator(sim_seed, block, 2)
        b = np.where(rng2.random(rows) < 0.5, -1.0, 1.0) * 10.0 ** rng2.uniform(-3, 3, size=rows)
        shifted = softmax(s + b[:, None])
        shift_tol = 4 * ((n + 4) + 3 * (np.abs(s).max(axis=1) + np.abs(b))) * UNIT_ROUNDOFF
        return {
            "symmetric": np.where(np.any(J != np.swapaxes(J, 1, 2), axis=(1, 2)), 2.0, 0.0),
            "rows_sum_zero": np.abs(J.sum(axis=2)).max(axis=1) / tol,
            "psd": np.maximum(-lam_min, 0.0) / tol,
            "trace": np.abs(diag_sum - formulas.row_trace(a)) / tol,
            "quadratic_form": np.abs(quad - wvar) / (tol * (1.0 + scale_u)),
            "vjp": np.abs(formulas.softmax_vjp(a, g) - Jg).max(axis=1) / (tol * (1.0 + np.abs(g).max(axis=1))),
            "one_hot_zero": np.where(one_hot & np.any(J != 0, axis=(1, 2)), 2.0, 0.0),
            "uniform_trace": np.where(uniform, np.abs(formulas.row_trace(a) - (1.0 - 1.0 / n)) / tol, 0.0),
            "shift_invariance": np.abs(shifted - softmax(s)).max(axis=1) / shift_tol,
        }


def _keep_mask(rng, rows, T_q, T_k):
    keep = rng.random((rows, T_q, T_k)) < 0.7
    forced = rng.integers(0, T_k, size=(rows, T_q))
    np.put_along_axis(keep, forced[..., None], True, axis=2)  # every query keeps at least one key
    return keep


@dataclass(frozen=True)
class BackwardSim(Simulation):
    """Forward and hand-derived backward pass on random problems (module docstring)."""

    T_q: int = 3
    T_k: int = 5
    d_k: int = 4
    d_v: int = 3
    masked: bool = False

    statistics: ClassVar[tuple[str, ...]] = ("forward", "finite_differences", "masked_score_grad", "d_identity")
    uses: ClassVar[tuple[str, ...]] = ("attention_backward",)
    block_rows: ClassVar[int] = 1024

    def __post_init__(self):
        for name in ("T_q", "T_k", "d_k", "d_v"):
            check_integer(getattr(self, name), name)

    @property
    def key(self):
        return stream_key("backward", T_q=self.T_q, T_k=self.T_k, d_k=self.d_k, d_v=self.d_v, masked=self.masked)

    @property
    def cost(self):
        P = self.T_q * self.d_k + self.T_k * (self.d_k + self.d_v)
        return 2 * P * self.T_q * self.T_k

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):

        Tq, Tk, dk, dv = self.T_q, self.T_k, self.d_k, self.d_v
        rng0, rng1 = block_generator(sim_seed, block, 0), block_generator(sim_seed, block, 1)
        Q = rng0.standard_normal((rows, Tq, dk))
        K = rng0.standard_normal((rows, Tk, dk))
        V = rng0.standard_normal((rows, Tk, dv))
        dO = rng0.standard_normal((rows, Tq, dv))
        keep = _keep_mask(rng1, rows, Tq, Tk) if self.masked else None
        c = 1.0 / math.sqrt(dk)
        O_ref = reference_attention(Q, K, V, c, keep)
        O = scaled_dot_product_attention(Q, K, V, keep)
        fwd_err = np.abs(O - O_ref).max(axis=(1, 2)) / (16 * (Tk + dk) * UNIT_ROUNDOFF * (1.0 + np.abs(V).max(axis=(1, 2))))
        dQ, dK, dV, dS = formulas.attention_backward(Q, K, V, dO, keep, return_score_grad=True)
        analytic = np.concatenate([dQ.reshape(rows, -1), dK.reshape(rows, -1), dV.reshape(rows, -1)], axis=1)
        params = np.concatenate([Q.reshape(rows, -1), K.reshape(rows, -1), V.reshape(rows, -1)], axis=1)
        sizes = (Tq * dk, Tk * dk, Tk * dv)

        def loss(p):
            q = p[:, : sizes[0]].reshape(rows, Tq, dk)
            k = p[:, sizes[0] : sizes[0] + sizes[1]].reshape(rows, Tk, dk)
            v = p[:, sizes[0] + sizes[1] :].reshape(rows, Tk, dv)
            return np.sum(dO * reference_attention(q, k, v, c, keep), axis=(1, 2))

        numeric = np.empty_like(params)
        for i in range(params.shape[1]):
            up, down = params.copy(), params.copy()
            up[:, i] += _FD_STEP
            down[:, i] -= _FD_STEP
            numeric[:, i] = (loss(up) - loss(down)) / (2 * _FD_STEP)
        fd_err = np.abs(analytic - numeric).max(axis=1) / (_FD_TOL * (1.0 + np.abs(numeric).max(axis=1)))
        if keep is not None:
            masked = np.where(np.any((dS != 0) & ~keep, axis=(1, 2)), 2.0, 0.0)
        else:
            masked = np.zeros(rows)
        # D_i two ways: from its definition (needs rows of A and dA) and as dO_i . O_i.
        S = c * np.einsum("rid,rjd->rij", Q, K)
        if keep is not None:
            S = np.where(keep, S, -np.inf)
        A = np.exp(S - S.max(axis=2, keepdims=True))
        A /= A.sum(axis=2, keepdims=True)
        dA = np.einsum("riv,rjv->rij", dO, V)
        D_def = np.sum(A * dA, axis=2)
        D_fast = np.sum(dO * O_ref, axis=2)
        D_scale = np.sum(A * np.abs(dA), axis=2) + np.sum(np.abs(dO) * np.abs(O_ref), axis=2)
        d_err = np.max(np.abs(D_def - D_fast) / (8 * (Tk + dv) * UNIT_ROUNDOFF * (1e-300 + D_scale)), axis=1)
        return {"forward": fwd_err, "finite_differences": fd_err, "masked_score_grad": masked, "d_identity": d_err}


@dataclass(frozen=True)
class TiledSim(Simulation):
    """Tiled attention against the dense version on random problems (module docstring)."""

    T_q: int = 6
    T_k: int = 37
    d_k: int = 8
    d_v: int = 5
    block_size: int = 8
    masked: bool = True

    statistics: ClassVar[tuple[str, ...]] = ("forward", "lse", "backward")
    block_rows: ClassVar[int] = 1024

    def __post_init__(self):
        for name in ("T_q", "T_k", "d_k", "d_v", "block_size"):
            check_integer(getattr(self, name), name)

    @property
    def key(self):
        return stream_key(
            "tiled",
            T_q=self.T_q,
            T_k=self.T_k,
            d_k=self.d_k,
            d_v=self.d_v,
            block_size=self.block_size,
            masked=self.masked,
        )

    @property
    def cost(self):
        return self.T_q * self.T_k * (self.d_k + self.d_v) * 3

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):
        from scipy.special import logsumexp


        Tq, Tk, dk, dv = self.T_q, self.T_k, self.d_k, self.d_v
        rng0, rng1 = block_generator(sim_seed, block, 0), block_generator(sim_seed, block, 1)
        Q = rng0.standard_normal((rows, Tq, dk))
        K = rng0.standard_normal((rows, Tk, dk))
        V = rng0.standard_normal((rows, Tk, dv))
        dO = rng0.standard_normal((rows, Tq, dv))
        keep = _keep_mask(rng1, rows, Tq, Tk) if self.masked else None
        O, A = scaled_dot_product_attention(Q, K, V, keep, return_weights=True)
        Ot, lse = tiled_attention_forward(Q, K, V, keep, block_size=self.block_size)
        S = np.einsum("rid,rjd->rij", Q / math.sqrt(dk), K)
        if keep is not None:
            S = np.where(keep, S, -np.inf)
        lse_ref = logsumexp(S, axis=2)
        tol = 32 * (Tk + dk + dv) * UNIT_ROUNDOFF
        grads = attention_backward(Q, K, V, dO, keep)
        tgrads = tiled_attention_backward(Q, K, V, Ot, lse, dO, keep, block_size=self.block_size)
        scale = max(1.0, float(np.abs(dO).max())) * (1.0 + np.abs(V).max(axis=(1, 2)))
        bwd = np.max([np.abs(g - t).max(axis=(1, 2)) for g, t in zip(grads, tgrads)], axis=0)
        return {
            "forward": np.abs(Ot - O).max(axis=(1, 2)) / (tol * (1.0 + np.abs(V).max(axis=(1, 2)))),
            "lse": np.abs(lse - lse_ref).max(axis=1) / (tol * (1.0 + np.abs(lse_ref).max(axis=1))),
            "backward": bwd / (tol * scale * (1.0 + np.abs(K).max(axis=(1, 2)) + np.abs(Q).max(axis=(1, 2)))),
        }


@dataclass(frozen=True)
class FlopSim(Simulation):
    """Matrix-product FLOPs counted in ``attention_backward`` on random shapes (module docstring).

    Shapes per row: batch and head counts in 1..3, :math:`T_q, T_k, d_k, d_v` in 1..48.
    """

    max_size: int = 48

    statistics: ClassVar[tuple[str, ...]] = ("forward_count", "backward_count", "backward_over_forward")

    def __post_init__(self):
        object.__setattr__(self, "max_size", check_integer(self.max_size, "max_size", maximum=4096))
    uses: ClassVar[tuple[str, ...]] = ("attention_backward", "attention_flops")
    block_rows: ClassVar[int] = 512

    @property
    def key(self):
        return stream_key("flops", max_size=self.max_size)

    @property
    def cost(self):
        return 2000.0  # one small backward pass a row; a weight for scheduling only

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):

        rng = block_generator(sim_seed, block, 0)
        out = {k: np.empty(rows) for k in self.statistics}
        for r in range(rows):
            B, H = rng.integers(1, 4, size=2)
            Tq, Tk, dk, dv = rng.integers(1, self.max_size + 1, size=4)
            Q = rng.standard_normal((B, H, Tq, dk))
            K = rng.standard_normal((B, H, Tk, dk))
            V = rng.standard_normal((B, H, Tk, dv))
            dO = rng.standard_normal((B, H, Tq, dv))
            with count_matmuls() as log:
                formulas.attention_backward(Q, K, V, dO)
            counted = attention_matmul_flops(log)
            fwd, bwd = formulas.attention_flops(Tq, Tk, dk, dv)
            fwd, bwd = B * H * fwd, B * H * bwd
            out["forward_count"][r] = 0.0 if counted["forward"] == fwd else 2.0
            out["backward_count"][r] = 0.0 if counted["backward"] == bwd else 2.0
            out["backward_over_forward"][r] = counted["backward"] / counted["forward"]
        return out


@dataclass(frozen=True)
class StableSoftmaxSim(Simulation):
    r"""Rows of T scores :math:`M z`, z ~ N(0, 1), :math:`\log_{10} M` uniform up to 90% of the
    format's largest number, in ``dtype``: the stable softmax never overflows (module docstring).

    Underflow, against the exact softmax :math:`a^\ast` of the same (rounded) scores in float64:
    ``lost_mass`` is :math:`\sum_{j: a_j = 0} a^\ast_j`, the weight the format's softmax drops
    because :math:`e^{s_j - m}` underflowed to 0; ``underflow_bound`` is its normalised violation
    of the bound :math:`(T - 1)\lambda^{1/(1+u)}`, λ the format's smallest subnormal and u its
    unit roundoff.  The bound: an exponential rounds to 0 only when the computed
    :math:`\mathrm{fl}(s_j - m) = (s_j - m)(1 + \delta) \le \ln\lambda`, so
    :math:`s_j - m \le \ln\lambda/(1 + u)`, and :math:`a^\ast_j \le e^{s_j - m}` since the
    exact denominator is at least 1; at most T - 1 weights underflow (the winner's is
    :math:`e^0`).  ``underflow_share`` is the share of a row's weights that underflowed."""

    dtype: str = "float16"
    n_keys: int = 32

    statistics: ClassVar[tuple[str, ...]] = ("finite", "denominator", "sums_to_one", "lost_mass", "underflow_bound",
                                             "underflow_share")

    def __post_init__(self):

        if not isinstance(self.dtype, str) or self.dtype not in FORMATS:
            raise ValueError(f"dtype must be one of {FORMATS} (a name); got {self.dtype!r}")
        check_integer(self.n_keys, "n_keys", minimum=2, what="an integer >= 2")

    @property
    def key(self):
        return stream_key("stable-softmax", dtype=self.dtype, n_keys=self.n_keys)

    @property
    def cost(self):
        return 2 * self.n_keys

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):

        dt = float_format(self.dtype)
        rng = block_generator(sim_seed, block, 0)
        z = rng.standard_normal((rows, self.n_keys))
        top = 0.9 * float(format_max(dt)) / np.abs(z).max(axis=1)
        M = 10.0 ** rng.uniform(-2.0, np.log10(top))
        s = (M[:, None] * z).astype(dt)
        a = softmax(s).astype(np.float64)
        _, denom = softmax_terms(s)
        u = unit_roundoff(self.dtype)
        tol = 4 * (self.n_keys + 2) * u
        s64 = s.astype(np.float64)  # the reference, written independently of the softmax under test
        e64 = np.exp(s64 - s64.max(axis=1, keepdims=True))
        exact = e64 / e64.sum(axis=1, keepdims=True)
        dropped = a == 0.0
        lost = np.where(dropped, exact, 0.0).sum(axis=1)
        bound = (self.n_keys - 1) * float(np.finfo(dt).smallest_subnormal) ** (1.0 / (1.0 + u))
        with np.errstate(invalid="ignore"):
            return {
                "finite": np.where(np.all(np.isfinite(a), axis=1), 0.0, 2.0),
                "denominator": np.where(denom.astype(np.float64)[:, 0] >= 1.0, 0.0, 2.0),
                "sums_to_one": np.abs(a.sum(axis=1) - 1.0) / tol,
                "lost_mass": lost,
                "underflow_bound": lost / bound,
                "underflow_share": dropped.mean(axis=1),
            }
