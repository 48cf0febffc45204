"""Section "Why dot products grow with the width": the moments and the law of one score."""

from __future__ import annotations

import math

from ...models.laws import entry_law
from ...models.sampling import CosineSim, ScoreSim, square_mean_variance
from ...models.scores import score_scale, score_tail_index
from ...settings.fresh import (COSINE_WIDTHS, FAST_METHOD, LAW_NAMES, MOMENT_WIDTHS as WIDTHS, SHARED_FROM, SHARED_KEYS, SIGMA_K,
                               SIGMA_Q)
from ..check_builders import Measure, distribution, mean, ratio, score_sd, variance
from ..headings import WIDTH
from ..claim import Claim

SECTION = WIDTH
LAWS = tuple(entry_law(name) for name in LAW_NAMES)


def width_target(d_k):
    """Relative variance discrepancy the width sweep detects: 2% up to d_k = 512, 5% beyond."""
    return 0.02 if d_k <= 512 else 0.05


def score_sim(d_k, law, rho=0.0, *, method=None, sigma=(SIGMA_Q, SIGMA_K)):
    return ScoreSim(d_k, rho, sigma[0], sigma[1], law, method or FAST_METHOD[law.name])


def _moments(sim, scale):
    def value(F):
        return F.moments(sim.d_k, sim.rho, sigma_q=sim.sigma_q, sigma_k=sim.sigma_k, entries=sim.entries, scale=scale)

    return value


def label(law, d=None, rho=None):
    parts = ([f"d_k={d}"] if d is not None else []) + ([f"rho={rho:g}"] if rho is not None else [])
    return ", ".join(parts + [law.label])


def _variance_check(d, law, scale):
    """The width sweep's check at (d, law): a variance test, or from SHARED_FROM on a mean test of
    the row's mean squared score over SHARED_KEYS keys (rho = 0, so E[s^2] is the variance)."""
    c = score_scale(d, scale)
    if d < SHARED_FROM:
        sim = score_sim(d, law)
        return variance(label(law, d), Measure(sim, "score", c), lambda F, s=sim: _moments(s, scale)(F)[1],
                        uses=("moments",), target=width_target(d))
    sim = ScoreSim(d, 0.0, SIGMA_Q, SIGMA_K, law, FAST_METHOD[law.name], SHARED_KEYS)
    sd = lambda: c * c * square_mean_variance(d, SHARED_KEYS, sigma_q=SIGMA_Q, sigma_k=SIGMA_K, entries=law) ** 0.5  # noqa: E731

    return mean(label(law, d), Measure(sim, "square_mean", c * c), lambda F, s=sim: _moments(s, scale)(F)[1],
                uses=("moments",), target=width_target(d), relative=True, sd=sd,
                tail_index=score_tail_index(law, 0.0) / 2,
                note=f"mean over {SHARED_KEYS} keys sharing a query of the squared score (its mean is the variance)")


def _cos_kurtosis_sd(d):
    # cos^2 ~ Beta(1/2, (d - 1)/2) for a uniform direction, so the cosine has kurtosis 3d/(d + 2).
    return math.sqrt(3 * d / (d + 2) - 1)


