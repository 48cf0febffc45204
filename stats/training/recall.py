r"""The field's synthetic anchor: multi-query associative recall (MQAR).

Arora et al. (2023), "Zoology: Measuring and Improving Recall in Efficient Language Models"
(arXiv:2312.04927, section 3 and its code's ``multiquery_ar``), set the task up this way; the
suite draws it the same way, with its own generator:

* a vocabulary of ``vocab`` tokens, the keys the ids :math:`1 \dots V/2 - 1`, the values
  :math:`V/2 \dots V - 1`;
* a sequence of ``length`` tokens opens with N key-value pairs (N distinct keys, N distinct
  values): :math:`k_1 v_1 k_2 v_2 \dots k_N v_N`;
* each of the N keys is then asked once, at an even offset :math:`2g` after the pairs, the N
  gaps drawn without replacement from :math:`0 \dots S - 1`, :math:`S = (L - 2N)/2`, with
  probability proportional to :math:`(g + 1)^{a - 1}`, :math:`a = 0.01` (Zoology's power law:
  a query tends to follow its pair soon, as a repeated bigram does in text);
* every other position holds a token drawn uniformly from the vocabulary (Zoology's
  ``random_non_queries``);
* the model must predict, at a query's position, the value its key was paired with; only those
  N predictions are scored (:func:`recall_batch`'s ``scored``).

A run *solves* the task when its accuracy on held-out sequences (drawn from
:data:`RECALL_TEST_SEED`, the same for every run) reaches :data:`SOLVED_ACCURACY`: Zoology
reports accuracy, and a model that has learned the lookup gets it right every time, where
one that guesses gets :math:`2/V` of them.  In the next-token form of
:meth:`~stats.training.transformer.Transformer.loss_and_grads` the value follows its query in
the sequence; the model cannot see it (the mask is causal), and no key is asked twice.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_generator, check_integer
from ..engine.streams import as_seed_sequence
from .diagnostics import checkpoint_steps
from .language_model import gradient_direction_error, train_transformer
from .stopping import check_give_up_after
from .transformer import Transformer, TransformerConfig

__all__ = ["RECALL_POWER", "RECALL_TEST_SEED", "SOLVED_ACCURACY", "RecallRun", "check_recall_task", "recall_batch",
           "train_recall_model"]

#: Zoology's power-law exponent for a query's gap after its pair.
RECALL_POWER = 0.01
#: The seed of the held-out sequences every run is scored on.
RECALL_TEST_SEED = 20_231_208
#: Held-out accuracy at which a run has solved the task.
SOLVED_ACCURACY = 0.99


def check_recall_task(vocab, length, pairs):
    """``(vocab, length, pairs)`` checked: an even vocabulary of at least 8, a length of 4 to 4096,
    1 to vocab/2 - 1 pairs with room for a query after each (4 pairs <= length); ValueErrors name them."""
    vocab = check_integer(vocab, "vocab", minimum=8, maximum=1 << 16, what="an even integer from 8 to 65536")
    if vocab % 2:
        raise ValueError(f"vocab must be even (half keys, half values); got {vocab}")
    length = check_integer(length, "length", minimum=4, maximum=4096, what="an integer from 4 to 4096")
    pairs = check_integer(pairs, "pairs", maximum=4096)
    if pairs > vocab // 2 - 1:
        raise ValueError(f"pairs must be at most vocab/2 - 1 = {vocab // 2 - 1} (each pair's key distinct); got {pairs}")
    if 4 * pairs > length:
        raise ValueError(f"pairs must leave room for a query after each: 4 pairs <= length = {length}; got {pairs} pairs")
    return vocab, length, pairs


def recall_batch(rng, *, batch, vocab, length, pairs):
    """``(tokens, scored)``: ``batch`` MQAR sequences (module docstring) as ``length + 1`` token ids
    each (the model reads the first ``length``), and the boolean ``(batch, length)`` array of the
    predictions that count -- the N query positions of each sequence."""
    rng = check_generator(rng)
    batch = check_integer(batch, "batch", maximum=1 << 16)
    vocab, length, pairs = check_recall_task(vocab, length, pairs)
    half = vocab // 2
    rows = np.arange(batch)[:, None]
    # N distinct of each range: the first N of a random permutation per row.
    keys = np.argsort(rng.random((batch, half - 1)), axis=1)[:, :pairs] + 1
    values = np.argsort(rng.random((batch, half)), axis=1)[:, :pairs] + half
    space = (length - 2 * pairs) // 2
    # Weighted sampling without replacement by Gumbel top-k (the N largest log p + Gumbel noise).
    log_p = (RECALL_POWER - 1.0) * np.log(np.arange(1, space + 1))
    gaps = np.argsort(-(log_p + rng.gumbel(size=(batch, space))), axis=1)[:, :pairs]
    tokens = rng.integers(0, vocab, size=(batch, length + 1))
    tokens[:, 0:2 * pairs:2], tokens[:, 1:2 * pairs:2] = keys, values
    where = 2 * pairs + 2 * gaps
    tokens[rows, where], tokens[rows, where + 1] = keys, values
    scored = np.zeros((batch, length), dtype=bool)
    scored[rows, where] = True
    return tokens, scored


@dataclass(frozen=True)
class RecallRun:
    """One run's record: the ``steps`` at which it was scored, the held-out ``accuracy`` and loss
    (nats per scored prediction) there, each layer's largest |attention logit| there
    (``max_logit[k][l]``), the step-0 gradient check (<= 1 when the hand-derived gradient
    agrees), the step it diverged at (None when it did not), and the checkpoint at which it was
    given up on, unsolved (``abandoned_at``; None when it was not: :func:`train_recall_model`)."""

    steps: tuple
    accuracy: tuple
    loss: tuple
    max_logit: tuple
    gradient_check: float
    diverged_at: int | None
    abandoned_at: int | None = None

    @property
    def final_accuracy(self):
        """The last held-out accuracy, 0 for a run that diverged."""
        return 0.0 if self.diverged_at is not None else self.accuracy[-1]

    @property
    def solved(self):
        """Whether the run ended at :data:`SOLVED_ACCURACY` or more."""
        return self.final_accuracy >= SOLVED_ACCURACY


def train_recall_model(config, *, pairs, steps, lr, seed, optimizer="adam", batch=32, warmup=0, test_sequences=256,
                       stop_when_solved=False, give_up_after=None, formulas=None):
    """Train one model on MQAR with ``pairs`` key-value pairs a sequence of ``config.n_ctx`` tokens
    over ``config.vocab``, every step a fresh batch drawn from the run's own stream, and return its
    :class:`RecallRun` (the optimiser, warm-up and divergence as
    :func:`~stats.training.language_model.train_transformer`'s).  With ``stop_when_solved`` the
    run stops at the first checkpoint where it has solved the task, and its record repeats that
    checkpoint's numbers at the later ones (a solved run's accuracy is then its final one).
    ``give_up_after`` (None, or a step from 1 to ``steps``; it needs ``stop_when_solved``) also
    stops, the same way, a run that has not solved the task by the first checkpoint at or after
    it and before ``steps`` (``abandoned_at``): such a run's step to solve, had it gone on, would
    be a later checkpoint or one past the budget, past ``give_up_after`` either way (what
    :func:`stats.lr_search.search_rate` needs to give up on a rate)."""
    if not isinstance(stop_when_solved, bool):
        raise TypeError(f"stop_when_solved must be True or False; got {stop_when_solved!r}")
    if not isinstance(config, TransformerConfig):
        raise TypeError(f"config must be a TransformerConfig; got {type(config).__name__}")
    task = dict(vocab=config.vocab, length=config.n_ctx, pairs=pairs)
    check_recall_task(**task)
    batch = check_integer(batch, "batch", maximum=4096)
    give_up_after = check_give_up_after(give_up_after, steps, stop_when_solved, flag="stop_when_solved")
    test_sequences = check_integer(test_sequences, "test_sequences", maximum=1 << 16)
    init_seq, data_seq = as_seed_sequence(seed).spawn(2)
    model = Transformer(config, np.random.default_rng(init_seq), formulas=formulas)
    data = np.random.default_rng(data_seq)
    test, test_scored = recall_batch(np.random.default_rng(RECALL_TEST_SEED), batch=test_sequences, **task)
    check_tokens, check_scored = recall_batch(np.random.default_rng(data_seq.spawn(1)[0]), batch=2, **task)
    check = gradient_direction_error(model, check_tokens, scored=check_scored)

    def evaluate(m):
        loss, _, info = m.loss_and_grads(test, grads=False, scored=test_scored)
        return info["accuracy"], loss, tuple(info["max_logit"])

    def stop(t, record):
        return record[0] >= SOLVED_ACCURACY or (give_up_after is not None and give_up_after <= t < steps)

    scored, _, diverged = train_transformer(model, lambda: recall_batch(data, batch=batch, **task), evaluate, steps=steps,
                                            lr=lr, optimizer=optimizer, warmup=warmup, stop=stop if stop_when_solved else None)
    marks = sorted(set(checkpoint_steps(steps)))
    abandoned = None
    if diverged is None and len(scored) < len(marks):  # stopped: the later checkpoints hold its numbers
        if scored[-1][1][0] < SOLVED_ACCURACY:
            abandoned = scored[-1][0]
        scored = scored + [(t, scored[-1][1]) for t in marks[len(scored):]]
    return RecallRun(tuple(t for t, _ in scored), *(tuple(r[i] for _, r in scored) for i in range(3)), float(check), diverged,
                     abandoned)
