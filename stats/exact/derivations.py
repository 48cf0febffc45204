r"""The section's derivations from first principles, beside its displayed equations.

Every function here returns ``(derived, displayed)``: the quantity computed from the
definitions alone -- gradients by differentiating the forward pass, expectations by
expanding the polynomial and using independence -- and the section's displayed equation
for it, taken from an :class:`~stats.exact.equations.Equations` (so a mutant's wrong step
is what gets compared).  :func:`stats.exact.symbolic.decide` then proves or refutes each
pair; the proof claims (:mod:`stats.claims.statements.derivations`) name the step.

Why small fixed shapes prove the identities for every shape.  Each matrix identity is a
statement about one entry, a finite sum over index ranges whose summand does not depend
on the ranges' lengths; it holds for all shapes once it holds for a shape in which every
pattern of equal and distinct indices the summand can see occurs.  The softmax and
backward identities involve at most three indices of one range at once (:math:`i, j, l`
over the keys), so three keys suffice, and every dimension of :data:`SHAPES`' first
shape is distinct from the others, so a missing or extra transpose changes a shape and
cannot pass.  The second shape repeats the proof with other lengths (two keys, one
coordinate).  Each expectation identity is a polynomial in :math:`d_k` of degree at most
two (a sum over one index of a square), so it holds for all widths once it holds at
:math:`d_k = 1, 2, 3` and the displayed side, times the scaling's square, is such a
polynomial too (:func:`in_every_width` checks both).
"""

from __future__ import annotations

__all__ = ["JACOBIAN_KEYS", "SHAPES", "WIDTHS", "in_every_width"]

#: ``(T_q, T_k, d_k, d_v)`` at which the matrix identities are proved (module docstring).
SHAPES = ((2, 3, 4, 5), (3, 2, 1, 2))
#: Keys of the softmax rows whose Jacobian identities are proved.
JACOBIAN_KEYS = (3, 4)
#: Widths at which the expectation identities are proved (degree-2 polynomials in d_k).
WIDTHS = (1, 2, 3)


def _sp():
    import sympy

    return sympy


def _sym():
    from . import symbolic

    return symbolic


# -------------------------------------------------------------------------- symbols


def _head(shape):
    """Symbolic Q, K, V, the upstream dO, a weight matrix A and its upstream dA, and c > 0."""
    sy, sp = _sym(), _sp()
    T_q, T_k, d_k, d_v = shape
    return dict(Q=sy.matrix("q", T_q, d_k), K=sy.matrix("k", T_k, d_k), V=sy.matrix("v", T_k, d_v),
                dO=sy.matrix("g", T_q, d_v), A=sy.matrix("a", T_q, T_k), dA=sy.matrix("h", T_q, T_k),
                dS=sy.matrix("r", T_q, T_k), E=sy.positive_matrix("e", T_q, T_k),
                c=sp.Symbol("c", positive=True))


def _pairing(X, Y):
    r""":math:`\sum_{ij} X_{ij} Y_{ij}`: a scalar loss whose gradient with respect to ``Y`` is ``X``."""
    return sum(x * y for x, y in zip(X, Y))


def _score_gradient(L, E):
    r""":math:`\partial L/\partial s_{ij}` for ``L`` written in the exponentials :math:`e_{ij} = e^{s_{ij}}`:
    the chain rule with :math:`\partial e_{ij}/\partial s_{ij} = e_{ij}` (rational in the :math:`e_{ij}`)."""
    sp = _sp()
    return sp.Matrix(E.rows, E.cols, lambda i, j: E[i, j] * sp.diff(L, E[i, j]))


# ------------------------------------------------------------------------------ the formula


def scores(eq, shape):
    """:math:`S_{ij} = c \\sum_m Q_{im} K_{jm}`, entry by entry, against the displayed matrix form."""
    h, sp = _head(shape), _sp()
    Q, K, c = h["Q"], h["K"], h["c"]
    derived = sp.Matrix(Q.rows, K.rows, lambda i, j: c * sum(Q[i, m] * K[j, m] for m in range(Q.cols)))
    return derived, eq.scores(Q, K, c)


def output(eq, shape):
    """:math:`O_{ik} = \\sum_j A_{ij} V_{jk}` against the displayed :math:`O = AV`."""
    h, sp = _head(shape), _sp()
    A, V = h["A"], h["V"]
    return sp.Matrix(A.rows, V.cols, lambda i, k: sum(A[i, j] * V[j, k] for j in range(A.cols))), eq.output(A, V)


