r"""The fixes for growing logits, in closed form (section "The assumption behind the argument, and when it fails").

Correlated keys :math:`k = \rho q + \sqrt{1-\rho^2}\,z` make the logit's mean grow:

* :math:`1/\sqrt{d_k}` scaling: :math:`E = \rho\sqrt{d_k}` (:func:`stats.models.scores.scaled_score_moments`);
* muP's :math:`1/d_k`: :math:`E = \rho`, bounded;
* QK-norm (Henry et al. 2020): q and k normalised to unit length, times a gain g, so the
  logit :math:`g\cos(q, k)` is bounded by g whatever the width.  We fix g at Henry et
  al.'s initial value :math:`g_0 = \log_2(T^2 - T)` for T tokens (9.95 for T = 32),
  the value a fresh head has.

For Gaussian entries the cosine of d-dimensional :math:`(q_m, k_m)` pairs with
correlation :math:`\rho` has the law of a sample correlation coefficient from
:math:`d + 1` observations (Fisher 1915), whose mean is Hotelling's (1953)

.. math::

    E[\cos] = \rho\,\frac{\Gamma(\tfrac{d+1}{2})^2}{\Gamma(\tfrac d2)\,\Gamma(\tfrac d2 + 1)}\;
    {}_2F_1\bigl(\tfrac12, \tfrac12; \tfrac d2 + 1; \rho^2\bigr)

(at d = 1 this is :math:`\tfrac{2}{\pi}\arcsin\rho`, the mean of the sign of a product), and
for :math:`\rho = 0`, :math:`\operatorname{Var}(\cos) = 1/d` exactly: random directions are
nearly orthogonal (§1.3's Fact 1).

T5 folds :math:`1/\sqrt{d_k}` into :math:`W_Q`'s initialisation instead of dividing the
scores: :math:`V_Q = W_Q/\sqrt{d_k}` and :math:`S = X V_Q W_K^\top X^\top`.  The scores are
identical at initialisation; the gradients are not: :math:`\partial L/\partial V_Q =
\sqrt{d_k}\,\partial L/\partial W_Q`, while the key gradient is the same.  One step then
changes the scores, from the query side, by (:func:`t5_step_ratio`)

* SGD (:math:`\Delta = -\eta g`): folded / divided :math:`= d_k` (the gradient is
  :math:`\sqrt{d_k}` larger and acts without the :math:`1/\sqrt{d_k}`);
* Adam's first step (:math:`\Delta = -\eta\, g/|g|` entrywise, :math:`\varepsilon = 0`):
  :math:`\sqrt{d_k}`, because the step's size ignores the gradient's scale;

and from the key side by the same amount in both parameterisations (ratio 1).

In training the folding is a reparameterisation, :math:`W_Q = \sqrt{d_k}\,V_Q`, so a folded
run *is* a divided run whose query weights get another learning rate
(:func:`~stats.training.folding.folded_query_lr_factor`): SGD's :math:`\Delta V_Q = -\eta\sqrt{d_k}\,g_W` is
:math:`\Delta W_Q = -\eta d_k\,g_W` (factor :math:`d_k`); Adam's step is invariant to the
gradient's scale but for :math:`\varepsilon`: :math:`\sqrt{d_k}\,\Delta V_Q = -\eta\sqrt{d_k}
\,\hat m_W/(\sqrt{\hat v_W} + \varepsilon/\sqrt{d_k})`, the divided run with learning rate
:math:`\eta\sqrt{d_k}` and :math:`\varepsilon/\sqrt{d_k}` on :math:`W_Q`, exactly; Adafactor's
relative step :math:`\eta\,\mathrm{RMS}(W)\,u` scales with the weight and its normalised
update :math:`u` does not, so the two runs are the same run (factor 1) while
:math:`\mathrm{RMS}(V_Q) > \varepsilon_2` and :math:`g^2 \gg \varepsilon_1`.

muP for one head (Yang et al. 2022, Table 3, Adam): the scores use :math:`1/d_k`, and the
hidden weights :math:`W_Q, W_K` (fan-in :math:`d_{model}`) keep the variance-preserving
initialisation but take the learning rate :math:`\eta\,d_0/d_{model}` for a base width
:math:`d_0` (:func:`~stats.training.scalings.mup_lr_multiplier`), so that the base width trains exactly as the
standard parameterisation does.
"""

from __future__ import annotations

import math

from scipy import special

from .._validation import check_choice, check_d_k, check_positive, check_rho
from ..training.optimizers import FIRST_STEP_OPTIMIZERS, optimizer_named

__all__ = [
    "cosine_mean",
    "cosine_moments",
    "qknorm_logit_mean",
    "t5_step_ratio",
]


def cosine_mean(d_k, rho=0.0):
    """Hotelling's exact mean of the cosine of Gaussian q and k = rho q + sqrt(1 - rho^2) z (module docstring)."""
    d = check_d_k(d_k)
    rho = check_rho(rho)
    if rho == 0.0:
        return 0.0
    log_ratio = 2 * special.gammaln((d + 1) / 2) - special.gammaln(d / 2) - special.gammaln(d / 2 + 1)
    return float(rho * math.exp(log_ratio) * special.hyp2f1(0.5, 0.5, d / 2 + 1, rho * rho))


def cosine_moments(d_k):
    """``(mean, variance)`` of the cosine of two independent random vectors with i.i.d. symmetric entries
    in the Gaussian case, where the direction is uniform on the sphere: ``(0, 1/d_k)``."""
    d = check_d_k(d_k)
    return 0.0, 1.0 / d


def qknorm_logit_mean(d_k, rho, *, gain):
    """Mean logit :math:`g\\,E[\\cos(q, k)]` under QK-norm with a fixed gain g; bounded by g."""
    return check_positive(gain, "gain") * cosine_mean(d_k, rho)


def t5_step_ratio(optimizer, side, d_k):
    """Score change of T5's folded parameterisation over the divided one after one step (module docstring)."""
    opt = optimizer_named(optimizer, among=FIRST_STEP_OPTIMIZERS)
    check_choice(side, "side", ("query", "key"))
    d = check_d_k(d_k)
    if side == "key":
        return 1.0
    return opt.folded_query_lr_factor(d)
