"""Shared pieces of the paper modules: the contract, the dataset loader, claim views, paper-versus-ours tables.

The contract every ``tcpmodels.papers.pN_*`` module (and ``tcpmodels.fit.report``) follows:

* ``load_dataset(data_dir) -> <Paper>Dataset`` (through its dataset's schema, :meth:`tcpmodels.datasets.DatasetSchema.read`);
* ``tables(dataset, *, quick=False, seed=0) -> dict[str, DataFrame]``;
* ``claims(dataset, tables) -> DataFrame`` with the columns of
  :data:`tcpmodels.stats.VERDICT_COLUMNS`, each row judged by :mod:`tcpmodels.stats`
  (Holm's adjustment within each family: one paper's parts on one engine).

Notebooks open with :func:`answer_box` (at most three sentences computed from the verdicts by the
paper module's ``answer``) and :func:`claims_summary` of the headline parts (claim, coloured verdict
badge, effect with its CI, one line of why), and end with :func:`claims_full` (every column,
left-aligned, wrapped). :func:`comparison_frame` gives printed-versus-reproduced numbers.

Examples
--------
>>> comparison_frame([Comparison(quantity="rate", paper=29, ours=29.02, unit="Gbit/s")]).columns.tolist()
['quantity', 'paper', 'ours', 'unit', 'rel_diff', 'note']
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd
from pandas.io.formats.style import Styler

from tcpmodels._docstrings import SharedEntries
from tcpmodels.stats import (
    BADGE_COLOURS,
    VERDICT_COLUMNS,
    VERDICTS,
    ClaimSpec,
    Verdict,
    claims_table,
)

__all__ = [
    "rerun_once_caught_up", "Comparison", "comparison_frame", "COMPARISON_COLUMNS", "check_claims", "keyed_claims_table",
    "claims_summary", "claims_full", "verdict_badge", "verdict_slug", "human", "table_view", "answer_box",
    "holm_note", "BADGE_COLOURS", "AnswerBox", "MarkdownText", "claim_spec",
]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    table : pandas.DataFrame
        A claims table (columns :data:`VERDICT_COLUMNS`).
""")

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


# ------------------------------------------------------------------ display
_LEFT = [{"selector": "th", "props": [("text-align", "left"), ("vertical-align", "top")]},
         {"selector": "td", "props": [("text-align", "left"), ("vertical-align", "top"),
                                      ("white-space", "normal"), ("word-break", "break-word")]}]


def verdict_slug(verdict: str) -> str:
    """The verdict as a CSS class suffix: ``"smaller than claimed"`` -> ``"smaller-than-claimed"``.

    Parameters
    ----------
    verdict : str
        One of :data:`tcpmodels.stats.VERDICTS` (any text is accepted).

    Returns
    -------
    str
        Lower case, spaces as hyphens.
    """
    return "-".join(verdict.lower().split())


def verdict_badge(verdict: str) -> str:
    """HTML badge for one verdict (class ``verdict verdict-<slug>``, which the reports index counts).

    Parameters
    ----------
    verdict : str
        One of :data:`tcpmodels.stats.VERDICTS`; any other text gets a grey badge.

    Returns
    -------
    str
        An HTML ``<span>`` with the (escaped) verdict, coloured by :data:`BADGE_COLOURS`.
    """
    bg = BADGE_COLOURS.get(verdict, "#6e7781")
    return (f'<span class="verdict verdict-{html.escape(verdict_slug(verdict))}" style="background:{bg};color:#ffffff;'
            f'padding:1px 7px;border-radius:9px;font-weight:600;white-space:nowrap">{html.escape(verdict)}</span>')


def _num(x: float) -> str:
    if x != x:
        return ""
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:.3g}"


def _effect_ci(r) -> str:
    if r.effect != r.effect:
        return "—"
    exact = r.ci_low != r.ci_low or r.ci_low == r.ci_high  # no interval, or an exact value
    ci = "" if exact else f" [{_num(r.ci_low)}, {_num(r.ci_high)}]"
    return _num(r.effect) + ci


def _first_sentence(text: str, limit: int = 160) -> str:
    line = text.split("; ")[-1] if text else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _styled(frame: pd.DataFrame, widths: dict[str, str]):
    styles = list(_LEFT) + [{"selector": f"td.col{frame.columns.get_loc(c)}", "props": [("min-width", w)]}
                            for c, w in widths.items() if c in frame.columns]
    return frame.style.hide(axis="index").set_table_styles(styles)


