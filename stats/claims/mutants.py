"""Planted mistakes: the proof that the claims can fail.

Each mutant is a copy of :data:`~stats.formulas.FORMULAS` with one field replaced by a
plausible mistake -- a wrong closed form, or a wrong implementation that simulations call
while they run.  ``python -m stats verify --mutants`` re-runs exactly the simulations and
checks a mutant touches, on the same draws; a mutant is caught when some check is
rejected (or errs), and a mutant that nothing rejects means the suite cannot see that
mistake.  Every function here is module-level, so a mutant can run on a process pool.

A mutant is one function, its mistake, and one row ``(name, description, mistake)`` in the
table of its kind, in the order of ``mutants.csv``: a wrong moment formula (the mistake maps
the right ``(mean, var)`` to the wrong one), a wrong exact law (the right frozen law to the
wrong one), a wrong implementation (the fields of :class:`~stats.formulas.Formulas` it
replaces; the backward pass's mistakes replace one step of it), a wrong step of a
derivation (the fields of :class:`~stats.exact.equations.Equations`) and a wrong grading (a
corrected sentence that says more than its evidence, which the sentence audit of
:mod:`stats.claims.sentences` must reject).  Nothing dispatches on a
mutant's name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from ..exact import attention as _att
from ..exact import equations as _eq
from ..exact.equations import EQUATIONS
from ..exact.cost import matmul, phase
from ..formulas import FORMULAS, Formulas, with_formula
from ..models import distributions as _distributions
from ..models.asymptotics import saturation_asymptotics
from ..models.distributions import score_distribution
from ..models.laws import entry_law, law_moment
from ..models.saturation import exact_saturation_scores
from ..models.saturation_quadrature import saturation_exact
from ..models.scores import scaled_score_moments, score_scale

__all__ = ["MUTANTS", "Mutant"]


@dataclass(frozen=True)
class Mutant:
    name: str
    description: str
    formulas: Formulas


# ----------------------------------------------------------------- moment formulas
# One function a mistake; the scaffolds around them (module-level, so that a mutant pickles
# for a process pool) compute the right value first and hand it to the mistake.


class _ScoreCase(NamedTuple):
    """The arguments of the moment formulas, with the entries' law, its fourth moment and the scale factor."""

    d_k: Any
    rho: Any
    sigma_q: Any
    sigma_k: Any
    law: Any
    mu4: float
    c: float
    scale: str


def _moments_with(mistake, d_k, rho=0.0, *, sigma_q=1.0, sigma_k=1.0, entries="gaussian", scale="sqrt"):
    """The score moments with one planted mistake: ``mistake(mean, var, case)`` turns the right
    ``(mean, var)`` into the wrong one (``case``: a :class:`_ScoreCase`)."""
    mean, var = scaled_score_moments(d_k, rho, sigma_q=sigma_q, sigma_k=sigma_k, entries=entries, scale=scale)
    law = entry_law(entries)
    return mistake(mean, var, _ScoreCase(d_k, rho, sigma_q, sigma_k, law, law_moment(law, 4), score_scale(d_k, scale), scale))


def _variance_dk_squared(mean, var, x):
    return mean, var * x.d_k


def _scaled_mean_rho_dk(mean, var, x):
    return (mean * x.d_k**0.5 if x.scale == "sqrt" else mean), var


def _gaussian_mu4_for(target, mean, var, x):
    """The Gaussian fourth moment, 3, used for entries of the law named ``target``."""
    m4 = 3.0 if x.law.name == target else x.mu4
    return mean, x.c * x.c * x.d_k * (x.sigma_q * x.sigma_k) ** 2 * (1 + x.rho * x.rho * (m4 - 2))


def _variance_off_2pct(mean, var, x):
    return mean, var * 1.02


def _sigma_not_squared(mean, var, x):
    return mean, var / (x.sigma_q * x.sigma_k)


def _correlated_variance_stub(mean, var, x):
    return mean, var / (1 + x.rho * x.rho * (x.mu4 - 2))


