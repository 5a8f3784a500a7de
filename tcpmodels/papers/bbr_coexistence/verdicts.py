"""The verdicts: every claim of :mod:`~tcpmodels.papers.bbr_coexistence.claims` judged on the dataset, per engine."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from tcpmodels.papers.bbr_coexistence.claims import PAPER_MEDIAN_ERROR, spec
from tcpmodels.papers.bbr_coexistence.data import BbrDataset, grid_runs
from tcpmodels.papers.bbr_coexistence.tables import points
from tcpmodels.stats import (
    Family,
    Verdict,
    bootstrap_statistic,
    claims_table,
    equivalence,
    equivalence_ind,
    not_testable,
)

__all__ = ["claims"]


def _median_error_verdict(key: str, engine: str, pts: pd.DataFrame, bound: float) -> Verdict:
    s = spec(key, engine)
    err = (pts["share_bbr"] - pts["model_share_bbr"]).abs().dropna().to_numpy()
    if len(err) < 3:
        return not_testable(s, we_measured=f"{len(err)} grid points", why="fewer than 3 grid points")
    text = (f"median |error| {float(np.median(err)):.3f} over {len(err)} grid points "
            f"(each the mean of its runs; largest {float(err.max()):.3f})")
    return bootstrap_statistic(s, [err], lambda e, axis=-1: bound - np.median(e, axis=axis), unit="grid point",
                               we_measured=text, vectorized=True)


def _independence_verdict(s, many: pd.DataFrame, one: pd.DataFrame, text: str) -> Verdict:
    """W2 for one X and M: TOST on Welch's t over the runs (:func:`tcpmodels.stats.equivalence_ind`)."""
    return equivalence_ind(s, many["share_bbr"], one["share_bbr"], we_measured=text)


def _slope_margin(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """0.25 - |OLS slope of y on x - 1| (vectorised over resamples)."""
    xm, ym = x.mean(axis=axis, keepdims=True), y.mean(axis=axis, keepdims=True)
    b = ((x - xm) * (y - ym)).sum(axis=axis) / ((x - xm) ** 2).sum(axis=axis)
    return 0.25 - np.abs(b - 1.0)


def claims(dataset: BbrDataset) -> pd.DataFrame:
    """Every claim, judged per engine on the dataset.

    Parameters
    ----------
    dataset : BbrDataset
        :func:`tcpmodels.papers.bbr_coexistence.load_dataset`.

    Returns
    -------
    pandas.DataFrame
        The claims table (:func:`tcpmodels.stats.claims_table`): W1 per engine and competitor
        (bootstrap over grid points), W2 per engine, X and M (TOST on Welch's t), W3 (episode time:
        TOST over runs; slope: bootstrap over runs) and W4 per engine (TOST over runs); Holm's adjustment
        within each engine's parts (the family is the engine).
    """
    rows = []
    pts = points(dataset)
    for engine in ("kernel", "ns3"):
        p = pts[pts["engine"] == engine]
        r = grid_runs(dataset, engine)
        if r.empty:
            continue
        rows += [_median_error_verdict(f"a_{cc}", engine, p[p["group"] == f"vs_{cc}"], error)
                 for cc, error in PAPER_MEDIAN_ERROR.items()]
        one = r[(r["competitor"] == "cubic") & (r["n_bbr"] == 1) & (r["n_loss"] == 1)]
        for (x, m), g in r[r["group"] == "many_cubic"].groupby(["queue_bdp", "n_loss"]):
            base = one[one["queue_bdp"] == x]["share_bbr"]
            s = replace(spec("b", engine), part=f"X = {x:g}: {m} CUBIC flows vs 1")
            text = (f"share {g['share_bbr'].mean():.3f} with {m} CUBIC flows ({len(g)} runs) vs {base.mean():.3f} "
                    f"with 1 ({len(base)} runs)")
            rows.append(_independence_verdict(s, g, one[one["queue_bdp"] == x], text))
        withq = r[(r["competitor"] != "none") & r["probe_rtt_mean_s"].notna()]
        ratio = withq["probe_rtt_mean_s"] / withq["model_probe_rtt_s"] - 1
        if len(ratio):
            rows.append(equivalence(spec("c_time", engine), ratio,
                                    we_measured=f"episode / (q/c + 0.2 + l) - 1: mean {ratio.mean():.3f} over "
                                                f"{len(ratio)} runs ({int(withq['probe_rtt_episodes'].sum())} episodes)"))
        else:
            rows.append(not_testable(spec("c_time", engine), we_measured="no episode",
                                     why="no ProbeRTT episode found in the windows"))
        qc = (withq["model_probe_rtt_s"] - 0.2 - withq["base_rtt_s"]).to_numpy()
        dur = withq["probe_rtt_mean_s"].to_numpy()
        if len(np.unique(qc)) >= 2:
            b, a = np.polyfit(qc, dur, 1)
            rows.append(bootstrap_statistic(
                spec("c_slope", engine), [qc, dur], _slope_margin, unit="run", vectorized=True,
                we_measured=f"episode = {a:.3f} s + {b:.3f} q/c over {len(qc)} runs (eq. 11: "
                            f"{0.2 + float(withq['base_rtt_s'].iloc[0]):.2f} s + 1.000 q/c), q/c from "
                            f"{qc.min():.2f} to {qc.max():.2f} s"))
        alone = r[r["competitor"] == "none"]
        diff = alone["standing_queue_bdp"] - alone["model_standing_queue_bdp"]
        if len(diff):
            rows.append(equivalence(spec("d", engine), diff,
                                    we_measured=f"standing queue {alone['standing_queue_bdp'].mean():.2f} BDP (model "
                                                f"{alone['model_standing_queue_bdp'].mean():.2f}) over {len(diff)} runs, "
                                                f"N = {sorted(int(n) for n in alone['n_bbr'].unique())}"))
    return claims_table(rows, family=Family("", "claim", r"^\[(ns-3)\]", default="kernel"))
