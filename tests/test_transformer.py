"""The small transformer (:mod:`stats.training.transformer`): every parameter's hand-derived
gradient against central finite differences (float64) and against PyTorch's autograd, under
every scaling a causal layer takes; its pieces' backward passes one by one; the float32 model
the float64 one rounded; bad shapes refused by name."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stats.exact.gradcheck import numerical_gradient
from stats.training.transformer import (
    TRANSFORMER_SCALINGS,
    Transformer,
    TransformerConfig,
    cross_entropy,
    embedding_backward,
    gelu,
    gelu_backward,
    layer_norm,
    layer_norm_backward,
)

#: Small enough that finite differences over every parameter take a fraction of a second.
TINY = dict(vocab=7, n_ctx=5, d_model=8, n_heads=2, n_layers=2, dtype="float64")


def _model(scaling="sqrt", mlp=True, seed=0, **kw):
    return Transformer(TransformerConfig(**{**TINY, "scaling": scaling, "mlp": mlp, **kw}), np.random.default_rng(seed))


def _tokens(seed=1, batch=3, length=6, vocab=7):
    return np.random.default_rng(seed).integers(0, vocab, (batch, length))


def _relative_error(a, b):
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


def _assert_gradients_match_finite_differences(model, tokens, grads):
    """Every parameter's hand-derived gradient ``grads`` against central differences of the loss,
    to 1e-6 relative (see test_every_gradient_matches_finite_differences)."""
    assert set(grads) == set(model.params)
    for name, p in model.params.items():

        def loss_at(value, name=name):
            saved = model.params[name]
            model.params[name] = value
            try:
                return model.loss_and_grads(tokens, grads=False)[0]
            finally:
                model.params[name] = saved

        assert _relative_error(grads[name], numerical_gradient(loss_at, p)) < 1e-6, name


@pytest.mark.parametrize("mlp", [True, False])
@pytest.mark.parametrize("scaling", TRANSFORMER_SCALINGS)
def test_every_gradient_matches_finite_differences(scaling, mlp):
    """Central differences (eps = 1e-6, float64: truncation and rounding near 1e-10) against the
    hand-derived backward, parameter by parameter: a relative error of 1e-6 is 10^4 times what
    rounding explains and far below any mistake in a term (the mutants miss by 1e-2 or more)."""
    model, tokens = _model(scaling, mlp), _tokens()
    _, grads, _ = model.loss_and_grads(tokens)
    _assert_gradients_match_finite_differences(model, tokens, grads)


@pytest.mark.parametrize("mlp", [True, False])
def test_the_control_without_attention_has_exact_gradients_and_sees_only_its_own_token(mlp):
    """``attention=False``: no attention parameters, every gradient exact, and a position's logits
    depend on its own token alone (changing another token leaves them bit for bit)."""
    model, tokens = _model(attention=False, mlp=mlp), _tokens()
    assert not any(k.split(".")[-1] in ("wq", "wk", "wv", "wo") for k in model.params)
    loss, grads, info = model.loss_and_grads(tokens)
    assert info["max_logit"] == [] and set(grads) == set(model.params)
    _assert_gradients_match_finite_differences(model, tokens, grads)
    other = tokens[:, :-1].copy()
    other[:, 0] = (other[:, 0] + 1) % 7
    np.testing.assert_array_equal(model.logits(other)[:, 1:], model.logits(tokens[:, :-1])[:, 1:])


def test_the_folded_model_is_the_scaled_one_at_step_0():
    """T5's folding: no division, W_Q drawn divided by sqrt(d_k): the same logits, loss and
    attention gradients as the scaled model at initialisation (their W_Q gradients differ by
    the factor sqrt(d_k), the folded parameterisation's)."""
    tokens = _tokens()
    sqrt, t5 = _model("sqrt"), _model("t5")
    ls, gs, info_s = sqrt.loss_and_grads(tokens)
    lt, gt, info_t = t5.loss_and_grads(tokens)
    assert lt == pytest.approx(ls, rel=1e-12) and info_t["max_logit"] == pytest.approx(info_s["max_logit"], rel=1e-12)
    d_k = sqrt.config.d_k
    np.testing.assert_allclose(t5.params["0.wq"] * math.sqrt(d_k), sqrt.params["0.wq"], rtol=1e-12)
    np.testing.assert_allclose(gt["0.wq"], gs["0.wq"] * math.sqrt(d_k), rtol=1e-9)
    np.testing.assert_allclose(gt["0.wk"], gs["0.wk"], rtol=1e-9)


def test_the_attention_is_causal():
    """Changing the token at position j leaves the model's logits at every earlier position
    exactly as they were, and changes them at j."""
    model = _model()
    tokens = _tokens(batch=2, length=5)
    base = model.logits(tokens)
    assert base.shape == (2, 5, 7)
    for j in range(5):
        other = tokens.copy()
        other[:, j] = (other[:, j] + 1) % 7
        changed = model.logits(other)
        np.testing.assert_array_equal(changed[:, :j], base[:, :j])
        assert np.abs(changed[:, j] - base[:, j]).min() > 0


def test_float32_is_the_float64_model_rounded():
    """The same draws rounded to float32: the loss within float32's rounding of the float64 one,
    and every gradient within 1e-3 of it (relative to its largest entry)."""
    tokens = _tokens()
    l64, g64, _ = _model(dtype="float64").loss_and_grads(tokens)
    m32 = _model(dtype="float32")
    l32, g32, _ = m32.loss_and_grads(tokens)
    assert all(v.dtype == np.float32 for v in m32.params.values())
    assert all(g.dtype == np.float32 for g in g32.values())
    assert l32 == pytest.approx(l64, rel=1e-5)
    up = m32.in_float64()  # the float32 model's own parameters, exactly, in float64
    assert up.config.dtype == "float64" and all(up.params[k].dtype == np.float64 for k in up.params)
    assert all(np.array_equal(up.params[k], m32.params[k].astype(np.float64)) for k in up.params)
    assert up.loss_and_grads(tokens, grads=False)[0] == pytest.approx(l32, rel=1e-5)
    assert m32.params["0.wq"].dtype == np.float32  # the copy leaves the model as it was
    for name in g64:
        assert _relative_error(g32[name].astype(np.float64), g64[name]) < 1e-3, name


@pytest.mark.parametrize("scaling", ["sqrt", "none"])
def test_the_alignment_is_each_query_s_cosine_with_the_key_it_weights_most(scaling):
    """One layer by hand, loop by loop: for every sequence, head and query, the causal softmax's
    most-weighted key, and the cosine of the query with it; the layer's mean is what
    attention_alignment reports, and what loss_and_grads reports with alignment=True."""
    model = _model(scaling, mlp=False, n_layers=1)
    tokens = _tokens(batch=3, length=5)
    p, H, dk = model.params, model.config.n_heads, model.config.d_k
    x = p["tok"][tokens] + p["pos"][:5]
    h = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * p["0.ln1.g"] + p["0.ln1.b"]
    cosines = []
    for b in range(3):
        for head in range(H):
            cols = slice(head * dk, (head + 1) * dk)
            q, k = h[b] @ p["0.wq"][:, cols], h[b] @ p["0.wk"][:, cols]
            for i in range(5):
                w = np.exp(model.scale * (k[:i + 1] @ q[i]))
                j = int(np.argmax(w / w.sum()))
                cosines.append(q[i] @ k[j] / (np.linalg.norm(q[i]) * np.linalg.norm(k[j])))
    (got,) = model.attention_alignment(tokens)
    assert got == pytest.approx(np.mean(cosines), rel=1e-12)
    targets = np.concatenate([tokens, tokens[:, :1]], axis=1)
    assert model.loss_and_grads(targets, grads=False, alignment=True)[2]["alignment"] == [got]
    assert "alignment" not in model.loss_and_grads(targets, grads=False)[2]
    with pytest.raises(TypeError, match="alignment"):
        model.loss_and_grads(targets, alignment=1)


# ------------------------------------------------------------------ the pieces


def test_layer_norm_backward_matches_finite_differences():
    rng = np.random.default_rng(3)
    x, g, b, dy = rng.standard_normal((2, 3, 6)), rng.standard_normal(6), rng.standard_normal(6), rng.standard_normal((2, 3, 6))
    y, cache = layer_norm(x, g, b)
    assert np.allclose(((y - b) / g).mean(axis=-1), 0) and np.allclose(((y - b) / g).var(axis=-1), 1, rtol=1e-4)
    dx, dg, db = layer_norm_backward(dy, cache, g)
    np.testing.assert_allclose(dx, numerical_gradient(lambda v: (layer_norm(v, g, b)[0] * dy).sum(), x), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(dg, numerical_gradient(lambda v: (layer_norm(x, v, b)[0] * dy).sum(), g), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(db, numerical_gradient(lambda v: (layer_norm(x, g, v)[0] * dy).sum(), b), rtol=1e-7, atol=1e-9)


def test_cross_entropy_and_its_gradient():
    """The loss is -log of the target's probability, averaged (a uniform model scores log V), and
    its gradient matches finite differences."""
    rng = np.random.default_rng(4)
    z, y = rng.standard_normal((2, 3, 5)), rng.integers(0, 5, (2, 3))
    loss, dz = cross_entropy(z, y)
    p = np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)
    assert loss == pytest.approx(-np.log(np.take_along_axis(p, y[..., None], -1)).mean(), rel=1e-12)
    assert cross_entropy(np.zeros((1, 3, 5)), y[:1])[0] == pytest.approx(math.log(5))
    np.testing.assert_allclose(dz, numerical_gradient(lambda v: cross_entropy(v, y)[0], z), rtol=1e-7, atol=1e-10)
    big = cross_entropy(np.array([[[1e4, 0.0, -1e4]]]), np.array([[1]]))[0]
    assert big == pytest.approx(1e4) and math.isfinite(big)  # stable: no overflow at logits of 1e4


def test_embedding_backward_adds_repeated_tokens():
    dx = np.arange(12.0).reshape(1, 4, 3)
    tokens = np.array([[2, 0, 2, 2]])
    d = embedding_backward(dx, tokens, 4)
    np.testing.assert_array_equal(d[2], dx[0, 0] + dx[0, 2] + dx[0, 3])
    np.testing.assert_array_equal(d[0], dx[0, 1])
    assert not d[[1, 3]].any()


def test_gelu_backward_matches_finite_differences():
    u = np.linspace(-4, 4, 41)
    # Differencing a sum of 41 terms of order 1 at eps = 1e-6: rounding of about 41 u / eps = 1e-8.
    np.testing.assert_allclose(gelu_backward(np.ones_like(u), u), numerical_gradient(lambda v: gelu(v).sum(), u),
                               rtol=1e-7, atol=1e-8)


# ------------------------------------------------------------------ PyTorch as the oracle


def _torch_loss(model, tokens):
    """The same model written with torch's own layers and autograd (float64)."""
    import torch
    import torch.nn.functional as F

    c = model.config
    P = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in model.params.items()}
    t = torch.tensor(tokens)
    x_in, y = t[:, :-1], t[:, 1:]
    B, T = x_in.shape
    x = P["tok"][x_in] + P["pos"][:T]
    H, dk = c.n_heads, c.d_k
    mask = torch.ones(T, T, dtype=torch.bool).tril()
    for i in range(c.n_layers):
        h = F.layer_norm(x, (c.d_model,), P[f"{i}.ln1.g"], P[f"{i}.ln1.b"], eps=1e-5)
        q, k, v = ((h @ P[f"{i}.{n}"]).reshape(B, T, H, dk).transpose(1, 2) for n in ("wq", "wk", "wv"))
        if c.scaling == "qknorm":
            q = F.normalize(q, dim=-1) * P[f"{i}.gain"][None, :, None, None]
            k = F.normalize(k, dim=-1)
        if c.scaling == "additive":  # s_ij = v_h . tanh(q_i + k_j), masked, softmax
            s = torch.tanh(q[:, :, :, None, :] + k[:, :, None, :, :]) @ P[f"{i}.v"][None, :, None, :, None]
            o = torch.softmax(s[..., 0].masked_fill(~mask, -math.inf), dim=-1) @ v
        else:
            scale = {"none": 1.0, "sqrt": 1 / math.sqrt(dk), "mup": 1 / dk, "qknorm": 1.0, "t5": 1.0}[c.scaling]
            o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)
        x = x + o.transpose(1, 2).reshape(B, T, -1) @ P[f"{i}.wo"]
        if c.mlp:
            h2 = F.layer_norm(x, (c.d_model,), P[f"{i}.ln2.g"], P[f"{i}.ln2.b"], eps=1e-5)
            x = x + F.gelu(h2 @ P[f"{i}.w1"] + P[f"{i}.b1"], approximate="tanh") @ P[f"{i}.w2"] + P[f"{i}.b2"]
    hf = F.layer_norm(x, (c.d_model,), P["lnf.g"], P["lnf.b"], eps=1e-5)
    loss = F.cross_entropy((hf @ P["unembed"]).reshape(-1, c.vocab), y.reshape(-1))
    loss.backward()
    return float(loss.detach()), {k: p.grad.numpy() for k, p in P.items()}