def _correlated_variance_mu4_minus_1(mean, var, x):
    return mean, var * (1 + x.rho * x.rho * (x.mu4 - 1)) / (1 + x.rho * x.rho * (x.mu4 - 2))


def _mup_as_sqrt(mean, var, x):
    return (mean * x.d_k**0.5, var * x.d_k) if x.scale == "mup" else (mean, var)


def _nan_mean(mean, var, x):
    return math.nan, var


def _law_with(mistake, d_k, rho=0.0, *, sigma_q=1.0, sigma_k=1.0, scale="sqrt"):
    """The exact law of the score with one planted mistake: ``mistake(law)`` turns the right frozen law into the wrong one."""
    return mistake(score_distribution(d_k, rho, sigma_q=sigma_q, sigma_k=sigma_k, scale=scale))


def _law_scales_swapped(law):
    kw = law.kwds
    return _distributions.diff_chi2(df=kw["df"], s1=kw["s2"], s2=kw["s1"])


def _law_df_plus_1(law):
    kw = law.kwds
    return _distributions.diff_chi2(df=kw["df"] + 1, s1=kw["s1"], s2=kw["s2"])


def _law_normal(law):
    from scipy import stats

    return stats.norm(law.mean(), law.std())


# ----------------------------------------------------------------- implementations


def _trace_one_minus_max(a):
    return 1.0 - np.max(a, axis=-1)


def _jacobian_plus(a):
    a = np.asarray(a, dtype=np.float64)
    n = a.shape[-1]
    return a[..., :, None] * np.eye(n) + a[..., :, None] * a[..., None, :]


def _vjp_without_weights(a, g):
    return g - np.sum(a * g, axis=-1, keepdims=True)


def _score_grad(A, dA, D):
    return A * (dA - D)


def _key_grad(dS, Q, Qc, c):
    return matmul(np.swapaxes(dS, -1, -2), Qc)


def _backward_with(Q, K, V, dO, mask=None, *, scale=None, return_score_grad=False, return_forward=False,
                   score_grad=_score_grad, key_grad=_key_grad):
    """attention_backward with one step of the derivation replaced: ``score_grad(A, dA, D)`` gives dS
    and ``key_grad(dS, Q, cQ, c)`` gives dK."""
    Q, K, V = _att.check_qkv(Q, K, V)
    O, A, c, Qc = _att.forward_pass(Q, K, V, mask, scale)
    dO = _att.output_gradient(dO, O)
    with phase("backward"):
        dV = matmul(np.swapaxes(A, -1, -2), dO)
        dA = matmul(dO, np.swapaxes(V, -1, -2))
        D = np.sum(dO * O, axis=-1, keepdims=True)
        dS = score_grad(A, dA, D)
        dQ = matmul(dS * c, K)
        dK = key_grad(dS, Q, Qc, c)
    grads = _att.sum_to_shape(dQ, Q.shape), _att.sum_to_shape(dK, K.shape), _att.sum_to_shape(dV, V.shape)
    return (*grads, *((dS,) if return_score_grad else ()), *((O, A) if return_forward else ()))


def _ds_without_d_term(A, dA, D):
    return A * dA


def _dk_as_c_ds_q(dS, Q, Qc, c):
    return matmul(dS * c, Q)  # wrong: dS Q instead of dS^T Q (only square score matrices get this far)


def _adam_without_bias_correction(g, state, t, lr, *, betas=(0.9, 0.999), eps=1e-8):
    b1, b2 = betas
    if "m" not in state:
        state["m"], state["v"] = np.zeros_like(g), np.zeros_like(g)
    state["m"] = b1 * state["m"] + (1 - b1) * g
    state["v"] = b2 * state["v"] + (1 - b2) * g * g
    return -lr * state["m"] / (np.sqrt(state["v"]) + eps)


