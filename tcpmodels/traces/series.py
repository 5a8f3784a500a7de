"""Time series from a packet table: per-flow throughput, bytes in flight, aggregate link rate.

All series are pandas objects indexed by time in seconds (bin start for binned
series, relative to ``t0_s`` when given, else absolute epoch seconds).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tcpmodels._arrays import check_range

from .annotation import annotate

__all__ = ["throughput_series", "bytes_in_flight", "link_rate_series", "time_sequence"]


def _bins(t: np.ndarray, bin_s: float, t0_s: float | None, t_end_s: float | None) -> tuple[np.ndarray, np.ndarray]:
    check_range("bin_s", bin_s, unit="s", low=0, low_open=True)
    t0 = float(np.min(t)) if t0_s is None else float(t0_s)
    t1 = float(np.max(t)) if t_end_s is None else float(t_end_s)
    n = max(int(np.floor((t1 - t0) / bin_s)) + 1, 1)
    idx = np.floor((t - t0) / bin_s).astype(np.int64)
    return idx, t0 + bin_s * np.arange(n)


def throughput_series(packets: pd.DataFrame, flow_id: int, bin_s: float, annotated: pd.DataFrame | None = None,
                      *, unique: bool = False) -> pd.Series:
    """Payload rate of one flow (one direction) in time bins.

    Parameters
    ----------
    packets : pandas.DataFrame
        A packet table.
    flow_id : int
        Flow (direction) as numbered by :func:`~tcpmodels.traces.flows.flows`.
    bin_s : float
        Bin width. [s]
    unique : bool
        Count only new bytes (retransmissions excluded) instead of all payload.

    Returns
    -------
    pandas.Series
        ``rate_bps`` indexed by bin start ``time_s`` (absolute) [bit/s]; empty bins are 0.
    """
    an = annotate(packets) if annotated is None else annotated
    sel = (an["flow_id"] == flow_id).to_numpy()
    if unique:
        sel &= ~an["is_retransmission"].to_numpy() & ~an["is_duplicate"].to_numpy()
    if not sel.any():
        raise ValueError(f"flow_id {flow_id} has no packets; valid flow ids are {sorted(an['flow_id'].unique())[:10]}...")
    t = packets["timestamp_s"].to_numpy()
    f_all = (an["flow_id"] == flow_id).to_numpy()
    idx, starts = _bins(t[sel], bin_s, t[f_all].min(), t[f_all].max())
    b = np.bincount(idx, weights=packets["payload_bytes"].to_numpy()[sel].astype(float), minlength=len(starts))
    return pd.Series(8.0 * b / bin_s, index=pd.Index(starts, name="time_s"), name="rate_bps")


def bytes_in_flight(packets: pd.DataFrame, flow_id: int, annotated: pd.DataFrame | None = None) -> pd.Series:
    """Outstanding bytes of one flow: highest sequence sent minus highest acknowledged, after every event.

    Events are the flow's segments and the peer's ACKs in capture order. Measured
    at the sender this is the sender's flight size (RFC 5681 FlightSize);
    elsewhere it is what has passed the capture point and not yet been acknowledged.

    Parameters
    ----------
    packets : pandas.DataFrame
        A packet table from :func:`~tcpmodels.traces.read_pcap`.
    flow_id : int
        The flow (``flow_id`` of :func:`~tcpmodels.traces.flows`).
    annotated : pandas.DataFrame, optional
        :func:`~tcpmodels.traces.annotate` of ``packets`` if already computed.

    Returns
    -------
    pandas.Series
        ``bytes_in_flight`` indexed by ``time_s`` (absolute) [bytes].
    """
    an = annotate(packets) if annotated is None else annotated
    fl = an["flow_id"].to_numpy()
    mine = fl == flow_id
    peer = (fl == (flow_id ^ 1)) & (an["ack_u"].to_numpy() >= 0)
    if not mine.any():
        raise ValueError(f"flow_id {flow_id} has no packets")
    sel = mine | peer
    order = np.argsort(packets["frame_index"].to_numpy()[sel], kind="stable")
    t = packets["timestamp_s"].to_numpy()[sel][order]
    sent = np.where(mine[sel], an["seq_end_u"].to_numpy()[sel], np.iinfo(np.int64).min)[order]
    acked = np.where(peer[sel], an["ack_u"].to_numpy()[sel], np.iinfo(np.int64).min)[order]
    hs = np.maximum.accumulate(sent)
    ha = np.maximum.accumulate(acked)
    valid = (hs > np.iinfo(np.int64).min) & (ha > np.iinfo(np.int64).min)
    flight = np.where(valid, np.maximum(hs - ha, 0), 0)
    return pd.Series(flight[valid], index=pd.Index(t[valid], name="time_s"), name="bytes_in_flight")


def link_rate_series(packets: pd.DataFrame, bin_s: float, *, interface_id: int | None = None,
                     src_addr: str | None = None, t0_s: float | None = None,
                     t_end_s: float | None = None) -> pd.Series:
    """Aggregate rate on a link (all TCP packets, wire bytes) in time bins, e.g. for Hurst estimation.

    Parameters
    ----------
    bin_s : float
        Bin width. [s]
    interface_id : int, optional
        Keep only packets captured on this pcapng interface.
    src_addr : str, optional
        Keep only packets sent by this address (one direction of the link).

    Returns
    -------
    pandas.Series
        ``rate_bps`` indexed by bin start ``time_s`` [bit/s]; empty bins are 0.
    """
    sel = np.ones(len(packets), bool)
    if interface_id is not None:
        sel &= (packets["interface_id"] == interface_id).to_numpy()
    if src_addr is not None:
        sel &= (packets["src_addr"].astype(str) == src_addr).to_numpy()
    if not sel.any():
        raise ValueError("no packets match interface_id / src_addr")
    t = packets["timestamp_s"].to_numpy()[sel]
    idx, starts = _bins(t, bin_s, t0_s, t_end_s)
    keep = (idx >= 0) & (idx < len(starts))
    b = np.bincount(idx[keep], weights=packets["wire_bytes"].to_numpy()[sel][keep].astype(float),
                    minlength=len(starts))
    return pd.Series(8.0 * b / bin_s, index=pd.Index(starts, name="time_s"), name="rate_bps")


def time_sequence(packets: pd.DataFrame, flow_id: int, annotated: pd.DataFrame | None = None) -> dict[str, pd.DataFrame]:
    """Data for a time-sequence (Stevens) graph of one flow: segments, retransmissions and the peer's ACKs.

    Parameters
    ----------
    packets : pandas.DataFrame
        A packet table from :func:`~tcpmodels.traces.read_pcap`.
    flow_id : int
        The flow (``flow_id`` of :func:`~tcpmodels.traces.flows`).
    annotated : pandas.DataFrame, optional
        :func:`~tcpmodels.traces.annotate` of ``packets`` if already computed.

    Returns
    -------
    dict
        ``segments`` (time_s, seq_bytes, end_bytes, is_retransmission) and ``acks``
        (time_s, ack_bytes), sequence numbers relative to the flow's first [bytes].
    """
    an = annotate(packets) if annotated is None else annotated
    fl = an["flow_id"].to_numpy()
    mine = (fl == flow_id) & (packets["payload_bytes"].to_numpy() > 0)
    if not (fl == flow_id).any():
        raise ValueError(f"flow_id {flow_id} has no packets")
    base = an["seq_u"].to_numpy()[fl == flow_id].min()
    seg = pd.DataFrame({"time_s": packets["timestamp_s"].to_numpy()[mine],
                        "seq_bytes": an["seq_u"].to_numpy()[mine] - base,
                        "end_bytes": an["seq_end_u"].to_numpy()[mine] - base,
                        "is_retransmission": an["is_retransmission"].to_numpy()[mine]})
    peer = (fl == (flow_id ^ 1)) & (an["ack_u"].to_numpy() >= 0)
    acks = pd.DataFrame({"time_s": packets["timestamp_s"].to_numpy()[peer], "ack_bytes": an["ack_u"].to_numpy()[peer] - base})
    return {"segments": seg, "acks": acks}
