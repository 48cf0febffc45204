r"""Attention dropout as ``dropout_p`` applies it (section "In PyTorch").

During training each attention weight is zeroed with probability p and the survivors
are scaled by :math:`1/(1 - p)`, so :math:`E[\tilde a_j] = a_j` and each row's expected
sum stays 1.  A row of :class:`DropoutSim` is the softmax of ``n_keys`` i.i.d. N(0, 1)
scores (stream 0) with dropout applied (stream 1 for the numpy implementation; the
torch backend seeds a private ``torch.Generator`` from the same block stream).

Statistics: ``row_sum`` :math:`\sum_j\tilde a_j` (mean 1, variance
:math:`\tfrac{p}{1-p}\sum_j a_j^2 \le \tfrac{p}{1-p}`) and ``first_ratio``
:math:`\tilde a_1/a_1` (mean 1, variance :math:`p/(1-p)`), and the identity
``values``: every dropped weight is exactly 0 or :math:`a_j/(1-p)` (within 2u relative).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._validation import as_real_array, check_finite, check_generator, check_integer
from ..engine.simulation import Simulation
from ..engine.streams import block_generator, stream_key

__all__ = ["DROPOUT_BACKENDS", "DropoutSim", "check_dropout_p", "dropout_weights"]

DROPOUT_BACKENDS = ("numpy", "torch")
_U = np.finfo(np.float64).eps / 2


def check_dropout_p(p):
    if isinstance(p, bool) or not isinstance(p, (int, float, np.floating)):
        raise TypeError(f"p must be a number in [0, 1); got {p!r}")
    if not 0.0 <= float(p) < 1.0:  # also rejects NaN
        raise ValueError(f"p must lie in [0, 1); got {p}")
    return float(p)


def dropout_weights(a, p, rng):
    r"""Inverted dropout of attention weights: zero each with probability p, scale the rest by :math:`1/(1-p)`."""
    p = check_dropout_p(p)
    a = check_finite(as_real_array(a, "a", dtype=np.float64), "a")
    check_generator(rng)
    keep = rng.random(a.shape) >= p
    return np.where(keep, a / (1.0 - p), 0.0)


def _torch_functional_dropout(a, p, seed_words):
    import torch

    # One intra-op thread: a worker forked from a process whose PyTorch had started its OpenMP
    # pool (the parent evaluates a PyTorch check between two runs) hangs in the first parallel
    # region, as libgomp is not fork-safe; and processes, not threads, are the engine's unit of
    # parallelism.  The draws are the same bytes with one thread or several (seeded generator).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(seed_words))
            return torch.nn.functional.dropout(torch.as_tensor(a, dtype=torch.float64), p=p, training=True).numpy()
    finally:
        torch.set_num_threads(threads)


@dataclass(frozen=True)
class DropoutSim(Simulation):
    """Rows of softmax weights after dropout (module docstring)."""

    p: float = 0.1
    n_keys: int = 32
    backend: str = "numpy"

    statistics: ClassVar[tuple[str, ...]] = ("row_sum", "first_ratio", "values")
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
        else:
            d = _torch_functional_dropout(a, self.p, rng.integers(0, 2**62))
        scaled = a / (1.0 - self.p)
        off = np.minimum(np.abs(d), np.abs(d - scaled)) / (2 * _U * scaled)
        return {"row_sum": d.sum(axis=1), "first_ratio": d[:, 0] / a[:, 0], "values": off.max(axis=1)}