def _adam_half_moments_in_float32(g, state, t, lr, *, betas=(0.9, 0.999), eps=1e-8):
    """Adam whose float32 runs keep their moments in float16 (a lost cast: half typed for single); float64 runs
    are untouched.  Squared gradients below about 6e-8 flush to 0, and so does eps."""
    from ..training.optimizers import adam_update

    if np.asarray(g).dtype != np.float32:
        return adam_update(g, state, t, lr, betas=betas, eps=eps)
    b1, b2 = betas
    if "m" not in state:
        state["m"], state["v"] = np.zeros(g.shape, np.float16), np.zeros(g.shape, np.float16)
    state["m"] = (b1 * state["m"] + (1 - b1) * g).astype(np.float16)
    state["v"] = (b2 * state["v"] + (1 - b2) * g * g).astype(np.float16)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        step = (state["m"] / (1 - b1**t)) / (np.sqrt(state["v"] / (1 - b2**t)) + np.float16(eps))
        return (-np.asarray(lr, dtype=np.float32) * step).astype(np.float32)


def _adafactor_absolute_step(g, w, state, t, lr, **kw):
    """Adafactor's clipped update with an absolute step lr instead of lr * max(eps2, RMS(w))."""
    from ..training.optimizers import adafactor_update

    return adafactor_update(g, np.ones_like(w), state, t, lr, **kw)


def _targets_unpermuted(V, perm):
    return V.copy()


def _sampler_winner_first(q_rng, k_rng, rows, d_k, n_keys, c):
    """The exact sampler with each row's scores sorted, largest first: every statistic of the
    weights is the same (they are symmetric in the keys), but the winner is always key 0."""
    s = exact_saturation_scores(q_rng, k_rng, rows, d_k, n_keys, c)
    return -np.sort(-s, axis=1)


def _sampler_without_chi(q_rng, k_rng, rows, d_k, n_keys, c):
    q_rng.chisquare(d_k, size=rows)  # same draws consumed, then ignored: ||q|| taken as sqrt(d_k)
    w = k_rng.standard_normal((rows, n_keys))
    return w * (c * math.sqrt(d_k))


def _winner_bound_T(gap, n_keys):
    return 1.0 / (1.0 + n_keys * np.exp(-np.asarray(gap, dtype=np.float64)))


def _small_score_over_T(n_keys):
    return (n_keys - 1) / n_keys


def _cosine_var_sqrt(d_k):
    return 0.0, 1.0 / math.sqrt(d_k)


def _cosine_mean_asymptote(d_k, rho=0.0):
    return float(rho)


def _fold_without_sqrt(d_k):
    return 1.0


def _normalize_only_q(Q, K):
    nq = np.linalg.norm(Q, axis=-1, keepdims=True)
    return Q / nq, K, nq, np.ones(K.shape[:-1] + (1,))


def _mup_lr_unscaled(d_model, base_width):
    return 1.0


def _layer_norm_backward_uncentred(dy, cache, gain):
    xhat, inv = cache
    dxhat = dy * gain
    lead = tuple(range(dy.ndim - 1))
    return inv * (dxhat - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True)), (dy * xhat).sum(axis=lead), dy.sum(axis=lead)


def _embedding_backward_assigned(dx, tokens, vocab):
    d = np.zeros((vocab, dx.shape[-1]), dtype=dx.dtype)
    d[tokens.reshape(-1)] = dx.reshape(-1, dx.shape[-1])
    return d


def _cross_entropy_gradient_unmasked(logits, targets, *, scored=None):
    loss, _ = FORMULAS.cross_entropy(logits, targets, scored=scored)
    _, everywhere = FORMULAS.cross_entropy(logits, targets)
    return loss, everywhere


def _mup_hidden_rates_unscaled(model):
    rates = FORMULAS.mup_lr_multipliers(model)
    return {k: (v if k == "unembed" else 1.0) for k, v in rates.items()}


def _t5_adam_as_sgd(optimizer, side, d_k):
    return 1.0 if side == "key" else float(d_k)


