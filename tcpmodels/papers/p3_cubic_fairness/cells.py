"""P3's statistics per cell: mean and spread of the throughputs and of Jain's index, when a difference is beyond the spread, and the kernel's between-run spread used as a floor."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from tcpmodels.papers.p3_cubic_fairness.data import P3Dataset
from tcpmodels.papers.p3_cubic_fairness.runs import kernel_runs

__all__ = ["cell_stats", "significant", "run_spread_proxy"]


_MIN_DELTA = 0.01


# ------------------------------------------------------------ statistics
def cell_stats(df: pd.DataFrame | None, by: list[str]) -> pd.DataFrame:
    """Mean and spread per cell: ``reno_mbps``, ``cubic_mbps`` (mean, sd), ``jain`` (mean, sd, se), ``n``.

    ``jain_se`` is the between-run standard error with n >= 2 runs, else the
    within-run window spread (``spread_from`` says which; see the module docstring).

    Parameters
    ----------
    df : pandas.DataFrame or None
        Runs, one per row: ``reno_bps``, ``cubic_bps`` [bit/s], ``jain`` [-] and, when known,
        ``jain_window_sd`` and ``n_windows``; rows without ``jain`` are left out.
    by : list of str
        The columns that define a cell, e.g. ``["reno_rtt_ms", "cubic_rtt_ms"]``.

    Returns
    -------
    pandas.DataFrame
        One row per cell: ``by``, ``n``, ``reno_mbps``, ``reno_mbps_sd``, ``cubic_mbps``,
        ``cubic_mbps_sd`` [Mbit/s], ``jain``, ``jain_sd``, ``jain_se`` [-] and ``spread_from``
        (``"runs"`` or ``"windows"``); empty with those columns for no runs.
    """
    if df is None or len(df) == 0:
        return pd.DataFrame(columns=[*by, "n", "reno_mbps", "reno_mbps_sd", "cubic_mbps", "cubic_mbps_sd", "jain",
                                     "jain_sd", "jain_se", "spread_from"])
    ok = df[df["jain"].notna()] if "jain" in df.columns else df
    ok = ok.assign(reno_mbps=ok["reno_bps"] / 1e6, cubic_mbps=ok["cubic_bps"] / 1e6)
    for c in ("jain_window_sd", "n_windows"):
        if c not in ok.columns:
            ok[c] = math.nan
    g = ok.groupby(by, sort=True)
    out = g.agg(n=("jain", "size"), reno_mbps=("reno_mbps", "mean"), reno_mbps_sd=("reno_mbps", "std"),
                cubic_mbps=("cubic_mbps", "mean"), cubic_mbps_sd=("cubic_mbps", "std"), jain=("jain", "mean"),
                jain_sd=("jain", "std"), window_sd=("jain_window_sd", "first"),
                n_windows=("n_windows", "first")).reset_index()
    many = out["n"] > 1
    out["jain_se"] = np.where(many, out["jain_sd"] / np.sqrt(out["n"].clip(lower=1)),
                              out["window_sd"] / np.sqrt(out["n_windows"].where(out["n_windows"] > 0)))
    out["spread_from"] = np.where(many, "runs", "windows")
    return out.drop(columns=["window_sd", "n_windows"])


def significant(delta: float, se_a: float, se_b: float) -> int:
    """+1 / -1 when ``delta`` is beyond the spread (``|delta| > 2 sqrt(se_a^2 + se_b^2)`` and >= 0.01), else 0.

    NaN standard errors count as 0 (only the 0.01 floor applies).

    Parameters
    ----------
    delta : float
        A difference of Jain's indices. [-]
    se_a, se_b : float
        Standard errors of the two indices. [-]

    Returns
    -------
    int
        The sign of ``delta`` when significant, else 0 (also for a NaN ``delta``).
    """
    if delta != delta:
        return 0
    se = math.sqrt(sum(x * x for x in (se_a, se_b) if x == x))
    return int(np.sign(delta)) if abs(delta) > max(2 * se, _MIN_DELTA) else 0


def run_spread_proxy(ds: P3Dataset) -> float:
    """Median over the kernel's RTT pairs of the between-repetition sd of Jain's index (NaN without repetitions). [-]

    From the ``standard`` samples of the setting with most of them (:func:`kernel_runs`).

    Used as the floor of the standard error of ns-3 cells with fewer than three runs (see the module docstring).

    Parameters
    ----------
    ds : P3Dataset
        The campaign's data (its ``kernel`` runs).

    Returns
    -------
    float
        The median sd of Jain's index over the cells with at least two runs. [-]
    """
    runs = kernel_runs(ds, "standard", "most")
    k = cell_stats(runs, ["reno_rtt_ms", "cubic_rtt_ms"]) if len(runs) else pd.DataFrame()
    sd = k["jain_sd"].dropna() if len(k) else pd.Series(dtype=float)
    return float(sd.median()) if len(sd) else math.nan
