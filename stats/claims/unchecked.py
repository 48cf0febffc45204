"""The section's statements the suite cannot check, each with the reason.

``docs/statements.md`` places every statement of the section either on claims of the
registry or on one :class:`Unchecked` entry of :data:`NOT_CHECKABLE`;
``tests/test_statements.py`` holds the table to both.  An entry's ``statement`` is a
paraphrase; its ``reason`` says why no computation here decides it and, where part of it
can be checked, which claim checks that part."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .headings import (ASSUMPTION, BACKWARD, FORMULA, JACOBIAN, OPENING, PYTORCH, READ_MORE, SECTION_HEADINGS,
                                  STABILITY)

__all__ = ["NOT_CHECKABLE", "Unchecked"]

_KEBAB = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


@dataclass(frozen=True)
class Unchecked:
    """One statement of the section that no claim tests: where it stands and why."""

    id: str
    section: str
    statement: str
    reason: str

    def __post_init__(self):
        for name in ("id", "section", "statement", "reason"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"Unchecked.{name} must be a non-empty string; got {value!r}")
        if not _KEBAB.fullmatch(self.id):
            raise ValueError(f"Unchecked.id must be kebab-case (lower-case words joined by '-'); got {self.id!r}")
        if self.section not in SECTION_HEADINGS:
            raise ValueError(f"Unchecked.section must be one of the section's headings (SECTION_HEADINGS); got {self.section!r}")


NOT_CHECKABLE = (
    # ---------------------------------------------------------------- the opening
    Unchecked(
        "opening-cross-references", OPENING,
        "The head is the one of section 4.2, its scores computed as there, and the hard lookup it falls into is the one "
        "section 4.1 set out to avoid.",
        "Pointers to other sections, which assert nothing here; what the opening says of the head itself is checked "
        "(training-init-unit-variance, mostly-one-hot, winner-at-random, gradient-typical-row).",
    ),
    Unchecked(
        "formula-in-every-paper", OPENING,
        "The division by sqrt(d_k) is the reason the attention formula has the same form in every Transformer paper.",
        "A claim about the literature's history and motives, not a computation; what the division does is checked by "
        "scaled-variance-width and saturation-table, and that it lets the head learn by training-scaled-head-learns.",
    ),
    Unchecked(
        "lab-interview-framing", OPENING,
        "Deriving the backward pass by hand is what every lab interview sooner or later asks for.",
        "Rhetorical framing about hiring practice; the derivation itself is proved by proof-backward and checked "
        "numerically by backward-finite-differences.",
    ),
    # ---------------------------------------------------------------- the formula
    Unchecked(
        "formula-notation", FORMULA,
        "One head's queries, keys and values are T_q x d_k, T_k x d_k and T_k x d_v matrices, set up as in section 4.2.",
        "A definition of notation, which fixes names and shapes and asserts nothing; the suite's forward pass takes "
        "these shapes and is checked by forward-three-equations.",
    ),
    Unchecked(
        "temperature-reading", FORMULA,
        "Read with section 4.1's terms, the scaled softmax is a soft lookup whose temperature tau equals sqrt(d_k).",
        "A renaming (a temperature is the divisor of the scores by definition), so there is nothing to compute; the "
        "scaled scores themselves are proved by proof-formula.",
    ),
    # ---------------------------------------------------------------- the width
    # ---------------------------------------------------------------- the Jacobian
    Unchecked(
        "jacobian-earlier-sections", JACOBIAN,
        "Section 0.2 derived the softmax Jacobian by the quotient rule and section 4.1 used its entries; the frozen head "
        "is Exercise 4.1e's stuck query; the vector-Jacobian product is the one of Exercise 0.2c.",
        "Pointers to other sections and their exercises; the Jacobian, its properties and its vector-Jacobian product "
        "are proved here by proof-jacobian and checked numerically by jacobian-properties.",
    ),
    # ---------------------------------------------------------------- the assumption
    Unchecked(
        "mup-paper-argument", ASSUMPTION,
        "The muP parametrization of Yang et al. (2022) divides scores by d_k, motivated by its account of training at "
        "growing width, which expects queries and keys to end up correlated.",
        "The content and motive of a paper's prescription, not a computation; the correlation after training is "
        "tested by training-correlated-after, and what 1/d_k does to correlated scores by mup-mean and mup-variance. The prescription itself, 1/d_k, is read at the muP authors' package by read-yang; the paper's account of why (queries and keys becoming correlated in training) was not read in the December 2026 sources session.",
    ),
    # ---------------------------------------------------------------- stability
    Unchecked(
        "stub-forward", STABILITY,
        "The forward function the section prints, scaled_dot_product_attention(Q, K, V, mask), only raises "
        "NotImplementedError.",
        "A placeholder the reader fills in, which computes nothing; the suite's own implementation of it is tested by "
        "forward-three-equations.",
    ),
    # ---------------------------------------------------------------- the backward pass
    Unchecked(
        "backward-framing", BACKWARD,
        "Deriving the backward pass is what distinguishes people who understand attention from those who have only "
        "used it.",
        "Rhetorical framing, not a statement about attention; the derivation is proved by proof-backward.",
    ),
    Unchecked(
        "backward-cost-rule", BACKWARD,
        "The factor of two in attention is an instance of the general rule, of section 5.6, that backward costs two "
        "forwards.",
        "The general rule, for any network, is another section's subject and only pointed to here; attention's case is "
        "counted by backward-flops.",
    ),
    Unchecked(
        "stub-backward", BACKWARD,
        "The printed attention_backward(Q, K, V, dO, mask) only raises NotImplementedError.",
        "A placeholder the reader fills in, which computes nothing; the suite's own implementation of it is tested by "
        "backward-finite-differences, autograd-equals-backward and masks-leak-no-gradient.",
    ),
    # ---------------------------------------------------------------- PyTorch
    Unchecked(
        "memory-efficient-kernel", PYTORCH,
        "Where available, PyTorch's SDPA can also dispatch to a memory-efficient kernel.",
        "That kernel is a CUDA one and these machines have no GPU; the CPU's fused kernel is checked by "
        "sdpa-fused-kernel, which also confirms the other inputs take the math path. Its source was not read in the December 2026 sources session; once read, it becomes a documentary check (stats/claims/statements/sources.py).",
    ),
    # ---------------------------------------------------------------- read more
    Unchecked(
        "read-milakov-gimelshein", READ_MORE,
        "Milakov and Gimelshein (2018) compute a stable softmax in a single pass with an online normaliser, the idea "
        "FlashAttention grew from.",
        "A citation's content and a historical lineage, not a computation; the online normaliser is what the suite's "
        "tiled pass computes, checked against the dense pass by tiled-equals-dense. What was read (December 2026, sources session): the FlashAttention paper's appendix B.1 cites Milakov and Gimelshein (its reference [60]) for computing the softmax normaliser separately, and their abstract (several copies) promises a classical softmax with fewer memory accesses; whether their online normaliser gives the softmax in one pass or, as secondary accounts say, the normaliser in one pass and the outputs in a second was not read in the paper itself, so no verdict is recorded.",
    ),
)


def _check_ids():
    ids = [u.id for u in NOT_CHECKABLE]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise RuntimeError(f"duplicate NOT_CHECKABLE ids: {dupes}")


_check_ids()