def _dropout_no_rescale(a, p, rng):
    a = np.asarray(a, dtype=np.float64)
    return np.where(rng.random(a.shape) >= p, a, 0.0)


def _flops_three(T_q, T_k, d_k, d_v):
    fwd = 2 * T_q * T_k * (d_k + d_v)
    return fwd, 3 * fwd


def _cutoff_log2(max_value):
    return math.log2(max_value)


def _asymptotics_without_ln2(n_keys=32):

    k = saturation_asymptotics(n_keys)
    return dict(k, C_max=k["gap_density_at_zero"])


def _asymptotics_pairs_unordered(n_keys=32):
    """The gap density at zero counted over unordered pairs, T(T-1)/2 instead of T(T-1)."""

    k = saturation_asymptotics(n_keys)
    return dict(k, C_max=k["C_max"] / 2, C_trace=k["C_trace"] / 2)


def _saturation_exact_fewer_keys(d_k, n_keys=32, *, scaling="sqrt", refine=1):
    return saturation_exact(d_k, n_keys - 1, scaling=scaling, refine=refine)


# ----------------------------------------------------------------- the list

_MOMENT_MUTANTS = (
    ("variance-dk-squared", "raw variance d_k^2 sigma_q^2 sigma_k^2 instead of d_k sigma_q^2 sigma_k^2", _variance_dk_squared),
    ("scaled-mean-rho-dk", "scaled mean rho d_k (the raw mean) instead of rho sqrt(d_k)", _scaled_mean_rho_dk),
    ("gaussian-mu4-for-rademacher", "the Gaussian fourth moment (3) used for Rademacher entries in the correlated variance",
     partial(_gaussian_mu4_for, "rademacher")),
    ("gaussian-mu4-for-uniform", "the Gaussian fourth moment (3) used for uniform entries", partial(_gaussian_mu4_for, "uniform")),
    ("gaussian-mu4-for-student-t", "the Gaussian fourth moment (3) used for heavy-tailed Student-t entries",
     partial(_gaussian_mu4_for, "student_t")),
    ("variance-off-2pct", "every variance 2% too large", _variance_off_2pct),
    ("sigma-not-squared", "variance d_k sigma_q sigma_k (sigmas not squared)", _sigma_not_squared),
    ("correlated-variance-stub", "the section's placeholder: the rho = 0 variance used for every rho", _correlated_variance_stub),
    ("correlated-variance-mu4-minus-1", "1 + rho^2 (mu_4 - 1) instead of 1 + rho^2 (mu_4 - 2)", _correlated_variance_mu4_minus_1),
    ("mup-as-sqrt", "muP's 1/d_k scaling computed as 1/sqrt(d_k)", _mup_as_sqrt),
    ("nan-mean", "a mean formula that returns NaN (must give ERROR, never pass)", _nan_mean),
)
_LAW_MUTANTS = (
    ("exact-law-scales-swapped", "the exact law with its two chi-square scales (1 + rho)/2 and (1 - rho)/2 swapped", _law_scales_swapped),
    ("exact-law-df-plus-1", "the exact law with d_k + 1 degrees of freedom", _law_df_plus_1),
    ("exact-law-normal", "the exact law replaced by the normal with the same mean and variance", _law_normal),
)
_IMPLEMENTATION_MUTANTS = (
    ("trace-one-minus-max", "the Jacobian's trace computed as 1 - max a instead of 1 - ||a||^2", dict(row_trace=_trace_one_minus_max)),
    ("jacobian-plus-aat", "the softmax Jacobian diag(a) + a a^T", dict(softmax_jacobian=_jacobian_plus)),
    ("vjp-without-weights", "the vector-Jacobian product g - (a.g) 1, without the factor a", dict(softmax_vjp=_vjp_without_weights)),
    ("ds-without-d-term", "the backward pass with dS = A * dA (no D term)", dict(attention_backward=partial(_backward_with, score_grad=_ds_without_d_term))),
    ("dk-as-c-ds-q", "the backward pass with dK = c dS Q instead of c dS^T Q", dict(attention_backward=partial(_backward_with, key_grad=_dk_as_c_ds_q))),
    ("exact-sampler-no-chi", "the exact saturation sampler that forgets the chi law of ||q|| (takes sqrt(d_k))", dict(saturation_sampler=_sampler_without_chi)),
    ("exact-sampler-winner-first", "the exact saturation sampler that returns each row's scores sorted, the winner always key 0", dict(saturation_sampler=_sampler_winner_first)),
    ("saturation-exact-fewer-keys", "exact saturation values computed for T - 1 keys", dict(saturation_exact=_saturation_exact_fewer_keys)),
    ("winner-bound-T", "the winner bound e^g/(e^g + T) instead of e^g/(e^g + T - 1)", dict(winner_bound=_winner_bound_T)),
    ("small-score-coefficient", "the small-score expansion's coefficient (T - 1)/T instead of (T - 1)/T^2", dict(small_score_trace=_small_score_over_T)),
    ("cosine-variance-sqrt", "random vectors' cosine variance 1/sqrt(d_k) instead of 1/d_k", dict(cosine_moments=_cosine_var_sqrt)),
    ("cosine-mean-asymptote", "QK-norm's mean cosine taken as rho (the d_k -> inf limit) at every width", dict(cosine_mean=_cosine_mean_asymptote)),
    ("t5-adam-ratio-dk", "the T5 query-side ratio under Adam taken as d_k (the SGD value)", dict(t5_step_ratio=_t5_adam_as_sgd)),
    ("dropout-no-rescale", "dropout that zeroes weights but does not rescale by 1/(1 - p)", dict(dropout=_dropout_no_rescale)),
    ("backward-three-products", "the backward pass's FLOPs counted as three products' worth", dict(attention_flops=_flops_three)),
    ("overflow-cutoff-log2", "the overflow cutoff log2(max) instead of ln(max)", dict(overflow_cutoff=_cutoff_log2)),
    ("asymptotic-constant-without-ln2", "the unscaled law's constant f_G(0) instead of f_G(0) ln 2", dict(saturation_asymptotics=_asymptotics_without_ln2)),
    ("adam-without-bias-correction", "Adam without its bias correction (its first step (1 - beta_1)/sqrt(1 - beta_2) = 3.2 times too large)", dict(adam_update=_adam_without_bias_correction)),
    ("adam-float32-moments-in-half", "Adam's moments in a float32 run kept in float16 (a lost cast): small squared "
     "gradients and eps flush to 0", dict(adam_update=_adam_half_moments_in_float32)),
    ("adafactor-absolute-step", "Adafactor with an absolute step lr instead of lr times the parameter's RMS", dict(adafactor_update=_adafactor_absolute_step)),
    ("targets-from-wrong-key", "the training targets taken from the query's own position, v_i, instead of its key's, v_pi(i)", dict(retrieval_targets=_targets_unpermuted)),
    ("t5-fold-without-sqrt", "T5's folded initialisation without its sqrt(d_k): W_Q drawn as the key weights are, scores undivided", dict(t5_fold_divisor=_fold_without_sqrt)),
    ("qknorm-only-q", "a QK-norm that normalises q and leaves k as it is", dict(qk_normalize=_normalize_only_q)),
    ("mup-lr-unscaled", "muP's Adam learning rate for W_Q and W_K not scaled by d_0/d_model", dict(mup_lr_multiplier=_mup_lr_unscaled)),
    ("layer-norm-backward-uncentred", "LayerNorm's backward without its centring term (the mean of g dy not subtracted)",
     dict(layer_norm_backward=_layer_norm_backward_uncentred)),
    ("embedding-backward-assigned", "the embedding's gradient assigned per position instead of summed, so a repeated token keeps "
     "its last position's gradient", dict(embedding_backward=_embedding_backward_assigned)),
    ("cross-entropy-gradient-unmasked", "the cross-entropy's gradient taken over every position while its loss counts the scored "
     "ones only", dict(cross_entropy=_cross_entropy_gradient_unmasked)),
    ("mup-hidden-rates-unscaled", "muP's rules with the hidden weights' Adam rate left at eta (only the read-out's scaled by "
     "d_0/d_model)", dict(mup_lr_multipliers=_mup_hidden_rates_unscaled)),
    ("asymptotic-gap-density-unordered", "the gap density at zero over unordered pairs, T(T-1)/2", dict(saturation_asymptotics=_asymptotics_pairs_unordered)),
)

