"""Shared pieces of the paper modules: the contract, the dataset loader, claim views, paper-versus-ours tables.

The contract every ``tcpmodels.papers.pN_*`` module (and ``tcpmodels.fit.report``) follows:

* ``load_dataset(data_dir) -> <Paper>Dataset`` (through its dataset's schema, :meth:`tcpmodels.datasets.DatasetSchema.read`);
* ``tables(dataset, *, quick=False, seed=0) -> dict[str, DataFrame]``;
* ``claims(dataset, tables) -> DataFrame`` with the columns of
  :data:`tcpmodels.stats.VERDICT_COLUMNS`, each row judged by :mod:`tcpmodels.stats`
  (Holm's adjustment within each family: one paper's parts on one engine).

How notebooks show the claims tables (answer box, verdict badges, Holm's note) is
:mod:`tcpmodels.papers.display`. :func:`comparison_frame` gives printed-versus-reproduced numbers.

Examples
--------
>>> comparison_frame([Comparison(quantity="rate", paper=29, ours=29.02, unit="Gbit/s")]).columns.tolist()
['quantity', 'paper', 'ours', 'unit', 'rel_diff', 'note']
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from tcpmodels.stats import (
    VERDICT_COLUMNS,
    VERDICTS,
    ClaimSpec,
    Verdict,
    claims_table,
)

__all__ = [
    "rerun_once_caught_up", "Comparison", "comparison_frame", "COMPARISON_COLUMNS", "check_claims", "keyed_claims_table",
    "claim_spec",
]

#: Columns of :func:`comparison_frame`, in order.
COMPARISON_COLUMNS = ("quantity", "paper", "ours", "unit", "rel_diff", "note")


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
        """The row as a dict with keys in :data:`COMPARISON_COLUMNS` order.

        Returns
        -------
        dict of str to object
            ``quantity, paper, ours, unit, rel_diff, note``, the numbers as float.
        """
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


# ------------------------------------------------------------------ loading
def claim_spec(claim: str, part: str, says: str, quantity: str, effect: float, source: str, direction: int = 1,
               **more: object) -> ClaimSpec:
    """A :class:`~tcpmodels.stats.ClaimSpec` from its fields in the order a paper's claims module states them.

    The papers' claims modules write dozens of specs; this shorthand takes the six fields each of them
    states positionally, in the order they are read.

    Parameters
    ----------
    claim, part, says, quantity : str
        ``claim``, ``part``, ``paper_says`` and ``quantity`` of the spec.
    effect : float
        ``smallest_effect``, in the unit of ``quantity``.
    source : str
        ``effect_source``: where ``effect`` comes from.
    direction : {+1, -1}
        +1 if the paper claims the quantity is positive (or larger), -1 if negative.
    **more : object
        Further :class:`~tcpmodels.stats.ClaimSpec` fields (``attainable_effect`` ...), by name.

    Returns
    -------
    ClaimSpec
        The spec (validated by :class:`~tcpmodels.stats.ClaimSpec` itself).
    """
    return ClaimSpec(claim=claim, part=part, paper_says=says, quantity=quantity, direction=direction,
                     smallest_effect=effect, effect_source=source, **more)


def check_claims(table: pd.DataFrame) -> pd.DataFrame:
    """Raise ``ValueError`` unless ``table`` has exactly the verdict columns and known verdicts; return it.

    Parameters
    ----------
    table : pandas.DataFrame
        A claims table, as a paper module's ``claims`` returns.

    Returns
    -------
    pandas.DataFrame
        ``table`` itself, unchanged.

    Raises
    ------
    ValueError
        If the columns are not :data:`VERDICT_COLUMNS` in that order, or a verdict is not one of
        :data:`tcpmodels.stats.VERDICTS`.
    """
    if tuple(table.columns) != VERDICT_COLUMNS:
        raise ValueError(f"claims table columns must be {VERDICT_COLUMNS}; got {tuple(table.columns)}")
    bad = set(table["verdict"]) - set(VERDICTS)
    if bad:
        raise ValueError(f"unknown verdicts {sorted(bad)}; expected {VERDICTS}")
    return table


def keyed_claims_table(rows: Mapping[str, Verdict], *, family: str) -> pd.DataFrame:
    """:func:`tcpmodels.stats.claims_table` of ``rows`` with a first column ``key``, the name of each row's part.

    The follow-up campaigns (P1 alternation and swaps, P2 send buffer, P3 windows) name their claim parts by
    a key of their specs (``"headline"``, ``"smaller buffer"``, ...), and their readings look the rows up by
    it (``verdicts.set_index("key")``).

    Parameters
    ----------
    rows : mapping of str to tcpmodels.stats.Verdict
        The judged parts by key, in the order the table shows them.
    family : str
        The Holm family of every row.

    Returns
    -------
    pandas.DataFrame
        ``key``, then the columns of :data:`tcpmodels.stats.VERDICT_COLUMNS`; one row per entry of ``rows``.
    """
    table = claims_table(list(rows.values()), family=family)
    table.insert(0, "key", list(rows))
    return table


def rerun_once_caught_up(frame: pd.DataFrame, cells: Sequence[str], rerun: str = "steered") -> str:
    """The kernel testbed a paper's verdicts use: the ``rerun`` testbed once it has caught up, else ``reordering``.

    Kernel samples ran on several testbeds (column ``testbed``): ``reordering`` (no RPS steering, every sample
    before 2026-11-28), ``steered`` (a rerun with ``keep_flow_order``) and ``pinned`` (with
    ``pin_delay_elements`` too). A rerun's samples take over once they are at least as many as the unsteered
    ones in every cell that has unsteered ones, so a verdict never rests on fewer runs than the one it replaces.
    A rerun at a setting without unsteered samples replaces nothing, so it does not take over.

    Parameters
    ----------
    frame : pandas.DataFrame
        Samples of the testbeds, with ``testbed`` and the ``cells`` columns (rows of one setting).
    cells : sequence of str
        The columns that make a cell (e.g. kind and RTT pair).
    rerun : str
        The rerun's testbed (``"steered"`` or ``"pinned"``).

    Returns
    -------
    str
        ``rerun`` or ``"reordering"`` (also without any sample of ``rerun``).
    """
    need = frame[frame["testbed"] == "reordering"].groupby(list(cells)).size()
    have = frame[frame["testbed"] == rerun].groupby(list(cells)).size()
    if len(have) == 0 or len(need) == 0:
        return "reordering"
    return rerun if bool((have.reindex(need.index, fill_value=0) >= need).all()) else "reordering"