def softmax_rows_sum_to_one(eq, shape):
    """Each row of :math:`a_{ij} = e^{s_{ij}}/\\sum_l e^{s_{il}}` sums to 1."""
    sy, sp = _sym(), _sp()
    A = sy.softmax_from_exponentials(_head(shape)["E"])
    return A * sp.ones(A.cols, 1), sp.ones(A.rows, 1)


# ------------------------------------------------------------- why dot products grow (moments)


def _entries(name, d, *, mean=0, var=1):
    """``d`` independent entries with the given mean and variance and free third and fourth moments."""
    sp = _sp()
    xs = sp.symbols(f"{name}1:{d + 1}")
    m3, m4 = sp.Symbol(f"mu3_{name}"), sp.Symbol(f"mu4_{name}")
    moments = {1: mean, 2: var, 3: m3, 4: m4}
    return xs, {x: (lambda k, m=moments: m[k]) for x in xs}


def _variance(expr, moments):
    E = _sym().expectation
    return _sp().expand(E(expr**2, moments) - E(expr, moments) ** 2)


def in_every_width(derive_at, displayed, scale2):
    r"""``(derived, displayed)`` at :data:`WIDTHS`, after checking that ``scale2(d) * displayed(d)`` is a
    polynomial in :math:`d` of degree at most two (then agreement at three widths is identity for all).

    A displayed side that is not such a polynomial is returned as the pair ``(0, 1)`` with the
    reason attached, which :func:`~stats.exact.symbolic.decide` refutes.
    """
    sp = _sp()
    d = sp.Symbol("d_k", positive=True, integer=True)
    poly_side = sp.simplify(scale2(d) * displayed(d))
    try:
        ok = sp.Poly(sp.expand(poly_side), d).degree() <= 2
    except sp.PolynomialError:
        ok = False
    if not ok:
        return sp.Matrix([[0]]), sp.Matrix([[1]])
    return sp.Matrix([[derive_at(w) for w in WIDTHS]]), sp.Matrix([[displayed(w) for w in WIDTHS]])


def product_mean(eq):
    r""":math:`E[q_m k_m] = E[q_m] E[k_m]`: independent entries with free means."""
    sp = _sp()
    mq, mk = sp.symbols("m_q m_k")
    (q,), Mq = _entries("q", 1, mean=mq)
    (k,), Mk = _entries("k", 1, mean=mk)
    return _sym().expectation(q * k, {**Mq, **Mk}), eq.product_mean(mq, mk)


def product_variance(eq):
    r""":math:`\operatorname{Var}(q_m k_m) = E[q_m^2] E[k_m^2]` for zero-mean entries of variances :math:`\sigma^2`."""
    sp = _sp()
    vq, vk = sp.symbols("sigma_q2 sigma_k2", positive=True)
    (q,), Mq = _entries("q", 1, var=vq)
    (k,), Mk = _entries("k", 1, var=vk)
    return _variance(q * k, {**Mq, **Mk}), eq.product_variance(vq, vk)


def _independent_score(d, vq, vk):
    q, Mq = _entries("q", d, var=vq)
    k, Mk = _entries("k", d, var=vk)
    return sum(a * b for a, b in zip(q, k)), {**Mq, **Mk}


def score_variance(eq):
    r""":math:`\operatorname{Var}(q^\top k) = d_k \sigma_q^2 \sigma_k^2` for independent zero-mean entries."""
    sp = _sp()
    vq, vk = sp.symbols("sigma_q2 sigma_k2", positive=True)
    return in_every_width(lambda w: _variance(*_independent_score(w, vq, vk)), lambda w: eq.score_variance(w, vq, vk),
                          lambda w: 1)


def scaled_score_variance(eq):
    r""":math:`\operatorname{Var}(q^\top k/\sqrt{d_k}) = \sigma_q^2\sigma_k^2` (1 at unit variance)."""
    sp = _sp()
    vq, vk = sp.symbols("sigma_q2 sigma_k2", positive=True)

    def derive(w):
        score, moments = _independent_score(w, vq, vk)
        return _variance(score / sp.sqrt(w), moments)

    return in_every_width(derive, lambda w: eq.scaled_score_variance(w, vq, vk), lambda w: w)


