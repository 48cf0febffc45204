r"""A categorical statistic's law against stated probabilities: Pearson's chi-square test.

Each row's statistic is a category ``0 .. K-1`` (which key won, say); the check counts
them and tests the counts against ``expected(F)``, the K probabilities, with
:func:`scipy.stats.chisquare`.  The size of a departure is Cohen's effect size
:math:`w = \sqrt{\sum_j (p_j - p_{0j})^2 / p_{0j}}`; under the alternative Pearson's
statistic is approximately non-central :math:`\chi^2_{K-1}(n w^2)`, so the design solves
:math:`P(\chi^2_{K-1}(n w^2) > \chi^2_{K-1, 1-\alpha}) = 1 - \beta` for n
(:func:`chi_square_sample_size`).  One category favoured by :math:`\delta` over uniform
:math:`1/K` (the others sharing the loss) has :math:`w = \delta K/\sqrt{K - 1}`.  The
approximation is accurate at the small effects the registry designs for (simulated power
0.43 against 0.426 at w = 0.03 and 0.06, K = 32, ``tests/test_sentences.py``) and overstates
the power of large ones (0.77 simulated against 0.82 at w = 0.23, K = 8).

The estimate is :math:`\widehat{w^2} = (X^2 - (K - 1))/n`, unbiased for :math:`w^2` under
the non-central approximation (:math:`E X^2 = K - 1 + n w^2`), so 0 in expectation when the
stated probabilities hold (it is negative about half the time then); its MCSE is
:math:`\sqrt{2(K - 1 + 2\hat\lambda)}/n` with :math:`\hat\lambda = \max(X^2 - (K - 1), 0)`,
from the non-central chi-square's variance :math:`2(K - 1 + 2\lambda)`.  ``detectable`` is
on the same scale: the :math:`w^2` the run's n detects with power :math:`1 - \beta`.  (The
plain :math:`\sqrt{X^2/n}` would read about :math:`\sqrt{(K - 1)/n}` under the null, not 0.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, ClassVar

import numpy as np

from ..._validation import MAX_ROWS, check_alpha, check_integer, check_positive
from ..measures import Measure
from .base import Check, Outcome, finite

__all__ = ["CategoricalCheck", "chi_square_power", "chi_square_sample_size", "detectable_effect_size"]


#: The non-centrality brentq searches: a design needing more is beyond any run.
_LAMBDA_RANGE = (1e-9, 1e6)


def _check_design(categories, alpha, beta):
    """The arguments every helper below shares, validated (ValueError/TypeError naming them)."""
    k = check_integer(categories, "categories", minimum=2, maximum=1 << 20, what="an integer >= 2")
    return k, check_alpha(alpha, "alpha"), None if beta is None else check_alpha(beta, "beta")


def _check_effect(w, categories):
    w = check_positive(w, "w")
    if w > math.sqrt(categories - 1):
        raise ValueError(f"w must be at most sqrt(categories - 1) = {math.sqrt(categories - 1):.4g}; got {w}")
    return w


def _noncentrality(categories, alpha, beta):
    """The non-centrality at which Pearson's test at level alpha has power 1 - beta."""
    from scipy import optimize, stats as sps

    df = categories - 1
    crit = sps.chi2.isf(alpha, df)
    lo, hi = _LAMBDA_RANGE
    gap = lambda lam: sps.ncx2.sf(crit, df, lam) - (1.0 - beta)  # noqa: E731
    if gap(lo) >= 0:  # the test rejects that often under the null itself (beta >= 1 - alpha)
        return lo
    if gap(hi) <= 0:  # also beta below the float64 resolution of 1 - beta
        raise ValueError(f"beta = {beta:g} needs a non-centrality beyond {hi:g} with {categories} categories at "
                         f"alpha = {alpha:g}: no run could reach that power")
    return optimize.brentq(gap, lo, hi, xtol=1e-10)


def chi_square_power(n, w, categories, *, alpha):
    """P(Pearson's test rejects at level ``alpha``) at effect size ``w`` with ``n`` rows (non-central chi-square)."""
    from scipy import stats as sps

    k, alpha, _ = _check_design(categories, alpha, None)
    n = check_integer(n, "n")
    w = _check_effect(w, k)
    return float(sps.ncx2.sf(sps.chi2.isf(alpha, k - 1), k - 1, n * w * w))


