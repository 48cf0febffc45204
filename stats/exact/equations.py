r"""The section's displayed equations as it writes them, as functions of SymPy objects.

Each function is the right-hand side of one displayed equation (or one step of a
derivation), in the section's notation; :mod:`stats.exact.derivations` derives the same
quantity from first principles and the proof claims compare the two
(:class:`~stats.claims.checks.ProofCheck`).  They are gathered in :class:`Equations`, a
field of :class:`~stats.formulas.Formulas`, so a mutant can replace one step with a
plausible mistake (a sign, a missing transpose, a ``D`` without its row sum).

Matrices are SymPy ``Matrix`` objects; ``*`` is the matrix product and
:func:`hadamard` the entrywise one.  SymPy is imported when an equation is evaluated,
never by ``import stats``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

__all__ = ["EQUATIONS", "Equations"]


def _sp():
    import sympy

    return sympy


def hadamard(X, Y):
    """Entrywise product of two matrices of one shape."""
    return X.multiply_elementwise(Y)


def _ones(n):
    return _sp().ones(n, 1)


# ----------------------------------------------------------------- the formula


def scores(Q, K, c):
    r"""The formula: :math:`S = Q K^\top / \sqrt{d_k}`, with :math:`c = 1/\sqrt{d_k}`."""
    return c * Q * K.T


def output(A, V):
    r""":math:`O = A V`."""
    return A * V


# ------------------------------------------------------ why dot products grow with the width


def product_mean(mean_q, mean_k):
    r""":math:`E[q_m k_m] = E[q_m]\,E[k_m]` (= 0 for zero-mean entries)."""
    return mean_q * mean_k


def product_variance(var_q, var_k):
    r""":math:`\operatorname{Var}(q_m k_m) = E[q_m^2]\,E[k_m^2]` for zero-mean entries (= 1 at unit variance)."""
    return var_q * var_k


def score_variance(d_k, var_q, var_k):
    r""":math:`\operatorname{Var}(q^\top k) = \sum_m \operatorname{Var}(q_m k_m) = d_k\,\sigma_q^2\sigma_k^2`."""
    return d_k * var_q * var_k


def scaled_score_variance(d_k, var_q, var_k):
    r""":math:`\operatorname{Var}(q^\top k/\sqrt{d_k}) = d_k/d_k` (times :math:`\sigma_q^2\sigma_k^2`)."""
    return score_variance(d_k, var_q, var_k) / d_k


# ---------------------------------------------------------- what large scores do to the softmax


def winner_bound(T, gap):
    r""":math:`a_{\max} \ge e^{g}/(e^{g} + T - 1)` when the largest score leads every other by at least ``gap``."""
    e = _sp().exp(gap)
    return e / (e + T - 1)


# ------------------------------------------------------------------ the Jacobian of softmax


def softmax_jacobian(a):
    r""":math:`\partial a/\partial s = \operatorname{diag}(a) - a a^\top` (``a`` a column)."""
    return _sp().diag(*a) - a * a.T


def jacobian_quadratic_form(a, u):
    r""":math:`u^\top J u = \sum_i a_i u_i^2 - (\sum_i a_i u_i)^2`, the variance of :math:`u_i` under :math:`i \sim a`."""
    return sum(a[i] * u[i] ** 2 for i in range(len(a))) - sum(a[i] * u[i] for i in range(len(a))) ** 2


def jacobian_trace(a):
    r""":math:`\operatorname{tr} J = \sum_i a_i (1 - a_i) = 1 - \lVert a\rVert^2` (on the simplex)."""
    return 1 - sum(x**2 for x in a)


def trace_maximum(n):
    r"""The trace's largest value :math:`1 - 1/n`, at uniform weights."""
    return 1 - _sp().Rational(1, n)


def softmax_vjp(a, g):
    r"""The vector-Jacobian product :math:`ds = a \odot (g - (a \cdot g)\mathbf 1)` (columns)."""
    return hadamard(a, g - (a.T * g)[0, 0] * _ones(len(a)))


def output_score_gradient(a, V, j):
    r"""§4.1's :math:`\partial o/\partial s_j = a_j (v_j - o)` (``V`` holds the values as rows; a row vector)."""
    o = a.T * V
    return a[j] * (V[j, :] - o)


# -------------------------------------------------------- when the independence assumption fails


