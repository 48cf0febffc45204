r"""PyTorch's ``scaled_dot_product_attention`` (SDPA) against the suite (section "In PyTorch").

A row of :class:`TorchSDPASim` is one random problem with batch and head dimensions,
``Q`` of shape ``(batch, heads, T_q, d_k)``, ``K`` ``(batch, heads, T_k, d_k)``, ``V``
``(batch, heads, T_k, d_v)`` and an upstream gradient ``dO``, all standard normal, drawn
in float64 and rounded once to the row's ``dtype``; the suite then works in float64 on
those rounded inputs, so only PyTorch's arithmetic is under test.  Masks:

* ``"none"``; ``"bool"`` (``True`` = may attend, at least one key kept per query);
* ``"additive"`` (a standard normal ``T_q x T_k`` matrix added to the scores);
* ``"causal"`` (``is_causal=True``, which PyTorch aligns top-left: query i sees keys 0..i).

Statistics, each an identity's normalised violation (a row violates when it exceeds 1),
with u the unit roundoff of ``dtype``:

* ``forward`` -- SDPA as a user calls it against the suite's forward pass:
  :math:`\max|O_\mathrm{torch} - O| / (16 (T_k + d_k) u (1 + \max|V|))`, the forward bound
  the exact half uses;
* ``backward`` -- autograd's ``dQ, dK, dV`` through that call against
  ``formulas.attention_backward``:
  :math:`\max|dX_\mathrm{torch} - dX| / (32 (T_k + d_k + d_v) u (1 + \max|dX|))` over the
  three gradients (the bound the tiled backward is held to);
* ``fused_equals_math`` -- output and gradients of the fused FlashAttention kernel
  (forced with ``sdpa_kernel(SDPBackend.FLASH_ATTENTION)``, which raises where it cannot
  run) against the math path (``SDPBackend.MATH``), same normalisations.

The rows of a block are stacked along the batch dimension, so a block is one call of
SDPA on a 4-D problem: 5-D inputs (rows as an extra leading dimension) go to the math
path (:func:`sdpa_cpu_backend` shows it), and the kernel under test would not be the one a
user's 4-D call gets.

Which kernel runs is :class:`SDPADispatchSim`'s question, answered twice: by PyTorch's
backend query (``torch._fused_sdp_choice``, the function SDPA itself calls to choose) and
by the kernel that did run, read off the autograd node the call leaves on its output
(``ScaledDotProductFlashAttentionForCpuBackward0`` for the fused CPU kernel; the math path
leaves the node of its last primitive op).  ``torch.profiler`` shows the same op names
(``aten::_scaled_dot_product_flash_attention_for_cpu``); the autograd node is read
because it is silent and costs nothing.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np

from .._validation import check_dropout_p, check_integer
from ..engine.simulation import Simulation
from ..engine.streams import block_generator, stream_key
from ..exact.attention import scaled_dot_product_attention
from ..exact.formats import unit_roundoff

__all__ = [
    "SDPA_DISPATCH_DTYPES",
    "SDPA_DTYPES",
    "SDPA_MASKS",
    "SDPADispatch",
    "SDPADispatchSim",
    "SDPALargeScoreSim",
    "TorchSDPASim",
    "sdpa_cpu_backend",
    "sdpa_cpu_dispatch_table",
]

SDPA_MASKS = ("none", "bool", "additive", "causal")
#: The dtypes whose results the identities compare (float16 and bfloat16 are dispatched, not compared).
SDPA_DTYPES = ("float64", "float32")
SDPA_DISPATCH_DTYPES = ("float64", "float32", "float16", "bfloat16")
_RANKS = (3, 4, 5)
#: Autograd nodes of PyTorch's fused SDPA kernels, by the ``SDPBackend`` member that leaves them.
_FUSED_NODES = {
    "ScaledDotProductFlashAttentionForCpuBackward": "FLASH_ATTENTION",
    "ScaledDotProductFlashAttentionBackward": "FLASH_ATTENTION",
    "ScaledDotProductEfficientAttentionBackward": "EFFICIENT_ATTENTION",
    "ScaledDotProductCudnnAttentionBackward": "CUDNN_ATTENTION",
}


@contextlib.contextmanager
def torch_one_thread():
    """Run PyTorch with one intra-op thread inside the block; yields the ``torch`` module.

    A worker forked from a process whose PyTorch had started its OpenMP pool (the parent
    evaluates a PyTorch check between two runs) hangs in the first parallel region, as
    libgomp is not fork-safe; and processes, not threads, are the engine's unit of
    parallelism.  The checks hold with one thread or several, and seeded draws do not
    depend on the thread count."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield torch
    finally:
        torch.set_num_threads(threads)