def _correlated_score(d, rho, *, gaussian=False):
    r""":math:`q^\top k` with :math:`k = \rho q + \sqrt{1-\rho^2} z`, ``q`` and ``z`` independent, unit variance."""
    sp = _sp()
    q, Mq = _entries("q", d)
    z = sp.symbols(f"z1:{d + 1}")
    moments = {**Mq, **{zi: Mq[qi] for zi, qi in zip(z, q)}}  # z has q's entry law, as the section's k does
    if gaussian:
        gauss = {1: 0, 2: 1, 3: 0, 4: 3}
        moments = {x: (lambda k: gauss[k]) for x in moments}
    r = sp.sqrt(1 - rho**2)
    return sum(qi * (rho * qi + r * zi) for qi, zi in zip(q, z)), moments


def _rho():
    return _sp().Symbol("rho", real=True)


def correlated_mean(eq):
    r""":math:`E[q^\top k] = \rho\, d_k`."""
    rho, E = _rho(), _sym().expectation
    return in_every_width(lambda w: E(*_correlated_score(w, rho)), lambda w: eq.correlated_mean(w, rho), lambda w: 1)


def correlated_scaled_mean(eq):
    r"""The scaled mean :math:`\rho\sqrt{d_k}`."""
    sp, rho, E = _sp(), _rho(), _sym().expectation

    def derive(w):
        score, moments = _correlated_score(w, rho)
        return E(score / sp.sqrt(w), moments)

    return in_every_width(derive, lambda w: eq.correlated_scaled_mean(w, rho), lambda w: sp.sqrt(w))


def correlated_scaled_variance(eq):
    r"""Exercise 4.3d: :math:`\operatorname{Var}(q^\top k/\sqrt{d_k}) = 1 + \rho^2(\mu_4 - 2)`, any entry law."""
    sp, rho = _sp(), _rho()
    mu4 = sp.Symbol("mu4_q")

    def derive(w):
        score, moments = _correlated_score(w, rho)
        return _variance(score / sp.sqrt(w), moments)

    return in_every_width(derive, lambda w: eq.correlated_scaled_variance(w, rho, mu4), lambda w: w)


def correlated_gaussian_variance(eq):
    r"""Exercise 4.3d's Gaussian case, :math:`\mu_4 = 3`: :math:`1 + \rho^2`, from Gaussian moments."""
    sp, rho = _sp(), _rho()

    def derive(w):
        score, moments = _correlated_score(w, rho, gaussian=True)
        return _variance(score / sp.sqrt(w), moments)

    return in_every_width(derive, lambda w: eq.correlated_scaled_variance(w, rho, 3), lambda w: w)


def mup_variance(eq):
    r"""muP: :math:`\operatorname{Var}(q^\top k/d_k) = 1/d_k` at unit variance."""

    def derive(w):
        score, moments = _independent_score(w, 1, 1)
        return _variance(score / w, moments)

    return in_every_width(derive, lambda w: eq.mup_variance(w), lambda w: w * w)


def folded_scores(eq, shape):
    r"""T5's folding: :math:`X (cW_Q) (X W_K)^\top = c\,(X W_Q)(X W_K)^\top`, identical scores at initialisation."""
    sy = _sym()
    T_q, T_k, d_k, d_v = shape
    X, WQ, WK, c = sy.matrix("x", T_k, d_v), sy.matrix("wq", d_v, d_k), sy.matrix("wk", d_v, d_k), _head(shape)["c"]
    return c * (X * WQ) * (X * WK).T, eq.folded_scores(X, WQ, WK, c)


# ------------------------------------------------------------------- what large scores do


def winner_bound(eq, keys=4, gap=10):
    r""":math:`a_{\max} - e^{g}/(e^{g} + T - 1) \ge 0` when every other score trails by at least ``gap``.

    The other scores are :math:`s_{\max} - g - \delta_j` with :math:`\delta_j \ge 0`; the
    difference, over a common denominator, must have a numerator and denominator that are
    sums of non-negative terms (a certificate of non-negativity).  Returned as
    ``(1, 1)`` when the certificate holds, ``(0, 1)`` when it does not.
    """
    sp = _sp()
    t = sp.Symbol("t", positive=True)  # e^{-gap}
    w = sp.symbols(f"w1:{keys}", nonnegative=True)  # e^{delta_j} - 1 >= 0: e^{-delta_j} = 1/(1 + w_j)
    a_max = 1 / (1 + sum(t / (1 + wl) for wl in w))
    bound = eq.winner_bound(keys, gap).xreplace({sp.exp(gap): 1 / t})
    num, den = (sp.expand(x) for x in sp.fraction(sp.together(a_max - bound)))
    certified = (_nonnegative_terms(num) and _nonnegative_terms(den)) or (
        _nonnegative_terms(-num) and _nonnegative_terms(-den))
    return sp.Integer(1 if certified and den != 0 else 0), sp.Integer(1)


