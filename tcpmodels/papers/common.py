"""Shared pieces of the paper modules: the contract, the dataset loader, claim views, paper-versus-ours tables.

The contract every ``tcpmodels.papers.pN_*`` module (and ``tcpmodels.fit.report``) follows:

* ``load_dataset(data_dir) -> <Paper>Dataset`` (through :func:`read_frames`);
* ``tables(dataset, *, quick=False, seed=0) -> dict[str, DataFrame]``;
* ``claims(dataset, tables) -> DataFrame`` with the columns of
  :data:`tcpmodels.stats.CLAIM_COLUMNS`, each row judged by :mod:`tcpmodels.stats`.

Notebooks show the verdicts with :func:`claims_summary` (first: claim, coloured
verdict badge, effect with its CI, one line of why) and :func:`claims_full`
(last: every column, left-aligned, wrapped). :func:`comparison_frame` gives
printed-versus-reproduced numbers. :class:`Claim` / :func:`claims_frame` are
the old boolean ``holds`` verdicts, kept for before/after comparisons.

Examples
--------
>>> c = Claim(claim="C4.1", paper_says="29 Gbit/s", we_measured="29.02 Gbit/s",
...           holds=True, why="window / RTT")
>>> list(claims_frame([c]).columns)
['claim', 'paper_says', 'we_measured', 'holds', 'why']
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd
from pandas.io.formats.style import Styler

from tcpmodels.stats import CLAIM_COLUMNS as VERDICT_COLUMNS
from tcpmodels.stats import VERDICTS

__all__ = [
    "rerun_once_caught_up",
    "Claim", "claims_frame", "Comparison", "comparison_frame", "CLAIM_COLUMNS", "COMPARISON_COLUMNS",
    "VERDICT_COLUMNS", "read_frames", "check_claims", "claims_summary", "claims_full", "verdict_badge",
    "before_after", "human", "table_view", "from_old_verdicts",
]

#: Columns of the old :func:`claims_frame` (boolean ``holds``), in order.
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
        """The fields as a plain dict (keys in :data:`CLAIM_COLUMNS` order).

        Returns
        -------
        dict of str to object
            ``claim, paper_says, we_measured, holds, why``.
        """
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
def read_frames(data_dir: str | Path, prefix: str, names: Sequence[str], *, optional: Sequence[str] = (),
                command: str) -> dict[str, object]:
    """Read ``<data_dir>/datasets/<prefix>_<name>.parquet`` for each name, and ``<prefix>_provenance.json``.

    Parameters
    ----------
    data_dir : str or Path
        The project's ``data`` directory (``datasets/`` below it); a path that already is the
        ``datasets`` directory is accepted too.
    prefix : str
        File prefix, e.g. ``"p3"``.
    names : sequence of str
        Required tables.
    optional : sequence of str
        Tables read when present (absent ones are left out of the result).
    command : str
        The command that writes the dataset, named in the error.

    Returns
    -------
    dict
        ``{name: DataFrame}`` plus ``"provenance"`` (``{}`` when there is no JSON file).

    Raises
    ------
    FileNotFoundError
        Naming the first missing file and ``command``.
    """
    d = Path(data_dir)
    if not (d / f"{prefix}_{names[0]}.parquet").exists() and (d / "datasets").is_dir():
        d = d / "datasets"
    out: dict[str, object] = {}
    for name in names:
        path = d / f"{prefix}_{name}.parquet"
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing; write it with `{command}`")
        out[name] = pd.read_parquet(path)
    for name in optional:
        path = d / f"{prefix}_{name}.parquet"
        if path.exists():
            out[name] = pd.read_parquet(path)
    prov = d / f"{prefix}_provenance.json"
    out["provenance"] = json.loads(prov.read_text()) if prov.exists() else {}
    return out


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


# ------------------------------------------------------------------ display
#: Badge colours (background, text) per verdict.
BADGE_COLOURS = {"supported": ("#1a7f37", "#ffffff"), "contradicted": ("#cf222e", "#ffffff"),
                 "inconclusive": ("#9a6700", "#ffffff")}
_LEFT = [{"selector": "th", "props": [("text-align", "left"), ("vertical-align", "top")]},
         {"selector": "td", "props": [("text-align", "left"), ("vertical-align", "top"),
                                      ("white-space", "normal"), ("word-break", "break-word")]}]


def verdict_badge(verdict: str) -> str:
    """HTML badge for one verdict (class ``verdict verdict-<verdict>``, which the reports index counts).

    Parameters
    ----------
    verdict : str
        ``"supported"``, ``"contradicted"`` or ``"inconclusive"``; any other text gets a grey badge.

    Returns
    -------
    str
        An HTML ``<span>`` with the (escaped) verdict, coloured by :data:`BADGE_COLOURS`.
    """
    bg, fg = BADGE_COLOURS.get(verdict, ("#6e7781", "#ffffff"))
    return (f'<span class="verdict verdict-{html.escape(verdict)}" style="background:{bg};color:{fg};'
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


def claims_summary(table: pd.DataFrame) -> Styler:
    """The opening table of a notebook: claim, part, coloured verdict, effect [CI], runs needed, one line of why.

    The *why* shown is the last clause of the ``why`` column (the rule that decided); the
    full text is in :func:`claims_full`.

    Parameters
    ----------
    table : pandas.DataFrame
        A claims table (columns :data:`VERDICT_COLUMNS`).

    Returns
    -------
    pandas.io.formats.style.Styler
        Columns ``claim, part, verdict, effect [CI], runs, runs needed, why (deciding rule)``,
        left-aligned, wrapped, without index; numbers to 3 significant digits.

    Raises
    ------
    ValueError
        If ``table`` is not a claims table (see :func:`check_claims`).
    """
    check_claims(table)
    view = pd.DataFrame({
        "claim": table["claim"],
        "part": table["part"],
        "verdict": [verdict_badge(v) for v in table["verdict"]],
        "effect [CI]": [_effect_ci(r) for r in table.itertuples()],
        "runs": table["n_runs"].astype(str),
        "runs needed": [_num(x) for x in table["runs_needed"]],
        "why (deciding rule)": [_first_sentence(w) for w in table["why"]],
    })
    return _styled(view, {"claim": "16em", "why (deciding rule)": "22em"})


def claims_full(table: pd.DataFrame) -> Styler:
    """Every column of the claims table as a pandas ``Styler``: left-aligned, wrapped, never cut, badges coloured.

    Parameters
    ----------
    table : pandas.DataFrame
        A claims table (columns :data:`VERDICT_COLUMNS`).

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
    for col in ("effect", "ci_low", "ci_high", "runs_needed"):
        view[col] = [_num(x) for x in table[col]]
    return _styled(view, {"claim": "14em", "paper_says": "16em", "we_measured": "18em", "test": "16em",
                          "why": "22em"})


