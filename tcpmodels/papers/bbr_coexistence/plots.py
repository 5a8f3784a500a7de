"""Figures of the BBR coexistence notebook: share against buffer (model, kernel, ns-3), the pilot, ProbeRTT."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes

from tcpmodels.papers.bbr_coexistence.data import BbrDataset
from tcpmodels.papers.bbr_coexistence.tables import model_curve, points

__all__ = ["plot_share_vs_buffer", "plot_pilot", "plot_probe_rtt"]


def plot_share_vs_buffer(dataset: BbrDataset, competitor: str = "cubic", ax: Axes | None = None) -> Axes:
    """BBR's share against X, one colour per N: eq. (10) as lines, kernel runs as dots, ns-3 as crosses.

    Parameters
    ----------
    dataset : BbrDataset
    competitor : {"cubic", "reno"}
        The one loss-based flow.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    ax = ax or plt.subplots(figsize=(7, 4))[1]
    p = points(dataset)
    p = p[(p["competitor"] == competitor) & (p["n_loss"] == 1)]
    runs = dataset.runs[(dataset.runs["competitor"] == competitor) & (dataset.runs["n_loss"] == 1)
                        & (dataset.runs["campaign"] != "bbr_pilot")]
    cfg = dataset.runs.iloc[0]
    xs = np.geomspace(0.5, 64, 200)
    for i, n in enumerate(sorted(p["n_bbr"].unique())):
        col = f"C{i}"
        m = model_curve(cfg["rate_bps"], cfg["base_rtt_s"], int(n), xs, int(cfg["packet_bytes"]))
        ax.plot(m["queue_bdp"], m["model_share_bbr"], color=col, label=f"model, N = {n}")
        k = runs[(runs["engine"] == "kernel") & (runs["n_bbr"] == n)]
        ax.plot(k["queue_bdp"], k["share_bbr"], "o", color=col, alpha=0.7, label=f"kernel bbr, N = {n}")
        s = runs[(runs["engine"] == "ns3") & (runs["n_bbr"] == n)]
        ax.plot(s["queue_bdp"], s["share_bbr"], "x", color=col, ms=8, label=f"ns-3 TcpBbr, N = {n}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("bottleneck buffer X [BDP]")
    ax.set_ylabel("BBR's share of the link [-]")
    ax.set_ylim(0, 1.05)
    ax.set_title(f"N BBR flows vs 1 {competitor.upper() if competitor == 'reno' else 'CUBIC'} flow, "
                 f"{cfg['rate_bps'] / 1e6:g} Mbit/s x {cfg['base_rtt_s'] * 1e3:g} ms")
    ax.legend(fontsize=7, ncol=3)
    return ax


def plot_pilot(dataset: BbrDataset, ax: Axes | None = None) -> Axes:
    """The pilot's share in 5 s windows and since the start: where it settles.

    Parameters
    ----------
    dataset : BbrDataset
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    ax = ax or plt.subplots(figsize=(7, 3.5))[1]
    s = dataset.series[dataset.series["campaign"] == "bbr_pilot"]
    for i, (x, g) in enumerate(s.groupby("queue_bdp")):
        g = g.sort_values("t_end_s")
        ax.plot(g["t_end_s"], g["share"], color=f"C{i}", alpha=0.5, label=f"X = {x:g}: 5 s windows")
        ax.plot(g["t_end_s"], g["share_since_start"], color=f"C{i}", lw=2, label=f"X = {x:g}: since the start")
    ax.set_xlabel("time since the flows started [s]")
    ax.set_ylabel("BBR's share [-]")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7)
    ax.set_title("pilot: 1 BBR vs 1 CUBIC on the kernel")
    return ax


def plot_probe_rtt(dataset: BbrDataset, ax: Axes | None = None) -> Axes:
    """Mean ProbeRTT episode per run against q/c, with eq. (11)'s line.

    Parameters
    ----------
    dataset : BbrDataset
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    ax = ax or plt.subplots(figsize=(5, 3.5))[1]
    r = dataset.runs[(dataset.runs["competitor"] != "none") & dataset.runs["probe_rtt_mean_s"].notna()]
    qc = r["model_probe_rtt_s"] - 0.2 - r["base_rtt_s"]
    for eng, mark in (("kernel", "o"), ("ns3", "x")):
        m = r["engine"] == eng
        ax.plot(qc[m], r.loc[m, "probe_rtt_mean_s"], mark, alpha=0.7, label=eng)
    x = np.linspace(0, float(qc.max()) if len(qc) else 1.0, 10)
    l_s = float(r["base_rtt_s"].iloc[0]) if len(r) else 0.04
    ax.plot(x, x + 0.2 + l_s, "k-", label="eq. (11): q/c + 0.2 + l")
    ax.set_xlabel("q/c, the full buffer's delay [s]")
    ax.set_ylabel("ProbeRTT episode [s]")
    ax.legend(fontsize=8)
    return ax