def _nonnegative_terms(p):
    """Whether every term of the expanded ``p`` is a non-negative coefficient times non-negative symbols."""
    sp = _sp()
    terms = sp.Add.make_args(p)
    return all(term.is_nonnegative for term in terms)


# ------------------------------------------------------------------ the Jacobian of softmax


def _row(n):
    """A softmax row in its exponentials :math:`e_j = e^{s_j} > 0`: ``(e, a)``, columns."""
    sy, sp = _sym(), _sp()
    e = sy.positive_matrix("e", n, 1)
    return e, sp.Matrix(n, 1, lambda i, _: e[i] / sum(e))


def _jacobian(n):
    """:math:`\\partial a_i/\\partial s_j = e_j\\,\\partial a_i/\\partial e_j` by differentiation (the chain rule)."""
    sp = _sp()
    e, a = _row(n)
    return sp.Matrix(n, n, lambda i, j: e[j] * sp.diff(a[i], e[j])), a


def softmax_jacobian(eq, n):
    r""":math:`\partial a/\partial s = \operatorname{diag}(a) - a a^\top`, differentiated entry by entry."""
    J, a = _jacobian(n)
    return J, eq.softmax_jacobian(a)


def jacobian_rows_sum_to_zero(eq, n):
    """The displayed Jacobian's rows sum to zero (shift invariance) on a softmax row."""
    sp = _sp()
    a = _row(n)[1]
    return eq.softmax_jacobian(a) * sp.ones(n, 1), sp.zeros(n, 1)


def jacobian_symmetric(eq, n):
    """The displayed Jacobian is symmetric."""
    J = eq.softmax_jacobian(_row(n)[1])
    return J, J.T


def jacobian_quadratic_form(eq, n):
    r""":math:`u^\top J u` (J differentiated) against the displayed :math:`\sum_i a_i u_i^2 - (\sum_i a_i u_i)^2`."""
    sy = _sym()
    J, a = _jacobian(n)
    u = sy.matrix("u", n, 1)
    return (u.T * J * u)[0, 0], eq.jacobian_quadratic_form(a, u)


def quadratic_form_is_variance(eq, n):
    r"""The displayed quadratic form is the variance of :math:`u_i` with :math:`i` drawn with probability :math:`a_i`."""
    sy = _sym()
    a = _row(n)[1]
    u = sy.matrix("u", n, 1)
    mean = sum(a[i] * u[i] for i in range(n))
    return sum(a[i] * (u[i] - mean) ** 2 for i in range(n)), eq.jacobian_quadratic_form(a, u)


def jacobian_trace(eq, n):
    r""":math:`\operatorname{tr} J` (J differentiated) against the displayed :math:`1 - \lVert a\rVert^2`."""
    J, a = _jacobian(n)
    return J.trace(), eq.jacobian_trace(a)


def trace_maximum(eq, n):
    r"""On the simplex :math:`1 - \lVert a\rVert^2 = (1 - 1/n) - \sum_i (a_i - 1/n)^2`: at most the displayed
    maximum, reached at uniform weights (compared as that identity)."""
    sp = _sp()
    a = _row(n)[1]
    spread = sum((a[i] - sp.Rational(1, n)) ** 2 for i in range(n))
    return 1 - sum(x**2 for x in a), eq.trace_maximum(n) - spread


def one_hot_jacobian(eq, n):
    """A one-hot row's displayed Jacobian is the zero matrix."""
    sp = _sp()
    a = sp.zeros(n, 1)
    a[0] = 1
    return eq.softmax_jacobian(a), sp.zeros(n, n)


def softmax_vjp(eq, n):
    r""":math:`J^\top g` (J differentiated) against the displayed :math:`a \odot (g - (a\cdot g)\mathbf 1)`."""
    sy = _sym()
    J, a = _jacobian(n)
    g = sy.matrix("g", n, 1)
    return J.T * g, eq.softmax_vjp(a, g)


