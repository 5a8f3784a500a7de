"""Runs per claim that the power analysis of :mod:`tcpmodels.stats` asks for, from the shipped datasets.

For every (claim, part) of a paper's claims table (computed from ``data/datasets`` in full mode)
this prints the effect, the between-run standard deviation behind it, the runs it rests on, the
verdict, and the runs a t test needs to decide it with 80 % power at the claim's smallest effect
(:func:`tcpmodels.stats.spec.ttest_runs_needed`, the rule the claims tables use):

* the standard deviation is recovered from the row's t interval (``sd = half-width * sqrt(n) /
  t_{n-1}``, 95 % for a t CI, 90 % for TOST);
* a part with one run has no standard deviation: it borrows the largest one of the same claim and
  part from another engine or setting (marked ``borrowed``);
* a supported or contradicted part needs no more runs (``-``); an inconclusive one needs
  ``ttest_runs_needed(distance, sd)``, distance = smallest effect for a direction claim, or the gap
  between the observed mean and the margin for an equivalence (TOST) claim; for a difference of two
  independent groups (Welch) the runs per group of ``statsmodels`` ``TTestIndPower``.

Usage::

    PYTHONPATH=. python scripts/campaign_power.py p1_datacenter_fct p2_mptcp_prediction \\
        p3_cubic_fairness p5_selfsimilar [--data data] [--markdown]
"""

from __future__ import annotations

import argparse
import importlib
import math
import re

import pandas as pd
from scipy import stats as sps

from tcpmodels.stats.spec import ttest_runs_needed


def smallest_effect(test: str) -> float:
    """The smallest effect (or TOST margin) stated in a claims-table ``test`` text.

    Parameters
    ----------
    test : str
        The ``test`` column of a claims table.

    Returns
    -------
    float
        The number after "smallest effect" or "margin ±" (NaN when there is none). [unit of the quantity]
    """
    m = re.search(r"(?:smallest effect|margin ±)\s*([-+0-9.eE]+)", test)
    return float(m.group(1)) if m else math.nan


def sd_from_interval(row: pd.Series) -> float:
    """Between-run standard deviation recovered from a row's t interval (NaN when it is not one).

    Parameters
    ----------
    row : pandas.Series
        A claims-table row (``test``, ``ci_low``, ``ci_high``, ``n_runs``).

    Returns
    -------
    float
        ``half-width * sqrt(n) / t_{n-1}``; for a Welch interval over two groups of n/2 runs, the
        pooled sd ``half-width / (t * sqrt(4 / n))``. [unit of the quantity]
    """
    n = int(row["n_runs"])
    lo, hi = float(row["ci_low"]), float(row["ci_high"])
    if n < 2 or not (math.isfinite(lo) and math.isfinite(hi)):
        return math.nan
    text = str(row["test"])
    if "Welch" in text:
        level = 0.95
        if n < 4:
            return math.nan
        return (hi - lo) / 2 / float(sps.t.ppf(0.5 + level / 2, n - 2)) / math.sqrt(4 / n)
    if "TOST" in text:
        level = 0.90
    elif "t CI" in text:
        level = 0.95
    else:
        return math.nan
    return (hi - lo) / 2 * math.sqrt(n) / float(sps.t.ppf(0.5 + level / 2, n - 1))


def power_table(paper: str, data_dir: str = "data") -> pd.DataFrame:
    """One row per claim part of ``paper``: effect, sd, runs, verdict, smallest effect, runs needed.

    Parameters
    ----------
    paper : str
        Module name under :mod:`tcpmodels.papers`, e.g. ``"p3_cubic_fairness"``.
    data_dir : str
        The ``data`` directory.

    Returns
    -------
    pandas.DataFrame
        ``claim, part, effect, sd, sd_source, n_runs, verdict, smallest_effect, runs_needed``.
    """
    m = importlib.import_module(f"tcpmodels.papers.{paper}")
    ds = m.load_dataset(data_dir)
    ccs = getattr(ds, "ccs", None)
    if ccs and len(ccs) > 1:  # P2: one setting per congestion control, each judged on its own samples
        parts = []
        for cc in ccs:
            d = ds.for_cc(cc)
            t = m.claims(d, m.tables(d, quick=False))
            parts.append(t.assign(part=t["part"] + f" [{cc}]"))
        cl = pd.concat(parts, ignore_index=True)
    else:
        cl = m.claims(ds, m.tables(ds, quick=False))
    rows = []
    for _, r in cl.iterrows():
        sd = sd_from_interval(r)
        rows.append({"claim": r["claim"], "part": r["part"], "effect": r["effect"], "sd": sd,
                     "sd_source": "interval" if sd == sd else "", "n_runs": int(r["n_runs"]),
                     "verdict": r["verdict"], "smallest_effect": smallest_effect(str(r["test"])),
                     "tost": "TOST" in str(r["test"]), "welch": "Welch" in str(r["test"]),
                     "table_runs_needed": r["runs_needed"]})
    out = pd.DataFrame(rows)
    # borrow an sd for one-run parts: the largest of the same part text (other engine / setting)
    key = out["part"].str.replace(r"\[[^\]]*\]", "", regex=True).str.strip()
    for i in out.index[out["sd"].isna()]:
        same = out[(key == key[i]) & out["sd"].notna()]
        if len(same):
            out.loc[i, "sd"] = same["sd"].max()
            out.loc[i, "sd_source"] = "borrowed"
    need = []
    for _, r in out.iterrows():
        if r["verdict"] != "inconclusive" or not (r["sd"] > 0) or not (r["smallest_effect"] > 0):
            need.append(math.nan)
            continue
        if r["welch"]:  # two independent groups: runs per group (statsmodels TTestIndPower, as the table does)
            from statsmodels.stats.power import TTestIndPower

            k = TTestIndPower().solve_power(effect_size=r["smallest_effect"] / r["sd"], alpha=0.05, power=0.8)
            need.append(float(math.ceil(max(float(k), 2.0))))
        elif r["tost"]:
            gap = r["smallest_effect"] - abs(r["effect"])
            need.append(ttest_runs_needed(gap, r["sd"], 0.05, alternative="larger") if gap > 0
                        else ttest_runs_needed(-gap, r["sd"], 0.05) if gap < 0 else math.nan)
        else:
            need.append(ttest_runs_needed(r["smallest_effect"], r["sd"], 0.05))
    out["runs_needed"] = need
    return out.drop(columns=["tost", "welch"])


def markdown(frame: pd.DataFrame) -> str:
    """A pipe table of ``frame``, numbers to 3 significant digits (no extra dependency).

    Parameters
    ----------
    frame : pandas.DataFrame
        The table.

    Returns
    -------
    str
        Markdown text.
    """
    def cell(v: object) -> str:
        if isinstance(v, float):
            return "" if v != v else f"{v:.3g}"
        return str(v).replace("|", "/")

    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print :func:`power_table` for each paper named on the command line.

    Parameters
    ----------
    argv : list of str, optional
        Paper module names, ``--data DIR`` and ``--markdown``.

    Returns
    -------
    int
        Exit status 0.
    """
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("papers", nargs="+")
    ap.add_argument("--data", default="data")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    pd.set_option("display.width", 250)
    pd.set_option("display.max_colwidth", 70)
    pd.set_option("display.max_rows", 500)
    for paper in args.papers:
        t = power_table(paper, args.data)
        t["claim"] = t["claim"].str.slice(0, 60)
        t["part"] = t["part"].str.slice(0, 60)
        print(f"\n## {paper}\n")
        print(markdown(t) if args.markdown else t.to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
