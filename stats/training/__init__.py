r"""Training attention heads, many seeded runs at once: the training wing.

* :mod:`~stats.training.scalings` -- the scalings of the scores, one object each (the
  suite's one vocabulary for them: ``SCALINGS``);
* :mod:`~stats.training.optimizers` -- SGD, Adam and Adafactor, one object each (``OPTIMIZERS``);
* :mod:`~stats.training.arrays` -- block-wise in-place updates of a batch of runs;
* :mod:`~stats.training.task` -- the retrieval task (episodes and targets);
* :mod:`~stats.training.model` -- a batch of single heads: scores, loss, gradients;
* :mod:`~stats.training.diagnostics` -- the probe episode and the step-0 gradient check;
* :mod:`~stats.training.schedule` -- the learning rate's linear warm-up;
* :mod:`~stats.training.stopping` -- stopping a run once it holds its accuracy, and compacting a batch;
* :mod:`~stats.training.trainer` -- the training step (:class:`Trainer`) and :func:`train_heads`;
* :mod:`~stats.training.folding` -- T5's folding as a reparameterisation (:func:`fold_gaps`);
* :mod:`~stats.training.precision` -- float32 training against float64, seed by seed (:func:`precision_gaps`);
* :mod:`~stats.training.simulations` -- the runs as simulations of the engine;
* :mod:`~stats.training.transformer` -- a small decoder-only transformer (embeddings, pre-LayerNorm
  causal multi-head attention under a scaling, MLP, cross-entropy), its backward beside its forward;
* :mod:`~stats.training.corpus` -- the plays of Shakespeare as character tokens, split by play;
* :mod:`~stats.training.language_model` -- training the transformer on a token stream (:func:`train_language_model`);
* :mod:`~stats.training.recall` -- the field's synthetic task, multi-query associative recall (Zoology's MQAR);
* :mod:`~stats.training.mup_rules` -- muP's rules for every parameter group, and its coordinate check;
* :mod:`~stats.training.transformer_simulations` -- the transformer's runs as simulations of the engine.

Adding a scaling or an optimiser is one class and one registry line:
``docs/adding-a-scaling.md``.
"""

from .diagnostics import CHECKPOINTS, PROBE_STATISTICS, checkpoint_steps
from .folding import FOLDING_OUTCOMES, fold_gaps, folded_query_lr_factor
from .arrays import DTYPES
from .model import Heads
from .optimizers import ADAM_BETAS, ADAM_EPS, FIRST_STEP_OPTIMIZERS, OPTIMIZERS, Optimizer, adafactor_update, adam_update, optimizer_named
from .scalings import (
    HEAD_SCALINGS,
    SCALINGS,
    SCORE_SCALINGS,
    Scaling,
    mup_lr_multiplier,
    qk_normalize,
    qknorm_gain,
    scaling_named,
    t5_fold_divisor,
)
from .precision import PRECISION_OUTCOMES, precision_gaps
from .schedule import check_warmup, warmed_lr
from .stopping import HOLD_STEPS, check_give_up_after, check_stop_when_learned, keep_runs
from .simulations import FoldingSim, LRSweepSim, PrecisionSim, TrainingSim
from .task import QUERY_NOISE, retrieval_episodes, retrieval_targets
from .trainer import OUTCOMES, UNSTABLE_LOSS, UNSTABLE_RISE, Trainer, train_heads
from .corpus import (
    PLAYS_VERSION,
    VALIDATION_EVERY,
    bigram_loss,
    character_vocabulary,
    encode_text,
    plain_text,
    shakespeare_ids,
    shakespeare_plays,
    split_plays,
    text_windows,
)
from .language_model import (DIVERGED_LOSS, LM_OPTIMIZERS, LanguageModelRun, gradient_direction_error, train_language_model,
                             train_transformer, validation_windows)
from .mup_rules import COORDINATE_PAIRS, MUP_RULES, coordinate_check, mup_lr_multipliers
from .recall import RECALL_POWER, RECALL_TEST_SEED, SOLVED_ACCURACY, RecallRun, check_recall_task, recall_batch, train_recall_model
from .transformer_simulations import (COORDINATE_CONTEXT, COORDINATE_HEAD_WIDTH, COORDINATE_VOCAB, RECALL_OUTCOMES, TEXT_MAX_GRID,
                                      TEXT_VALIDATION_WINDOWS, CoordinateCheckSim, RecallSim, TextSweepSim)
from .transformer import (
    LAYER_NORM_EPS,
    TRANSFORMER_SCALINGS,
    Transformer,
    TransformerConfig,
    cross_entropy,
    embedding_backward,
    gelu,
    gelu_backward,
    layer_norm,
    layer_norm_backward,
)

__all__ = [
    "ADAM_BETAS",
    "ADAM_EPS",
    "CHECKPOINTS",
    "DTYPES",
    "FIRST_STEP_OPTIMIZERS",
    "HOLD_STEPS",
    "FOLDING_OUTCOMES",
    "HEAD_SCALINGS",
    "OPTIMIZERS",
    "OUTCOMES",
    "PRECISION_OUTCOMES",
    "PROBE_STATISTICS",
    "QUERY_NOISE",
    "SCALINGS",
    "SCORE_SCALINGS",
    "UNSTABLE_LOSS",
    "UNSTABLE_RISE",
    "FoldingSim",
    "Heads",
    "LRSweepSim",
    "Optimizer",
    "PrecisionSim",
    "Scaling",
    "Trainer",
    "TrainingSim",
    "adafactor_update",
    "adam_update",
    "check_give_up_after",
    "check_stop_when_learned",
    "check_warmup",
    "checkpoint_steps",
    "fold_gaps",
    "keep_runs",
    "folded_query_lr_factor",
    "mup_lr_multiplier",
    "optimizer_named",
    "precision_gaps",
    "qk_normalize",
    "qknorm_gain",
    "retrieval_episodes",
    "retrieval_targets",
    "scaling_named",
    "t5_fold_divisor",
    "train_heads",
    "warmed_lr",
    "LAYER_NORM_EPS",
    "TRANSFORMER_SCALINGS",
    "Transformer",
    "TransformerConfig",
    "cross_entropy",
    "embedding_backward",
    "gelu",
    "gelu_backward",
    "layer_norm",
    "layer_norm_backward",
    "PLAYS_VERSION",
    "VALIDATION_EVERY",
    "bigram_loss",
    "character_vocabulary",
    "encode_text",
    "plain_text",
    "shakespeare_ids",
    "shakespeare_plays",
    "split_plays",
    "text_windows",
    "DIVERGED_LOSS",
    "LM_OPTIMIZERS",
    "LanguageModelRun",
    "gradient_direction_error",
    "train_language_model",
    "train_transformer",
    "validation_windows",
    "COORDINATE_PAIRS",
    "MUP_RULES",
    "coordinate_check",
    "mup_lr_multipliers",
    "RECALL_POWER",
    "RECALL_TEST_SEED",
    "SOLVED_ACCURACY",
    "RecallRun",
    "recall_batch",
    "train_recall_model",
    "COORDINATE_CONTEXT",
    "COORDINATE_HEAD_WIDTH",
    "COORDINATE_VOCAB",
    "CoordinateCheckSim",
    "RECALL_OUTCOMES",
    "RecallSim",
    "TEXT_MAX_GRID",
    "TEXT_VALIDATION_WINDOWS",
    "TextSweepSim",
    "check_recall_task",
]
