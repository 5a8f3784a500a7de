"""How a paper notebook shows its claims: the answer box, the claims tables with coloured verdict badges,
Holm's note, and numbers with their units.

Notebooks open with :func:`answer_box` (at most three sentences computed from the verdicts by the
paper module's ``answer``) and :func:`claims_summary` of the headline parts (claim, coloured verdict
badge, effect with its CI, one line of why), and end with :func:`claims_full` (every column,
left-aligned, wrapped). The tables themselves are made and checked in :mod:`tcpmodels.papers.common`.

Examples
--------
>>> human(2.5e10, "bit/s"), verdict_slug("smaller than claimed")
('25 Gbit/s', 'smaller-than-claimed')
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
from pandas.io.formats.style import Styler

from tcpmodels._docstrings import SharedEntries
from tcpmodels.papers.common import check_claims
from tcpmodels.stats import BADGE_COLOURS

__all__ = ["claims_summary", "claims_full", "verdict_badge", "verdict_slug", "human", "table_view", "answer_box",
           "holm_note", "AnswerBox", "MarkdownText"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    table : pandas.DataFrame
        A claims table (columns :data:`tcpmodels.stats.VERDICT_COLUMNS`).
""")

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
