r"""Training the small transformer (:mod:`~stats.training.transformer`) on a stream of token ids.

One run: the model drawn from its seed, trained for ``steps`` steps of ``batch`` windows each
(drawn from the training ids by the run's own stream), Adam or SGD at rate ``lr`` with an
optional linear warm-up, in the model's precision.  Before the first step the hand-derived
gradient is held, in float64, to a Richardson-extrapolated central difference along itself
(:func:`gradient_direction_error`, as the single heads' step-0 check).  At
:data:`~stats.training.diagnostics.CHECKPOINTS` evenly spaced steps the run records the mean
cross-entropy (nats per token) on fixed validation windows -- the same windows for every run
of a study, drawn from :data:`VALIDATION_SEED`, so runs are compared on one sample -- and each
layer's largest |attention logit|.  A run whose loss leaves the finite numbers, or exceeds
:data:`DIVERGED_LOSS` times the uniform model's :math:`\log V`, has diverged: it stops, and
that is its outcome (never a NaN in a mean).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validation import check_choice, check_integer, check_positive
from ..engine.streams import as_seed_sequence
from .corpus import text_windows
from .diagnostics import GRADIENT_STEP, GRADIENT_TOLERANCE, checkpoint_steps
from .optimizers import adam_update
from .schedule import check_warmup, warmed_lr
from .transformer import Transformer, TransformerConfig

__all__ = ["DIVERGED_LOSS", "LM_OPTIMIZERS", "VALIDATION_SEED", "LanguageModelRun", "gradient_direction_error", "train_language_model",
           "train_transformer",
           "validation_windows"]

#: The seed of the validation windows every run is scored on.
VALIDATION_SEED = 20_261_205
#: A loss above this many times :math:`\log V` (the uniform model's) is divergence.
DIVERGED_LOSS = 3.0
LM_OPTIMIZERS = ("adam", "sgd")


@dataclass(frozen=True)
class LanguageModelRun:
    """One run's record: the ``steps`` at which it was scored, the validation loss and each
    layer's largest |attention logit| there (``max_logit[k][l]``), the training loss of every
    step it took, the step-0 gradient check (<= 1 when the hand-derived gradient agrees), the
    step it diverged at (None when it did not), and each layer's mean query-key cosine at each
    scored step (``alignment[k][l]``,
    :meth:`~stats.training.transformer.Transformer.attention_alignment`)."""

    steps: tuple
    val_loss: tuple
    max_logit: tuple
    train_loss: tuple
    gradient_check: float
    diverged_at: int | None
    alignment: tuple = ()

    @property
    def final_val_loss(self):
        """The last validation loss, ``inf`` for a run that diverged."""
        return math.inf if self.diverged_at is not None else self.val_loss[-1]


def gradient_direction_error(model, tokens, *, scored=None):
    r"""The hand-derived gradient G against a Richardson-extrapolated central difference of the loss
    along :math:`u = G/\lVert G\rVert`, in float64: :math:`|D - \lVert G\rVert|` over
    :math:`10^{-6}\max(\lVert G\rVert, |D|)` (<= 1 when they agree); ``scored`` as in
    :meth:`~stats.training.transformer.Transformer.loss_and_grads`."""
    if not isinstance(model, Transformer):
        raise TypeError(f"model must be a Transformer; got {type(model).__name__}")
    tokens = model.check_tokens(tokens, targets=True)
    f64 = model.in_float64()
    _, grads, _ = f64.loss_and_grads(tokens, scored=scored)
    norm = math.sqrt(sum(float(np.sum(g * g)) for g in grads.values()))
    size = math.sqrt(sum(float(np.sum(p * p)) for p in f64.params.values()))
    saved = dict(f64.params)

    def central(h):
        out = []
        for sign in (1.0, -1.0):
            f64.params = {k: saved[k] + (sign * h / max(norm, 1e-300)) * grads[k] for k in saved}
            out.append(f64.loss_and_grads(tokens, grads=False, scored=scored)[0])
        return (out[0] - out[1]) / (2 * h)

    h = GRADIENT_STEP * size
    fd = (4 * central(h / 2) - central(h)) / 3
    return abs(fd - norm) / (GRADIENT_TOLERANCE * max(norm, abs(fd), 1e-300))


def _token_stream(ids, name, config):
    """``ids`` checked: a 1-d integer array of ids in the model's vocabulary, longer than a window."""
    arr = np.asarray(ids)
    if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer) or arr.dtype == bool:
        raise ValueError(f"{name} must be a 1-d integer array of token ids; got {arr.dtype} of shape {arr.shape}")
    if arr.size < config.n_ctx + 1:
        raise ValueError(f"{name} must hold more than n_ctx = {config.n_ctx} tokens; got {arr.size}")
    if arr.min() < 0 or arr.max() >= config.vocab:
        raise ValueError(f"{name} must lie in [0, vocab = {config.vocab}); got {arr.min()} to {arr.max()}")
    return arr