def _check_choice(value, name, allowed):
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}; got {value!r}")
    return value


def _check_rank(rank):
    if isinstance(rank, bool) or not isinstance(rank, int) or rank not in _RANKS:
        raise ValueError(f"rank must be 3, 4 or 5 (the inputs' number of dimensions); got {rank!r}")


def _kernel_that_ran(out):
    """The ``SDPBackend`` name of the kernel that produced ``out``, from its autograd node."""
    node = type(out.grad_fn).__name__ if out.grad_fn is not None else ""
    return next((kernel for prefix, kernel in _FUSED_NODES.items() if node.startswith(prefix)), "MATH")


class SDPADispatch(NamedTuple):
    """Which kernel SDPA chose for a problem (its backend query) and which one ran."""

    chosen: str
    ran: str


def sdpa_cpu_backend(dtype="float32", *, mask="none", dropout_p=0.0, rank=4, same_head_dim=True):
    """The kernel SDPA dispatches a CPU problem to, asked and observed.

    ``dtype`` one of :data:`SDPA_DISPATCH_DTYPES`; ``mask`` one of :data:`SDPA_MASKS`;
    ``dropout_p`` in [0, 1); ``rank`` of the inputs, 3 (no head dimension), 4 or 5;
    ``same_head_dim``: whether the values are as wide as the queries and keys
    (``d_k = d_v = 16``, else ``d_v = 24``).  Returns an :class:`SDPADispatch` of
    :class:`torch.nn.attention.SDPBackend` member names, e.g. ``"FLASH_ATTENTION"`` or
    ``"MATH"``: ``chosen`` by PyTorch's own backend query, ``ran`` read off the autograd
    node of a real call (with ``requires_grad``; seeded inside ``fork_rng`` when it drops
    out, so the caller's generator is untouched).  Needs PyTorch.
    """
    _check_choice(dtype, "dtype", SDPA_DISPATCH_DTYPES)
    _check_choice(mask, "mask", SDPA_MASKS)
    p = check_dropout_p(dropout_p, "dropout_p")
    _check_rank(rank)
    if not isinstance(same_head_dim, bool):
        raise TypeError(f"same_head_dim must be True or False; got {same_head_dim!r}")
    with torch_one_thread() as torch, torch.random.fork_rng(devices=[]):
        from torch.nn.attention import SDPBackend

        torch.manual_seed(0)
        dt = getattr(torch, dtype)
        shape = {3: (3, 8, 16), 4: (2, 3, 8, 16), 5: (2, 2, 3, 8, 16)}[rank]
        q = torch.randn(shape, dtype=dt, requires_grad=True)
        v = q if same_head_dim else torch.randn(shape[:-1] + (24,), dtype=dt, requires_grad=True)
        attn_mask = None
        if mask == "bool":
            attn_mask = torch.ones((8, 8), dtype=torch.bool)
        elif mask == "additive":
            attn_mask = torch.zeros((8, 8), dtype=dt)
        causal = mask == "causal"
        chosen = SDPBackend(torch._fused_sdp_choice(q, q, v, attn_mask, p, causal)).name
        out = torch.nn.functional.scaled_dot_product_attention(q, q, v, attn_mask=attn_mask, dropout_p=p, is_causal=causal)
        return SDPADispatch(chosen, _kernel_that_ran(out))


