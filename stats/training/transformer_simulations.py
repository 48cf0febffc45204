"""The transformer's runs as simulations of the engine: one model per row.

:class:`CoordinateCheckSim` draws a model (:mod:`~stats.training.transformer`) of one width
and scaling, holds its hand-derived gradient to finite differences at step 0
(``gradient_error``, :func:`~stats.training.language_model.gradient_direction_error`, on recall
sequences with only the queries scored, so the masked cross-entropy is what is checked), and
trains it a few Adam steps for muP's coordinate check
(:func:`~stats.training.mup_rules.coordinate_check`): ``residual_{t}`` and ``logits_{t}`` are
how far the residual stream's and the logits' coordinates have moved by step t.  The gradient
check runs when ``check_gradient`` is set (it costs a coordinate check's steps again).  With
``narrow`` set, each row also trains the same seed's model at that width, and compares the last
step's moves: ``{what}_ratio`` (wide over narrow), ``{what}_flat`` (1 when the ratio lies in
[1/2, 2]) and ``{what}_grows`` (1 when it exceeds 2), for the residual stream and the logits.

:class:`RecallSim` trains an attention-only model on the synthetic task
(:func:`~stats.training.recall.train_recall_model`), one run per row, until it solves it or
its budget ends.

:class:`TextSweepSim` trains one seed on the plays of Shakespeare
(:func:`~stats.training.language_model.train_language_model`) at every rate of a grid, per
row, and scores each run's validation loss against the bigram model's on the same windows
(:func:`~stats.training.corpus.bigram_loss`, the floor of a model that uses no context).
"""

from __future__ import annotations

from dataclasses import dataclass

import math

import numpy as np

from .._validation import check_integer, check_positive
from ..engine.simulation import Simulation
from ..engine.streams import block_seed_sequence, stream_key
from .corpus import bigram_loss, shakespeare_ids
from .language_model import gradient_direction_error, train_language_model, validation_windows
from .mup_rules import COORDINATE_PAIRS, coordinate_check, mup_lr_multipliers
from .recall import SOLVED_ACCURACY, check_recall_task, recall_batch, train_recall_model
from .scalings import SCALINGS
from .schedule import check_warmup
from .stopping import check_give_up_after
from .transformer import Transformer, TransformerConfig

__all__ = ["COORDINATE_CONTEXT", "COORDINATE_HEAD_WIDTH", "COORDINATE_VOCAB", "RECALL_OUTCOMES", "TEXT_MAX_GRID",
           "TEXT_VALIDATION_WINDOWS", "TRAINED_LOGIT_FACTOR", "CoordinateCheckSim", "RecallSim", "TextSweepSim"]

#: The coordinate check's model: a vocabulary of 64 tokens, 32 positions, heads of width 32
#: (their number grows with the width, as a real model's does), two layers with MLPs.
COORDINATE_VOCAB, COORDINATE_CONTEXT, COORDINATE_HEAD_WIDTH = 64, 32, 32


def _transformer_uses(scaling):
    """The fields of :class:`stats.Formulas` a transformer's Adam run calls under ``scaling``: its
    scaling's backward and own steps, LayerNorm's, the embedding's and the cross-entropy's backward."""
    s = SCALINGS[scaling]
    return (*s.backward_uses, *s.uses, "layer_norm_backward", "embedding_backward", "cross_entropy", "adam_update")


def _score_work(scaling, T, D):
    """Multiply-adds (or their time's worth) a token spends on one layer's scores and weighted sum: 2 T D
    for a product; for additive attention's (T, T, d_k) tanh and its backward about 36 T D, from a
    step of the recall model at T = d_k = 64 that took six times the scaled model's."""
    return (2 if SCALINGS[scaling].dot_product else 36) * T * D


def _check_adam_lr(lr, name="lr"):
    """``lr`` a number in (0, 1]: an Adam step moves every entry by about lr."""
    if isinstance(lr, bool) or not isinstance(lr, (int, float)):
        raise TypeError(f"{name} must be a positive number; got {lr!r}")
    if check_positive(lr, name) > 1:
        raise ValueError(f"{name} must be at most 1 (an Adam step moves every entry by about lr); got {lr}")


