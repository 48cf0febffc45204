"""The section's sentences about learning, tested at the widths its evidence profile names, with a
control that separates saturation at step 0 from the learning rate (:mod:`stats.settings.decisive`).

The section's opening speaks of a head of the width real models use (its d_k = 512), its
saturation table runs to d_k = 1024.  Here each head -- unscaled, divided by sqrt(d_k), and the
*control*, no division with 1/sqrt(d_k) folded into W_Q's initialisation -- is trained at the
profile's shapes under SGD, Adam started cold and Adam with a short warm-up (the control under
Adafactor too), in float32, each run stopping once its held-out probe holds 90% accuracy over
the hold window, within the profile's step budget (a run that does not is censored: an outcome).
Each head's rate is chosen per cell by the adaptive quarter-decade search
(:func:`stats.lr_search.profile_search`, on the profile's seed), whose chosen rate is interior
or labelled a bound.

The default build runs the ``default`` profile (small widths: every check and its machinery
exercised at every build); ``make reports EVIDENCE=full`` the widths the text names.  Every label
names its width, so a finding says at which widths it rests.
"""

from __future__ import annotations

from ...lr_search import profile_search, profile_searches
from ...settings.decisive import DECISIVE_OPTIMIZERS, DECISIVE_PROFILES, decisive_profile
from ...settings.training import N_KEYS
from ...training.diagnostics import checkpoint_steps
from ...training.simulations import TrainingSim
from ...training.trainer import EARLY_CHECKPOINT
from ..check_builders import Erratum, Measure, Stated, share
from ..claim import Claim
from ..findings import OWN_BEST, SHARED_RATE
from ..headings import ASSUMPTION, JACOBIAN, OPENING

SECTION = OPENING

#: "Cannot learn": a share of at most 0.1, refuted at a share of 0.6 (as training-unscaled-cannot-learn).
CANNOT_LEARN_TARGET = 0.6
LEARNS_TARGET = 0.45
#: "Frozen": at least 90% of runs keep 90% of their step-0 choices a quarter of the way through the
#: budget, refuted at a share of 0.1 (as training-frozen-pattern).
FROZEN_TARGET = 0.8

#: The groups of checks of the unscaled head's "cannot learn": at its own searched best rate (the
#: protocol 'cannot' implies), at the scaled head's, and at the control's (the reading that
#: saturation at step 0 is what stops it).
OWN, SHARED, AT_CONTROL = "own", "shared", "control"
#: The group of the frozen-pattern checks (the unscaled head at its own best rate).
FROZEN = "frozen"

#: The findings recorded per profile, after its cells were run and read: ``{profile: {group: the
#: (shape, optimiser, warm-up) cells where the evidence refutes the text in that group's checks}}``.  A
#: profile's refutations are recorded only once that profile has been run (docs/results.md has
#: the runs); a refuted check not listed here fails, so a profile run for the first time shows
#: what it found, and a listed one that holds shows as an unconfirmed finding.
RECORDED = {
    "default": {
        OWN: {((32, 32), o, w) for o, w in DECISIVE_OPTIMIZERS} | {((32, 128), o, w) for o, w in DECISIVE_OPTIMIZERS},
        SHARED: {((32, 32), "adam", 0), ((32, 32), "adam", 20)},
        AT_CONTROL: {((32, 32), o, w) for o, w in DECISIVE_OPTIMIZERS} | {((32, 128), o, w) for o, w in DECISIVE_OPTIMIZERS},
        FROZEN: {((32, 32), o, w) for o, w in DECISIVE_OPTIMIZERS} | {((32, 128), o, w) for o, w in DECISIVE_OPTIMIZERS},
    },
    # Run on 2026-12-05 and, with every variant at d_k = 1024, on 2026-12-06 (docs/results.md): at
    # its own rate and at the control's the unscaled head learned in every cell, and its pattern
    # moved; at the scaled head's rate in none.
    "full": {group: set(DECISIVE_PROFILES["full"].cells()) for group in (OWN, AT_CONTROL, FROZEN)},
}