def chi_square_sample_size(w, categories, *, alpha, beta):
    """Smallest n whose chi-square test detects effect size ``w`` among ``categories`` with power 1 - beta."""
    k, alpha, beta = _check_design(categories, alpha, beta)
    w = _check_effect(w, k)
    lam = _noncentrality(k, alpha, beta)
    n = lam / (w * w) if w * w > 0 else math.inf
    if not math.isfinite(n) or n > MAX_ROWS:
        raise ValueError(f"w = {w:g} is too small to detect: it needs {n:.3g} rows (no run could finish)")
    return max(1, math.ceil(n))


def detectable_effect_size(n, categories, *, alpha, beta):
    """The effect size w that ``n`` rows detect with power 1 - beta at level ``alpha``."""
    k, alpha, beta = _check_design(categories, alpha, beta)
    n = check_integer(n, "n")
    return math.sqrt(_noncentrality(k, alpha, beta) / n)


@dataclass(frozen=True, kw_only=True)
class CategoricalCheck(Check):
    """The rows of ``measure`` (integers ``0 .. K-1``) are drawn with probabilities ``expected(F)``
    (a length-K sequence summing to 1); sized to detect Cohen's effect size ``target`` with
    probability 1 - beta (module docstring)."""

    measure: Measure = None
    expected: Callable = None
    categories: int = 0
    target: float = 0.03

    kind: ClassVar[str] = "categorical"
    statistical: ClassVar[bool] = True
    keeps_rows: ClassVar[bool] = True
    calibration: ClassVar[str] = "monte-carlo"  # chi-square at finite n, under the stated probabilities

    def validate(self):
        if not isinstance(self.measure, Measure):
            raise ValueError(f"check {self.label!r}: a {self.kind} check needs a measure")
        if self.measure.factor != 1.0:
            raise ValueError(f"check {self.label!r}: a category takes no factor")
        if not callable(self.expected):
            raise ValueError(f"check {self.label!r}: a {self.kind} check needs the categories' probabilities "
                             "(a function of the formulas)")
        k = self.categories
        if isinstance(k, bool) or not isinstance(k, int) or k < 2:
            raise ValueError(f"check {self.label!r}: categories must be an integer >= 2; got {k!r}")
        t = self.target
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 1e-6 <= t <= math.sqrt(k - 1):
            raise ValueError(f"check {self.label!r}: target must be an effect size w in [1e-6, sqrt(K - 1)]; got {t!r}")

    def untestable_reason(self):
        if getattr(self.measure.sim, "ties_possible", False):
            return (f"{self.measure.statistic} breaks ties to the lowest category, and {self.measure.sim.key}'s rows tie "
                    "with positive probability: its law is not the stated one whatever the text says")
        return None

    def power_design(self, ctx, alpha):
        n = chi_square_sample_size(self.target, self.categories, alpha=alpha, beta=ctx.beta)
        return n, math.nan, f"chi-square power (effect size w = {self.target:g}, w^2 = {self.target ** 2:.3g})"

    def evaluate(self, ctx, design_sd):
        from scipy import stats as sps

        k = self.categories
        p0 = np.asarray(self.expected(ctx.formulas), dtype=np.float64)
        x = ctx.result(self.measure).rows(self.measure.statistic)
        n = len(x)
        numbers = dict(expected=0.0, n=n, detectable=detectable_effect_size(n, k, alpha=ctx.per_test, beta=ctx.beta) ** 2)
        notes = [f"estimate is (X^2 - {k - 1})/n, unbiased for Cohen's w^2 over {k} categories (0 when the stated "
                 f"probabilities hold); detectable is a w^2"]
        if p0.shape != (k,) or not np.all(np.isfinite(p0)) or np.any(p0 <= 0) or abs(p0.sum() - 1.0) > 1e-9:
            return Outcome(numbers, "error", notes + [f"the expected probabilities are not {k} positive numbers summing to 1"])
        codes = np.rint(x)
        if not np.all(np.isfinite(x)) or np.any(codes != x) or np.any((codes < 0) | (codes >= k)):
            return Outcome(numbers, "error", notes + [f"a row is not a category 0..{k - 1}"])
        counts = np.bincount(codes.astype(np.int64), minlength=k)
        r = sps.chisquare(counts, n * p0)
        w2 = (r.statistic - (k - 1)) / n
        mcse = math.sqrt(2 * (k - 1 + 2 * max(r.statistic - (k - 1), 0.0))) / n
        shares = counts / n
        j = int(np.argmax(np.abs(shares - p0)))
        notes.append(f"largest departure: category {j}, share {shares[j]:.5f} against {p0[j]:.5f}")
        numbers.update(estimate=w2, mcse=mcse, p_value=float(r.pvalue))
        if not (finite(r.pvalue) and finite(w2)):
            return Outcome(numbers, "error", notes + ["the test returned a NaN p-value or statistic"])
        return Outcome(numbers, "tested", notes)