def sdpa_cpu_dispatch_table():
    """Which kernel SDPA picks and runs on this CPU, as a tidy :class:`pandas.DataFrame`: one row
    per (dtype, mask, dropout_p in {0, 0.1}, rank, same_head_dim), columns ``chosen`` and
    ``ran`` (:func:`sdpa_cpu_backend`).  Needs PyTorch."""
    import pandas as pd

    rows = []
    for dt in SDPA_DISPATCH_DTYPES:
        for m in SDPA_MASKS:
            for p in (0.0, 0.1):
                for r in _RANKS:
                    for h in (True, False):
                        d = sdpa_cpu_backend(dt, mask=m, dropout_p=p, rank=r, same_head_dim=h)
                        rows.append(dict(dtype=dt, mask=m, dropout_p=p, rank=r, same_head_dim=h, chosen=d.chosen, ran=d.ran))
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class SDPADispatchSim(Simulation):
    """Whether SDPA both chooses and runs ``expect`` for one kind of CPU problem.

    The statistic ``dispatch`` is 0 on every row when the backend query and the kernel that
    ran (:func:`sdpa_cpu_backend`) both name ``expect``, else 2 (an identity's violation).
    The answer does not depend on the draws: one row decides it."""

    dtype: str = "float32"
    mask: str = "none"
    rank: int = 4
    same_head_dim: bool = True
    dropout_p: float = 0.0
    expect: str = "FLASH_ATTENTION"

    statistics: ClassVar[tuple[str, ...]] = ("dispatch",)
    block_rows: ClassVar[int] = 1

    def __post_init__(self):
        _check_choice(self.dtype, "dtype", SDPA_DISPATCH_DTYPES)
        _check_choice(self.mask, "mask", SDPA_MASKS)
        if not isinstance(self.same_head_dim, bool):
            raise TypeError(f"same_head_dim must be True or False; got {self.same_head_dim!r}")
        object.__setattr__(self, "dropout_p", check_dropout_p(self.dropout_p, "dropout_p"))
        _check_rank(self.rank)
        _check_choice(self.expect, "expect", ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH"))

    @property
    def key(self):
        return stream_key("sdpa-dispatch", dtype=self.dtype, mask=self.mask, rank=self.rank,
                          same_head_dim=self.same_head_dim, dropout_p=self.dropout_p, expect=self.expect)

    @property
    def cost(self):
        return 5000.0  # one small SDPA call and its backend query, in random numbers' worth

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):
        d = sdpa_cpu_backend(self.dtype, mask=self.mask, dropout_p=self.dropout_p, rank=self.rank,
                             same_head_dim=self.same_head_dim)
        return {"dispatch": np.full(rows, 0.0 if d.chosen == d.ran == self.expect else 2.0)}


