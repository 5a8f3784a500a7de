"""The headline rows of a claims table (the ones a paper's notebook opens with), declared as data.

Each paper states which of its rows are the headline as a :class:`Headline`; the mask that picks them from
a claims table (:func:`~tcpmodels.stats.spec.claims_table`) is written here once.

Examples
--------
>>> import pandas as pd
>>> v = pd.DataFrame({"claim": ["C9.1 X", "C9.1 X", "C9.2 Y", "C9.3 Z"],
...                   "part": ["mean", "contrast", "slope", "mean dJ over runs"]})
>>> Headline(claims=("C9.1",), exclude_parts=("contrast",))(v).tolist()
[True, False, False, False]
>>> Headline(claims=("C9.2",), part_contains="over runs")(v).tolist()
[False, False, True, True]
>>> Headline(claim_parts=(("C9.1", "contrast"),))(v).tolist(), Headline(every_row=True)(v).all()
([False, True, False, False], True)
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

__all__ = ["Headline"]


@dataclass(frozen=True)
class Headline:
    """Mask of a claims table's headline rows; called on the table (``claim`` and ``part`` columns).

    A row is in the headline when any selector picks it (its claim starts with one of ``claims``, its part
    starts with one of ``parts``, its part contains ``part_contains``, or its claim and part are one of
    ``claim_parts``) and its part starts with none of ``exclude_parts``; with ``every_row``, every row is.

    Parameters
    ----------
    claims : tuple of str
        Claim prefixes, e.g. ``("C5.4", "C5.1")``.
    parts : tuple of str
        Part prefixes.
    part_contains : str or None
        A text the part contains (literally).
    claim_parts : tuple of (str, str)
        ``(claim prefix, part)`` pairs, the part matched whole.
    exclude_parts : tuple of str
        Part prefixes never in the headline.
    every_row : bool
        Every row is the headline (a table of a few parts per scenario).

    Raises
    ------
    ValueError
        If nothing selects a row, or ``every_row`` is given with a selector.
    """

    claims: tuple[str, ...] = ()
    parts: tuple[str, ...] = ()
    part_contains: str | None = None
    claim_parts: tuple[tuple[str, str], ...] = ()
    exclude_parts: tuple[str, ...] = ()
    every_row: bool = False

    def __post_init__(self) -> None:
        selectors = bool(self.claims or self.parts or self.part_contains or self.claim_parts)
        if selectors == self.every_row:
            raise ValueError("give every_row=True or at least one of claims, parts, part_contains, claim_parts; "
                             f"got every_row={self.every_row} with selectors={selectors}")

    def __call__(self, verdicts: pd.DataFrame) -> pd.Series:
        """Mask of the headline rows of ``verdicts`` (a claims table).

        Parameters
        ----------
        verdicts : pandas.DataFrame
            A claims table with ``claim`` and ``part``.

        Returns
        -------
        pandas.Series of bool
            Aligned with ``verdicts``.
        """
        claim, part = verdicts["claim"].astype(str), verdicts["part"].astype(str)
        if self.every_row:
            return pd.Series(True, index=verdicts.index)
        mask = pd.Series(False, index=verdicts.index)
        if self.claims:
            mask |= claim.str.startswith(self.claims)
        if self.parts:
            mask |= part.str.startswith(self.parts)
        if self.part_contains:
            mask |= part.str.contains(self.part_contains, regex=False)
        for claim_id, part_name in self.claim_parts:
            mask |= claim.str.startswith(claim_id) & (part == part_name)
        if self.exclude_parts:
            mask &= ~part.str.startswith(self.exclude_parts)
        return mask
