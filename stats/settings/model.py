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
#: The budget (a run stops once it has solved the task) and the widths (d_k = d_model) the claim
#: grades at, each under both protocols with rates searched at that width: the best rates fall with
#: the width (docs/results.md), so a width's own searches set its rates.  A censored run costs about
#: 33 s at 64 and 75-91 s at 128 on 2 cores; 256 (about 6 CPU-hours, docs/performance.md) is a
#: cluster's addition to this tuple.
RECALL_STEPS, RECALL_WIDTHS = 1500, (64, 128)
#: The rate every model of the study at growing width trains at: the scaled head's better rate of
#: 1e-3 and 3e-3 in the pilot (docs/results.md, "the synthetic task"), where it solved the task
#: soonest; the unscaled head solved it at neither.  The claim's shared rate is searched instead
#: (RECALL_OWN_BEST).
RECALL_LR = 3e-3
#: The study at growing width (``analyses/recall_widths.py``, EVIDENCE=full): its widths (d_k =
#: d_model), seeds a cell, and the widths where additive attention is trained beside the dot
#: products (a step of it costs about seven of a dot product's at d_k = 64).  A censored run of
#: 1500 steps costs about 33 s at d_k = 64, 91 s at 128 and 240-460 s at 256 (docs/performance.md),
#: where at this rate no model solves the task (docs/results.md): 256 is priced, not run.  A
#: draft's width and budget.
RECALL_STUDY_WIDTHS, RECALL_STUDY_RUNS, RECALL_ADDITIVE_WIDTHS = (32, 64, 128), 2, (32, 64)
RECALL_QUICK_WIDTHS, RECALL_QUICK_STEPS = (32,), 30
#: The own-best-rate protocol on the synthetic task (EVIDENCE=full): the scaled model's, the unscaled
#: model's and the folded control's rates searched at each of the claim's widths (stats.lr_search, task
#: "recall"; the scaled model's is the shared rate as well, the protocols' definition), the
#: coarse grid centred on 1e-3 (1e-4 to 1e-2, a decade either side of the scaled model's rates),
#: on a seed of its own.  Runs a stage: a censored run costs 1500 steps (about 30-55 s at d_k = 64,
#: docs/performance.md), and the unscaled model's are all censored where it solves nothing, so the
#: stages are small -- 2, 3 and 6 runs a rate, at most 2 extensions.
RECALL_SEARCH_START, RECALL_SEARCH_SEED = 1e-3, 4_3_2036
RECALL_SEARCH_RUNS = dict(coarse_runs=2, refine_runs=3, confirm_runs=6, max_extensions=2)
RECALL_OWN_BEST = ("sqrt", "none", "t5")

# ---------------------------------------------------------------- real text (the plays)

#: The text runs' model and budget (stats.TextSweepSim): two layers with MLPs, context 32,
#: batches of 16 windows, Adam with a 15-step warm-up, 150 steps, float32.  On 2026-12-06's pilot
#: (docs/results.md, "the plays at 150 steps") the scaled models pass the bigram model's loss
#: within this budget and the unscaled ones do not.
TEXT_CONTEXT, TEXT_BATCH, TEXT_STEPS, TEXT_WARMUP = 32, 16, 150, 15
#: The claim's model: one head of d_k = 64 (d_model = 64); its shared rate is the scaled model's
#: best of 1e-3, 3e-3 and 1e-2 in the pilot (1e-2 for each of its 3 seeds).
TEXT_CLAIM_WIDTH, TEXT_CLAIM_HEADS, TEXT_SHARED_LR = 64, 1, 1e-2
#: The own-best-rate protocol's grid (EVIDENCE=full: 4 runs a row).
TEXT_CLAIM_GRID = (1e-3, 3e-3, 1e-2, 3e-2)
#: The study's widths (two heads each: d_k = d_model / 2) and seeds a cell, for the build and a
#: draft; EVIDENCE=full adds width 256 and seeds.
TEXT_HEADS = 2
TEXT_WIDTHS, TEXT_FULL_WIDTHS, TEXT_QUICK_WIDTHS = (32, 64, 128), (32, 64, 128, 256), (32, 64)
TEXT_RUNS, TEXT_FULL_RUNS, TEXT_QUICK_RUNS = 2, 4, 2
#: A draft's budget: a third of the steps, so a draft shows the figure's shape, not its values.
TEXT_QUICK_STEPS = 50
#: Exact half-decades, 1e-4 to 1e-1 (Wortsman et al.'s LR sensitivity averages over rates evenly
#: spaced in log rate, which 3e-3 for 10^-2.5 is not).
_HALF_DECADES = tuple(10.0 ** (k / 2) for k in range(-8, -1))
#: Each scaling's half-decade grid, bracketing its best rate at every width in the pilot: the
#: standard and muP models' best rates lie in 3e-3 to 3e-2 (muP's at the top at every width),
#: the folded control's at 1e-3 or below at d_model = 128; the unscaled model's and the
#: control's grid is half a decade lower.  QK-norm has the standard model's grid,
#: so their LR sensitivities (Wortsman et al. 2023) are over the same rates.
TEXT_GRIDS = {
    "sqrt": _HALF_DECADES[2:],
    "mup": _HALF_DECADES[2:],
    "qknorm": _HALF_DECADES[2:],
    "none": _HALF_DECADES[1:-1],
    "t5": _HALF_DECADES[1:-1],
}
#: The plays at the head widths the section names (``analyses/text_widths.py``, EVIDENCE=full): one head,
#: d_k = d_model, every model on one grid -- half-decades from 1e-4 to 10^-1.5, bracketing every model's best
#: rate in a one-seed pilot at d_k = 256 (docs/results.md) and the scaled model's 1e-2 at 64 -- so that both
#: protocols read the same runs; seeds a cell.  A draft's width.
TEXT_HEAD_WIDTHS, TEXT_HEAD_RUNS, TEXT_HEAD_GRID = (64, 128, 256), 3, _HALF_DECADES[:6]
TEXT_HEAD_QUICK_WIDTHS = (32,)
#: The trained-logit claim's widths (EVIDENCE=full): the study's model at d_model = 128, each seed
#: also trained at 32 on the same batches.  The standard model is graded at the shared rate only
#: (stats/claims/statements/model.py says why); muP's grid holds the shared rate and lies a
#: half-decade beyond both widths' best rates in a pilot of 12 seeds on 10^-2.5 to 10^-1.5
#: (docs/results.md, "muP's trained logits on the model"), where muP's best was 10^-1.5 at both.
TRAINED_NARROW, TRAINED_WIDE = 32, 128
TRAINED_GRIDS = {"sqrt": (TEXT_SHARED_LR,), "mup": _HALF_DECADES[3:]}
#: The study's parameterisations: (label, scaling, muP base width or None).
TEXT_PARAMETERISATIONS = (
    ("standard (1/sqrt(d_k))", "sqrt", None),
    ("muP (Yang et al.'s rules, 1/d_k)", "mup", MODEL_MUP_BASE),
    ("QK-norm (unit q and k, a learned gain)", "qknorm", None),
    ("unscaled", "none", None),
    ("folded control (no division, W_Q / sqrt(d_k))", "t5", None),
)
