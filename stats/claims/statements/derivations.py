"""The section's displayed equations, proved (SymPy): one claim per heading, one check per step.

Each check compares a displayed equation as the section writes it
(:mod:`stats.exact.equations`) with the same quantity derived from first principles
(:mod:`stats.exact.derivations`, whose docstring says why the small shapes and widths at
which the identities are proved make them hold for every shape and width).  These checks
prove; the numerical checks of the other claims sample the suite's implementations at
points.  The two see different mistakes: a wrong displayed step here, a wrong
implementation there.
"""

from __future__ import annotations

from functools import partial

from ...exact import derivations as D
from ..check_builders import proof
from ..headings import ASSUMPTION, BACKWARD, FORMULA, JACOBIAN, LARGE, SATURATION, STABILITY, WIDTH
from ..claim import Claim

SECTION = FORMULA


def _step(name, args, F):
    return getattr(D, name)(F.equations, *args)


def _proof(label, name, *args, shapes=""):
    return proof(label, partial(_step, name, args), shapes=shapes)


def _shape_text(shape):
    return "T_q={}, T_k={}, d_k={}, d_v={}".format(*shape)


def _at_shapes(label, name):
    return tuple(_proof(f"{label}, {_shape_text(s)}", name, s, shapes=f"symbolic matrices at {_shape_text(s)}")
                 for s in D.SHAPES)


def _at_keys(label, name):
    return tuple(_proof(f"{label}, n={n}", name, n, shapes=f"a symbolic softmax row of n={n} keys") for n in D.JACOBIAN_KEYS)


WIDTHS = f"d_k = {', '.join(map(str, D.WIDTHS))}, and the displayed side a polynomial of degree <= 2 in d_k"


