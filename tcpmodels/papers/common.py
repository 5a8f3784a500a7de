"""Shared pieces of the paper modules: claim verdicts and paper-versus-ours tables.

Every ``tcpmodels.papers.pN_*`` module returns its claim verdicts through
:func:`claims_frame` and its printed-versus-reproduced numbers through
:func:`comparison_frame`, so all notebooks show the same columns.

Examples
--------
>>> c = Claim(claim="C4.1", paper_says="29 Gbit/s", we_measured="29.02 Gbit/s",
...           holds=True, why="window / RTT")
>>> list(claims_frame([c]).columns)
['claim', 'paper_says', 'we_measured', 'holds', 'why']
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass

import pandas as pd

__all__ = ["Claim", "claims_frame", "Comparison", "comparison_frame", "CLAIM_COLUMNS", "COMPARISON_COLUMNS"]

#: Columns of :func:`claims_frame`, in order.
CLAIM_COLUMNS = ("claim", "paper_says", "we_measured", "holds", "why")
#: Columns of :func:`comparison_frame`, in order.
COMPARISON_COLUMNS = ("quantity", "paper", "ours", "unit", "rel_diff", "note")


@dataclass(frozen=True, kw_only=True)
class Claim:
    """One claim of a paper and our verdict on it.

    Parameters
    ----------
    claim : str
        Short id and wording, e.g. ``"C4.1 standard TCP is limited to 29 Gbit/s"``.
    paper_says : str
        What the paper states, with its numbers as printed.
    we_measured : str
        What our data or computation gives, with numbers and units.
    holds : bool or None
        ``True`` supported, ``False`` contradicted, ``None`` cannot be decided
        from what we have (say why).
    why : str
        The reasoning behind the verdict, including caveats.
    """

    claim: str
    paper_says: str
    we_measured: str
    holds: bool | None
    why: str

    def __post_init__(self) -> None:
        if self.holds not in (True, False, None):
            raise ValueError(f"holds must be True, False or None; got {self.holds!r}")
        for name in ("claim", "paper_says", "we_measured", "why"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise ValueError(f"{name} must be a non-empty string; got {getattr(self, name)!r}")

    def to_dict(self) -> dict[str, object]:
        """The fields as a plain dict (keys in :data:`CLAIM_COLUMNS` order)."""
        return asdict(self)


def claims_frame(claims: Iterable[Claim]) -> pd.DataFrame:
    """Table of claim verdicts, one row per claim.

    Parameters
    ----------
    claims : iterable of Claim

    Returns
    -------
    pandas.DataFrame
        Columns ``claim, paper_says, we_measured, holds, why``; ``holds`` has
        pandas' nullable ``boolean`` dtype (``<NA>`` for undecided).
    """
    rows = list(claims)
    for row in rows:
        if not isinstance(row, Claim):
            raise TypeError(f"claims must be Claim instances; got {type(row).__name__}")
    frame = pd.DataFrame([row.to_dict() for row in rows], columns=list(CLAIM_COLUMNS))
    frame["holds"] = pd.array([row.holds for row in rows], dtype="boolean")
    return frame


@dataclass(frozen=True, kw_only=True)
class Comparison:
    """A number the paper prints beside the one we obtain.

    Parameters
    ----------
    quantity : str
        What is compared.
    paper : float
        Value as printed (``nan`` when the paper gives none).
    ours : float
        Our value, in the same unit.
    unit : str
        Unit of both values, e.g. ``"Gbit/s"``.
    note : str, default ""
        Where the paper's value is printed, or how ours was obtained.
    """

    quantity: str
    paper: float
    ours: float
    unit: str
    note: str = ""

    @property
    def rel_diff(self) -> float:
        """``(ours - paper) / |paper|``; NaN if either is missing or the paper value is 0."""
        paper, ours = float(self.paper), float(self.ours)
        if math.isnan(paper) or math.isnan(ours) or paper == 0:
            return math.nan
        return (ours - paper) / abs(paper)

    def to_dict(self) -> dict[str, object]:
        """The row as a dict with keys in :data:`COMPARISON_COLUMNS` order."""
        return {
            "quantity": self.quantity,
            "paper": float(self.paper),
            "ours": float(self.ours),
            "unit": self.unit,
            "rel_diff": self.rel_diff,
            "note": self.note,
        }


def comparison_frame(rows: Iterable[Comparison]) -> pd.DataFrame:
    """Paper-versus-ours table.

    Parameters
    ----------
    rows : iterable of Comparison

    Returns
    -------
    pandas.DataFrame
        Columns ``quantity, paper, ours, unit, rel_diff, note``; ``rel_diff``
        is ``(ours - paper) / |paper|`` (NaN where the paper prints no value).

    Examples
    --------
    >>> comparison_frame([Comparison(quantity="rate", paper=29, ours=29.02, unit="Gbit/s")]).rel_diff.round(4).tolist()
    [0.0007]
    """
    items = list(rows)
    for row in items:
        if not isinstance(row, Comparison):
            raise TypeError(f"rows must be Comparison instances; got {type(row).__name__}")
    return pd.DataFrame([row.to_dict() for row in items], columns=list(COMPARISON_COLUMNS))