def claims():
    one = {law: score_sim(1, law) for law in LAWS}
    out = [
        Claim(
            "product-mean",
            SECTION,
            "One coordinate's product q_m k_m of independent zero-mean entries has mean zero.",
            "E[q_m k_m] = 0",
            tuple(
                mean(label(law), Measure(one[law], "score"), lambda F, s=one[law]: _moments(s, "none")(F)[0], uses=("moments",),
                     target=0.01 * score_sd(one[law]), relative=False, sd=lambda s=one[law]: score_sd(s))
                for law in LAWS
            ),
        ),
        Claim(
            "product-variance",
            SECTION,
            "That product has variance sigma_q^2 sigma_k^2 (1 for unit-variance entries), whatever the entry law.",
            "Var(q_m k_m) = sigma_q^2 sigma_k^2",
            tuple(variance(label(law), Measure(one[law], "score"), lambda F, s=one[law]: _moments(s, "none")(F)[1],
                           uses=("moments",), target=0.01) for law in LAWS),
        ),
        Claim(
            "raw-variance-width",
            SECTION,
            "The raw score q.k has variance d_k sigma_q^2 sigma_k^2: it grows linearly with the key width.",
            "Var(q.k) = d_k sigma_q^2 sigma_k^2",
            tuple(_variance_check(d, law, "none") for d in WIDTHS for law in LAWS),
        ),
        Claim(
            "scaled-variance-width",
            SECTION,
            "Dividing by sqrt(d_k) leaves variance sigma_q^2 sigma_k^2 at every width (unit variance for unit entries).",
            "Var(q.k / sqrt(d_k)) = sigma_q^2 sigma_k^2",
            tuple(_variance_check(d, law, "sqrt") for d in WIDTHS for law in LAWS),
        ),
        Claim(
            "sqrt2-growth",
            SECTION,
            "Doubling the key width multiplies the raw scores' standard deviation by sqrt(2).",
            "Var(q.k at 2 d_k) / Var(q.k at d_k) = 2",
            tuple(
                ratio(f"d_k={d} -> {2 * d}, {law.label}", Measure(score_sim(d, law, sigma=(1.0, 1.0)), "score"),
                      Measure(score_sim(2 * d, law, sigma=(1.0, 1.0)), "score"),
                      lambda F, d=d, law=law: F.moments(2 * d, entries=law, scale="none")[1] / F.moments(d, entries=law, scale="none")[1],
                      uses=("moments",), target=t)
                for d, law, t in ((16, LAWS[0], 0.02), (512, LAWS[1], 0.02), (64, LAWS[2], 0.05))
            ),
        ),
        Claim(
            "exact-law",
            SECTION,
            "For Gaussian entries the scaled score is exactly a difference of two scaled chi-squares with d_k "
            "degrees of freedom and scales (1 +- rho)/(2 sqrt(d_k)) (Kolmogorov-Smirnov against its CDF).",
            "q.k / sqrt(d_k) ~ s1 chi2(d_k) - s2 chi2(d_k), s1,2 = (1 +- rho) / (2 sqrt(d_k))",
            tuple(
                distribution(f"d_k={d}, rho={r:g}, gaussian",
                             Measure(ScoreSim(d, r, method="direct"), "score", score_scale(d, "sqrt")),
                             lambda F, d=d, r=r: F.distribution(d, r, scale="sqrt"), uses=("distribution",), target=0.03)
                for d in (1, 8, 512)
                for r in (0.0, 0.6)
            ),
        ),
        Claim(
            "random-vectors-orthogonal",
            SECTION,
            "Fact 1 of §1.3, which the section reuses: independent random vectors are nearly orthogonal; their cosine "
            "has mean 0 and variance 1/d_k.",
            "E[cos(q, k)] = 0, Var(cos(q, k)) = 1/d_k",
            tuple(
                mean(f"mean, d_k={d}", Measure(CosineSim(d, 0.0, method="chi2"), "cosine"),
                     lambda F, d=d: F.cosine_moments(d)[0], uses=("cosine_moments",), target=0.01 / math.sqrt(d),
                     relative=False, sd=lambda d=d: 1 / math.sqrt(d), tail_index=math.inf)
                for d in COSINE_WIDTHS
            )
            + tuple(
                variance(f"variance, d_k={d}", Measure(CosineSim(d, 0.0, method="chi2"), "cosine"),
                         lambda F, d=d: F.cosine_moments(d)[1], uses=("cosine_moments",), target=0.02,
                         sd=lambda d=d: _cos_kurtosis_sd(d), tail_index=math.inf)
                for d in COSINE_WIDTHS
            ),
        ),
    ]
    return tuple(out)


CLAIMS = claims()