#: The sentences the text could print instead; ``{measured}`` is the phrase the corrected check
#: supports (the share, the widths and the optimiser in one piece).
LEARNS_SENTENCE = "Without the division a head starts saturated, yet at a learning rate suited to it, it {measured}."
SHARED_SENTENCE = ("At the scaled head's best learning rate a head without the division still {measured}: at these widths "
                   "the saturated start does not stop it.")
CONTROL_SENTENCE = ("Trained at the learning rate best for the same head with the division folded into the "
                    "initialisation of W_Q, the unscaled head {measured}: at these widths saturation at initialisation "
                    "is not what stops a head from learning.")
FROZEN_SENTENCE = ("Without the division the attention pattern is not frozen: at a learning rate suited to it, the head "
                   "{measured}.")
LEARNS = Stated.at_least("learns: most runs, share > 1/2", 0.5)
MOVES = Stated.at_most("moves: share <= 0.1", 0.1)


def _cells_text(cells):
    """Recorded cells in words, shapes with the same optimisers together: "d_k = 32 with d_model = 32
    or 128, under sgd, adam and adam (warm-up 20 steps)"."""
    by_shape = {}
    for shape, optimizer, warmup in cells:
        by_shape.setdefault(shape, []).append((optimizer, warmup))
    by_variants = {}
    for shape in sorted(by_shape):
        variants = tuple(v for v in DECISIVE_OPTIMIZERS if v in by_shape[shape])
        by_variants.setdefault(variants, []).append(shape)
    parts = []
    for variants, shapes in by_variants.items():
        widths = "; ".join(f"d_k = {dk} with d_model = {' or '.join(str(m) for dk2, m in shapes if dk2 == dk)}"
                           for dk in sorted({dk for dk, _ in shapes}))
        names = [_variant_text(*v) for v in variants]
        parts.append(f"at {widths}, under {', '.join(names[:-1]) + ' and ' if len(names) > 1 else ''}{names[-1]}")
    return "; ".join(parts)


def _recorded(profile, group, shape, optimizer, warmup):
    """The finding recorded for this check of ``profile`` (one per group: its sentence names every
    cell of the group where the evidence refuted the text), or None."""
    cells = RECORDED.get(profile.name, {}).get(group, set())
    if (shape, optimizer, warmup) not in cells:
        return None
    measured = f"learns in most runs {_cells_text(cells)}"
    support = ((measured, "corrected"),)
    if group == OWN:
        return Erratum(LEARNS, LEARNS_SENTENCE.format(measured=measured), support=support)
    if group == FROZEN:
        moved = f"leaves the keys it chose at initialization in most runs {_cells_text(cells)}"
        return Erratum(MOVES, FROZEN_SENTENCE.format(measured=moved), kind="caveat",
                       as_written="a saturated (exactly one-hot) softmax row has a zero Jacobian, so no gradient moves its "
                                  "pattern", confirmed_by=("jacobian-properties",), support=((moved, "corrected"),))
    as_written = "a fresh head without the division starts with rows far sharper than the scaled head's (saturation-table)"
    sentence = (SHARED_SENTENCE if group == SHARED else CONTROL_SENTENCE).format(measured=measured)
    return Erratum(LEARNS, sentence, kind="caveat", as_written=as_written,
                   confirmed_by=("saturation-table",), support=support)


def _widths_text(shapes):
    return " and ".join(f"d_k = {dk} with d_model = {dm}" for dk, dm in shapes)


def _practice_text(profile):
    """What a profile leaves out, in words (empty when it trains every variant at every shape)."""
    if not profile.practice_only:
        return ""
    return (f"  At {_widths_text(profile.practice_only)} every head is trained under Adam with the warm-up only (as "
            "practice trains; what the others would cost: docs/performance.md).")


def _variant_text(optimizer, warmup):
    return f"{optimizer}{f' (warm-up {warmup} steps)' if warmup else ''}"