def validation_windows(val_ids, *, n_ctx, count):
    """The ``count`` windows of ``n_ctx + 1`` ids every run of that context is scored on: drawn from
    ``val_ids`` by :data:`VALIDATION_SEED`."""
    n_ctx = check_integer(n_ctx, "n_ctx", maximum=1 << 16)
    count = check_integer(count, "count", maximum=1 << 16)
    arr = np.asarray(val_ids)
    if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer) or arr.dtype == bool:
        raise ValueError(f"val_ids must be a 1-d integer array of token ids; got {arr.dtype} of shape {arr.shape}")
    if arr.size < n_ctx + 1:
        raise ValueError(f"val_ids must hold more than n_ctx = {n_ctx} tokens; got {arr.size}")
    return text_windows(val_ids, batch=count, length=n_ctx, rng=np.random.default_rng(VALIDATION_SEED))


def train_transformer(model, draw, evaluate, *, steps, lr, optimizer="adam", warmup=0, lr_multipliers=None, stop=None,
                      ends_only=False):
    r"""Train ``model`` in place and return ``(scored, train_loss, diverged_at)``.

    Step t calls ``draw()`` for its batch, ``(tokens, scored)`` (``scored`` None: every
    prediction counts), and takes one step of ``optimizer`` at the (warmed) rate ``lr``, times
    ``lr_multipliers[name]`` for a parameter it names.  At every checkpoint step (and at steps
    0 and ``steps``) ``evaluate(model)`` is recorded: ``scored`` is the list of ``(step,
    record)``.  A loss that leaves the finite numbers or exceeds :data:`DIVERGED_LOSS` times
    :math:`\log V`, or a forward pass whose activations overflow (the model's
    FloatingPointError), stops the run: ``diverged_at`` is its step (None when none did).
    ``stop`` (a function of a checkpoint's step and record, ``stop(t, record)``) ends the run
    early at the first checkpoint where it is true (the records stop there too).  ``ends_only`` scores the run at steps 0 and
    ``steps`` alone (a caller that reads no other checkpoint saves seven evaluations).
    """
    if not isinstance(model, Transformer):
        raise TypeError(f"model must be a Transformer; got {type(model).__name__}")
    for f, name in ((draw, "draw"), (evaluate, "evaluate"), (stop, "stop")):
        if not (callable(f) or (f is None and name == "stop")):
            raise TypeError(f"{name} must be callable{' or None' if name == 'stop' else ''}; got {type(f).__name__}")
    steps = check_integer(steps, "steps", maximum=10**6)
    lr = check_positive(lr, "lr")
    optimizer = check_choice(optimizer, "optimizer", LM_OPTIMIZERS)
    warmup = check_warmup(warmup, steps)
    multipliers = dict(lr_multipliers or {})
    unknown = set(multipliers) - set(model.params)
    if unknown:
        raise ValueError(f"lr_multipliers names parameters the model lacks: {sorted(unknown)}")
    for k, v in multipliers.items():
        check_positive(v, f"lr_multipliers[{k!r}]")
    update = getattr(model.formulas, "adam_update", adam_update)
    if not isinstance(ends_only, bool):
        raise TypeError(f"ends_only must be True or False; got {ends_only!r}")
    marks = (0, steps) if ends_only else checkpoint_steps(steps)
    groups = _rate_groups(model, multipliers)
    limit = DIVERGED_LOSS * math.log(model.config.vocab)
    scored, train_loss = [], []
    for t in range(steps + 1):
        tokens, mask = draw() if t < steps else (None, None)
        try:
            if t in marks:
                record = evaluate(model)
            loss, grads, _ = model.loss_and_grads(tokens, scored=mask) if t < steps else (0.0, {}, None)
        except FloatingPointError:  # the last step's parameters overflow a forward pass
            return scored, train_loss, t
        if t in marks:
            scored.append((t, record))
            if stop is not None and stop(t, record):
                break
        if t == steps:
            break
        if not (math.isfinite(loss) and loss < limit) or not all(group.gather(grads) for group in groups):
            return scored, train_loss, t
        train_loss.append(loss)
        rate = warmed_lr(lr, t + 1, warmup)
        for group in groups:
            r = rate * group.factor
            if optimizer == "adam":
                group.values += update(group.grads, group.state, t + 1, r)
            else:
                group.values -= model.dtype.type(r) * group.grads
    return scored, train_loss, None


