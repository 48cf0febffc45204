r"""Corrected sentences held to their evidence: the audit of every recorded finding's sentence.

An author prints the sentence an :class:`~stats.claims.measures.Erratum` offers, so it must never
say more than the suite shows.  Every word of it that says how much, how many or how often (the
:data:`VOCABULARY`) must lie inside a phrase of the erratum's ``support``, and every support names a
check of the registry (``"claim-id [check label]"``, or ``"corrected"``: the erratum's own corrected
check) that shows it.

* **Static** (:func:`audit_sentence`, :func:`static_audit`): every flagged word is covered, every
  reference resolves to a check of the registry, and a universal word (all, none, never, at all,
  every, ...) rests on at least one check that states a universal: an identity or an exact value
  (:func:`states_universally`), or a share stated as 0 or 1 -- not "most".
* **In a run** (:func:`sentence_rows`, called by :func:`~stats.claims.evaluation.evaluate`): besides
  the static audit, every referenced check's verdict must be ``pass``.  Each recorded sentence is one
  row of ``claims.csv`` (``test`` = ``sentence``): ``pass``; ``REJECTED`` when a word is uncovered or
  a support fails (the note names the word and the check), so ``verify`` fails; ``untestable`` when a
  referenced check is not in this run (a selection), or for a claim in :data:`PENDING_SUPPORT`.
  A sentence whose every support passes but one of them does not *establish* what it states
  (:func:`establishes`: it is ``unsettled``, its estimate outside the interval, or its one-sided 95%
  bound reaches outside it -- not refuted is not shown) passes with the finding ``unsettled`` and a
  note naming the word and the check:
  the report lists it under "Not settled", never as supported.  It does not fail the run, because
  whether an estimate near its bound falls on one side or the other is a coin the seed tosses (a share
  of 0.1 stated "at most 0.1" is outside half the time); a rule that failed on it would fail at a rate
  no one calibrated.

The rows are not statistical: they carry no p-value and are not members of the Holm family (their
verdict is a deterministic consequence of other rows' verdicts, which the family already counts).
"""

from __future__ import annotations

import math
import re

__all__ = [
    "NOT_SETTLED", "OWN_CORRECTED", "PENDING_SUPPORT", "SENTENCE_TEST", "SUPPORT_CONFIDENCE", "VOCABULARY", "audit_sentence",
    "establishes", "flagged_words",
    "labelled_sentences", "recorded_sentences", "sentence_rows", "states_universally", "static_audit",
]

#: The ``test`` of a sentence's row in ``claims.csv``.
SENTENCE_TEST = "sentence"
#: The start of the note of a sentence's row that passes unsettled: the words and the checks follow.
NOT_SETTLED = "not settled: "
#: A support reference to the erratum's own corrected check(s).
OWN_CORRECTED = "corrected"

#: The one-sided confidence at which a check must establish what it states for a word of a
#: corrected sentence to rest on it (:func:`establishes`).
SUPPORT_CONFIDENCE = 0.95

#: Claims whose recorded sentences have no support yet (their statement modules belong to colleagues,
#: who fill it in at merge).  Their sentence rows are ``untestable`` while the static audit flags them,
#: and the test of the static audit expects them to be flagged: when one no longer is, the test fails
#: until it is taken off this set.  The lead empties it.
PENDING_SUPPORT = frozenset()

_SPELLED = (r"two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|hundred|thousand|million|half|twice|thrice"
            r"|thirds?|quarters?|fifths?|tenths?")

#: The words a corrected sentence may not use without support, by class: ``class -> (regex, why)``.
#: Matched case-insensitively on word boundaries.
VOCABULARY = {
    "number": (
        r"(?<![A-Za-z_^\d.])\d+(?:[./]\d+)*|\b(?:" + _SPELLED + r")\b",
        "a number is a measurement the reader will quote: it must be a check's stated or corrected value",
    ),
    "universal": (
        r"\b(?:all|none|no|nothing|every|everything|never|always|at all|any|each)\b",
        "one counter-example refutes a universal: it needs a check that states it of every case (an identity, "
        "an exact value, a share of 0 or 1), not a check of 'most'",
    ),
    "proportion": (
        r"\b(?:most|only|few|handful|majority|minority|almost|nearly|mostly|rarely|seldom|often|usually)\b",
        "a share or a frequency is a statistical claim: it needs a share or interval check that states it",
    ),
    "extent": (
        r"\b(?:narrow|wide|broad|far|much|tiny|huge|vast|negligible|slight|slightly)\b",
        "an extent ('a narrow band', 'far more') says how big a difference is: it needs a check that measures it",
    ),
    "comparative": (
        r"\b(?:faster|slower|more|less|fewer|larger|smaller|greater|higher|lower|bigger|longer|shorter|times|"
        r"\w+fold|twice|better|worse)\b",
        "a comparison names two settings and an order between them: it needs the check that compares them",
    ),
    "trend": (
        r"\b(?:grows?|grew|falls?|fell|rises?|rose|climbs?|vanish(?:es)?|collapses?|shrinks?|moves?|stays?|"
        r"drifts?|transfers?)\b",
        "a trend in d_k or in training is a measured rate or change: it needs the check that measures it",
    ),
}