@dataclass(frozen=True)
class CoordinateCheckSim(Simulation):
    """One model of width ``d_model`` per row (module docstring): ``scaling`` one of
    :data:`~stats.training.transformer.TRANSFORMER_SCALINGS`, ``mup_base`` muP's base width
    (its read-out initialisation and per-group rates; ``"mup"`` only), ``steps`` Adam steps
    (1 to 8) at ``lr``."""

    d_model: int
    scaling: str = "sqrt"
    mup_base: int | None = None
    lr: float = 1e-2
    steps: int = 4
    mlp: bool = True
    check_gradient: bool = False
    narrow: int | None = None

    def __post_init__(self):
        check_integer(self.d_model, "d_model", minimum=COORDINATE_HEAD_WIDTH, maximum=4096,
                      what=f"a multiple of {COORDINATE_HEAD_WIDTH} from {COORDINATE_HEAD_WIDTH} to 4096")
        if self.d_model % COORDINATE_HEAD_WIDTH:
            raise ValueError(f"d_model must be a multiple of the head width {COORDINATE_HEAD_WIDTH}; got {self.d_model}")
        _check_adam_lr(self.lr)
        check_integer(self.steps, "steps", maximum=8, what="an integer from 1 to 8")
        if not isinstance(self.check_gradient, bool):
            raise TypeError(f"check_gradient must be True or False; got {self.check_gradient!r}")
        if self.narrow is not None:
            check_integer(self.narrow, "narrow", minimum=COORDINATE_HEAD_WIDTH, maximum=self.d_model - 1,
                          what=f"a multiple of {COORDINATE_HEAD_WIDTH} below d_model = {self.d_model}")
            if self.narrow % COORDINATE_HEAD_WIDTH:
                raise ValueError(f"narrow must be a multiple of the head width {COORDINATE_HEAD_WIDTH}; got {self.narrow}")
            if self.mup_base is not None and self.mup_base > self.narrow:
                raise ValueError(f"mup_base must be at most narrow = {self.narrow}; got {self.mup_base}")
        _ = self.config  # validates the scaling, mup_base and mlp

    @property
    def config(self):
        """The model's :class:`~stats.training.transformer.TransformerConfig` (float32)."""
        return self.config_at(self.d_model)

    def config_at(self, d_model):
        """The model's configuration at width ``d_model``."""
        return TransformerConfig(COORDINATE_VOCAB, COORDINATE_CONTEXT, d_model, d_model // COORDINATE_HEAD_WIDTH,
                                 mlp=self.mlp, scaling=self.scaling, mup_base=self.mup_base)

    @property
    def statistics(self):
        compared = tuple(f"{what}_{kind}" for what in ("residual", "logits") for kind in ("ratio", "flat", "grows"))
        return (("gradient_error",) * self.check_gradient + tuple(f"residual_{t}" for t in range(1, self.steps + 1))
                + tuple(f"logits_{t}" for t in range(1, self.steps + 1)) + compared * (self.narrow is not None))

    @property
    def block_rows(self):
        return 4

    @property
    def uses(self):
        return (*_transformer_uses(self.scaling), *(("mup_lr_multipliers",) if self.mup_base is not None else ()))

    @property
    def key(self):
        extra = {"mup_base": self.mup_base} if self.mup_base is not None else {}
        return stream_key("coordinate-check", d_model=self.d_model, scaling=self.scaling, lr=float(self.lr),
                          steps=self.steps, mlp=int(self.mlp), check_gradient=int(self.check_gradient), **extra,
                          **({"narrow": self.narrow} if self.narrow is not None else {}))

    @property
    def cost(self):
        """Multiply-adds of a step (2 layers of the four D x D projections, an MLP's 8 D^2, the scores), batch 8."""
        D, T = self.d_model, COORDINATE_CONTEXT
        per_token = 2 * (4 + 8 * self.mlp) * D * D + 2 * _score_work(self.scaling, T, D) + D * COORDINATE_VOCAB
        return 3.0 * 8 * T * per_token

    @property
    def effort(self):
        """The steps and a forward a step, and the gradient check's seven passes when it runs, each with a
        fixed overhead (the narrow model's too, when it is trained beside)."""
        narrow = 0.0 if self.narrow is None else (self.narrow / self.d_model) ** 2 * self.cost + 200_000.0
        return (2 * self.steps + 1 + 7 * self.check_gradient) * (self.cost + 200_000.0 + narrow)

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):
        out = {name: np.empty(rows) for name in self.statistics}
        config = self.config
        for i in range(rows):
            check_seq, run_seq = block_seed_sequence(sim_seed, block, i).spawn(2)
            if self.check_gradient:
                model = Transformer(config, np.random.default_rng(check_seq.spawn(1)[0]), formulas=formulas)
                tokens, scored = recall_batch(np.random.default_rng(check_seq), batch=2, vocab=config.vocab,
                                              length=config.n_ctx, pairs=COORDINATE_PAIRS)
                out["gradient_error"][i] = gradient_direction_error(model, tokens, scored=scored)
            moved = coordinate_check(config, lr=self.lr, steps=self.steps, seed=run_seq, formulas=formulas)
            for t in range(1, self.steps + 1):
                out[f"residual_{t}"][i] = moved["residual"][t]
                out[f"logits_{t}"][i] = moved["logits"][t]
            if self.narrow is not None:
                # The same seed's model at the narrow width: the same probe and batches.  Its seed is
                # drawn afresh, as coordinate_check's spawning has advanced run_seq.
                narrow_seq = block_seed_sequence(sim_seed, block, i).spawn(2)[1]
                base = coordinate_check(self.config_at(self.narrow), lr=self.lr, steps=self.steps, seed=narrow_seq,
                                        formulas=formulas)
                for what in ("residual", "logits"):
                    ratio = moved[what][-1] / base[what][-1]
                    out[f"{what}_ratio"][i] = ratio
                    out[f"{what}_flat"][i] = float(0.5 <= ratio <= 2.0)
                    out[f"{what}_grows"][i] = float(ratio > 2.0)
        return out



