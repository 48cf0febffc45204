"""The proof claims (docs/proofs.md): every displayed equation proved, each planted wrong step
refuted by the proof of that step, undecidable never a pass, and the set fast."""

import time
from dataclasses import replace

import pytest
import sympy as sp

from stats import FORMULAS, MUTANTS, REGISTRY, evaluate, evaluate_mutants, plan, simulate
from stats.exact import EQUATIONS
from stats.exact import derivations as D
from stats.exact import symbolic
from stats.claims.statements.derivations import _shape_text
from stats.exact.symbolic import decide, expectation, gradient, matrix
from stats.formulas import with_formula

PROOF_MUTANTS = [m for m in MUTANTS if m.name.startswith("proof-")]


@pytest.fixture(scope="module")
def proofs():
    the_plan = plan(REGISTRY, select="proof-*", seed=1, n_factor=0.01)
    return the_plan, simulate(the_plan, seed=1)


def test_every_displayed_equation_is_proved_quickly(proofs):
    the_plan, results = proofs
    symbolic._cancels_to_zero.cache_clear()
    t0 = time.process_time()
    table = evaluate(the_plan, results)
    seconds = time.process_time() - t0
    assert len(table) >= 50 and (table["verdict"] == "pass").all(), table[table["verdict"] != "pass"].to_string()
    assert (table["test"] == "proof").all() and (table["estimate"] == 0).all() and (table["n"] == 0).all()
    assert table["note"].str.contains("proved for all inputs").all()
    assert seconds < 20, f"the proofs took {seconds:.1f} s of CPU (issue: under 20 s on one core)"


def test_each_wrong_step_fails_the_proof_of_that_step(proofs):
    the_plan, results = proofs
    table = evaluate_mutants(the_plan, results, PROOF_MUTANTS, seed=1).set_index("mutant")
    assert table["caught"].all(), table[~table["caught"]].to_string()
    # the claim that fails is the one holding the replaced step
    assert table.loc["proof-ds-sign", "claim"] == "proof-backward"
    assert table.loc["proof-jacobian-plus-aat", "claim"] == "proof-jacobian"
    assert table.loc["proof-exercise-mu4-minus-1", "claim"] == "proof-correlation"


def test_a_refuted_step_is_named_and_a_missing_transpose_is_a_shape_error(proofs):
    the_plan, results = proofs
    mutant = with_formula(equations=replace(EQUATIONS, row_term=lambda A, dA: A.multiply_elementwise(dA)[:, 0]))
    table = evaluate(the_plan, results, formulas=mutant).set_index("check")
    bad = table[table["verdict"] == "REJECTED"]
    # Only step 2 uses D; the masked entry's dS_ij = A_ij (...) is 0 whatever D is.
    assert set(bad.index) == {f"step 2: dS = A * (dA - D 1^T), {_shape_text(s)}" for s in D.SHAPES}
    assert bad["note"].str.contains("refuted: entry").all()
    no_t = with_formula(equations=replace(EQUATIONS, backward_dK=lambda dS, Q, c: c * dS * Q))
    row = evaluate(the_plan, results, formulas=no_t).set_index("check").loc[f"step 3: dK = c dS^T Q, {_shape_text(D.SHAPES[0])}"]
    assert row["verdict"] == "REJECTED" and "shapes" in row["note"]


def test_what_sympy_cannot_reduce_is_untestable_never_a_pass(proofs, monkeypatch):
    the_plan, results = proofs
    monkeypatch.setattr(symbolic, "_cancels_to_zero", lambda expr: sp.expand(expr) == 0)
    table = evaluate(the_plan, results)
    undecided = table[table["verdict"] == "untestable"]
    assert len(undecided) and undecided["note"].str.contains("SymPy decides neither way").all()
    assert not (table.loc[undecided.index, "verdict"] == "pass").any()


def test_decide_proves_refutes_or_leaves_undecided():
    x, y = sp.symbols("x y", positive=True)
    assert decide((x + y) ** 2, x**2 + 2 * x * y + y**2).holds is True
    assert decide(x / (x + y) + y / (x + y), 1).holds is True
    wrong = decide(sp.Matrix([[x, y]]), sp.Matrix([[x, x]]))
    assert wrong.holds is False and "entry 1,2" in wrong.reason
    assert decide(sp.Matrix([[x, y]]), sp.Matrix([[x], [y]])).holds is False  # shapes
    with pytest.raises(TypeError, match="lhs"):
        decide("x", x)
    with pytest.raises(ValueError, match="rhs"):
        decide(x, float("nan"))
    with pytest.raises(ValueError, match="finite"):
        decide(x, sp.oo)


def test_expectation_uses_independence_and_the_moments():
    q, k = sp.symbols("q k")
    m = {q: lambda j: {1: 0, 2: 2, 3: 0, 4: 12}[j], k: lambda j: {1: 0, 2: 3, 3: 0, 4: 27}[j]}
    assert expectation(q * k, m) == 0
    assert expectation((q * k) ** 2, m) == 6
    assert expectation(q**4 + 5, m) == 17
    with pytest.raises(ValueError, match="polynomial"):
        expectation(sp.exp(q), m)
    with pytest.raises(TypeError, match="moments"):
        expectation(q, {})
    with pytest.raises(TypeError, match="expr"):
        expectation([q], m)


def test_gradient_and_matrix_refuse_what_they_cannot_take():
    X = matrix("x", 2, 2)
    assert gradient(X[0, 0] * X[1, 1], X) == sp.Matrix([[X[1, 1], 0], [0, X[0, 0]]])
    with pytest.raises(TypeError, match="X"):
        gradient(X[0, 0], X * 2)
    with pytest.raises(ValueError, match="rows"):
        matrix("x", 0, 2)


def test_a_width_identity_needs_a_polynomial_displayed_side():
    # d + (d-1)(d-2)(d-3) agrees with d at d = 1, 2, 3 but is not the variance: refused.
    fake = lambda d, vq, vk: d * vq * vk + (d - 1) * (d - 2) * (d - 3)  # noqa: E731
    derived, displayed = D.score_variance(replace(EQUATIONS, score_variance=fake))
    assert decide(derived, displayed).holds is False
    assert decide(*D.score_variance(EQUATIONS)).holds is True


def test_the_winner_bound_certificate_refuses_a_false_bound():
    assert decide(*D.winner_bound(EQUATIONS, 4, 10)).holds is True
    stronger = replace(EQUATIONS, winner_bound=lambda T, g: sp.exp(g) / (sp.exp(g) + T - 2))
    assert decide(*D.winner_bound(stronger, 4, 10)).holds is False
    weaker = replace(EQUATIONS, winner_bound=lambda T, g: sp.exp(g) / (sp.exp(g) + T))  # true, only weaker
    assert decide(*D.winner_bound(weaker, 4, 10)).holds is True


def test_the_proof_checks_are_re_evaluated_only_for_equation_mutants():
    assert "equations" in {f for m in PROOF_MUTANTS for f in m.formulas.__dataclass_fields__
                           if getattr(m.formulas, f) is not getattr(FORMULAS, f)}
    checks = [ch for c in REGISTRY if c.id.startswith("proof-") for ch in c.checks]
    assert checks and all(ch.uses == ("equations",) for ch in checks)