#: Universal words that stop being universal within three words after one of these ('almost no',
#: 'nearly every', 'most runs never'): they then claim a proportion, and need a check of one.
_HEDGES = ("almost", "nearly", "most", "mostly", "majority")

_PATTERNS = {cls: re.compile(rx, re.IGNORECASE) for cls, (rx, _) in VOCABULARY.items()}


#: A number that points into the literature measures nothing: a section, footnote, table ... number
#: ("section 4.2", "footnote 4") or a year in a citation ("Vaswani et al. (2017)").
_POINTER = re.compile(r"(?:\b(?:sections?|footnotes?|exercises?|chapters?|tables?|figures?|algorithms?|appendix|"
                      r"appendices|equations?|eq\.)|§)\s*$", re.IGNORECASE)
_YEAR = re.compile(r"(?:19|20)\d\d")


def _is_citation(sentence, start, end):
    """Whether the number at ``sentence[start:end]`` is a pointer into the literature (:data:`_POINTER`)
    or a citation's year, ``(2017)``."""
    if _POINTER.search(sentence[:start]):
        return True
    return bool(_YEAR.fullmatch(sentence[start:end]) and sentence[start - 1:start] == "(" and sentence[end:end + 1] == ")")


def flagged_words(sentence):
    """The flagged words of ``sentence`` in order: ``(word, start, end, class)``; a universal word
    within three words after a hedge (almost, nearly, most: :data:`_HEDGES`) is a ``proportion``."""
    if not isinstance(sentence, str):
        raise TypeError(f"sentence must be a string; got {type(sentence).__name__}")
    found = {}
    for cls, rx in _PATTERNS.items():
        for m in rx.finditer(sentence):
            word = m.group(0)
            if cls == "number" and _is_citation(sentence, m.start(), m.end()):
                continue
            if cls == "universal" and re.search(r"\b(?:%s)(?:\s+\w+){0,2}\s+$" % "|".join(_HEDGES), sentence[:m.start()],
                                                re.IGNORECASE):
                cls_here = "proportion"
            else:
                cls_here = cls
            found.setdefault((m.start(), m.end()), (word, m.start(), m.end(), cls_here))
    # "at all" also matches "all": keep the longest match at each place.
    spans = sorted(found.values(), key=lambda w: (w[1], -(w[2] - w[1])))
    out = []
    for w in spans:
        if out and w[1] < out[-1][2]:
            continue
        out.append(w)
    return out


def states_universally(check):
    """Whether ``check`` states something of every case: a deterministic check (an identity on every
    row, an exact value, a proof), or a share stated as 0 or 1 (its interval ``hi <= 0`` or ``lo >= 1``)."""
    if not check.statistical:
        return True
    stated = getattr(check, "stated", None)
    return check.test == "share" and stated is not None and (stated.hi <= 0 or stated.lo >= 1)


def _registry_checks(claims):
    """``{(claim id, label): (claim, check)}`` for every check of ``claims``, corrected checks included."""
    from .planning import all_checks

    return {(cl.id, ch.label): (cl, ch) for cl, ch in all_checks(claims)}


def _parse(reference):
    """``(claim id, check label)`` of ``"claim-id [check label]"``; ``None`` when it is not of that form."""
    m = re.fullmatch(r"(\S+) \[(.+)\]", reference)
    return (m.group(1), m.group(2)) if m else None


def recorded_sentences(claims):
    """Every recorded sentence of ``claims``, once: ``(claim, erratum, labels)`` with ``labels`` the
    checks that carry an erratum of that sentence and support (their corrected checks are what
    ``"corrected"`` names)."""
    from .checks.base import CORRECTION_SUFFIX

    seen = {}
    for cl in claims:
        for ch in cl.checks:
            e = ch.erratum
            if e is None:
                continue
            key = (cl.id, e.sentence, e.support)
            seen.setdefault(key, (cl, e, []))[2].append(ch.label + CORRECTION_SUFFIX)
    return [(cl, e, tuple(labels)) for cl, e, labels in seen.values()]


