r"""Attention dropout as ``dropout_p`` applies it (section "In PyTorch").

During training each attention weight is zeroed with probability p and the survivors
are scaled by :math:`1/(1 - p)`, so :math:`E[\tilde a_j] = a_j` and each row's expected
sum stays 1.  A row of :class:`DropoutSim` is the softmax of ``n_keys`` i.i.d. N(0, 1)
scores (stream 0) with dropout applied (stream 1 for the numpy implementation; the
torch backends seed PyTorch's generator, inside ``fork_rng``, from the same block stream).
Backends: ``"numpy"`` (:func:`dropout_weights`), ``"torch"``
(``torch.nn.functional.dropout`` of the weights) and ``"sdpa"`` (SDPA's own ``dropout_p``,
with the identity as keys and values so that its output is the dropped weights).

Statistics: ``dropped_share``, the share of a row's weights set to 0 (mean p, variance
:math:`p(1-p)/n`: a proportion); ``row_sum`` :math:`\sum_j\tilde a_j` (mean 1, variance
:math:`\tfrac{p}{1-p}\sum_j a_j^2 \le \tfrac{p}{1-p}`) and ``first_ratio``
:math:`\tilde a_1/a_1` (mean 1, variance :math:`p/(1-p)`), and the identity
``values``: every dropped weight is exactly 0 or :math:`a_j/(1-p)`, within 4u relative: an
implementation may scale by :math:`\mathrm{fl}(1/(1-p))` and round the product (PyTorch does:
two roundings, and on about 40% of the weights its result is one ulp from the division's), and
the reference :math:`a_j/(1-p)` is itself rounded once; three roundings, 4u with a margin.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._validation import as_real_array, check_dropout_p, check_finite, check_generator, check_integer
from ..engine.simulation import Simulation
from ..engine.streams import block_generator, stream_key
from ..exact.formats import UNIT_ROUNDOFF

__all__ = ["DROPOUT_BACKENDS", "DropoutSim", "dropout_weights"]

DROPOUT_BACKENDS = ("numpy", "torch", "sdpa")


def dropout_weights(a, p, rng):
    r"""Inverted dropout of attention weights: zero each with probability p, scale the rest by :math:`1/(1-p)`."""
    p = check_dropout_p(p)
    a = check_finite(as_real_array(a, "a", dtype=np.float64), "a")
    check_generator(rng)
    keep = rng.random(a.shape) >= p
    return np.where(keep, a / (1.0 - p), 0.0)


def _torch_functional_dropout(a, p, seed_words):
    from .torch_sdpa import torch_one_thread

    with torch_one_thread() as torch, torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed_words))
        return torch.nn.functional.dropout(torch.as_tensor(a, dtype=torch.float64), p=p, training=True).numpy()


def _sdpa_dropout(s, p, seed_words):
    """SDPA's own ``dropout_p`` on score rows ``s``: queries ``s``, keys and values the identity
    and ``scale=1``, so the scores are ``s`` and the output is the dropped weight matrix.
    Returns ``(weights without dropout, weights with dropout)``: the second from SDPA called as
    a user calls it, the first from its math path, the kernel that call runs on CPU whenever
    ``dropout_p > 0`` (the claim ``sdpa-fused-kernel`` checks that), so both round alike."""
    from .torch_sdpa import torch_one_thread

    with torch_one_thread() as torch, torch.random.fork_rng(devices=[]):
        from torch.nn.attention import SDPBackend, sdpa_kernel

        q = torch.as_tensor(s, dtype=torch.float64)[None, None]
        eye = torch.eye(s.shape[1], dtype=torch.float64)[None, None]
        sdpa = torch.nn.functional.scaled_dot_product_attention
        with sdpa_kernel([SDPBackend.MATH]):
            a = sdpa(q, eye, eye, scale=1.0)[0, 0].numpy()
        torch.manual_seed(int(seed_words))
        d = sdpa(q, eye, eye, dropout_p=p, scale=1.0)[0, 0].numpy()
    return a, d


@dataclass(frozen=True)
class DropoutSim(Simulation):
    """Rows of softmax weights after dropout (module docstring)."""

    p: float = 0.1
    n_keys: int = 32
    backend: str = "numpy"

    statistics: ClassVar[tuple[str, ...]] = ("dropped_share", "row_sum", "first_ratio", "values")
    uses: ClassVar[tuple[str, ...]] = ("dropout",)

    def __post_init__(self):
        object.__setattr__(self, "p", check_dropout_p(self.p))
        check_integer(self.n_keys, "n_keys", minimum=2, what="an integer >= 2")
        if self.backend not in DROPOUT_BACKENDS:
            raise ValueError(f"backend must be one of {DROPOUT_BACKENDS}; got {self.backend!r}")

    @property
    def key(self):
        return stream_key("dropout", p=self.p, n_keys=self.n_keys, backend=self.backend)

    @property
    def cost(self):
        return 2 * self.n_keys

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):
        s = block_generator(sim_seed, block, 0).standard_normal((rows, self.n_keys))
        e = np.exp(s - s.max(axis=1, keepdims=True))
        a = e / e.sum(axis=1, keepdims=True)
        rng = block_generator(sim_seed, block, 1)
        if self.backend == "numpy":
            d = formulas.dropout(a, self.p, rng)
        elif self.backend == "torch":
            d = _torch_functional_dropout(a, self.p, rng.integers(0, 2**62))
        else:
            a, d = _sdpa_dropout(s, self.p, rng.integers(0, 2**62))
        scaled = a / (1.0 - self.p)
        off = np.minimum(np.abs(d), np.abs(d - scaled)) / (4 * UNIT_ROUNDOFF * scaled)
        return {"dropped_share": np.mean(d == 0.0, axis=1), "row_sum": d.sum(axis=1), "first_ratio": d[:, 0] / a[:, 0],
                "values": off.max(axis=1)}
