"""The fixes for growing logits in training -- muP, QK-norm, T5's folded initialisation: the
claims' runs (:mod:`stats.claims.statements.training_fixes`) and the studies'
(``analyses/mup_transfer.py``, ``qknorm_growth.py``, ``t5_folding.py``, ``t5_steps.py``).

The muP bracket, QK-norm's gain rate and the rates of T5's runs were read off exploratory
runs on other seeds (4 runs a point) and the training study's curves.
"""

from __future__ import annotations

from .training import GRIDS, N_KEYS, RatePilot

# ---------------------------------------------------------------- muP

#: Adam steps of a muP sweep.
MUP_STEPS = 40
#: muP's base width d_0 and the wide width the claims compare it with.
MUP_BASE, MUP_WIDE = 16, 128
#: The three parameterisations: (label, scaling, muP base width or None).
PARAMETERISATIONS = (
    ("standard (1/sqrt(d_k), one Adam rate)", "sqrt", None),
    ("1/d_k, one Adam rate", "mup", None),
    ("muP (1/d_k, Adam rate lr d_0/d_model for W_Q, W_K)", "mup", MUP_BASE),
)
#: The study's grids, one per parameterisation ("scaling/base"): five rates, half a decade apart,
#: around its best at every width (muP's at 512 sits at the top, 1, as it did on the wider grid).
#: A seed trains every rate of its grid, so the two rates of the common 7-rate grid (1e-3 to 1)
#: that each parameterisation leaves out, flat or diverged at every width there (README,
#: Performance), would cost two sevenths.
MUP_STUDY_GRIDS = {
    "sqrt/None": (1e-3, 3e-3, 1e-2, 3e-2, 1e-1),
    "mup/None": (3e-3, 1e-2, 3e-2, 1e-1, 3e-1),
    f"mup/{MUP_BASE}": (1e-2, 3e-2, 1e-1, 3e-1, 1.0),
}
MUP_STUDY_WIDTHS, MUP_STUDY_QUICK_WIDTHS = (16, 32, 64, 128, 256, 512), (16, 32, 64)
#: The base-width pilot (:func:`stats.tuning.mup_base_rates`): on a seed of its own, this many
#: seeds trained at every rate of each parameterisation's study grid at d_k = MUP_BASE, on the
#: same draws; a parameterisation's base rate is the grid rate with the smallest mean final
#: probe loss, and the claims test transfer from it with the grid's two neighbouring rates.
#: 96 seeds resolve the closest runner-up (1/d_k's 0.03 against its 0.1, 0.016 apart in mean
#: loss) at about four paired standard errors.
MUP_PILOT_SEED, MUP_PILOT_RUNS = 4_3_2028, 96
#: A trained head's logits are "stable across widths" when the mean target logit after
#: MUP_STEPS steps at the base rate is, at d_k = MUP_WIDE, within this factor of the base width's.
MUP_LOGIT_FACTOR = 2.0
#: Seeds a cell: 8, 3 from d_k = 256 (each seed trains its 5 grid rates: at 512 a seed costs
#: as much as 64 seeds at 64), 2 in a draft.
MUP_STUDY_RUNS, MUP_STUDY_WIDE_RUNS, MUP_STUDY_QUICK_RUNS = 8, 3, 2

# ---------------------------------------------------------------- QK-norm

#: Adam steps at d_k = d_model = 64; the gain's own rate (Adam).
QK_STEPS, QK_WIDTH, GAIN_LR = 50, 64, 3e-2
#: The rates at which the claims check that QK-norm bounds every step's logits.
QK_IDENTITY_LRS = (1e-2, 0.3, 3.0)
#: The study's Adam grid (half a decade apart, into instability), widths and runs a point.
QK_STUDY_GRID = (1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1, 1.0, 3.0)
QK_STUDY_WIDTHS, QK_STUDY_QUICK_WIDTHS = (16, 64), (16,)
QK_STUDY_RUNS, QK_STUDY_QUICK_RUNS = 16, 4

# ---------------------------------------------------------------- T5's folding

#: The folding identities over 30 steps at widths whose sqrt(d_k) is a power of two, where
#: floating point scales exactly, so the two runs agree bit for bit (at other widths rounding
#: seeds a drift: analyses/t5_folding.py), at one rate per optimiser.
FOLD_STEPS, FOLD_WIDTHS = 30, (16, 64)
FOLD_LRS = {"sgd": 0.3, "adam": 1e-2, "adafactor": 1e-1}
#: Folded against divided at the same rate: steps, width, and (optimiser, rate) the claims train.
T5_STEPS, T5_WIDTH = 60, 64
T5_OPTIMIZERS = ("sgd", "adam")
#: The T5 claims' best rates: the folded head's own and the divided head's (the shared rate of
#: the comparison), per optimiser, over the claims' 60 steps: 8 seeds a cell on the training
#: pilot's seed (stats.tuning; grids extended at an edge like the training pilot's).
T5_RATE_CELLS = tuple(((T5_WIDTH, T5_WIDTH), sc, opt) for opt in T5_OPTIMIZERS for sc in ("t5", "sqrt"))
T5_RATE_PILOT = RatePilot(name="t5-best-lr", seed=4_3_2027, cells=T5_RATE_CELLS, grids=tuple(GRIDS.items()), runs=8,
                          steps=T5_STEPS, n_keys=N_KEYS)
#: The study's same-rate runs: the divided head's good rate per optimiser (its best grid rate in
#: the training study at d_k = 64), widths, and the widths of the folding identity's drift.
T5_STUDY_RATES = {"sgd": 3.0, "adam": 1e-2, "adafactor": 1e-1}
T5_STUDY_WIDTHS, T5_STUDY_QUICK_WIDTHS = (16, 64, 256), (16, 64)
FOLD_STUDY_WIDTHS, FOLD_STUDY_QUICK_WIDTHS = (16, 32, 64, 128), (16, 32)
#: Runs a cell: 16 (4 at d_k = 256, where a run costs 16 times one at 64), 4 in a draft.
T5_STUDY_RUNS, T5_STUDY_WIDE_RUNS, T5_STUDY_QUICK_RUNS = 16, 4, 4
#: T5's first step (``analyses/t5_steps.py``): widths, and heads a point (a draft's).
T5_STEP_WIDTHS = (4, 8, 16, 32, 64, 128, 256, 512, 1024)
T5_STEP_RUNS, T5_STEP_QUICK_RUNS = 64, 8
