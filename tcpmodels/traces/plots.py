"""Figures for captured traces: time-sequence (Stevens) graph, RTT samples, bytes in flight, MPTCP subflow shares.

Each function draws on ``ax`` (a new figure if None) and returns the Axes.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
import numpy as np
import pandas as pd

from .series import time_sequence

__all__ = ["plot_time_sequence", "plot_rtt_samples", "plot_bytes_in_flight", "plot_subflow_shares"]


def _ax(ax):
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.5), constrained_layout=True)
    return ax


def plot_time_sequence(packets: pd.DataFrame, flow_id: int, ax: Axes | None = None,
                       annotated: pd.DataFrame | None = None) -> Axes:
    """Stevens graph: sequence number of each segment over time, retransmissions in red, the peer's ACKs as a line.

    Parameters
    ----------
    packets : pandas.DataFrame
        A packet table from :func:`~tcpmodels.traces.read_pcap`.
    flow_id : int
        The flow.
    ax : matplotlib.axes.Axes, optional
        Where to draw (a new figure if None).
    annotated : pandas.DataFrame, optional
        :func:`~tcpmodels.traces.annotate` of ``packets`` if already computed.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    ax = _ax(ax)
    ts = time_sequence(packets, flow_id, annotated)
    seg, acks = ts["segments"], ts["acks"]
    t0 = min(seg["time_s"].min() if len(seg) else np.inf, acks["time_s"].min() if len(acks) else np.inf)
    new = seg[~seg["is_retransmission"]]
    rtx = seg[seg["is_retransmission"]]
    ax.vlines(new["time_s"] - t0, new["seq_bytes"] / 1e6, new["end_bytes"] / 1e6, lw=1, color="C0", label="segment")
    ax.plot(rtx["time_s"] - t0, rtx["seq_bytes"] / 1e6, "r.", ms=4, label=f"retransmission ({len(rtx)})")
    if len(acks):
        ax.step(acks["time_s"] - t0, acks["ack_bytes"] / 1e6, where="post", color="C2", lw=0.8, label="ACK")
    ax.set_xlabel("time since first packet [s]")
    ax.set_ylabel("relative sequence [MB]")
    ax.legend(loc="upper left", fontsize="small")
    return ax


def plot_rtt_samples(samples: pd.DataFrame, flow_id: int, ax: Axes | None = None) -> Axes:
    """RTT samples of one flow over time, by method (sequence/ACK matching and timestamp echoes).

    Parameters
    ----------
    samples : pandas.DataFrame
        :func:`~tcpmodels.traces.rtt_samples` of a packet table.
    flow_id : int
        The flow (it must have samples).
    ax : matplotlib.axes.Axes, optional
        Where to draw (a new figure if None).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    ax = _ax(ax)
    s = samples[samples["flow_id"] == flow_id]
    if len(s) == 0:
        raise ValueError(f"no RTT samples for flow_id {flow_id}")
    t0 = s["timestamp_s"].min()
    for method, marker in (("seq", "."), ("ts", "x")):
        m = s[s["method"] == method]
        ax.plot(m["timestamp_s"] - t0, m["rtt_s"] * 1e3, marker, ms=3, ls="none", label=f"{method} ({len(m)})")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("RTT [ms]")
    ax.legend(fontsize="small")
    return ax


def plot_bytes_in_flight(flight: pd.Series, ax: Axes | None = None) -> Axes:
    """Bytes in flight over time (from :func:`~tcpmodels.traces.series.bytes_in_flight`).

    Parameters
    ----------
    flight : pandas.Series
        Bytes in flight indexed by time [bytes, s].
    ax : matplotlib.axes.Axes, optional
        Where to draw (a new figure if None).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    ax = _ax(ax)
    t = flight.index.to_numpy()
    ax.step(t - t[0], flight.to_numpy() / 1e3, where="post", lw=0.8)
    ax.set_xlabel("time [s]")
    ax.set_ylabel("bytes in flight [KB]")
    return ax


def plot_subflow_shares(subflows: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Share of each MPTCP connection's forward bytes carried by each subflow (stacked bars).

    Parameters
    ----------
    subflows : pandas.DataFrame
        :func:`~tcpmodels.traces.mptcp_subflows` of a packet table.
    ax : matplotlib.axes.Axes, optional
        Where to draw (a new figure if None).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    ax = _ax(ax)
    bottom = {}
    for _, r in subflows.iterrows():
        mid = int(r["mptcp_id"])
        b = bottom.get(mid, 0.0)
        ax.bar(mid, r["forward_share"], bottom=b, label=f"{r['client_addr']} (subflow {int(r['subflow'])})")
        ax.text(mid, b + r["forward_share"] / 2, f"{r['forward_share']:.1%}", ha="center", va="center")
        bottom[mid] = b + r["forward_share"]
    ax.set_xlabel("MPTCP connection")
    ax.set_ylabel("share of bytes [-]")
    ax.set_xticks(sorted(bottom))
    ax.legend(fontsize="small")
    return ax
