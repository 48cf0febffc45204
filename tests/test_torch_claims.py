"""The PyTorch claims ("In PyTorch"): SDPA against the suite's forward pass, autograd against the
hand-derived backward pass, the kernel SDPA dispatches to on this CPU, and SDPA's dropout_p.

Bad input is refused without PyTorch; everything else needs it and skips, saying so, where
it is missing (the claims are then `untestable`, tests/test_checks.py)."""

from __future__ import annotations

import math

import pytest

import stats
from stats import FORMULAS, DropoutSim, SDPADispatchSim, SDPALargeScoreSim, TorchSDPASim, run_simulation, sdpa_cpu_backend
from stats.models import torch_sdpa


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(dtype="float8"), "dtype"),
        (dict(dtype=32), "dtype"),
        (dict(mask="upper"), "mask"),
        (dict(dropout_p=1.0), "dropout_p"),
        (dict(dropout_p=math.nan), "dropout_p"),
        (dict(dropout_p="0.1"), "dropout_p"),
        (dict(rank=2), "rank"),
        (dict(rank=6), "rank"),
        (dict(rank=4.0), "rank"),
        (dict(same_head_dim=1), "same_head_dim"),
    ],
)
def test_sdpa_cpu_backend_refuses_bad_input(kwargs, name):
    dtype = kwargs.pop("dtype", "float32")
    with pytest.raises((ValueError, TypeError), match=name):
        sdpa_cpu_backend(dtype, **kwargs)


