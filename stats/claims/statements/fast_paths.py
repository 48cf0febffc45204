"""Not a section of the text: the engine's exact shortcuts, each cross-checked against the
direct recipe it replaces, so that a wrong shortcut fails ``verify``."""

from __future__ import annotations

import math

from ...models.laws import entry_law
from ...models.sampling import CosineSim, ScoreSim
from ..check_builders import Measure, ratio, two_sample
from ..headings import ENGINE
from ..claim import Claim

SECTION = ENGINE


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