@_PARAMETERS.fill
def claims_summary(table: pd.DataFrame, rows: Sequence[int] | pd.Series | None = None) -> Styler:
    """The opening table of a notebook: claim, part, coloured verdict, effect [CI], p (Holm), runs, one line of why.

    The *why* shown is the last clause of the ``why`` column (the rule that decided, or Holm's
    adjustment); the full text is in :func:`claims_full`.

    Parameters
    ----------
    {table}
    rows : sequence of int or boolean Series, optional
        The rows to show (positions, or a mask aligned with ``table``), e.g. a paper's headline parts;
        default all.

    Returns
    -------
    pandas.io.formats.style.Styler
        Columns ``claim, part, verdict, effect [CI], p (Holm), runs, runs needed, why (deciding rule)``,
        left-aligned, wrapped, without index; numbers to 3 significant digits.

    Raises
    ------
    ValueError
        If ``table`` is not a claims table (see :func:`check_claims`).
    """
    check_claims(table)
    if rows is not None:
        table = table[rows] if isinstance(rows, pd.Series) else table.iloc[list(rows)]
    view = pd.DataFrame({
        "claim": table["claim"],
        "part": table["part"],
        "verdict": [verdict_badge(v) for v in table["verdict"]],
        "effect [CI]": [_effect_ci(r) for r in table.itertuples()],
        "p (Holm)": [_num(x) for x in table["pvalue_holm"]],
        "runs": table["n_runs"].astype(str),
        "runs needed": [_num(x) for x in table["runs_needed"]],
        "why (deciding rule)": [_first_sentence(w) for w in table["why"]],
    })
    return _styled(view, {"claim": "16em", "why (deciding rule)": "22em"})


@_PARAMETERS.fill
def claims_full(table: pd.DataFrame) -> Styler:
    """Every column of the claims table as a pandas ``Styler``: left-aligned, wrapped, never cut, badges coloured.

    Parameters
    ----------
    {table}

    Returns
    -------
    pandas.io.formats.style.Styler
        All columns, the verdict as a badge and the numbers to 3 significant digits (NaN blank).

    Raises
    ------
    ValueError
        If ``table`` is not a claims table (see :func:`check_claims`).
    """
    check_claims(table)
    view = table.copy()
    view["verdict"] = [verdict_badge(v) for v in table["verdict"]]
    for col in ("effect", "ci_low", "ci_high", "statistic", "df", "pvalue", "pvalue_holm", "runs_needed"):
        view[col] = [_num(x) for x in table[col]]
    return _styled(view, {"claim": "14em", "paper_says": "16em", "we_measured": "18em", "test": "16em",
                          "why": "22em"})


@dataclass(frozen=True)
class MarkdownText:
    """A paragraph a notebook shows as Markdown (``str()`` gives the text)."""

    text: str

    def _repr_markdown_(self) -> str:
        return self.text

    def __str__(self) -> str:
        return self.text


def holm_note(table: pd.DataFrame) -> MarkdownText:
    """What Holm's adjustment did to a claims table, as a Markdown paragraph computed from it.

    Parameters
    ----------
    table : pandas.DataFrame
        A claims table (``family``, ``pvalue``, ``pvalue_holm``, ``why``).

    Returns
    -------
    MarkdownText
        The families with their sizes (parts with a p-value), and the parts whose label Holm's
        adjustment made inconclusive (claim and part), or that none was.
    """
    fam = table[table["pvalue_holm"].notna()].groupby("family", sort=False).size()
    sizes = ", ".join(f"{name or 'all'} {n}" for name, n in fam.items())
    changed = table[table["why"].str.contains("after Holm's adjustment", regex=False)]
    head = ("Labels are after Holm's correction within each family (one paper's parts on one engine; parts with a "
            f"p-value: {sizes or 'none'}); the intervals are the unadjusted ones. ")
    if not len(changed):
        return MarkdownText(head + "The correction changed no label.")
    names = "; ".join(f"{_short_claim(c)} / {p}" for c, p in zip(changed["claim"], changed["part"]))
    return MarkdownText(head + f"It made {len(changed)} decided label(s) inconclusive: {names}.")