class _RateGroup:
    """The parameters that train at one rate factor, as one flat ``(1, n)`` array whose slices the
    model's ``params`` become (views): an optimiser step is elementwise, so one step of the flat
    array is the same arithmetic as one step a parameter, without a call and its checks per
    parameter (at the widths trained here those cost more than the update itself)."""

    def __init__(self, model, factor, names):
        self.factor, self.names = factor, names
        params = model.params
        self.values = np.concatenate([params[k].ravel() for k in names])[None, :]
        self.grads = np.empty_like(self.values)
        self.state = {}
        at = 0
        for k in names:
            shape, size = params[k].shape, params[k].size
            params[k] = self.values[0, at:at + size].reshape(shape)
            at += size

    def gather(self, grads):
        """Copy this group's gradients into :attr:`grads`; False when one is not finite."""
        np.concatenate([grads[k].ravel() for k in self.names], out=self.grads[0])
        return bool(np.isfinite(self.grads).all())


def _rate_groups(model, multipliers):
    """One :class:`_RateGroup` for each distinct rate factor (1 for a parameter ``multipliers`` does not name)."""
    by_factor = {}
    for k in model.params:
        by_factor.setdefault(float(multipliers.get(k, 1.0)), []).append(k)
    return [_RateGroup(model, factor, names) for factor, names in by_factor.items()]


def train_language_model(config, train_ids, val_ids, *, steps, lr, seed, optimizer="adam", batch=16, warmup=0,
                         val_windows=64, lr_multipliers=None, formulas=None, ends_only=False):
    """Train one model (module docstring) and return its :class:`LanguageModelRun`.

    ``lr_multipliers`` maps a parameter name to a factor on ``lr`` (muP's per-group rates);
    every other parameter trains at ``lr``.  It may also be a function of the drawn model that
    returns that mapping (:func:`~stats.training.mup_rules.mup_lr_multipliers`).  ``formulas``
    as :class:`~stats.training.transformer.Transformer`'s; ``ends_only`` as :func:`train_transformer`'s
    (the record then holds steps 0 and ``steps`` alone).
    """
    if not isinstance(config, TransformerConfig):
        raise TypeError(f"config must be a TransformerConfig; got {type(config).__name__}")
    steps = check_integer(steps, "steps", maximum=10**6)
    check_positive(lr, "lr")
    check_choice(optimizer, "optimizer", LM_OPTIMIZERS)
    batch = check_integer(batch, "batch", maximum=4096)
    check_warmup(warmup, steps)
    val_windows = check_integer(val_windows, "val_windows", maximum=1 << 16)
    train_ids, val_ids = (_token_stream(ids, name, config) for ids, name in ((train_ids, "train_ids"), (val_ids, "val_ids")))
    init_seq, data_seq = as_seed_sequence(seed).spawn(2)
    model = Transformer(config, np.random.default_rng(init_seq), formulas=formulas)
    if callable(lr_multipliers):
        lr_multipliers = lr_multipliers(model)
    data = np.random.default_rng(data_seq)
    val = validation_windows(val_ids, n_ctx=config.n_ctx, count=val_windows)
    check = gradient_direction_error(model, text_windows(train_ids, batch=2, length=config.n_ctx,
                                                         rng=np.random.default_rng(data_seq.spawn(1)[0])))

    def evaluate(m):
        loss, _, info = m.loss_and_grads(val, grads=False, alignment=True)
        return loss, tuple(info["max_logit"]), tuple(info["alignment"])

    scored, train_loss, diverged = train_transformer(
        model, lambda: (text_windows(train_ids, batch=batch, length=config.n_ctx, rng=data), None), evaluate,
        steps=steps, lr=lr, optimizer=optimizer, warmup=warmup, lr_multipliers=lr_multipliers, ends_only=ends_only)
    return LanguageModelRun(tuple(t for t, _ in scored), tuple(r[0] for _, r in scored), tuple(r[1] for _, r in scored),
                            tuple(train_loss), float(check), diverged, tuple(r[2] for _, r in scored))
