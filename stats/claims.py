r"""The claims registry: each quantitative statement of section 4.3 as an executable claim.

A :class:`Claim` carries an id, the section heading it comes from, a paraphrase, the
closed form it asserts, and its :class:`Check` s -- one per tested value (a width, an
entry law, a correlation).  A check names the simulation it needs (:class:`SimSpec`),
the quantity it tests, and the discrepancy it must be able to detect; the runner
(:mod:`stats.verify`) turns that target into a sample size with the design rule of
:mod:`stats.inference`.  Expected values are never stored: a check computes them from a
:class:`Formulas` object, so planted wrong formulas (:mod:`stats.mutants`) can be run
against the same simulations.

A claim the evidence refutes is a finding about the text, recorded as an
:class:`Erratum`; the runner then demands that it stays refuted, as a strict xfail does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .closed_forms import scaled_score_moments
from .distributions import score_distribution
from .laws import EntryLaw, entry_law

__all__ = ["Check", "Claim", "Erratum", "Formulas", "QUANTITIES", "REGISTRY", "SimSpec", "moment_claims"]

QUANTITIES = ("mean", "variance", "variance_ratio", "distribution")


@dataclass(frozen=True)
class Formulas:
    """The closed forms under test; mutants swap one for a planted wrong version."""

    moments: Callable = scaled_score_moments
    distribution: Callable = score_distribution


@dataclass(frozen=True)
class SimSpec:
    """A simulation of raw scores ``q.k``: one stream, shared by every check that names it."""

    d_k: int
    rho: float = 0.0
    sigma_q: float = 1.0
    sigma_k: float = 1.0
    entries: EntryLaw = field(default_factory=lambda: entry_law("gaussian"))
    keep_samples: bool = False  # distribution tests need the draws, not just their moments

    @property
    def cost(self):
        """Random numbers per row (drives the progress bar)."""
        return 2 * self.d_k


@dataclass(frozen=True)
class Check:
    """One tested value of a claim.

    ``target`` is the discrepancy the check must detect with false-pass <= beta: relative
    to the expected value for ``mean`` (``relative=True``) or in score standard deviations
    (``relative=False``, for an expected mean of 0); relative for variances and ratios;
    the KS distance for ``distribution``.
    """

    label: str
    quantity: str
    sim: SimSpec
    scale: str = "none"
    target: float = 0.02
    relative: bool = True
    sim_b: SimSpec | None = None  # the numerator simulation of a variance ratio
    stated: float | None = None  # a number the text quotes, tested as it stands instead of a closed form

    def expected(self, formulas: Formulas):
        """The value under test: the text's ``stated`` number if any, else the closed form's
        value (a frozen distribution for ``distribution``)."""
        if self.stated is not None:
            return self.stated
        s = self.sim
        if self.quantity == "distribution":
            return formulas.distribution(s.d_k, s.rho, sigma_q=s.sigma_q, sigma_k=s.sigma_k, scale=self.scale)
        mean, var = formulas.moments(
            s.d_k, s.rho, sigma_q=s.sigma_q, sigma_k=s.sigma_k, entries=s.entries, scale=self.scale
        )
        if self.quantity == "mean":
            return mean
        if self.quantity == "variance":
            return var
        b = self.sim_b
        _, var_b = formulas.moments(
            b.d_k, b.rho, sigma_q=b.sigma_q, sigma_k=b.sigma_k, entries=b.entries, scale=self.scale
        )
        return var_b / var


@dataclass(frozen=True)
class Erratum:
    """A claim of the text that the evidence refutes: what it says and what holds instead."""

    stated: str
    corrected: str


@dataclass(frozen=True)
class Claim:
    id: str
    section: str
    statement: str
    closed_form: str
    checks: tuple[Check, ...]
    erratum: Erratum | None = None


# ----------------------------------------------------------------------------- registry

WIDTH = "Why dot products grow with the width"
CORRELATED = "The assumption behind the argument, and when it fails"
SIGMA_Q, SIGMA_K = 1.5, 0.8  # unequal, and sigma_q*sigma_k != sigma_q^2*sigma_k^2
LAWS = tuple(entry_law(name) for name in ("gaussian", "rademacher", "uniform", "student_t"))
T18 = entry_law("student_t", df=18)  # heavy-tailed, with the 8 moments a correlated variance test needs
WIDTHS = (1, 8, 64, 512, 4096)
RHOS = (0.5, 0.9)
CORR_WIDTHS = (4, 64)


def _width_target(d_k):
    # Relative variance discrepancies the width sweep must detect: finer where draws are cheap.
    return 0.02 if d_k <= 64 else 0.05 if d_k <= 512 else 0.10


def moment_claims():
    """The section's moment claims (score variance, scaling, correlation, muP, exact law)."""
    sig = dict(sigma_q=SIGMA_Q, sigma_k=SIGMA_K)
    one = {law: SimSpec(1, 0.0, entries=law, **sig) for law in LAWS}
    sweep = {(d, law): SimSpec(d, 0.0, entries=law, **sig) for d in WIDTHS for law in LAWS}
    corr = {(d, r, law): SimSpec(d, r, entries=law, **sig) for d in CORR_WIDTHS for r in RHOS for law in LAWS + (T18,)}

    def correlated(quantity, scale, target, laws=LAWS):
        return tuple(
            Check(lbl(law, d, r), quantity, corr[d, r, law], scale=scale, target=target)
            for d in CORR_WIDTHS
            for r in RHOS
            for law in laws
        )

    def lbl(law, d=None, rho=None):
        parts = ([f"d_k={d}"] if d is not None else []) + ([f"rho={rho:g}"] if rho is not None else [])
        return ", ".join(parts + [law.label])

    claims = [
        Claim(
            "product-mean",
            WIDTH,
            "One coordinate's product q_m k_m of independent zero-mean entries has mean zero.",
            "E[q_m k_m] = 0",
            tuple(Check(lbl(law), "mean", one[law], target=0.01, relative=False) for law in LAWS),
        ),
        Claim(
            "product-variance",
            WIDTH,
            "That product has variance sigma_q^2 sigma_k^2 (1 for unit-variance entries), whatever the entry law.",
            "Var(q_m k_m) = sigma_q^2 sigma_k^2",
            tuple(Check(lbl(law), "variance", one[law], target=0.01) for law in LAWS),
        ),
        Claim(
            "raw-variance-width",
            WIDTH,
            "The raw score q.k has variance d_k sigma_q^2 sigma_k^2: it grows linearly with the key width.",
            "Var(q.k) = d_k sigma_q^2 sigma_k^2",
            tuple(
                Check(lbl(law, d), "variance", sweep[d, law], target=_width_target(d)) for d in WIDTHS for law in LAWS
            ),
        ),
        Claim(
            "scaled-variance-width",
            WIDTH,
            "Dividing by sqrt(d_k) leaves variance sigma_q^2 sigma_k^2 at every width (unit variance for unit entries).",
            "Var(q.k / sqrt(d_k)) = sigma_q^2 sigma_k^2",
            tuple(
                Check(lbl(law, d), "variance", sweep[d, law], scale="sqrt", target=_width_target(d))
                for d in WIDTHS
                for law in LAWS
            ),
        ),
        Claim(
            "sqrt2-growth",
            WIDTH,
            "Doubling the key width multiplies the raw scores' standard deviation by sqrt(2).",
            "Var(q.k at 2 d_k) / Var(q.k at d_k) = 2",
            (
                Check("d_k=16 -> 32, gaussian", "variance_ratio", SimSpec(16), sim_b=SimSpec(32), target=0.02),
                Check(
                    "d_k=512 -> 1024, rademacher",
                    "variance_ratio",
                    SimSpec(512, entries=entry_law("rademacher")),
                    sim_b=SimSpec(1024, entries=entry_law("rademacher")),
                    target=0.05,
                ),
            ),
        ),
        Claim(
            "correlated-mean-raw",
            CORRELATED,
            "With k = rho q + sqrt(1 - rho^2) z the raw score has mean rho d_k (times sigma_q sigma_k).",
            "E[q.k] = rho d_k sigma_q sigma_k",
            correlated("mean", "none", 0.01),
        ),
        Claim(
            "correlated-mean-scaled",
            CORRELATED,
            "Under that correlation the scaled score's mean is rho sqrt(d_k): it still grows with the width.",
            "E[q.k / sqrt(d_k)] = rho sqrt(d_k) sigma_q sigma_k",
            correlated("mean", "sqrt", 0.01),
        ),
        Claim(
            "correlated-variance",
            CORRELATED,
            "Exercise 4.3d: the scaled score's variance is sigma_q^2 sigma_k^2 (1 + rho^2 (mu_4 - 2)), so the entries' "
            "fourth moment mu_4 enters once rho != 0 (1 + rho^2 for Gaussian, 1 - rho^2 for Rademacher entries).",
            "Var(q.k / sqrt(d_k)) = sigma_q^2 sigma_k^2 (1 + rho^2 (mu_4 - 2))",
            correlated("variance", "sqrt", 0.02, LAWS + (T18,)),
        ),
        Claim(
            "mup-mean",
            CORRELATED,
            "muP's 1/d_k scaling keeps the correlated score's mean at rho sigma_q sigma_k at every width.",
            "E[q.k / d_k] = rho sigma_q sigma_k",
            correlated("mean", "mup", 0.01),
        ),
        Claim(
            "mup-variance",
            CORRELATED,
            "Under muP's 1/d_k scaling the correlated score's variance falls like 1/d_k, to 0 as the width grows.",
            "Var(q.k / d_k) = sigma_q^2 sigma_k^2 (1 + rho^2 (mu_4 - 2)) / d_k",
            correlated("variance", "mup", 0.02, LAWS + (T18,)),
        ),
        Claim(
            "exact-law",
            WIDTH,
            "For Gaussian entries the scaled score is exactly a difference of two scaled chi-squares with d_k "
            "degrees of freedom, scales sqrt(d_k)^-1 (1 +- rho)/2 (Kolmogorov-Smirnov against its CDF).",
            "q.k / sqrt(d_k) ~ s1 chi2(d_k) - s2 chi2(d_k), s1,2 = (1 +- rho) / (2 sqrt(d_k))",
            tuple(
                Check(f"d_k={d}, rho={r:g}, gaussian", "distribution", SimSpec(d, r, keep_samples=True), scale="sqrt", target=0.03)
                for d in (1, 8, 512)
                for r in (0.0, 0.6)
            ),
        ),
    ]
    return tuple(claims)


REGISTRY = moment_claims()
