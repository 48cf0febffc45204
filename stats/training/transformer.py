r"""A small decoder-only transformer in numpy, each layer's backward pass beside its forward.

The model (Radford et al. 2019's GPT-2 layout, pre-LayerNorm):

.. math::

    x^{(0)}_t = E_{w_t} + P_t, \qquad
    x^{(l)} = x^{(l-1)} + \mathrm{MHA}_l(\mathrm{LN}(x^{(l-1)})) \;[+\ \mathrm{MLP}_l(\mathrm{LN}(\cdot))],

    \mathrm{logits}_t = \mathrm{LN}(x^{(L)})_t\, W_U, \qquad
    L = -\frac{1}{BT}\sum_{b,t} \log \operatorname{softmax}(\mathrm{logits}_{bt})_{w_{b,t+1}} ,

in nats per token.  Each of the H heads of a layer computes :math:`Q_h = h W_Q^{(h)}`,
:math:`K_h = h W_K^{(h)}`, :math:`V_h = h W_V^{(h)}` (:math:`d_k = d_{model}/H`), the logits its
:class:`~stats.training.scalings.Scaling` makes of them under a causal mask, and
:math:`O_h = \operatorname{softmax}(S_h) V_h`, with the section's own forward and backward pass
(:func:`~stats.exact.attention.scaled_dot_product_attention`,
:func:`~stats.exact.attention.attention_backward`, which recomputes the forward from Q, K and V
as FlashAttention does; additive attention, whose scores are not a product, keeps its weights
and runs its own backward through the section's softmax vector-Jacobian product); the heads are
concatenated and projected by :math:`W_O`.  The MLP is
:math:`\mathrm{GELU}(h W_1 + b_1) W_2 + b_2` with a four-fold hidden width and GPT-2's tanh GELU.

Initialisation (drawn in float64 from one generator, then rounded to the model's ``dtype``):
embeddings :math:`E, P \sim N(0, 1)`; every matrix :math:`N(0, 1/\text{fan-in})`, so that at
step 0 the entries of Q and K have unit variance after the LayerNorm, the section's premise;
LayerNorm gains 1 and biases 0; the scaling changes what it changes (T5's folding divides
:math:`W_Q`, QK-norm adds one trained gain per head).

The backward pieces the section does not derive -- :func:`layer_norm_backward`,
:func:`embedding_backward`, :func:`cross_entropy` (with its gradient), :func:`gelu_backward` --
are plain functions, so a test can hold each to finite differences and to PyTorch's autograd.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace
from typing import NamedTuple

import numpy as np

from .._validation import as_real_array, check_finite, check_integer, check_positive
from ..exact.attention import attention_backward, scaled_dot_product_attention, softmax, softmax_vjp
from .arrays import check_dtype
from .scalings import qk_normalize, scaling_named, t5_fold_divisor

__all__ = [
    "LAYER_NORM_EPS",
    "TRANSFORMER_SCALINGS",
    "Transformer",
    "TransformerConfig",
    "cross_entropy",
    "embedding_backward",
    "gelu",
    "gelu_backward",
    "layer_norm",
    "layer_norm_backward",
]

#: LayerNorm's epsilon (PyTorch's default).
LAYER_NORM_EPS = 1e-5
#: The scalings a causal layer takes: every one of the registry.  Those whose logits are
#: :math:`c\,Q_aK_a^\top` run the section's forward and backward pass; additive attention its own
#: (:class:`~stats.training.scalings.Additive`), its masked scores getting no gradient.
TRANSFORMER_SCALINGS = ("none", "sqrt", "mup", "qknorm", "t5", "additive")
_GELU_A = math.sqrt(2.0 / math.pi)
_GELU_B = 0.044715


# ------------------------------------------------------------------ the pieces, each with its backward
# Each public piece checks its input and calls its unchecked twin, which the model calls every step.


def _values(x, name, *, ndim=1):
    """``x`` as a finite float array (float32 kept, anything else float64) with at least ``ndim`` axes."""
    arr = as_real_array(x, name)
    arr = check_finite(arr if arr.dtype == np.float32 else arr.astype(np.float64, copy=False), name)
    if arr.ndim < ndim or 0 in arr.shape:
        raise ValueError(f"{name} must be a non-empty array with at least {ndim} axis(es); got shape {arr.shape}")
    return arr


def _same_shape(arr, name, shape, what):
    if arr.shape != tuple(shape):
        raise ValueError(f"{name} must have the shape of {what}, {tuple(shape)}; got {arr.shape}")
    return arr


def _token_ids(tokens, name, shape, vocab, what):
    """``tokens`` checked to be integers of ``shape`` in [0, vocab)."""
    t = np.asarray(tokens)
    if not np.issubdtype(t.dtype, np.integer) or t.dtype == bool:
        raise TypeError(f"{name} must be an integer array of token ids; got dtype {t.dtype}")
    _same_shape(t, name, shape, what)
    if t.min() < 0 or t.max() >= vocab:
        raise ValueError(f"{name} must lie in [0, {vocab}); got {t.min()} to {t.max()}")
    return t


def layer_norm(x, gain, bias, *, eps=LAYER_NORM_EPS):
    r"""``(y, cache)``: :math:`y = g \odot \hat x + b`, :math:`\hat x = (x - \mu)/\sqrt{\sigma^2 + \epsilon}`
    over the last axis (:math:`\sigma^2` the biased variance, as PyTorch's ``layer_norm``);
    ``cache`` is what :func:`layer_norm_backward` needs."""
    x = _values(x, "x")
    gain = _same_shape(_values(gain, "gain"), "gain", x.shape[-1:], "x's last axis")
    bias = _same_shape(_values(bias, "bias"), "bias", x.shape[-1:], "x's last axis")
    return _layer_norm(x, gain, bias, check_positive(eps, "eps"))


def _row_mean(x):
    """The mean over the last axis, kept as an axis of length 1, as one matrix-vector product:
    numpy's reduction along a last axis of a few dozen entries is a fifth as fast."""
    n = x.shape[-1]
    return (x.reshape(-1, n) @ np.full(n, 1.0 / n, dtype=x.dtype)).reshape(*x.shape[:-1], 1)


def _layer_norm(x, gain, bias, eps=LAYER_NORM_EPS):
    # In place where a temporary would be dropped: a third of the allocations.
    xhat = x - _row_mean(x)
    inv = _row_mean(np.square(xhat))
    inv += x.dtype.type(eps)
    np.sqrt(inv, out=inv)
    np.divide(1.0, inv, out=inv)
    xhat *= inv
    y = xhat * gain
    y += bias
    return y, (xhat, inv)


def layer_norm_backward(dy, cache, gain):
    r"""``(dx, dgain, dbias)`` of :func:`layer_norm`:
    :math:`dx = \frac{1}{\sigma}\big(d\hat x - \overline{d\hat x} - \hat x\,\overline{d\hat x \odot \hat x}\big)`,
    :math:`d\hat x = g \odot dy`, the bars means over the last axis."""
    dy = _values(dy, "dy")
    if not (isinstance(cache, tuple) and len(cache) == 2 and all(isinstance(c, np.ndarray) for c in cache)):
        raise TypeError(f"cache must be the (xhat, inv) pair layer_norm returns; got {type(cache).__name__}")
    _same_shape(cache[0], "cache's xhat", dy.shape, "dy")
    _same_shape(cache[1], "cache's inv", dy.shape[:-1] + (1,), "dy with its last axis 1")
    gain = _same_shape(_values(gain, "gain"), "gain", dy.shape[-1:], "dy's last axis")
    return _layer_norm_backward(dy, cache, gain)


def _layer_norm_backward(dy, cache, gain):
    xhat, inv = cache
    lead = tuple(range(dy.ndim - 1))
    dx = dy * gain
    mean_dxhat = _row_mean(dx)
    along = xhat * _row_mean(dx * xhat)
    dx -= mean_dxhat
    dx -= along
    dx *= inv
    return dx, (dy * xhat).sum(axis=lead), dy.sum(axis=lead)


def gelu(u):
    r"""GPT-2's GELU: :math:`\tfrac12 u\,(1 + \tanh(a(u + b u^3)))`, :math:`a = \sqrt{2/\pi}`, :math:`b = 0.044715`."""
    u = _values(u, "u", ndim=0)
    return _gelu(np.atleast_1d(u)).reshape(u.shape)[()]  # the private steps work in place: at least 1-d


def _gelu_tanh(u):
    """:math:`t = \\tanh(a(u + b u^3))`, what GELU and its derivative share (u * u * u: numpy's
    float32 power is a tenth as fast)."""
    t = u * u
    t *= u
    t *= _GELU_B
    t += u
    t *= _GELU_A
    return np.tanh(t, out=t)


def _gelu(u, t=None):
    g = 0.5 * u
    g *= 1.0 + (_gelu_tanh(u) if t is None else t)
    return g


def gelu_backward(du_out, u):
    r""":math:`\frac{d}{du}\mathrm{GELU} = \tfrac12(1 + t) + \tfrac12 u (1 - t^2)\, a (1 + 3 b u^2)`, times ``du_out``."""
    u = _values(u, "u", ndim=0)
    du_out = _same_shape(_values(du_out, "du_out", ndim=0), "du_out", u.shape, "u")
    return _gelu_backward(np.atleast_1d(du_out), np.atleast_1d(u)).reshape(u.shape)[()]


def _gelu_backward(du_out, u, t=None):
    t = _gelu_tanh(u) if t is None else t
    # 0.5 (1 + t) + 0.5 u (1 - t^2) a (1 + 3 b u^2), in place, in that order (the same bits): an
    # elementwise chain on the MLP's widest array, where each temporary costs a pass.
    slope = 0.5 * u
    rest = np.square(t)
    np.subtract(1.0, rest, out=rest)
    slope *= rest
    slope *= _GELU_A
    np.multiply(3.0 * _GELU_B, u, out=rest)
    rest *= u
    rest += 1.0
    slope *= rest
    np.add(1.0, t, out=rest)
    rest *= 0.5
    rest += slope
    rest *= du_out
    return rest


def cross_entropy(logits, targets, *, scored=None):
    r"""``(loss, dlogits)``: the mean over the scored positions of :math:`-\log\operatorname{softmax}(z)_y`
    (nats) and its gradient :math:`s\,(\operatorname{softmax}(z) - e_y)/\sum s`; ``targets`` holds one
    class per position (``logits``' shape without its last axis), ``scored`` (a boolean array of
    that shape, None: every position) says which positions the loss counts."""
    logits = _values(logits, "logits")
    if logits.shape[-1] < 2:
        raise ValueError(f"logits must have at least 2 classes on their last axis; got shape {logits.shape}")
    targets = _token_ids(targets, "targets", logits.shape[:-1], logits.shape[-1], "logits without their last axis")
    return _cross_entropy(logits, targets, _scored_mask(scored, logits.shape[:-1]))


def _scored_mask(scored, shape):
    """``scored`` checked: None, or a boolean array of ``shape`` with at least one True."""
    if scored is None:
        return None
    s = np.asarray(scored)
    if s.dtype != bool:
        raise TypeError(f"scored must be a boolean array (True: the position counts); got dtype {s.dtype}")
    _same_shape(s, "scored", shape, "the targets")
    if not s.any():
        raise ValueError("scored must mark at least one position")
    return s


def _cross_entropy(logits, targets, scored=None):
    z = logits - logits.max(axis=-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    flat = logp.reshape(-1, logp.shape[-1])
    rows = np.arange(flat.shape[0])
    y = targets.reshape(-1)
    d = np.exp(flat)
    d[rows, y] -= 1.0
    if scored is None:
        return float(-flat[rows, y].mean()), (d / flat.shape[0]).reshape(logits.shape).astype(logits.dtype, copy=False)
    w = scored.reshape(-1)
    n = int(w.sum())
    d[~w] = 0.0
    return float(-flat[rows[w], y[w]].sum() / n), (d / n).reshape(logits.shape).astype(logits.dtype, copy=False)


def embedding_backward(dx, tokens, vocab):
    """The gradient of an embedding table of ``vocab`` rows: each row the sum of ``dx`` over the
    positions holding its token (``np.add.at``, so repeated tokens add up)."""
    vocab = check_integer(vocab, "vocab", minimum=1, maximum=1 << 16, what="an integer from 1 to 65536")
    dx = _values(dx, "dx")
    return _embedding_backward(dx, _token_ids(tokens, "tokens", dx.shape[:-1], vocab, "dx without its last axis"), vocab)


def _embedding_backward(dx, tokens, vocab):
    d = np.zeros((vocab, dx.shape[-1]), dtype=dx.dtype)
    np.add.at(d, tokens.reshape(-1), dx.reshape(-1, dx.shape[-1]))
    return d


# ------------------------------------------------------------------ the model


@dataclass(frozen=True)
class TransformerConfig:
    r"""A model's shape: ``vocab`` tokens, context ``n_ctx``, width ``d_model``, ``n_heads`` heads of
    :math:`d_k = d_{model}/H`, ``n_layers`` layers, an MLP in each (``mlp``), the ``scaling`` of
    the scores (one of :data:`TRANSFORMER_SCALINGS`), the float ``dtype``, and ``attention``
    (False: the control without it, every layer its MLP alone, so each position sees only its
    own token), and ``mup_base`` (a base width :math:`d_0`, with the ``"mup"`` scaling only:
    muP's read-out initialisation, :math:`W_U \sim N(0, d_0/d_{model}^2)`, Yang et al. 2022's
    :math:`1/\text{fan-in}^2` equal to the standard :math:`1/d_{model}` at :math:`d_0`;
    :mod:`~stats.training.mup_rules` has the learning rates that go with it)."""

    vocab: int
    n_ctx: int
    d_model: int
    n_heads: int
    n_layers: int = 2
    mlp: bool = True
    scaling: str = "sqrt"
    dtype: str = "float32"
    attention: bool = True
    mup_base: int | None = None

    def __post_init__(self):
        check_integer(self.vocab, "vocab", minimum=2, maximum=1 << 16, what="an integer from 2 to 65536")
        check_integer(self.n_ctx, "n_ctx", minimum=2, maximum=4096, what="an integer from 2 to 4096")
        check_integer(self.d_model, "d_model", maximum=8192)
        check_integer(self.n_heads, "n_heads", maximum=self.d_model, what=f"an integer from 1 to d_model = {self.d_model}")
        if self.d_model % self.n_heads:
            raise ValueError(f"n_heads must divide d_model = {self.d_model}; got {self.n_heads}")
        check_integer(self.n_layers, "n_layers", maximum=12, what="an integer from 1 to 12")
        for flag in ("mlp", "attention"):
            if not isinstance(getattr(self, flag), bool):
                raise TypeError(f"{flag} must be True or False; got {getattr(self, flag)!r}")
        scaling_named(self.scaling, among=TRANSFORMER_SCALINGS)
        check_dtype(self.dtype)
        if self.mup_base is not None:
            check_integer(self.mup_base, "mup_base", maximum=self.d_model, what=f"an integer from 1 to d_model = {self.d_model}")
            if self.scaling != "mup":
                raise ValueError(f"mup_base applies to the 'mup' scaling only; scaling is {self.scaling!r}")

    @property
    def d_k(self):
        return self.d_model // self.n_heads


class _Attended(NamedTuple):
    """What a layer's attention keeps for its backward pass (``A`` only where the scores are not a
    product: the section's backward recomputes the weights from Q and K)."""

    h: np.ndarray
    Q: np.ndarray
    K: np.ndarray
    V: np.ndarray
    Qa: np.ndarray
    Ka: np.ndarray
    cache: object
    O: np.ndarray
    A: np.ndarray | None
    logits: np.ndarray


class Transformer:
    """The parameters of one model (``params``, by name) and its loss and gradients by hand
    (module docstring).  ``rng`` draws the initialisation; ``formulas`` (a :class:`stats.Formulas`,
    None: this module's own) supplies the backward pieces the model calls -- LayerNorm's,
    the embedding's, the cross-entropy, the scalings' own steps -- so a mutant of one is
    trained as the model would be."""

    def __init__(self, config, rng, *, formulas=None):
        if not isinstance(config, TransformerConfig):
            raise TypeError(f"config must be a TransformerConfig; got {type(config).__name__}")
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy Generator; got {type(rng).__name__}")
        self.config = c = config
        self.dtype = check_dtype(c.dtype)
        self.scaling = scaling_named(c.scaling, among=TRANSFORMER_SCALINGS)
        self.formulas = _PIECES if formulas is None else formulas
        D, H, dk = c.d_model, c.n_heads, c.d_k
        p = {"tok": rng.standard_normal((c.vocab, D)), "pos": rng.standard_normal((c.n_ctx, D))}
        for i in range(c.n_layers):
            # Per head (H, 3, D, d_k), as a single head draws it, so the scaling changes it as it does
            # there; drawn for the control too, so its other parameters are the attention model's.
            W = rng.standard_normal((H, 3, D, dk)) / math.sqrt(D)
            # Only additive attention draws here (its v, one per head, after W); QK-norm's gain is a constant.
            extra = self.scaling.initialise(W, [rng] * H, d_k=dk, n_keys=c.n_ctx, formulas=self.formulas)
            wo = rng.standard_normal((D, D)) / math.sqrt(D)
            if c.attention:
                for j, name in enumerate(("wq", "wk", "wv")):
                    p[f"{i}.{name}"] = W[:, j].transpose(1, 0, 2).reshape(D, H * dk)
                p.update({f"{i}.{k}": v for k, v in extra.items()})
                p[f"{i}.wo"] = wo
                p[f"{i}.ln1.g"], p[f"{i}.ln1.b"] = np.ones(D), np.zeros(D)
            if c.mlp:
                p[f"{i}.ln2.g"], p[f"{i}.ln2.b"] = np.ones(D), np.zeros(D)
                p[f"{i}.w1"], p[f"{i}.b1"] = rng.standard_normal((D, 4 * D)) / math.sqrt(D), np.zeros(4 * D)
                p[f"{i}.w2"], p[f"{i}.b2"] = rng.standard_normal((4 * D, D)) / math.sqrt(4 * D), np.zeros(D)
        p["lnf.g"], p["lnf.b"] = np.ones(D), np.zeros(D)
        p["unembed"] = rng.standard_normal((D, c.vocab)) / (D / math.sqrt(c.mup_base) if c.mup_base else math.sqrt(D))
        self.params = {k: np.asarray(v, dtype=np.float64).astype(self.dtype) for k, v in p.items()}
        self.scale = self.dtype.type(self.scaling.factor(dk))
        self.mask = np.tril(np.ones((c.n_ctx, c.n_ctx), dtype=bool))

    def in_float64(self):
        """A float64 copy of this model (the same parameters, exactly): the step-0 gradient check runs on it."""
        copy = object.__new__(Transformer)
        copy.__dict__.update(self.__dict__)
        copy.config = TransformerConfig(**{**self.config.__dict__, "dtype": "float64"})
        copy.dtype = np.dtype(np.float64)
        copy.params = {k: v.astype(np.float64) for k, v in self.params.items()}
        copy.scale = float(self.scale)
        return copy

    # -------------------------------------------------------------- one layer's attention

    def _heads(self, x):
        """(B, T, D) -> (B*H, T, d_k)."""
        B, T, _ = x.shape
        return x.reshape(B, T, self.config.n_heads, self.config.d_k).transpose(0, 2, 1, 3).reshape(-1, T, self.config.d_k)

    def _merge(self, x, B):
        """(B*H, T, d_k) -> (B, T, D)."""
        _, T, dk = x.shape
        return x.reshape(B, self.config.n_heads, T, dk).transpose(0, 2, 1, 3).reshape(B, T, -1)

    def _scaling_params(self, i, B):
        """The scaling's own parameters of layer ``i``, one per (sequence, head) row of the batch."""
        return {k: np.tile(p, (B,) + (1,) * (p.ndim - 1)) for k in self.scaling.trains for p in (self.params[f"{i}.{k}"],)}

    def _attention(self, i, h):
        B, T, _ = h.shape
        Q, K, V = (self._heads(_linear(h, self.params[f"{i}.{n}"])) for n in ("wq", "wk", "wv"))
        _check_finite_activations(Q, K, V)
        params, mask = self._scaling_params(i, B), self.mask[:T, :T]
        if self.scaling.dot_product:
            Qa, Ka, cache = self.scaling.attention_inputs(params, Q, K, self.formulas)
            O, A = scaled_dot_product_attention(Qa, Ka, V, mask, scale=self.scale, return_weights=True)
            logits = self.scale * (Qa @ np.swapaxes(Ka, 1, 2))
        else:  # additive: its own scores, the causal mask, the section's softmax; the backward needs A
            logits, cache = self.scaling.scores(params, Q, K, scale=self.scale, formulas=self.formulas)
            A = softmax(np.where(mask, logits, -np.inf))
            Qa, Ka, O = Q, K, A @ V
        top = float(np.abs(np.where(mask, logits, 0)).max())
        saved = _Attended(h, Q, K, V, Qa, Ka, cache, O, None if self.scaling.dot_product else A, logits)
        return _linear(self._merge(O, B), self.params[f"{i}.wo"]), saved, top

    def _attention_backward(self, i, dout, saved, grads):
        h, V, O = saved.h, saved.V, saved.O
        B, T, _ = h.shape
        grads[f"{i}.wo"] = _matrix_grad(self._merge(O, B), dout)
        dO = self._heads(_linear(dout, self.params[f"{i}.wo"].T))
        params = self._scaling_params(i, B)
        if self.scaling.dot_product:
            dQa, dKa, dV = attention_backward(saved.Qa, saved.Ka, V, dO, self.mask[:T, :T], scale=self.scale)
            dQ, dK, own = self.scaling.input_grads(params, dQa, dKa, saved.cache)
        else:
            A = saved.A
            dV = np.swapaxes(A, 1, 2) @ dO
            dS = self.formulas.softmax_vjp(A, dO @ np.swapaxes(V, 1, 2))
            dQ, dK, own = self.scaling.score_grads(params, dS, saved.cache)
        for k, g in own.items():
            grads[f"{i}.{k}"] = g.reshape(B, *self.params[f"{i}.{k}"].shape).sum(axis=0)
        dh = 0
        for name, d in (("wq", dQ), ("wk", dK), ("wv", dV)):
            d = self._merge(d, B)
            grads[f"{i}.{name}"] = _matrix_grad(h, d)
            dh = dh + _linear(d, self.params[f"{i}.{name}"].T)
        return dh

    # -------------------------------------------------------------- the whole model

    def check_tokens(self, tokens, *, targets):
        """``tokens`` as an array, checked: 2-d integers in the vocabulary, with at most ``n_ctx``
        positions to read, and one more (at least two in all) when ``targets`` follow them."""
        t = np.asarray(tokens)
        if t.ndim != 2 or not np.issubdtype(t.dtype, np.integer):
            raise ValueError(f"tokens must be a 2-d integer array (sequences, positions); got {t.dtype} of shape {t.shape}")
        lo, hi = (2, self.config.n_ctx + 1) if targets else (1, self.config.n_ctx)
        if not lo <= t.shape[1] <= hi:
            raise ValueError(f"tokens must hold {lo} to {hi} positions (n_ctx = {self.config.n_ctx}"
                             f"{', and the targets' if targets else ''}); got {t.shape[1]}")
        if t.size and (t.min() < 0 or t.max() >= self.config.vocab):
            raise ValueError(f"tokens must lie in [0, vocab = {self.config.vocab}); got {t.min()} to {t.max()}")
        return t

    def loss_and_grads(self, tokens, *, grads=True, scored=None, alignment=False):
        r"""``(loss, grads, info)`` on ``tokens`` (sequences of ``T + 1`` token ids: the model reads
        the first T and predicts the next of each): the mean cross-entropy in nats over the
        ``scored`` predictions (a boolean (sequences, T) array; None: all), the gradient of every
        parameter (None when ``grads`` is False) and ``info``: ``max_logit``, each layer's largest
        |attention logit| (none without attention), and ``accuracy``, the share of scored
        predictions whose largest logit is the target's.  With ``alignment`` True, ``info`` also
        holds ``alignment``, each layer's mean query-key cosine (:meth:`attention_alignment`)."""
        if not isinstance(alignment, bool):
            raise TypeError(f"alignment must be True or False; got {alignment!r}")
        tokens = self.check_tokens(tokens, targets=True)
        x_in, y = tokens[:, :-1], tokens[:, 1:]
        scored = _scored_mask(scored, y.shape)
        logits, hf, lnf, saved, tops = self._forward(x_in)
        loss, dlogits = self.formulas.cross_entropy(logits, y, scored=scored)
        hit = logits.argmax(axis=-1) == y
        info = {"max_logit": tops, "accuracy": float(hit.mean() if scored is None else hit[scored].mean())}
        if alignment:
            info["alignment"] = self._alignment(saved)
        if not grads:
            return loss, None, info
        return loss, self._backward(x_in, dlogits, hf, lnf, saved), info

    def logits(self, tokens):
        """The next-token logits ``(sequences, positions, vocab)`` the model gives at every position of ``tokens``."""
        return self._forward(self.check_tokens(tokens, targets=False))[0]

    def attention_alignment(self, tokens):
        r"""Each layer's mean query-key cosine on ``tokens`` (sequences of at most ``n_ctx`` ids): over
        sequences, heads and query positions i, :math:`\cos(q_i, k_{j^*})` with :math:`j^*` the key
        that query weights most, q and k as the scores use them (after QK-norm's normalisation).
        A trained head's logit is :math:`|q||k|\cos` over its scaling's divisor: the cosine says how
        much of a logit's growth is alignment rather than length.  Empty without attention."""
        _, saved, _ = self._stream(self.check_tokens(tokens, targets=False))
        return self._alignment(saved)

    def _alignment(self, saved):
        out = []
        for _, att, _ in saved:
            if att is None:
                continue
            Qa, Ka, T = att.Qa, att.Ka, att.logits.shape[-1]
            # Softmax is monotone: the most-weighted key is the largest logit's.
            top = np.where(self.mask[:T, :T], att.logits, -np.inf).argmax(axis=-1)
            k = np.take_along_axis(Ka, top[..., None], axis=1)
            cos = np.sum(Qa * k, axis=-1) / np.maximum(np.linalg.norm(Qa, axis=-1) * np.linalg.norm(k, axis=-1), 1e-30)
            out.append(float(np.mean(cos, dtype=np.float64)))
        return out

    def residual_and_logits(self, tokens):
        """``(residual, logits)``: the residual stream ``(sequences, positions, d_model)`` after the last
        layer, before the final LayerNorm, and the logits :meth:`logits` gives, from one forward pass."""
        x, _, _ = self._stream(self.check_tokens(tokens, targets=False))
        p = self.params
        return x, _linear(_layer_norm(x, p["lnf.g"], p["lnf.b"])[0], p["unembed"])

    def _stream(self, x_in):
        """The residual stream after the last layer, before the final LayerNorm, and what the backward needs."""
        B, T = x_in.shape
        p, c = self.params, self.config
        x = p["tok"][x_in] + p["pos"][:T]
        saved, tops = [], []
        for i in range(c.n_layers):
            ln1 = att = None
            if c.attention:
                h, ln1 = _layer_norm(x, p[f"{i}.ln1.g"], p[f"{i}.ln1.b"])
                a, att, top = self._attention(i, h)
                x = x + a
                tops.append(top)
            mlp = None
            if c.mlp:
                h2, ln2 = _layer_norm(x, p[f"{i}.ln2.g"], p[f"{i}.ln2.b"])
                u = _linear(h2, p[f"{i}.w1"])
                u += p[f"{i}.b1"]
                t = _gelu_tanh(u)
                g = _gelu(u, t)
                x = x + _linear(g, p[f"{i}.w2"])
                x += p[f"{i}.b2"]
                mlp = (h2, ln2, u, t, g)
            saved.append((ln1, att, mlp))
        return x, saved, tops

    def _forward(self, x_in):
        p = self.params
        x, saved, tops = self._stream(x_in)
        hf, lnf = _layer_norm(x, p["lnf.g"], p["lnf.b"])
        logits = _linear(hf, p["unembed"])
        _check_finite_activations(logits)
        return logits, hf, lnf, saved, tops

    def _backward(self, x_in, dlogits, hf, lnf, saved):
        p, c = self.params, self.config
        T = x_in.shape[1]
        g = {"unembed": _matrix_grad(hf, dlogits)}
        dx, g["lnf.g"], g["lnf.b"] = self.formulas.layer_norm_backward(_linear(dlogits, p["unembed"].T), lnf, p["lnf.g"])
        for i in reversed(range(c.n_layers)):
            ln1, att, mlp = saved[i]
            if mlp is not None:
                h2, ln2, u, t, gl = mlp
                g[f"{i}.w2"], g[f"{i}.b2"] = _matrix_grad(gl, dx), dx.sum(axis=(0, 1))
                du = _gelu_backward(_linear(dx, p[f"{i}.w2"].T), u, t)
                g[f"{i}.w1"], g[f"{i}.b1"] = _matrix_grad(h2, du), du.sum(axis=(0, 1))
                dh2, g[f"{i}.ln2.g"], g[f"{i}.ln2.b"] = self.formulas.layer_norm_backward(_linear(du, p[f"{i}.w1"].T), ln2, p[f"{i}.ln2.g"])
                dx = dx + dh2
            if att is not None:
                dh = self._attention_backward(i, dx, att, g)
                dh1, g[f"{i}.ln1.g"], g[f"{i}.ln1.b"] = self.formulas.layer_norm_backward(dh, ln1, p[f"{i}.ln1.g"])
                dx = dx + dh1
        g["tok"] = self.formulas.embedding_backward(dx, x_in, c.vocab)
        g["pos"] = np.zeros_like(p["pos"])
        g["pos"][:T] = dx.sum(axis=0)
        return {k: g[k] for k in p}


def _check_finite_activations(*arrays):
    """A FloatingPointError when an activation has left the finite numbers: the parameters a step
    took there make a diverged run, which its trainer records as an outcome."""
    if not all(np.isfinite(a).all() for a in arrays):
        raise FloatingPointError("the model's activations left the finite numbers (the run has diverged)")


def _linear(x, W):
    """``x @ W`` for ``x`` of shape ``(..., n)``, as one matrix product of ``x``'s rows (numpy's
    stacked ``@`` multiplies each leading index on its own: a quarter slower at these shapes)."""
    return (x.reshape(-1, x.shape[-1]) @ W).reshape(*x.shape[:-1], W.shape[-1])


def _matrix_grad(inputs, d_out):
    """The gradient of W in ``inputs @ W`` from the output's gradient, summed over every leading axis."""
    return inputs.reshape(-1, inputs.shape[-1]).T @ d_out.reshape(-1, d_out.shape[-1])


#: The model's own formulas: what its backward calls and a scaling's own steps call (the fields of
#: :class:`stats.Formulas` that the model reads, which a mutant replaces).
_PIECES = SimpleNamespace(qk_normalize=qk_normalize, t5_fold_divisor=t5_fold_divisor, layer_norm_backward=layer_norm_backward,
                          embedding_backward=embedding_backward, cross_entropy=cross_entropy, softmax_vjp=softmax_vjp)
