"""Section "The assumption behind the argument, and when it fails": correlated queries and
keys, muP's 1/d_k, QK-norm, and T5's folded initialisation."""

from __future__ import annotations

import math

from ...training.scalings import qknorm_gain
from ...models.heads import T5Sim
from ...models.laws import entry_law
from ...models.sampling import CosineSim
from ...models.scores import score_scale
from ...settings.fresh import CORR_WIDTHS, GAIN_KEYS, HEAVY_TAIL_DF, QK_RHOS, QK_WIDTHS, RHOS, T5_WIDTHS
from ..check_builders import Erratum, Measure, Stated, exact, identity, mean, score_sd, variance
from ..headings import ASSUMPTION
from ..claim import Claim
from .width import LAWS, label, score_sim

SECTION = ASSUMPTION
T18 = entry_law("student_t", df=HEAVY_TAIL_DF)  # heavy-tailed, with the 8 moments a correlated variance test needs
GAIN = qknorm_gain(GAIN_KEYS)


def _moments(sim, scale):
    def value(F):
        return F.moments(sim.d_k, sim.rho, sigma_q=sim.sigma_q, sigma_k=sim.sigma_k, entries=sim.entries, scale=scale)

    return value


def _correlated(quantity, scale, target, laws=LAWS):
    out = []
    for d in CORR_WIDTHS:
        for r in RHOS:
            for law in laws:
                sim = score_sim(d, law, r)
                m = Measure(sim, "score", score_scale(d, scale))
                if quantity == "mean":
                    out.append(mean(label(law, d, r), m, lambda F, s=sim: _moments(s, scale)(F)[0], uses=("moments",),
                                    target=target, sd=lambda s=sim: score_sd(s, scale)))
                else:
                    out.append(variance(label(law, d, r), m, lambda F, s=sim: _moments(s, scale)(F)[1], uses=("moments",),
                                        target=target))
    return tuple(out)


def _t5_ratio_claims():
    checks = []
    for opt in ("adam", "sgd"):
        for d in T5_WIDTHS:
            sim = T5Sim(d, opt)
            checks.append(identity(f"{opt}, query side, d_k={d}", Measure(sim, "query_ratio_law"), rows=200,
                                   note="ratio of score changes (folded / divided) equals t5_step_ratio on every head"))
            checks.append(identity(f"{opt}, key side, d_k={d}", Measure(sim, "key_ratio_law"), rows=200))
    return tuple(checks)