def _short_claim(claim: str) -> str:
    """The claim's id with its ``[...]`` tags (``"C1.3 [kernel, tm_lia]"``, ``"C3.2 [reading: divide]"``)."""
    tags = re.findall(r"\[[^\]]*\]", claim)
    head = claim.split(" [", 1)[0] if " [" in claim and len(claim.split(" [", 1)[0]) <= 10 else claim.split(" ", 1)[0]
    return " ".join([head, *tags])


@dataclass(frozen=True)
class AnswerBox:
    """The answer to a paper's question, shown boxed at the top of its notebook (HTML and Markdown)."""

    text: str

    def _repr_html_(self) -> str:
        return ('<div class="answer" style="border:2px solid #0969da;border-radius:6px;padding:8px 12px;'
                f'margin:4px 0;font-size:1.05em"><b>Answer.</b> {html.escape(self.text)}</div>')

    def _repr_markdown_(self) -> str:
        return f"> **Answer.** {self.text}"

    def __str__(self) -> str:
        return self.text


def answer_box(sentences: Sequence[str]) -> AnswerBox:
    """At most three sentences, computed from the verdicts by a paper's ``answer``, as the notebook's answer box.

    Parameters
    ----------
    sentences : sequence of str
        One to three sentences, each ending with a full stop.

    Returns
    -------
    AnswerBox
        Shown boxed by Jupyter (``_repr_html_``); ``str()`` gives the text.

    Raises
    ------
    ValueError
        If there are no sentences or more than three, one is empty, or one holds more than one sentence (a full
        stop, question or exclamation mark followed by a capital letter).
    """
    items = [str(x).strip() for x in sentences]
    if not 1 <= len(items) <= 3 or not all(items):
        raise ValueError(f"an answer box holds 1 to 3 non-empty sentences; got {len(items)}: {items!r}")
    several = [x for x in items if re.search(r"[.?!]\s+[A-Z]", x.rstrip(".?!"))]
    if several:
        raise ValueError(f"each item of an answer box must be one sentence; got {several[0]!r}")
    return AnswerBox(" ".join(x if x.endswith(".") else x + "." for x in items))


def human(value: float, unit: str) -> str:
    """One number in the unit people read: bit/s as Mbit/s or Gbit/s, bytes as KB/MB/GB (10^3), s as ms or s.

    Parameters
    ----------
    value : float
        The number, in ``unit``.
    unit : str
        ``"bit/s"``, ``"bytes"`` or ``"s"`` are rescaled (to kbit/s-Gbit/s, KB-GB, ms/s/h); any other
        unit is appended as given (nothing for ``"-"`` or ``""``).

    Returns
    -------
    str
        The value to 4 significant digits with its unit; ``""`` for NaN.

    Examples
    --------
    >>> human(2.90196e10, "bit/s"), human(1.073725440e9, "bytes"), human(0.296, "s"), human(0.977, "-")
    ('29.02 Gbit/s', '1.074 GB', '296 ms', '0.977')
    """
    x = float(value)
    if x != x:
        return ""
    if unit == "bit/s":
        for scale, name in ((1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s")):
            if abs(x) >= scale:
                return f"{x / scale:.4g} {name}"
        return f"{x:.4g} bit/s"
    if unit == "bytes":
        for scale, name in ((1e9, "GB"), (1e6, "MB"), (1e3, "KB")):
            if abs(x) >= scale:
                return f"{x / scale:.4g} {name}"
        return f"{x:.4g} B"
    if unit == "s":
        if abs(x) >= 3600:
            return f"{x / 3600:.4g} h"
        if x == 0 or abs(x) >= 1:
            return f"{x:.4g} s"
        return f"{x * 1e3:.4g} ms"
    return f"{x:.4g}" + ("" if unit in ("-", "") else f" {unit}")


def table_view(frame: pd.DataFrame) -> Styler:
    """Any table as a pandas ``Styler`` read like the claims tables: left-aligned, wrapped (never cut), no index.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table to show.

    Returns
    -------
    pandas.io.formats.style.Styler
        ``frame`` styled, values unchanged.
    """
    return frame.style.hide(axis="index").set_table_styles(list(_LEFT))


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