def _shape_text(shape):
    return f"d_k={shape[0]}, d_model={shape[1]}"


def rate_text(profile, shape, scaling, optimizer, warmup):
    """A cell's searched rate as a label reads it: ``0.0178``, or ``>= 31.6 (search edge: a bound)``."""
    s = profile_search(profile, shape, scaling, optimizer, warmup)
    if s.interior:
        return f"{s.rate:g}"
    return f"{'>=' if s.bound == 1 else '<='} {s.rate:g} (search edge: a bound)"


def decisive_sim(profile, shape, scaling, optimizer, warmup, rate_of=None):
    """``scaling``'s runs of ``profile`` at the searched rate of ``rate_of`` (default: its own)."""
    lr = profile_search(profile, shape, rate_of or scaling, optimizer, warmup).rate
    return TrainingSim(shape[0], scaling, optimizer, lr, d_model=shape[1], **profile.run_options(warmup))


def claims(profile=None):
    profile = decisive_profile() if profile is None else profile
    profile_searches(profile)  # every rate the labels name, drawn side by side where not cached yet
    variants = profile.cells()
    at_most = Stated.at_most("cannot learn: share <= 0.1", 0.1)
    learns = LEARNS
    where = f"{profile.name} evidence profile"
    widths = f"widths of the {where}: d_k = {', '.join(str(k) for k in sorted({dk for dk, _ in profile.shapes}))}"
    return (
        Claim(
            "decisive-unscaled-learns",
            OPENING,
            "The text: without the division a head of the width real models use cannot learn.  Tested at the "
            f"{where}'s shapes ({', '.join(_shape_text(s) for s in profile.shapes)}), float32, each run stopping once "
            f"its held-out probe holds 90% accuracy (budget {profile.budget} steps; a censored run counts as not "
            "learned), under SGD, Adam and Adam with a warm-up: the unscaled head at its own searched best rate (the "
            "protocol 'cannot' implies) and at the scaled head's (shown beside it), and the scaled head at its own."
            f"{_practice_text(profile)}",
            "cannot learn: share of runs that learn <= 0.1 (unscaled); learns: share > 1/2 (scaled)",
            tuple(
                share(f"unscaled, {_variant_text(o, w)}, own best lr={rate_text(profile, s, 'none', o, w)}, {_shape_text(s)}",
                      at_most, Measure(decisive_sim(profile, s, "none", o, w), "learned"), target=CANNOT_LEARN_TARGET, protocol=OWN_BEST,
                      reading=widths, erratum=_recorded(profile, OWN, s, o, w))
                for s, o, w in variants
            ) + tuple(
                share(f"unscaled, {_variant_text(o, w)}, at the scaled head's best lr={rate_text(profile, s, 'sqrt', o, w)}, "
                      f"{_shape_text(s)}", at_most, Measure(decisive_sim(profile, s, "none", o, w, rate_of="sqrt"), "learned"),
                      target=CANNOT_LEARN_TARGET, protocol=SHARED_RATE, reading=widths,
                      erratum=_recorded(profile, SHARED, s, o, w))
                for s, o, w in variants
            ) + tuple(
                share(f"scaled, {_variant_text(o, w)}, own best lr={rate_text(profile, s, 'sqrt', o, w)}, {_shape_text(s)}",
                      learns, Measure(decisive_sim(profile, s, "sqrt", o, w), "learned"), target=LEARNS_TARGET, protocol=OWN_BEST)
                for s, o, w in variants
            ),
        ),
        Claim(
            "decisive-control",
            OPENING,
            "What the text blames is saturation at step 0.  The control -- no division, 1/sqrt(d_k) folded into W_Q's "
            "initialisation: the unscaled head's forward pass and parameters, the scaled head's logits at step 0 -- "
            "separates it from the learning rate: at the control's own searched best rate it learns in most runs, "
            "and the unscaled head trained at that same rate, differing from it only in being saturated at step 0, "
            f"cannot (at most one run in ten).  {where.capitalize()}; the control also under Adafactor"
            f"{' at ' + _widths_text(s for s in profile.shapes if s not in profile.practice_only) if profile.practice_only else ''}."
            f"{_practice_text(profile)}",
            "control learns: share > 1/2; unscaled at the control's best rate: share <= 0.1",
            tuple(
                share(f"control (folded), {_variant_text(o, w)}, own best lr={rate_text(profile, s, 't5', o, w)}, "
                      f"{_shape_text(s)}", learns, Measure(decisive_sim(profile, s, "t5", o, w), "learned"), target=LEARNS_TARGET,
                      protocol=OWN_BEST)
                for s in profile.shapes for o, w in profile.control_optimizers(s)
            ) + tuple(
                share(f"unscaled, {_variant_text(o, w)}, at the control's best lr={rate_text(profile, s, 't5', o, w)}, "
                      f"{_shape_text(s)}", at_most, Measure(decisive_sim(profile, s, "none", o, w, rate_of="t5"), "learned"),
                      target=CANNOT_LEARN_TARGET, protocol=SHARED_RATE,
                      reading=f"saturation at initialisation is what stops it (the control's rate, the same forward "
                              f"pass); {widths}",
                      erratum=_recorded(profile, AT_CONTROL, s, o, w))
                for s, o, w in variants
            ),
        ),
        Claim(
            "decisive-frozen",
            JACOBIAN,
            "The text: without the division the head's attention pattern stays frozen wherever it landed at "
            "initialisation -- the next clause of the conditional whose first (a saturated softmax passes no gradient) "
            "is true of an exactly one-hot row, so a refutation is a caveat (as training-frozen-pattern).  Measured on "
            f"the runs of decisive-unscaled-learns at the unscaled head's own searched best rate, at the {where}'s "
            f"shapes: a run's pattern is frozen when at least 90% of a fixed probe episode's {N_KEYS} queries still "
            "choose the key they chose at step 0 a quarter of the way through the budget (a run that stopped early, "
            "having learned, is read at the step it stopped).",
            "frozen: share of runs keeping 90% of their step-0 choices a quarter of the way through the budget >= 0.9",
            tuple(
                share(f"unscaled, {_variant_text(o, w)}, own best lr={rate_text(profile, s, 'none', o, w)}, {_shape_text(s)}: "
                      f"keeps 90% of its step-0 choices at step {checkpoint_steps(profile.budget)[EARLY_CHECKPOINT]}",
                      Stated.at_least("frozen: share >= 0.9", 0.9, strict=False),
                      Measure(decisive_sim(profile, s, "none", o, w), "pattern_frozen_early"), target=FROZEN_TARGET,
                      protocol=OWN_BEST, reading=widths, erratum=_recorded(profile, FROZEN, s, o, w))
                for s, o, w in variants
            ),
        ),
        Claim(
            "decisive-correlated-after",
            ASSUMPTION,
            "Queries and keys are independent at initialisation and not after training (as training-correlated-after), "
            f"at the {where}'s shapes: on the runs of the scaled head and of the control at their own searched best "
            "rates, the mean cosine of a query and its target key on the held-out probe, at the end of training (or "
            "where a run stopped, having learned), is positive in most runs.",
            "P(trained mean cosine of a query and its target key > 0) > 1/2",
            tuple(
                share(f"trained, {name}, {_variant_text(o, w)}, own best lr={rate_text(profile, s, head, o, w)}, {_shape_text(s)}",
                      Stated.at_least("correlated: most runs, > 1/2", 0.5), Measure(decisive_sim(profile, s, head, o, w), "aligned"),
                      target=LEARNS_TARGET, protocol=OWN_BEST, reading=widths)
                for s, o, w in variants for head, name in (("sqrt", "scaled"), ("t5", "control (folded)"))
            ),
        ),
    )


CLAIMS = claims()
