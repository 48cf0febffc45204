"""The training runs as simulations of the engine: one run per row, a batch of runs per block.

:class:`TrainingSim` trains heads (:func:`~stats.training.trainer.train_heads`),
:class:`FoldingSim` a folded head beside the divided head that equals it
(:func:`~stats.training.folding.fold_gaps`), :class:`PrecisionSim` a float32 run beside the
float64 run of the same seed (:func:`~stats.training.precision.precision_gaps`),
:class:`LRSweepSim` one seed at every rate of a grid.  Each names its streams by its fields (``key``), so a run's numbers depend on what
it is, not on what else is simulated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._validation import MAX_D_K, check_d_k, check_integer, check_positive
from ..engine.simulation import Simulation
from ..engine.streams import block_generator, stream_key
from .arrays import check_dtype
from .diagnostics import CHECKPOINTS
from .folding import FOLDING_OUTCOMES, fold_gaps
from .model import OWN_FORMULAS
from .optimizers import MAX_STEPS, OPTIMIZERS, optimizer_named
from .precision import PRECISION_OUTCOMES, precision_gaps
from .scalings import SCALINGS, scaling_named
from .schedule import check_warmup
from .stopping import check_give_up_after, check_stop_when_learned
from .trainer import OUTCOMES, train_heads

__all__ = ["BLOCK_BYTES", "MAX_GRID", "FoldingSim", "LRSweepSim", "PrecisionSim", "TrainingSim"]

#: What a block of runs may hold: parameters, gradients and optimiser state.
BLOCK_BYTES = 32 << 20
#: A training step's fixed work (Python calls, small arrays), in units of ``cost``, and a
#: run's fixed work (the probes, the step-0 gradient check) in steps: measured on one
#: thread at T = 8 and 32, d_k = d_model = 8 to 256 (0.1-4 ms a step; fixed work 2.6-6.2
#: steps).  Without them a one-step run of 16-wide heads reads 50-100 times cheaper than a
#: 150-step one, where it costs a fifth as much.
STEP_OVERHEAD, RUN_OVERHEAD_STEPS = 60_000.0, 4
#: The largest learning-rate grid of one :class:`LRSweepSim` (its statistics name each point).
MAX_GRID = 12


def _run_effort(cost_per_step, steps):
    """A training run's work in units of ``cost``: (steps + fixed steps) x (a step's cost + its overhead)."""
    return (steps + RUN_OVERHEAD_STEPS) * (cost_per_step + STEP_OVERHEAD)


def _check_run_fields(sim):
    """The fields every training simulation has: d_k, d_model (default d_k), the optimiser, lr, steps, n_keys."""
    check_d_k(sim.d_k)
    if sim.d_model is None:
        object.__setattr__(sim, "d_model", sim.d_k)
    check_integer(sim.d_model, "d_model", maximum=MAX_D_K)
    optimizer_named(sim.optimizer)
    if isinstance(sim.lr, bool) or not isinstance(sim.lr, (int, float)):
        raise TypeError(f"lr must be a positive number; got {sim.lr!r}")
    check_positive(sim.lr, "lr")
    check_integer(sim.steps, "steps", maximum=MAX_STEPS)
    check_integer(sim.n_keys, "n_keys", minimum=2, maximum=4096, what="an integer >= 2")


@dataclass(frozen=True)
class TrainingSim(Simulation):
    r"""One training run per row (:func:`~stats.training.trainer.train_heads`): a block is a batch of runs trained together.

    ``mup_base`` (a base width :math:`d_0`) gives :math:`W_Q` and :math:`W_K` muP's learning
    rate :math:`\eta\,d_0/d_{model}` (:func:`~stats.training.scalings.mup_lr_multiplier`);
    ``gain_lr`` is QK-norm's gain's own learning rate (None: ``lr``); ``track_logits``
    records every step's largest logit; ``stop_when_learned`` stops each run once it holds its
    accuracy (taken out of its block) and ``warmup`` warms the rate up (both as in
    :func:`~stats.training.trainer.train_heads`); ``give_up_after`` abandons the runs that have not
    stopped by then, as there; ``dtype`` is the precision the runs train in
    (``"float32"`` or ``"float64"``).  At their defaults the stream key is the one a run had
    before these options existed (a float32 simulation names its own streams).
    """

    d_k: int
    scaling: str = "sqrt"
    optimizer: str = "adam"
    lr: float = 1e-2
    steps: int = 200
    d_model: int | None = None
    n_keys: int = 32
    mup_base: int | None = None
    gain_lr: float | None = None
    track_logits: bool = False
    stop_when_learned: bool = False
    warmup: int = 0
    dtype: str = "float64"
    give_up_after: int | None = None

    statistics: ClassVar[tuple[str, ...]] = OUTCOMES

    @property
    def block_rows(self):
        """Runs trained together: 16, fewer for wide heads, so that a block's parameters,
        gradients and optimiser state (about eight d_model x d_k arrays a run) stay within 32 MiB."""
        size = check_dtype(self.dtype).itemsize
        per_run = 8 * size * self.d_model * self.d_k + SCALINGS[self.scaling].extra_bytes(self.n_keys, self.d_k) * size // 8
        return int(min(16, max(1, BLOCK_BYTES // per_run)))

    @property
    def uses(self):
        """The formulas a run calls: the backward pass, the task's targets, its optimiser's update, and the scaling's own."""
        scaling = SCALINGS[self.scaling]
        return (*scaling.backward_uses, "retrieval_targets", *OPTIMIZERS[self.optimizer].uses, *scaling.uses,
                *(("mup_lr_multiplier",) if self.mup_base is not None else ()))

    def __post_init__(self):
        _check_run_fields(self)
        scaling = scaling_named(self.scaling)
        if self.mup_base is not None:
            check_integer(self.mup_base, "mup_base", maximum=MAX_D_K)
        if self.gain_lr is not None:
            if "gain" not in scaling.trains:
                raise ValueError(f"gain_lr applies to QK-norm's gain only; scaling is {self.scaling!r}")
            check_positive(self.gain_lr, "gain_lr")
        if not isinstance(self.track_logits, bool):
            raise TypeError(f"track_logits must be True or False; got {self.track_logits!r}")
        check_stop_when_learned(self.stop_when_learned, self.steps)
        check_give_up_after(self.give_up_after, self.steps, self.stop_when_learned)
        check_warmup(self.warmup, self.steps)
        check_dtype(self.dtype)

    @property
    def key(self):
        extra = {name: getattr(self, name) for name in ("mup_base", "gain_lr") if getattr(self, name) is not None}
        if self.track_logits:
            extra["track_logits"] = 1
        if self.stop_when_learned:
            extra["stop_when_learned"] = 1
        if self.warmup:
            extra["warmup"] = self.warmup
        if self.give_up_after is not None:
            extra["give_up_after"] = self.give_up_after
        if self.dtype != "float64":  # the default is left out of the key: float64 runs keep their streams
            extra["dtype"] = self.dtype
        return stream_key("training", d_k=self.d_k, d_model=self.d_model, scaling=self.scaling, optimizer=self.optimizer,
                          lr=float(self.lr), steps=self.steps, n_keys=self.n_keys, **extra)

    @property
    def cost(self):
        return self.steps * SCALINGS[self.scaling].flops(self.n_keys, self.d_model, self.d_k) / 8

    @property
    def effort(self):
        """:func:`_run_effort`: ``cost`` plus each step's fixed overhead and a run's fixed work."""
        return _run_effort(self.cost / self.steps, self.steps)

    def lr_factors(self, formulas):
        """The per-parameter factors on ``lr`` this run trains with (None: all 1)."""
        formulas = OWN_FORMULAS if formulas is None else formulas
        factors = {}
        if self.mup_base is not None:
            factors["WQ"] = factors["WK"] = formulas.mup_lr_multiplier(self.d_model, self.mup_base)
        if self.gain_lr is not None:
            factors["gain"] = self.gain_lr / self.lr
        return factors or None

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):
        rngs = [block_generator(sim_seed, block, i) for i in range(rows)]
        return train_heads(rngs, d_k=self.d_k, d_model=self.d_model, scaling=self.scaling, optimizer=self.optimizer,
                           lr=self.lr, steps=self.steps, n_keys=self.n_keys, formulas=formulas,
                           lr_factors=self.lr_factors(formulas), track_logits=self.track_logits,
                           stop_when_learned=self.stop_when_learned, warmup=self.warmup, dtype=self.dtype,
                           give_up_after=self.give_up_after)


