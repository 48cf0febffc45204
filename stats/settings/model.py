"""The small transformer's runs: the claims' (:mod:`stats.claims.statements.model`) and the
coordinate-check study's (``analyses/coordinate_check.py``).

The coordinate check follows the ``mup`` package's: a few Adam steps at one rate, at widths a
factor 2 apart; at 1e-2 no width of the study diverges in its 4 steps (docs/results.md has the
study's moves).
"""

from __future__ import annotations

#: muP's base width d_0 for the transformer: its narrowest width, where muP and the standard
#: parameterisation agree but for the 1/d_k.
MODEL_MUP_BASE = 32
#: The coordinate check's Adam rate and steps; the widths the claims compare (narrow, wide).
COORDINATE_LR, COORDINATE_STEPS = 1e-2, 4
COORDINATE_NARROW, COORDINATE_WIDE = 32, 256
#: The study's widths, and its seeds a width (a draft's).
COORDINATE_WIDTHS = (32, 64, 128, 256, 512)
COORDINATE_RUNS, COORDINATE_QUICK_RUNS = 8, 2
#: The gradient check's width (two heads of 32) and rows a scaling.
GRADIENT_WIDTH, GRADIENT_ROWS = 64, 16
#: The parameterisations of the coordinate check: (label, scaling, muP base width or None).
MODEL_PARAMETERISATIONS = (
    ("standard (1/sqrt(d_k), one Adam rate)", "sqrt", None),
    ("muP (Yang et al.'s rules, 1/d_k)", "mup", MODEL_MUP_BASE),
)

# ---------------------------------------------------------------- the synthetic task (MQAR)

#: Zoology's multi-query associative recall as the suite draws it (stats/training/recall.py):
#: 64 tokens, sequences of 64, 8 key-value pairs; an attention-only model of two layers and one
#: head (d_k = d_model), Adam with a 20-step warm-up, batches of 32, float32.
RECALL_VOCAB, RECALL_LENGTH, RECALL_PAIRS = 64, 64, 8
RECALL_BATCH, RECALL_WARMUP = 32, 20
#: The budget (a run stops once it has solved the task) and the width the claim trains at.
RECALL_STEPS, RECALL_WIDTH = 1500, 64
#: The rate both heads train at: the scaled head's better rate of 1e-3 and 3e-3 in the pilot
#: (docs/results.md, "the synthetic task"), where it solved the task soonest; the unscaled head
#: solved it at neither.
RECALL_LR = 3e-3
