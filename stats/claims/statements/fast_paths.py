"""Not a section of the text: the engine's exact shortcuts, each cross-checked against the
direct recipe it replaces, so that a wrong shortcut fails ``verify``."""

from __future__ import annotations

import math

from ...models.laws import entry_law
from ...models.sampling import CosineSim, ScoreSim
from ...training.simulations import PrecisionSim
from ..check_builders import Measure, Stated, ratio, share, two_sample
from ..headings import ENGINE
from ..claim import Claim

SECTION = ENGINE

#: The float32 training cells: the scaled and the unscaled head under Adam and SGD at d_k = d_model = 64, 150
#: steps, at the rates the training claims' pilot found best for d_k = 64 (d_model = 256).
FLOAT32_CELLS = (("sqrt", "adam", 1e-2), ("none", "adam", 3e-3), ("sqrt", "sgd", 3.0), ("none", "sgd", 0.3))
FLOAT32_WIDTH, FLOAT32_STEPS = 64, 150
#: Runs on which float32 and float64 may disagree (the training claims test shares of 1/2 and 1/10): at most 1 in
#: 20 away from the margin, detected at 0.55 (target 0.5 beyond the interval; a lost cast that diverges every run is 1).
FLOAT32_DISAGREE, FLOAT32_TARGET = 0.05, 0.5


def _pair(d, rho, law, method):
    return ScoreSim(d, rho, entries=entry_law(law), method="direct"), ScoreSim(d, rho, entries=entry_law(law), method=method)


def _checks(law, method, widths):
    out = []
    for d, target in widths:
        for rho in (0.0, 0.5):
            a, b = _pair(d, rho, law, method)
            lbl = f"d_k={d}, rho={rho:g}"
            out.append(two_sample(f"mean, {lbl}", Measure(a, "score"), Measure(b, "score"), target=2.5 * target * math.sqrt(d),
                                  relative=False, sd=lambda a=a: math.sqrt(a.d_k * (1 + a.rho**2 * 2))))
            out.append(ratio(f"variance, {lbl}", Measure(a, "score"), Measure(b, "score"), lambda F: 1.0, uses=(), target=target))
    return tuple(out)


def claims():
    widths = ((4, 0.02), (64, 0.02), (256, 0.05))
    return (
        Claim(
            "fast-path-chi2",
            SECTION,
            "Gaussian scores drawn as rho R^2 + sqrt(1 - rho^2) R w with R^2 ~ chi2(d_k), w ~ N(0, 1) have the direct "
            "recipe's law (mean and variance compared).",
            "chi2 shortcut = direct, in mean and variance",
            _checks("gaussian", "chi2", widths),
        ),
        Claim(
            "fast-path-bitpacked",
            SECTION,
            "Rademacher scores from packed sign bits, x.z = d_k - 2 popcount(x XOR z), have the direct recipe's law.",
            "bit-packed = direct, in mean and variance",
            _checks("rademacher", "bitpacked", widths),
        ),
        Claim(
            "fast-path-mixture",
            SECTION,
            "Student-t (df 10) scores drawn as normal scale mixtures -- one gamma variate per key entry and one normal "
            "per row, exact given the query and the keys' scales -- have the direct recipe's law.",
            "scale mixture = direct, in mean and variance",
            _checks("student_t", "mixture", ((4, 0.02), (64, 0.05))),
        ),
        Claim(
            "fast-path-float32",
            SECTION,
            "Uniform-entry scores drawn and multiplied in float32 have the float64 recipe's law at the precision the "
            "claims test (the rounding error is below 1e-4 score standard deviations).",
            "float32 = float64, in mean and variance",
            _checks("uniform", "float32", ((64, 0.02), (256, 0.05))),
        ),
        Claim(
            "fast-path-float32-training",
            SECTION,
            "A head trained in float32 (parameters, episodes, forward and backward pass, optimiser state; drawn in float64 "
            "and rounded) is the float64 run of the same seed at another precision: the two agree run by run on whether "
            "the head learned (away from runs within 4 of 128 probe queries of the accuracy target, or reaching it in the "
            "budget's last eighth) and on whether it diverged.",
            "P(learned_32 != learned_64, off the margin) <= 0.05; P(diverged_32 != diverged_64) <= 0.05",
            tuple(
                share(f"{sc}, {opt}, lr={lr:g}, d_k={FLOAT32_WIDTH}, d_model={FLOAT32_WIDTH}, {FLOAT32_STEPS} steps: "
                      f"float32 and float64 disagree on {what}",
                      Stated.at_most(f"agree: share <= {FLOAT32_DISAGREE:g}", FLOAT32_DISAGREE),
                      Measure(PrecisionSim(FLOAT32_WIDTH, sc, opt, lr, FLOAT32_STEPS), stat), target=FLOAT32_TARGET)
                for sc, opt, lr in FLOAT32_CELLS
                for what, stat in (("learned (off the margin)", "learned_differs_clear"), ("diverged", "diverged_differs"))
            ),
        ),
        Claim(
            "fast-path-cosine",
            SECTION,
            "Gaussian cosines from three draws a row (R^2 ~ chi2(d), w ~ N(0, 1), V ~ chi2(d - 1)) have the direct "
            "recipe's mean.",
            "E cos (shortcut) = E cos (direct)",
            tuple(
                two_sample(f"d_k={d}, rho={r:g}", Measure(CosineSim(d, r, method="direct"), "cosine"),
                           Measure(CosineSim(d, r, method="chi2"), "cosine"), target=0.03 / math.sqrt(d), relative=False,
                           sd="pilot", tail_index=math.inf)
                for d in (4, 64)
                for r in (0.0, 0.5)
            ),
        ),
    )


CLAIMS = claims()