@dataclass(frozen=True)
class FoldingSim(Simulation):
    """T5's folded run beside the divided run that equals it, per row (:func:`~stats.training.folding.fold_gaps`): both from one stream."""

    d_k: int
    optimizer: str = "adam"
    lr: float = 1e-2
    steps: int = 20
    d_model: int | None = None
    n_keys: int = 32
    match_eps: bool = True

    statistics: ClassVar[tuple[str, ...]] = FOLDING_OUTCOMES

    @property
    def block_rows(self):
        """Runs trained together: two heads a run, so half of :class:`TrainingSim`'s."""
        return int(min(16, max(1, BLOCK_BYTES // (2 * 8 * 8 * self.d_model * self.d_k))))

    @property
    def uses(self):
        return ("attention_backward", "retrieval_targets", *SCALINGS["t5"].uses, *OPTIMIZERS[self.optimizer].uses)

    def __post_init__(self):
        _check_run_fields(self)
        if not isinstance(self.match_eps, bool):
            raise TypeError(f"match_eps must be True or False; got {self.match_eps!r}")

    @property
    def key(self):
        return stream_key("folding", d_k=self.d_k, d_model=self.d_model, optimizer=self.optimizer, lr=float(self.lr),
                          steps=self.steps, n_keys=self.n_keys, match_eps=int(self.match_eps))

    @property
    def cost(self):
        return self.steps * SCALINGS["t5"].flops(self.n_keys, self.d_model, self.d_k) / 4

    @property
    def effort(self):
        """Two runs' :func:`_run_effort`."""
        return 2 * _run_effort(self.cost / (2 * self.steps), self.steps)

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):
        copies = [[block_generator(sim_seed, block, i) for i in range(rows)] for _ in range(2)]
        return fold_gaps(*copies, d_k=self.d_k, d_model=self.d_model, optimizer=self.optimizer, lr=self.lr,
                         steps=self.steps, n_keys=self.n_keys, match_eps=self.match_eps, formulas=formulas)


@dataclass(frozen=True)
class PrecisionSim(Simulation):
    """A float64 run and the float32 run of the same seed, per row (:func:`~stats.training.precision.precision_gaps`): both from one stream."""

    d_k: int
    scaling: str = "sqrt"
    optimizer: str = "adam"
    lr: float = 1e-2
    steps: int = 150
    d_model: int | None = None
    n_keys: int = 32

    statistics: ClassVar[tuple[str, ...]] = PRECISION_OUTCOMES

    @property
    def block_rows(self):
        """Runs trained together: each holds a float64 and a float32 head (12 bytes an entry), within 32 MiB."""
        per_run = 8 * 12 * self.d_model * self.d_k + SCALINGS[self.scaling].extra_bytes(self.n_keys, self.d_k) * 3 // 2
        return int(min(16, max(1, BLOCK_BYTES // per_run)))

    @property
    def uses(self):
        return self._training().uses

    def _training(self):
        return TrainingSim(self.d_k, self.scaling, self.optimizer, self.lr, self.steps, self.d_model, self.n_keys)

    def __post_init__(self):
        _check_run_fields(self)
        scaling_named(self.scaling)

    @property
    def key(self):
        return stream_key("precision", d_k=self.d_k, d_model=self.d_model, scaling=self.scaling, optimizer=self.optimizer,
                          lr=float(self.lr), steps=self.steps, n_keys=self.n_keys)

    @property
    def cost(self):
        return 2 * self._training().cost

    @property
    def effort(self):
        """Two runs' :func:`_run_effort` (a float32 step costs less; counted as a float64 one)."""
        return 2 * self._training().effort

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):
        copies = [[block_generator(sim_seed, block, i) for i in range(rows)] for _ in range(2)]
        return precision_gaps(*copies, d_k=self.d_k, d_model=self.d_model, scaling=self.scaling, optimizer=self.optimizer,
                              lr=self.lr, steps=self.steps, n_keys=self.n_keys, formulas=formulas)


def _check_lr_grid(lrs, name="lrs"):
    """A learning-rate grid: a non-empty, strictly increasing tuple of positive finite numbers."""
    if not isinstance(lrs, (tuple, list)) or not lrs:
        raise ValueError(f"{name} must be a non-empty tuple of learning rates; got {lrs!r}")
    for v in lrs:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError(f"{name} must hold positive numbers; got {v!r}")
        if not (math.isfinite(v) and v > 0):
            raise ValueError(f"{name} must hold positive finite numbers; got {v!r}")
    if any(b <= a for a, b in zip(lrs, lrs[1:])):
        raise ValueError(f"{name} must be strictly increasing; got {tuple(lrs)!r}")
    return tuple(float(v) for v in lrs)


@dataclass(frozen=True)
class LRSweepSim(Simulation):
    """One seed trained at every learning rate of a grid, per row: common random numbers across the grid.

    Every grid point of a row draws the same initialisation and episodes, so the row's own
    best rate -- ``best_log_lr``, :math:`\\log_{10}` of the grid rate with the smallest final
    probe loss, and ``best_is_{i}``, 1 when it is point i -- is a per-seed outcome whose mean
    carries an MCSE like any other (the location of the loss-vs-rate minimum with an
    uncertainty from the replicates).  ``loss_at_{i}`` is point i's final probe loss and
    ``logit_at_{i}`` its final mean target logit.  The head is :class:`TrainingSim`'s.
    """

    d_k: int
    lrs: tuple = (1e-2,)
    scaling: str = "sqrt"
    optimizer: str = "adam"
    steps: int = 40
    d_model: int | None = None
    n_keys: int = 32
    mup_base: int | None = None

    def __post_init__(self):
        object.__setattr__(self, "lrs", _check_lr_grid(self.lrs))
        if len(self.lrs) > MAX_GRID:
            raise ValueError(f"lrs must hold at most {MAX_GRID} learning rates; got {len(self.lrs)}")
        if self.d_model is None:
            object.__setattr__(self, "d_model", check_d_k(self.d_k))
        self.point(0)  # validates the rest through TrainingSim

    def point(self, i):
        """Grid point ``i`` as a :class:`TrainingSim`."""
        return TrainingSim(self.d_k, self.scaling, self.optimizer, self.lrs[i], self.steps, self.d_model, self.n_keys,
                           mup_base=self.mup_base)

    @property
    def statistics(self):
        k = len(self.lrs)
        return (("best_log_lr",) + tuple(f"best_is_{i}" for i in range(k)) + tuple(f"loss_at_{i}" for i in range(k))
                + tuple(f"logit_at_{i}" for i in range(k)))

    @property
    def block_rows(self):
        return self.point(0).block_rows

    @property
    def uses(self):
        return self.point(0).uses

    @property
    def key(self):
        extra = {"mup_base": self.mup_base} if self.mup_base is not None else {}
        return stream_key("lr-sweep", d_k=self.d_k, d_model=self.d_model, scaling=self.scaling, optimizer=self.optimizer,
                          lrs=",".join(f"{v:.6g}" for v in self.lrs), steps=self.steps, n_keys=self.n_keys, **extra)

    @property
    def cost(self):
        return len(self.lrs) * self.point(0).cost

    @property
    def effort(self):
        return len(self.lrs) * self.point(0).effort

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):
        last = CHECKPOINTS - 1
        losses, logits = [], []
        for i in range(len(self.lrs)):
            r = self.point(i).run_block(sim_seed, block, rows, formulas, chunk_size)
            losses.append(r[f"loss_{last}"])
            logits.append(r[f"target_logit_{last}"])
        losses = np.stack(losses, axis=1)
        best = np.argmin(losses, axis=1)
        out = {"best_log_lr": np.log10(np.asarray(self.lrs))[best]}
        out.update({f"best_is_{i}": (best == i).astype(np.float64) for i in range(len(self.lrs))})
        out.update({f"loss_at_{i}": losses[:, i] for i in range(len(self.lrs))})
        out.update({f"logit_at_{i}": logits[i] for i in range(len(self.lrs))})
        return out