def establishes(stated, row, *, confidence=SUPPORT_CONFIDENCE):
    """Whether a passing check's evaluated ``row`` (a ``claims.csv`` row as a dict: ``test``,
    ``estimate``, ``n``, ``mcse``) *establishes* the closed interval ``[lo, hi]`` its ``stated``
    gives, so that a word of a corrected sentence may rest on it: every finite end of the interval
    lies beyond the one-sided ``confidence`` bound of the estimate on that side.

    * a share: the exact (Clopper-Pearson) bound of ``round(estimate n)`` runs in ``n``;
    * a Monte Carlo estimate with a positive MCSE: ``estimate -+ z mcse``, ``z`` the normal quantile
      of ``confidence``;
    * anything else (an exact value, a documented fact): the estimate itself;
    * ``stated`` None (an identity, a distribution): its pass is what it shows, so True.

    Not refuted is not shown: 2 runs of 32 do not refute "at most one in ten", yet their bound is 0.18.
    The bound is one check's, at ``confidence``, not corrected over a sentence's words."""
    from collections.abc import Mapping

    from .measures import Stated

    if stated is not None and not isinstance(stated, Stated):
        raise TypeError(f"stated must be a Stated or None (a check that states no interval); got {stated!r}")
    if not isinstance(row, Mapping):
        raise TypeError(f"row must be a check's evaluated row, a mapping with test, estimate, n and mcse; got {row!r}")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0.5 < confidence < 1:
        raise ValueError(f"confidence must be a one-sided level in (0.5, 1); got {confidence!r}")
    if stated is None:
        return True
    est, n = row.get("estimate"), row.get("n")
    if est is None or not math.isfinite(est):
        return False
    lower = upper = est
    if row.get("test") == "share":
        if not n or n < 1:
            return False
        from scipy.stats import binomtest

        ci = binomtest(round(est * n), int(n)).proportion_ci(confidence_level=2 * confidence - 1, method="exact")
        lower, upper = ci.low, ci.high
    elif row.get("mcse") is not None and math.isfinite(row["mcse"]) and row["mcse"] > 0:
        from scipy.stats import norm

        half = norm.ppf(confidence) * row["mcse"]
        lower, upper = est - half, est + half
    return (not math.isfinite(stated.lo) or lower >= stated.lo) and (not math.isfinite(stated.hi) or upper <= stated.hi)


def labelled_sentences(claims, *, carried=None):
    """The recorded sentences of ``claims`` (:func:`recorded_sentences`) as a run's rows name them:
    ``(claim, erratum, labels, row label)``, ``labels`` cut to the checks in ``carried`` (``{(claim id,
    label)}``; None: all) and a sentence none of whose checks is carried left out.  The row label
    (the ``check`` of its ``claims.csv`` row) is unique within its claim."""
    out, taken = [], set()
    for cl, e, own in recorded_sentences(claims):
        own = tuple(lab for lab in own if carried is None or (cl.id, lab) in carried)
        if not own:
            continue
        label = (f"corrected sentence ({', '.join(lab.removesuffix(' [corrected]') for lab in own)})"
                 if len(own) < 3 else f"corrected sentence ({len(own)} checks)")
        while (cl.id, label) in taken:
            label += "'"
        taken.add((cl.id, label))
        out.append((cl, e, own, label))
    return out


def audit_sentence(sentence, support, *, claim_id, own=(), checks):
    """The static audit of one sentence: ``(problems, needs)``.

    ``support``: ``(phrase, reference)`` pairs; ``own``: the labels ``"corrected"`` names (in claim
    ``claim_id``); ``checks``: ``{(claim id, label): (claim, check)}`` of the registry.  ``problems``
    are one-line strings naming the word and the check; ``needs`` is ``[(words, claim id, label)]``,
    every resolved reference with the flagged words its phrase covers, for the run to hold to its
    verdict.
    """
    problems, needs = [], []
    resolved = []  # (phrase, [(cid, label, check)]) per support pair
    for phrase, ref in support:
        if phrase not in sentence:
            problems.append(f"support phrase {phrase!r} is not in the sentence")
            continue
        if ref == OWN_CORRECTED:
            targets = [(claim_id, lab) for lab in own]
            if not targets:
                problems.append(f"{phrase!r} rests on 'corrected', but no check of {claim_id} carries this sentence")
        else:
            parsed = _parse(ref)
            if parsed is None:
                problems.append(f"{phrase!r}: reference {ref!r} is neither 'corrected' nor 'claim-id [check label]'")
                continue
            targets = [parsed]
        found = []
        for cid, lab in targets:
            if (cid, lab) not in checks:
                problems.append(f"{phrase!r}: reference {cid} [{lab}] is no check of the registry")
            else:
                found.append((cid, lab, checks[cid, lab][1]))
        resolved.append((phrase, found))
    spans = [(m.start(), m.start() + len(phrase), found) for phrase, found in resolved
             for m in re.finditer(re.escape(phrase), sentence)]
    covers = {}
    for word, start, end, cls in flagged_words(sentence):
        over = [found for a, b, found in spans if a <= start and end <= b]
        if not over:
            problems.append(f"{word!r} ({cls}) is not covered by any support phrase")
            continue
        refs = [t for found in over for t in found]
        for cid, lab, _ in refs:
            covers.setdefault((cid, lab), []).append(word)
        if cls == "universal" and refs and not any(states_universally(ch) for _, _, ch in refs):
            said = "; ".join(f"{cid} [{lab}] states {getattr(ch, 'stated', None) and ch.stated.text!r}"
                             for cid, lab, ch in refs)
            problems.append(f"{word!r} (universal) rests on no check stated of every case: {said}")
    for phrase, found in resolved:
        for cid, lab, _ in found:
            needs.append((tuple(dict.fromkeys(covers.get((cid, lab), [phrase]))), cid, lab))
    return problems, list(dict.fromkeys(needs))


