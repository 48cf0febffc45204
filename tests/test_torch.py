"""Cross-checks against PyTorch in float64 (skipped only where torch is not installed)."""

import numpy as np
import pytest

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch", reason="PyTorch not installed: `make torch` adds the CPU build")
F = torch.nn.functional

from stats import attention_backward, scaled_dot_product_attention  # noqa: E402


def torch_reference(Q, K, V, mask, dO):
    q, k, v = (torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in (Q, K, V))
    m = None if mask is None else torch.tensor(mask)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=m)
    out.backward(torch.tensor(dO))
    return out.detach().numpy(), q.grad.numpy(), k.grad.numpy(), v.grad.numpy()


MASKS = ["none", "bool", "additive", "causal", "fully-masked-row"]


@pytest.mark.parametrize("kind", MASKS)
def test_forward_and_backward_match_pytorch(kind, rng):
    B, H, T_q, T_k, d_k, d_v = 2, 3, 5, 7, 4, 6
    Q = rng.normal(size=(B, H, T_q, d_k))
    K = rng.normal(size=(B, H, T_k, d_k))
    V = rng.normal(size=(B, H, T_k, d_v))
    dO = rng.normal(size=(B, H, T_q, d_v))
    mask = {
        "none": None,
        "bool": rng.random((B, 1, T_q, T_k)) < 0.6,
        "additive": rng.normal(size=(T_q, T_k)),
        "causal": np.tril(np.ones((T_q, T_k), bool)),
        "fully-masked-row": np.ones((B, H, T_q, T_k), bool),
    }[kind]
    if kind == "bool":
        mask[..., 0] = True
    if kind == "fully-masked-row":
        mask[:, :, 2, :] = False
    O_t, dQ_t, dK_t, dV_t = torch_reference(Q, K, V, mask, dO)
    O = scaled_dot_product_attention(Q, K, V, mask)
    np.testing.assert_allclose(O, O_t, rtol=0, atol=1e-12)
    for ours, theirs in zip(attention_backward(Q, K, V, dO, mask), (dQ_t, dK_t, dV_t)):
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-10)


def test_pytorch_zeroes_a_fully_masked_row_too(rng):
    Q = rng.normal(size=(1, 3, 2))
    mask = np.ones((3, 3), bool)
    mask[0] = False
    O_t, *_ = torch_reference(Q, Q, Q, mask, np.ones((1, 3, 2)))
    assert np.all(O_t[0, 0] == 0)
