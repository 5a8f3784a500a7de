"""Model versus kernel versus ns-3: the grid points, the paper's numbers beside ours, the pilot."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from tcpmodels.models.bbr import queue_packets_for_bdp, rate_pps, ware_bbr_share
from tcpmodels.papers.bbr_coexistence.claims import PAPER_MEDIAN_ERROR
from tcpmodels.papers.bbr_coexistence.data import BbrDataset, grid_runs

__all__ = ["KERNEL_BUDGET_PACKETS", "POINT", "points", "side_by_side", "model_curve", "pilot_settling", "probe_rtt_table", "paper_vs_ours",
           "tables"]

#: the columns that name a grid point
POINT = ["group", "competitor", "n_loss", "queue_bdp", "n_bbr"]
#: packets the kernel's ``bbr_quantization_budget`` adds to each flow's cwnd at 10 Mbit/s: 3 x ``tso_segs_goal``
#: (2 segments above a pacing rate of 1.2 Mbit/s), not counting the rounding to even and the +2 of the 1.25 phase
KERNEL_BUDGET_PACKETS = 6


def points(dataset: BbrDataset) -> pd.DataFrame:
    """One row per engine and grid point: BBR's mean share over the repetitions, its spread, the model's.

    Parameters
    ----------
    dataset : BbrDataset

    Returns
    -------
    pandas.DataFrame
        ``engine``, the :data:`POINT` columns, ``runs``, ``share_bbr`` (mean), ``share_sd``,
        ``model_share_bbr``, ``error`` (mean - model), ``utilization``, ``standing_queue_bdp``,
        ``model_standing_queue_bdp`` (BBR alone) and ``model_with_budget_bdp``: the model's standing queue
        plus the kernel's quantization budget of :data:`KERNEL_BUDGET_PACKETS` per flow, a mechanism the
        model leaves out (the ACK-aggregation allowance, also left out, is not counted either).
    """
    r = grid_runs(dataset)
    g = r.groupby(["engine", *POINT], sort=True)
    out = g.agg(runs=("share_bbr", "size"), share_bbr=("share_bbr", "mean"), share_sd=("share_bbr", "std"),
                model_share_bbr=("model_share_bbr", "first"), utilization=("utilization", "mean"),
                standing_queue_bdp=("standing_queue_bdp", "mean"),
                model_standing_queue_bdp=("model_standing_queue_bdp", "first")).reset_index()
    out["error"] = out["share_bbr"] - out["model_share_bbr"]
    first = r.groupby(["engine", *POINT], sort=True)[["rate_bps", "base_rtt_s", "packet_bytes"]].first().reset_index()
    bdp = rate_pps(first["rate_bps"], first["packet_bytes"]) * first["base_rtt_s"]
    out["model_with_budget_bdp"] = out["model_standing_queue_bdp"] + out["n_bbr"] * KERNEL_BUDGET_PACKETS / bdp.to_numpy()
    return out


def side_by_side(dataset: BbrDataset) -> pd.DataFrame:
    """Model, kernel and ns-3 share per grid point in one row (BBR against loss-based flows).

    Parameters
    ----------
    dataset : BbrDataset

    Returns
    -------
    pandas.DataFrame
        The :data:`POINT` columns, ``model``, ``kernel``, ``kernel_sd``, ``kernel_runs``, ``ns3``, and the
        errors ``kernel - model``, ``ns3 - model``.
    """
    p = points(dataset)
    p = p[p["competitor"] != "none"]
    model = p.groupby(POINT)["model_share_bbr"].first().rename("model")
    wide = [model]
    for eng in ("kernel", "ns3"):
        e = p[p["engine"] == eng].set_index(POINT)
        wide.append(e["share_bbr"].rename(eng))
        if eng == "kernel":
            wide += [e["share_sd"].rename("kernel_sd"), e["runs"].rename("kernel_runs")]
    out = pd.concat(wide, axis=1).reset_index()
    for eng in ("kernel", "ns3"):
        out[f"{eng} - model"] = out[eng] - out["model"]
    return out.sort_values(["group", "competitor", "n_loss", "n_bbr", "queue_bdp"]).reset_index(drop=True)


def model_curve(rate_bps: float, base_rtt_s: float, n_bbr: int, queue_bdp: np.ndarray,
                packet_bytes: int = 1500) -> pd.DataFrame:
    """Eq. (10) over a range of buffers, for plots.

    Parameters
    ----------
    rate_bps : float
        Bottleneck rate. [bit/s]
    base_rtt_s : float
        Base RTT. [s]
    n_bbr : int
        N. [-]
    queue_bdp : numpy.ndarray
        X values. [-]
    packet_bytes : int
        Packet size. [bytes]

    Returns
    -------
    pandas.DataFrame
        ``queue_bdp``, ``model_share_bbr``.
    """
    c = float(rate_pps(rate_bps, packet_bytes))
    x = np.asarray(queue_bdp, dtype=float)
    return pd.DataFrame({"queue_bdp": x,
                         "model_share_bbr": ware_bbr_share(c, base_rtt_s, queue_packets_for_bdp(x, c, base_rtt_s), n_bbr)})


def pilot_settling(dataset: BbrDataset, band: float = 0.05) -> pd.DataFrame:
    """Where BBR's share settles in each pilot run: the first time after which the cumulative share
    from there on stays within ``band`` of the share over the rest of the run.

    Parameters
    ----------
    dataset : BbrDataset
    band : float
        Tolerance on the share. [-]

    Returns
    -------
    pandas.DataFrame
        Per pilot run: ``queue_bdp``, ``settled_s`` [s], ``share_after`` (share from there to the end,
        mean of the 5 s windows), ``window_sd`` (spread of the 5 s windows after it), and the power
        analysis it allows: ``sd_60s`` (the spread of a 60 s measurement, ``window_sd / sqrt(12)``,
        if the windows were independent) and ``runs_for_w2`` (runs per group for TOST with W2's margin
        0.05 to have 80 % power when the shares are equal: statsmodels ``TTestIndPower``, one-sided).
    """
    from statsmodels.stats.power import TTestIndPower

    from tcpmodels.papers.bbr_coexistence.claims import SPECS

    s = dataset.series.merge(dataset.runs[["engine", "campaign", "rep", "queue_bdp", "n_bbr", "competitor",
                                           "n_loss"]].drop_duplicates(),
                             on=["engine", "campaign", "rep", "queue_bdp", "n_bbr", "competitor", "n_loss"])
    s = s[s["campaign"] == "bbr_pilot"]
    rows = []
    for x, g in s.groupby("queue_bdp"):
        g = g.sort_values("t_end_s")
        sh = g["share"].to_numpy()
        t = g["t_end_s"].to_numpy()
        settled = t[-1]
        for i in range(len(sh)):
            rest = sh[i:]
            # running mean from window i onwards stays within the band of the final mean
            run = np.cumsum(rest) / np.arange(1, len(rest) + 1)
            if np.all(np.abs(run[2:] - rest.mean()) <= band):
                settled = t[i] - 5.0
                break
        after = sh[t > settled]
        sd60 = float(after.std(ddof=1)) / np.sqrt(60.0 / 5.0)
        margin = SPECS["b"].smallest_effect
        n = TTestIndPower().solve_power(effect_size=margin / sd60, alpha=SPECS["b"].alpha, power=0.8,
                                        alternative="larger") if sd60 > 0 else np.nan
        rows.append({"queue_bdp": x, "settled_s": settled, "share_after": float(after.mean()),
                     "window_sd": float(after.std(ddof=1)), "sd_60s": sd60,
                     "runs_for_w2": float(np.ceil(max(float(np.atleast_1d(n)[0]), 2.0)))})
    return pd.DataFrame(rows)


def probe_rtt_table(dataset: BbrDataset) -> pd.DataFrame:
    """Mean ProbeRTT episode per engine and buffer, beside eq. (11)'s ``q/c + 0.2 + l``.

    Parameters
    ----------
    dataset : BbrDataset

    Returns
    -------
    pandas.DataFrame
        ``engine``, ``queue_bdp``, ``queue_delay_full_s`` (q/c), ``episodes``, ``measured_s`` (mean),
        ``model_s``.
    """
    r = grid_runs(dataset)
    r = r[r["competitor"] != "none"].copy()
    r["queue_delay_full_s"] = r["model_probe_rtt_s"] - 0.2 - r["base_rtt_s"]
    g = r.groupby(["engine", "queue_bdp"])
    return g.agg(queue_delay_full_s=("queue_delay_full_s", "first"), episodes=("probe_rtt_episodes", "sum"),
                 measured_s=("probe_rtt_mean_s", "mean"), model_s=("model_probe_rtt_s", "first")).reset_index()


def _per_engine(frame: pd.DataFrame, statistic: Callable[[pd.DataFrame], float]) -> dict[str, float]:
    """``statistic`` of the kernel's and of ns-3's rows of ``frame`` (:func:`points`), NaN for an engine without
    rows; in the unit of what ``statistic`` computes (a share or an error [-], a queue [BDP])."""
    out = {}
    for eng in ("kernel", "ns3"):
        e = frame[frame["engine"] == eng]
        out[eng] = float(statistic(e)) if len(e) else np.nan
    return out


def paper_vs_ours(dataset: BbrDataset) -> pd.DataFrame:
    """The paper's numbers beside ours.

    Parameters
    ----------
    dataset : BbrDataset

    Returns
    -------
    pandas.DataFrame
        ``quantity``, ``paper``, ``kernel``, ``ns3``, ``source`` (where the paper's number comes from).
    """
    p = points(dataset)
    rows = []
    for comp in ("cubic", "reno"):
        grp = "vs_cubic" if comp == "cubic" else "vs_reno"
        row = {"quantity": f"median |BBR share - model| vs 1 {comp.upper() if comp == 'reno' else 'CUBIC'}",
               "paper": PAPER_MEDIAN_ERROR[comp], "source": "Ware et al. Sec. 5 (authors' blog: 5 % / 8 %)"}
        rows.append(row | _per_engine(p[p["group"] == grp], lambda e: e["error"].abs().median()))
    deep = p[(p["group"] == "vs_cubic") & (p["n_bbr"] == 1)]
    row = {"quantity": "1 BBR vs 1 CUBIC at the deepest buffer: BBR's share",
           "paper": 0.5, "source": "Ware et al. eq. (5): at most 1/2 when q >> c l (ProbeRTT lowers it further)"}
    rows.append(row | _per_engine(deep, lambda e: e.sort_values("queue_bdp")["share_bbr"].iloc[-1]))
    alone = p[p["group"] == "alone"]
    row = {"quantity": "standing queue of N BBR flows alone [BDP]", "paper": 1.0,
           "source": "Hock et al., ICNP 2017: about one BDP"}
    rows.append(row | _per_engine(alone, lambda e: e["standing_queue_bdp"].mean()))
    return pd.DataFrame(rows, columns=["quantity", "paper", "kernel", "ns3", "source"])


def tables(dataset: BbrDataset) -> dict[str, pd.DataFrame]:
    """Every table the notebook shows.

    Parameters
    ----------
    dataset : BbrDataset

    Returns
    -------
    dict of str to DataFrame
        ``side_by_side``, ``points``, ``probe_rtt``, ``paper_vs_ours``, ``pilot``.
    """
    return {"side_by_side": side_by_side(dataset), "points": points(dataset), "probe_rtt": probe_rtt_table(dataset),
            "paper_vs_ours": paper_vs_ours(dataset), "pilot": pilot_settling(dataset)}
