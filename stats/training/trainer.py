r"""The trainer: a batch of seeded runs advanced one step at a time, and what each run records.

Each run draws its initialisation, its training episodes (a fresh episode every step) and a
fixed *probe* episode from its own stream, so a run's outcome does not depend on the other
runs it is batched with.  A run *diverges* when a parameter leaves :math:`[-10^8, 10^8]` or
stops being finite: it is frozen at its last finite state and the step is recorded.

:class:`Trainer` is the public training step (``Trainer(...).step(t)``, what ``make bench``
times); :func:`train_heads` runs its loop and returns the outcomes (:data:`OUTCOMES`).
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import MAX_D_K, check_d_k, check_integer
from .arrays import check_dtype, positive_lr
from .diagnostics import (CHECKPOINTS, ONE_HOT, PROBE_EPISODES, PROBE_EVERY, PROBE_STATISTICS, checkpoint_steps,
                          directional_check, entry_products, probe, probe_accuracy)
from .model import OWN_FORMULAS, Heads
from .optimizers import ADAM_EPS, MAX_STEPS, OPTIMIZERS, optimizer_named
from .scalings import scaling_named
from .schedule import check_warmup, warmed_lr
from .stopping import HOLD_STEPS, check_give_up_after, check_stop_when_learned, keep_runs
from .task import QUERY_NOISE, check_generators, check_noise, retrieval_episodes

__all__ = [
    "ACCURACY_TARGET",
    "DIVERGENCE_BOUND",
    "EARLY_CHECKPOINT",
    "FROZEN_SHARE",
    "HELD_SHARE",
    "LARGE_LOGIT",
    "LOGIT_TOLERANCE",
    "OUTCOMES",
    "Trainer",
    "UNSTABLE_LOSS",
    "UNSTABLE_RISE",
    "train_heads",
]

DIVERGENCE_BOUND = 1e8
ACCURACY_TARGET = 0.9
FROZEN_SHARE = 0.9
#: The early checkpoint at which a pattern's movement is measured (2 of 8: a quarter of the
#: budget, step 38 of 150), before a slow head has learned; and the share of the probe's
#: queries on their step-0 key above which a run counts as still *holding* its pattern there
#: (a query that has moved lands on its step-0 key by chance 1 time in T = 32).
EARLY_CHECKPOINT = 2
HELD_SHARE = 0.1
#: A run is *unstable* from the first step whose training-episode loss exceeds this and its own
#: step-0 probe loss by :data:`UNSTABLE_RISE` (or is not finite), or whose parameters diverge:
#: uniform attention loses about 1/2, a confident wrong choice about 1 (the values have
#: unit-variance entries), so 3/4 is worse than not attending; the rise keeps a head that
#: starts sharp (unscaled, or QK-norm's gain at a small d_k) from counting as diverged at step 1.
UNSTABLE_LOSS = 0.75
UNSTABLE_RISE = 0.25
#: A logit this large makes a weight e^100 times its row's others: far past one-hot.
LARGE_LOGIT = 100.0
#: Rounding allowance of ``|g q.k|/|g| <= 1`` for unit q and k (the dot product's d_k u, for d_k <= 4096).
LOGIT_TOLERANCE = 1e-12

#: The per-run outcomes :func:`train_heads` returns (``TrainingSim.statistics``).
OUTCOMES = (
    ("learned", "steps_to_accuracy", "learned_episode", "steps_to_episode_accuracy", "probe_accuracy_final", "diverged", "divergence_step", "q_square_init", "k_square_init", "qk_product_init",
     "q_cross_init", "max_logit_final",
     "q_square_final", "k_square_final", "gradient_error", "adam_first_step", "adafactor_step")
    + ("pattern_frozen", "pattern_frozen_early", "pattern_held_early", "aligned", "sharpened")
    + tuple(f"learned_by_{k}" for k in range(CHECKPOINTS))
    + tuple(f"{name}_{k}" for name in PROBE_STATISTICS for k in range(CHECKPOINTS))
    + ("unstable", "unstable_step", "onehot_before_unstable", "onehot_at_unstable", "onehot_before_majority", "onehot_final",
       "max_logit_train", "large_logit", "logit_over_gain",
       "first_step_logit_change", "abandoned")
)


def _check_lr(lr, n_runs):
    lr = positive_lr(lr, 1)
    if lr.ndim == 1 and lr.shape[0] != n_runs:
        raise ValueError(f"lr must be one number or one per run ({n_runs}); got shape {lr.shape}")
    return np.broadcast_to(lr, (n_runs,)).copy()


def _check_per_parameter(values, name, names, *, positive):
    """``values`` (None, one number, or a dict over ``names``) as a dict of floats for every name."""
    allowed = "> 0" if positive else ">= 0"
    default = 1.0 if positive else ADAM_EPS
    if values is None:
        return dict.fromkeys(names, default)
    if not isinstance(values, dict):
        values = dict.fromkeys(names, values)
    unknown = set(values) - set(names)
    if unknown:
        raise ValueError(f"{name} names parameters {sorted(unknown)}; this head trains {list(names)}")
    out = {}
    for key in names:
        v = values.get(key, default)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError(f"{name} must hold finite numbers {allowed}; got {v!r} for {key}")
        if not math.isfinite(v) or (v <= 0 if positive else v < 0):
            raise ValueError(f"{name} must hold finite numbers {allowed}; got {v!r} for {key}")
        out[key] = float(v)
    return out


class Trainer:
    """A batch of runs, one per generator in ``rngs``, trained one :meth:`step` at a time.

    The arguments are :func:`train_heads`'s (validated here); :meth:`outcomes` gives the
    per-run outcomes after the last step.
    """

    def __init__(self, rngs, *, d_k, d_model, scaling="sqrt", optimizer="adam", lr, steps, n_keys=32, noise=QUERY_NOISE,
                 formulas=None, lr_factors=None, adam_eps=None, track_logits=False, stop_when_learned=False, warmup=0,
                 dtype="float64", give_up_after=None):
        check_generators(rngs)
        self.dtype = dtype = check_dtype(dtype)
        d_k = check_d_k(d_k)
        d_model = check_integer(d_model, "d_model", maximum=MAX_D_K)
        self.scaling = scaling_named(scaling)
        self.optimizer = optimizer_named(optimizer)
        self.steps = steps = check_integer(steps, "steps", maximum=MAX_STEPS)
        self.n_keys = n_keys = check_integer(n_keys, "n_keys", minimum=2, maximum=4096, what="an integer >= 2")
        check_noise(noise)
        if not isinstance(track_logits, bool):
            raise TypeError(f"track_logits must be True or False; got {track_logits!r}")
        names = ("WQ", "WK") + self.scaling.trains
        lr_factors = _check_per_parameter(lr_factors, "lr_factors", names, positive=True)
        self.eps = _check_per_parameter(adam_eps, "adam_eps", names, positive=False)
        lr = _check_lr(lr, len(rngs))
        self.formulas = formulas = OWN_FORMULAS if formulas is None else formulas
        self.rngs, self.d_model, self.noise, self.track = rngs, d_model, noise, track_logits
        self.n = n = len(rngs)
        self.heads = heads = Heads(rngs, d_model=d_model, d_k=d_k, scaling=self.scaling, n_keys=n_keys, formulas=formulas,
                                   dtype=dtype.name)
        # A factor of exactly 1 leaves the learning rate's array as it was (the same bits); the rates
        # are rounded to the run's precision, so that a float32 update is not promoted to float64.
        self.rates = {k: (lr if f == 1.0 else lr * f).astype(dtype, copy=False) for k, f in lr_factors.items()}
        drawn = retrieval_episodes(rngs, n_keys, d_model, noise)
        self.probe = episode = (heads.cast(drawn[0]), heads.cast(drawn[1]), drawn[2])
        # The held-out probe of learning: the statistics' episode and PROBE_EPISODES - 1 more.
        self.held_out = [episode] + [(heads.cast(X), heads.cast(Xq), perm) for X, Xq, perm in
                                     (retrieval_episodes(rngs, n_keys, d_model, noise) for _ in range(PROBE_EPISODES - 1))]
        self.initial, start = probe(heads, *episode, formulas)
        self.start_scores = start["scores"]
        qk_product, q_cross = entry_products(*heads.projections(episode[1], episode[0]))
        out = {"q_square_init": start["q_square"], "k_square_init": start["k_square"],
               "qk_product_init": qk_product, "q_cross_init": q_cross,
               # In float64 whatever the run's precision: the check's differences need float64's digits.
               "gradient_error": directional_check(heads if dtype == np.float64 else heads.in_float64(), drawn, formulas),
               "max_logit_train": np.zeros(n), "logit_over_gain": np.zeros(n), "first_step_logit_change": np.zeros(n),
               "onehot_before_unstable": np.zeros(n), "onehot_at_unstable": np.zeros(n), "onehot_final": start["onehot"]}
        out.update({opt.identity: np.zeros(n) for opt in OPTIMIZERS.values() if opt.identity})
        self.marks = checkpoint_steps(steps)
        for k in (k for k, m in enumerate(self.marks) if m == 0):
            for name in PROBE_STATISTICS:
                out[f"{name}_{k}"] = start[name]
        out["max_logit_final"] = start["max_logit"]
        out["q_square_final"], out["k_square_final"] = start["q_square"], start["k_square"]
        self.out = out
        self.previous_onehot = start["onehot"]
        self.unstable_loss = np.maximum(UNSTABLE_LOSS, start["loss"] + UNSTABLE_RISE)
        self.states = {name: {} for name in heads.params}
        self.spare = {}
        self.first = np.full(n, steps + 1, dtype=np.int64)
        # The first probed step of the current stretch of probes at >= ACCURACY_TARGET (steps + 1: none).
        self.above_from = np.full(n, steps + 1, dtype=np.int64)
        self.probe_acc = probe_accuracy(heads, self.held_out)
        self.diverged_at = np.full(n, steps + 1, dtype=np.int64)
        self.unstable_at = np.full(n, steps + 1, dtype=np.int64)
        self.live = np.ones(n, dtype=bool)
        self._start_stopping(stop_when_learned, warmup, give_up_after)

    def _start_stopping(self, stop_when_learned, warmup, give_up_after):
        """The warm-up, the early stop and the give-up step: each run's place in the batch it began
        in, where it stopped and where it was abandoned."""
        self.stop_when_learned = check_stop_when_learned(stop_when_learned, self.steps)
        self.give_up_after = check_give_up_after(give_up_after, self.steps, self.stop_when_learned)
        self.warmup = check_warmup(warmup, self.steps)
        self.rows = np.arange(self.n)
        #: Per run of the batch as it began: the step at which it stopped, having learned (steps + 1: it did not).
        self.stopped_at = np.full(self.n, self.steps + 1, dtype=np.int64)
        #: Per run of the batch as it began: the step at which it was abandoned (steps + 1: it was not).
        self.abandoned_at = np.full(self.n, self.steps + 1, dtype=np.int64)
        self.final = {}

    @property
    def running(self):
        """How many runs are still training (all of them unless ``stop_when_learned``)."""
        return len(self.rows)

    @property
    def steps_run(self):
        """Per run of the batch as it began: the steps it trained (its stop or abandonment, else the budget)."""
        return np.minimum(np.minimum(self.stopped_at, self.abandoned_at), self.steps)

    def step(self, t):
        """Step ``t`` (1, 2, ...): a fresh episode, its gradient, each parameter's update, the checkpoint."""
        seen = {}
        episode = retrieval_episodes(self.rngs, self.n_keys, self.d_model, self.noise)
        loss, right, grads = self.heads.loss_and_grads(*episode, self.formulas, seen, logits=self.track)
        onehot = self._record_episode(t, loss, right, seen)
        new, ok = self._update(t, grads)
        self._accept(t, new, ok, onehot)
        if t == 1:
            change = self.heads.scores(self.probe[1], self.probe[0])[0] - self.start_scores
            self.out["first_step_logit_change"] = np.sqrt(np.mean(change * change, axis=(1, 2), dtype=np.float64))
        self._checkpoint(t)
        if t % PROBE_EVERY == 0 or t in self.marks or t == self.steps:
            self._probe_learning(t)
            if self.stop_when_learned:
                self._stop(t, self.above_from <= t - HOLD_STEPS)
            if self.give_up_after is not None and self.give_up_after + HOLD_STEPS <= t < self.steps:
                self._stop(t, np.ones(self.n, dtype=bool), learned=False)

    #: The trainer's own per-run records besides ``out`` (kept for a run when it stops).
    _COUNTERS = ("first", "above_from", "probe_acc", "diverged_at", "unstable_at")

    def _stop(self, t, stop, *, learned=True):
        """Take the runs ``stop`` out of the batch at step ``t``, learned (stopped) or not (abandoned):
        their probe statistics now stand for every later checkpoint, their records are kept, and every
        per-run array loses their rows."""
        if not stop.any():
            return
        out = self.out
        now = probe(self.heads, *self.probe, self.formulas, self.initial)[1]
        later = [k for k, m in enumerate(self.marks) if m > t]
        for name in PROBE_STATISTICS:
            for k in later:  # a checkpoint not reached yet: 0 for the runs that go on (set when they reach it)
                out[f"{name}_{k}"] = np.where(stop, now[name], out.get(f"{name}_{k}", 0.0))
        if later:
            for name in ("max_logit", "q_square", "k_square", "onehot"):
                out[f"{name}_final"] = np.where(stop, now[name], out[f"{name}_final"])
        (self.stopped_at if learned else self.abandoned_at)[self.rows[stop]] = t
        self._keep_records(stop)
        keep = ~stop
        heads = self.heads
        heads.params, heads.WV = keep_runs(heads.params, keep), heads.WV[keep]
        for name in ("rngs", "rates", "probe", "held_out", "initial", "start_scores", "out", "previous_onehot",
                     "unstable_loss", "states", "live", "rows") + self._COUNTERS:
            setattr(self, name, keep_runs(getattr(self, name), keep))
        self.spare = {}  # next step's buffers are made at the new batch size
        self.n = len(self.rows)

    def _keep_records(self, which):
        """Copy the per-run records of the runs ``which`` into :attr:`final` (indexed by the batch as it began)."""
        records = {**self.out, **{f"trainer.{c}": getattr(self, c) for c in self._COUNTERS}}
        for name, v in records.items():
            v = np.asarray(v)
            if name not in self.final:
                self.final[name] = np.zeros(len(self.stopped_at), dtype=v.dtype)
            self.final[name][self.rows[which]] = v[which]

    def _probe_learning(self, t):
        """The held-out probe's accuracy at step ``t``: where a stretch at the target starts and where one breaks."""
        acc = self.probe_acc = probe_accuracy(self.heads, self.held_out)
        above = acc >= ACCURACY_TARGET
        self.above_from[above & (self.above_from > self.steps)] = t
        self.above_from[~above] = self.steps + 1

    def _record_episode(self, t, loss, right, seen):
        """The training episode's accuracy, instability and logits; its share of nearly one-hot rows."""
        out, live = self.out, self.live
        self.first[(self.first > self.steps) & (right >= ACCURACY_TARGET) & live] = t
        onehot = np.mean(seen["A"].max(axis=2) >= ONE_HOT, axis=1)
        with np.errstate(invalid="ignore"):
            bad = ~(loss <= self.unstable_loss)
        self._mark_unstable(bad & live, t, self.previous_onehot, onehot)
        self.previous_onehot = onehot
        if self.track:
            out["max_logit_train"] = np.where(live, np.fmax(out["max_logit_train"], seen["max_logit"]), out["max_logit_train"])
            if "gain" in self.heads.params:
                rel = seen["max_logit"] / (np.abs(self.heads.params["gain"]) * (1 + LOGIT_TOLERANCE))
                out["logit_over_gain"] = np.where(live, np.fmax(out["logit_over_gain"], rel), out["logit_over_gain"])
        return onehot

    def _update(self, t, grads):
        """Every parameter's new value, and which runs stayed within the divergence bound."""
        new = {}
        ok = self.live.copy()
        for name, w in self.heads.params.items():
            g = grads[name]
            lr = warmed_lr(self.rates[name], t, self.warmup)
            buffer = self.spare.setdefault(name, np.empty_like(w))
            with np.errstate(over="ignore", invalid="ignore"):
                new[name], lo, hi = self.optimizer.update(
                    w, g, self.states[name], t, lr=lr, lr_w=lr.reshape((-1,) + (1,) * (g.ndim - 1)), eps=self.eps[name],
                    buffer=buffer, formulas=self.formulas, live=self.live, out=self.out)
            # NaN fails the comparisons (and survives the block-wise min and max), so a
            # non-finite parameter counts as diverged too.
            ok &= (hi <= DIVERGENCE_BOUND) & (lo >= -DIVERGENCE_BOUND)
        return new, ok

    def _accept(self, t, new, ok, onehot):
        """Take the new parameters of the runs that did not diverge; freeze the others."""
        heads, live = self.heads, self.live
        self.diverged_at[live & ~ok] = t
        self._mark_unstable(live & ~ok, t, onehot, onehot)
        if ok.all():
            for name in new:  # the old arrays become next step's buffers
                self.spare[name] = heads.params[name]
            heads.params = new
        else:
            live &= ok
            for name, w in heads.params.items():
                w[live] = new[name][live]

    def _checkpoint(self, t):
        """The probe's statistics at every checkpoint that falls on step ``t`` (a short run has several)."""
        out = self.out
        marked = [k for k, m in enumerate(self.marks) if m == t and k > 0]
        now = probe(self.heads, *self.probe, self.formulas, self.initial)[1] if marked else None
        for k in marked:
            for name in PROBE_STATISTICS:
                out[f"{name}_{k}"] = now[name]
            if k == CHECKPOINTS - 1:
                out["max_logit_final"] = now["max_logit"]
                out["q_square_final"], out["k_square_final"] = now["q_square"], now["k_square"]
                out["onehot_final"] = now["onehot"]

    def _mark_unstable(self, which, t, before, at):
        newly = which & (self.unstable_at > self.steps)
        self.unstable_at[newly] = t
        for name, share in (("onehot_before_unstable", before), ("onehot_at_unstable", at)):
            self.out[name] = np.where(newly, share, self.out[name])

    def outcomes(self):
        """The per-run outcomes (:data:`OUTCOMES`) after the last step, in the order of the batch as it began."""
        if self.running:
            self._keep_records(np.ones(self.running, dtype=bool))
        final, marks, steps = self.final, self.marks, self.steps
        out = {name: v for name, v in final.items() if not name.startswith("trainer.")}
        first, above_from = final["trainer.first"], final["trainer.above_from"]
        last = CHECKPOINTS - 1
        if self.stop_when_learned:  # learned: stopped, its probe at the target for HOLD_STEPS
            learned = self.stopped_at <= steps
        else:  # the probe at the target at the last two checkpoints and at every probe between
            learned = above_from <= marks[last - 1]
        # Its steps to accuracy: where that stretch at the target began (steps + 1: not learned).
        reached = np.where(learned, above_from, steps + 1)
        out.update(
            {f"learned_by_{k}": (reached <= m).astype(np.float64) for k, m in enumerate(marks)},
            pattern_frozen=(out[f"frozen_{last}"] >= FROZEN_SHARE).astype(np.float64),
            pattern_frozen_early=(out[f"frozen_{EARLY_CHECKPOINT}"] >= FROZEN_SHARE).astype(np.float64),
            pattern_held_early=(out[f"frozen_{EARLY_CHECKPOINT}"] >= HELD_SHARE).astype(np.float64),
            aligned=(out[f"cosine_{last}"] > 0).astype(np.float64),
            sharpened=(out[f"max_weight_{last}"] > out["max_weight_0"]).astype(np.float64),
            learned=learned.astype(np.float64),
            steps_to_accuracy=reached.astype(np.float64),
            learned_episode=(first <= steps).astype(np.float64),
            steps_to_episode_accuracy=first.astype(np.float64),
            probe_accuracy_final=np.asarray(final["trainer.probe_acc"], dtype=np.float64),
            diverged=(final["trainer.diverged_at"] <= steps).astype(np.float64),
            divergence_step=final["trainer.diverged_at"].astype(np.float64),
            unstable=(final["trainer.unstable_at"] <= steps).astype(np.float64),
            unstable_step=final["trainer.unstable_at"].astype(np.float64),
            abandoned=(self.abandoned_at <= steps).astype(np.float64),
        )
        out["large_logit"] = (out["max_logit_train"] > LARGE_LOGIT).astype(np.float64)
        out["onehot_before_majority"] = (out["onehot_before_unstable"] > 0.5).astype(np.float64)
        return {name: out[name] for name in OUTCOMES}


