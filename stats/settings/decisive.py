"""The decisive training cells: a head trained at the widths the section names (its opening's
d_k = 512, its saturation table's d_k = 1024), and a control that separates saturation at step 0
from the learning rate (the claims of :mod:`stats.claims.statements.decisive`).

Three heads share one forward pass where they differ: the unscaled head (``"none"``), the
section's scaled head (``"sqrt"``) and the *control* (``"t5"``): no division, with
:math:`1/\\sqrt{d_k}` folded into :math:`W_Q`'s initialisation -- the unscaled head's forward and
parameterisation, the scaled head's logits at step 0.  Against the unscaled head at one rate it
differs only in being unsaturated at step 0; against the scaled head only in the effective
learning rate of :math:`W_Q` (:func:`stats.training.folding.folded_query_lr_factor`).

Each head is trained under SGD, under Adam started cold and under Adam with a short linear
warm-up (practice never starts Adam cold at large rates), and the control under Adafactor too,
every run in float32 with early stopping on sustained accuracy (its gradient check at step 0 in
float64), each cell at rates found by the adaptive search (:func:`stats.lr_search.profile_search`).

Two *evidence profiles* say at which widths: ``default`` (the default build: the same cells at
widths whose runs fit its budget, so every claim and its machinery is exercised at every build)
and ``full`` (``EVIDENCE=full``: the widths the text names; its cost is measured in
``docs/performance.md``).  The profile is read from the environment variable
:data:`EVIDENCE_VARIABLE` (``make reports EVIDENCE=full`` sets it), so the registry, the page and
every test see the same one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .training import N_KEYS

__all__ = ["DECISIVE_PROFILES", "EVIDENCE_VARIABLE", "PRACTICE_OPTIMIZERS", "SEARCH_START", "DecisiveProfile", "decisive_profile"]

#: The environment variable that names the evidence profile (default: ``default``).
EVIDENCE_VARIABLE = "SDPA_EVIDENCE"

#: The heads: unscaled, the section's scaled head, and the control (folded, no division).
DECISIVE_SCALINGS = ("none", "sqrt", "t5")
#: Steps of Adam's linear warm-up where it has one: short against every budget (a few percent),
#: as in practice, long enough that the first steps' size is a twentieth of the rate's.
WARMUP_STEPS = 20
#: (optimizer, warm-up steps) every head is trained under; the control also under Adafactor.
DECISIVE_OPTIMIZERS = (("sgd", 0), ("adam", 0), ("adam", WARMUP_STEPS))
CONTROL_ONLY_OPTIMIZERS = (("adafactor", 0),)
#: Where the search's coarse grid (five rates, two decades) is centred, per optimiser: within a
#: decade of the pilots' best rates at d_k = 16 to 256 (``python -m stats.tuning``); the search
#: extends its grid wherever its best is at an edge, so the centre moves the cost, not the answer.
SEARCH_START = {"sgd": 1.0, "adam": 1e-2, "adafactor": 1e-1}
#: The variant a profile's widest shapes are trained under when it cannot afford every one: Adam
#: with the warm-up, as practice trains (its cost, and what it leaves out: docs/performance.md).
PRACTICE_OPTIMIZERS = (("adam", WARMUP_STEPS),)


@dataclass(frozen=True)
class DecisiveProfile:
    """One evidence profile: its ``shapes`` ((d_k, d_model) pairs), the step ``budget`` of a run
    (a run stops once its accuracy is sustained), the float ``dtype``, the runs of each stage of
    the rate search (coarse, refined, confirmed at the chosen rate and its two quarter-decade
    neighbours) and the root ``seed`` of the search (its own, as the pilots' are).  The shapes in
    ``practice_only`` are trained under :data:`PRACTICE_OPTIMIZERS` alone (the control too)."""

    name: str
    shapes: tuple
    budget: int
    dtype: str
    coarse_runs: int
    refine_runs: int
    confirm_runs: int
    seed: int
    practice_only: tuple = ()

    def __post_init__(self):
        if not set(self.practice_only) <= set(self.shapes):
            raise ValueError(f"practice_only must name shapes of the profile {list(self.shapes)}; got {list(self.practice_only)}")

    def optimizers(self, shape):
        """The (optimizer, warm-up) variants every head is trained under at ``shape``."""
        return PRACTICE_OPTIMIZERS if shape in self.practice_only else DECISIVE_OPTIMIZERS

    def control_optimizers(self, shape):
        """The variants the control is trained under at ``shape``: every head's, and Adafactor where all are run."""
        return self.optimizers(shape) + (() if shape in self.practice_only else CONTROL_ONLY_OPTIMIZERS)

    def run_options(self, warmup):
        """The TrainingSim fields every run of the profile shares, with ``warmup``: its budget, keys
        (:data:`~stats.settings.training.N_KEYS`), precision, and stopping once accuracy holds."""
        return {"steps": self.budget, "n_keys": N_KEYS, "dtype": self.dtype, "stop_when_learned": True, "warmup": warmup}

    def searches(self):
        """Every (shape, optimizer, warm-up, head) whose rate is searched: each head under each of its
        shape's variants, and the control alone under the variants only it is trained under."""
        return tuple((shape, o, w, head) for shape in self.shapes for o, w in self.control_optimizers(shape)
                     for head in (DECISIVE_SCALINGS if (o, w) in self.optimizers(shape) else ("t5",)))

    def cells(self):
        """Every (shape, optimizer, warm-up) the heads are trained at, shapes in the profile's order."""
        return tuple((shape, o, w) for shape in self.shapes for o, w in self.optimizers(shape))


DECISIVE_PROFILES = {
    "default": DecisiveProfile(name="default", shapes=((32, 32), (32, 128)), budget=400, dtype="float32",
                               coarse_runs=3, refine_runs=6, confirm_runs=12, seed=4_3_2034),
    # The widths the text names (its 2-core time: docs/performance.md): every variant at its
    # opening's d_k = 512 and its table's 1024; the other ratio, d_model = 4 d_k, under Adam with the warm-up.
    "full": DecisiveProfile(name="full", shapes=((512, 512), (1024, 1024), (512, 2048)), budget=1000, dtype="float32",
                            coarse_runs=2, refine_runs=3, confirm_runs=6, seed=4_3_2034,
                            practice_only=((512, 2048),)),
}


def decisive_profile(name=None):
    """The profile called ``name`` (default: the environment's :data:`EVIDENCE_VARIABLE`, else
    ``default``); a ValueError naming the variable for any other value."""
    source = f"the environment variable {EVIDENCE_VARIABLE}" if name is None else "name"
    name = os.environ.get(EVIDENCE_VARIABLE, "default") if name is None else name
    if name not in DECISIVE_PROFILES:
        raise ValueError(f"{source} must be one of {sorted(DECISIVE_PROFILES)}; got {name!r}")
    return DECISIVE_PROFILES[name]