def before_after(before: pd.DataFrame, after: pd.DataFrame, *, key_chars: int = 4) -> pd.DataFrame:
    """Old boolean verdicts beside the new ones, per claim id (the first ``key_chars`` characters of ``claim``).

    ``before`` has the old ``holds`` column (one or more rows per id); ``after`` is a claims
    table (one row per part).

    Parameters
    ----------
    before : pandas.DataFrame
        Old verdicts, with ``claim`` and ``holds`` columns (as :func:`claims_frame`).
    after : pandas.DataFrame
        New verdicts, with ``claim`` and ``verdict`` columns (a claims table).
    key_chars : int
        Length of the claim id at the start of ``claim``, e.g. 4 for ``"C3.1"``.

    Returns
    -------
    pandas.DataFrame
        One row per id (sorted): ``id``, ``before`` and ``after`` (the distinct verdicts of the
        id's rows, comma-separated; ``"—"`` when the id is absent on that side) and ``changed`` (bool).
    """
    from tcpmodels.stats import holds_to_verdict

    def verdicts(frame, column, convert):
        out: dict[str, list[str]] = {}
        for claim, value in zip(frame["claim"], frame[column]):
            v = convert(value)
            out.setdefault(str(claim)[:key_chars], [])
            if v not in out[str(claim)[:key_chars]]:
                out[str(claim)[:key_chars]].append(v)
        return out

    b = verdicts(before, "holds", holds_to_verdict)
    a = verdicts(after, "verdict", str)
    rows = []
    for key in sorted(set(b) | set(a)):
        bv, av = ", ".join(b.get(key, ["—"])), ", ".join(a.get(key, ["—"]))
        rows.append({"id": key, "before": bv, "after": av, "changed": bv != av})
    return pd.DataFrame(rows)


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


def from_old_verdicts(frame: pd.DataFrame, *, n_runs: int, reason: str) -> pd.DataFrame:
    """An old ``holds`` table (:func:`claims_frame`) in the verdict columns, for claims not yet restated as tests.

    ``holds`` True / False / NA become supported / contradicted / inconclusive; ``effect`` and the CI are
    NaN; ``test`` says the verdict is the old fixed-threshold rule (``reason`` says why it was not yet
    restated), so a reader can tell these rows from the ones :mod:`tcpmodels.stats` judged.

    Parameters
    ----------
    frame : pandas.DataFrame
        An old claims table (columns :data:`CLAIM_COLUMNS`).
    n_runs : int
        Runs behind the old verdicts, put in every row.
    reason : str
        Why the claims are not yet restated as tests, put in the ``test`` column.

    Returns
    -------
    pandas.DataFrame
        A claims table (columns :data:`VERDICT_COLUMNS`), one row per old claim, part ``"whole claim"``.
    """
    from tcpmodels.stats import holds_to_verdict

    out = pd.DataFrame({
        "claim": frame["claim"], "part": "whole claim", "paper_says": frame["paper_says"],
        "we_measured": frame["we_measured"], "effect": math.nan, "ci_low": math.nan, "ci_high": math.nan,
        "n_runs": int(n_runs), "test": f"old fixed-threshold rule, not yet a statistical test ({reason})",
        "verdict": [holds_to_verdict(h) for h in frame["holds"]], "runs_needed": math.nan, "why": frame["why"],
    })
    return check_claims(out[list(VERDICT_COLUMNS)])


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

