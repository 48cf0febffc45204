"""Training a head on the retrieval task: the training claims' runs
(:mod:`stats.claims.statements.training`), the training study's grid (``analyses/training.py``)
and the pilot that chooses their best learning rates (:mod:`stats.tuning`)."""

from __future__ import annotations

from dataclasses import dataclass

#: Steps of a training run, and the keys of an episode.
STEPS = 150
N_KEYS = 32
#: Log grids half a decade apart, one per optimiser.
SGD_LRS = (0.03, 0.1, 0.3, 1.0, 3.0)
ADAM_LRS = (1e-3, 3e-3, 1e-2, 3e-2, 1e-1)
GRIDS = {"sgd": SGD_LRS, "adam": ADAM_LRS}
OPTIMIZERS = ("sgd", "adam")

# ---------------------------------------------------------------- the claims

#: (d_k, d_model) the claims train: small and square, large and square, and a multi-head-like
#: d_model = 4 d_k.
CLAIM_SHAPES = ((16, 16), (256, 256), (64, 256))
LARGE = (256, 256)
#: The (shape, scaling, optimiser) cells the claims train at their best grid learning rate.
BEST_LR_CELLS = (
    ((16, 16), "sqrt", "sgd"), ((16, 16), "sqrt", "adam"),
    ((256, 256), "sqrt", "sgd"), ((256, 256), "none", "sgd"),
    ((256, 256), "sqrt", "adam"), ((256, 256), "none", "adam"),
    ((64, 256), "sqrt", "sgd"), ((64, 256), "none", "sgd"),
    ((64, 256), "sqrt", "adam"), ((64, 256), "none", "adam"),
)
#: The heads "training-scaled-head-learns" trains at d_k = d_model = 16, each at its own best rate
#: (SMALL_FIX_PILOT): the scaled head under SGD, Adam and Adafactor, and muP's 1/d_k, QK-norm and
#: T5's folding under Adam.
SMALL_FIX_CELLS = (((16, 16), "sqrt", "sgd"), ((16, 16), "sqrt", "adam"), ((16, 16), "mup", "adam"),
                   ((16, 16), "qknorm", "adam"), ((16, 16), "t5", "adam"), ((16, 16), "sqrt", "adafactor"))
#: Their budget: at d_k = 16 these heads need longer than the wide ones to hold 90% on the
#: held-out probe (at 150 steps most runs of the scaled head under Adam, muP's 1/d_k, T5's folding
#: and Adafactor had not, at any grid rate, while QK-norm had in 12 steps): SMALL_FIX_STEPS, cheap
#: at this width.
SMALL_FIX_STEPS = 600
#: Adafactor's grid: its relative step, half a decade apart.
ADAFACTOR_LRS = (1e-2, 3e-2, 1e-1, 3e-1, 1.0)
#: The rate of the one-step runs that measure the head at step 0 (whatever the optimiser, its
#: probe is measured before the step).
INITIAL_LR = 1e-2
#: Keys per episode in the runs that only check identities (the gradient, the optimisers'
#: steps): the identities hold for every T, and 8 keys make the 6905 runs they need cheap.
IDENTITY_KEYS = 8

# ---------------------------------------------------------------- the study

#: (d_k, d_model) the study sweeps: square widths (a draft: the first two).  The claims' third
#: shape, d_model = 4 d_k (64, 256), is tested there at its best rates (24-32 runs a check); its
#: learning-rate curves, a third of this study's 256-wide cost, are left out to keep `make
#: reports` within its budget.
STUDY_SHAPES = ((16, 16), (64, 64), (256, 256))
STUDY_QUICK_SHAPES = ((16, 16), (64, 64))
#: muP's 1/d_k is trained under Adam at one rate (0.01), for its logits' growth against
#: 1/sqrt(d_k) (the alignment figure); its learning-rate curves, widths 16 to 512, are the
#: muP study's (analyses/mup_transfer.py).
STUDY_SCALINGS = {"sgd": ("none", "sqrt"), "adam": ("none", "sqrt", "mup")}
CURVE_SCALINGS = ("none", "sqrt")
ALIGNMENT_LR = 1e-2
#: Runs a cell: 16 where d_model = 16; 2 in a draft.
STUDY_RUNS, STUDY_QUICK_RUNS = 16, 2
#: At d_k = d_model = 64 a cell costs about 4 times a 16-wide one: 8 runs (the claims test 16
#: and 256, not 64; this column draws the curves' trend between them).
STUDY_MID_RUNS = 8
#: Where d_model = 256 a cell costs 4-16 times a 64-wide one: 8 runs at the rates the figures
#: read there (the claims' best grid rates, and Adam's 0.01 for the alignment figure), 4 at the
#: other grid rates, which only draw the curves' shape.  The claims' own checks (24-32 runs)
#: carry the statistical weight at these widths.
STUDY_WIDE_RUNS, STUDY_WIDE_OFF_BEST_RUNS = 8, 4

# ---------------------------------------------------------------- the best learning rates


@dataclass(frozen=True)
class RatePilot:
    """A pilot that chooses a learning rate per cell: ``runs`` seeds a cell, each trained at
    every rate of its optimiser's grid on the same draws (common random numbers), for
    ``steps`` steps with ``n_keys`` keys, on streams of the root ``seed`` (its own, not the
    build's).  A cell's best rate is the grid rate with the smallest restricted mean of
    ``statistic`` (steps to sustained 90% accuracy on the held-out probe, censored at
    ``steps + 1``); a tie goes to the smaller rate.  A best rate at an edge of the grid is never
    used as a best: the grid is extended there, half a decade at a time, up to
    ``max_extensions`` times (:func:`stats.tuning.run_rate_pilot`).  :func:`stats.tuning.run_rate_pilot` runs it, :func:`stats.tuning.best_rates`
    caches what it chose."""

    name: str
    seed: int
    cells: tuple
    grids: tuple  # ((optimizer, (lr, ...)), ...)
    runs: int
    steps: int
    n_keys: int
    statistic: str = "steps_to_accuracy"
    rule: str = "smallest restricted mean; ties to the smaller rate"
    #: How many times a cell whose best rate sits at an edge of what it tried is extended half a
    #: decade beyond that edge; past it the best is reported as a bound.
    max_extensions: int = 3

    def grid(self, optimizer):
        return dict(self.grids)[optimizer]


#: The root seed of the adaptive learning-rate searches (:mod:`stats.lr_search`): the pilots' seed,
#: a search's stages being its spawned children.
LR_SEARCH_SEED = 4_3_2027

#: The pilot of the claims' best rates: 8 seeds a cell on a seed of its own (the default
#: seed's successor, fixed when the pilot was first written into the pipeline, never tuned).
RATE_PILOT = RatePilot(name="training-best-lr", seed=4_3_2027, cells=BEST_LR_CELLS, grids=tuple(GRIDS.items()), runs=8,
                       steps=STEPS, n_keys=N_KEYS)

#: The pilot of the small fixes' rates (SMALL_FIX_CELLS), on the same seed and rule; a pilot of its
#: own so that adding it left the claims' pilot, and its cache, as they were.
SMALL_FIX_PILOT = RatePilot(name="small-fix-lr", seed=4_3_2027, cells=SMALL_FIX_CELLS,
                            grids=(("sgd", SGD_LRS), ("adam", ADAM_LRS), ("adafactor", ADAFACTOR_LRS)), runs=8,
                            steps=SMALL_FIX_STEPS,
                            n_keys=N_KEYS)