@pytest.mark.parametrize(
    "cls, kwargs, name",
    [
        (TorchSDPASim, dict(dtype="float16"), "dtype"),  # compared only where the suite's bound is stated
        (TorchSDPASim, dict(mask="diagonal"), "mask"),
        (TorchSDPASim, dict(T_k=0), "T_k"),
        (TorchSDPASim, dict(d_v=10**6), "d_v"),
        (SDPADispatchSim, dict(expect="FAST"), "expect"),
        (SDPADispatchSim, dict(dropout_p=-0.1), "dropout_p"),
        (SDPADispatchSim, dict(same_head_dim="yes"), "same_head_dim"),
        (SDPALargeScoreSim, dict(dtype="int8"), "dtype"),
        (SDPALargeScoreSim, dict(n_keys=1), "n_keys"),
    ],
)
def test_the_pytorch_models_refuse_bad_parameters(cls, kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        cls(**kwargs)


# ------------------------------------------------------------------ with PyTorch


@pytest.mark.torch
def test_the_dispatch_table_chooses_and_runs_flash_only_for_4d_equal_widths_without_dropout():
    table = stats.sdpa_cpu_dispatch_table()
    assert len(table) == 4 * 4 * 2 * 3 * 2
    assert (table["chosen"] == table["ran"]).all(), table[table["chosen"] != table["ran"]]
    flash = (table["rank"] == 4) & table["same_head_dim"] & (table["dropout_p"] == 0)
    assert (table.loc[flash, "chosen"] == "FLASH_ATTENTION").all()
    assert (table.loc[~flash, "chosen"] == "MATH").all()


@pytest.mark.torch
def test_the_kernel_that_ran_is_read_off_the_autograd_node():
    import torch

    q = torch.randn(1, 2, 4, 8, dtype=torch.float64, requires_grad=True)
    fused = torch.nn.functional.scaled_dot_product_attention(q, q, q)
    assert torch_sdpa._kernel_that_ran(fused) == "FLASH_ATTENTION"
    v = torch.randn(1, 2, 4, 5, dtype=torch.float64, requires_grad=True)
    assert torch_sdpa._kernel_that_ran(torch.nn.functional.scaled_dot_product_attention(q, q, v)) == "MATH"


@pytest.mark.torch
def test_a_dispatch_row_violates_when_another_kernel_is_expected():
    good = run_simulation(SDPADispatchSim("float32", "none"), 2, seed=1).summary("dispatch")
    bad = run_simulation(SDPADispatchSim("float32", "none", expect="MATH"), 2, seed=1).summary("dispatch")
    assert good.n_above_one == 0 and bad.n_above_one == 2


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("mask", ["none", "bool", "additive", "causal"])
def test_sdpa_autograd_and_the_fused_kernel_agree_with_the_suite_well_inside_the_bound(dtype, mask):
    r = run_simulation(TorchSDPASim(dtype, mask), 64, seed=7)
    for stat in ("forward", "backward", "fused_equals_math"):
        s = r.summary(stat)
        assert s.n_nonfinite == 0 and s.maximum < 0.25, (stat, s.maximum)


def _forward_without_scale(Q, K, V, mask=None):
    return stats.scaled_dot_product_attention(Q * math.sqrt(Q.shape[-1]), K, V, mask)


@pytest.mark.torch
def test_a_forward_pass_without_its_scale_violates_the_sdpa_identity(monkeypatch):
    """Break the reference the SDPA check compares with (scores not divided by sqrt(d_k)) and
    watch every row violate."""
    monkeypatch.setattr(torch_sdpa, "scaled_dot_product_attention", _forward_without_scale)
    s = run_simulation(TorchSDPASim("float32", "none"), 16, seed=2).summary("forward")
    assert s.n_above_one == 16 and s.maximum > 100


@pytest.mark.torch
@pytest.mark.parametrize("mutant", ["ds-without-d-term", "dk-as-c-ds-q"])
def test_the_backward_mutants_violate_the_autograd_identity(mutant):
    from stats.claims.mutants import MUTANTS

    F = next(m.formulas for m in MUTANTS if m.name == mutant)
    # T_q = T_k: with unequal lengths the transposed mutant is a shape error, not a wrong number
    s = run_simulation(TorchSDPASim("float64", "causal", T_q=7), 16, seed=3, formulas=F).summary("backward")
    assert s.n_above_one == 16 and s.maximum > 1e6


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_sdpa_stays_finite_and_exact_where_the_naive_softmax_overflows(dtype):
    r = run_simulation(SDPALargeScoreSim(dtype), 2048, seed=4)
    for stat in ("fused", "math"):
        assert r.summary(stat).n_above_one == 0 and r.summary(stat).n_nonfinite == 0


@pytest.mark.torch
def test_a_softmax_summed_in_bfloat16_misses_the_float32_bound(monkeypatch):
    """Plant a kernel that subtracts the maximum (so it never overflows) but exponentiates and sums
    in bfloat16: its weights are finite and sum to about 1, yet the check refuses them on about 1% of
    the rows (the unsaturated ones; most rows at these scales are one-hot, where any kernel is
    exact): the claim's 6905 rows then hold about 70 violations, where one fails it."""
    import torch

    def low_precision(q, k, v, scale=None, **kw):
        s = (q @ k.transpose(-1, -2)) * scale
        e = torch.exp(s - s.max(dim=-1, keepdim=True).values)
        return (e / e.sum(dim=-1, keepdim=True)) @ v

    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", low_precision)
    r = run_simulation(SDPALargeScoreSim("bfloat16"), 1024, seed=4)
    assert r.summary("fused").n_above_one >= 5


@pytest.mark.torch
def test_sdpa_dropout_drops_the_stated_share_and_keeps_each_weight_unbiased():
    """SDPA's own dropout_p at p = 0.3 (V = I): the share dropped, one weight's ratio, and the
    values, at 4096 rows -- each within 5 standard errors (a false-fail rate below 1e-6)."""
    p = 0.3
    r = run_simulation(DropoutSim(p, 16, "sdpa"), 4096, seed=11)
    share, ratio = r.summary("dropped_share"), r.summary("first_ratio")
    assert abs(float(share.mean) - p) < 5 * math.sqrt(p * (1 - p) / (16 * 4096))
    assert abs(float(ratio.mean) - 1.0) < 5 * math.sqrt(p / (1 - p) / 4096)
    assert r.summary("values").n_above_one == 0


@pytest.mark.torch
def test_sdpa_dropout_with_the_wrong_rate_is_caught_by_the_claim():
    """The claim tests p = 0.1; a dropout at 0.12 (drawn by SDPA at a rate the text does not state)
    is rejected by its share check at the claim's own design."""
    from stats.claims import plan, simulate, evaluate
    from stats.claims.check_builders import Measure, mean
    from stats.claims.claim import Claim

    sim = DropoutSim(0.12, 32, "sdpa")
    check = mean("share dropped", Measure(sim, "dropped_share"), lambda F: 0.1, uses=(), target=0.005, relative=False,
                 sd=lambda: math.sqrt(0.1 * 0.9 / 32), tail_index=math.inf, requires=("torch",))
    claim = Claim("sdpa-dropout-rate", "In PyTorch", "dropout_p drops a share 0.1", "P(dropped) = 0.1", (check,))
    the_plan = plan((claim,), seed=5)
    table = evaluate(the_plan, simulate(the_plan, seed=5))
    assert table["verdict"].iloc[0] == "REJECTED", table[["estimate", "p_value", "verdict"]]


@pytest.mark.torch
def test_the_pytorch_claims_hold():
    from stats.claims import verify_claims

    table = verify_claims(select="sdpa-*,autograd-*,dropout-*", seed=432026, n_factor=0.05)
    assert (table["verdict"] == "pass").all(), table.loc[table["verdict"] != "pass", ["check", "verdict", "note"]]
    assert len(table) == 10 + 10 + 30 + 6 + 12
    assert FORMULAS.attention_backward is stats.attention_backward