# ------------------------------------------------------- the grading: corrected sentences


def _sentence_in_all_runs(erratum):
    """A corrected sentence that claims its finding 'in all runs': a universal no check states."""
    return f"{erratum.sentence.rstrip().rstrip('.')}, in all runs."


#: Mistakes in what the suite prints about the text: each must fail a sentence row of claims.csv.
_GRADING_MUTANTS = (
    ("sentence-in-all-runs", "every corrected sentence ends 'in all runs', a universal word no check supports",
     dict(erratum_sentence=_sentence_in_all_runs)),
)

# ------------------------------------------------------- displayed equations (the proof claims)


def _ds_sign(A, dA, D):
    return _eq.hadamard(A, D * _ones_row(A.cols) - dA)


def _ones_row(n):
    import sympy

    return sympy.ones(1, n)


def _row_term_without_sum(A, dA):
    return _eq.hadamard(A, dA)[:, 0]


def _dk_without_transpose(dS, Q, c):
    return c * dS * Q


def _exercise_mu4_minus_1(d_k, rho, mu4):
    return 1 + rho**2 * (mu4 - 1)


def _symbolic_jacobian_plus(a):
    import sympy

    return sympy.diag(*a) + a * a.T


def _dv_without_transpose(A, dO):
    return dO.T * A


