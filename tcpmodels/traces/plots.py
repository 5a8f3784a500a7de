"""Figures for captured traces: time-sequence (Stevens) graph, RTT samples, bytes in flight, MPTCP data level.

Each function draws on ``ax`` (a new figure if None) and returns the Axes. Times are seconds since ``t0_s``
(absolute seconds; default: the first time drawn), so that panels given the same ``t0_s`` -- e.g. the
capture's first packet -- share one time axis.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection

from tcpmodels._docstrings import SharedEntries

from .series import SEGMENT_KINDS, time_sequence

__all__ = ["plot_time_sequence", "plot_rtt_samples", "plot_bytes_in_flight", "plot_subflow_shares",
           "plot_mptcp_data_sequence", "plot_subflow_shares_over_time", "TIME_LABEL"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    ax : matplotlib.axes.Axes, optional
        Where to draw (a new figure if None).
    mappings : pandas.DataFrame
        :func:`~tcpmodels.traces.mptcp_mappings` of a packet table.
    mptcp_id : int
        The MPTCP connection.
    t0_s : float, optional
        Time zero of the x axis (absolute) [s]; default the connection's first data packet.
""")

#: The x label of every panel drawn against ``t0_s``.
TIME_LABEL = "time since the capture's first packet [s]"
#: Marker and colour of each retransmission class on the time-sequence graph.
_KIND_STYLE = {"fast retransmission": ("v", "C3"), "out-of-order": ("^", "C1"),
               "spurious retransmission": ("x", "C4"), "retransmission": ("o", "red")}


def _vertical_segments(ax: Axes, x, y_low, y_high, **style) -> LineCollection:
    """One vertical line per row from ``y_low`` to ``y_high`` at ``x``, as ``Axes.vlines`` draws them.

    ``vlines`` turns its arguments into masked arrays and builds every segment's path from them: for a
    flow's data segments (thousands a graph) that was most of the time the trace-explorer lecture took to
    build its figure; plain float arrays make the same collection, and the axes' data limits grow the same.
    """
    x, lo, hi = (np.asarray(v, dtype=float) for v in (x, y_low, y_high))
    segments = np.stack([np.column_stack([x, lo]), np.column_stack([x, hi])], axis=1)
    lines = LineCollection(segments, **style)
    ax.add_collection(lines, autolim=False)
    if len(x):
        ax.update_datalim(np.column_stack([np.r_[x, x], np.r_[lo, hi]]))
        ax.autoscale_view()
    return lines


def _ax(ax):
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.5), constrained_layout=True)
    return ax


def _connection_mappings(mappings: pd.DataFrame, mptcp_id: int, t0_s: float | None) -> tuple[pd.DataFrame, float]:
    """The mapped data packets of MPTCP connection ``mptcp_id`` and the time zero of the x axis (default: its first)."""
    m = mappings[mappings["mptcp_id"] == mptcp_id]
    if len(m) == 0:
        raise ValueError(f"MPTCP connection {mptcp_id} has no mapped data packets")
    return m, (m["time_s"].min() if t0_s is None else t0_s)


@_PARAMETERS.fill
def plot_time_sequence(packets: pd.DataFrame, flow_id: int, ax: Axes | None = None,
                       annotated: pd.DataFrame | None = None, t0_s: float | None = None) -> Axes:
    """Stevens graph: each data segment as a bar over its bytes, retransmissions marked by class, the peer's
    cumulative ACK, its advertised window edge and its SACK blocks.

    Parameters
    ----------
    packets : pandas.DataFrame
        A packet table from :func:`~tcpmodels.traces.read_pcap`.
    flow_id : int
        The flow.
    {ax}
    annotated : pandas.DataFrame, optional
        :func:`~tcpmodels.traces.annotate` of ``packets`` if already computed.
    t0_s : float, optional
        Time zero of the x axis (absolute) [s]; default the flow's first segment or ACK.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    ax = _ax(ax)
    ts = time_sequence(packets, flow_id, annotated)
    seg, acks, sacks = ts["segments"], ts["acks"], ts["sacks"]
    if t0_s is None:
        t0_s = min(seg["time_s"].min() if len(seg) else np.inf, acks["time_s"].min() if len(acks) else np.inf)
    mb = 1e6
    if len(acks):
        ax.step(acks["time_s"] - t0_s, acks["ack_bytes"] / mb, where="post", color="C2", lw=0.8, label="ACK",
                zorder=2)
        edge = acks["window_edge_bytes"]
        scaled = bool(acks["window_scaled"].iloc[0])
        ax.step(acks["time_s"] - t0_s, edge / mb, where="post", color="C7", lw=0.8, ls="--", zorder=1,
                label="advertised window edge" + ("" if scaled else " (scale unknown: unscaled)"))
    if len(sacks):
        _vertical_segments(ax, sacks["time_s"] - t0_s, sacks["left_bytes"] / mb, sacks["right_bytes"] / mb,
                           color="C9", lw=2, alpha=0.6, zorder=2, label=f"SACK block ({len(sacks)})")
    _vertical_segments(ax, seg["time_s"] - t0_s, seg["seq_bytes"] / mb, seg["end_bytes"] / mb, lw=1.2, color="C0",
                       label="data segment", zorder=3)
    for kind in SEGMENT_KINDS[1:]:
        k = seg[seg["kind"] == kind]
        if len(k):
            marker, colour = _KIND_STYLE[kind]
            ax.plot(k["time_s"] - t0_s, k["seq_bytes"] / mb, marker, color=colour, ms=4, ls="none", zorder=4,
                    mfc="none" if marker != "x" else colour, label=f"{kind} ({len(k)})")
    ax.set_xlabel(TIME_LABEL)
    ax.set_ylabel("relative sequence [MB]")
    ax.legend(loc="upper left", fontsize="small")
    return ax


@_PARAMETERS.fill
def plot_rtt_samples(samples: pd.DataFrame, flow_id: int, ax: Axes | None = None, t0_s: float | None = None) -> Axes:
    """RTT samples of one flow over time, by method (sequence/ACK matching and timestamp echoes).

    Parameters
    ----------
    samples : pandas.DataFrame
        :func:`~tcpmodels.traces.rtt_samples` of a packet table.
    flow_id : int
        The flow (it must have samples).
    {ax}
    t0_s : float, optional
        Time zero of the x axis (absolute) [s]; default the first sample's time.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    ax = _ax(ax)
    s = samples[samples["flow_id"] == flow_id]
    if len(s) == 0:
        raise ValueError(f"no RTT samples for flow_id {flow_id}")
    t0 = s["timestamp_s"].min() if t0_s is None else t0_s
    for method, marker in (("seq", "."), ("ts", "x")):
        m = s[s["method"] == method]
        ax.plot(m["timestamp_s"] - t0, m["rtt_s"] * 1e3, marker, ms=3, ls="none", label=f"{method} ({len(m)})")
    ax.set_xlabel(TIME_LABEL if t0_s is not None else "time since the first sample [s]")
    ax.set_ylabel("RTT [ms]")
    ax.legend(fontsize="small")
    return ax