#: A recall run's outcomes: solved (0 or 1), its last held-out accuracy, the largest |attention
#: logit| over its layers at step 0 and at its end, the step it solved the task at (censored at
#: ``steps + 1`` when it did not, as the single head's ``steps_to_accuracy``), the step-0 gradient
#: check, its held-out loss at step 0 and at its end (infinite for a diverged run), and whether it
#: was given up on (``abandoned``, 0 or 1).
RECALL_OUTCOMES = ("solved", "accuracy", "max_logit_0", "max_logit_end", "steps_to_solve", "gradient_error", "loss_0",
                   "loss_end", "abandoned")


@dataclass(frozen=True)
class RecallSim(Simulation):
    """One MQAR run per row (module docstring): an attention-only model of ``n_layers`` layers and
    ``n_heads`` heads of width ``d_model``, ``scaling`` one of
    :data:`~stats.training.transformer.TRANSFORMER_SCALINGS`, Adam at ``lr`` with ``warmup``
    steps, at most ``steps`` steps, on the task of ``vocab``, ``length`` and ``pairs``; a run stops
    once it has solved the task, or, past ``give_up_after`` (None: never), once it is seen not to
    have (:func:`~stats.training.recall.train_recall_model`)."""

    d_model: int
    scaling: str = "sqrt"
    lr: float = 3e-3
    steps: int = 1500
    n_heads: int = 1
    n_layers: int = 2
    warmup: int = 20
    vocab: int = 64
    length: int = 64
    pairs: int = 8
    batch: int = 32
    give_up_after: int | None = None

    statistics = RECALL_OUTCOMES

    def __post_init__(self):
        _check_adam_lr(self.lr)
        check_integer(self.steps, "steps", maximum=100_000)
        check_integer(self.batch, "batch", maximum=4096)
        check_warmup(self.warmup, self.steps)
        check_give_up_after(self.give_up_after, self.steps, True)
        check_recall_task(self.vocab, self.length, self.pairs)
        _ = self.config

    @property
    def config(self):
        """The model's :class:`~stats.training.transformer.TransformerConfig` (attention only, float32)."""
        return TransformerConfig(self.vocab, self.length, self.d_model, self.n_heads, n_layers=self.n_layers, mlp=False,
                                 scaling=self.scaling)

    @property
    def block_rows(self):
        return 1

    @property
    def uses(self):
        return _transformer_uses(self.scaling)

    @property
    def key(self):
        return stream_key("recall", d_model=self.d_model, scaling=self.scaling, lr=float(self.lr), steps=self.steps,
                          n_heads=self.n_heads, n_layers=self.n_layers, warmup=self.warmup, vocab=self.vocab,
                          length=self.length, pairs=self.pairs, batch=self.batch,
                          **({} if self.give_up_after is None else {"give_up_after": self.give_up_after}))

    @property
    def cost(self):
        """Multiply-adds of the whole budget: a step's four D x D projections and scores a layer, and the read-out."""
        D, T = self.d_model, self.length
        per_token = self.n_layers * (4 * D * D + _score_work(self.scaling, T, D)) + D * self.vocab
        return 3.0 * self.steps * self.batch * T * per_token

    @property
    def effort(self):
        return self.cost + self.steps * 2_000_000.0

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):
        out = {name: np.empty(rows) for name in self.statistics}
        for i in range(rows):
            run = train_recall_model(self.config, pairs=self.pairs, steps=self.steps, lr=self.lr,
                                     seed=block_seed_sequence(sim_seed, block, i), batch=self.batch, warmup=self.warmup,
                                     stop_when_solved=True, give_up_after=self.give_up_after, formulas=formulas)
            solved_at = next((t for t, a in zip(run.steps, run.accuracy) if a >= SOLVED_ACCURACY), None)
            out["solved"][i] = float(run.solved)
            out["accuracy"][i] = run.final_accuracy
            out["max_logit_0"][i] = max(run.max_logit[0])
            out["max_logit_end"][i] = max(run.max_logit[-1])
            out["steps_to_solve"][i] = self.steps + 1 if solved_at is None or run.diverged_at is not None else solved_at
            out["gradient_error"][i] = run.gradient_check
            out["loss_0"][i] = run.loss[0]
            out["loss_end"][i] = math.inf if run.diverged_at is not None else run.loss[-1]
            out["abandoned"][i] = float(run.abandoned_at is not None)
        return out


