r"""Spectra of the softmax Jacobian :math:`J = \operatorname{diag}(a) - a a^\top` of fresh heads.

Section "The Jacobian of softmax, and what saturation does to it".  Rows are drawn as
in :class:`~stats.models.saturation.SaturationSim` with Gaussian entries (the exact
chi-square shortcut), ``n_keys`` keys and a scaling; each row's Jacobian comes from the
implementation under test (``formulas.softmax_jacobian``) and its eigenvalues from
``numpy.linalg.eigvalsh`` on batches.

Statistics per row (:math:`\lambda_1 \le \dots \le \lambda_T`, :math:`a_{(1)} \le \dots \le a_{(T)}`):

==============  ===============================================================
``lam_max``     :math:`\lambda_T`
``eff_rank``    :math:`(\sum\lambda)^2/\sum\lambda^2`, from the weights (1 for an exactly one-hot row)
``tr_j``        :math:`\operatorname{tr} J = \sum\lambda`
``tr_j2``       :math:`\operatorname{tr} J^2 = \sum\lambda^2`
``quad_excess`` :math:`\lVert Jg\rVert^2 - \operatorname{tr}J^2` for g ~ N(0, I): mean 0,
                since :math:`E\lVert Jg\rVert^2 = \operatorname{tr} J^2`
==============  ===============================================================

and these identities, each a normalised violation (violated when > 1):

* ``psd``: :math:`\lambda_1 \ge 0`;  ``null_vector``: :math:`J\mathbf 1 = 0`;
* ``trace``: :math:`\sum\lambda = 1 - \lVert a\rVert^2` (the trace formula under test);
  ``trace_square``: :math:`\sum\lambda^2 = \sum a_i^2 - 2\sum a_i^3 + (\sum a_i^2)^2`, the
  closed form the saturation model uses for :math:`\operatorname{tr}J^2`;
* ``half``: :math:`\lambda_T \le 1/2`;  ``symmetric``: :math:`J = J^\top` exactly;
* ``interlacing``: :math:`\lambda_1 \le a_{(1)} \le \lambda_2 \le \dots \le \lambda_T \le a_{(T)}`
  (a rank-one downdate of diag(a));
* ``one_zero``: exactly one zero eigenvalue -- :math:`|\lambda_1|` is rounding-small and
  :math:`\lambda_2` is not -- on rows whose smallest weight is resolvable in float64
  (:math:`a_{(1)} > 10^6\,\tau`); other rows are not testable numerically and count as
  holding (``one_zero_testable`` records the share tested).

Tolerance :math:`\tau = 16\,T\,u`: eigvalsh is backward stable, so each computed
eigenvalue is within a small multiple of :math:`T u \lVert J\rVert_2` and
:math:`\lVert J\rVert_2 \le 1/2`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._validation import check_d_k, check_integer
from ..engine.simulation import Simulation
from ..engine.streams import block_generator, stream_key
from ..exact.formats import UNIT_ROUNDOFF
from .saturation import check_scaling
from .scores import score_scale

__all__ = ["JACOBIAN_IDENTITIES", "SpectrumSim", "jacobian_spectrum_statistics"]

JACOBIAN_IDENTITIES = ("psd", "null_vector", "trace", "trace_square", "half", "symmetric", "interlacing", "one_zero")
_CHUNK = 1024  # rows whose T x T Jacobians are held at once


def _effective_rank(a):
    r""":math:`(\operatorname{tr}J)^2/\operatorname{tr}J^2` from the weights, without eigenvalues.

    :math:`\operatorname{tr}J = \sum_j a_j c_j` and :math:`\operatorname{tr}J^2 = \|J\|_F^2 =
    \sum_j a_j^2 (c_j^2 + d_j)` with :math:`c_j = 1 - a_j` and :math:`d_j = \|a\|^2 - a_j^2`,
    except that for the largest weight both are sums over the other weights: near one-hot,
    eigenvalues (and ``1 - a_max``) are rounding noise, and an effective rank from them can
    fall below 1, which no non-zero PSD matrix allows.
    """
    j = a.argmax(axis=1)[:, None]
    others = a.copy()
    np.put_along_axis(others, j, 0.0, axis=1)
    c = 1.0 - a
    np.put_along_axis(c, j, others.sum(axis=1, keepdims=True), axis=1)
    a2 = a * a
    d = a2.sum(axis=1, keepdims=True) - a2
    np.put_along_axis(d, j, (others * others).sum(axis=1, keepdims=True), axis=1)
    tr = np.sum(a * c, axis=1)
    tr2 = np.sum(a2 * (c * c + d), axis=1)
    with np.errstate(invalid="ignore", divide="ignore", under="ignore"):
        # An exactly one-hot row (the other weights underflowed): the limit as they vanish
        # with widening gaps is 1 (the winner against the runner-up).
        return np.where(tr2 > 0, tr * tr / np.where(tr2 > 0, tr2, 1.0), 1.0)


def jacobian_spectrum_statistics(a, g, formulas):
    """The statistics of the module docstring for weights ``a`` and upstream draws ``g``, both ``(rows, T)``."""
    rows, T = a.shape
    tol = 16 * T * UNIT_ROUNDOFF
    J = formulas.softmax_jacobian(a)
    lam = np.linalg.eigvalsh(J)
    tr = lam.sum(axis=1)
    tr2 = np.vecdot(lam, lam)
    asort = np.sort(a, axis=1)
    a2 = np.vecdot(a, a)
    eff = _effective_rank(a)
    Jg = np.einsum("rij,rj->ri", J, g)
    inter = np.maximum(
        np.maximum(lam - asort, 0.0).max(axis=1),
        np.maximum(asort[:, :-1] - lam[:, 1:], 0.0).max(axis=1),
    )
    testable = asort[:, 0] > 1e6 * tol
    one_zero = np.where(testable, np.maximum(np.abs(lam[:, 0]) / tol, np.where(lam[:, 1] > tol, 0.0, 2.0)), 0.0)
    return {
        "lam_max": lam[:, -1],
        "eff_rank": eff,
        "tr_j": tr,
        "tr_j2": tr2,
        "quad_excess": np.vecdot(Jg, Jg) - tr2,
        "psd": np.maximum(-lam[:, 0], 0.0) / tol,
        "null_vector": np.abs(J.sum(axis=2)).max(axis=1) / tol,
        "trace": np.abs(tr - formulas.row_trace(a)) / tol,
        "trace_square": np.abs(tr2 - (a2 - 2.0 * np.vecdot(a * a, a) + a2 * a2)) / tol,
        "half": np.maximum(lam[:, -1] - 0.5, 0.0) / tol,
        "symmetric": np.where(np.any(J != np.swapaxes(J, 1, 2), axis=(1, 2)), 2.0, 0.0),
        "interlacing": inter / tol,
        "one_zero": one_zero,
        "one_zero_testable": testable.astype(np.float64),
    }


@dataclass(frozen=True)
class SpectrumSim(Simulation):
    """Softmax-Jacobian spectra of rows of a fresh Gaussian head (module docstring)."""

    d_k: int
    n_keys: int = 32
    scaling: str = "sqrt"

    statistics: ClassVar[tuple[str, ...]] = (
        "lam_max",
        "eff_rank",
        "tr_j",
        "tr_j2",
        "quad_excess",
        *JACOBIAN_IDENTITIES,
        "one_zero_testable",
    )
    uses: ClassVar[tuple[str, ...]] = ("softmax_jacobian", "row_trace", "saturation_sampler")

    def __post_init__(self):
        check_d_k(self.d_k)
        check_integer(self.n_keys, "n_keys", minimum=2, what="an integer >= 2")
        check_scaling(self.scaling)

    @property
    def key(self):
        return stream_key("jacobian-spectrum", d_k=self.d_k, n_keys=self.n_keys, scaling=self.scaling)

    @property
    def cost(self):
        # random numbers, plus the eigen-decomposition's work in the same units (measured: about 3 T^2 a row)
        return 1 + 2 * self.n_keys + 3 * self.n_keys**2

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):
        c = score_scale(self.d_k, self.scaling)
        q_rng, k_rng, g_rng = (block_generator(sim_seed, block, s) for s in range(3))
        s = formulas.saturation_sampler(q_rng, k_rng, rows, self.d_k, self.n_keys, c)
        g = g_rng.standard_normal((rows, self.n_keys))
        e = np.exp(s - s.max(axis=1, keepdims=True))
        a = e / e.sum(axis=1, keepdims=True)
        parts = [jacobian_spectrum_statistics(a[i : i + _CHUNK], g[i : i + _CHUNK], formulas) for i in range(0, rows, _CHUNK)]
        return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
