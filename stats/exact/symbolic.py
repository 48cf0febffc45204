r"""Computer algebra for the section's derivations (SymPy): symbolic matrices, the row-wise
softmax, gradients by differentiation, expectations of polynomials in independent
variables, and a decision procedure for identities.

Matrices are SymPy ``Matrix`` objects of small fixed shapes with one symbol an entry.  The
softmax is written in the exponentials :math:`e_{ij} = \exp(s_{ij}) > 0`, so every
expression is rational in positive symbols and an identity is decided exactly
(:func:`decide`): a rational counterexample refutes it, and a difference that cancels to 0
proves it.  An expectation is taken term by term of the expanded polynomial, replacing
:math:`x^j` by the variable's j-th moment (:func:`expectation`): exact for independent
variables, whatever their law.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction
from functools import lru_cache

import sympy as sp

__all__ = [
    "Decision", "decide", "expectation", "gradient", "matrix", "softmax_from_exponentials", "positive_matrix",
]


def matrix(name, rows, cols, **assumptions):
    """A ``rows x cols`` SymPy matrix of symbols ``name_{i}{j}`` (indices from 1)."""
    if not (isinstance(rows, int) and isinstance(cols, int) and rows >= 1 and cols >= 1):
        raise ValueError(f"rows and cols must be positive integers; got {rows!r}, {cols!r}")
    return sp.Matrix(rows, cols, lambda i, j: sp.Symbol(f"{name}_{i + 1}{j + 1}", **assumptions))


def positive_matrix(name, rows, cols):
    """:func:`matrix` of positive symbols (the exponentials of scores)."""
    return matrix(name, rows, cols, positive=True)


def softmax_from_exponentials(E):
    r"""Row-wise softmax written in the exponentials :math:`E_{ij} = e^{s_{ij}}`: :math:`a_{ij} = E_{ij} / \sum_l E_{il}`."""
    return sp.Matrix(E.rows, E.cols, lambda i, j: E[i, j] / sum(E[i, l] for l in range(E.cols)))


def _expression(x, name):
    """``x`` as a SymPy expression (a SymPy object or a Python number); a TypeError/ValueError naming it else."""
    if isinstance(x, bool) or not isinstance(x, (sp.Basic, sp.MatrixBase, int, float, Fraction)):
        raise TypeError(f"{name} must be a SymPy expression or matrix; got {type(x).__name__}")
    if isinstance(x, float) and not math.isfinite(x):
        raise ValueError(f"{name} must be finite; got {x!r}")
    if isinstance(x, sp.Basic) and x.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        raise ValueError(f"{name} must be finite; got {x}")
    return x


def gradient(L, X):
    r""":math:`\partial L/\partial X`, entry by entry: a matrix of ``X``'s shape (``X`` a matrix of symbols)."""
    _expression(L, "L")
    if not isinstance(X, sp.MatrixBase) or not all(isinstance(x, sp.Symbol) for x in X):
        raise TypeError(f"X must be a SymPy matrix of symbols; got {type(X).__name__}")
    return sp.Matrix(X.rows, X.cols, lambda i, j: sp.diff(L, X[i, j]))


def expectation(expr, moments):
    r""":math:`E[\text{expr}]` for a polynomial in independent random variables.

    ``moments`` maps each random variable (a symbol) to a function ``k -> E[x^k]``; every
    other symbol is a constant.  Exact for any laws with those moments, by independence.
    """
    _expression(expr, "expr")
    if not isinstance(moments, dict) or not moments or not all(
            isinstance(x, sp.Symbol) and callable(m) for x, m in moments.items()):
        raise TypeError("moments must be a non-empty dict from each random variable (a SymPy symbol) to k -> E[x^k]")
    try:
        poly = sp.Poly(sp.expand(expr), *moments)
    except sp.PolynomialError:
        raise ValueError("expr must be a polynomial in the random variables of moments") from None
    total = sp.Integer(0)
    for powers, coeff in poly.terms():
        term = coeff
        for x, k in zip(moments, powers):
            if k:
                term *= moments[x](k)
        total += term
    return sp.expand(total)


class Decision:
    """The outcome of :func:`decide`: ``proved`` (True), ``refuted`` (False, with the entry and
    point of a counterexample) or undecided (None, with the reason)."""

    __slots__ = ("holds", "reason")

    def __init__(self, holds, reason=""):
        self.holds, self.reason = holds, reason

    def __repr__(self):
        return f"Decision({self.holds!r}, {self.reason!r})"


def _random_point(symbols, rng):
    """Exact rationals for ``symbols``: positive where a symbol is positive, in (-3, 3) else."""
    point = {}
    for s in symbols:
        v = Fraction(rng.randint(1, 997), rng.randint(1, 97))
        if not s.is_positive:
            v = v * rng.choice((-1, 1)) if not s.is_nonnegative else v
        point[s] = sp.Rational(v.numerator, v.denominator)
    return point


@lru_cache(maxsize=4096)
def _cancels_to_zero(expr):
    """Whether ``expr`` reduces to 0: expanded (a polynomial), over a common denominator (a
    rational function), or by ``simplify`` -- cheapest first."""
    return sp.expand(expr) == 0 or sp.cancel(sp.together(expr)) == 0 or sp.simplify(expr) == 0


def decide(lhs, rhs, *, trials=3, seed=0):
    """Whether ``lhs == rhs`` identically (matrices entry by entry, or scalars).

    First a counterexample is sought at ``trials`` exact rational points (a non-zero
    difference there refutes the identity: that is a proof too); then each entry's
    difference must cancel to 0 (SymPy's ``cancel``, then ``simplify``).  A difference that
    is zero at every point tried but that SymPy cannot reduce to 0 is undecided, never a pass.
    """
    L, R = (sp.Matrix(_expression(x, name)) if isinstance(x, sp.MatrixBase) else sp.Matrix([[_expression(x, name)]])
            for x, name in ((lhs, "lhs"), (rhs, "rhs")))
    if L.shape != R.shape:
        return Decision(False, f"the two sides have shapes {L.shape} and {R.shape}")
    diffs = [sp.sympify(a - b) for a, b in zip(L, R)]
    symbols = sorted(set().union(*(d.free_symbols for d in diffs)), key=str)
    rng = random.Random(seed)
    for _ in range(trials):
        point = _random_point(symbols, rng)
        for idx, d in enumerate(diffs):
            value = d.xreplace(point)
            if not value.is_Rational:
                value = sp.simplify(value)
            if value.is_number and value != 0:
                entry = divmod(idx, L.cols)
                return Decision(False, f"entry {entry[0] + 1},{entry[1] + 1} differs by {value} at a rational point")
    for idx, d in enumerate(diffs):
        if not _cancels_to_zero(d):
            entry = divmod(idx, L.cols)
            return Decision(None, f"SymPy could not reduce entry {entry[0] + 1},{entry[1] + 1}'s difference to 0")
    return Decision(True)