def claims():
    return (
        Claim(
            "correlated-mean-raw",
            SECTION,
            "With k = rho q + sqrt(1 - rho^2) z the raw score has mean rho d_k (times sigma_q sigma_k).",
            "E[q.k] = rho d_k sigma_q sigma_k",
            _correlated("mean", "none", 0.01),
        ),
        Claim(
            "correlated-mean-scaled",
            SECTION,
            "Under that correlation the scaled score's mean is rho sqrt(d_k): it still grows with the width.",
            "E[q.k / sqrt(d_k)] = rho sqrt(d_k) sigma_q sigma_k",
            _correlated("mean", "sqrt", 0.01),
        ),
        Claim(
            "correlated-variance",
            SECTION,
            "Exercise 4.3d: the scaled score's variance is sigma_q^2 sigma_k^2 (1 + rho^2 (mu_4 - 2)), so the entries' "
            "fourth moment mu_4 enters once rho != 0 (1 + rho^2 for Gaussian, 1 - rho^2 for Rademacher entries).",
            "Var(q.k / sqrt(d_k)) = sigma_q^2 sigma_k^2 (1 + rho^2 (mu_4 - 2))",
            _correlated("variance", "sqrt", 0.02, LAWS + (T18,)),
        ),
        Claim(
            "mup-mean",
            SECTION,
            "muP's 1/d_k scaling keeps the correlated score's mean at rho sigma_q sigma_k at every width: bounded.",
            "E[q.k / d_k] = rho sigma_q sigma_k",
            _correlated("mean", "mup", 0.01),
        ),
        Claim(
            "mup-variance",
            SECTION,
            "Under muP's 1/d_k scaling the correlated score's variance falls like 1/d_k, to 0 as the width grows.",
            "Var(q.k / d_k) = sigma_q^2 sigma_k^2 (1 + rho^2 (mu_4 - 2)) / d_k",
            _correlated("variance", "mup", 0.02, LAWS + (T18,)),
        ),
        Claim(
            "qknorm-bounded",
            SECTION,
            f"QK-norm (Henry et al. 2020) normalises q and k before the product, so the correlated logit g cos(q, k) "
            f"is bounded by the gain g whatever the width; with g fixed at its initial value log2(T^2 - T) = {GAIN:.4g} "
            "(T = 32) its mean is g E[cos], Hotelling's exact mean, which tends to g rho.",
            "E[g cos(q, k)] = g rho Gamma((d+1)/2)^2 / (Gamma(d/2) Gamma(d/2+1)) 2F1(1/2, 1/2; d/2+1; rho^2) <= g",
            tuple(
                mean(f"d_k={d}, rho={r:g}", Measure(CosineSim(d, r, method="chi2"), "cosine", GAIN),
                     lambda F, d=d, r=r: GAIN * F.cosine_mean(d, r), uses=("cosine_mean",), target=0.01, sd="pilot",
                     tail_index=math.inf)
                for d in QK_WIDTHS
                for r in QK_RHOS
            )
            + tuple(
                exact(f"bound, d_k={d}, rho={r:g}", Stated.at_most(f"E[logit] <= g = {GAIN:.4g}", GAIN),
                      lambda F, d=d, r=r: GAIN * F.cosine_mean(d, r), uses=("cosine_mean",))
                for d in QK_WIDTHS
                for r in QK_RHOS
            ),
        ),
        Claim(
            "t5-identical-at-init",
            SECTION,
            "T5 folds 1/sqrt(d_k) into the initialisation of W_Q (standard deviation smaller by sqrt(d_k)) and never "
            "divides: at initialisation the scores are identical to the divided version's, on the same draws.",
            "X (W_Q / sqrt(d_k)) (X W_K)^T = (X W_Q)(X W_K)^T / sqrt(d_k), within rounding",
            tuple(identity(f"d_k={d}", Measure(T5Sim(d, "adam"), "init_scores"), rows=200,
                           note="|S_divided - S_folded| within gamma_k |X||W_Q|c |X||W_K| entrywise")
                  for d in T5_WIDTHS),
        ),
        Claim(
            "t5-step-ratio",
            SECTION,
            "After one step from the same loss the two parameterisations change the scores by different amounts: "
            "from the query side by sqrt(d_k) times more under Adam (its first step is eta sign(g), whatever the "
            "gradient's scale) and d_k times more under SGD; from the key side by the same amount.",
            "folded / divided score change: Adam sqrt(d_k), SGD d_k (query side); 1 (key side)",
            _t5_ratio_claims(),
        ),
        Claim(
            "t5-differ-slightly",
            SECTION,
            "The text: during training the folded and divided versions 'differ slightly', because Adam's steps ignore a "
            "weight's scale. Measured as the query-side score-change ratio under Adam at d_k = 64.",
            "Adam query-side ratio at d_k = 64 is close to 1 (the text) vs sqrt(64) = 8 (derived)",
            (
                exact(
                    "Adam, query side, d_k=64",
                    Stated.between("differ slightly: a ratio within [0.5, 2]", 0.5, 2.0),
                    lambda F: F.t5_step_ratio("adam", "query", 64),
                    uses=("t5_step_ratio",),
                    erratum=Erratum(
                        Stated.parse("8"),
                        "During training they differ by a factor sqrt(d_k) in the query side's effective step: under "
                        "Adam the folded W_Q moves the scores sqrt(d_k) times (8 times at d_k = 64) as far per step as "
                        "the divided one, and under SGD d_k times; the key side is unaffected.",
                        support=(
                            ("under Adam the folded W_Q moves the scores sqrt(d_k) times (8 times at d_k = 64) as far "
                             "per step as the divided one", "corrected"),
                            *(("under Adam the folded W_Q moves the scores sqrt(d_k) times (8 times at d_k = 64) as far "
                               "per step as the divided one", f"t5-step-ratio [adam, query side, d_k={d}]")
                              for d in T5_WIDTHS),
                            *(("under SGD d_k times", f"t5-step-ratio [sgd, query side, d_k={d}]") for d in T5_WIDTHS),
                            *(("the key side is unaffected", f"t5-step-ratio [{opt}, key side, d_k={d}]")
                              for opt in ("adam", "sgd") for d in T5_WIDTHS),
                        ),
                    ),
                ),
            ),
        ),
    )


CLAIMS = claims()