#: The most rates a text sweep trains each seed at, and the validation windows every run is scored on.
TEXT_MAX_GRID, TEXT_VALIDATION_WINDOWS = 8, 64
#: How far apart (a factor either way) two widths' trained logits may be and still count as level:
#: the coordinate check's factor 2.
TRAINED_LOGIT_FACTOR = 2.0


def _check_rate_grid(lrs):
    """``lrs`` a strictly increasing tuple of 1 to :data:`TEXT_MAX_GRID` Adam rates in (0, 1]."""
    if isinstance(lrs, (str, bytes)) or not hasattr(lrs, "__iter__"):
        raise TypeError(f"lrs must be a sequence of learning rates; got {type(lrs).__name__}")
    lrs = tuple(lrs)
    if not 1 <= len(lrs) <= TEXT_MAX_GRID:
        raise ValueError(f"lrs must hold 1 to {TEXT_MAX_GRID} learning rates; got {len(lrs)}")
    for v in lrs:
        _check_adam_lr(v, "lrs")
    if any(b <= a for a, b in zip(lrs, lrs[1:])):
        raise ValueError(f"lrs must be strictly increasing; got {lrs}")
    return tuple(float(v) for v in lrs)


@dataclass(frozen=True)
class TextSweepSim(Simulation):
    r"""One seed trained on the plays at every Adam rate of ``lrs``, per row (module docstring).

    The model: ``d_model`` wide, ``n_heads`` heads, two layers with MLPs, context ``n_ctx``,
    the character vocabulary of the plays, ``scaling`` one of
    :data:`~stats.training.transformer.TRANSFORMER_SCALINGS` (``mup_base`` with ``"mup"``:
    muP's read-out initialisation and per-group rates, :mod:`~stats.training.mup_rules`),
    ``steps`` Adam steps of ``batch`` windows with ``warmup`` warm-up steps, float32.  Every
    rate of a row draws the same initialisation and batches (common random numbers), so the
    row's own best rate is a per-seed outcome.

    Statistics, for grid point i: ``loss_at_{i}``, the validation loss at the end (nats per
    character; a run that diverged scores its loss at step 0, ``initial_loss``: it learned
    nothing, as in Wortsman et al.'s LR sensitivity, :func:`stats.lr_sensitivity`);
    ``beats_bigram_at_{i}``, 1 when that loss is below the bigram model's on the same windows;
    ``logit_at_{i}``, the largest |attention logit| over the layers at the end (a run is scored at
    steps 0 and ``steps`` only, so for a run that diverged this is its step-0 logit);
    ``cosine_at_{i}``, the mean query-key cosine over the layers at the end (each query with the key
    it weights most, :meth:`~stats.training.transformer.Transformer.attention_alignment`; step 0's
    for a run that diverged); ``diverged_at_{i}``, 1 when it diverged.  Over the grid:
    ``initial_loss`` and ``initial_cosine`` (step 0's, the same at every rate: the same model),
    ``best_log_lr`` (:math:`\log_{10}` of the rate with the smallest loss), ``best_loss``,
    ``beats_bigram_best``, ``logit_best`` and ``cosine_best`` (the own-best-rate protocol, per
    seed), and ``gradient_error``, the step-0 gradient check (<= 1 when the hand-derived
    gradient agrees).

    With ``narrow`` set, each row also trains the same seed (the same batches) at that width, at
    every rate, and compares the trained attention logits wide over narrow, both at rate i
    (``..._at_{i}``: one rate for every width, muP's protocol) and each width at its own best rate
    of the grid (``..._best``): ``logit_flat_*`` is 1 when the ratio lies within
    :data:`TRAINED_LOGIT_FACTOR` either way, ``logit_grows_*`` when it exceeds it, and
    ``logit_diverged_*`` when either run diverged (then neither of the others is 1).
    """

    d_model: int
    scaling: str = "sqrt"
    lrs: tuple = (1e-2,)
    steps: int = 150
    n_heads: int = 2
    mup_base: int | None = None
    n_ctx: int = 32
    batch: int = 16
    warmup: int = 15
    narrow: int | None = None

    def __post_init__(self):
        object.__setattr__(self, "lrs", _check_rate_grid(self.lrs))
        check_integer(self.steps, "steps", maximum=100_000)
        check_integer(self.batch, "batch", maximum=4096)
        check_warmup(self.warmup, self.steps)
        # The width, heads, context, scaling and mup_base, checked over a stand-in vocabulary: the
        # plays are read (half a second) only by a process that plans or trains, not by every import.
        self._config_over(2)
        if self.narrow is not None:
            check_integer(self.narrow, "narrow", maximum=self.d_model - 1, what=f"an integer below d_model = {self.d_model}")
            if self.narrow % self.n_heads:
                raise ValueError(f"narrow must be a multiple of n_heads = {self.n_heads}; got {self.narrow}")
            if self.mup_base is not None and self.mup_base > self.narrow:
                raise ValueError(f"mup_base must be at most narrow = {self.narrow}; got {self.mup_base}")
            self._config_over(2, self.narrow)

    def _config_over(self, vocab, d_model=None):
        return TransformerConfig(vocab, self.n_ctx, self.d_model if d_model is None else d_model, self.n_heads,
                                 scaling=self.scaling, mup_base=self.mup_base)

    @property
    def config(self):
        """The model's :class:`~stats.training.transformer.TransformerConfig` over the plays' vocabulary."""
        return self._config_over(len(shakespeare_ids()[2]))

    @property
    def statistics(self):
        per_point = ("loss_at", "beats_bigram_at", "logit_at", "cosine_at", "diverged_at")
        compared = (() if self.narrow is None else
                    tuple(f"logit_{kind}_{at}" for kind in ("diverged", "flat", "grows")
                          for at in ("best", *(f"at_{i}" for i in range(len(self.lrs))))))
        return (("initial_loss", "initial_cosine", "best_log_lr", "best_loss", "beats_bigram_best", "logit_best", "cosine_best", "gradient_error")
                + tuple(f"{what}_{i}" for what in per_point for i in range(len(self.lrs))) + compared)

    @property
    def block_rows(self):
        return 1

    @property
    def uses(self):
        return (*_transformer_uses(self.scaling), *(("mup_lr_multipliers",) if self.mup_base is not None else ()))

    @property
    def key(self):
        extra = {"mup_base": self.mup_base} if self.mup_base is not None else {}
        return stream_key("text-sweep", d_model=self.d_model, scaling=self.scaling,
                          lrs=",".join(f"{v:.6g}" for v in self.lrs), steps=self.steps, n_heads=self.n_heads,
                          n_ctx=self.n_ctx, batch=self.batch, warmup=self.warmup, **extra,
                          **({"narrow": self.narrow} if self.narrow is not None else {}))

    def _cost_at(self, D):
        T = self.n_ctx
        per_token = 2 * 12 * D * D + 2 * _score_work(self.scaling, T, D) + D * len(shakespeare_ids()[2])
        return 3.0 * len(self.lrs) * self.steps * self.batch * T * per_token

    @property
    def cost(self):
        """Multiply-adds of a row: every rate's steps (two layers of the four D x D projections, an MLP's
        8 D^2, the scores, the read-out), forward and backward; the narrow model's too when it is trained."""
        return self._cost_at(self.d_model) + (0.0 if self.narrow is None else self._cost_at(self.narrow))

    @property
    def effort(self):
        """The cost, with a fixed overhead a step (the layers' Python: a step takes 4.5 ms at width 32)."""
        return self.cost + (1 + (self.narrow is not None)) * len(self.lrs) * self.steps * 4_000_000.0

    def run_block(self, sim_seed, block, rows, formulas, chunk_size):
        out = {name: np.empty(rows) for name in self.statistics}
        train_ids, val_ids, vocabulary = shakespeare_ids()
        config = self.config
        floor = bigram_loss(train_ids, validation_windows(val_ids, n_ctx=self.n_ctx, count=TEXT_VALIDATION_WINDOWS),
                            vocab=len(vocabulary))
        rules = None
        if self.mup_base is not None:
            rules = getattr(formulas, "mup_lr_multipliers", mup_lr_multipliers)

        def train(cfg, r, lr):
            # The same seed at every rate and width: the same batches (and, at one width, the same
            # initialisation).  A fresh SeedSequence each time, as spawning children advances the one
            # it is called on.
            run = train_language_model(cfg, train_ids, val_ids, steps=self.steps, lr=lr,
                                       seed=block_seed_sequence(sim_seed, block, r),
                                       batch=self.batch, warmup=self.warmup, val_windows=TEXT_VALIDATION_WINDOWS,
                                       lr_multipliers=rules, formulas=formulas, ends_only=True)
            diverged = run.diverged_at is not None
            return run, diverged, (run.val_loss[0] if diverged else run.final_val_loss)

        def sweep(cfg, r):
            """Row r's runs at every rate at ``cfg`` (run, diverged, loss), and the index of the smallest loss."""
            runs = [train(cfg, r, lr) for lr in self.lrs]
            return runs, int(np.argmin([loss for _, _, loss in runs]))

        narrow_config = None if self.narrow is None else self._config_over(len(vocabulary), self.narrow)
        for r in range(rows):
            runs, best = sweep(config, r)
            for i, (run, diverged, loss) in enumerate(runs):
                out[f"loss_at_{i}"][r] = loss
                out[f"beats_bigram_at_{i}"][r] = float(loss < floor)
                out[f"logit_at_{i}"][r] = max(run.max_logit[-1])
                out[f"cosine_at_{i}"][r] = float(np.mean(run.alignment[-1]))
                out[f"diverged_at_{i}"][r] = float(diverged)
            first = runs[0][0]
            out["gradient_error"][r] = first.gradient_check
            out["initial_loss"][r] = first.val_loss[0]
            out["initial_cosine"][r] = float(np.mean(first.alignment[0]))
            out["best_log_lr"][r] = math.log10(self.lrs[best])
            out["best_loss"][r] = runs[best][2]
            out["beats_bigram_best"][r] = float(runs[best][2] < floor)
            out["logit_best"][r] = out[f"logit_at_{best}"][r]
            out["cosine_best"][r] = out[f"cosine_at_{best}"][r]
            if narrow_config is not None:
                narrow_runs, narrow_best = sweep(narrow_config, r)
                for at, i, j in (*((f"at_{i}", i, i) for i in range(len(self.lrs))), ("best", best, narrow_best)):
                    (wide_run, wide_diverged, _), (narrow_run, narrow_diverged, _) = runs[i], narrow_runs[j]
                    _compare_logits(out, at, r, (max(wide_run.max_logit[-1]), max(narrow_run.max_logit[-1])),
                                    wide_diverged or narrow_diverged)
        return out


def _compare_logits(out, at, r, logits, diverged):
    """Row ``r``'s trained ``logits`` (wide, narrow) compared, wide over narrow.  A pair where either run
    ``diverged`` has no trained logit to compare (a diverged run's is its step-0 one): it counts as
    neither level nor growing, against whichever a check asks."""
    wide, narrow = logits
    compared = not diverged and narrow > 0
    ratio = wide / narrow if compared else 0.0
    out[f"logit_diverged_{at}"][r] = float(diverged)
    out[f"logit_flat_{at}"][r] = float(compared and 1 / TRAINED_LOGIT_FACTOR <= ratio <= TRAINED_LOGIT_FACTOR)
    out[f"logit_grows_{at}"][r] = float(compared and ratio > TRAINED_LOGIT_FACTOR)