def train_heads(rngs, *, d_k, d_model, scaling="sqrt", optimizer="adam", lr, steps, n_keys=32, noise=QUERY_NOISE,
                formulas=None, lr_factors=None, adam_eps=None, track_logits=False, stop_when_learned=False, warmup=0,
                dtype="float64", give_up_after=None):
    r"""Train ``len(rngs)`` heads on the retrieval task, one run per generator (:mod:`stats.training`).

    ``scaling`` is a name in :data:`~stats.training.scalings.SCALINGS`, ``optimizer`` one in
    :data:`~stats.training.optimizers.OPTIMIZERS`.  ``formulas`` (a :class:`stats.Formulas`,
    or None for the true ones) supplies the backward pass, the optimisers' updates and the
    targets, so a mutant replaces them.

    ``lr`` is one learning rate or one per run; ``steps`` the step budget.  ``lr_factors``
    multiplies the learning rate of the parameters it names (``{"WQ": 8.0}``; a number
    applies to all: ``"WQ"``, ``"WK"``, and those the scaling adds); ``adam_eps`` is Adam's
    :math:`\varepsilon` (default ``ADAM_EPS``), one number or per parameter;
    ``track_logits`` records the largest logit of every step's episode (one product more a
    step).  ``warmup`` (steps, 0: none, else in [1, steps)) warms the rate up linearly from
    ``lr / warmup`` at step 1 to ``lr`` at step ``warmup``, under every optimiser
    (:mod:`~stats.training.schedule`).

    ``stop_when_learned`` stops each run at the first probed step at which its held-out
    probe has been >= 0.9 at every probe for at least :data:`~stats.training.stopping.HOLD_STEPS`
    steps (``steps`` must be at least ``HOLD_STEPS + PROBE_EVERY``): the run has *learned*, its
    ``steps_to_accuracy`` is where that stretch began, and it is taken out of the batch, so it
    costs nothing more.  Its checkpoint statistics (``{s}_{k}``, ``..._final``) at checkpoints
    after its stop are its values at the stop, and its other records stop there too (an
    unstable or diverged run after the stop cannot happen).  A run that never stops is not
    learned and is censored at ``steps + 1``, however it ends.  Each run keeps its own stream,
    so its outcomes are the same whatever it is batched with.  ``give_up_after`` (None, or a step
    c; needs ``stop_when_learned``) abandons every run still training at the first probed step at
    or after ``c + HOLD_STEPS`` (before the budget): its ``steps_to_accuracy`` would have exceeded
    c (:mod:`~stats.training.stopping`), and it is recorded as not learned (censored at
    ``steps + 1``), ``abandoned`` 1, its statistics kept at the step it was abandoned as a stopped
    run's are; a run that stops before that has the outcomes it has without the give-up step.

    ``dtype`` (``"float32"`` or ``"float64"``) is the precision the run trains in:
    its parameters, episodes, forward and backward pass and optimiser state
    (:mod:`~stats.training.model`: the same draws, rounded); ``gradient_error`` is checked
    in float64 on a float64 copy of the step-0 parameters; the probe's statistics are float64
    (``first_step_logit_change``, made in :meth:`Trainer.step`, keeps the run's precision).
    Returns a dict of 1-D arrays, one entry per run, named in :data:`OUTCOMES`:

    * ``learned``: 1 when the run's held-out probe (``PROBE_EPISODES`` fixed episodes, measured
      every ``PROBE_EVERY`` steps and at every checkpoint) is answered with accuracy >= 0.9 at
      the last two checkpoints and at every probe between them (sustained, not one lucky
      episode); ``steps_to_accuracy``: the first probed step from which the probe stayed >= 0.9
      to the end, censored at ``steps + 1`` when the run did not learn (so its mean is the
      restricted mean time to accuracy); ``probe_accuracy_final``: that probe's accuracy at the end;
    * ``learned_episode`` and ``steps_to_episode_accuracy``: the lenient criterion, the first
      step whose fresh training episode was answered with accuracy >= 0.9 (censored at ``steps + 1``);
    * ``diverged`` and ``divergence_step`` (``steps + 1`` when it did not): a parameter left
      :math:`[-10^8, 10^8]` or stopped being finite;
    * ``unstable`` and ``unstable_step``: the first step whose episode loss exceeded
      :data:`UNSTABLE_LOSS` and the run's step-0 probe loss plus :data:`UNSTABLE_RISE` (or
      was not finite), or whose update diverged;
      ``onehot_before_unstable``: the share of nearly one-hot rows (largest weight >=
      ``ONE_HOT``) in the episode of the step before (0 for a stable run),
      ``onehot_at_unstable`` in the episode of that step itself (where its update diverged:
      the same episode), ``onehot_before_majority`` 1 when more than half the rows were
      nearly one-hot the step before, and ``onehot_final`` that share on the probe at the end;
    * ``q_square_init``, ``k_square_init``: the mean squared entry of Q and K on the probe
      episode at step 0 (``..._final``: at the end); ``qk_product_init``: the mean product
      :math:`q_{im}k_{jm}` over the probe's queries i, keys j and coordinates m at step 0, and
      ``q_cross_init`` the mean :math:`q_{im}q_{im'}` over queries and coordinates
      :math:`m \ne m'` (both 0 in expectation when the entries are uncorrelated); ``max_logit_final``: the largest |logit|
      on the probe at the end; ``gradient_error``: the step-0 check of the hand-derived
      gradient against central differences (``GRADIENT_TOLERANCE``, <= 1 when they agree);
    * ``max_logit_train`` (with ``track_logits``; else 0): the largest |logit| of any step's
      episode, and ``large_logit`` 1 when it exceeded :data:`LARGE_LOGIT`; ``logit_over_gain``: under QK-norm, the largest of |logit| / |gain| over every
      step, within :data:`LOGIT_TOLERANCE` (an identity, <= 1; 0 otherwise);
      ``first_step_logit_change``: the RMS change of the probe's logits made by step 1;
      ``abandoned``: 1 for a run given up on (``give_up_after``), else 0;
    * each optimiser's identity (:attr:`~stats.training.optimizers.Optimizer.identity`, 0
      under the others): ``adam_first_step``, the largest entry of
      :math:`|\Delta_1 + \eta\,g/(|g| + \varepsilon)|` in units of 64 roundings of
      :math:`\eta` (bias correction makes the first step exactly that; <= 1);
      ``adafactor_step``, the largest step RMS over
      :math:`\eta\max(\varepsilon_2, \mathrm{RMS}(W))` (<= 1 by the update clipping);
    * 0/1 per run: ``learned_by_{k}`` (learned, and its ``steps_to_accuracy`` is at most checkpoint k's step),
      ``pattern_frozen`` (at least 90% of the probe's queries choose at the end the key they
      chose at step 0), ``pattern_frozen_early`` (the same at checkpoint :data:`EARLY_CHECKPOINT`,
      a quarter of the budget), ``pattern_held_early`` (at that checkpoint at least
      :data:`HELD_SHARE` of the probe's queries still choose their step-0 key), ``aligned`` (the final mean query-target cosine is positive),
      ``sharpened`` (the final mean largest weight exceeds the initial one);
    * ``{s}_{k}`` for s in ``PROBE_STATISTICS`` at the checkpoints
      :func:`~stats.training.diagnostics.checkpoint_steps`: the probe episode's loss, accuracy,
      ``frozen`` (the share of its queries choosing the key they chose at step 0), mean
      largest weight, mean cosine of a query and its target key, and mean target logit.
    """
    trainer = Trainer(rngs, d_k=d_k, d_model=d_model, scaling=scaling, optimizer=optimizer, lr=lr, steps=steps,
                      n_keys=n_keys, noise=noise, formulas=formulas, lr_factors=lr_factors, adam_eps=adam_eps,
                      track_logits=track_logits, stop_when_learned=stop_when_learned, warmup=warmup, dtype=dtype,
                      give_up_after=give_up_after)
    for t in range(1, trainer.steps + 1):
        if not trainer.running:
            break
        trainer.step(t)
    return trainer.outcomes()