def claims():
    return (
        Claim(
            "proof-formula",
            FORMULA,
            "The three displayed matrices, proved entry by entry: S = Q K^T / sqrt(d_k) is the matrix of scaled dot "
            "products, O = A V the weighted sums of value rows, and each row of the softmax sums to one.",
            "S_ij = c sum_m Q_im K_jm; O_ik = sum_j A_ij V_jk; sum_j a_ij = 1",
            _at_shapes("S = c Q K^T", "scores") + _at_shapes("O = A V", "output")
            + _at_shapes("softmax rows sum to 1", "softmax_rows_sum_to_one"),
        ),
        Claim(
            "proof-width-variance",
            WIDTH,
            "Each step of the variance argument, proved in symbolic moments for independent entries of any law: the "
            "product's mean factorises and is 0, its variance is E[q^2] E[k^2], the score's variance is d_k sigma_q^2 "
            "sigma_k^2, and dividing by sqrt(d_k) brings it to sigma_q^2 sigma_k^2 (1 at unit variance).",
            "E[q_m k_m] = E q_m E k_m; Var(q_m k_m) = sigma_q^2 sigma_k^2; Var(q.k) = d_k sigma_q^2 sigma_k^2; "
            "Var(q.k / sqrt(d_k)) = sigma_q^2 sigma_k^2",
            (
                _proof("E[q_m k_m] = E[q_m] E[k_m]", "product_mean", shapes="symbolic means, independent entries"),
                _proof("Var(q_m k_m) = E[q_m^2] E[k_m^2]", "product_variance", shapes="symbolic variances, zero means"),
                _proof("Var(q.k) = d_k sigma_q^2 sigma_k^2", "score_variance", shapes=WIDTHS),
                _proof("Var(q.k / sqrt(d_k)) = sigma_q^2 sigma_k^2", "scaled_score_variance", shapes=WIDTHS),
            ),
        ),
        Claim(
            "proof-winner-bound",
            LARGE,
            "The bound on the largest weight when it leads every other score by at least 10: a_max >= e^10 / "
            "(e^10 + T - 1), proved by a certificate (the difference over a common denominator has only non-negative "
            "terms) for every amount by which the other scores trail further.",
            "a_max - e^g / (e^g + T - 1) >= 0 for gaps >= g",
            tuple(_proof(f"a_max >= e^10 / (e^10 + T - 1), T={T}", "winner_bound", T, 10,
                         shapes=f"T={T} keys, symbolic further gaps >= 0") for T in (4, 8)),
        ),
        Claim(
            "proof-jacobian",
            JACOBIAN,
            "The Jacobian of softmax and its displayed properties, proved on a symbolic row: differentiating a_i by "
            "s_j gives diag(a) - a a^T, whose rows sum to zero, which is symmetric, whose quadratic form is the "
            "a-weighted variance, whose trace is 1 - ||a||^2 at most 1 - 1/n (reached at uniform weights), which "
            "vanishes for a one-hot row, and whose product with g is a * (g - (a.g) 1).",
            "J = diag(a) - a a^T; J 1 = 0; J = J^T; u^T J u = Var_a(u); tr J = 1 - ||a||^2 <= 1 - 1/n; J(e_1) = 0; "
            "J^T g = a * (g - a.g)",
            _at_keys("da/ds = diag(a) - a a^T", "softmax_jacobian") + _at_keys("rows sum to 0", "jacobian_rows_sum_to_zero")
            + _at_keys("symmetric", "jacobian_symmetric") + _at_keys("u^T J u = sum a u^2 - (sum a u)^2", "jacobian_quadratic_form")
            + _at_keys("the quadratic form is Var_a(u)", "quadratic_form_is_variance")
            + _at_keys("tr J = 1 - ||a||^2", "jacobian_trace")
            + _at_keys("1 - ||a||^2 = (1 - 1/n) - sum (a_i - 1/n)^2", "trace_maximum")
            + _at_keys("one-hot a gives J = 0", "one_hot_jacobian")
            + _at_keys("J^T g = a * (g - (a.g) 1)", "softmax_vjp"),
        ),
        Claim(
            "proof-output-gradient",
            SATURATION,
            "The gradient the saturation argument uses (from section 4.1): the output's derivative by score j is "
            "a_j (v_j - o), proved for every key.",
            "do/ds_j = a_j (v_j - o)",
            _at_keys("do/ds_j = a_j (v_j - o)", "output_score_gradient"),
        ),
        Claim(
            "proof-correlation",
            ASSUMPTION,
            "The correlated-score moments, proved in symbolic moments for k = rho q + sqrt(1 - rho^2) z with q, z "
            "independent of one law: E[q.k] = rho d_k and the scaled mean rho sqrt(d_k); Exercise 4.3d's variance "
            "of the scaled score, 1 + rho^2 (mu_4 - 2), and its Gaussian case 1 + rho^2; muP's 1/d_k giving "
            "variance 1/d_k; and T5's folded initialisation giving the divided head's scores exactly.",
            "E[q.k] = rho d_k; E[q.k/sqrt(d_k)] = rho sqrt(d_k); Var(q.k/sqrt(d_k)) = 1 + rho^2 (mu_4 - 2); "
            "Var(q.k/d_k) = 1/d_k; X (c W_Q) (X W_K)^T = c (X W_Q)(X W_K)^T",
            (
                _proof("E[q.k] = rho d_k", "correlated_mean", shapes=WIDTHS),
                _proof("E[q.k / sqrt(d_k)] = rho sqrt(d_k)", "correlated_scaled_mean", shapes=WIDTHS),
                _proof("Exercise 4.3d: Var(q.k / sqrt(d_k)) = 1 + rho^2 (mu_4 - 2)", "correlated_scaled_variance",
                       shapes=WIDTHS + "; any entry law (symbolic mu_3, mu_4)"),
                _proof("Exercise 4.3d, Gaussian: 1 + rho^2", "correlated_gaussian_variance", shapes=WIDTHS + "; Gaussian moments"),
                _proof("muP: Var(q.k / d_k) = 1/d_k", "mup_variance", shapes=WIDTHS),
            ) + _at_shapes("T5: folded scores = divided scores", "folded_scores"),
        ),
        Claim(
            "proof-stable-softmax",
            STABILITY,
            "Subtracting the row's maximum before exponentiating leaves the softmax unchanged (shift invariance), "
            "proved on a symbolic row.",
            "softmax(s - m 1) = softmax(s)",
            _at_keys("softmax(s - max s) = softmax(s)", "stable_softmax"),
        ),
        Claim(
            "proof-backward",
            BACKWARD,
            "The three backward steps, proved by differentiating the forward pass entry by entry: dV = A^T dO and "
            "dA = dO V^T; dS = A * (dA - D 1^T) with D_i the row sum of A * dA, which equals dO_i . O_i; a masked "
            "connection (A_ij = 0) gets no gradient; dQ = c dS K and dK = c dS^T Q.",
            "dV = A^T dO; dA = dO V^T; dS = A * (dA - D 1^T), D_i = sum_l A_il dA_il = dO_i . O_i; dQ = c dS K; "
            "dK = c dS^T Q",
            _at_shapes("step 1: dV = A^T dO", "backward_dV") + _at_shapes("step 1: dA = dO V^T", "backward_dA")
            + _at_shapes("step 2: dS = A * (dA - D 1^T)", "backward_dS")
            + _at_shapes("step 2: D_i = dO_i . O_i", "row_term_from_output")
            + _at_shapes("masked A_ij = 0 gives dS_ij = 0", "masked_no_gradient")
            + _at_shapes("step 3: dQ = c dS K", "backward_dQ") + _at_shapes("step 3: dK = c dS^T Q", "backward_dK"),
        ),
    )


CLAIMS = claims()