def correlated_mean(d_k, rho):
    r""":math:`E[q^\top k] = \rho\,E\lVert q\rVert^2 = \rho\,d_k` for :math:`k = \rho q + \sqrt{1-\rho^2} z`."""
    return rho * d_k


def correlated_scaled_mean(d_k, rho):
    r"""The scaled mean :math:`\rho\sqrt{d_k}`."""
    return correlated_mean(d_k, rho) / _sp().sqrt(d_k)


def correlated_scaled_variance(d_k, rho, mu4):
    r"""Exercise 4.3d: :math:`\operatorname{Var}(q^\top k/\sqrt{d_k}) = 1 + \rho^2(\mu_4 - 2)` for unit-variance
    entries with fourth moment :math:`\mu_4` (Gaussian: :math:`1 + \rho^2`)."""
    return 1 + rho**2 * (mu4 - 2)


def mup_variance(d_k):
    r"""muP's :math:`\operatorname{Var}(q^\top k / d_k) = 1/d_k` (independent unit-variance entries)."""
    return 1 / d_k


def folded_scores(X, W_Q, W_K, c):
    r"""T5's folding: the scores of queries :math:`X (c W_Q)` and keys :math:`X W_K`, undivided."""
    return (X * (c * W_Q)) * (X * W_K).T


# ------------------------------------------------------------------------ numerical stability


def shifted_softmax(E, t):
    r"""The stable softmax: every score of a row shifted by ``t`` (:math:`-\max_l s_l`), here through
    the exponentials :math:`e^{s_j - m} = e^{s_j} e^{-m}` (``t`` the factor :math:`e^{-m} > 0`)."""
    shifted = E * t
    return shifted / sum(shifted)


# ------------------------------------------------------------------------------ the backward pass


def backward_dV(A, dO):
    r"""Step 1: :math:`dV = A^\top dO`."""
    return A.T * dO


def backward_dA(dO, V):
    r"""Step 1: :math:`dA = dO\, V^\top`."""
    return dO * V.T


def row_term(A, dA):
    r"""Step 2: :math:`D_i = \sum_l A_{il}\, dA_{il}` (a column)."""
    return hadamard(A, dA) * _ones(A.cols)


def softmax_backward(A, dA, D):
    r"""Step 2: :math:`dS = A \odot (dA - D \mathbf 1^\top)`, i.e. :math:`dS_{ij} = A_{ij}(dA_{ij} - D_i)`."""
    return hadamard(A, dA - D * _ones(A.cols).T)


def row_term_from_output(dO, O):
    r"""Step 2: :math:`D_i = dO_i \cdot O_i`, from the output alone (a column)."""
    return hadamard(dO, O) * _ones(O.cols)


def backward_dQ(dS, K, c):
    r"""Step 3: :math:`dQ = c\, dS\, K`."""
    return c * dS * K


def backward_dK(dS, Q, c):
    r"""Step 3: :math:`dK = c\, dS^\top Q`."""
    return c * dS.T * Q


@dataclass(frozen=True)
class Equations:
    """The section's displayed equations, one field each (module docstring)."""

    scores: Callable = scores
    output: Callable = output
    product_mean: Callable = product_mean
    product_variance: Callable = product_variance
    score_variance: Callable = score_variance
    scaled_score_variance: Callable = scaled_score_variance
    winner_bound: Callable = winner_bound
    softmax_jacobian: Callable = softmax_jacobian
    jacobian_quadratic_form: Callable = jacobian_quadratic_form
    jacobian_trace: Callable = jacobian_trace
    trace_maximum: Callable = trace_maximum
    softmax_vjp: Callable = softmax_vjp
    output_score_gradient: Callable = output_score_gradient
    correlated_mean: Callable = correlated_mean
    correlated_scaled_mean: Callable = correlated_scaled_mean
    correlated_scaled_variance: Callable = correlated_scaled_variance
    mup_variance: Callable = mup_variance
    folded_scores: Callable = folded_scores
    shifted_softmax: Callable = shifted_softmax
    backward_dV: Callable = backward_dV
    backward_dA: Callable = backward_dA
    row_term: Callable = row_term
    softmax_backward: Callable = softmax_backward
    row_term_from_output: Callable = row_term_from_output
    backward_dQ: Callable = backward_dQ
    backward_dK: Callable = backward_dK


#: The equations as the section displays them.
EQUATIONS = Equations()
