"""Section "Saturation, measured": the section's table, with exact values deciding its
numbers, Monte Carlo against the exact values, the two samplers against each other,
"most rows are nearly one-hot", and the mirror image at tiny scores."""

from __future__ import annotations

import math

from ...models.saturation import SaturationSim, SmallScoreSim
from ...settings.saturation import CLAIM_MC_WIDTHS as MC_WIDTHS, SMALL_SCORE_EPSILONS as EPSILONS, STATED_TABLE, T
from ..check_builders import Erratum, Measure, Stated, categorical, exact, identity, interval, mean, stated_exact, two_sample
from ..headings import OPENING, SATURATION
from ..macro_words import number_word
from ..claim import Claim

SECTION = SATURATION


def _exact(stat, d, scaling):
    def value(F):
        r = F.saturation_exact(d, T, scaling=scaling)
        return float(r[stat]), float(r["accuracy"])

    return value


def _trace_ratio(F):
    a = F.saturation_exact(4, T, scaling="none")
    b = F.saturation_exact(1024, T, scaling="none")
    r = float(a["trace"] / b["trace"])
    # error of a ratio of two values each within `accuracy`
    err = r * (a["accuracy"] / a["trace"] + b["accuracy"] / b["trace"])
    return r, err


_ERRATUM_SENTENCE = ("Without scaling, the expected largest weight climbs from 0.34 at d_k = 4 to 0.95 at d_k = 1024 "
                     "(exact values 0.3426 and 0.9549).")
_ERRATUM_SUPPORT = (("climbs from 0.34 at d_k = 4 to 0.95 at d_k = 1024 (exact values 0.3426 and 0.9549)", "corrected"),)

#: The expectation is one reading of what the section printed: the text printed an average over its
#: queries, and read as that average the numbers are reproducible (saturation-procedure-graded).  By the
#: team's rule (docs/findings.md) a number is an erratum only if it is outside under every reading, so
#: the expectation's miss is a caveat: the corrected values are what a reader reproduces as N grows.
EXPECTATION_READING = "the expectation: fresh keys for every query, Gaussian entries, N -> infinity"
_AS_WRITTEN = {
    "0.35": "0.35 is what the measurement prints (inside the central 95% interval of the average) with Gaussian entries "
            "under fresh keys for up to about 16000 queries, and under one shared key set at any number of queries",
    "0.96": "0.96 is what the measurement prints with Gaussian entries under fresh keys for up to a few million "
            "queries, and under one shared key set at any number of queries",
}


def _stated_check(stat, scaling, d, text, corrected):
    kind = "max weight" if stat == "max_weight" else "trace"
    name = "Max" if stat == "max_weight" else "Trace"
    side = "Unscaled" if scaling == "none" else "Scaled"
    erratum = (Erratum(Stated.parse(corrected), _ERRATUM_SENTENCE, kind="caveat", as_written=_AS_WRITTEN[text],
                       confirmed_by=("saturation-procedure-graded",), support=_ERRATUM_SUPPORT,
                       regraded="was an erratum against the expectation; the procedure the text describes prints "
                                f"{text} under Gaussian entries (saturation-procedure), so by the rule a caveat")
               if corrected else None)
    return stated_exact(f"{side.lower()} {kind}, d_k={d}", text, _exact(stat, d, scaling), uses=("saturation_exact",),
                        macro=f"sat{name}{side}{number_word(d)}", erratum=erratum, reading=EXPECTATION_READING)