@dataclass(frozen=True)
class SDPALargeScoreSim(Simulation):
    r"""SDPA on scores far past the naive softmax's overflow, in ``dtype``.

    A row is ``n_keys`` scores :math:`s = M z`, z ~ N(0, 1), :math:`\log_{10} M` uniform on
    [0, 3] (scores up to a few thousand, where a naive exp overflows float16 past 11.09 and
    float32 past 88.72), rounded to ``dtype``.  The rows are SDPA's queries, the identity its
    keys and values and ``scale=1``, so its scores are ``s`` and its output is the weight
    matrix, compared with the exact softmax :math:`a^\ast` of the same rounded scores (float64).
    Statistics, each an identity's normalised violation (2 for a row with a non-finite weight):

    * ``fused`` -- SDPA as called (on CPU its fused FlashAttention kernel: 4-D,
      :math:`d_v = d_k`): :math:`\max_j|a_j - a^\ast_j| / (u + 4(T + 2)u_{32})`, u the unit
      roundoff of ``dtype`` and :math:`u_{32}` float32's: the final rounding of each weight to
      the format, plus the error of a max-subtracted softmax computed in float32 (exp, a sum
      of T terms, a division).  A kernel that summed in float16 or bfloat16 would miss it;
    * ``math`` -- the same for its math path (``SDPBackend.MATH``).
    """

    dtype: str = "float16"
    n_keys: int = 32

    statistics: ClassVar[tuple[str, ...]] = ("fused", "math")
    block_rows: ClassVar[int] = 1024

    def __post_init__(self):
        _check_choice(self.dtype, "dtype", SDPA_DISPATCH_DTYPES)
        check_integer(self.n_keys, "n_keys", minimum=2, maximum=1024, what="an integer >= 2")

    @property
    def key(self):
        return stream_key("sdpa-large-scores", dtype=self.dtype, n_keys=self.n_keys)

    @property
    def cost(self):
        return 8 * self.n_keys * self.n_keys

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):
        rng = block_generator(sim_seed, block, 0)
        s = rng.standard_normal((rows, self.n_keys)) * 10.0 ** rng.uniform(0.0, 3.0, size=(rows, 1))
        with torch_one_thread() as torch:
            from torch.nn.attention import SDPBackend, sdpa_kernel

            dt = getattr(torch, self.dtype)
            q = torch.tensor(s, dtype=torch.float64).to(dt)[None, None]
            eye = torch.eye(self.n_keys, dtype=dt)[None, None]
            sdpa = torch.nn.functional.scaled_dot_product_attention
            fused = sdpa(q, eye, eye, scale=1.0)[0, 0].to(torch.float64).numpy()
            with sdpa_kernel([SDPBackend.MATH]):
                math_path = sdpa(q, eye, eye, scale=1.0)[0, 0].to(torch.float64).numpy()
            rounded = q[0, 0].to(torch.float64).numpy()
        e = np.exp(rounded - rounded.max(axis=1, keepdims=True))
        exact = e / e.sum(axis=1, keepdims=True)
        tol = unit_roundoff(self.dtype) + 4 * (self.n_keys + 2) * unit_roundoff("float32")

        def violation(a):
            with np.errstate(invalid="ignore"):
                return np.where(np.all(np.isfinite(a), axis=1), np.abs(a - exact).max(axis=1) / tol, 2.0)

        return {"fused": violation(fused), "math": violation(math_path)}


def _max_per_row(x, rows):
    return np.abs(x).reshape(rows, -1).max(axis=1)


