"""P5 Hurst tables: the long ns-3 runs, the testbed, the 20 s windows, Bellcore, and the aggregated estimate."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tcpmodels.models.heavytail import hurst_from_alpha
from tcpmodels.papers.p5_selfsimilar.data import BELLCORE_FULL_TRACE_H, P5Dataset

__all__ = ["hurst_long", "hurst_testbed", "hurst_summary", "hurst_20s", "hurst_bellcore", "hurst_aggregated"]


def _against_prediction(h: pd.DataFrame, *, runs_by: str) -> pd.DataFrame:
    """Means over the runs (told apart by ``runs_by``) per alpha and estimator, against (3 - alpha)/2."""
    if h.empty:
        return pd.DataFrame(columns=["alpha", "method", "hurst", "ci95_low", "ci95_high", "predicted", "covers"])
    out = h.groupby(["alpha", "method"]).agg(hurst=("hurst", "mean"), ci95_low=("ci95_low", "mean"),
                                             ci95_high=("ci95_high", "mean"), stderr_kind=("stderr_kind", "first"),
                                             n=("n", "first"), n_runs=(runs_by, "nunique")).reset_index()
    out["predicted"] = hurst_from_alpha(out["alpha"].to_numpy())
    out["covers"] = (out["ci95_low"] <= out["predicted"]) & (out["predicted"] <= out["ci95_high"])
    out["diff"] = out["hurst"] - out["predicted"]
    return out


def hurst_long(dataset: P5Dataset) -> pd.DataFrame:
    """The long ns-3 runs (case ``long``): H per alpha and estimator, against the prediction (3 - alpha)/2.

    Parameters
    ----------
    dataset : P5Dataset
        The campaign's data (its ``hurst`` table).

    Returns
    -------
    pandas.DataFrame
        One row per alpha and estimator (``method``): ``hurst``, ``ci95_low``, ``ci95_high`` (means over
        the runs) [-], ``stderr_kind``, ``n``, ``n_runs``, ``predicted`` [-], ``covers`` (the interval
        holds the prediction) and ``diff`` (H minus predicted) [-]. Without long runs: empty, with the
        columns ``alpha, method, hurst, ci95_low, ci95_high, predicted, covers``.
    """
    return _against_prediction(dataset.hurst[dataset.hurst["case"] == "long"], runs_by="run_id")


def hurst_testbed(dataset: P5Dataset) -> pd.DataFrame:
    """Kernel testbed runs: one row per alpha and estimator (means over the runs), the prediction, whether it is covered.

    Parameters
    ----------
    dataset : P5Dataset
        The campaign's data (its ``testbed_hurst`` table; one run per alpha and ``seed``, a
        table without ``seed`` is one run per alpha).

    Returns
    -------
    pandas.DataFrame
        ``alpha, method, hurst, ci95_low, ci95_high`` (means over the runs) [-], ``stderr_kind``,
        ``n``, ``n_runs``, ``predicted`` [-], ``covers`` and ``diff`` [-]; empty (without
        ``stderr_kind``, ``n``, ``n_runs``, ``diff``) when the testbed part is not shipped.
    """
    h = dataset.testbed_hurst
    return _against_prediction(h if "seed" in h.columns else h.assign(seed=0), runs_by="seed")


def hurst_summary(long: pd.DataFrame) -> pd.DataFrame:
    """Per alpha: predicted H, each estimator's H [95 % interval], and the median over estimators.

    Parameters
    ----------
    long : pandas.DataFrame
        :func:`hurst_long` or :func:`hurst_testbed`.

    Returns
    -------
    pandas.DataFrame
        Indexed by alpha: ``predicted (3-alpha)/2`` [-], one text column per estimator
        (``"0.81 [0.75, 0.87]"``), ``median over estimators`` [-] and ``estimators whose CI covers``
        (``"k of n"``); empty for an empty ``long``.
    """
    if long.empty:
        return pd.DataFrame()
    txt = long.assign(cell=[f"{h:.2f} [{lo:.2f}, {hi:.2f}]" for h, lo, hi in
                            zip(long["hurst"], long["ci95_low"], long["ci95_high"])])
    t = txt.pivot(index="alpha", columns="method", values="cell")
    t.insert(0, "predicted (3-alpha)/2", hurst_from_alpha(t.index.to_numpy()))
    t["median over estimators"] = long.groupby("alpha")["hurst"].median()
    t["estimators whose CI covers"] = long.groupby("alpha")["covers"].sum().astype(int).astype(str) + " of " + \
        long.groupby("alpha")["covers"].size().astype(str)
    return t


def hurst_20s(dataset: P5Dataset) -> pd.DataFrame:
    """H of the main runs' 20 s series by the Whittle and wavelet estimators, mean and spread over runs.

    Parameters
    ----------
    dataset : P5Dataset
        The campaign's data (its ``hurst`` table, case ``main``).

    Returns
    -------
    pandas.DataFrame
        One row per alpha and method: ``hurst_mean``, ``hurst_sd_over_runs``, ``ci95_halfwidth_mean``
        (half the width of the mean interval), ``predicted`` [-] and ``n_runs``; empty without main runs.
    """
    h = dataset.hurst[(dataset.hurst["case"] == "main") & (dataset.hurst["method"].isin(["whittle", "wavelet"]))]
    if h.empty:
        return pd.DataFrame()
    g = h.groupby(["alpha", "method"])
    out = pd.DataFrame({"hurst_mean": g["hurst"].mean(), "hurst_sd_over_runs": g["hurst"].std(),
                        "ci95_halfwidth_mean": ((g["ci95_high"].mean() - g["ci95_low"].mean()) / 2),
                        "n_runs": g["run_id"].nunique()}).reset_index()
    out["predicted"] = hurst_from_alpha(out["alpha"].to_numpy())
    return out


def hurst_bellcore(dataset: P5Dataset) -> pd.DataFrame:
    """Every estimator's H on the Bellcore excerpt, beside the full trace's H that Leland et al. report.

    Parameters
    ----------
    dataset : P5Dataset
        The campaign's data (its ``hurst`` rows of source ``bellcore``).

    Returns
    -------
    pandas.DataFrame
        One row per estimator: ``method, hurst, stderr, stderr_kind, ci95_low, ci95_high, n`` and
        ``full_trace_H_Leland`` (:data:`BELLCORE_FULL_TRACE_H`) [-].
    """
    h = dataset.hurst[dataset.hurst["source"] == "bellcore"]
    cols = ["method", "hurst", "stderr", "stderr_kind", "ci95_low", "ci95_high", "n"]
    out = h[cols].reset_index(drop=True)
    out["full_trace_H_Leland"] = BELLCORE_FULL_TRACE_H
    return out



def hurst_aggregated(counts: pd.DataFrame, factor: int = 10, *, source: str = "ns-3") -> pd.DataFrame:
    """Every estimator on each ``source`` series of ``p5_counts`` after summing ``factor`` bins into one.

    Parameters
    ----------
    counts : pandas.DataFrame
        ``p5_counts`` rows (``run_id``, ``source``, ``alpha``, ``t_s``, ``packets``).
    factor : int
        Bins per aggregated bin (10: 10 ms -> 100 ms). [-]

    Returns
    -------
    pandas.DataFrame
        alpha (rows) x method (columns) of H, plus ``predicted`` = (3 - alpha)/2. [-]
    """
    from tcpmodels.models.hurst import estimate_all

    if not isinstance(factor, (int, np.integer)) or factor < 1:
        raise ValueError(f"factor [-] must be an integer >= 1; got {factor!r}")
    rows = []
    for _, g in counts[counts["source"] == source].groupby("run_id"):
        x = g.sort_values("t_s")["packets"].to_numpy()
        x = x[: len(x) // factor * factor].reshape(-1, factor).sum(axis=1).astype(float)
        est = estimate_all(x)["hurst"]
        rows.append({"alpha": float(g["alpha"].iloc[0]), **est.to_dict()})
    if not rows:
        return pd.DataFrame()
    out = pd.DataFrame(rows).groupby("alpha").mean()
    out["predicted"] = hurst_from_alpha(out.index.to_numpy())
    return out


