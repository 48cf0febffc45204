r"""Entry laws for the random queries and keys: standardized (mean 0, variance 1) and symmetric.

Each law knows its even raw moments :math:`\mu_{2r} = E[x^{2r}]` (odd ones vanish) and its
tail index, the supremum of the orders r with :math:`E|x|^r < \infty`.  The closed forms use
the moments, the tests use the tail index to refuse what they cannot calibrate.

=============  =========================================  ==============  ===========
name           law                                        :math:`\mu_4`   tail index
=============  =========================================  ==============  ===========
gaussian       N(0, 1)                                    3               inf
rademacher     +-1 with probability 1/2                   1               inf
uniform        U(-sqrt 3, sqrt 3)                         9/5             inf
student_t      t_nu * sqrt((nu - 2)/nu), nu = df > 2       3 + 6/(nu - 4)  nu
=============  =========================================  ==============  ===========
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from .._validation import is_finite_real

__all__ = ["ENTRY_LAWS", "EntryLaw", "entry_law", "law_moment"]

ENTRY_LAWS = ("gaussian", "rademacher", "uniform", "student_t")
DEFAULT_T_DF = 10.0


@dataclass(frozen=True)
class EntryLaw:
    """A standardized entry law: ``name`` from :data:`ENTRY_LAWS`, ``df`` for student_t only."""

    name: str
    df: float | None = None

    def __post_init__(self):
        law = entry_law(self.name, df=self.df) if isinstance(self.name, str) else entry_law(self.name)
        object.__setattr__(self, "df", law.df)

    @property
    def tail_index(self):
        return self.df if self.name == "student_t" else math.inf

    @property
    def label(self):
        return f"student_t(df={self.df:g})" if self.name == "student_t" else self.name

    def __str__(self):
        return self.label


def entry_law(entries="gaussian", *, df=None):
    """Normalize ``entries`` (a name or an :class:`EntryLaw`) to an :class:`EntryLaw`.

    ``"student_t"`` takes ``df`` (default 10, which has a finite fourth moment; ``df`` must
    exceed 2 for the entries to have unit variance).
    """
    if isinstance(entries, EntryLaw):
        if df is not None:
            raise TypeError("df applies to a law given by name, not to an EntryLaw")
        entries, df = entries.name, entries.df
    if not isinstance(entries, str):
        raise TypeError(f"entries must be one of {ENTRY_LAWS} or an EntryLaw; got {entries!r}")
    if entries not in ENTRY_LAWS:
        raise ValueError(f"entries must be one of {ENTRY_LAWS}; got {entries!r}")
    if entries != "student_t":
        if df is not None:
            raise ValueError(f"df applies only to entries='student_t', not {entries!r}")
        return _make_law(entries, None)
    df = DEFAULT_T_DF if df is None else df
    if isinstance(df, bool) or not isinstance(df, numbers.Real) or not (is_finite_real(df) and df > 2):
        raise ValueError(f"df must be a finite number > 2 for unit-variance student_t entries; got {df!r}")
    return _make_law("student_t", float(df))


def _make_law(name, df):
    law = object.__new__(EntryLaw)
    object.__setattr__(law, "name", name)
    object.__setattr__(law, "df", df)
    return law


def law_moment(law, r):
    """Raw moment :math:`E[x^r]` of a standardized law (``inf`` when it diverges)."""
    law = entry_law(law)
    if isinstance(r, bool) or not isinstance(r, numbers.Integral) or not 0 <= r <= 64:
        raise ValueError(f"r must be an integer from 0 to 64; got {r!r}")
    r = int(r)
    if r % 2:
        if r < law.tail_index:
            return 0.0  # odd moments of a symmetric law
        raise ValueError(f"the {r}-th moment of {law.label} entries does not exist (E|x|^{r} diverges)")
    h = r // 2
    if law.name == "gaussian":
        return float(math.prod(range(1, r, 2)))  # (r - 1)!!
    if law.name == "rademacher":
        return 1.0
    if law.name == "uniform":
        return 3.0**h / (r + 1)
    nu = law.df
    if r >= nu:
        return math.inf
    # t_nu scaled by sqrt((nu-2)/nu): E x^{2h} = (nu-2)^h Gamma(h+1/2) Gamma(nu/2-h) / (sqrt(pi) Gamma(nu/2))
    return math.exp(
        h * math.log(nu - 2) + math.lgamma(h + 0.5) + math.lgamma(nu / 2 - h) - 0.5 * math.log(math.pi) - math.lgamma(nu / 2)
    )
