r"""muP's rules for every parameter group of the transformer, for Adam (Yang et al. 2022, Table 3).

Tensor Programs V sorts a network's parameters by which of their dimensions grow with the
width :math:`d_{model}` and gives each group an initialisation and an Adam learning rate;
relative to a base width :math:`d_0`, at which muP and the standard parameterisation agree,
the rules for this model are (:data:`MUP_RULES`):

======================  ============================================  ====================  ==========================
group                   parameters                                    initial variance      Adam learning rate
======================  ============================================  ====================  ==========================
input weights           token and position embeddings                 1 (fan-in finite)     :math:`\eta`
biases and gains        LayerNorm gains and biases, MLP biases,       as standard           :math:`\eta`
                        QK-norm's gain
hidden weights          :math:`W_Q, W_K, W_V, W_O, W_1, W_2`          :math:`1/\text{fan-in}` :math:`\eta\,d_0/d_{model}`
output weights          the unembedding :math:`W_U`                   :math:`d_0/d_{model}^2` :math:`\eta\,d_0/d_{model}`
attention logits        --                                            --                    scores :math:`QK^\top/d_k`
======================  ============================================  ====================  ==========================

The fan-in of :math:`W_2` is :math:`4 d_{model}`, a multiple of the width, so its rate scales
as the others' do.  The read-out's variance is
:class:`~stats.training.transformer.TransformerConfig`'s ``mup_base``; the rates are
:func:`mup_lr_multipliers`, which :func:`~stats.training.language_model.train_transformer`
takes as ``lr_multipliers``.  Yang et al. also allow a zero read-out and zero query
initialisation; the suite keeps the variance rule (a draw, so runs differ by seed).

The *coordinate check* (:func:`coordinate_check`, the ``mup`` package's diagnostic) trains a
model a few Adam steps at a fixed rate and records how far the coordinates of the logits and
of the residual stream have moved from their step-0 values (root mean square over a fixed
batch): under the standard parameterisation the logits' move grows in proportion to the width
(Adam's steps are of size :math:`\eta` per entry, summed over :math:`d_{model}` aligned
coordinates), under muP it stays the same at every width.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_integer, check_positive
from ..engine.streams import as_seed_sequence
from .diagnostics import CHECKPOINTS
from .language_model import train_transformer
from .recall import recall_batch
from .transformer import Transformer, TransformerConfig

__all__ = ["COORDINATE_PAIRS", "MUP_RULES", "coordinate_check", "mup_lr_multipliers"]

#: (group, which parameters, initial variance, Adam rate): the table of the module docstring.
MUP_RULES = (
    ("input weights", "tok, pos", "1", "eta"),
    ("biases and gains", "*.g, *.b, *.b1, *.b2, *.gain", "standard", "eta"),
    ("hidden weights", "*.wq, *.wk, *.wv, *.wo, *.w1, *.w2", "1/fan-in", "eta d_0/d_model"),
    ("output weights", "unembed", "d_0/d_model^2", "eta d_0/d_model"),
)
_HIDDEN = ("wq", "wk", "wv", "wo", "w1", "w2")
#: Key-value pairs of the recall sequences a coordinate check feeds the model.
COORDINATE_PAIRS = 4


def mup_lr_multipliers(model):
    """``{parameter: factor on the Adam rate}`` of :data:`MUP_RULES` for every parameter of ``model``
    (a :class:`~stats.training.transformer.Transformer` whose config sets ``mup_base``):
    :math:`d_0/d_{model}` for the hidden and output weights, 1 for every other parameter."""
    if not isinstance(model, Transformer):
        raise TypeError(f"model must be a Transformer; got {type(model).__name__}")
    config = model.config
    if config.mup_base is None:
        raise ValueError("model's config must set mup_base (muP's base width) for muP's learning rates")
    factor = config.mup_base / config.d_model
    return {k: (factor if k == "unembed" or k.rsplit(".", 1)[-1] in _HIDDEN else 1.0) for k in model.params}


def coordinate_check(config, *, lr, steps, seed, batch=8, formulas=None):
    r"""``{"logits": ..., "residual": ...}``: the root mean square of the change, from step 0, of the
    logits' and of the last residual stream's coordinates (before the final LayerNorm) after each
    of ``steps`` Adam steps at ``lr`` (muP's per-group rates when ``config.mup_base`` is set), on a
    fixed batch of recall sequences (:func:`~stats.training.recall.recall_batch`, the model's
    ``n_ctx`` and vocabulary, :data:`COORDINATE_PAIRS` pairs); arrays of ``steps + 1`` entries,
    the first 0.  ``formulas`` as :class:`~stats.training.transformer.Transformer`'s (its
    ``mup_lr_multipliers`` field, when it has one, gives the rates)."""
    if not isinstance(config, TransformerConfig):
        raise TypeError(f"config must be a TransformerConfig; got {type(config).__name__}")
    if config.vocab < 2 * (COORDINATE_PAIRS + 1) or config.n_ctx < 4 * COORDINATE_PAIRS:
        raise ValueError(f"config must hold {COORDINATE_PAIRS} recall pairs: vocab >= {2 * (COORDINATE_PAIRS + 1)} and "
                         f"n_ctx >= {4 * COORDINATE_PAIRS}; got vocab = {config.vocab}, n_ctx = {config.n_ctx}")
    steps = check_integer(steps, "steps", maximum=CHECKPOINTS - 1, what=f"an integer from 1 to {CHECKPOINTS - 1}")
    if check_positive(lr, "lr") > 1:
        raise ValueError(f"lr must be at most 1 (an Adam step moves every entry by about lr); got {lr}")
    batch = check_integer(batch, "batch", maximum=4096)
    task = dict(vocab=config.vocab, length=config.n_ctx, pairs=COORDINATE_PAIRS)
    init_seq, data_seq, probe_seq = as_seed_sequence(seed).spawn(3)
    model = Transformer(config, np.random.default_rng(init_seq), formulas=formulas)
    rules = getattr(formulas, "mup_lr_multipliers", mup_lr_multipliers)
    multipliers = rules(model) if config.mup_base is not None else None
    probe, _ = recall_batch(np.random.default_rng(probe_seq), batch=batch, **task)
    data = np.random.default_rng(data_seq)
    x_in = probe[:, :-1]
    seen = []

    def record(m):
        residual, logits = m.residual_and_logits(x_in)
        seen.append((logits.astype(np.float64), residual.astype(np.float64)))

    # At most CHECKPOINTS - 1 steps, train_transformer evaluates after every one of them.
    train_transformer(model, lambda: recall_batch(data, batch=batch, **task), record, steps=steps, lr=lr,
                      lr_multipliers=multipliers)
    base_logits, base_residual = seen[0]
    rms = lambda a: float(np.sqrt(np.mean(a * a)))  # noqa: E731
    return {"logits": np.array([rms(lg - base_logits) for lg, _ in seen]),
            "residual": np.array([rms(r - base_residual) for _, r in seen])}
