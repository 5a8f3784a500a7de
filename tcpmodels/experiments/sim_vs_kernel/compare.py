"""The two engines side by side: per-flow table and the differences beside the tolerance.

The verdicts are not made here: :func:`tcpmodels.papers.sim_vs_kernel.claims` judges the agreement of
each flow and of the aggregate through :class:`tcpmodels.stats.ClaimSpec` (TOST on Welch's t over the runs,
the margins being this campaign's tolerances), as every other claim of the project is judged.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tcpmodels.experiments.sim_vs_kernel.config import DEFAULT_CONFIG, SvkConfig

__all__ = ["flow_frame", "agreement"]


def flow_frame(records: list[dict]) -> pd.DataFrame:
    """One row per (scenario, engine, repetition, flow): ``scenario, engine, rep, flow, cc, rtt_ms, start_s, throughput_bps,
    share`` (of the bottleneck rate), ``lo_s, hi_s`` (the measured interval), plus ``wall_s, load_avg_1m``.

    Parameters
    ----------
    records : list of dict
        Sample records of :func:`run_campaign` (either engine, any scenario).

    Returns
    -------
    pandas.DataFrame
        The rows above, and ``config_hash``, sorted by scenario, engine, repetition and
        flow; RTT [ms], times [s], throughput [bit/s], share [-].
    """
    rows = []
    for r in records:
        cfg = r["config"]
        for i, tp in enumerate(r["throughput_bps"]):
            rows.append({"scenario": cfg.get("name", DEFAULT_CONFIG.name), "engine": r["engine"], "rep": int(r["rep"]), "flow": i, "cc": cfg["ccs"][i],
                         "rtt_ms": float(cfg["rtts_ms"][i]), "start_s": float(r["starts_s"][i]),
                         "throughput_bps": float(tp), "share": float(tp) / float(cfg["rate_bps"]),
                         "lo_s": float(r["interval_s"][0]), "hi_s": float(r["interval_s"][1]),
                         "wall_s": float(r["wall_s"]), "load_avg_1m": float(r["load_avg"][0]),
                         "config_hash": r["config_hash"]})
    cols = ["scenario", "engine", "rep", "flow", "cc", "rtt_ms", "start_s", "throughput_bps", "share", "lo_s", "hi_s", "wall_s",
            "load_avg_1m", "config_hash"]
    return pd.DataFrame(rows, columns=cols).sort_values(["scenario", "engine", "rep", "flow"]).reset_index(drop=True)


def agreement(frame: pd.DataFrame, config: SvkConfig = DEFAULT_CONFIG) -> pd.DataFrame:
    """Per flow, both engines side by side, and their difference beside :attr:`SvkConfig.tolerance_share`.

    Parameters
    ----------
    frame : pandas.DataFrame
        :func:`flow_frame` of one scenario's records.
    config : SvkConfig
        The scenario: its name, bottleneck rate and tolerances.

    Returns
    -------
    pandas.DataFrame
        One row per flow plus a ``total`` row: ``flow, cc, rtt_ms``, per engine the mean and standard
        deviation over repetitions of the throughput [Mbit/s] and the number of repetitions,
        ``diff_share`` (ns-3 minus kernel mean share, [-]; NaN where an engine has no sample) and
        ``tolerance`` [-], the margin the verdicts use.

    Raises
    ------
    ValueError
        If ``frame`` is empty or holds another scenario than ``config.name``.
    """
    if frame.empty:
        raise ValueError("frame holds no samples")
    if "scenario" in frame.columns:
        names = set(frame["scenario"])
        if len(names) > 1 or config.name not in names:
            raise ValueError(f"frame must hold only scenario {config.name!r}; got {sorted(names)} "
                             "(select it first: frame[frame.scenario == config.name])")
    rows = []
    keys = [(int(f), g) for f, g in frame.groupby("flow")]
    for f, g in keys + [("total", None)]:
        if f == "total":
            per = frame.groupby(["engine", "rep"])["throughput_bps"].sum().reset_index()
            meta = {"flow": "total", "cc": "", "rtt_ms": np.nan}
            tol = config.tolerance_utilisation
        else:
            per = g
            meta = {"flow": str(f), "cc": g["cc"].iloc[0], "rtt_ms": float(g["rtt_ms"].iloc[0])}
            tol = config.tolerance_share
        row = dict(meta)
        for e in ("kernel", "ns3"):
            x = per.loc[per["engine"] == e, "throughput_bps"].to_numpy() / 1e6
            row[f"{e}_mbps"] = float(np.mean(x)) if len(x) else np.nan
            row[f"{e}_sd_mbps"] = float(np.std(x, ddof=1)) if len(x) > 1 else np.nan
            row[f"{e}_n"] = len(x)
        row["diff_share"] = (row["ns3_mbps"] - row["kernel_mbps"]) * 1e6 / config.rate_bps
        row["tolerance"] = tol
        rows.append(row)
    return pd.DataFrame(rows)