def claims():
    unscaled = tuple(_stated_check(*row) for row in STATED_TABLE if row[1] == "none")
    table = unscaled + (
        exact("unscaled trace falls more than tenfold, d_k=4 -> 1024", Stated.at_least("more than tenfold", 10.0),
              _trace_ratio, uses=("saturation_exact",), macro="satTraceFallUnscaled", reading=EXPECTATION_READING),
    )
    table += tuple(_stated_check(*row) for row in STATED_TABLE if row[1] == "sqrt")
    mc = []
    for d in MC_WIDTHS:
        for sc in ("none", "sqrt"):
            sim = SaturationSim(d, T, sc)
            for stat in ("max_weight", "trace"):
                mc.append(mean(f"{stat}, d_k={d}, {sc}", Measure(sim, stat), lambda F, s=stat, d=d, sc=sc: _exact(s, d, sc)(F)[0],
                               uses=("saturation_exact",), target=2e-3, relative=False, sd="pilot", tail_index=math.inf))
    methods = []
    for d in MC_WIDTHS:
        for sc in ("none", "sqrt"):
            a, b = SaturationSim(d, T, sc, method="exact"), SaturationSim(d, T, sc, method="direct")
            # Under 1/sqrt(d_k) no row is nearly one-hot: one_hot_90 is constant 0 there, nothing to compare.
            for stat in ("max_weight", "trace", "entropy") + (("one_hot_90",) if sc == "none" else ()):
                methods.append(two_sample(f"{stat}, d_k={d}, {sc}", Measure(a, stat), Measure(b, stat),
                                          target=0.02 if d < 1024 else 0.05, relative=False, tail_index=math.inf))
    one_hot = tuple(
        interval(f"share of rows with max weight > {thr}, d_k=512, unscaled", Stated.at_least("most rows: share > 1/2", 0.5),
                 measure=Measure(SaturationSim(512, T, "none"), stat), target=0.02, macro=None)
        for thr, stat in (("0.9", "one_hot_90"), ("0.99", "one_hot_99"))
    )
    uniform = lambda F: [1.0 / T] * T  # noqa: E731 - the keys are exchangeable
    winner = tuple(
        categorical(f"winner's index, d_k={d}, unscaled, {method} sampler", Measure(SaturationSim(d, T, "none", method=method),
                    "winner"), uniform, categories=T, uses=(), target=0.03)
        for d, method in ((512, "exact"), (4, "direct"))
    )
    mirror = []
    for eps in EPSILONS:
        sim = SmallScoreSim(eps, T)
        mirror.append(mean(f"E[trace] expansion, eps={eps:g}", Measure(sim, "trace_defect"), lambda F: F.small_score_trace(T),
                           uses=("small_score_trace",), target=0.01, sd=lambda: math.sqrt(2 * (T - 1)) / T**2, tail_index=math.inf))
        mirror.append(mean(f"score gradients of order 1/T, eps={eps:g}", Measure(sim, "score_grad"), lambda F: 1.0, uses=(),
                           target=0.01, sd=lambda: math.sqrt(2 / (T - 1)), tail_index=math.inf))
        mirror.append(identity(f"weights within O(eps) of 1/T, eps={eps:g}", Measure(sim, "uniform_bound"),
                               note="|a_j - 1/T| <= (exp(eps (max z - min z)) - 1)/T"))
    return (
        Claim(
            "saturation-table",
            SECTION,
            "With 32 random keys, the average largest weight without scaling is 0.35 at d_k = 4 and 0.96 at d_k = 1024, "
            "and the trace falls more than tenfold between them; with scaling both stay put at every width, about 0.16 "
            "and 0.93 (each number tested at the text's precision against the exact value).",
            "E max a and E[1 - ||a||^2] by quadrature (saturation_exact), accuracy 1e-9",
            table,
        ),
        Claim(
            "saturation-exact-vs-mc",
            SECTION,
            "The exact saturation values agree with a Monte Carlo run of the section's measurement.",
            "MC mean = saturation_exact, to 2e-3",
            tuple(mc),
        ),
        Claim(
            "saturation-samplers-agree",
            SECTION,
            "The exact sampler (one chi-square and T normals a row) draws the same law as the section's recipe "
            "(q and T keys of d_k normals each): equal means of every statistic.",
            "E_exact[stat] = E_direct[stat]",
            tuple(methods),
        ),
        Claim(
            "mostly-one-hot",
            SECTION,
            "At d_k = 512 without scaling most rows are nearly one-hot (the largest weight exceeds 0.9, or 0.99).",
            "P(max a > 0.9) > 1/2 and P(max a > 0.99) > 1/2 at d_k = 512, T = 32",
            one_hot,
        ),
        Claim(
            "winner-at-random",
            OPENING,
            "A fresh head's query has 'decided' on one key at random: which of the 32 keys gets the largest weight is "
            "uniform over the keys (d_k = 512 without scaling, as the opening has it; and the section's recipe of "
            "drawing q and the keys, at d_k = 4).  A chi-square test sized to see one key favoured by 0.005 over 1/32.",
            "P(argmax_j a_j = j) = 1/T for every key j",
            winner,
        ),
        Claim(
            "mirror-image",
            SECTION,
            "Saturation's mirror image: for scores eps z with eps -> 0 the weights are within O(eps) of 1/T, each score's "
            "gradient is of order 1/T, and E[trace] = 1 - 1/T - eps^2 (T - 1)/T^2 + O(eps^4).",
            "E[(||a||^2 - 1/T)/eps^2] = (T - 1)/T^2 + O(eps^2); E[T^2 ||ds||^2/(T - 1)] = 1 + O(eps^2)",
            tuple(mirror),
        ),
    )


CLAIMS = claims()