@dataclass(frozen=True)
class TorchSDPASim(Simulation):
    """SDPA's forward, autograd and fused-versus-math paths on random problems (module docstring)."""

    dtype: str = "float64"
    mask: str = "none"
    batch: int = 2
    heads: int = 3
    T_q: int = 5
    T_k: int = 7
    d_k: int = 4
    d_v: int = 4

    statistics: ClassVar[tuple[str, ...]] = ("forward", "backward", "fused_equals_math")
    uses: ClassVar[tuple[str, ...]] = ("attention_backward",)
    block_rows: ClassVar[int] = 1024

    def __post_init__(self):
        _check_choice(self.dtype, "dtype", SDPA_DTYPES)
        _check_choice(self.mask, "mask", SDPA_MASKS)
        for name in ("batch", "heads", "T_q", "T_k", "d_k", "d_v"):
            check_integer(getattr(self, name), name, maximum=4096)
        if self.d_v != self.d_k:  # its fused_equals_math forces that kernel, which refuses such a call
            raise ValueError(f"d_v must equal d_k (the fused CPU kernel this simulation forces takes only "
                             f"d_v = d_k; SDPADispatchSim covers d_v != d_k); got d_v={self.d_v}, d_k={self.d_k}")

    @property
    def key(self):
        return stream_key("torch-sdpa", dtype=self.dtype, mask=self.mask, batch=self.batch, heads=self.heads,
                          T_q=self.T_q, T_k=self.T_k, d_k=self.d_k, d_v=self.d_v)

    @property
    def cost(self):
        per_head = 2 * (self.T_q * self.d_k + self.T_k * (self.d_k + self.d_v)) * self.T_q * self.T_k
        return self.batch * self.heads * per_head

    def _mask(self, rng, rows):
        B, Tq, Tk = self.batch, self.T_q, self.T_k
        if self.mask == "bool":
            keep = rng.random((rows, B, 1, Tq, Tk)) < 0.7
            forced = rng.integers(0, Tk, size=(rows, B, 1, Tq))
            np.put_along_axis(keep, forced[..., None], True, axis=-1)  # every query keeps a key
            return keep
        if self.mask == "additive":
            return rng.standard_normal((rows, B, 1, Tq, Tk))
        if self.mask == "causal":
            return np.broadcast_to(np.tril(np.ones((Tq, Tk), bool)), (rows, B, 1, Tq, Tk))
        return None

    def _torch_runs(self, Q, K, V, dO, mask, rows):
        """(default call, fused kernel forced, math path forced): each ``[O, dQ, dK, dV]`` in float64."""
        B, H = self.batch, self.heads
        with torch_one_thread() as torch:
            from torch.nn.attention import SDPBackend, sdpa_kernel

            dt = getattr(torch, self.dtype)

            def flat(x):  # rows stacked along the batch dimension: a 4-D problem
                return torch.tensor(np.ascontiguousarray(x).reshape((-1,) + x.shape[2:]), dtype=dt)

            attn_mask = None
            if self.mask == "bool":
                attn_mask = torch.tensor(mask.reshape((rows * B, 1) + mask.shape[3:]))
            elif self.mask == "additive":
                attn_mask = flat(mask)
            causal = self.mask == "causal"

            def run(backend=None):
                q, k, v = (flat(x).requires_grad_(True) for x in (Q, K, V))
                with sdpa_kernel([backend]) if backend is not None else contextlib.nullcontext():
                    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=causal)
                    out.backward(flat(dO))
                return [t.detach().to(torch.float64).numpy().reshape((rows, B, H) + t.shape[2:])
                        for t in (out, q.grad, k.grad, v.grad)]

            return run(), run(SDPBackend.FLASH_ATTENTION), run(SDPBackend.MATH)

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):
        B, H, Tq, Tk, dk, dv = self.batch, self.heads, self.T_q, self.T_k, self.d_k, self.d_v
        rng0, rng1 = block_generator(sim_seed, block, 0), block_generator(sim_seed, block, 1)
        np_dtype = np.dtype(self.dtype)
        Q, K, V, dO = (rng0.standard_normal((rows, B, H) + s).astype(np_dtype).astype(np.float64)
                       for s in ((Tq, dk), (Tk, dk), (Tk, dv), (Tq, dv)))
        mask = self._mask(rng1, rows)
        if self.mask == "additive":
            mask = mask.astype(np_dtype).astype(np.float64)
        O = scaled_dot_product_attention(Q, K, V, mask)
        grads = formulas.attention_backward(Q, K, V, dO, mask)
        u = unit_roundoff(self.dtype)
        fwd_tol = 16 * (Tk + dk) * u * (1.0 + _max_per_row(V, rows))
        bwd_scale = 32 * (Tk + dk + dv) * u
        default, fused, math_path = self._torch_runs(Q, K, V, dO, mask, rows)

        def grad_error(got, want):
            return np.max([_max_per_row(g - w, rows) / (bwd_scale * (1.0 + _max_per_row(w, rows)))
                           for g, w in zip(got, want)], axis=0)

        return {
            "forward": _max_per_row(default[0] - O, rows) / fwd_tol,
            "backward": grad_error(default[1:], grads),
            "fused_equals_math": np.maximum(_max_per_row(fused[0] - math_path[0], rows) / fwd_tol,
                                            grad_error(fused[1:], math_path[1:])),
        }
