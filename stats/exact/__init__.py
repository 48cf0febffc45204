"""The exact half: the forward pass, its hand-derived backward pass, the softmax Jacobian,
tiled (FlashAttention-style) attention and the memory each pass keeps, floating-point formats and
matrix-product counts;
and the section's displayed equations (:mod:`.equations`) with their derivations from first
principles (:mod:`.derivations`), proved by computer algebra (:mod:`.symbolic`, SymPy,
imported on first use: never by ``import stats``)."""

from .attention import (
    attention_backward,
    naive_softmax,
    scaled_dot_product_attention,
    softmax,
    softmax_jacobian,
    softmax_vjp,
)
from .cost import attention_matmul_flops, count_matmuls
from .equations import EQUATIONS, Equations
from .formats import FORMATS, exp_overflow_threshold, float_format, format_max, softmax_terms
from .gradcheck import GradientCheck, gradient_check, numerical_gradient
from .memory import attention_memory, attention_memory_alone
from .tiled import tiled_attention_backward, tiled_attention_forward

#: Served from :mod:`.symbolic` on first access (PEP 562): it imports SymPy.
LAZY_NAMES = ("Decision", "decide", "expectation", "gradient")

__all__ = [
    "EQUATIONS",
    "Equations",
    "FORMATS",
    "GradientCheck",
    "attention_backward",
    "attention_matmul_flops",
    "attention_memory",
    "attention_memory_alone",
    "count_matmuls",
    "exp_overflow_threshold",
    "float_format",
    "format_max",
    "gradient_check",
    "naive_softmax",
    "numerical_gradient",
    "scaled_dot_product_attention",
    "softmax",
    "softmax_jacobian",
    "softmax_terms",
    "softmax_vjp",
    "tiled_attention_backward",
    "tiled_attention_forward",
    *LAZY_NAMES,
]


def __getattr__(name):
    if name in LAZY_NAMES:
        from . import symbolic

        return getattr(symbolic, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