#: Wrong steps of the section's derivations: each must fail the proof of the step it replaces.
_EQUATION_MUTANTS = (
    ("proof-ds-sign", "step 2 with its sign flipped: dS = A * (D 1^T - dA)", dict(softmax_backward=_ds_sign)),
    ("proof-d-without-row-sum", "D_i = A_i1 dA_i1, a D without its row sum", dict(row_term=_row_term_without_sum)),
    ("proof-dk-without-transpose", "step 3 with dK = c dS Q, the transpose missing", dict(backward_dK=_dk_without_transpose)),
    ("proof-dv-as-do-t-a", "step 1 with dV = dO^T A, the product in the wrong order", dict(backward_dV=_dv_without_transpose)),
    ("proof-jacobian-plus-aat", "the Jacobian written diag(a) + a a^T", dict(softmax_jacobian=_symbolic_jacobian_plus)),
    ("proof-exercise-mu4-minus-1", "Exercise 4.3d's variance as 1 + rho^2 (mu_4 - 1)", dict(correlated_scaled_variance=_exercise_mu4_minus_1)),
)

MUTANTS = (
    tuple(Mutant(name, desc, with_formula(moments=partial(_moments_with, mistake))) for name, desc, mistake in _MOMENT_MUTANTS)
    + tuple(Mutant(name, desc, with_formula(distribution=partial(_law_with, mistake))) for name, desc, mistake in _LAW_MUTANTS)
    + tuple(Mutant(name, desc, with_formula(**repl)) for name, desc, repl in _IMPLEMENTATION_MUTANTS)
    + tuple(Mutant(name, desc, with_formula(equations=replace(EQUATIONS, **repl))) for name, desc, repl in _EQUATION_MUTANTS)
    + tuple(Mutant(name, desc, with_formula(**repl)) for name, desc, repl in _GRADING_MUTANTS)
)

assert all(m.formulas is not FORMULAS for m in MUTANTS)
assert len({m.name for m in MUTANTS}) == len(MUTANTS), "two mutants share a name"
