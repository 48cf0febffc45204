"""A check read at its source, not computed: a fact the text states about a paper, a model's
configuration or another project's code, against what that source says.

Each entry is a record made once, by reading the source, and evaluated offline: the text's
fact as a :class:`~stats.claims.measures.Stated` interval (a number, or a yes/no statement
as the intervals around 1 and 0), what the source gives as ``found`` (a number, or 1/0 for
yes/no), a paraphrase of each, the source as a structured citation -- a
:class:`PaperSource` (a paper, its arXiv id and the section, footnote, table, algorithm or
appendix read) or a :class:`RepoSource` (a repository, a path and the commit or version
read) -- and the verdict the record supports, in the suite's finding classes
(``docs/findings.md``).  Validation holds the verdict to the record: ``holds`` when the
stated interval contains ``found``; ``erratum``/``caveat`` when it does not, with a recorded
:class:`~stats.claims.measures.Erratum` of that kind whose corrected statement contains
``found``.  No text is copied from a source; ``source_says`` is a paraphrase.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import ClassVar

from ..findings import FINDINGS, HOLDS
from ..measures import Stated
from .base import CORRECTION_SUFFIX, Check, Outcome, finite

__all__ = ["DocumentaryCheck", "PaperSource", "RepoSource", "SOURCE_KINDS"]

_ARXIV = re.compile(r"\d{4}\.\d{4,5}(v\d+)?")
#: The parts of a paper a locator may name: at least one, followed by its number or name.
_PAPER_PART = re.compile(r"\b((section|footnote|table|algorithm|appendix|figure|equation)\s+[\w.]+|abstract)\b", re.IGNORECASE)
_REPO = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*")
_COMMIT = re.compile(r"[0-9a-f]{40}")


def _text(owner, name, value, what):
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{owner}.{name} must be {what}, a non-empty string; got {value!r}")


@dataclass(frozen=True)
class PaperSource:
    """A paper read at one place: ``citation`` ("Vaswani et al. (2017)"), ``title``, ``arxiv``
    (a new-style arXiv id, "1706.03762"), ``locator`` (the abstract, or the section, footnote,
    table, algorithm or appendix read, "section 3.2.1, footnote 4"), and ``read_via`` when the paper's text was
    read through a transcription or quotation rather than the paper itself (say which)."""

    citation: str
    title: str
    arxiv: str
    locator: str
    read_via: str = ""

    def __post_init__(self):
        _text("PaperSource", "citation", self.citation, "the paper's authors and year")
        _text("PaperSource", "title", self.title, "the paper's title")
        if not isinstance(self.arxiv, str) or not _ARXIV.fullmatch(self.arxiv):
            raise ValueError(f"PaperSource.arxiv must be a new-style arXiv id such as '1706.03762'; got {self.arxiv!r}")
        _text("PaperSource", "locator", self.locator, "where in the paper")
        if not _PAPER_PART.search(self.locator):
            raise ValueError("PaperSource.locator must name the abstract, or a section, footnote, table, algorithm, "
                             "appendix, figure or equation with its number (e.g. 'section 3.2.1, footnote 4'); "
                             f"got {self.locator!r}")
        if not isinstance(self.read_via, str):
            raise TypeError(f"PaperSource.read_via must be a string; got {self.read_via!r}")

    def cite(self):
        """One line: who, what, where, and how it was read."""
        via = f" (read via {self.read_via})" if self.read_via else ""
        return f"{self.citation}, {self.title}, arXiv {self.arxiv}, {self.locator}{via}"


@dataclass(frozen=True)
class RepoSource:
    """A file of a public repository read at one version: ``repo`` ("owner/name"), ``path``
    inside it, ``commit`` (40 hex digits) or ``version`` (a release), ``locator`` (the class,
    function or field read) and ``read_via`` when read through another copy (say which)."""

    repo: str
    path: str
    locator: str
    commit: str = ""
    version: str = ""
    read_via: str = ""

    def __post_init__(self):
        if not isinstance(self.repo, str) or not _REPO.fullmatch(self.repo):
            raise ValueError(f"RepoSource.repo must be 'owner/name'; got {self.repo!r}")
        _text("RepoSource", "path", self.path, "a path inside the repository")
        if self.path.startswith("/"):
            raise ValueError(f"RepoSource.path must be relative to the repository's root; got {self.path!r}")
        _text("RepoSource", "locator", self.locator, "the class, function or field read")
        for name in ("commit", "version", "read_via"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"RepoSource.{name} must be a string; got {getattr(self, name)!r}")
        if self.commit and not _COMMIT.fullmatch(self.commit):
            raise ValueError(f"RepoSource.commit must be 40 lower-case hex digits; got {self.commit!r}")
        if not (self.commit or self.version.strip()):
            raise ValueError("RepoSource needs the commit or the version that was read (commit=, version=)")

    def cite(self):
        """One line: repository, path, version and what was read in it."""
        at = f"commit {self.commit}" if self.commit else f"version {self.version}"
        via = f" (read via {self.read_via})" if self.read_via else ""
        return f"{self.repo}: {self.path} at {at}, {self.locator}{via}"


#: The shapes a documentary check's source may take.
SOURCE_KINDS = (PaperSource, RepoSource)


@dataclass(frozen=True, kw_only=True)
class DocumentaryCheck(Check):
    """The text's ``fact`` (``stated``) against what ``source`` says (``found``): ``holds`` when
    ``stated`` contains ``found``, else ``refuted``.  Decided outright from the record, offline:
    ``estimate`` is ``found``, there is no sample (``n`` = 0) and no error (``mcse`` = 0)."""

    stated: Stated = None
    found: float = None
    fact: str = ""
    source_says: str = ""
    source: PaperSource | RepoSource = None
    verdict: str = ""

    kind: ClassVar[str] = "documentary"
    calibration: ClassVar[str] = "deterministic"
    draws: ClassVar[bool] = False

    def validate(self):
        who = f"check {self.label!r}"
        if self.source is None:
            raise ValueError(f"{who}: a documentary check needs source=, a PaperSource (paper, arXiv id and locator) "
                             "or a RepoSource (repository, path and commit or version)")
        if not isinstance(self.source, SOURCE_KINDS):
            raise TypeError(f"{who}: source must be a PaperSource or a RepoSource; got {type(self.source).__name__}")
        if not isinstance(self.stated, Stated):
            raise ValueError(f"{who}: a documentary check needs stated=, the text's fact as a Stated interval")
        if isinstance(self.found, bool) or not isinstance(self.found, (int, float)) or not finite(self.found):
            raise ValueError(f"{who}: found must be the finite number the source gives (1/0 for yes/no); got {self.found!r}")
        for name, what in (("fact", "the text's fact, paraphrased"), ("source_says", "what the source says, paraphrased")):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"{who}: {name} must be {what}, a non-empty string; got {value!r}")
        if self.verdict not in FINDINGS:
            raise ValueError(f"{who}: verdict must be one of {FINDINGS}; got {self.verdict!r}")
        agrees = self.stated.contains(self.found)
        e = self.erratum
        if self.verdict == HOLDS:
            if not agrees:
                raise ValueError(f"{who}: verdict 'holds' contradicts the record: the source's {self.found!r} lies "
                                 f"outside the stated {self.stated.describe()}")
            if e is not None:
                raise ValueError(f"{who}: verdict 'holds' with a recorded erratum; a holding fact carries none")
            return
        if agrees:
            raise ValueError(f"{who}: verdict {self.verdict!r} contradicts the record: the source's {self.found!r} "
                             f"lies inside the stated {self.stated.describe()}")
        if e is None or e.kind != self.verdict:
            raise ValueError(f"{who}: verdict {self.verdict!r} needs a recorded Erratum of kind {self.verdict!r} "
                             "(erratum=)")
        if not e.corrected.contains(self.found):
            raise ValueError(f"{who}: the erratum's corrected statement {e.corrected.describe()} does not contain the "
                             f"source's {self.found!r}")

    def power_design(self, ctx, alpha):
        return 0, math.nan, "documentary"

    def corrected(self):
        """The erratum's corrected statement as a check of its own: it holds by the same record."""
        return replace(self, label=f"{self.label}{CORRECTION_SUFFIX}", stated=self.erratum.corrected, erratum=None,
                       verdict=HOLDS)

    def evaluate(self, ctx, design_sd):
        st = self.stated
        numbers = dict(expected=st.value, estimate=float(self.found), mcse=0.0, detectable=0.0)
        notes = [f"claims {st.describe()}", self.source.cite(), f"source: {self.source_says}"]
        return Outcome(numbers, HOLDS if st.contains(self.found) else "refuted", notes)