@pytest.mark.torch
@pytest.mark.parametrize("mlp", [True, False])
@pytest.mark.parametrize("scaling", TRANSFORMER_SCALINGS)
def test_every_gradient_matches_pytorch_autograd(scaling, mlp):
    """PyTorch's layers (layer_norm, scaled_dot_product_attention, gelu, cross_entropy) and
    autograd in float64 against the hand-derived model: the loss and every gradient to 1e-10
    relative (float64 rounding over a few hundred operations)."""
    model, tokens = _model(scaling, mlp, d_model=16, n_heads=4, n_ctx=8), _tokens(length=9)
    loss, grads, _ = model.loss_and_grads(tokens)
    t_loss, t_grads = _torch_loss(model, tokens)
    assert loss == pytest.approx(t_loss, rel=1e-12)
    for name in model.params:
        assert _relative_error(grads[name], t_grads[name]) < 1e-10, name


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize("kw, name", [
    (dict(n_heads=3), "n_heads"), (dict(n_heads=0), "n_heads"), (dict(vocab=1), "vocab"), (dict(n_ctx=1), "n_ctx"),
    (dict(n_layers=0), "n_layers"), (dict(d_model=2.5), "d_model"), (dict(scaling="bilinear"), "scaling"),
    (dict(dtype="float16"), "dtype"),
])
def test_a_shape_the_model_cannot_honour_is_refused_by_name(kw, name):
    with pytest.raises((ValueError, TypeError), match=name):
        TransformerConfig(**{**TINY, **kw})


def test_bad_configs_and_tokens_are_refused_by_name():
    with pytest.raises(TypeError, match="mlp"):
        TransformerConfig(**{**TINY, "mlp": 1})
    with pytest.raises(TypeError, match="attention"):
        TransformerConfig(**{**TINY, "attention": "no"})
    with pytest.raises(TypeError, match="config"):
        Transformer(dict(TINY), np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng"):
        Transformer(TransformerConfig(**TINY), 0)
    model = _model()
    for tokens, match in ((np.array([[0, 7]]), "vocab"), (np.array([[-1, 2]]), "vocab"), (np.zeros((2, 7), int), "n_ctx"),
                          (np.zeros((2, 1), int), "positions"), (np.zeros(4, int), "2-d"), (np.zeros((2, 3)), "integer")):
        with pytest.raises(ValueError, match=match):
            model.loss_and_grads(tokens)
    with pytest.raises(ValueError, match="1 to 5 positions"):
        model.logits(np.zeros((1, 6), int))
