"""The exact half: the forward pass, its hand-derived backward pass, the softmax Jacobian,
tiled (FlashAttention-style) attention, floating-point formats and matrix-product counts."""

from .attention import (
    attention_backward,
    naive_softmax,
    scaled_dot_product_attention,
    softmax,
    softmax_jacobian,
    softmax_vjp,
)
from .cost import attention_matmul_flops, count_matmuls
from .formats import FORMATS, exp_overflow_threshold, float_format, format_max, softmax_terms
from .gradcheck import GradientCheck, gradient_check, numerical_gradient
from .tiled import tiled_attention_backward, tiled_attention_forward

__all__ = [
    "FORMATS",
    "GradientCheck",
    "attention_backward",
    "attention_matmul_flops",
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
]
