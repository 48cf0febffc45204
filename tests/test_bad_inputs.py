"""Every public name of ``stats`` against NaN, inf, empty, wrong dtype, shape, type and range.

For each public function and model class there is one good call below.  Each argument of
it is replaced in turn by each bad value; the call must then either raise ``ValueError``
or ``TypeError`` *from the suite's own code* (the innermost frame of the traceback lies in
``stats/``: a check, not numpy failing deep inside), or return an answer with no NaN in
it.  Every public name must be in one of the tables (a new export without an entry fails
:func:`test_every_public_name_is_covered`), and the records and constants that are not
called with user input say why.

The whole matrix (every argument of every good call against every bad value, about 4000
calls) runs in the fast tier, one test per public name: the calls themselves take a few
seconds, where one pytest item per call cost minutes of collection and reporting.  A
failure lists every (argument, bad value) pair of that name that was not refused.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import os
import traceback
import types

import numpy as np
import pandas as pd
import pytest

import stats

STATS_DIR = os.path.dirname(stats.__file__)
RNG = lambda: np.random.default_rng(0)  # noqa: E731
QKV = lambda: tuple(np.random.default_rng(1).standard_normal((4, 3)) for _ in range(3))  # noqa: E731

# name -> (args, kwargs) of a good call.  Arrays are small so that every perturbed call is fast.
_q, _k, _v = QKV()
_o, _lse = stats.tiled_attention_forward(_q, _k, _v, block_size=2)
_ms = stats.moment_summary(np.arange(6.0))
_rs = stats.summarize_rows(np.arange(6.0))
_ln_x = np.random.default_rng(2).standard_normal((2, 3, 4))
_ln_y, _ln_cache = stats.layer_norm(_ln_x, np.ones(4), np.zeros(4))
_tiny_lm = stats.TransformerConfig(vocab=5, n_ctx=4, d_model=4, n_heads=2, n_layers=1, dtype="float64")
_tiny_model = stats.Transformer(_tiny_lm, np.random.default_rng(0))
_tiny_recall = stats.TransformerConfig(vocab=8, n_ctx=8, d_model=4, n_heads=1, n_layers=1, mlp=False)
_tiny_mup = stats.TransformerConfig(vocab=16, n_ctx=16, d_model=8, n_heads=2, n_layers=1, scaling="mup", mup_base=4)
GOOD = {
    "as_seed_sequence": ((5,), {}),
    "attention_backward": ((_q, _k, _v, _q), {}),
    "attention_flops": ((3, 4, 5, 6), {}),
    "attention_memory": ((8, 12, 4, 3), dict(block_size=4, seed=1)),
    "attention_memory_alone": (((8, 16), 4, 3), dict(block_size=4, seed=1)),
    "block_generator": ((np.random.SeedSequence(1), 0), {}),
    "conservative_pvalue": ((0.5, 100), dict(a1=0.1, a2=0.2)),
    "check_scaling": (("sqrt",), {}),
    "cosine_mean": ((16, 0.5), {}),
    "delta_method": ((lambda m: m[0] / m[1], [1.0, 2.0], [0.1, 0.2]), {}),
    "lr_sensitivity": (((1e-3, 1e-2, 1e-1), np.array([[0.5, 0.6], [0.1, 0.2], [np.inf, 0.4]]), 0.7),
                       dict(replicates=20, seed=1)),
    "lr_window": (((1e-3, 1e-2, 1e-1), np.array([[0.5, 0.6], [0.1, 0.2], [np.inf, 0.4]]), np.array([0.7, 0.7])),
                  dict(tolerance=0.2, replicates=20, seed=1)),
    "detectable_shift": ((0.1,), dict(alpha=0.01)),
    "cosine_moments": ((16,), {}),
    "detectable_discrepancy": ((100,), dict(sd=1.0, alpha=0.01)),
    "detectable_ks_distance": ((100,), dict(alpha=0.01)),
    "distribution_test": ((np.linspace(-1, 1, 20), stats.diff_chi2(4, 0.25, 0.25)), dict(alpha=0.01)),
    "draw_entries": ((np.random.default_rng(0), "gaussian", (3,)), {}),
    "dropout_weights": ((np.full((2, 4), 0.25), 0.1, np.random.default_rng(0)), {}),
    "edgeworth_coefficients": (((1.0, 0.0, 3.0, 0.0, 15.0),), dict(test="log_variance")),
    "entry_law": (("student_t",), dict(df=10)),
    "exact_saturation_scores": ((np.random.default_rng(0), np.random.default_rng(1), 3, 8, 4, 0.5), {}),
    "exp_overflow_threshold": (("float16",), {}),
    "float_format": (("float16",), {}),
    "format_max": (("float16",), {}),
    "gap_density": ((8,), {}),
    "holm_adjust": (([0.01, 0.5],), dict(family_size=3)),
    "interval_test": ((0.5, 0.1, 0.2, 0.4), dict(alpha=0.01)),
    "law_moment": ((stats.entry_law("gaussian"), 4), {}),
    "mean_estimate": (([1.0, 2.0, 4.0],), {}),
    "mean_test": (([1.0, 2.0, 4.0], 2.0), dict(alpha=0.01)),
    "merge_moments": ((_ms, _ms), {}),
    "merge_power_sums": (((3, 1.0, 2.0, 0.0, 2.0), (3, 2.0, 2.0, 0.0, 2.0)), {}),
    "merge_row_summaries": ((_rs, _rs), {}),
    "moment_summary": (([1.0, 2.0, 4.0],), {}),
    "naive_softmax": (([1.0, 2.0],), {}),
    "proportion_estimate": ((3, 10), {}),
    "proportion_test": ((3, 10, 0.3), dict(alpha=0.01)),
    "share_interval_test": ((3, 10, 0.2, 0.5), dict(alpha=0.01)),
    "qknorm_gain": ((32,), {}),
    "qknorm_logit_mean": ((16, 0.5), dict(gain=3.0)),
    "quantile_estimate": ((np.arange(20.0), 0.5), {}),
    "required_ks_sample_size": ((0.2,), dict(alpha=0.01)),
    "required_sample_size": ((0.1,), dict(sd=1.0, alpha=0.01)),
    "resolve_saturation_method": (("auto", stats.entry_law("gaussian")), {}),
    "row_trace": ((np.full((2, 4), 0.25),), {}),
    "sample_queries_keys": ((3, 4), dict(seed=1)),
    "sample_scores": ((5, 4), dict(seed=1)),
    "saturation_asymptotic_value": ((4096, 8), {}),
    "saturation_asymptotics": ((8,), {}),
    "saturation_exact": ((4, 8), {}),
    "central_interval": ((), dict(rows=np.random.default_rng(2).random((20, 8)), n_queries=2, keys="fresh")),
    "grade_by_readings": (({"fresh": True, "shared": False},), {}),
    "largest_consistent_n": ((), dict(lo=0.4, hi=0.5, rows=np.random.default_rng(2).random((20, 8)), keys="shared",
                                      n_max=64)),
    "printed_value_mass": ((), dict(lo=0.4, hi=0.5, rows=np.random.default_rng(2).random((20, 8)), n_queries=2,
                                    keys="fresh")),
    "procedure_expectation": ((4,), dict(scaling="none", n_keys=8)),
    "procedure_sample": ((), dict(d_k=2, key_sets=2, inner=4, n_keys=4, seed=1)),
    "quantile_with_mcse": ((np.linspace(0, 1, 50), 0.3), {}),
    "ratio_exceeds": ((), dict(num=np.random.default_rng(2).random((20, 8)), den=np.random.default_rng(3).random((20, 8)),
                               n_queries=2, keys="fresh", threshold=1.0, size=50, seed=1)),
    "statistic_draws": ((), dict(rows=np.random.default_rng(2).random((20, 8)), n_queries=16, keys="shared", size=10,
                                 seed=1)),
    "saturation_given_scale": ((1.0, 8), {}),
    "saturation_limit": ((8,), {}),
    "saturation_row_statistics": ((np.zeros((2, 4)),), {}),
    "saturation_stats": ((4, 8), dict(n_rows=64, seed=1)),
    "scale_moments": ((_ms, 2.0), {}),
    "scaled_dot_product_attention": ((_q, _k, _v), {}),
    "scaled_score_moments": ((8, 0.5), {}),
    "score_central_moments": ((8, 0.5), {}),
    "score_chunks": ((5, 4), dict(seed=1)),
    "score_cumulants": ((8, 0.5), {}),
    "score_distribution": ((8, 0.5), {}),
    "score_scale": ((8,), {}),
    "score_summary": ((5, 4), dict(seed=1)),
    "score_tail_index": (("student_t", 0.5), {}),
    "simulation_seed": ((1, "scores/d_k=4"), {}),
    "softmax": (([1.0, 2.0],), {}),
    "softmax_jacobian": (([0.25, 0.75],), {}),
    "softmax_terms": (([1.0, 2.0],), {}),
    "softmax_vjp": (([0.25, 0.75], [1.0, -1.0]), {}),
    "stream_key": (("scores",), dict(d_k=4)),
    "summarize_rows": ((np.arange(6.0),), {}),
    "t5_step_ratio": (("adam", "query", 64), {}),
    "tail_error": ((100,), dict(alpha=1e-3, a1=0.1, a2=0.2)),
    "tail_sample_size": ((), dict(alpha=1e-3, a1=0.1, a2=0.2)),
    "tiled_attention_backward": ((_q, _k, _v, _o, _lse, _q), dict(block_size=2)),
    "tiled_attention_forward": ((_q, _k, _v), dict(block_size=2)),
    "variance_estimate": (([1.0, 2.0, 4.0, 8.0],), {}),
    "two_sample_test": (([1.0, 2.0, 4.0, 8.0, 3.0], [1.0, 2.5, 4.0, 7.0, 3.0], 0.0), dict(alpha=0.01)),
    "variance_ratio_test": (([1.0, 2.0, 4.0, 8.0, 3.0], [1.0, 2.5, 4.0, 7.0, 3.0], 1.0), dict(alpha=0.01)),
    "variance_test": (([1.0, 2.0, 4.0, 8.0, 3.0], 5.0), dict(alpha=0.01)),
    "winner_bound": ((1.0, 8), {}),
    # The simulated models: their constructors validate every parameter.
    "BackwardSim": ((), dict(T_q=3, T_k=5, d_k=4, d_v=3)),
    "CosineSim": ((16, 0.5), {}),
    "DropoutSim": ((), dict(p=0.1, n_keys=8)),
    "EntryLaw": (("student_t", 10.0), {}),
    "FlopSim": ((), dict(max_size=8)),
    "HeadSim": ((8, "sqrt"), {}),
    "JacobianSim": ((), dict(n_keys=8)),
    "SaturationSim": ((8, 8), {}),
    "ScoreSim": ((8, 0.5), {}),
    "SmallScoreSim": ((0.01, 8), {}),
    "SpectrumSim": ((8, 8), {}),
    "StableSoftmaxSim": ((), dict(dtype="float16", n_keys=8)),
    "T5Sim": ((8, "adam"), {}),
    "TrainingSim": ((8, "sqrt", "adam", 0.01, 3, 8), dict(warmup=1, stop_when_learned=False, dtype="float32")),
    "PrecisionSim": ((8, "sqrt", "adam", 0.01, 3, 8), {}),
    "precision_gaps": (([np.random.default_rng(0)], [np.random.default_rng(0)]), dict(d_k=4, d_model=4, lr=0.01, steps=2)),
    "LRSweepSim": ((8, (0.01, 0.1)), dict(steps=2)),
    "FoldingSim": ((8, "adam", 0.01, 3), {}),
    "fold_gaps": (([np.random.default_rng(0)], [np.random.default_rng(0)]), dict(d_k=4, d_model=4, optimizer="adam", lr=0.01, steps=2)),
    "folded_query_lr_factor": (("adam", 64), {}),
    "mup_lr_multiplier": ((256, 16), {}),
    "qk_normalize": ((np.ones((2, 3)), np.ones((2, 3))), {}),
    "t5_fold_divisor": ((64,), {}),
    "Heads": (([np.random.default_rng(0), np.random.default_rng(1)],), dict(d_model=4, d_k=4, scaling=stats.SCALINGS["sqrt"], n_keys=3,
                                                                                        dtype="float32")),
    "Trainer": (([np.random.default_rng(0), np.random.default_rng(1)],), dict(d_k=4, d_model=4, lr=0.01, steps=2, warmup=1, dtype="float32",
                                                                             stop_when_learned=False)),
    "optimizer_named": (("adam",), {}),
    "scaling_named": (("sqrt",), {}),
    "retrieval_episodes": (([np.random.default_rng(0), np.random.default_rng(1)], 3, 4), {}),
    "train_heads": (([np.random.default_rng(0), np.random.default_rng(1)],), dict(d_k=4, d_model=4, lr=0.01, steps=2, warmup=1, dtype="float32",
                                                                                 stop_when_learned=False)),
    "check_warmup": ((3, 10), {}),
    "warmed_lr": ((np.full(2, 0.01), 1, 4), {}),
    "check_stop_when_learned": ((True, 100), {}),
    "check_give_up_after": ((10, 100, True), {}),
    "keep_runs": (({"m": np.ones((2, 3)), "rngs": [np.random.default_rng(0), np.random.default_rng(1)]}, np.array([True, False])), {}),
    "survival_to_accuracy": ((np.array([1.0, 2.0, 5.0, 11.0]),), dict(steps=10, by=5, horizon=11)),
    "checkpoint_steps": ((8,), {}),
    "retrieval_targets": ((np.ones((2, 3, 4)), np.array([[2, 0, 1], [0, 1, 2]])), {}),
    "adam_update": ((np.ones((2, 3)), {}, 1, 0.01), {}),
    "adafactor_update": ((np.ones((2, 3, 4)), np.ones((2, 3, 4)), {}, 1, np.full(2, 0.01)), {}),
    "TiledSim": ((), dict(T_q=3, T_k=5, d_k=4, d_v=3, block_size=2)),
    "TorchSDPASim": (("float32", "bool"), dict(batch=1, heads=2, T_q=3, T_k=4, d_k=2, d_v=2)),
    "SDPALargeScoreSim": (("bfloat16",), dict(n_keys=4)),
    "SDPADispatchSim": (("float16", "causal"), dict(rank=4, same_head_dim=True, dropout_p=0.0, expect="MATH")),
    "select_claims": (("saturation*",), {}),
    "flagged_words": (("most runs learn 3 times faster",), {}),
    "Transformer": ((_tiny_lm, RNG()), {}),
    "TransformerConfig": ((), dict(vocab=5, n_ctx=4, d_model=4, n_heads=2, n_layers=1, scaling="sqrt", dtype="float64")),
    "layer_norm": ((_ln_x, np.ones(4), np.zeros(4)), dict(eps=1e-5)),
    "layer_norm_backward": ((np.ones((2, 3, 4)), _ln_cache, np.ones(4)), {}),
    "gelu": ((np.linspace(-2, 2, 5),), {}),
    "gelu_backward": ((np.ones(5), np.linspace(-2, 2, 5)), {}),
    "cross_entropy": ((np.zeros((2, 3, 4)), np.zeros((2, 3), dtype=int)), {}),
    "embedding_backward": ((np.ones((1, 3, 2)), np.array([[0, 1, 2]]), 4), {}),
    "character_vocabulary": ((["ab", "c"],), {}),
    "encode_text": (("abc", "abc"), {}),
    "plain_text": (("# T\n**A**  \nhi\n",), {}),
    "split_plays": (({"a": "x", "b": "y", "c": "z", "d": "w", "e": "v"},), {}),
    "text_windows": ((np.arange(20),), dict(batch=2, length=4, rng=RNG())),
    "gradient_direction_error": ((_tiny_model, np.array([[0, 1, 2, 3, 4]])), {}),
    "train_language_model": ((_tiny_lm, np.arange(50) % 5, np.arange(50) % 5),
                             dict(steps=2, lr=1e-3, seed=1, batch=2, val_windows=2)),
    "train_transformer": ((_tiny_model, lambda: (np.array([[0, 1, 2, 3, 4]]), None), lambda m: 0.0), dict(steps=2, lr=1e-3)),
    "recall_batch": ((RNG(),), dict(batch=2, vocab=8, length=8, pairs=1)),
    "train_recall_model": ((_tiny_recall,), dict(pairs=1, steps=2, lr=1e-3, seed=1, batch=2, test_sequences=2)),
    "mup_lr_multipliers": ((stats.Transformer(_tiny_mup, np.random.default_rng(0)),), {}),
    "coordinate_check": ((_tiny_mup,), dict(lr=1e-3, steps=1, seed=1, batch=2)),
    "CoordinateCheckSim": ((32,), dict(scaling="mup", mup_base=32, lr=1e-3, steps=1)),
    "RecallSim": ((8,), dict(lr=1e-3, steps=4, warmup=1, vocab=8, length=8, pairs=1, batch=2)),
    "check_recall_task": ((8, 8, 1), {}),
    "bigram_loss": ((np.arange(20) % 5, np.array([[0, 1, 2], [3, 4, 0]])), dict(vocab=5)),
    "validation_windows": ((np.arange(50) % 5,), dict(n_ctx=4, count=2)),
    "TextSweepSim": ((32,), dict(lrs=(1e-3, 1e-2), steps=2, warmup=1, batch=2)),
    "establishes": ((stats.Stated.at_most("at most 0.1", 0.1), dict(test="share", estimate=0.0, n=32)),
                    dict(confidence=0.95)),
}

#: Callables whose inputs are the suite's own objects, not a user's numbers; each covered elsewhere.
ORCHESTRATION = {
    "count_matmuls": "a context manager without arguments (tests/test_attention.py)",
    "attention_matmul_flops": "reads count_matmuls' own log (tests/test_attention.py)",
    "default_workers": "no arguments",
    "local_dask_cluster": "a context manager; its n_workers is validated (tests/test_parallel.py)",
    "tune_malloc": "no arguments; its switch is validated (tests/test_malloc.py)",
    "evaluate": "takes a Plan and results made by plan/simulate (tests/test_claims.py)",
    "evaluate_mutants": "takes a Plan and results made by plan/simulate (tests/test_claims.py)",
    "gradient_check": "takes the caller's own function; its x is validated (tests/test_numerics.py)",
    "numerical_gradient": "takes the caller's own function (tests/test_numerics.py)",
    "passed": "takes the table evaluate returns",
    "audit_sentence": "takes an Erratum's sentence and support (validated by Erratum) and the registry's checks "
                      "(tests/test_corrected_sentences.py)",
    "static_audit": "takes the registry's claims (tests/test_corrected_sentences.py)",
    "plan": "its options are validated (tests/test_claims.py::test_plan_rejects_bad_options)",
    "run_simulation": "takes a Simulation object, validated at construction (tests/test_engine.py)",
    "run_simulations": "takes Jobs of Simulation objects (tests/test_engine.py)",
    "simulate": "takes a Plan made by plan",
    "verify_claims": "plan + simulate + evaluate (tests/test_claims.py)",
    "diff_chi2": "a scipy.stats rv_continuous instance; scipy validates its shape parameters",
    "BIT_GENERATOR": "numpy's SFC64, validated by numpy",
    "pool_context": "takes no argument",
    "shakespeare_plays": "no arguments; reads the pinned package's files (tests/test_corpus.py)",
    "shakespeare_ids": "no arguments; the plays of shakespeare_plays, encoded (tests/test_corpus.py)",
    "sdpa_cpu_backend": "needs PyTorch for a good call; every argument is validated before PyTorch is imported "
                        "(tests/test_torch_claims.py::test_sdpa_cpu_backend_refuses_bad_input, which runs without it)",
    "sdpa_cpu_dispatch_table": "no arguments; needs PyTorch",
    "decide": "takes SymPy expressions or matrices; refuses anything else (tests/test_proofs.py)",
    "expectation": "takes a SymPy polynomial and a moments mapping; refuses anything else (tests/test_proofs.py)",
    "gradient": "takes a SymPy expression and a matrix of symbols; refuses anything else (tests/test_proofs.py)",
}
#: Plain records: the library fills them; they are values, not entry points.
RECORDS = {
    "Check", "Claim", "Erratum", "Estimate", "Formulas", "GradientCheck", "Job", "Measure", "MomentSummary",
    "LRWindow", "Mutant", "Plan", "PlannedCheck", "RowSummary", "SimFailure", "SimResult", "Simulation", "Stated",
    "TestResult", "UntestableError",
    # The kinds of check and the typed design sd: validated at construction, each field
    # named in its error (tests/test_checks.py).
    "MeanCheck", "VarianceCheck", "RatioCheck", "TwoSampleCheck", "DistributionCheck", "IntervalCheck",
    "IdentityCheck", "ExactCheck", "ShareCheck", "CategoricalCheck", "BoundSD", "ClosedFormSD", "PilotSD",
    # The documentary kind and its citations: validated at construction, each field named in its
    # error, an entry without a source refused (tests/test_sources.py).
    "DocumentaryCheck", "PaperSource", "RepoSource",
    # A statement no claim tests, with its reason: validated at construction (tests/test_statements.py).
    "Unchecked",
    # The section's displayed equations (SymPy functions, proved by the proof claims) and a proof's outcome.
    "Equations", "Decision",
    # What sdpa_cpu_backend returns: the kernel SDPA chose and the one that ran.
    "SDPADispatch",
    # The kinds of scaling and optimiser (stats.SCALINGS, stats.OPTIMIZERS hold the instances the trainer takes by name).
    "Optimizer", "Scaling",
    # Kaplan-Meier's answer (survival_to_accuracy validates its inputs).
    "Survival",
    # A language-model run's record (train_language_model validates its inputs), a recall run's
    # (train_recall_model does), and muP's rules as a table of text (mup_lr_multipliers applies them).
    "LanguageModelRun", "RecallRun", "MUP_RULES",
}

BAD = {
    "nan": math.nan,
    "inf": math.inf,
    "-inf": -math.inf,
    "negative": -1,
    "zero": 0,
    "huge": 10**30,
    "empty": [],
    "string": "x",
    "none": None,
    "object": object(),
    "bool": True,
    "wrong shape": np.ones((2, 3, 4)),
    "nan array": np.array([1.0, math.nan]),
    "string array": np.array(["a", "b"]),
}


#: Refusals that name what the value stands for rather than the parameter (a law is given as
#: ``entries``; a registry name is an optimizer or a scaling), or that name the quantity a
#: bad value makes wrong (too few samples for an estimate's standard error: ``n``).
NAMED_AS = {
    ("EntryLaw", "name"): "entries", ("draw_entries", "law"): "entries", ("law_moment", "law"): "entries",
    ("optimizer_named", "name"): "optimizer", ("scaling_named", "name"): "scaling",
    ("summarize_rows", "x"): "block statistic", ("quantile_estimate", "samples"): "n",
    ("variance_estimate", "samples"): "n", ("adam_update", "lr"): "shape",
}


def _parameter(name, where):
    """The parameter a bad value replaced: a keyword's own name, or a position's."""
    if not where.startswith("arg"):
        return where
    try:
        params = list(inspect.signature(getattr(stats, name)).parameters)
    except (TypeError, ValueError):
        return where
    i = int(where[3:])
    return params[i] if i < len(params) else where


def _has_nan(value, depth=0):
    if depth > 4:
        return False
    if isinstance(value, (float, np.floating)):
        return bool(np.isnan(value))
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "fc" and bool(np.isnan(value).any())
    if isinstance(value, (pd.Series, pd.DataFrame)):
        return bool(value.select_dtypes("number").isna().to_numpy().any()) if isinstance(value, pd.DataFrame) else (
            value.dtype.kind in "fc" and bool(value.isna().any())
        )
    if isinstance(value, dict):
        return any(_has_nan(v, depth + 1) for v in value.values())
    if isinstance(value, (tuple, list)):
        return any(_has_nan(v, depth + 1) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return any(_has_nan(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value))
    if isinstance(value, types.GeneratorType):
        return any(_has_nan(v, depth + 1) for v in value)
    return False


def _raised_in_suite(exc):
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and frames[-1].filename.startswith(STATS_DIR)


def _bad_calls(name):
    """(where, bad value's name, args, kwargs) for each argument of the good call and each bad value."""
    args, kwargs = GOOD[name]
    for i in range(len(args)):
        for bad, value in BAD.items():
            yield f"arg{i}", bad, [*args[:i], value, *args[i + 1:]], dict(kwargs)
    for key in kwargs:
        for bad, value in BAD.items():
            yield key, bad, list(args), {**kwargs, key: value}


def _not_refused(name, args, kwargs, parameter=None):
    """None when the call is refused by the suite's own check, naming ``parameter``, or answers
    without NaN; else why not."""
    try:
        with np.errstate(all="ignore"):
            out = getattr(stats, name)(*args, **kwargs)
            nan = _has_nan(out)
    except (ValueError, TypeError) as exc:
        if not _raised_in_suite(exc):
            return f"{type(exc).__name__} from outside the suite's checks: {exc}"
        if not str(exc):
            return f"{type(exc).__name__} without a message (an error must say what is wrong)"
        names = {parameter, NAMED_AS.get((name, parameter), parameter)}
        if parameter is not None and not any(n in str(exc) for n in names):
            return f"{type(exc).__name__} that does not name {parameter!r}: {exc}"
        return None
    except Exception as exc:  # noqa: BLE001 - the point of the test
        return f"{type(exc).__name__} instead of ValueError/TypeError: {exc}"
    return "returned NaN" if nan else None


def test_every_public_name_is_covered():
    names = set(stats.__all__)
    callables = {n for n in names if callable(getattr(stats, n))}
    uncovered = callables - set(GOOD) - set(ORCHESTRATION) - RECORDS
    assert not uncovered, f"public names with no bad-input entry: {sorted(uncovered)}"
    assert not (set(GOOD) | set(ORCHESTRATION) | RECORDS) - names, "entries for names that are not public"


@pytest.mark.parametrize("name", sorted(GOOD))
def test_bad_inputs_are_refused(name):
    """The good call answers without NaN (so a refusal below is the bad value's doing), and
    each argument replaced by each bad value is refused by the suite or answered without NaN."""
    args, kwargs = GOOD[name]
    assert not _has_nan(getattr(stats, name)(*args, **kwargs)), f"the good call of {name} returned NaN"
    failures = [f"{name} with {where} = {bad}: {why}"
                for where, bad, a, kw in _bad_calls(name)
                if (why := _not_refused(name, a, kw, _parameter(name, where))) is not None]
    assert not failures, f"{len(failures)} bad inputs not refused:\n" + "\n".join(failures)
