"""Planted wrong closed forms: the proof that the claims can fail.

Each mutant is a :class:`~stats.claims.Formulas` with one formula replaced by a plausible
mistake.  ``python -m stats verify --mutants`` runs every claim against every mutant on
the same simulations; a mutant that no check rejects means the suite is too weak to
see that mistake.
"""

from __future__ import annotations

from dataclasses import dataclass

from .claims import Formulas
from .closed_forms import score_scale, scaled_score_moments
from .distributions import diff_chi2, score_distribution
from .laws import entry_law, law_moment

__all__ = ["MUTANTS", "Mutant"]


@dataclass(frozen=True)
class Mutant:
    name: str
    description: str
    formulas: Formulas


def _moments(transform):
    """A moments formula ``transform(d_k, rho, sigma_q, sigma_k, law, scale, mean, var) -> (mean, var)``."""

    def mutated(d_k, rho=0.0, *, sigma_q=1.0, sigma_k=1.0, entries="gaussian", scale="sqrt"):
        mean, var = scaled_score_moments(d_k, rho, sigma_q=sigma_q, sigma_k=sigma_k, entries=entries, scale=scale)
        return transform(d_k, rho, sigma_q, sigma_k, entry_law(entries), scale, mean, var)

    return Formulas(moments=mutated)


def _with_mu4(mu4_of):
    """Variance formula 1 + rho^2 (mu_4 - 2) with the wrong fourth moment."""

    def t(d, rho, sq, sk, law, scale, mean, var):
        c = score_scale(d, scale)
        return mean, c * c * d * (sq * sk) ** 2 * (1 + rho * rho * (mu4_of(law) - 2))

    return t


def _law(transform):
    def mutated(d_k, rho=0.0, *, sigma_q=1.0, sigma_k=1.0, scale="sqrt"):
        return transform(d_k, rho, score_distribution(d_k, rho, sigma_q=sigma_q, sigma_k=sigma_k, scale=scale))

    return Formulas(distribution=mutated)


def _normal_approximation(d, rho, law):
    from scipy import stats

    return stats.norm(law.mean(), law.std())


MUTANTS = (
    Mutant(
        "variance-dk-squared",
        "raw variance d_k^2 sigma_q^2 sigma_k^2 instead of d_k sigma_q^2 sigma_k^2",
        _moments(lambda d, r, sq, sk, law, s, m, v: (m, v * d)),
    ),
    Mutant(
        "scaled-mean-rho-dk",
        "scaled mean rho d_k (the raw mean) instead of rho sqrt(d_k)",
        _moments(lambda d, r, sq, sk, law, s, m, v: (m * d ** 0.5 if s == "sqrt" else m, v)),
    ),
    Mutant(
        "gaussian-mu4-for-rademacher",
        "the Gaussian fourth moment (3) used for Rademacher entries in the correlated variance",
        _moments(_with_mu4(lambda law: 3.0 if law.name == "rademacher" else law_moment(law, 4))),
    ),
    Mutant(
        "gaussian-mu4-for-uniform",
        "the Gaussian fourth moment (3) used for uniform entries",
        _moments(_with_mu4(lambda law: 3.0 if law.name == "uniform" else law_moment(law, 4))),
    ),
    Mutant(
        "gaussian-mu4-for-student-t",
        "the Gaussian fourth moment (3) used for heavy-tailed Student-t entries",
        _moments(_with_mu4(lambda law: 3.0 if law.name == "student_t" else law_moment(law, 4))),
    ),
    Mutant(
        "variance-off-2pct",
        "every variance 2% too large",
        _moments(lambda d, r, sq, sk, law, s, m, v: (m, v * 1.02)),
    ),
    Mutant(
        "sigma-not-squared",
        "variance d_k sigma_q sigma_k (sigmas not squared)",
        _moments(lambda d, r, sq, sk, law, s, m, v: (m, v / (sq * sk))),
    ),
    Mutant(
        "correlated-variance-stub",
        "the section's placeholder: the rho = 0 variance used for every rho",
        _moments(lambda d, r, sq, sk, law, s, m, v: (m, v / (1 + r * r * (law_moment(law, 4) - 2)))),
    ),
    Mutant(
        "correlated-variance-mu4-minus-1",
        "1 + rho^2 (mu_4 - 1) instead of 1 + rho^2 (mu_4 - 2)",
        _moments(lambda d, r, sq, sk, law, s, m, v: (m, v * (1 + r * r * (law_moment(law, 4) - 1)) / (1 + r * r * (law_moment(law, 4) - 2)))),
    ),
    Mutant(
        "mup-as-sqrt",
        "muP's 1/d_k scaling computed as 1/sqrt(d_k)",
        _moments(
            lambda d, r, sq, sk, law, s, m, v: (m * d ** 0.5, v * d) if s == "mup" else (m, v)
        ),
    ),
    Mutant(
        "exact-law-scales-swapped",
        "the exact law with its two chi-square scales (1 + rho)/2 and (1 - rho)/2 swapped",
        _law(lambda d, r, law: diff_chi2(df=law.kwds["df"], s1=law.kwds["s2"], s2=law.kwds["s1"])),
    ),
    Mutant(
        "exact-law-df-plus-1",
        "the exact law with d_k + 1 degrees of freedom",
        _law(lambda d, r, law: diff_chi2(df=law.kwds["df"] + 1, s1=law.kwds["s1"], s2=law.kwds["s2"])),
    ),
    Mutant(
        "exact-law-normal",
        "the exact law replaced by the normal with the same mean and variance",
        _law(_normal_approximation),
    ),
)