def static_audit(claims=None):
    """The static audit of every recorded sentence of ``claims`` (default: the registry):
    ``[(claim id, sentence, problems)]``, one per sentence, ``problems`` empty where it passes."""
    if claims is None:
        from .registry import REGISTRY as claims
    claims = tuple(claims)
    checks = _registry_checks(claims)
    out = []
    for cl, e, own in recorded_sentences(claims):
        problems, _ = audit_sentence(e.sentence, e.support, claim_id=cl.id, own=own, checks=checks)
        out.append((cl.id, e.sentence, problems))
    return out


def sentence_rows(planned, rows, *, formulas, registry=None):
    """One row of ``claims.csv`` per recorded sentence of the planned checks' claims (module
    docstring): ``planned`` the plan's checks, ``rows`` their evaluated rows (dicts, in the same
    order), ``formulas.erratum_sentence`` the sentence as recorded; ``registry`` the claims references
    resolve in (default: the registry, and the planned claims)."""
    from .findings import UNSETTLED
    from .verdicts import PASS, REJECTED, UNTESTABLE

    if registry is None:
        from .registry import REGISTRY as registry
    claims = tuple(dict.fromkeys(p.claim for p in planned))
    checks = {**_registry_checks(registry), **_registry_checks(claims)}
    by_label = {(r["claim"], r["check"]): r for r in rows}
    carried = {(p.claim.id, p.check.label) for p in planned}
    out = []
    for cl, e, own, label in labelled_sentences(claims, carried=carried):
        sentence = formulas.erratum_sentence(e)
        problems, needs = audit_sentence(sentence, e.support, claim_id=cl.id, own=own, checks=checks)
        missing, leaning = [], []
        for words, cid, lab in needs:
            row = by_label.get((cid, lab))
            v = None if row is None else row["verdict"]
            if v is None or v == UNTESTABLE:
                missing.append(f"{cid} [{lab}]")
            elif v != PASS:
                problems.append(f"{', '.join(repr(w) for w in words)} rests on {cid} [{lab}], whose verdict is {v}")
            elif row.get("finding") == UNSETTLED:
                leaning.append(f"{', '.join(repr(w) for w in words)} rests on {cid} [{lab}], whose estimate lies "
                               "outside the interval it states")
            elif not establishes(getattr(checks[cid, lab][1], "stated", None), row):
                mcse = row.get("mcse")
                evidence = (f"{round(row['estimate'] * row['n'])} of {int(row['n'])} runs" if row.get("test") == "share"
                            else f"{row['estimate']:.4g} ± {mcse:.2g}" if mcse is not None and math.isfinite(mcse)
                            else f"{row['estimate']:.4g}")
                leaning.append(f"{', '.join(repr(w) for w in words)} rests on {cid} [{lab}]: {evidence} does not "
                               f"establish {checks[cid, lab][1].stated.text!r} (one-sided {SUPPORT_CONFIDENCE:.0%} bound)")
        if problems and cl.id in PENDING_SUPPORT:
            verdict, note = UNTESTABLE, ("support pending (stats.claims.sentences.PENDING_SUPPORT): "
                                         + "; ".join(problems))
        elif problems:
            verdict, note = REJECTED, "; ".join(problems)
        elif missing:
            verdict, note = UNTESTABLE, "rests on checks not in this run: " + "; ".join(missing)
        elif leaning:
            verdict, note = PASS, NOT_SETTLED + "; ".join(leaning)
        else:
            verdict, note = PASS, f"every flagged word supported by {len(needs)} passing check(s)"
        out.append(dict(claim=cl.id, section=cl.section, statement=cl.statement, check=label,
                        test=SENTENCE_TEST, verdict=verdict, note=note,
                        finding=UNSETTLED if verdict == PASS and leaning else ""))
    return out