def output_score_gradient(eq, n, d_v=2):
    r"""§4.1's :math:`\partial o/\partial s_j = a_j(v_j - o)` for every key j, o differentiated."""
    sy, sp = _sym(), _sp()
    e, a = _row(n)
    V = sy.matrix("v", n, d_v)
    o = a.T * V
    derived = sp.Matrix.vstack(*[e[j] * o.diff(e[j]) for j in range(n)])
    displayed = sp.Matrix.vstack(*[eq.output_score_gradient(a, V, j) for j in range(n)])
    return derived, displayed


def stable_softmax(eq, n):
    r"""Subtracting the row's maximum changes nothing: the displayed shifted softmax equals the plain one."""
    sy = _sym()
    e = sy.positive_matrix("e", n, 1)
    t = _sp().Symbol("t", positive=True)
    return eq.shifted_softmax(e, t), sy.softmax_from_exponentials(e.T).T


# ------------------------------------------------------------------------------ the backward pass


def backward_dV(eq, shape):
    r"""Step 1: :math:`dV = \partial/\partial V \sum dO \odot (AV)` against the displayed :math:`A^\top dO`."""
    h = _head(shape)
    A, V, dO = h["A"], h["V"], h["dO"]
    return _sym().gradient(_pairing(dO, A * V), V), eq.backward_dV(A, dO)


def backward_dA(eq, shape):
    r"""Step 1: :math:`dA = \partial/\partial A \sum dO \odot (AV)` against the displayed :math:`dO\,V^\top`."""
    h = _head(shape)
    A, V, dO = h["A"], h["V"], h["dO"]
    return _sym().gradient(_pairing(dO, A * V), A), eq.backward_dA(dO, V)


def backward_dS(eq, shape):
    r"""Step 2: :math:`dS = \partial/\partial S \sum dA \odot \operatorname{softmax}(S)` against the displayed
    :math:`A \odot (dA - D\mathbf 1^\top)` with :math:`D_i = \sum_l A_{il} dA_{il}`."""
    sy = _sym()
    h = _head(shape)
    E, dA = h["E"], h["dA"]
    A = sy.softmax_from_exponentials(E)
    return _score_gradient(_pairing(dA, A), E), eq.softmax_backward(A, dA, eq.row_term(A, dA))


def row_term_from_output(eq, shape):
    r"""Step 2: :math:`D_i = \sum_l A_{il} dA_{il}` with :math:`dA` differentiated from :math:`O = AV`, against the
    displayed :math:`dO_i \cdot O_i`."""
    sy, sp = _sym(), _sp()
    h = _head(shape)
    A, V, dO = h["A"], h["V"], h["dO"]
    dA = sy.gradient(_pairing(dO, A * V), A)
    D = sp.Matrix(A.rows, 1, lambda i, _: sum(A[i, l] * dA[i, l] for l in range(A.cols)))
    return D, eq.row_term_from_output(dO, A * V)


def masked_no_gradient(eq, shape):
    """A masked connection, :math:`A_{ij} = 0`, gets :math:`dS_{ij} = 0` from the displayed step 2."""
    sp = _sp()
    h = _head(shape)
    A, dA = h["A"], h["dA"]
    masked = A.copy()
    masked[0, A.cols - 1] = 0
    dS = eq.softmax_backward(masked, dA, eq.row_term(masked, dA))
    return sp.Matrix([[dS[0, A.cols - 1]]]), sp.Matrix([[0]])


def backward_dQ(eq, shape):
    r"""Step 3: :math:`dQ = \partial/\partial Q \sum dS \odot (c Q K^\top)` against the displayed :math:`c\,dS\,K`."""
    h = _head(shape)
    Q, K, dS, c = h["Q"], h["K"], h["dS"], h["c"]
    return _sym().gradient(_pairing(dS, c * Q * K.T), Q), eq.backward_dQ(dS, K, c)


def backward_dK(eq, shape):
    r"""Step 3: :math:`dK = \partial/\partial K \sum dS \odot (c Q K^\top)` against the displayed :math:`c\,dS^\top Q`."""
    h = _head(shape)
    Q, K, dS, c = h["Q"], h["K"], h["dS"], h["c"]
    return _sym().gradient(_pairing(dS, c * Q * K.T), K), eq.backward_dK(dS, Q, c)
