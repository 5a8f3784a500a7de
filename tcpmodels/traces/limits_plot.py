"""The limitation diagnosis drawn under a flow's time-sequence graph: one coloured band, one colour per class.

:func:`plot_limit_band` draws the band on a thin axes; :func:`plot_time_sequence_with_limits` makes
the two-row figure (Stevens graph of :func:`~tcpmodels.traces.plots.plot_time_sequence` above, the
band below, one time axis) that ``tcpmodels analyze`` can show for each flow.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from .annotation import annotate
from .limits import CLASSES, limit_intervals
from .plots import plot_time_sequence
from .series import time_sequence

__all__ = ["CLASS_COLOURS", "plot_limit_band", "plot_time_sequence_with_limits"]

#: colour of each class of :data:`tcpmodels.traces.limits.CLASSES` (colour-blind-safe Okabe-Ito palette; grey for undecided)
CLASS_COLOURS = {"opportunity": "#56B4E9", "receiver_window": "#E69F00", "send_buffer": "#CC79A7",
                 "application": "#009E73", "congestion": "#D55E00", "bandwidth": "#0072B2",
                 "undecided": "#BBBBBB"}


def plot_limit_band(intervals: pd.DataFrame, flow_id: int, ax: Axes | None = None, *,
                    t0_s: float | None = None, legend: bool = True) -> Axes:
    """One flow's classes over time as a coloured band.

    Parameters
    ----------
    intervals : pandas.DataFrame
        :func:`~tcpmodels.traces.limits.limit_intervals` (any flows; ``flow_id`` is picked out).
    flow_id : int
        The flow.
    ax : matplotlib.axes.Axes, optional
        Where to draw (a new, flat figure if None).
    t0_s : float, optional
        Time drawn as 0 [s, capture clock]; default the flow's first interval start.
    legend : bool
        Name the classes that occur, with their share of the time, below the band.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.

    Raises
    ------
    ValueError
        If ``intervals`` holds no row of ``flow_id``.
    """
    iv = intervals[intervals["flow_id"] == flow_id]
    if not len(iv):
        raise ValueError(f"flow_id {flow_id} has no interval in intervals (flows: "
                         f"{sorted(intervals['flow_id'].unique())[:10]})")
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 0.9), constrained_layout=True)
    t0 = float(iv["start_s"].min()) if t0_s is None else float(t0_s)
    width = (iv["end_s"] - iv["start_s"]).to_numpy()
    for name in CLASSES:
        sel = (iv["limit"] == name).to_numpy()
        if sel.any():
            ax.broken_barh(list(zip(iv["start_s"].to_numpy()[sel] - t0, width[sel])), (0, 1),
                           facecolors=CLASS_COLOURS[name], edgecolor="none")
    ax.set_ylim(0, 1)
    ax.set_yticks([])
    ax.set_xlabel("time since first packet [s]")
    if legend:
        w = np.clip(iv["active_share"].fillna(0).to_numpy(), 1e-9, None)
        share = pd.Series(w).groupby(iv["limit"].to_numpy()).sum() / w.sum()
        handles = [Patch(color=CLASS_COLOURS[c], label=f"{c.replace('_', ' ')} {share[c]:.0%}")
                   for c in CLASSES if c in share.index]
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.9), ncol=min(4, len(handles)),
                  fontsize="small", frameon=False)
    return ax


def plot_time_sequence_with_limits(packets: pd.DataFrame, flow_id: int, intervals: pd.DataFrame | None = None,
                                   annotated: pd.DataFrame | None = None) -> Figure:
    """A flow's time-sequence graph with its limitation band underneath, on one time axis.

    Parameters
    ----------
    packets : pandas.DataFrame
        A packet table from :func:`~tcpmodels.traces.read_pcap`.
    flow_id : int
        The flow (the data direction).
    intervals : pandas.DataFrame, optional
        :func:`~tcpmodels.traces.limits.limit_intervals` of ``packets`` if already computed.
    annotated : pandas.DataFrame, optional
        :func:`~tcpmodels.traces.annotate` of ``packets`` if already computed.

    Returns
    -------
    matplotlib.figure.Figure
        Two axes: the Stevens graph and the band.
    """
    an = annotate(packets) if annotated is None else annotated
    if intervals is None:
        intervals = limit_intervals(packets, an, flow_ids=[flow_id])
    fig, (top, band) = plt.subplots(2, 1, figsize=(7, 4.2), sharex=True, constrained_layout=True,
                                    gridspec_kw={"height_ratios": [5, 1]})
    plot_time_sequence(packets, flow_id, ax=top, annotated=an)
    top.set_xlabel("")
    ts = time_sequence(packets, flow_id, an)
    seg, acks = ts["segments"], ts["acks"]
    t0 = min(seg["time_s"].min() if len(seg) else np.inf, acks["time_s"].min() if len(acks) else np.inf)
    plot_limit_band(intervals, flow_id, ax=band, t0_s=t0)
    return fig