@_PARAMETERS.fill
def plot_bytes_in_flight(flight: pd.Series, ax: Axes | None = None, t0_s: float | None = None) -> Axes:
    """Bytes in flight over time (from :func:`~tcpmodels.traces.series.bytes_in_flight`).

    Parameters
    ----------
    flight : pandas.Series
        Bytes in flight indexed by time [bytes, s].
    {ax}
    t0_s : float, optional
        Time zero of the x axis (absolute) [s]; default the first time of ``flight``.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    ax = _ax(ax)
    t = flight.index.to_numpy()
    ax.step(t - (t[0] if t0_s is None else t0_s), flight.to_numpy() / 1e3, where="post", lw=0.8)
    ax.set_xlabel(TIME_LABEL if t0_s is not None else "time since the first event [s]")
    ax.set_ylabel("bytes in flight [KB]")
    return ax


@_PARAMETERS.fill
def plot_subflow_shares(subflows: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Share of each MPTCP connection's forward bytes carried by each subflow (stacked bars).

    Parameters
    ----------
    subflows : pandas.DataFrame
        :func:`~tcpmodels.traces.mptcp_subflows` of a packet table.
    {ax}

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


@_PARAMETERS.fill
def plot_mptcp_data_sequence(mappings: pd.DataFrame, mptcp_id: int, ax: Axes | None = None,
                             t0_s: float | None = None) -> Axes:
    """Data-level sequence graph of one MPTCP connection: each data packet at its data sequence number, coloured
    by subflow, reinjections marked.

    Parameters
    ----------
    {mappings, mptcp_id, ax, t0_s}

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    ax = _ax(ax)
    m, t0 = _connection_mappings(mappings, mptcp_id, t0_s)
    for sf, g in m.groupby("subflow"):
        _vertical_segments(ax, g["time_s"] - t0, g["data_seq_bytes"] / 1e6,
                           (g["data_seq_bytes"] + g["data_len_bytes"]) / 1e6, color=f"C{int(sf) % 10}", lw=1.2,
                           label=f"subflow {int(sf)} ({len(g)} packets)")
    re = m[m["is_reinjection"]]
    if len(re):
        ax.plot(re["time_s"] - t0, re["data_seq_bytes"] / 1e6, "o", mfc="none", color="red", ms=5,
                label=f"reinjection ({len(re)})")
    ax.set_xlabel(TIME_LABEL if t0_s is not None else "time since the first data packet [s]")
    ax.set_ylabel("data sequence [MB]")
    ax.legend(loc="upper left", fontsize="small")
    return ax


@_PARAMETERS.fill
def plot_subflow_shares_over_time(mappings: pd.DataFrame, mptcp_id: int, bin_s: float, ax: Axes | None = None,
                                  t0_s: float | None = None) -> Axes:
    """Each subflow's share of one MPTCP connection's data bytes in time bins (stacked).

    Parameters
    ----------
    {mappings, mptcp_id}
    bin_s : float
        Bin width. [s]
    {ax, t0_s}

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    if not bin_s > 0:
        raise ValueError(f"bin_s [s] must be > 0; got {bin_s!r}")
    ax = _ax(ax)
    m, t0 = _connection_mappings(mappings, mptcp_id, t0_s)
    b = np.floor((m["time_s"].to_numpy() - t0) / bin_s).astype(np.int64)
    table = pd.crosstab(b, m["subflow"].to_numpy(), values=m["data_len_bytes"].to_numpy(), aggfunc="sum").fillna(0)
    share = table.div(table.sum(axis=1), axis=0)
    x = table.index.to_numpy() * bin_s
    ax.stackplot(x, share.T.to_numpy(), step="post", labels=[f"subflow {int(c)}" for c in share.columns],
                 colors=[f"C{int(c) % 10}" for c in share.columns], alpha=0.8)
    ax.set_ylim(0, 1)
    ax.set_xlabel(TIME_LABEL if t0_s is not None else "time since the first data packet [s]")
    ax.set_ylabel(f"share of data bytes per {bin_s:.3g} s [-]")
    ax.legend(loc="upper right", fontsize="small")
    return ax
